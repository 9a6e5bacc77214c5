"""Streams spread over several processes, each with its own event loop, on one clock.

A continuous-batching server sends one chunk for every running stream at each decode step,
so at N streams up to N chunks arrive together, and one loop handles them one after another:
the last is stamped late by the work on all the others. With W worker processes each loop
takes about N / W of them. The recorder's own loop then only hands requests out and takes
finished ones back (two messages a request, none a chunk).

One clock: a request's times are ``time.perf_counter() - t0`` with ``t0`` read in the
recorder's process. On Linux (and macOS) ``perf_counter`` is the system-wide monotonic clock
(CLOCK_MONOTONIC), not a per-process one, so a worker's reading and the recorder's are on the
same time line; `one_clock` says whether this platform's is, and the pool is refused where
it is not.

The protocol on a worker's stdin/stdout is length-prefixed pickles between this process and
the child it started (never anything read from the network):

- to the worker: ``("init", connect_s, idle_s, headers)``, ``("send", rid, url, body,
  headers, state, t0, timeout_s)``, ``("cancel", rid)``, ``("health", "start" | "stop")``,
  ``("clock",)``;
- from it: ``("done", rid, state)``, ``("health", lags, cpu_s)``, ``("clock", t)``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pickle
import signal
import struct
import sys
import time
from pathlib import Path
from typing import Any

from reporter.recorder import client as rc
from reporter.recorder.health import HealthMonitor
from reporter.recorder.stream import LeanClient

_LEN = struct.Struct("<I")
#: How long a cancelled request's worker has to send back what it had received.
CANCEL_WAIT_S = 5.0


def one_clock() -> bool:
    """Is ``time.perf_counter`` the system-wide monotonic clock (the same in every process)?"""
    impl = time.get_clock_info("perf_counter").implementation
    return "CLOCK_MONOTONIC" in impl or "mach_absolute_time" in impl


def _frame(msg: tuple[Any, ...]) -> bytes:
    data = pickle.dumps(msg, protocol=pickle.HIGHEST_PROTOCOL)
    return _LEN.pack(len(data)) + data


async def _read(reader: asyncio.StreamReader) -> tuple[Any, ...] | None:
    try:
        head = await reader.readexactly(_LEN.size)
        data = await reader.readexactly(_LEN.unpack(head)[0])
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    msg = pickle.loads(data)  # written by the child this process started, never the network
    assert isinstance(msg, tuple)
    return msg


class _Worker:
    """The recorder's end of one worker process."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.pending: dict[int, tuple[asyncio.Future[rc.RequestState], rc.RequestState]] = {}
        self.replies: asyncio.Queue[tuple[Any, ...]] = asyncio.Queue()
        self.reader_task: asyncio.Task[None] | None = None

    def write(self, msg: tuple[Any, ...]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(_frame(msg))

    async def read_loop(self) -> None:
        assert self.proc.stdout is not None
        while True:
            msg = await _read(self.proc.stdout)
            if msg is None:
                break
            if msg[0] == "done":
                entry = self.pending.pop(msg[1], None)
                if entry is not None and not entry[0].done():
                    entry[0].set_result(msg[2])
            else:
                self.replies.put_nowait(msg)
        code = await self.proc.wait()
        for fut, state in self.pending.values():
            if not fut.done():
                state.error = f"the streaming worker process exited (code {code}) mid-request"
                fut.set_result(state)
        self.pending.clear()
        self.replies.put_nowait(("exited", code))


class WorkerPool:
    """W worker processes; each request goes to the one with the fewest in flight."""

    def __init__(self, workers: int, *, connect_timeout_s: float, idle_timeout_s: float,
                 headers: dict[str, str] | None = None) -> None:  # fmt: skip
        self.n = workers
        self.init = ("init", connect_timeout_s, idle_timeout_s, dict(headers or {}))
        self.workers: list[_Worker] = []
        self._rid = 0

    async def start(self) -> None:
        if not one_clock():
            raise RuntimeError(
                "this platform's perf_counter is not one clock for every process "
                f"({time.get_clock_info('perf_counter').implementation}); use one process"
            )
        root = str(Path(__file__).resolve().parents[2])  # the tree this package came from
        env = os.environ | {"PYTHONPATH": os.pathsep.join(
            p for p in (root, os.environ.get("PYTHONPATH")) if p)}  # fmt: skip
        procs = await asyncio.gather(*(
            asyncio.create_subprocess_exec(
                sys.executable, "-c", "from reporter.recorder.workers import main; main()",
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, env=env)
            for _ in range(self.n)
        ))  # fmt: skip
        for proc in procs:
            worker = _Worker(proc)
            worker.reader_task = asyncio.get_running_loop().create_task(worker.read_loop())
            worker.write(self.init)
            self.workers.append(worker)
        await self._ask(("clock",))  # every worker is up and answering

    async def _ask(self, msg: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        for worker in self.workers:
            worker.write(msg)
        return [await w.replies.get() for w in self.workers]

    async def clocks(self) -> list[float]:
        """Each worker's ``perf_counter`` (the check that they share the recorder's clock)."""
        return [
            float(r[1]) if r[0] == "clock" else float("nan") for r in await self._ask(("clock",))
        ]

    async def health(self, what: str) -> list[tuple[list[float], float]]:
        """``start`` every worker's loop-lag monitor, or ``stop`` them: (lags, CPU s) each."""
        return [(r[1], r[2]) if r[0] == "health" else ([], 0.0)
                for r in await self._ask(("health", what))]  # fmt: skip

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
        """As ``LeanClient.send``, in a worker; ``state`` holds what it sends back.

        Cancelled, it asks the worker to stop the request and copies what had arrived.
        """
        worker = min(self.workers, key=lambda w: len(w.pending))
        self._rid += 1
        rid = self._rid
        fut: asyncio.Future[rc.RequestState] = asyncio.get_running_loop().create_future()
        worker.pending[rid] = (fut, state)
        worker.write(("send", rid, url, body, headers, state, t0, timeout_s))
        try:
            done = await asyncio.shield(fut)
        except asyncio.CancelledError:
            worker.write(("cancel", rid))
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(CANCEL_WAIT_S):
                    state.__dict__.update((await fut).__dict__)
            raise
        state.__dict__.update(done.__dict__)

    async def aclose(self) -> None:
        for worker in self.workers:
            if worker.proc.stdin is not None:
                worker.proc.stdin.close()
        for worker in self.workers:
            try:
                async with asyncio.timeout(10):
                    await worker.proc.wait()
            except TimeoutError:
                worker.proc.kill()
                await worker.proc.wait()
            if worker.reader_task is not None:
                await worker.reader_task
        self.workers.clear()


# ---- the worker process ------------------------------------------------------------------


async def _serve() -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, sys.stdout
    )
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    client: LeanClient | None = None
    tasks: dict[int, asyncio.Task[None]] = {}
    monitor: HealthMonitor | None = None
    cpu0 = 0.0

    async def one(rid: int, url: str, body: dict[str, Any], headers: dict[str, str],
                  state: rc.RequestState, t0: float, timeout_s: float) -> None:  # fmt: skip
        assert client is not None
        try:
            await client.send(url, body, headers, state, t0, timeout_s=timeout_s)
        finally:
            tasks.pop(rid, None)
            writer.write(_frame(("done", rid, state)))

    try:
        while (msg := await _read(reader)) is not None:
            kind = msg[0]
            if kind == "send":
                rid = msg[1]
                tasks[rid] = loop.create_task(one(*msg[1:]))
            elif kind == "cancel":
                task = tasks.get(msg[1])
                if task is not None:
                    task.cancel()
            elif kind == "init":
                client = LeanClient(connect_timeout_s=msg[1], idle_timeout_s=msg[2],
                                    headers=msg[3])  # fmt: skip
            elif kind == "clock":
                writer.write(_frame(("clock", time.perf_counter())))
            elif kind == "health" and msg[1] == "start":
                monitor = HealthMonitor()
                monitor.start()
                cpu0 = time.process_time()
                writer.write(_frame(("health", [], 0.0)))
            elif kind == "health":
                lags: list[float] = []
                if monitor is not None:
                    await monitor.stop()
                    lags, monitor = monitor.lags, None
                writer.write(_frame(("health", lags, time.process_time() - cpu0)))
    finally:
        for task in list(tasks.values()):
            task.cancel()
        with contextlib.suppress(BaseException):
            await asyncio.gather(*tasks.values(), return_exceptions=True)
        if client is not None:
            await client.aclose()
        with contextlib.suppress(ConnectionError):
            await writer.drain()


def main() -> None:
    # Ctrl-C at a terminal reaches the whole process group: the recorder decides what stops
    # (it cancels requests one by one, then closes this process's stdin)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    asyncio.run(_serve())


if __name__ == "__main__":
    main()
