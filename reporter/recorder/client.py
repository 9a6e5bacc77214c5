"""One streamed request: build the body, send it, read the server-sent events, time each chunk.

The clock is the run's: ``time.perf_counter() - t0``, one monotonic clock for every request
of a run. A chunk's time is when its bytes arrived. Token counts are the server's own
(``usage``, else llama-server's ``timings.predicted_n``); only when the server gives neither
are the streamed chunks counted, and the record says which (``output_tokens_source``).
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from dataclasses import dataclass, field
from typing import Any

import httpx
import orjson

from reporter.recorder.config import Api

#: Request fields a server may refuse; the recorder drops them one by one and says so.
OPTIONAL_PARAMS = ("stream_options", "ignore_eos", "min_tokens", "n_predict", "seed")
_FINISH = {"length": "length", "stop": "stop", "eos": "stop", "tool_calls": "stop",
           "function_call": "stop", "content_filter": "stop", "abort": "abort",
           "error": "error", "cancelled": "abort", "limit": "length"}  # fmt: skip
MAX_ERROR_CHARS = 500


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

    @property
    def n_chunks(self) -> int:
        return len(self.token_times)

    def output_tokens(self) -> tuple[int | None, str]:
        if self.usage_completion is not None:
            return self.usage_completion, "usage"
        if self.timings is not None and isinstance(self.timings.get("predicted_n"), int):
            return int(self.timings["predicted_n"]), "timings"
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
                f"the stream ended without a finish reason after {self.n_chunks} "
                "chunk(s): the server cut it short"
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
            self.error = f"error event after {self.n_chunks} chunk(s): {str(msg)[:MAX_ERROR_CHARS]}"
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
            if isinstance(usage.get("completion_tokens"), int):
                self.usage_completion = usage["completion_tokens"]
            if isinstance(usage.get("prompt_tokens"), int):
                self.usage_prompt = usage["prompt_tokens"]
            details = usage.get("prompt_tokens_details")
            if isinstance(details, dict) and isinstance(details.get("cached_tokens"), int):
                self.cached_tokens = details["cached_tokens"]
        timings = obj.get("timings")
        if isinstance(timings, dict):
            self.timings = {k: v for k, v in timings.items() if isinstance(v, int | float)}
            if self.usage_prompt is None and isinstance(timings.get("prompt_n"), int):
                cache = timings.get("cache_n")
                self.usage_prompt = timings["prompt_n"] + (cache if isinstance(cache, int) else 0)


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
                    text = (await resp.aread()).decode("utf-8", "replace")
                    state.refused = refused_params(resp.status_code, text, body)
                    state.error = f"HTTP {resp.status_code}: {text[:MAX_ERROR_CHARS]}"
                    return
                if "text/event-stream" not in resp.headers.get("content-type", ""):
                    raw = await resp.aread()
                    now = clock() - t0
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


async def _read_events(resp: httpx.Response, state: RequestState, t0: float) -> None:
    clock = time.perf_counter
    buf = b""
    async for piece in resp.aiter_bytes():
        now = clock() - t0
        buf += piece
        while True:
            cut = buf.find(b"\n")
            if cut < 0:
                break
            line = buf[:cut].rstrip(b"\r")
            buf = buf[cut + 1 :]
            if line.startswith(b"data:") and state.on_event(line[5:].strip(), now):
                state.t_end = now
                return
    state.t_end = clock() - t0
    if buf.startswith(b"data:"):
        state.on_event(buf[5:].strip(), state.t_end)
    if state.error is None and state.finish_raw is None and not state.saw_done:
        state.error = (
            f"the connection closed mid-stream after {state.n_chunks} chunk(s), "
            "with no finish reason"
        )


def _whole_response(state: RequestState, raw: bytes, now: float) -> None:
    """A server that ignored ``stream: true``: one body, one 'chunk' at its arrival."""
    state.t_end = now
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError:
        state.error = f"not JSON and not a stream: {raw[:200]!r}"
        return
    if isinstance(obj, dict):
        if obj.get("error"):
            state.error = f"error: {str(obj['error'])[:MAX_ERROR_CHARS]}"
            return
        state._on_object(obj, now)
