"""One streamed request: build the body, send it, read the server-sent events, time each chunk.

The clock is the run's: ``time.perf_counter() - t0``, one monotonic clock for every request
of a run. A chunk's time is when its bytes arrived. Token counts are the server's own
(``usage``, else llama-server's ``timings.predicted_n``); only when the server gives neither
are the streamed chunks counted, and the record says which (``output_tokens_source``).
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import time
from dataclasses import dataclass, field
from typing import Any

import httpx
import orjson

from reporter.numbers import counted
from reporter.recorder.config import Api

#: Request fields a server may refuse; the recorder drops them one by one and says so.
OPTIONAL_PARAMS = ("stream_options", "ignore_eos", "min_tokens", "n_predict", "seed")
_FINISH = {"length": "length", "stop": "stop", "eos": "stop", "tool_calls": "stop",
           "function_call": "stop", "content_filter": "stop", "abort": "abort",
           "error": "error", "cancelled": "abort", "limit": "length"}  # fmt: skip
MAX_ERROR_CHARS = 500
#: Longest SSE line kept; a longer one is dropped (counted as a bad event), not buffered.
MAX_EVENT_BYTES = 16 << 20
#: Longest whole (non-streamed) answer read, and longest error body read.
MAX_BODY_BYTES = 16 << 20
MAX_ERROR_BODY_BYTES = 64 << 10
#: Largest token count believed from a server (more is a broken or hostile counter).
MAX_COUNT = 10**12
#: Server timings kept per request (llama-server sends about a dozen).
MAX_TIMINGS = 32


def count(value: Any) -> int | None:
    """A server-reported token count: a whole number from 0 to MAX_COUNT, else None.

    JSON booleans are ints to Python and are refused; so are floats, even whole ones,
    strings, negative numbers and absurdly large ones.
    """
    if type(value) is not int or not 0 <= value <= MAX_COUNT:
        return None
    return value


def parse_json(raw: bytes) -> Any:
    """A server's JSON answer, or None when it is not JSON.

    orjson refuses nesting beyond 1,024 levels with an error instead of recursing: an
    answer nested 50,000 deep is "not JSON" here, never a RecursionError.
    """
    try:
        return orjson.loads(raw)
    except (orjson.JSONDecodeError, RecursionError, ValueError):
        return None


async def read_capped(resp: httpx.Response, limit: int) -> tuple[bytes, bool]:
    """At most `limit` bytes of a streamed response's body, and whether it was cut."""
    out = bytearray()
    async for piece in resp.aiter_bytes():
        out += piece
        if len(out) > limit:
            return bytes(out[:limit]), True
    return bytes(out), False


def prompt_hash(payload: str | list[dict[str, str]]) -> str:
    data = payload if isinstance(payload, str) else orjson.dumps(payload).decode()
    return hashlib.sha256(data.encode("utf-8")).hexdigest()


def endpoint(base_url: str, api: Api) -> str:
    return f"{base_url}/v1/chat/completions" if api == "chat" else f"{base_url}/v1/completions"


def forced_params(engine: str | None, output_tokens: int, forced: bool) -> dict[str, Any]:
    """The extra fields that force the length, in each engine's dialect.

    ``ignore_eos`` (vLLM, SGLang, llama-server) and ``min_tokens`` (vLLM, llama-cpp-python)
    go to every engine; llama-server also gets ``n_predict``, which it prefers over
    ``max_tokens``. A server that refuses one is retried without it.
    """
    params: dict[str, Any] = {"stream_options": {"include_usage": True}}
    if forced:
        params["ignore_eos"] = True
        params["min_tokens"] = output_tokens
        if engine == "llama.cpp":
            params["n_predict"] = output_tokens
    return params


def build_body(
    api: Api,
    model: str,
    prompt: str,
    output_tokens: int,
    temperature: float,
    params: dict[str, Any],
    extra: dict[str, Any],
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": model,
        "max_tokens": output_tokens,
        "temperature": temperature,
        "stream": True,
    }
    if api == "chat":
        body["messages"] = [{"role": "user", "content": prompt}]
    else:
        body["prompt"] = prompt
    body.update(params)
    body.update(extra)
    return body


def refused_params(status: int, text: str, sent: dict[str, Any]) -> list[str]:
    """Optional fields that a 4xx answer names (``Unrecognized ... ignore_eos``)."""
    if status not in (400, 422):
        return []
    low = text.lower()
    return [p for p in OPTIONAL_PARAMS if p in sent and p in low]


@dataclass
class RequestState:
    """One request, filled in as its stream arrives (a cancelled one keeps what it got)."""

    index: int
    prompt_sha256: str
    t_send: float = 0.0
    t_first: float | None = None
    t_end: float | None = None
    token_times: list[float] = field(default_factory=list)
    usage_prompt: int | None = None
    usage_completion: int | None = None
    cached_tokens: int | None = None
    timings: dict[str, Any] | None = None
    finish_raw: str | None = None
    saw_done: bool = False
    error: str | None = None
    aborted: str | None = None
    http_status: int | None = None
    retried_without: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    bad_events: int = 0
    #: Counts the server sent that are not whole numbers ≥ 0: recorded as null, named here.
    bad_counts: list[str] = field(default_factory=list)
    #: The output length asked for (None: the run's), and fields added to the record as is.
    requested: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def n_chunks(self) -> int:
        return len(self.token_times)

    def output_tokens(self) -> tuple[int | None, str]:
        if self.usage_completion is not None:
            return self.usage_completion, "usage"
        predicted = count(self.timings.get("predicted_n")) if self.timings is not None else None
        if predicted is not None:
            return predicted, "timings"
        if self.http_status is None or self.http_status >= 400:
            return (0 if self.http_status else None), "none"
        return self.n_chunks, "chunks"

    def finish(self) -> tuple[str | None, str | None]:
        """(finish_reason, error) as the trace states them."""
        if self.error is not None:
            return "error", self.error
        if self.aborted is not None:
            return "abort", self.aborted
        if self.finish_raw is None:
            return "abort", (
                "the stream ended without a finish reason after "
                f"{counted(self.n_chunks, 'chunk')}: the server cut it short"
            )
        return _FINISH.get(self.finish_raw, "stop"), None

    def to_record(self, run_id: str) -> dict[str, Any]:
        tokens, source = self.output_tokens()
        finish, error = self.finish()
        tps = None
        if self.timings is not None:
            value = self.timings.get("predicted_per_second")
            tps = float(value) if isinstance(value, int | float) and value > 0 else None
        chunk_tokens = 1 if tokens is not None and tokens == self.n_chunks and tokens else None
        record: dict[str, Any] = {
            "kind": "request", "run": run_id, "id": self.index,
            "t_send": round(self.t_send, 6),
            "t_first": None if self.t_first is None else round(self.t_first, 6),
            "t_end": None if self.t_end is None else round(self.t_end, 6),
            "prompt_tokens": self.usage_prompt, "output_tokens": tokens,
            "finish_reason": finish, "reported_tps": tps, "prompt_sha256": self.prompt_sha256,
            "token_times": [round(t, 6) for t in self.token_times],
            "chunk_tokens": chunk_tokens, "error": error,
            "output_tokens_source": source, "n_chunks": self.n_chunks,
        }  # fmt: skip
        if self.finish_raw is not None and _FINISH.get(self.finish_raw) != self.finish_raw:
            record["finish_reason_raw"] = self.finish_raw
        if self.http_status is not None:
            record["http_status"] = self.http_status
        if self.cached_tokens is not None:
            record["cached_tokens"] = self.cached_tokens
        if self.timings is not None:
            record["server_timings"] = self.timings
        if self.retried_without:
            record["retried_without"] = self.retried_without
        record.update(self.extra)
        return record

    # ---- the stream ----------------------------------------------------------------------

    def on_event(self, data: bytes, now: float) -> bool:
        """One ``data:`` payload; True when the stream is over."""
        if data == b"[DONE]":
            self.saw_done = True
            return True
        try:
            obj = orjson.loads(data)
        except orjson.JSONDecodeError:
            self.bad_events += 1
            return False
        if not isinstance(obj, dict):
            return False
        err = obj.get("error")
        if err:
            msg = err.get("message") if isinstance(err, dict) else err
            self.error = (
                f"error event after {counted(self.n_chunks, 'chunk')}: {str(msg)[:MAX_ERROR_CHARS]}"
            )
            return True
        self._on_object(obj, now)
        return False

    def _on_object(self, obj: dict[str, Any], now: float) -> None:
        choices = obj.get("choices")
        if isinstance(choices, list):
            for ch in choices:
                if not isinstance(ch, dict):
                    continue
                text = ch.get("text")
                if text is None:
                    delta = ch.get("delta") or ch.get("message")
                    if isinstance(delta, dict):
                        text = (
                            delta.get("content")
                            or delta.get("reasoning_content")
                            or delta.get("reasoning")
                        )
                if text:
                    self.token_times.append(now)
                    if self.t_first is None:
                        self.t_first = now
                reason = ch.get("finish_reason")
                if reason:
                    self.finish_raw = str(reason)
        usage = obj.get("usage")
        if isinstance(usage, dict):
            if "completion_tokens" in usage:
                self.usage_completion = self._count(usage, "completion_tokens", "usage")
            if "prompt_tokens" in usage:
                self.usage_prompt = self._count(usage, "prompt_tokens", "usage")
            details = usage.get("prompt_tokens_details")
            if isinstance(details, dict) and "cached_tokens" in details:
                self.cached_tokens = self._count(
                    details, "cached_tokens", "usage.prompt_tokens_details"
                )
        timings = obj.get("timings")
        if isinstance(timings, dict):
            self.timings = _timings(timings)
            for name in ("prompt_n", "predicted_n", "cache_n"):
                if name in timings:
                    self._count(timings, name, "timings")
            prompt_n = count(timings.get("prompt_n"))
            if self.usage_prompt is None and prompt_n is not None:
                self.usage_prompt = prompt_n + (count(timings.get("cache_n")) or 0)

    def _count(self, obj: dict[str, Any], key: str, where: str) -> int | None:
        """obj[key] as a count; a bad one is named in `bad_counts` and recorded as None."""
        value = count(obj[key])
        if value is None and obj[key] is not None:
            shown = repr(obj[key])
            shown = shown if len(shown) <= 40 else shown[:40] + "…"
            self.bad_counts.append(f"{where}.{key} = {shown}")
        return value


def _timings(timings: dict[str, Any]) -> dict[str, Any]:
    """The server's timings kept for the trace: finite numbers ≥ 0 under short names."""
    kept: dict[str, Any] = {}
    for key, value in timings.items():
        if len(kept) >= MAX_TIMINGS:
            break
        if not isinstance(key, str) or len(key) > 64 or type(value) not in (int, float):
            continue
        if not (math.isfinite(value) and 0 <= value <= MAX_COUNT):
            continue
        kept[key] = value
    return kept


async def send(
    client: httpx.AsyncClient,
    url: str,
    body: dict[str, Any],
    headers: dict[str, str],
    state: RequestState,
    t0: float,
    *,
    timeout_s: float,
) -> None:
    """Stream one request into ``state``. Never raises for a failed request: it records it.

    Cancellation (an interrupted run) propagates; ``state`` then holds what had arrived.
    """
    clock = time.perf_counter
    state.t_send = clock() - t0
    try:
        async with asyncio.timeout(timeout_s):
            async with client.stream("POST", url, json=body, headers=headers) as resp:
                state.http_status = resp.status_code
                if resp.status_code >= 400:
                    raw, _ = await read_capped(resp, MAX_ERROR_BODY_BYTES)
                    text = raw.decode("utf-8", "replace")
                    state.refused = refused_params(resp.status_code, text, body)
                    state.error = f"HTTP {resp.status_code}: {text[:MAX_ERROR_CHARS]}"
                    return
                if "text/event-stream" not in resp.headers.get("content-type", ""):
                    raw, cut = await read_capped(resp, MAX_BODY_BYTES)
                    now = clock() - t0
                    if cut:
                        state.t_end = now
                        state.error = f"an answer of more than {MAX_BODY_BYTES:,} bytes"
                        return
                    _whole_response(state, raw, now)
                    return
                await _read_events(resp, state, t0)
    except TimeoutError:
        state.aborted = f"timeout: no end after {timeout_s:g} s"
    except httpx.TimeoutException as exc:
        state.aborted = f"timeout: {type(exc).__name__} (no bytes within the idle timeout)"
    except httpx.HTTPError as exc:
        state.error = f"{type(exc).__name__}: {str(exc)[:MAX_ERROR_CHARS] or 'connection failed'}"
    finally:
        if state.t_end is None:
            state.t_end = clock() - t0


class SSEReader:
    """The SSE lines of one stream, fed piece by piece, in time linear in the bytes received.

    The buffer holds only the unfinished line, and a search for its end starts where the last
    one stopped (`scan`), so a line arriving in many pieces is searched once; a line longer
    than MAX_EVENT_BYTES is dropped up to its end and counted as a bad event. An event's time
    is that of the piece that completed its line.
    """

    def __init__(self, state: RequestState) -> None:
        self.state = state
        self.buf = bytearray()
        self.scan = 0  # bytes of buf already searched for a newline
        self.skipping = False  # inside a line too long to keep
        self.ended = False

    def feed(self, piece: bytes, now: float) -> bool:
        """One piece of the body; True when the stream is over (its end event came)."""
        if not self.buf and not self.skipping and piece.endswith(b"\n"):
            # the usual piece: whole lines, nothing left over from the last one
            on_event = self.state.on_event
            for line in piece.split(b"\n"):
                if line.startswith(b"data:") and on_event(line[5:].strip(), now):
                    self.state.t_end = now
                    self.ended = True
                    return True
            return False
        buf = self.buf
        buf += piece
        start = 0
        while True:
            cut = buf.find(b"\n", max(self.scan, start))
            if cut < 0:
                break
            line = bytes(buf[start:cut]).rstrip(b"\r")
            start = cut + 1
            if self.skipping:
                self.skipping = False
                continue
            if line.startswith(b"data:") and self.state.on_event(line[5:].strip(), now):
                self.state.t_end = now
                self.ended = True
                return True
        if start:
            del buf[:start]
        self.scan = len(buf)
        if len(buf) > MAX_EVENT_BYTES:
            if not self.skipping:
                self.state.bad_events += 1
            buf.clear()
            self.scan = 0
            self.skipping = True
        return False

    def close(self, now: float) -> None:
        """The body ended (or the connection closed) without an end event."""
        state = self.state
        self.ended = True
        state.t_end = now
        if self.buf.startswith(b"data:") and not self.skipping:
            state.on_event(bytes(self.buf[5:]).strip(), now)
        if state.error is None and state.finish_raw is None and not state.saw_done:
            state.error = (
                f"the connection closed mid-stream after {counted(state.n_chunks, 'chunk')}, "
                "with no finish reason"
            )


async def _read_events(resp: httpx.Response, state: RequestState, t0: float) -> None:
    """The SSE lines of an httpx stream (`SSEReader` does the work)."""
    clock = time.perf_counter
    reader = SSEReader(state)
    async for piece in resp.aiter_bytes():
        if reader.feed(piece, clock() - t0):
            return
    reader.close(clock() - t0)


def _whole_response(state: RequestState, raw: bytes, now: float) -> None:
    """A server that ignored ``stream: true``: one body, one 'chunk' at its arrival."""
    state.t_end = now
    obj = parse_json(raw)
    if obj is None:
        state.error = f"not JSON and not a stream: {raw[:200]!r}"
        return
    if isinstance(obj, dict):
        if obj.get("error"):
            state.error = f"error: {str(obj['error'])[:MAX_ERROR_CHARS]}"
            return
        state._on_object(obj, now)
