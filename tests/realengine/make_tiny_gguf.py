#!/usr/bin/env python3
"""Write a tiny random-weight llama-architecture GGUF model, entirely locally.

No weights are downloaded from anywhere: every tensor is drawn from a seeded
numpy RNG, and the tokenizer is a small hand-built SentencePiece-style ("llama")
vocabulary:

    0 <unk>, 1 <s>, 2 </s>            (unknown / control)
    3 .. 258  <0x00> .. <0xFF>         (byte-fallback tokens, so ANY text tokenizes)
    259 ..    "\u2581" + printable ASCII chars, then ~100 common English words
              (with the "\u2581" space marker) and every prefix of each word, so the
              SPM bigram merger can actually reach the whole words.

Generation is made "well behaved" for benchmarking:
  * the output (lm_head) rows of <unk>, <s>, </s> and all 256 byte tokens are
    zero, so their logit is exactly 0 while the ordinary tokens' logits are
    N(0, logit_std^2); greedy decoding therefore never emits EOS or a raw byte
    (every output token is printable ASCII, one token per streamed chunk), and
    with sampling EOS has probability ~1e-5 per step. Forced-length runs work
    even on servers that have no ignore_eos option.

Requires the `gguf` package (the gguf-py shipped inside the llama.cpp tree, or
PyPI `gguf`) and numpy.

Example:
    python make_tiny_gguf.py --out tiny.gguf
    # 768 embd, 8 layers, 12 heads, ff 2048, F16: ~58M params, 111 MiB
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np

try:
    import gguf
except ImportError:  # pragma: no cover
    sys.exit("the 'gguf' package is required: pip install gguf (or the vendored gguf-py)")

WORDS = """
the of and to in is it that was for on are as with his they at be this have from
or one had by word but not what all were we when your can said there use an each
which she do how their if will up other about out many then them these so some
her would make like him into time has look two more write go see number no way
could people my than first water been call who oil its now find long down day did
get come made may part over new sound take only little work know place year live
me back give most very after thing our just name good sentence man think say great
where help through much before line right too mean old any same tell boy follow
came want show also around form three small set put end does another well large
must big even such because turn here why ask went men read need land different
home us move try kind hand picture again change off play spell air away animal
house point page letter mother answer found study still learn should world token
model server request stream batch queue slot latency throughput bench random tiny
""".split()  # noqa: SIM905  (a word list, kept readable)

SPACE = "\u2581"  # SentencePiece's visible space marker

CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ message['role'] }}: {{ message['content'] }}\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}assistant:{% endif %}"
)


def build_vocab() -> tuple[list[str], list[float], list[int], int]:
    """Return tokens, scores, token types, and the id of the first ordinary token."""
    T = gguf.TokenType
    tokens: list[str] = ["<unk>", "<s>", "</s>"]
    types: list[int] = [T.UNKNOWN, T.CONTROL, T.CONTROL]
    for b in range(256):
        tokens.append(f"<0x{b:02X}>")
        types.append(T.BYTE)
    first_normal = len(tokens)

    seen: set[str] = set()

    def add(piece: str) -> None:
        if piece and piece not in seen:
            seen.add(piece)
            tokens.append(piece)
            types.append(T.NORMAL)

    add(SPACE)
    for c in range(0x21, 0x7F):  # printable ASCII except space
        add(chr(c))
    for w in WORDS:
        piece = SPACE + w
        for k in range(2, len(piece) + 1):  # every prefix, so SPM merges reach the word
            add(piece[:k])
    # SPM merges by score (higher first); a descending-by-id score like a real
    # sentencepiece vocab. Special/byte tokens get 0.
    scores = [0.0] * first_normal + [-float(i) for i in range(len(tokens) - first_normal)]
    return tokens, scores, [int(t) for t in types], first_normal


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--out", required=True)
    ap.add_argument("--n-embd", type=int, default=768)
    ap.add_argument("--n-layer", type=int, default=8)
    ap.add_argument("--n-head", type=int, default=12)
    ap.add_argument("--n-head-kv", type=int, default=12)
    ap.add_argument("--n-ff", type=int, default=2048)
    ap.add_argument("--ctx", type=int, default=8192, help="llama.context_length (n_ctx_train)")
    ap.add_argument(
        "--dtype", choices=["f16", "f32"], default="f16", help="type of the 2-D weight matrices"
    )
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--logit-std", type=float, default=3.0, help="std of ordinary-token logits")
    args = ap.parse_args()

    n_embd, n_layer, n_head, n_head_kv, n_ff = (
        args.n_embd,
        args.n_layer,
        args.n_head,
        args.n_head_kv,
        args.n_ff,
    )
    if n_embd % n_head or n_head % n_head_kv:
        sys.exit("n_embd must divide by n_head, and n_head by n_head_kv")
    head_dim = n_embd // n_head
    n_embd_kv = head_dim * n_head_kv

    tokens, scores, types, first_normal = build_vocab()
    n_vocab = len(tokens)

    rng = np.random.default_rng(args.seed)
    wdt = np.float16 if args.dtype == "f16" else np.float32

    def mat(rows: int, cols: int, std: float = 0.02) -> np.ndarray:
        # numpy shape (rows, cols) -> ggml ne = [cols, rows]: y = W x with x of length cols
        return (rng.standard_normal((rows, cols), dtype=np.float32) * std).astype(wdt)

    def ones(n: int) -> np.ndarray:
        return np.ones(n, dtype=np.float32)  # norm weights stay F32

    w = gguf.GGUFWriter(args.out, "llama")
    w.add_name(f"tiny-random-llama-e{n_embd}-l{n_layer}")
    w.add_description(
        "random weights, generated locally by make_tiny_gguf.py; output is gibberish by design"
    )
    w.add_context_length(args.ctx)
    w.add_embedding_length(n_embd)
    w.add_block_count(n_layer)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_head_kv)
    w.add_rope_dimension_count(head_dim)
    w.add_rope_freq_base(10000.0)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_vocab_size(n_vocab)
    w.add_file_type(
        gguf.LlamaFileType.MOSTLY_F16 if args.dtype == "f16" else gguf.LlamaFileType.ALL_F32
    )

    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_unk_token_id(0)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_add_bos_token(True)
    w.add_add_eos_token(False)
    w.add_chat_template(CHAT_TEMPLATE)

    w.add_tensor("token_embd.weight", mat(n_vocab, n_embd, 1.0))
    for i in range(n_layer):
        p = f"blk.{i}."
        w.add_tensor(p + "attn_norm.weight", ones(n_embd))
        w.add_tensor(p + "attn_q.weight", mat(n_embd, n_embd))
        w.add_tensor(p + "attn_k.weight", mat(n_embd_kv, n_embd))
        w.add_tensor(p + "attn_v.weight", mat(n_embd_kv, n_embd))
        w.add_tensor(p + "attn_output.weight", mat(n_embd, n_embd))
        w.add_tensor(p + "ffn_norm.weight", ones(n_embd))
        w.add_tensor(p + "ffn_gate.weight", mat(n_ff, n_embd))
        w.add_tensor(p + "ffn_up.weight", mat(n_ff, n_embd))
        w.add_tensor(p + "ffn_down.weight", mat(n_embd, n_ff))
    w.add_tensor("output_norm.weight", ones(n_embd))
    # after output_norm the hidden state has ~unit RMS, so logit std = sqrt(n_embd) * row std
    out = rng.standard_normal((n_vocab, n_embd), dtype=np.float32) * (
        args.logit_std / np.sqrt(n_embd)
    )
    out[:first_normal, :] = 0.0  # <unk>, <s>, </s>, bytes: logit exactly 0 -> never the argmax
    w.add_tensor("output.weight", out.astype(wdt))

    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()

    n_params = n_vocab * n_embd * 2 + n_layer * (
        2 * n_embd * n_embd + 2 * n_embd * n_embd_kv + 3 * n_embd * n_ff
    )
    print(
        json.dumps(
            {
                "out": args.out,
                "n_vocab": n_vocab,
                "first_ordinary_token": first_normal,
                "n_embd": n_embd,
                "n_layer": n_layer,
                "n_head": n_head,
                "n_head_kv": n_head_kv,
                "n_ff": n_ff,
                "ctx": args.ctx,
                "dtype": args.dtype,
                "seed": args.seed,
                "approx_params": n_params,
            }
        )
    )


if __name__ == "__main__":
    main()
