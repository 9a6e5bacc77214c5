"""When requests are sent: a closed loop (N in flight) or an open loop (Poisson arrivals).

Both stop issuing when ``stop`` is set and return how many they sent; the requests already
in flight are left to finish. Cancelling the schedule cancels them too (the caller records
those as aborted).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

import numpy as np

Fire = Callable[[int], Awaitable[None]]


async def closed_loop(concurrency: int, total: int, fire: Fire, stop: asyncio.Event) -> int:
    """``concurrency`` workers; each sends its next request when its last one ends."""
    sent = 0

    async def worker() -> None:
        nonlocal sent
        while not stop.is_set() and sent < total:
            index = sent
            sent += 1
            await fire(index)

    async with asyncio.TaskGroup() as group:
        for _ in range(min(concurrency, total)):
            group.create_task(worker())
    return sent


def poisson_offsets(rate: float, total: int, seed: int) -> np.ndarray:
    """Arrival times (s from the run start) of a Poisson process; the first at 0."""
    gaps = np.random.default_rng(seed).exponential(1.0 / rate, size=total)
    return np.concatenate(([0.0], np.cumsum(gaps[:-1]))) if total else gaps


async def open_loop(
    rate: float,
    total: int,
    seed: int,
    fire: Fire,
    stop: asyncio.Event,
    max_in_flight: int,
    clock: Callable[[], float],
) -> int:
    """Send at Poisson arrival times whatever is in flight (up to ``max_in_flight``)."""
    offsets = poisson_offsets(rate, total, seed)
    sent = 0
    gate = asyncio.Semaphore(max_in_flight)

    async def one(index: int) -> None:
        try:
            await fire(index)
        finally:
            gate.release()

    start = clock()
    async with asyncio.TaskGroup() as group:
        for index, offset in enumerate(offsets):
            delay = start + float(offset) - clock()
            if delay > 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), delay)
            if stop.is_set():
                break
            await gate.acquire()
            group.create_task(one(index))
            sent += 1
    return sent
