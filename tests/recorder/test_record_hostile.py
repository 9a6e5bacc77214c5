"""The recorder against hostile servers on loopback: bounded in time and memory, no traceback,
and nothing written that the audit would refuse.

Each server is a few lines of http.server in a thread on port 0; every test is bounded by
short --timeout values and finishes in a few seconds.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from reporter import api
from reporter.cli import main
from reporter.recorder import client as rc
from reporter.recorder import record
from reporter.recorder.run import Observer
from tests.recorder.conftest import base_config, read_trace

Stream = Callable[[BaseHTTPRequestHandler, threading.Event], None]


def sse(*events: dict[str, Any]) -> bytes:
    return b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events) + (
        b"data: [DONE]\n\n"
    )


def good_stream(usage: dict[str, Any] | None = None, **extra: Any) -> bytes:
    """Four one-token chunks, the last with finish_reason length, then the usage."""
    chunks: list[dict[str, Any]] = [{"choices": [{"text": "tok"}]} for _ in range(3)]
    chunks.append({"choices": [{"text": "tok", "finish_reason": "length"}], **extra})
    if usage is not None:
        chunks.append({"choices": [], "usage": usage})
    return sse(*chunks)


@dataclass
class Hostile:
    """What the server answers: /v1/models, a streamed and a non-streamed completion."""

    models: bytes = b'{"data": [{"id": "ref"}]}'
    stream: bytes | Stream = b""
    whole: bytes | Stream = b'{"usage": {"prompt_tokens": 7}}'


@contextmanager
def hostile_server(behaviour: Hostile) -> Iterator[str]:
    stop = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:  # quiet
            pass

        def _answer(self, body: bytes | Stream, content_type: str) -> None:
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.end_headers()
            if callable(body):
                body(self, stop)
            else:
                self.wfile.write(body)

        def do_GET(self) -> None:
            if self.path == "/v1/models":
                self._answer(behaviour.models, "application/json")
            else:
                self.send_error(404)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            request = json.loads(self.rfile.read(length) or b"{}")
            if request.get("stream"):
                self._answer(behaviour.stream, "text/event-stream")
            else:
                self._answer(behaviour.whole, "application/json")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        stop.set()
        server.shutdown()
        server.server_close()


def trickle_forever(handler: BaseHTTPRequestHandler, stop: threading.Event) -> None:
    """A byte every 20 ms, never an end: each read is quick, the answer never finishes."""
    try:
        while not stop.wait(0.02):
            handler.wfile.write(b" ")
            handler.wfile.flush()
    except OSError:  # the client gave up and closed the connection
        pass


class Notes(Observer):
    """The notes a recording prints (the CLI shows them on stderr)."""

    def __init__(self) -> None:
        self.notes: list[str] = []

    def note(self, text: str) -> None:
        self.notes.append(text)


def record_one(
    url: str, out: Path, observer: Observer | None = None, **kw: Any
) -> tuple[Any, list[dict[str, Any]], float]:
    cfg = base_config(url, out, concurrency=(1,), scrape_metrics=False, output_tokens=4, **kw)
    start = time.monotonic()
    result = record(cfg, observer)
    return result, read_trace(out), time.monotonic() - start


@pytest.mark.slow
def test_a_never_ending_answer_to_the_prompt_length_call_is_cut_at_the_timeout(
    tmp_path: Path,
) -> None:
    behaviour = Hostile(stream=good_stream(), whole=trickle_forever)  # no usage: asks again
    notes = Notes()
    with hostile_server(behaviour) as url:
        result, trace, took = record_one(
            url, tmp_path / "t.jsonl", notes, timeout_s=1.0, idle_timeout_s=30.0
        )
    # one --timeout for the whole prompt-length call, not one per read: a byte comes every
    # 20 ms and the idle timeout is 30 s, so only the call's own deadline can end it (a read
    # deadline would wait forever), and it is not cut before its second
    assert "the prompt-length request got no answer within 1 s; prompt length unknown" in (
        notes.notes
    )
    assert took >= 1.0
    run = next(r for r in trace if r["kind"] == "run")
    assert run["workload"]["prompt_tokens"] is None
    assert result.runs[0].ok == 1


@pytest.mark.slow
def test_a_never_ending_stream_is_cut_at_the_timeout(tmp_path: Path) -> None:
    out = tmp_path / "t.jsonl"
    with hostile_server(Hostile(stream=trickle_forever)) as url:
        start = time.monotonic()
        args = ["record", url, "-m", "ref", "-c", "1", "-n", "1", "--timeout", "1", "-q",
                "--no-metrics", "-o", str(out), "--output-tokens", "4", "--pause", "0"]  # fmt: skip
        result = CliRunner().invoke(main, args)
        took = time.monotonic() - start
    assert result.exit_code == 0, result.output
    request = next(r for r in read_trace(out) if r["kind"] == "request")
    assert request["finish_reason"] == "abort"
    # a byte every 20 ms keeps every read short: the request's own --timeout ended it, after
    # its full second by the recorder's clock and by ours
    assert request["error"] == "timeout: no end after 1 s"
    assert request["t_end"] - request["t_send"] >= 1.0
    assert took >= 1.0


@pytest.mark.slow
def test_bad_token_counts_are_recorded_as_null_with_a_warning(tmp_path: Path) -> None:
    usage = {"completion_tokens": -5, "prompt_tokens": True,
             "prompt_tokens_details": {"cached_tokens": 1.5}}  # fmt: skip
    timings = {"predicted_n": -3, "prompt_n": 10**30, "predicted_ms": -1.0, "ok_ms": 2.5}
    behaviour = Hostile(stream=good_stream(usage, timings=timings))
    with hostile_server(behaviour) as url:
        out = tmp_path / "t.jsonl"
        _, trace, _ = record_one(url, out, timeout_s=5.0)
    request = next(r for r in trace if r["kind"] == "request")
    assert request["prompt_tokens"] is None
    assert "cached_tokens" not in request
    assert request["output_tokens"] == 4  # counted from the chunks, said so
    assert request["output_tokens_source"] == "chunks"
    assert request["server_timings"] == {"ok_ms": 2.5}
    warnings = [r["text"] for r in trace if r["kind"] == "log" and r["level"] == "warning"]
    assert any("usage.completion_tokens = -5" in w and "recorded as null" in w for w in warnings)
    assert any("usage.prompt_tokens = True" in w for w in warnings)
    verdict = api.audit([out]).to_dict()  # the audit reads the trace (no refusal)
    assert verdict["runs"][0]["output_tokens"] == 4


@pytest.mark.slow
def test_a_model_list_nested_50000_deep_is_no_answer(tmp_path: Path) -> None:
    deep = b'{"data": ' + b"[" * 50_000 + b"]" * 50_000 + b"}"
    behaviour = Hostile(models=deep, stream=good_stream({"completion_tokens": 4,
                                                         "prompt_tokens": 7}))  # fmt: skip
    with hostile_server(behaviour) as url:
        result, _, _ = record_one(url, tmp_path / "t.jsonl", timeout_s=5.0)
    assert result.server.models == []
    assert result.runs[0].ok == 1
    # refused by the parser's own depth limit (an error, no recursion 50,000 calls deep)
    assert rc.parse_json(deep) is None


@pytest.mark.slow
def test_escape_sequences_from_a_server_are_shown_as_text(tmp_path: Path) -> None:
    evil = "m\x1b]52;c;cHduZWQ=\x07\x1b[2J\u202e"
    models = json.dumps({"data": [{"id": evil}]}).encode()
    behaviour = Hostile(models=models, stream=good_stream({"completion_tokens": 4,
                                                           "prompt_tokens": 7}))  # fmt: skip
    with hostile_server(behaviour) as url:
        result = CliRunner().invoke(
            main,
            ["record", url, "-m", "ref", "-c", "1", "-n", "1", "--no-metrics", "--pause", "0",
             "--output-tokens", "4", "-o", str(tmp_path / "t.jsonl")],
            color=True,
        )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert "is not among the server's models" in result.stderr
    assert "\\x1b]52;c;cHduZWQ=\\x07\\x1b[2J\\u202e" in result.stderr
    assert "\x1b" not in result.stderr and "\u202e" not in result.stderr


class Pieces:
    """A response whose body arrives in many small pieces (as a slow network delivers it)."""

    def __init__(self, body: bytes, size: int) -> None:
        self.body, self.size = body, size

    async def aiter_bytes(self) -> Any:
        for i in range(0, len(self.body), self.size):
            yield self.body[i : i + self.size]


class SearchedBuffer(bytearray):
    """A reader's buffer that counts the bytes its newline searches may cover."""

    searched = 0

    def find(self, sub: Any, start: Any = 0, *rest: Any) -> int:
        SearchedBuffer.searched += len(self) - start
        return super().find(sub, start, *rest)


def read_events(body: bytes, size: int) -> rc.RequestState:
    state = rc.RequestState(0, "sha")
    asyncio.run(rc._read_events(Pieces(body, size), state, time.perf_counter()))  # type: ignore[arg-type]
    return state


def test_a_long_sse_line_in_small_pieces_costs_linear_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """8 MB of one line in 1 KiB pieces: re-searching from the start would scan ~32 GB.

    The work is counted, not timed: every search for a line's end starts where the last one
    stopped, so the bytes searched stay within twice the body (a clock would say the same on
    an idle machine and fail on a loaded one)."""

    class Reader(rc.SSEReader):
        def __init__(self, state: rc.RequestState) -> None:
            super().__init__(state)
            self.buf = SearchedBuffer()

    monkeypatch.setattr(rc, "SSEReader", Reader)
    monkeypatch.setattr(SearchedBuffer, "searched", 0)
    body = b'data: {"choices": [{"text": "' + b"x" * (8 << 20) + b'"}]}\n\n'
    body += good_stream({"completion_tokens": 5})
    state = read_events(body, 1024)
    assert state.n_chunks == 5 and state.usage_completion == 5 and state.saw_done
    assert 8 << 20 <= SearchedBuffer.searched <= 2 * len(body)  # quadratic: ~4,000 × more


def test_a_line_longer_than_the_cap_is_dropped_and_the_stream_goes_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(rc, "MAX_EVENT_BYTES", 1 << 16)
    huge = b"data: " + b"y" * (1 << 20) + b"\n\n"
    state = read_events(huge + good_stream({"completion_tokens": 4}), 4096)
    assert state.bad_events == 1
    assert state.n_chunks == 4 and state.finish_raw == "length" and state.saw_done
