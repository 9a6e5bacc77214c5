"""A lean HTTP/1.1 client for the streamed requests: one asyncio Protocol per connection.

httpx costs 50–150 µs of the event loop per streamed chunk (h11's parser in Python, a task
woken per chunk, anyio underneath); at a few hundred streams that cost is the loop's lag, and
every chunk's timestamp is late by it. Here a chunk is handled inside ``data_received``: the
HTTP framing (chunked, Content-Length or until close) and the SSE lines are cut in place, the
chunk's time is taken once, and only the request's end wakes its coroutine.

The behaviour is the httpx path's (``client.send``): the same RequestState, the same caps on
an error body, a whole body and an SSE line, the same idle timeout ("no bytes within it") and
overall deadline, and the same error words (``ConnectError``, ``ReadTimeout``,
``RemoteProtocolError``). Connections are kept alive and reused when a response ended cleanly.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections import defaultdict
from typing import Any
from urllib.parse import urlsplit

import orjson

from reporter.recorder import client as rc

#: Largest status line + headers accepted.
MAX_HEAD_BYTES = 64 << 10
#: Largest chunk-size line of a chunked body.
MAX_CHUNK_LINE = 1024


class _ProtocolError(Exception):
    pass


class _Conn(asyncio.Protocol):
    """One connection: parses one response at a time into a RequestState."""

    def __init__(self, pool: LeanClient, key: tuple[str, int, bool]) -> None:
        self.pool = pool
        self.key = key
        self.transport: asyncio.Transport | None = None
        self.closed = False
        #: The stream's end came before its body's: read to the body's end, then reuse it.
        self.draining = False
        self._reset()

    def _reset(self) -> None:
        self.state: rc.RequestState | None = None
        self.done: asyncio.Future[None] | None = None
        self.t0 = 0.0
        self.head = bytearray()
        self.status = 0
        self.framing = ""  # "chunked", "length" or "close"
        self.remaining = 0  # bytes left of a Content-Length body, or of the current chunk
        self.chunk_line = bytearray()
        self.chunk_state = "size"  # size, data, data_crlf, trailer
        self.mode = ""  # "sse", "error", "whole"
        self.body = bytearray()
        self.cut = False
        self.reader: rc.SSEReader | None = None
        self.body_done = False
        self.last_rx = 0.0
        #: "Connection: close" or HTTP/1.0: the server ends the connection after this answer.
        self.server_closes = False

    # ---- asyncio callbacks -----------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.pool.forget(self)
        self.pool.conns.discard(self)
        if self.state is None or self.done is None or self.done.done():
            return
        now = time.perf_counter() - self.t0
        if self.status and self.framing == "close" and exc is None:
            self._body_end(now)
            return
        if self.mode == "sse" and self.reader is not None:
            self.reader.close(now)  # names a stream cut mid-way, as the httpx path does
            self._finish()
            return
        self._fail(
            "RemoteProtocolError: the server closed the connection without sending a "
            "complete response"
            if exc is None
            else f"ReadError: {str(exc)[: rc.MAX_ERROR_CHARS]}"
        )

    def data_received(self, data: bytes) -> None:
        if self.state is None or self.done is None or self.body_done:
            if self.transport is not None:  # bytes nobody asked for: the connection is unsafe
                self.transport.close()
            return
        now = time.perf_counter() - self.t0
        self.last_rx = now
        try:
            if not self.status:
                data = self._read_head(data)
                if not self.status:
                    return
            self._read_body(data, now)
        except _ProtocolError as exc:
            self._fail(f"RemoteProtocolError: {exc}")
        self._drained()

    def _drained(self) -> None:
        """A connection read to its body's end after its stream ended goes back to the pool."""
        if self.draining and self.body_done:
            self.draining = False
            self.state = self.done = None
            if self.server_closes and self.transport is not None:
                self.transport.close()
            else:
                self.pool.idle[self.key].append(self)

    # ---- the response ----------------------------------------------------------------------

    def _read_head(self, data: bytes) -> bytes:
        self.head += data
        end = self.head.find(b"\r\n\r\n")
        if end < 0:
            if len(self.head) > MAX_HEAD_BYTES:
                raise _ProtocolError(f"a response head of more than {MAX_HEAD_BYTES:,} bytes")
            return b""
        lines = bytes(self.head[:end]).decode("latin-1").split("\r\n")
        rest = bytes(self.head[end + 4 :])
        parts = lines[0].split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
            raise _ProtocolError(f"not an HTTP/1.1 status line: {lines[0][:80]!r}")
        status = int(parts[1])
        if 100 <= status < 200:  # an interim answer (100 Continue): the real one follows
            self.head = bytearray()
            return self._read_head(rest) if rest else b""
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if sep:
                headers[name.strip().lower()] = value.strip()
        self.status = status
        connection = headers.get("connection", "").lower()
        self.server_closes = "close" in connection or (
            parts[0] == "HTTP/1.0" and "keep-alive" not in connection
        )
        assert self.state is not None
        self.state.http_status = status
        if "chunked" in headers.get("transfer-encoding", "").lower():
            self.framing = "chunked"
        elif "content-length" in headers:
            try:
                self.remaining = int(headers["content-length"])
            except ValueError:
                raise _ProtocolError("a Content-Length that is not a number") from None
            self.framing = "length"
        else:
            self.framing = "close"
        if status >= 400:
            self.mode = "error"
        elif "text/event-stream" in headers.get("content-type", ""):
            self.mode = "sse"
            self.reader = rc.SSEReader(self.state)
        else:
            self.mode = "whole"
        if self.framing == "length" and self.remaining == 0:
            self._body_end(time.perf_counter() - self.t0)
        return rest

    def _read_body(self, data: bytes, now: float) -> None:
        if self.framing == "length":
            piece = data[: self.remaining]
            self.remaining -= len(piece)
            self._piece(piece, now)
            if self.remaining == 0:
                self.body_done = True
                if not self._finished():
                    self._body_end(now)
        elif self.framing == "close":
            self._piece(data, now)
        else:
            self._dechunk(data, now)

    def _dechunk(self, data: bytes, now: float) -> None:
        """Transfer-Encoding: chunked, fed in pieces of any size. The data of every chunk in
        one read goes to the SSE reader at once (they arrived at the same time)."""
        pos, size_of = 0, len(data)
        pieces: list[bytes] = []
        while pos < size_of and not self.body_done:  # past the SSE end: the terminator frees it
            if self.chunk_state == "data":
                take = min(self.remaining, size_of - pos)
                pieces.append(data[pos : pos + take])
                pos += take
                self.remaining -= take
                if self.remaining == 0:
                    self.chunk_state = "data_crlf"
                continue
            cut = data.find(b"\n", pos)
            if cut < 0:
                self.chunk_line += data[pos:]
                if len(self.chunk_line) > MAX_CHUNK_LINE:
                    raise _ProtocolError("a chunk-size line of more than 1 KiB")
                break
            if self.chunk_line:
                self.chunk_line += data[pos:cut]
                line = bytes(self.chunk_line).strip()
                self.chunk_line.clear()
            else:
                line = data[pos:cut].strip()
            pos = cut + 1
            if self.chunk_state == "data_crlf":
                if line:
                    raise _ProtocolError("a chunk longer than its stated size")
                self.chunk_state = "size"
            elif self.chunk_state == "size":
                try:
                    size = int(line.split(b";", 1)[0], 16)
                except ValueError:
                    raise _ProtocolError(f"a bad chunk size {line[:40]!r}") from None
                if size:
                    self.remaining, self.chunk_state = size, "data"
                else:
                    self.chunk_state = "trailer"
            elif not line:  # the empty line after the trailers: the body is whole
                self._piece(b"".join(pieces), now)
                pieces = []
                self.body_done = True
                self._body_end(now)
        if pieces:
            self._piece(pieces[0] if len(pieces) == 1 else b"".join(pieces), now)

    def _piece(self, piece: bytes, now: float) -> None:
        if not piece or self._finished():
            return
        if self.mode == "sse":
            assert self.reader is not None
            if self.reader.feed(piece, now):
                self._finish()
            return
        limit = rc.MAX_ERROR_BODY_BYTES if self.mode == "error" else rc.MAX_BODY_BYTES
        self.body += piece
        if len(self.body) > limit:
            self.cut = True
            del self.body[limit:]
            self._body_end(now)

    def _finished(self) -> bool:
        return self.done is None or self.done.done()

    def _body_end(self, now: float) -> None:
        state = self.state
        assert state is not None
        if self.framing == "close" or self.cut:
            self.body_done = False
        if self.mode == "error":
            text = bytes(self.body).decode("utf-8", "replace")
            state.refused = rc.refused_params(self.status, text, self.pool.sent_body(self))
            state.error = f"HTTP {self.status}: {text[: rc.MAX_ERROR_CHARS]}"
        elif self.mode == "whole":
            if self.cut:
                state.t_end = now
                state.error = f"an answer of more than {rc.MAX_BODY_BYTES:,} bytes"
            else:
                rc._whole_response(state, bytes(self.body), now)
        else:
            assert self.reader is not None
            if not self.reader.ended:
                self.reader.close(now)
        self._finish()

    def _finish(self) -> None:
        if self.done is not None and not self.done.done():
            self.done.set_result(None)

    def _fail(self, message: str) -> None:
        if self.state is not None and self.state.error is None:
            self.state.error = message
        if self.transport is not None:
            self.transport.close()
        self._finish()


class LeanClient:
    """Keep-alive connections per host, opened on demand, for streamed POSTs."""

    def __init__(self, *, connect_timeout_s: float, idle_timeout_s: float,
                 headers: dict[str, str] | None = None) -> None:  # fmt: skip
        self.connect_timeout_s = connect_timeout_s
        self.idle_timeout_s = idle_timeout_s
        self.headers = headers or {}
        self.idle: dict[tuple[str, int, bool], list[_Conn]] = defaultdict(list)
        self.bodies: dict[int, dict[str, Any]] = {}
        self._ssl: ssl.SSLContext | None = None
        self.conns: set[_Conn] = set()

    def forget(self, conn: _Conn) -> None:
        pool = self.idle.get(conn.key)
        if pool and conn in pool:
            pool.remove(conn)

    def sent_body(self, conn: _Conn) -> dict[str, Any]:
        return self.bodies.get(id(conn), {})

    async def _connect(self, key: tuple[str, int, bool]) -> tuple[_Conn, bool]:
        """A kept-alive connection (True) or a new one (False)."""
        pool = self.idle[key]
        while pool:
            conn = pool.pop()
            if not conn.closed and conn.transport is not None and not conn.transport.is_closing():
                return conn, True
        loop = asyncio.get_running_loop()
        host, port, tls = key
        if tls and self._ssl is None:
            self._ssl = ssl.create_default_context()
        _, conn = await asyncio.wait_for(
            loop.create_connection(
                lambda: _Conn(self, key), host, port, ssl=self._ssl if tls else None
            ),
            self.connect_timeout_s,
        )
        self.conns.add(conn)
        return conn, False

    async def send(
        self,
        url: str,
        body: dict[str, Any],
        headers: dict[str, str],
        state: rc.RequestState,
        t0: float,
        *,
        timeout_s: float,
    ) -> None:
        """Stream one request into ``state``; never raises for a failed request.

        A kept-alive connection the server closed before answering a byte (its keep-alive
        limit or timeout: llama-server's closes after 5 requests) is the usual race of
        HTTP/1.1 keep-alive, not a failed request: the request goes again on a new one.
        """
        clock = time.perf_counter
        split = urlsplit(url)
        tls = split.scheme == "https"
        key = (split.hostname or "127.0.0.1", split.port or (443 if tls else 80), tls)
        payload = orjson.dumps(body)
        target = (split.path or "/") + (f"?{split.query}" if split.query else "")
        head = [f"POST {target} HTTP/1.1", f"Host: {split.netloc}",
                "Content-Type: application/json", "Accept: */*",
                f"Content-Length: {len(payload)}"]  # fmt: skip
        head += [f"{k}: {v}" for k, v in (self.headers | headers).items()]
        request = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + payload
        state.t_send = clock() - t0
        try:
            async with asyncio.timeout(timeout_s):
                for _ in range(2):
                    try:
                        conn, reused = await self._connect(key)
                    except TimeoutError:
                        state.error = "ConnectTimeout: no connection within the connect timeout"
                        return
                    except OSError as exc:
                        state.error = f"ConnectError: {str(exc)[: rc.MAX_ERROR_CHARS]}"
                        return
                    await self._exchange(conn, key, request, body, state, t0)
                    stale = reused and not conn.status and state.error is not None
                    if not (stale and state.error and state.error.startswith("RemoteProtocol")):
                        return
                    state.error = None
                    state.t_end = None
        except TimeoutError:
            state.aborted = f"timeout: no end after {timeout_s:g} s"
        finally:
            if state.t_end is None:
                state.t_end = clock() - t0

    async def _exchange(
        self,
        conn: _Conn,
        key: tuple[str, int, bool],
        request: bytes,
        body: dict[str, Any],
        state: rc.RequestState,
        t0: float,
    ) -> None:
        """One request on one connection, until its response ends (or the connection does)."""
        clock = time.perf_counter
        loop = asyncio.get_running_loop()
        watchdog: asyncio.TimerHandle | None = None

        def check_idle() -> None:
            nonlocal watchdog
            quiet = clock() - t0 - conn.last_rx
            if quiet >= self.idle_timeout_s:
                if conn.done is not None and not conn.done.done():
                    state.aborted = "timeout: ReadTimeout (no bytes within the idle timeout)"
                    conn._finish()
                return
            watchdog = loop.call_later(self.idle_timeout_s - quiet, check_idle)

        try:
            conn._reset()
            conn.state, conn.t0 = state, t0
            conn.done = loop.create_future()
            conn.last_rx = clock() - t0
            self.bodies[id(conn)] = body
            assert conn.transport is not None
            conn.transport.write(request)
            watchdog = loop.call_later(self.idle_timeout_s, check_idle)
            await conn.done
        finally:
            if watchdog is not None:
                watchdog.cancel()
            self.bodies.pop(id(conn), None)
            healthy = (
                not conn.closed and state.aborted is None and state.error is None
                and not conn.server_closes
            )  # fmt: skip
            ended = conn.reader is not None and conn.reader.ended
            if healthy and conn.body_done:
                conn.state = conn.done = None
                self.idle[key].append(conn)
            elif healthy and ended and conn.framing in ("chunked", "length"):
                conn.draining = True  # the body's last bytes are still to come
            else:
                conn.state = conn.done = None
                if conn.transport is not None:
                    conn.transport.close()

    async def aclose(self) -> None:
        for conn in list(self.conns):
            if conn.transport is not None:
                conn.transport.close()
        self.conns.clear()
        self.idle.clear()
