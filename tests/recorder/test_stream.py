"""The lean streaming client's HTTP framing, fed byte by byte: chunked, Content-Length and
until-close bodies give the same request record whatever the pieces' sizes."""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

import pytest

from reporter.recorder import client as rc
from reporter.recorder.stream import LeanClient, _Conn
from tests.recorder.test_record_hostile import good_stream, hostile_server

SSE = good_stream({"completion_tokens": 4, "prompt_tokens": 3})


def chunked(body: bytes, size: int) -> bytes:
    parts = [body[i : i + size] for i in range(0, len(body), size)]
    return b"".join(b"%x\r\n%b\r\n" % (len(p), p) for p in parts) + b"0\r\n\r\n"


def head(framing: bytes, status: int = 200, kind: bytes = b"text/event-stream") -> bytes:
    return b"HTTP/1.1 %d OK\r\nContent-Type: %b\r\n%b\r\n" % (status, kind, framing)


class FakeTransport(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.closed = False

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True


def feed(raw: bytes, piece: int, lost: bool = False) -> tuple[rc.RequestState, _Conn]:
    async def go() -> tuple[rc.RequestState, _Conn]:
        pool = LeanClient(connect_timeout_s=1, idle_timeout_s=1)
        conn = _Conn(pool, ("h", 1, False))
        conn.connection_made(FakeTransport())
        state = rc.RequestState(0, "sha")
        conn.state, conn.t0 = state, time.perf_counter()
        conn.done = asyncio.get_running_loop().create_future()
        for i in range(0, len(raw), piece):
            conn.data_received(raw[i : i + piece])
        if lost:
            conn.connection_lost(None)
        assert conn.done.done()
        return state, conn

    return asyncio.run(go())


@pytest.mark.parametrize("piece", [1, 2, 5, 64, 100_000])
@pytest.mark.parametrize("framing", ["chunked", "length", "close"])
def test_framings_in_any_pieces(piece: int, framing: str) -> None:
    if framing == "chunked":
        raw = head(b"Transfer-Encoding: chunked\r\n") + chunked(SSE, 7)
    elif framing == "length":
        raw = head(b"Content-Length: %d\r\n" % len(SSE)) + SSE
    else:
        raw = head(b"") + SSE
    state, conn = feed(raw, piece, lost=framing == "close")
    record = state.to_record("r")
    assert (record["output_tokens"], record["n_chunks"], record["finish_reason"]) == (
        4, 4, "length")  # fmt: skip
    assert record["prompt_tokens"] == 3 and record["error"] is None and state.saw_done
    # a chunked or sized body read to its end leaves the connection reusable
    assert conn.body_done is (framing != "close")


def test_a_cut_chunked_stream_is_an_error_not_a_short_answer() -> None:
    raw = head(b"Transfer-Encoding: chunked\r\n") + chunked(SSE, 7)
    state, _ = feed(raw[: len(raw) // 2], 3, lost=True)
    chunks = f"{state.n_chunks} chunk{'' if state.n_chunks == 1 else 's'}"
    assert state.finish() == ("error", "the connection closed mid-stream after "
                              f"{chunks}, with no finish reason")  # fmt: skip


def test_an_error_answer_names_the_refused_field() -> None:
    body = b'{"error": "Unrecognized request argument supplied: ignore_eos"}'
    raw = head(b"Content-Length: %d\r\n" % len(body), 400, b"application/json") + body
    state, _ = feed(raw, 4)
    assert state.http_status == 400 and state.error == f"HTTP 400: {body.decode()}"


def test_a_bad_chunk_size_is_a_protocol_error() -> None:
    raw = head(b"Transfer-Encoding: chunked\r\n") + b"zz\r\n"
    state, conn = feed(raw, 1)
    assert state.error == "RemoteProtocolError: a bad chunk size b'zz'"
    assert conn.transport is not None and conn.transport.is_closing()


def _send(url: str, **kw: Any) -> rc.RequestState:
    async def go() -> rc.RequestState:
        pool = LeanClient(connect_timeout_s=2, idle_timeout_s=kw.pop("idle", 5))
        state = rc.RequestState(0, "sha")
        await pool.send(url + "/v1/completions", {"stream": True}, {}, state,
                        time.perf_counter(), timeout_s=kw.pop("timeout", 5))  # fmt: skip
        await pool.aclose()
        return state

    return asyncio.run(go())


@pytest.mark.slow
def test_refused_connection_and_idle_timeout() -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert (_send(f"http://127.0.0.1:{port}").error or "").startswith("ConnectError: ")
    from tests.recorder.test_record_hostile import Hostile

    def silent(handler: Any, stop: Any) -> None:
        stop.wait()  # not a byte until the test is over

    with hostile_server(Hostile(stream=silent)) as url:
        start = time.monotonic()
        state = _send(url, idle=0.3, timeout=30)
        took = time.monotonic() - start
    # the idle timeout ended it: the server never answers nor closes, and the request's own
    # deadline (30 s) would say "no end after 30 s"; a clock bound would fail under load
    assert state.aborted == "timeout: ReadTimeout (no bytes within the idle timeout)"
    assert took >= 0.3


@pytest.mark.slow
def test_a_kept_alive_connection_the_server_closed_is_retried_on_a_new_one() -> None:
    """One answer per connection, and the next request on it closed unanswered (no
    "Connection: close" said): that request goes again on a new connection."""
    answer = head(b"Transfer-Encoding: chunked\r\n") + chunked(SSE, 50)

    async def go() -> tuple[list[rc.RequestState], int]:
        connections = 0

        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            nonlocal connections
            connections += 1
            await reader.readuntil(b"\r\n\r\n")
            writer.write(answer)
            await writer.drain()
            with contextlib.suppress(asyncio.IncompleteReadError):
                await reader.readuntil(b"\r\n\r\n")  # the next request: closed unanswered
            writer.close()

        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1/completions"
        pool = LeanClient(connect_timeout_s=2, idle_timeout_s=5)
        states = []
        for _ in range(2):
            state = rc.RequestState(0, "sha")
            await pool.send(url, {}, {}, state, time.perf_counter(), timeout_s=5)
            states.append(state)
            await asyncio.sleep(0.2)
        await pool.aclose()
        await asyncio.sleep(0.1)  # the handlers see the close and end
        server.close()
        await server.wait_closed()
        return states, connections

    states, connections = asyncio.run(go())
    assert [s.finish() for s in states] == [("length", None), ("length", None)]
    assert connections == 2  # the kept-alive one, and the retry's


@pytest.mark.parametrize(
    "events",
    [
        [b'data: {"choices":[{"text":"a"}]}\n\n', b': ping\r\n\r\n',
         b'data:{"choices":[{"text":"b","finish_reason":null}]}\r\n\r\n',
         b'event: x\ndata: {"choices":[{"text":"c","finish_reason":"length"}],'
         b'"usage":{"completion_tokens":3,"prompt_tokens":2}}\n\ndata: [DONE]\n\ndata: late\n\n'],
        [b'data: {"choices":[{"text":"a"}]}\n\n', b'data: not json\n\n',
         b'data: {"error":{"message":"boom"}}\n\ndata: {"choices":[{"text":"z"}]}\n\n'],
    ],
)  # fmt: skip
def test_whole_line_pieces_read_as_byte_by_byte_ones(events: list[bytes]) -> None:
    # pieces of whole lines take a shorter path through the SSE reader: the same record
    def read(pieces: list[bytes]) -> dict[str, Any]:
        state = rc.RequestState(0, "sha")
        reader = rc.SSEReader(state)
        for t, piece in enumerate(pieces):
            if reader.feed(piece, float(t)):
                break
        else:
            reader.close(float(len(pieces)))
        return state.to_record("r") | {"bad": state.bad_events, "ended": reader.ended}

    whole = read(events)
    body = b"".join(events)
    bytewise = read([body[i : i + 1] for i in range(len(body))])
    times = ("t_first", "t_end", "token_times")  # piece numbers differ between the two
    assert {k: v for k, v in whole.items() if k not in times} == {
        k: v for k, v in bytewise.items() if k not in times
    }
    assert whole["n_chunks"] >= 1 and whole["ended"]
