"""The client's own health: event-loop lag and CPU, so a slow server and a saturated client
can be told apart (rule BR018).

Lag is how long a callback that has just become ready waits before the loop runs it: every
``interval`` a timer queues a callback with ``call_soon`` and the callback notes how late it
ran. A loop busy parsing chunks runs it late; every chunk that arrives in that time is
timestamped late by as much. A loop blocked in one long callback also fires the timer late:
that lateness counts too, less the millisecond by which the selector's timeout may round it
up (which is also why timer lateness alone is no measure below a millisecond). CPU is the
process's user + system time over the wall clock of the run (100 = one core busy).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

#: How often the lag probe wakes: short enough to catch 1 ms stalls, cheap enough to ignore.
LAG_INTERVAL_S = 0.005
#: How late a timer may fire on an idle loop: the selector's timeout is whole milliseconds.
TIMER_SLACK_S = 0.001


@dataclass
class ClientHealth:
    """What the monitor saw during one run (milliseconds and percent)."""

    loop_lag_p50_ms: float | None
    loop_lag_p99_ms: float | None
    loop_lag_max_ms: float | None
    cpu_percent: float | None
    lag_samples: int
    wall_s: float
    #: Processes whose loops were watched (the recorder's and its streaming workers').
    processes: int = 1
    cpu_percent_total: float | None = None

    def to_record(self) -> dict[str, float | int | None]:
        def r(v: float | None, d: int = 3) -> float | None:
            return None if v is None else round(v, d)

        several: dict[str, float | int | None] = (
            {"processes": self.processes, "cpu_percent_total": r(self.cpu_percent_total, 1)}
            if self.processes > 1
            else {}
        )
        return several | {
            "loop_lag_p50_ms": r(self.loop_lag_p50_ms),
            "loop_lag_p99_ms": r(self.loop_lag_p99_ms),
            "loop_lag_max_ms": r(self.loop_lag_max_ms),
            "cpu_percent": r(self.cpu_percent, 1),
            "lag_samples": self.lag_samples,
            "lag_interval_ms": LAG_INTERVAL_S * 1000,
        }


class HealthMonitor:
    """Start it when a run starts, stop it when the run ends; ``result()`` then summarises."""

    def __init__(self, interval: float = LAG_INTERVAL_S) -> None:
        self.interval = interval
        self.lags: list[float] = []
        self._handle: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._t0 = 0.0
        self._cpu0 = 0.0
        self._t1 = 0.0
        self._cpu1 = 0.0

    def start(self) -> None:
        self._t0 = time.perf_counter()
        self._cpu0 = time.process_time()
        self._loop = asyncio.get_running_loop()
        when = self._loop.time() + self.interval
        self._handle = self._loop.call_at(when, self._tick, when)

    def _tick(self, when: float) -> None:
        loop = self._loop
        assert loop is not None
        late = loop.time() - when - TIMER_SLACK_S
        loop.call_soon(self._ran, time.perf_counter(), late)
        when = loop.time() + self.interval
        self._handle = loop.call_at(when, self._tick, when)

    def _ran(self, queued: float, late: float) -> None:
        self.lags.append(max(time.perf_counter() - queued, late, 0.0))

    async def stop(self, others: Sequence[tuple[Sequence[float], float]] = ()) -> ClientHealth:
        """Stop watching; ``others`` are the (lags, CPU seconds) of the workers' loops."""
        self._t1 = time.perf_counter()
        self._cpu1 = time.process_time()
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        return self.result(others)

    def result(self, others: Sequence[tuple[Sequence[float], float]] = ()) -> ClientHealth:
        """The run's figures; with workers (``others``), each is the worst loop's, so an idle
        loop's samples never dilute a busy one's."""
        wall = max(self._t1 - self._t0, 0.0)
        cpus = [self._cpu1 - self._cpu0, *(cpu_s for _, cpu_s in others)]
        cpu = 100.0 * max(cpus) / wall if wall > 0 else None
        total = 100.0 * sum(cpus) / wall if wall > 0 else None
        loops = [
            np.asarray(lags) * 1000.0 for lags in (self.lags, *(w for w, _ in others)) if len(lags)
        ]
        n = 1 + len(others)
        if not loops:
            return ClientHealth(None, None, None, cpu, 0, wall, n, total)
        p50 = max(float(np.percentile(ms, 50)) for ms in loops)
        p99 = max(float(np.percentile(ms, 99)) for ms in loops)
        peak = max(float(ms.max()) for ms in loops)
        samples = sum(len(ms) for ms in loops)
        return ClientHealth(p50, p99, peak, cpu, samples, wall, n, total)
