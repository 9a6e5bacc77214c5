"""What each request of a run asks: its prompt (text and token count) and its output length.

Lengths (``lengths.Length``) are drawn per request from a generator seeded by ``--seed`` and
the run's index, so a sweep is reproducible. A synthetic prompt is built to an exact token
count with the server's own tokenizer (llama-server's or vLLM's ``/tokenize`` and
``/detokenize``, also under ``/v1``): a random word text is tokenized, cut at the target,
detokenized and counted again until the count is the target; the tokens the server adds
around a prompt (BOS, a chat template) are measured once against the server's ``usage`` and
taken off. Without a tokenizer endpoint the count is an estimate (four characters a token),
and the trace says so.

Cache safety: every prompt starts with a tag hashed from a per-invocation salt (random unless
given), the run and the request, so that no request shares more than a few tokens of prefix
with any other, within the sweep or across invocations; ``repeat_prompts`` drops the salt
and the run from the tag, so every run and every invocation sends the same prompts (to
measure prefix caching on purpose).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any, Literal

import httpx
import numpy as np

from reporter.errors import UsageError
from reporter.ingest.limits import read_bytes
from reporter.recorder.client import parse_json, read_capped

#: Characters per token assumed when the server has no tokenizer endpoint.
CHARS_PER_TOKEN = 4
#: Rounds of "cut, detokenize, count" before the closest prompt is taken.
MAX_FIT_ROUNDS = 6
TOKENIZE_TIMEOUT_S = 30.0
MAX_TOKENIZE_BYTES = 64 << 20
#: Prompts read from a dataset file at most (more is not a load test, it is a dataset copy).
MAX_DATASET_PROMPTS = 1_000_000

#: The vocabulary of synthetic prompts: common words, so the text tokenizes like prose.
_WORDS = (
    "the of and to in is was that for on with as by at from his her they this which were "
    "be are an not or have had one all their there been has when who will more no if out so "
    "said what up its about into than them can only other new some could time these two may "
    "then do first any my now such like our over man me even most made after also did many "
    "before must through back years where much your way well down should because each just "
    "those people how too little state good very make world still own see men work long get "
    "here between both life being under never day same another know while last might us great "
    "old year off come since against go came right used take three river morning light water "
    "house city road field market letter garden window table paper story music winter summer"
)
WORDS = tuple(_WORDS.split())


def new_salt() -> str:
    """A per-invocation salt: eight hex digits, random."""
    return secrets.token_hex(4)


# ---- datasets ----------------------------------------------------------------------------


def _prompt_of(obj: Any) -> str | None:
    """The prompt of one dataset entry: a string, ``prompt``/``text``/``input``, the first
    human turn of a ShareGPT ``conversations`` list, or the first user ``messages`` entry."""
    if isinstance(obj, str):
        return obj
    if not isinstance(obj, dict):
        return None
    for key in ("prompt", "text", "input", "question"):
        if isinstance(obj.get(key), str):
            return str(obj[key])
    for key, role_keys, roles, text_keys in (
        ("conversations", ("from", "role"), ("human", "user"), ("value", "content")),
        ("conversation", ("from", "role"), ("human", "user"), ("value", "content")),
        ("messages", ("role", "from"), ("user", "human"), ("content", "value")),
    ):
        turns = obj.get(key)
        if not isinstance(turns, list):
            continue
        for turn in turns:
            if not isinstance(turn, dict):
                continue
            role = next((turn[k] for k in role_keys if k in turn), None)
            if role in roles:
                text = next((turn[k] for k in text_keys if isinstance(turn.get(k), str)), None)
                if text is not None:
                    return str(text)
    return None


def load_dataset(path: str) -> tuple[str, ...]:
    """Prompts from a JSON Lines file (one prompt per line: a string or an object) or a JSON
    array (ShareGPT's layout); entries with an empty prompt are refused, naming the line."""
    try:
        raw = read_bytes(path, "dataset")
    except OSError as exc:
        raise UsageError(f"{path}: cannot read the dataset: {exc.strerror}") from None
    expected = (
        "expected a JSON string, or an object with prompt/text, ShareGPT conversations "
        "(from: human) or messages (role: user)"
    )
    prompts: list[str] = []
    stripped = raw.lstrip()
    if stripped.startswith(b"["):
        doc = parse_json(raw)
        if not isinstance(doc, list):
            raise UsageError(f"{path}: not a JSON array; {expected}, one per entry")
        entries: list[tuple[str, Any]] = [(f"entry {i}", e) for i, e in enumerate(doc)]
    else:
        entries = []
        for number, line in enumerate(raw.splitlines(), 1):
            if not line.strip():
                continue
            obj = parse_json(line)
            if obj is None:
                raise UsageError(f"{path}:{number}: not JSON; {expected}, one per line")
            entries.append((str(number), obj))
    for where, obj in entries:
        prompt = _prompt_of(obj)
        sep = " " if where.startswith("entry") else ":"
        if prompt is None or not prompt.strip():
            raise UsageError(f"{path}{sep}{where}: no prompt; {expected}")
        prompts.append(prompt)
        if len(prompts) >= MAX_DATASET_PROMPTS:
            break
    if not prompts:
        raise UsageError(f"{path}: no prompt in the dataset; {expected}")
    return tuple(prompts)


# ---- the server's tokenizer --------------------------------------------------------------

Dialect = Literal["llama.cpp", "vllm"]


class ServerTokenizer:
    """The server's own tokenizer over HTTP, in llama-server's or vLLM's dialect."""

    def __init__(self, client: httpx.AsyncClient, base: str, model: str, dialect: Dialect,
                 prefix: str) -> None:  # fmt: skip
        self.client = client
        self.base = base
        self.model = model
        self.dialect = dialect
        self.prefix = prefix  # "" or "/v1"
        self.calls = 0

    @property
    def endpoint(self) -> str:
        return f"{self.prefix}/tokenize"

    async def _post(self, path: str, body: dict[str, Any]) -> Any:
        self.calls += 1
        async with self.client.stream(
            "POST", f"{self.base}{self.prefix}{path}", json=body, timeout=TOKENIZE_TIMEOUT_S
        ) as resp:
            if resp.status_code != 200:
                return None
            raw, cut = await read_capped(resp, MAX_TOKENIZE_BYTES)
        return None if cut else parse_json(raw)

    async def tokens(self, text: str) -> list[int] | None:
        if self.dialect == "llama.cpp":
            body: dict[str, Any] = {"content": text, "add_special": False}
        else:
            body = {"model": self.model, "prompt": text, "add_special_tokens": False}
        answer = await self._post("/tokenize", body)
        ids = answer.get("tokens") if isinstance(answer, dict) else None
        if not isinstance(ids, list) or not all(type(t) is int for t in ids):
            return None
        return ids

    async def text(self, ids: list[int]) -> str | None:
        body: dict[str, Any] = {"tokens": ids}
        if self.dialect == "vllm":
            body["model"] = self.model
        answer = await self._post("/detokenize", body)
        if not isinstance(answer, dict):
            return None
        text = answer.get("content" if self.dialect == "llama.cpp" else "prompt")
        return text if isinstance(text, str) else None


async def find_tokenizer(
    client: httpx.AsyncClient, base: str, model: str, engine: str | None
) -> ServerTokenizer | None:
    """The first tokenizer endpoint that tokenizes and detokenizes a probe text back."""
    dialects: list[Dialect] = ["llama.cpp", "vllm"] if engine != "vllm" else ["vllm", "llama.cpp"]
    probe = "the river in the morning"
    for prefix in ("", "/v1"):
        for dialect in dialects:
            tok = ServerTokenizer(client, base, model, dialect, prefix)
            try:
                ids = await tok.tokens(probe)
                back = await tok.text(ids) if ids else None
            except (httpx.HTTPError, TimeoutError):
                continue
            if ids and back is not None and back.strip() == probe:
                return tok
    return None


# ---- prompts -----------------------------------------------------------------------------


@dataclass
class Prompt:
    """One request's prompt: its text, its token count as counted (None: not counted)."""

    text: str
    tokens: int | None = None
    target: int | None = None


def filler(rng: np.random.Generator, words: int) -> str:
    return " ".join(WORDS[i] for i in rng.integers(0, len(WORDS), words))


async def fit(tok: ServerTokenizer, head: str, rng: np.random.Generator, target: int) -> Prompt:
    """A prompt starting with `head` of exactly `target` tokens by the server's count (text
    tokens, without what the server adds), or the closest one found."""
    words = max(target, 8)
    ids: list[int] | None = None
    for _ in range(8):
        ids = await tok.tokens(head + filler(rng, words))
        if ids is None or len(ids) >= target:
            break
        words *= 2
    if ids is None:
        raise RuntimeError("the tokenizer endpoint stopped answering")
    cut = min(target, len(ids))
    best: Prompt | None = None
    for _ in range(MAX_FIT_ROUNDS):
        text = await tok.text(ids[:cut])
        counted = await tok.tokens(text) if text is not None else None
        if text is None or counted is None:
            raise RuntimeError("the tokenizer endpoint stopped answering")
        n = len(counted)
        if best is None or abs(n - target) < abs((best.tokens or 0) - target):
            best = Prompt(text, n, target)
        if n == target:
            break
        cut = max(1, min(len(ids), cut + target - n))
    assert best is not None
    return best


def estimated(head: str, rng: np.random.Generator, target: int) -> Prompt:
    """A prompt of about `target` tokens at CHARS_PER_TOKEN characters a token."""
    text = head
    while len(text) < target * CHARS_PER_TOKEN:
        text += " " + WORDS[int(rng.integers(0, len(WORDS)))]
    return Prompt(text[: max(target * CHARS_PER_TOKEN, len(head))], None, target)


def length_stats(values: list[int]) -> dict[str, float | int] | None:
    if not values:
        return None
    arr = np.asarray(values, dtype=float)
    return {
        "mean": round(float(arr.mean()), 2),
        "sd": round(float(arr.std()), 2),
        "min": int(arr.min()),
        "max": int(arr.max()),
    }
