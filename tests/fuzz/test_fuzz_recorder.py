"""The recorder against a hostile server: a real loopback HTTP server answering with bodies
that hypothesis generates (identity endpoints, /metrics, streamed and whole completions).

The property: `benchreport record` ends with exit 0, 1 or 2 and no traceback; every line of
the trace it wrote parses; a trace it finished is one the audit reads (never refused), and the
audit of it keeps the fuzz property (strict finite JSON, no negative time); nothing the server
sent reaches the terminal as a raw control character.
"""

from __future__ import annotations

import json
import re
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fuzz.harness import check, invoke, run_property, violated
from tests.fuzz.mutate import Token, dumps_raw, hostile_text, mutate_tree, number_tokens


@dataclass
class Answer:
    """One scripted answer: status, content type, and the body (or SSE events) to send."""

    status: int = 200
    ctype: str = "application/json"
    body: bytes = b"{}"
    events: list[bytes] | None = None


@dataclass
class Script:
    """Answers by path; a completion is streamed when asked to stream and events are set."""

    answers: dict[str, Answer] = field(default_factory=dict)
    stream: Answer = field(default_factory=Answer)
    whole: Answer = field(default_factory=Answer)


class _Handler(BaseHTTPRequestHandler):
    server: _ScriptedServer
    protocol_version = "HTTP/1.0"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _send(self, answer: Answer) -> None:
        try:
            self.send_response(answer.status)
            self.send_header("Content-Type", answer.ctype)
            if answer.events is None:
                self.send_header("Content-Length", str(len(answer.body)))
                self.end_headers()
                self.wfile.write(answer.body)
            else:
                self.end_headers()
                for event in answer.events:
                    self.wfile.write(event)
                    self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass

    def do_GET(self) -> None:
        path = self.path.split("?")[0]
        self._send(self.server.script.answers.get(path, Answer(404, body=b'{"error":"no"}')))

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            body = {}
        script = self.server.script
        self._send(script.stream if body.get("stream") else script.whole)


class _ScriptedServer(ThreadingHTTPServer):
    daemon_threads = True
    script = Script()


@contextmanager
def serving() -> Iterator[_ScriptedServer]:
    """A scripted server on a free loopback port until the block ends."""
    srv = _ScriptedServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join(timeout=10)


@pytest.fixture(scope="module")
def server() -> Iterator[_ScriptedServer]:
    with serving() as srv:
        yield srv


def _raw(doc: Any) -> bytes:
    return dumps_raw(doc).encode("utf-8", errors="surrogatepass")


@st.composite
def json_body(draw: st.DrawFn, valid: Any) -> bytes:
    """A valid body, or one broken at the value level, or not JSON at all."""
    shape = draw(st.integers(0, 5))
    if shape == 0:
        return _raw(valid)
    if shape == 1:
        return draw(st.sampled_from([b"", b"null", b"[]", b"{", b"\xff\xfe", b"<html>x</html>"]))
    doc = json.loads(json.dumps(valid))
    for _ in range(draw(st.integers(1, 3))):
        doc = draw(mutate_tree(doc))
    return _raw(doc)


def _chunk(text: str | None, finish: str | None, usage: dict[str, Any] | None) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "id": "cmpl-1",
        "object": "text_completion",
        "choices": [{"index": 0, "text": text, "finish_reason": finish}],
    }
    if usage is not None:
        doc["usage"] = usage
    return doc


#: A count as a server may report it: right, negative, huge, non-finite, not a number.
reported_count = st.one_of(
    st.integers(0, 64),
    st.integers(-(10**20), 10**20),
    number_tokens.map(Token),
    st.sampled_from([-1, 2**63, 2**64, 1.5, -0.0, None, "12", [], {}]),
    hostile_text,
)


@st.composite
def sse_events(draw: st.DrawFn) -> list[bytes]:
    """A completion stream: word chunks, a finish, usage (or llama-server's timings),
    [DONE]; the counts it reports and some of its structure broken."""
    n = draw(st.integers(0, 6))
    docs: list[Any] = [_chunk(f" w{i}", None, None) for i in range(n)]
    docs.append(_chunk("", draw(st.sampled_from(["length", "stop", None, "abort", "x"])), None))
    hostile = draw(st.booleans())
    count = reported_count if hostile else st.just(n)
    prompt = reported_count if hostile else st.just(12)
    docs.append(
        _chunk(None, None, {"prompt_tokens": draw(prompt), "completion_tokens": draw(count)})
    )
    if draw(st.booleans()):
        docs[-1]["timings"] = {
            "prompt_n": draw(prompt), "predicted_n": draw(count),
            "predicted_per_second": draw(st.one_of(st.floats(), number_tokens.map(Token))),
            "cache_n": draw(reported_count),
        }  # fmt: skip
    for _ in range(draw(st.integers(0, 2))):
        i = draw(st.integers(0, len(docs) - 1))
        docs[i] = draw(mutate_tree(docs[i]))
    events = [b"data: " + _raw(d) + b"\n\n" for d in docs]
    if draw(st.booleans()):
        events.append(b"data: [DONE]\n\n")
    for _ in range(draw(st.integers(0, 2))):
        junk = draw(
            st.sampled_from(
                [b": comment\n\n", b"data: \n\n", b"event: error\ndata: {\"error\": \"x\"}\n\n",
                 b"data: {\"error\": {\"message\": \"\x1b[2Jboom\"}}\n\n", b"garbage\n",
                 b"data: \xff\xfe\n\n", b"data: " + b"[" * 200 + b"\n\n", b"\r\n", b"data: {\n\n"]
            )
        )  # fmt: skip
        events.insert(draw(st.integers(0, len(events))), junk)
    return events


MODELS = {"object": "list", "data": [{"id": "m", "object": "model", "owned_by": "vllm"}]}
PROPS = {"build_info": "b1", "total_slots": 2, "default_generation_settings": {"n_ctx": 4096}}
VERSION = {"version": "0.6.0"}
METRICS = (
    'vllm:generation_tokens_total{model_name="m"} {a}\n'
    'vllm:request_success_total{finished_reason="length",model_name="m"} {b}\n'
    'vllm:num_requests_waiting{model_name="m"} 0\n'
)
WHOLE = {"choices": [{"index": 0, "text": "w", "finish_reason": "length"}],
         "usage": {"prompt_tokens": 12, "completion_tokens": 1, "total_tokens": 13}}  # fmt: skip


@st.composite
def scripts(draw: st.DrawFn) -> Script:
    answers = {}
    for path, valid in (("/v1/models", MODELS), ("/props", PROPS), ("/version", VERSION)):
        if draw(st.booleans()):
            status = draw(st.sampled_from([200, 200, 200, 404, 500]))
            answers[path] = Answer(status, body=draw(json_body(valid)))
    if draw(st.booleans()):
        value = st.one_of(number_tokens, st.sampled_from(["1", "-5", "1e400", "x"]))
        text = METRICS.replace("{a}", draw(value)).replace("{b}", draw(value))
        if draw(st.booleans()):
            text += draw(hostile_text) + "\n"
        answers["/metrics"] = Answer(200, "text/plain", text.encode("utf-8", "surrogatepass"))
    status = draw(st.sampled_from([200] * 8 + [400, 422, 500, 503]))
    ctype = draw(st.sampled_from(["text/event-stream"] * 5 + ["application/json", "text/html"]))
    events = draw(sse_events())
    stream = Answer(status, ctype, b'{"error": "x"}', events if status == 200 else None)
    if status != 200:
        stream.body = draw(json_body({"error": {"message": "bad request", "type": "x"}}))
    whole = Answer(draw(st.sampled_from([200, 200, 500])), body=draw(json_body(WHOLE)))
    return Script(answers, stream, whole)


#: Control characters that must not reach a terminal from what a server sent.
_RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


#: Two small runs, no pause, deadlines short enough for a test yet far above a local answer.
RECORD_ARGS = ("record", "-m", "m", "-c", "1,2", "--output-tokens", "4", "--pause", "0",
               "--timeout", "10", "--idle-timeout", "5", "--group", "g")  # fmt: skip


def record_against(srv: _ScriptedServer, script: Script) -> None:
    srv.script = script
    url = f"http://127.0.0.1:{srv.server_address[1]}"
    with tempfile.TemporaryDirectory(prefix="fuzz-") as tmp:
        trace = Path(tmp) / "trace.jsonl"
        args = [*RECORD_ARGS, "--out", str(trace), url]
        outcome = invoke(args, env={"OPENAI_API_KEY": ""})
        check(outcome)
        for stream in (outcome.result.stdout, outcome.result.stderr):
            raw = _RAW_CONTROL.search(stream)
            if raw is not None:
                violated(f"a raw control character {raw.group()!r} was printed", outcome)
        if not trace.exists():
            return
        for n, line in enumerate(trace.read_bytes().splitlines(), 1):
            try:
                orjson.loads(line)
            except orjson.JSONDecodeError as err:
                violated(f"trace line {n} does not parse ({err}): {line[:300]!r}", outcome)
        if outcome.code == 0:
            audited = invoke(["audit", str(trace), "--no-html", "--json", "-"])
            if check(audited, json_stdout=True) is None:
                refusal = audited.result.stderr[-1500:]
                violated(f"the recorder wrote a trace that the audit refuses:\n{refusal}", outcome)


@pytest.mark.slow
def test_hostile_server_answers_end_cleanly(server: _ScriptedServer) -> None:
    @given(script=scripts())
    def prop(script: Script) -> None:
        record_against(server, script)

    run_property(prop)


@pytest.mark.slow
def test_hostile_server_sample(server: _ScriptedServer) -> None:
    """The default lane's sample of hostile servers."""

    @settings(max_examples=5)
    @given(script=scripts())
    def prop(script: Script) -> None:
        record_against(server, script)

    run_property(prop)
