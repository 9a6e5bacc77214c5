"""The peers benchmark's offline tokenizer: a GGUF vocabulary read back and written as a
Hugging Face tokenizer directory (benchmarks/local_tokenizer.py, standard library only)."""

from __future__ import annotations

import importlib.util
import json
import struct
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
SPACE = "\u2581"


def load() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "local_tokenizer", ROOT / "benchmarks" / "local_tokenizer.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["local_tokenizer"] = module
    spec.loader.exec_module(module)
    return module


lt = load()


def gguf_string(s: str) -> bytes:
    raw = s.encode()
    return struct.pack("<Q", len(raw)) + raw


def gguf_kv(key: str, vtype: int, payload: bytes) -> bytes:
    return gguf_string(key) + struct.pack("<I", vtype) + payload


def tiny_vocab() -> tuple[list[str], list[float], list[int]]:
    """The layout of the real-engine model's vocabulary, in miniature."""
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    types = [lt.UNKNOWN, lt.CONTROL, lt.CONTROL] + [lt.BYTE] * 256
    first = len(tokens)
    pieces = [SPACE] + [chr(c) for c in range(0x21, 0x7F)]
    for word in ("the", "model", "them"):
        w = SPACE + word
        pieces += [w[:k] for k in range(2, len(w) + 1) if w[:k] not in pieces]
    tokens += pieces
    types += [lt.NORMAL] * len(pieces)
    scores = [0.0] * first + [-float(i) for i in range(len(pieces))]
    return tokens, scores, types


def write_gguf(path: Path, tokens: list[str], scores: list[float], types: list[int]) -> None:
    kvs = [
        gguf_kv("general.architecture", 8, gguf_string("llama")),
        gguf_kv("tokenizer.ggml.model", 8, gguf_string("llama")),
        gguf_kv(
            "tokenizer.ggml.tokens",
            9,
            struct.pack("<IQ", 8, len(tokens)) + b"".join(map(gguf_string, tokens)),
        ),
        gguf_kv(
            "tokenizer.ggml.scores",
            9,
            struct.pack("<IQ", 6, len(scores)) + struct.pack(f"<{len(scores)}f", *scores),
        ),
        gguf_kv(
            "tokenizer.ggml.token_type",
            9,
            struct.pack("<IQ", 5, len(types)) + struct.pack(f"<{len(types)}i", *types),
        ),
        gguf_kv("tokenizer.ggml.bos_token_id", 4, struct.pack("<I", 1)),
        gguf_kv("tokenizer.ggml.eos_token_id", 4, struct.pack("<I", 2)),
        gguf_kv("tokenizer.ggml.unknown_token_id", 4, struct.pack("<I", 0)),
        gguf_kv("tokenizer.ggml.add_bos_token", 7, struct.pack("<?", True)),
    ]
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, len(kvs)) + b"".join(kvs))


@pytest.fixture
def tok_dir(tmp_path: Path) -> tuple[Path, list[str]]:
    tokens, scores, types = tiny_vocab()
    write_gguf(tmp_path / "m.gguf", tokens, scores, types)
    vocab = lt.vocab_from_gguf(tmp_path / "m.gguf")
    assert vocab.tokens == tokens and vocab.types == types and vocab.scores == scores
    assert (vocab.bos_id, vocab.eos_id, vocab.unk_id, vocab.add_bos) == (1, 2, 0, True)
    return lt.write_tokenizer_dir(vocab, tmp_path / "tok"), tokens


def test_gguf_that_is_not_one_is_refused(tmp_path: Path) -> None:
    (tmp_path / "x.gguf").write_bytes(b"NOPE" + bytes(20))
    with pytest.raises(ValueError, match="not a GGUF file"):
        lt.vocab_from_gguf(tmp_path / "x.gguf")


def test_the_directory_holds_the_models_own_vocabulary(tok_dir: tuple[Path, list[str]]) -> None:
    out, tokens = tok_dir
    tj = json.loads((out / "tokenizer.json").read_text(encoding="utf-8"))
    model = tj["model"]
    assert model["type"] == "BPE" and model["byte_fallback"] and model["unk_token"] == "<unk>"
    assert model["vocab"] == {t: i for i, t in enumerate(tokens)}
    assert [a["content"] for a in tj["added_tokens"]] == ["<unk>", "<s>", "</s>"]
    # every merge joins two pieces of the vocabulary into a third, higher-scored pieces first
    merged = ["".join(m) for m in model["merges"]]
    assert all(a in model["vocab"] and b in model["vocab"] for a, b in model["merges"])
    ids = [model["vocab"][m] for m in merged]
    assert ids == sorted(ids)
    assert {SPACE + "the", SPACE + "them", SPACE + "model"} <= set(merged)
    assert ["▁", "t"] in model["merges"] and ["▁the", "m"] in model["merges"]
    config = json.loads((out / "tokenizer_config.json").read_text())
    assert config["tokenizer_class"] == "PreTrainedTokenizerFast"
    assert (config["bos_token"], config["eos_token"], config["add_bos_token"]) == (
        "<s>",
        "</s>",
        True,
    )


def test_it_loads_and_tokenizes_as_sentencepiece_would(tok_dir: tuple[Path, list[str]]) -> None:
    tokenizers = pytest.importorskip(
        "tokenizers"
    )  # not a dependency: the peers' virtualenvs have it
    out, tokens = tok_dir
    tok = tokenizers.Tokenizer.from_file(str(out / "tokenizer.json"))
    ids = tok.encode("the model  them!", add_special_tokens=False).ids
    assert [tokens[i] for i in ids] == ["▁the", "▁model", "▁", "▁them", "!"]
    assert tok.encode("the").ids[0] == 1  # BOS in front, as llama-server adds it
    assert [tokens[i] for i in tok.encode("é", add_special_tokens=False).ids] == [
        "▁",
        "<0xC3>",
        "<0xA9>",
    ]
    assert tok.decode(tok.encode("the model").ids, skip_special_tokens=True) == "the model"
