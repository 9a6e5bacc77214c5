"""A Hugging Face tokenizer directory that mirrors a llama.cpp model's own vocabulary, offline.

GuideLLM and AIPerf count and build prompts with a Hugging Face tokenizer, which they normally
download from a model hub. A GGUF file carries its vocabulary (pieces, scores, token types), so
an equivalent ``tokenizer.json`` can be written from it with no download: a BPE model whose
merges are ordered by the merged piece's score (what llama.cpp's SentencePiece-style merger
does), byte fallback, ``▁`` for every space and one in front (as llama.cpp does), and the
decoder Llama tokenizers use. ``AutoTokenizer.from_pretrained(DIR)`` then loads it offline.

Only the standard library is needed to write it (the JSON is written directly);
``tokenizers`` or ``transformers`` are needed only to load it.

    python benchmarks/local_tokenizer.py MODEL.gguf OUT_DIR
"""

from __future__ import annotations

import json
import struct
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

SPACE = "\u2581"

# GGUF metadata value types
_SCALARS = {
    0: "<B",
    1: "<b",
    2: "<H",
    3: "<h",
    4: "<I",
    5: "<i",
    6: "<f",
    7: "<?",
    10: "<Q",
    11: "<q",
    12: "<d",
}
_STRING, _ARRAY = 8, 9

# llama.cpp token types
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6


@dataclass(frozen=True)
class Vocab:
    tokens: list[str]
    scores: list[float]
    types: list[int]
    bos_id: int | None = None
    eos_id: int | None = None
    unk_id: int | None = None
    add_bos: bool = True
    model: str = "llama"


def _read(f: BinaryIO, fmt: str) -> Any:
    size = struct.calcsize(fmt)
    data = f.read(size)
    if len(data) != size:
        raise ValueError("truncated GGUF header")
    return struct.unpack(fmt, data)[0]


def _read_str(f: BinaryIO) -> str:
    n = _read(f, "<Q")
    return f.read(n).decode("utf-8", errors="replace")


def _read_value(f: BinaryIO, vtype: int) -> Any:
    if vtype in _SCALARS:
        return _read(f, _SCALARS[vtype])
    if vtype == _STRING:
        return _read_str(f)
    if vtype == _ARRAY:
        itype = _read(f, "<I")
        n = _read(f, "<Q")
        return [_read_value(f, itype) for _ in range(n)]
    raise ValueError(f"unknown GGUF value type {vtype}")


def read_gguf_metadata(path: Path, prefix: str = "tokenizer.") -> dict[str, Any]:
    """The key/value metadata of a GGUF file (v2 or v3) whose keys start with ``prefix``."""
    with path.open("rb") as f:
        if f.read(4) != b"GGUF":
            raise ValueError(f"{path} is not a GGUF file")
        version = _read(f, "<I")
        if version < 2:
            raise ValueError(f"GGUF version {version} is not supported")
        _read(f, "<Q")  # tensor count
        n_kv = _read(f, "<Q")
        out: dict[str, Any] = {}
        for _ in range(n_kv):
            key = _read_str(f)
            value = _read_value(f, _read(f, "<I"))
            if key.startswith(prefix):
                out[key] = value
        return out


def vocab_from_gguf(path: Path) -> Vocab:
    meta = read_gguf_metadata(path)
    model = meta.get("tokenizer.ggml.model", "")
    if model != "llama":
        raise ValueError(
            f"only SentencePiece-style ('llama') vocabularies are mirrored, not {model!r}"
        )
    tokens = list(meta["tokenizer.ggml.tokens"])
    n = len(tokens)
    return Vocab(
        tokens=tokens,
        scores=list(meta.get("tokenizer.ggml.scores", [0.0] * n)),
        types=list(meta.get("tokenizer.ggml.token_type", [NORMAL] * n)),
        bos_id=meta.get("tokenizer.ggml.bos_token_id"),
        eos_id=meta.get("tokenizer.ggml.eos_token_id"),
        unk_id=meta.get("tokenizer.ggml.unknown_token_id"),
        add_bos=bool(meta.get("tokenizer.ggml.add_bos_token", True)),
        model=model,
    )


def merges_of(vocab: Vocab) -> list[list[str]]:
    """BPE merges that reproduce SentencePiece's merge order: every split of a normal piece into
    two pieces of the vocabulary, ranked by the merged piece's score (highest first)."""
    index = {t: i for i, t in enumerate(vocab.tokens) if vocab.types[i] in (NORMAL, USER_DEFINED)}
    ranked: list[tuple[float, int, int, list[str]]] = []
    for piece, i in index.items():
        for k in range(1, len(piece)):
            left, right = piece[:k], piece[k:]
            if left in index and right in index:
                # ties between splits of one piece: the split whose parts score higher first
                ranked.append(
                    (
                        -vocab.scores[i],
                        i,
                        -(vocab.scores[index[left]] + vocab.scores[index[right]]),
                        [left, right],
                    )
                )
    ranked.sort(key=lambda r: (r[0], r[1], r[2]))
    return [r[3] for r in ranked]


def tokenizer_json(vocab: Vocab) -> dict[str, Any]:
    def name(i: int | None, default: str) -> str:
        return vocab.tokens[i] if i is not None and 0 <= i < len(vocab.tokens) else default

    unk, bos, eos = (
        name(vocab.unk_id, "<unk>"),
        name(vocab.bos_id, "<s>"),
        name(vocab.eos_id, "</s>"),
    )
    added = [
        {
            "id": i,
            "content": t,
            "single_word": False,
            "lstrip": False,
            "rstrip": False,
            "normalized": False,
            "special": True,
        }
        for i, t in enumerate(vocab.tokens)
        if vocab.types[i] in (UNKNOWN, CONTROL)
    ]
    bos_id = vocab.tokens.index(bos) if bos in vocab.tokens else 1
    post: dict[str, Any] | None = None
    if vocab.add_bos:
        post = {
            "type": "TemplateProcessing",
            "single": [
                {"SpecialToken": {"id": bos, "type_id": 0}},
                {"Sequence": {"id": "A", "type_id": 0}},
            ],
            "pair": [
                {"SpecialToken": {"id": bos, "type_id": 0}},
                {"Sequence": {"id": "A", "type_id": 0}},
                {"SpecialToken": {"id": bos, "type_id": 1}},
                {"Sequence": {"id": "B", "type_id": 1}},
            ],
            "special_tokens": {bos: {"id": bos, "ids": [bos_id], "tokens": [bos]}},
        }
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        # llama.cpp puts one space in front of the text, even one that starts with a space
        "normalizer": {
            "type": "Sequence",
            "normalizers": [
                {"type": "Prepend", "prepend": SPACE},
                {"type": "Replace", "pattern": {"String": " "}, "content": SPACE},
            ],
        },
        # split in front of every space marker: no piece holds one except at its start
        "pre_tokenizer": {
            "type": "Metaspace",
            "replacement": SPACE,
            "prepend_scheme": "never",
            "split": True,
        },
        "post_processor": post,
        "decoder": {
            "type": "Sequence",
            "decoders": [
                {"type": "Replace", "pattern": {"String": SPACE}, "content": " "},
                {"type": "ByteFallback"},
                {"type": "Fuse"},
                {"type": "Strip", "content": " ", "start": 1, "stop": 0},
            ],
        },
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": unk,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": True,
            "byte_fallback": True,
            "ignore_merges": False,
            "vocab": {t: i for i, t in enumerate(vocab.tokens)},
            "merges": merges_of(vocab),
        },
        "_meta": {"eos": eos},
    }


def write_tokenizer_dir(vocab: Vocab, out: Path, max_length: int = 8192) -> Path:
    """Write tokenizer.json, tokenizer_config.json and special_tokens_map.json into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    tj = tokenizer_json(vocab)
    eos = tj.pop("_meta")["eos"]
    unk, bos = (
        tj["model"]["unk_token"],
        (vocab.tokens[vocab.bos_id] if vocab.bos_id is not None else "<s>"),
    )
    (out / "tokenizer.json").write_text(json.dumps(tj, ensure_ascii=False), encoding="utf-8")
    special = {"bos_token": bos, "eos_token": eos, "unk_token": unk}
    config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        **special,
        "add_bos_token": vocab.add_bos,
        "add_eos_token": False,
        "model_max_length": max_length,
        "clean_up_tokenization_spaces": False,
    }
    (out / "tokenizer_config.json").write_text(json.dumps(config, indent=1), encoding="utf-8")
    (out / "special_tokens_map.json").write_text(json.dumps(special, indent=1), encoding="utf-8")
    return out


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    vocab = vocab_from_gguf(Path(args[0]))
    out = write_tokenizer_dir(vocab, Path(args[1]))
    print(f"wrote {out} ({len(vocab.tokens)} tokens)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
