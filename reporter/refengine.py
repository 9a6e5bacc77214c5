"""A small reference engine: a real OpenAI-compatible streaming server with known scheduling.

It runs no model. It emits deterministic words on a step clock, and its scheduling is set by
options, so that a recording of it has a known right answer:

- ``--slots k``: at most k requests decode at once (k = 1 is a serial server; the rest wait).
- ``--step-ms`` and ``--step-ms-per-seq``: one decode step costs ``step + per_seq × (b − 1)``
  for a batch of b; every running request gets one token per step.
- ``--prefill-tps``: a newly admitted request first costs ``prompt tokens ÷ rate`` seconds,
  during which the whole engine stalls (as prefill does on a real one).
- ``--eos-after T``: the "model" ends its answer after T tokens unless told otherwise;
  ``ignore_eos`` and ``min_tokens`` are honoured or not (``--ignore-eos``, ``--min-tokens``).
- ``--chunk-tokens c``: c tokens per streamed chunk.
- ``--error-every m``: every m-th request fails mid-stream.
- ``--interrupt``: a waiting request cuts the running stream short, with no finish reason
  (llama-cpp-python's default).
- ``--reject-param NAME``: answer HTTP 400 naming NAME when a request carries it.

Endpoints: ``/v1/completions`` and ``/v1/chat/completions`` (streaming or not), ``/v1/models``,
``/metrics`` (Prometheus text), ``/version``, ``/health``, and llama-server's ``/tokenize`` and
``/detokenize`` (a whitespace-separated word is a token; ``--no-tokenize`` removes them). One
line per finished request goes to the log (stderr or ``--log-file``).

    python -m reporter.refengine --port 0 --slots 1 --step-ms 10
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

VERSION = "1.0"
WORDS = (
    "the", "model", "server", "can", "stream", "a", "long", "answer", "about", "queue", "and",
    "every", "token", "arrives", "on", "time", "while", "batch", "grows", "slowly", "through",
    "each", "step", "of", "scheduler", "with", "one", "more", "slot",
)  # fmt: skip


@dataclass
class EngineConfig:
    """The engine's behaviour (see the module docstring)."""

    slots: int = 1
    step_ms: float = 10.0
    step_ms_per_seq: float = 0.0
    prefill_tps: float = 0.0
    chunk_tokens: int = 1
    eos_after: int = 0
    honour_ignore_eos: bool = True
    honour_min_tokens: bool = True
    error_every: int = 0
    error_after: int = 0
    interrupt: bool = False
    stream_usage: bool = True
    timings: bool = False
    reject_params: tuple[str, ...] = ()
    queue_limit: int = 0
    prefix_cache: bool = False
    default_max_tokens: int = 16
    model: str = "ref"
    api_key: str | None = None
    warnings: tuple[str, ...] = ()
    #: llama-server's /tokenize and /detokenize (a word is a token, as in the prompt count).
    tokenize: bool = True


@dataclass
class Seq:
    """One request inside the engine."""

    number: int
    prompt_tokens: int
    max_tokens: int
    stop_at_eos: int | None
    arrived: float
    queue: asyncio.Queue[dict[str, Any] | None] = field(default_factory=asyncio.Queue)
    generated: int = 0
    pending: int = 0
    admitted: float | None = None
    first: float | None = None
    prefill_s: float = 0.0
    cached: int = 0
    fail_after: int | None = None
    done: bool = False
    cancelled: bool = False


def _word(seq: int, i: int) -> str:
    return " " + WORDS[(seq * 7 + i * 3) % len(WORDS)]


class Engine:
    """The scheduler: one asyncio task that runs decode steps over the admitted requests."""

    def __init__(self, config: EngineConfig, log: IO[str] | None = None) -> None:
        self.config = config
        self.log_stream = log
        self.waiting: deque[Seq] = deque()
        self.active: list[Seq] = []
        self.counter = 0
        self.wake = asyncio.Event()
        self.seen_prompts: set[str] = set()
        self.metrics: dict[str, float] = {
            "generation_tokens_total": 0.0,
            "prompt_tokens_total": 0.0,
            "prefix_cache_queries_total": 0.0,
            "prefix_cache_hits_total": 0.0,
            "requests_received_total": 0.0,
            "requests_completed_total": 0.0,
            "steps_total": 0.0,
        }
        self.finished: dict[str, float] = {"length": 0, "stop": 0, "error": 0, "abort": 0}
        self.task: asyncio.Task[None] | None = None

    def log(self, level: str, text: str) -> None:
        if self.log_stream is not None:
            stamp = time.monotonic()
            self.log_stream.write(f"{stamp:.3f} {level} refengine: {text}\n")
            self.log_stream.flush()

    def start(self) -> None:
        self.task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task
            self.task = None

    def submit(self, body: dict[str, Any], prompt: str, prompt_tokens: int) -> Seq:
        cfg = self.config
        self.counter += 1
        max_tokens = body.get("max_tokens") or body.get("max_completion_tokens")
        max_tokens = int(max_tokens) if max_tokens else cfg.default_max_tokens
        eos: int | None = cfg.eos_after if cfg.eos_after > 0 else None
        if eos is not None and cfg.honour_ignore_eos and body.get("ignore_eos"):
            eos = None
        min_tokens = int(body.get("min_tokens") or 0)
        if eos is not None and cfg.honour_min_tokens and min_tokens:
            eos = max(eos, min_tokens)
        seq = Seq(self.counter, prompt_tokens, max_tokens, eos, time.monotonic())
        if cfg.error_every and self.counter % cfg.error_every == 0:
            seq.fail_after = cfg.error_after or max(1, max_tokens // 2)
        if cfg.prefix_cache:
            self.metrics["prefix_cache_queries_total"] += prompt_tokens
            if prompt in self.seen_prompts:
                seq.cached = prompt_tokens
                self.metrics["prefix_cache_hits_total"] += prompt_tokens
            self.seen_prompts.add(prompt)
        if cfg.prefill_tps > 0:
            seq.prefill_s = (prompt_tokens - seq.cached) / cfg.prefill_tps
        self.metrics["requests_received_total"] += 1
        self.log(
            "I", f"request {seq.number} received: {prompt_tokens} prompt tokens, max {max_tokens}"
        )
        self.metrics["prompt_tokens_total"] += prompt_tokens
        self.waiting.append(seq)
        self.wake.set()
        return seq

    def cancel(self, seq: Seq) -> None:
        """The client went away: drop the request wherever it is."""
        if seq.done:
            return
        seq.cancelled = True
        seq.done = True
        if seq in self.active:
            self.active.remove(seq)
        elif seq in self.waiting:
            self.waiting.remove(seq)
        self.finished["abort"] += 1
        self.log("W", f"request {seq.number} cancelled: the client disconnected")

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        cfg = self.config
        next_t = loop.time()
        while True:
            admitted = []
            while self.waiting and len(self.active) < max(cfg.slots, 1):
                seq = self.waiting.popleft()
                seq.admitted = time.monotonic()
                self.active.append(seq)
                admitted.append(seq)
            if not self.active:
                self.wake.clear()
                await self.wake.wait()
                next_t = loop.time()
                continue
            batch = len(self.active)
            cost = (cfg.step_ms + cfg.step_ms_per_seq * (batch - 1)) / 1000.0
            cost += sum(s.prefill_s for s in admitted)
            next_t += cost
            delay = next_t - loop.time()
            if delay < -0.05:  # far behind (a stall): do not try to catch up in a burst
                next_t = loop.time()
            await asyncio.sleep(max(delay, 0.0))
            self.metrics["steps_total"] += 1
            for seq in list(self.active):
                if not seq.done:
                    self._advance(seq)
            if cfg.interrupt and self.waiting:
                for seq in list(self.active):
                    if not seq.done and seq.generated > 0:
                        self._finish(seq, None)

    def _advance(self, seq: Seq) -> None:
        cfg = self.config
        seq.generated += 1
        seq.pending += 1
        self.metrics["generation_tokens_total"] += 1
        if seq.first is None:
            seq.first = time.monotonic()
        reason: str | None = None
        if seq.generated >= seq.max_tokens:
            reason = "length"
        elif seq.stop_at_eos is not None and seq.generated >= seq.stop_at_eos:
            reason = "stop"
        failing = seq.fail_after is not None and seq.generated >= seq.fail_after
        if seq.pending >= cfg.chunk_tokens or reason is not None or failing:
            start = seq.generated - seq.pending
            text = "".join(_word(seq.number, i) for i in range(start, seq.generated))
            seq.queue.put_nowait({"text": text, "tokens": seq.pending})
            seq.pending = 0
        if failing:
            self._finish(seq, "error")
        elif reason is not None:
            self._finish(seq, reason)

    def _finish(self, seq: Seq, reason: str | None) -> None:
        seq.done = True
        if seq in self.active:
            self.active.remove(seq)
        now = time.monotonic()
        first = seq.first if seq.first is not None else now
        decode_s = max(now - first, 1e-9)
        seq.queue.put_nowait({"finish": reason, "decode_s": decode_s, "now": now})
        self.finished["abort" if reason is None else reason] += 1

    def prometheus(self) -> str:
        lines = []
        m = self.metrics
        for name, value in m.items():
            lines.append(f"# TYPE refengine:{name} counter")
            lines.append(f"refengine:{name} {value:g}")
        lines.append("# TYPE refengine:request_success_total counter")
        for reason, value in self.finished.items():
            lines.append(f'refengine:request_success_total{{finished_reason="{reason}"}} {value:g}')
        lines.append("# TYPE refengine:requests_running gauge")
        lines.append(f"refengine:requests_running {len(self.active)}")
        lines.append("# TYPE refengine:requests_waiting gauge")
        lines.append(f"refengine:requests_waiting {len(self.waiting)}")
        lines.append("# TYPE refengine:slots gauge")
        lines.append(f"refengine:slots {self.config.slots}")
        return "\n".join(lines) + "\n"


class _BadRequest(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _prompt_of(body: dict[str, Any], chat: bool) -> tuple[str, int]:
    if chat:
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise _BadRequest(400, "'messages' is required")
        text = "\n".join(str(m.get("content", "")) for m in messages if isinstance(m, dict))
        return text, len(text.split()) + 3 * len(messages)
    prompt = body.get("prompt")
    if isinstance(prompt, list):
        prompt = " ".join(map(str, prompt))
    if not isinstance(prompt, str):
        raise _BadRequest(400, "'prompt' is required")
    return prompt, max(len(prompt.split()), 1)


class Server:
    """HTTP/1.1 (keep-alive, chunked SSE) in front of one Engine."""

    def __init__(self, config: EngineConfig, log: IO[str] | None = None) -> None:
        self.config = config
        self.engine = Engine(config, log)
        self.server: asyncio.Server | None = None
        self.port = 0
        self.connections: set[asyncio.Task[None]] = set()
        self.vocab: dict[str, int] = {}
        self.words: list[str] = []

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> int:
        self.engine.start()
        self.server = await asyncio.start_server(self._connection, host, port)
        self.port = int(self.server.sockets[0].getsockname()[1])
        cfg = self.config
        self.engine.log(
            "I",
            f"slots={cfg.slots} step_ms={cfg.step_ms} "
            f"step_ms_per_seq={cfg.step_ms_per_seq} prefill_tps={cfg.prefill_tps} "
            f"chunk_tokens={cfg.chunk_tokens} eos_after={cfg.eos_after}",
        )
        for text in cfg.warnings:
            self.engine.log("W", text)
        self.engine.log("I", f"listening on http://{host}:{self.port}")
        return self.port

    async def stop(self) -> None:
        if self.server is not None:
            self.server.close()
            for task in list(self.connections):
                task.cancel()
            for task in list(self.connections):
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
            await self.server.wait_closed()
            self.server = None
        await self.engine.stop()

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self.connections.add(task)
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    break
                method, path, headers, body = request
                keep = await self._dispatch(method, path, headers, body, writer)
                if not keep or headers.get("connection", "").lower() == "close":
                    break
        except (ConnectionError, asyncio.IncompleteReadError, _BadRequest):
            pass
        finally:
            self.connections.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _dispatch(
        self,
        method: str,
        path: str,
        headers: dict[str, str],
        body: bytes,
        writer: asyncio.StreamWriter,
    ) -> bool:
        path = path.split("?", 1)[0]
        key = self.config.api_key
        if (
            key is not None
            and path.startswith("/v1/")
            and (headers.get("authorization") != f"Bearer {key}")
        ):
            await _send_json(
                writer,
                401,
                {"error": {"message": "invalid API key", "type": "authentication_error"}},
            )
            return True
        if method == "GET" and path == "/health":
            await _send_json(writer, 200, {"status": "ok"})
        elif method == "GET" and path == "/v1/models":
            await _send_json(
                writer,
                200,
                {
                    "object": "list",
                    "data": [{"id": self.config.model, "object": "model", "owned_by": "refengine"}],
                },
            )
        elif method == "GET" and path == "/version":
            await _send_json(writer, 200, {"version": VERSION, "engine": "refengine"})
        elif method == "GET" and path == "/metrics":
            await _send(writer, 200, self.engine.prometheus().encode(), "text/plain; version=0.0.4")
        elif method == "POST" and path in ("/tokenize", "/detokenize") and self.config.tokenize:
            await self._tokenize(path == "/tokenize", body, writer)
        elif method == "POST" and path in ("/v1/completions", "/v1/chat/completions"):
            return await self._generate(path.endswith("chat/completions"), body, writer)
        else:
            await _send_json(writer, 404, {"error": {"message": f"no route {method} {path}"}})
        return True

    async def _tokenize(self, forward: bool, raw: bytes, writer: asyncio.StreamWriter) -> None:
        """llama-server's dialect: {"content": text} → {"tokens": [...]}, and back."""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = None
        if not isinstance(body, dict):
            await _send_json(writer, 400, {"error": {"message": "the body must be an object"}})
        elif forward:
            ids = [self.vocab.setdefault(w, len(self.vocab)) for w in str(body.get("content", ""))
                   .split()]  # fmt: skip
            self.words.extend(list(self.vocab)[len(self.words) :])
            await _send_json(writer, 200, {"tokens": ids})
        else:
            ids = [
                t for t in body.get("tokens") or [] if type(t) is int and 0 <= t < len(self.words)
            ]
            await _send_json(writer, 200, {"content": " ".join(self.words[t] for t in ids)})

    async def _generate(self, chat: bool, raw: bytes, writer: asyncio.StreamWriter) -> bool:
        cfg = self.config
        try:
            body = json.loads(raw or b"{}")
            if not isinstance(body, dict):
                raise _BadRequest(400, "the body must be a JSON object")
            for name in cfg.reject_params:
                if name in body:
                    raise _BadRequest(400, f"Unrecognized request argument supplied: {name}")
            prompt, prompt_tokens = _prompt_of(body, chat)
        except (ValueError, _BadRequest) as exc:
            message = exc.message if isinstance(exc, _BadRequest) else f"bad JSON: {exc}"
            await _send_json(
                writer, 400, {"error": {"message": message, "type": "invalid_request_error"}}
            )
            return True
        engine = self.engine
        if cfg.queue_limit and len(engine.waiting) >= cfg.queue_limit:
            await _send_json(writer, 503, {"error": {"message": "the queue is full"}})
            return True
        seq = engine.submit(body, prompt, prompt_tokens)
        rid = f"{'chatcmpl' if chat else 'cmpl'}-{seq.number}"
        created = int(time.time())
        stream = bool(body.get("stream"))
        want_usage = cfg.stream_usage and (
            not chat or bool((body.get("stream_options") or {}).get("include_usage"))
        )
        try:
            if stream:
                await self._stream(seq, chat, rid, created, want_usage, writer)
            else:
                await self._whole(seq, chat, rid, created, writer)
        except (ConnectionError, asyncio.CancelledError):
            engine.cancel(seq)
            raise
        engine.metrics["requests_completed_total"] += 1
        return True

    def _usage(self, seq: Seq) -> dict[str, Any]:
        return {
            "prompt_tokens": seq.prompt_tokens,
            "completion_tokens": seq.generated,
            "total_tokens": seq.prompt_tokens + seq.generated,
            "prompt_tokens_details": {"cached_tokens": seq.cached},
        }

    def _timings(self, seq: Seq, decode_s: float) -> dict[str, Any]:
        ms = decode_s * 1000.0
        return {
            "prompt_n": seq.prompt_tokens - seq.cached,
            "cache_n": seq.cached,
            "prompt_ms": seq.prefill_s * 1000.0,
            "predicted_n": seq.generated,
            "predicted_ms": ms,
            "predicted_per_second": seq.generated / decode_s if decode_s > 0 else None,
        }

    async def _stream(
        self,
        seq: Seq,
        chat: bool,
        rid: str,
        created: int,
        want_usage: bool,
        writer: asyncio.StreamWriter,
    ) -> None:
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
            b"Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n"
        )
        base: dict[str, Any] = {
            "id": rid,
            "created": created,
            "model": self.config.model,
            "object": "chat.completion.chunk" if chat else "text_completion",
        }
        if chat:
            _write_event(
                writer,
                base
                | {
                    "choices": [
                        {
                            "index": 0,
                            "delta": {"role": "assistant", "content": ""},
                            "finish_reason": None,
                        }
                    ]
                },
            )
        await writer.drain()
        while True:
            item = await seq.queue.get()
            if item is None:
                break
            if "text" in item:
                choice: dict[str, Any] = {"index": 0, "finish_reason": None}
                if chat:
                    choice["delta"] = {"content": item["text"]}
                else:
                    choice["text"] = item["text"]
                _write_event(writer, base | {"choices": [choice]})
                await writer.drain()
                continue
            reason = item["finish"]
            if reason == "error":
                _write_event(
                    writer,
                    {
                        "error": {
                            "code": 500,
                            "type": "server_error",
                            "message": f"engine failure after {seq.generated} tokens",
                        }
                    },
                )
                writer.write(b"0\r\n\r\n")
                await writer.drain()
                self._log_done(seq, "error")
                return
            if reason is not None:
                final: dict[str, Any] = {"index": 0, "finish_reason": reason}
                if chat:
                    final["delta"] = {}
                else:
                    final["text"] = ""
                last = base | {"choices": [final]}
                if self.config.timings:
                    last["timings"] = self._timings(seq, item["decode_s"])
                if want_usage and not chat:
                    last["usage"] = self._usage(seq)
                _write_event(writer, last)
                if want_usage and chat:
                    _write_event(writer, base | {"choices": [], "usage": self._usage(seq)})
            writer.write(b"e\r\ndata: [DONE]\n\n\r\n0\r\n\r\n")
            await writer.drain()
            self._log_done(seq, reason)
            return

    async def _whole(
        self, seq: Seq, chat: bool, rid: str, created: int, writer: asyncio.StreamWriter
    ) -> None:
        parts: list[str] = []
        reason: str | None = None
        decode_s = 0.0
        while True:
            item = await seq.queue.get()
            if item is None:
                break
            if "text" in item:
                parts.append(item["text"])
                continue
            reason, decode_s = item["finish"], item["decode_s"]
            break
        if reason == "error":
            await _send_json(writer, 500, {"error": {"message": "engine failure"}})
            self._log_done(seq, "error")
            return
        text = "".join(parts)
        choice: dict[str, Any] = {"index": 0, "finish_reason": reason}
        if chat:
            choice["message"] = {"role": "assistant", "content": text}
        else:
            choice["text"] = text
        out: dict[str, Any] = {
            "id": rid,
            "created": created,
            "model": self.config.model,
            "object": "chat.completion" if chat else "text_completion",
            "choices": [choice],
            "usage": self._usage(seq),
        }
        if self.config.timings:
            out["timings"] = self._timings(seq, decode_s)
        await _send_json(writer, 200, out)
        self._log_done(seq, reason)

    def _log_done(self, seq: Seq, reason: str | None) -> None:
        wait = (seq.admitted or seq.arrived) - seq.arrived
        self.engine.log(
            "I",
            f"request {seq.number} done: {seq.generated} tokens, "
            f"finish {reason or 'none'}, waited {wait:.3f} s",
        )


async def _read_request(
    reader: asyncio.StreamReader,
) -> tuple[str, str, dict[str, str], bytes] | None:
    line = await reader.readline()
    if not line:
        return None
    try:
        method, path, _ = line.decode("latin-1").split(" ", 2)
    except ValueError:
        raise _BadRequest(400, "bad request line") from None
    headers: dict[str, str] = {}
    while True:
        h = await reader.readline()
        if h in (b"\r\n", b"\n", b""):
            break
        name, _, value = h.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length") or 0)
    body = await reader.readexactly(length) if length else b""
    return method, path, headers, body


def _write_event(writer: asyncio.StreamWriter, obj: dict[str, Any]) -> None:
    data = b"data: " + json.dumps(obj, separators=(",", ":")).encode() + b"\n\n"
    writer.write(b"%x\r\n%s\r\n" % (len(data), data))


async def _send(writer: asyncio.StreamWriter, status: int, payload: bytes, ctype: str) -> None:
    reason = {
        200: "OK",
        400: "Bad Request",
        401: "Unauthorized",
        404: "Not Found",
        500: "Internal Server Error",
        503: "Service Unavailable",
    }.get(status, "Error")
    writer.write(
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: {ctype}\r\n"
        f"Content-Length: {len(payload)}\r\n\r\n".encode()
        + payload
    )
    await writer.drain()


async def _send_json(writer: asyncio.StreamWriter, status: int, obj: dict[str, Any]) -> None:
    await _send(writer, status, json.dumps(obj).encode(), "application/json")


class ThreadedEngine:
    """A reference engine serving from a background thread (its own event loop)."""

    def __init__(self, config: EngineConfig, log: IO[str] | None = None) -> None:
        self.config = config
        self.log = log
        self.port = 0
        self.server: Server | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._main, name="refengine", daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _main(self) -> None:
        asyncio.run(self._serve())

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        self.server = Server(self.config, self.log)
        self.port = await self.server.start()
        self._ready.set()
        await self._stop.wait()
        await self.server.stop()

    def __enter__(self) -> ThreadedEngine:
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("the reference engine did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)


@contextlib.contextmanager
def serving(config: EngineConfig, log: IO[str] | None = None) -> Iterator[ThreadedEngine]:
    """``with serving(EngineConfig(slots=4)) as eng: ... eng.url``."""
    with ThreadedEngine(config, log) as engine:
        yield engine


def parse_args(argv: Sequence[str] | None = None) -> tuple[EngineConfig, argparse.Namespace]:
    ap = argparse.ArgumentParser(
        prog="python -m reporter.refengine",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
    )
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0, help="0 picks a free port (printed)")
    ap.add_argument("--slots", type=int, default=1)
    ap.add_argument("--step-ms", type=float, default=10.0)
    ap.add_argument("--step-ms-per-seq", type=float, default=0.0)
    ap.add_argument("--prefill-tps", type=float, default=0.0)
    ap.add_argument("--chunk-tokens", type=int, default=1)
    ap.add_argument("--eos-after", type=int, default=0)
    ap.add_argument("--ignore-eos", choices=("honour", "ignore"), default="honour")
    ap.add_argument("--min-tokens", choices=("honour", "ignore"), default="honour")
    ap.add_argument("--error-every", type=int, default=0)
    ap.add_argument("--error-after", type=int, default=0)
    ap.add_argument("--interrupt", action="store_true")
    ap.add_argument("--no-stream-usage", action="store_true")
    ap.add_argument("--timings", action="store_true", help="llama-server style per-request timings")
    ap.add_argument("--reject-param", action="append", default=[])
    ap.add_argument("--queue-limit", type=int, default=0)
    ap.add_argument("--prefix-cache", action="store_true")
    ap.add_argument("--no-tokenize", action="store_true", help="no /tokenize, /detokenize")
    ap.add_argument("--model", default="ref")
    ap.add_argument("--api-key")
    ap.add_argument("--warn", action="append", default=[], help="a WARNING line at startup")
    ap.add_argument("--log-file", help="append the log here instead of stderr")
    ns = ap.parse_args(argv)
    cfg = EngineConfig(
        slots=ns.slots, step_ms=ns.step_ms, step_ms_per_seq=ns.step_ms_per_seq,
        prefill_tps=ns.prefill_tps, chunk_tokens=max(ns.chunk_tokens, 1), eos_after=ns.eos_after,
        honour_ignore_eos=ns.ignore_eos == "honour", honour_min_tokens=ns.min_tokens == "honour",
        error_every=ns.error_every, error_after=ns.error_after, interrupt=ns.interrupt,
        stream_usage=not ns.no_stream_usage, timings=ns.timings,
        reject_params=tuple(ns.reject_param), queue_limit=ns.queue_limit,
        prefix_cache=ns.prefix_cache, model=ns.model, api_key=ns.api_key,
        warnings=tuple(ns.warn), tokenize=not ns.no_tokenize,
    )  # fmt: skip
    return cfg, ns


async def _main(cfg: EngineConfig, ns: argparse.Namespace, log: IO[str]) -> None:
    server = Server(cfg, log)
    port = await server.start(ns.host, ns.port)
    print(f"refengine listening on http://{ns.host}:{port}", flush=True)
    done = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, done.set)
    await done.wait()
    await server.stop()


def main(argv: Sequence[str] | None = None) -> None:
    cfg, ns = parse_args(argv)
    if ns.log_file:
        with open(ns.log_file, "a", encoding="utf-8") as log:  # noqa: PTH123
            asyncio.run(_main(cfg, ns, log))
    else:
        asyncio.run(_main(cfg, ns, sys.stderr))


if __name__ == "__main__":
    main()
