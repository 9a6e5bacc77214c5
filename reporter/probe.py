"""A read-stream memory-bandwidth probe at several buffer sizes (METHOD.md §6).

Decode reads the model's weights once per token, so the bandwidth that bounds it is the one
the machine delivers when streaming through a buffer as large as the model, not the
data-sheet figure. Bandwidth falls with the working set (TLB and page-table costs): METHOD's
machine read 358–366 GB/s at 1–4 GiB, 316 at 8 GiB and 267 at 16 GiB.

This probe sums a float64 array with numpy, split over threads (numpy releases the GIL in its
reductions), and keeps the best of k passes. It measures what the CPU cores can read; a GPU
or an accelerator with its own memory needs its own probe, whose results can be written as
`probe` records by hand.
"""

from __future__ import annotations

import math
import os
import re
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reporter.errors import UsageError

if TYPE_CHECKING:
    import numpy as np

MIB = 1 << 20
GIB = 1 << 30
MIN_BYTES = 64 * MIB
#: Of the memory available, the share the largest buffer may take.
DEFAULT_FRACTION = 0.5
METHOD = "numpy add.reduce over float64, threads, best of k passes"

_SIZE = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*([KMGT]?)(i?)B?\s*$", re.I)


def parse_size(text: str) -> int:
    """`"256MiB"`, `"4GiB"`, `"1.5GB"`, `"512M"`, `"1048576"` → bytes (M and MiB are binary,
    MB is decimal)."""
    m = _SIZE.match(text)
    if not m:
        raise UsageError(f"size {text!r}: expected a number of bytes or e.g. 256MiB, 4GiB, 1GB")
    number, prefix, binary = float(m.group(1)), m.group(2).upper(), m.group(3)
    power = " KMGT".index(prefix) if prefix else 0
    decimal = bool(prefix) and not binary and text.strip().upper().endswith("B")
    base = 1000 if decimal else 1024
    return int(number * base**power)


def available_bytes(meminfo: Path = Path("/proc/meminfo")) -> int | None:
    """MemAvailable from /proc/meminfo (Linux), or None where there is no such file."""
    try:
        text = meminfo.read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    m = re.search(r"^MemAvailable:\s+(\d+)\s*kB", text, re.M)
    return int(m.group(1)) * 1024 if m else None


def sizes(max_bytes: int, min_bytes: int = MIN_BYTES) -> list[int]:
    """Buffer sizes from `min_bytes`, doubling, up to `max_bytes` (which is included)."""
    if max_bytes < min_bytes:
        raise UsageError(
            f"the largest buffer ({max_bytes:,} bytes) is below the smallest "
            f"({min_bytes:,}); expected --max-bytes of at least {min_bytes // MIB} MiB"
        )
    out = []
    size = min_bytes
    while size <= max_bytes:
        out.append(size)
        size *= 2
    if out[-1] != max_bytes and max_bytes - out[-1] >= out[-1] // 4:
        out.append(max_bytes)
    return out


@dataclass(frozen=True)
class ProbeResult:
    """One buffer size: the best read rate of k passes."""

    buffer_bytes: int
    gbps: float
    best_s: float
    passes: int
    threads: int

    def record(self, run: str | None = None) -> dict[str, Any]:
        """The native `probe` record."""
        out: dict[str, Any] = {
            "kind": "probe", "what": "bandwidth", "value": round(self.gbps, 3), "unit": "GB/s",
            "buffer_bytes": self.buffer_bytes, "method": METHOD, "threads": self.threads,
            "passes": self.passes,
        }  # fmt: skip
        if run is not None:
            out["run"] = run
        return out


def _chunks(arr: np.ndarray, parts: int) -> list[np.ndarray]:
    step = math.ceil(len(arr) / parts)
    return [arr[i : i + step] for i in range(0, len(arr), step)]


def read_rate(
    buffer_bytes: int,
    *,
    passes: int = 5,
    threads: int | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> ProbeResult:
    """Stream through a buffer of `buffer_bytes` `passes` times; the best pass's GB/s."""
    if passes < 1:
        raise UsageError(f"passes {passes}: expected at least 1")
    import numpy as np  # here, not at the top: `benchreport --help` imports this module

    threads = threads or os.cpu_count() or 1
    arr = np.ones(buffer_bytes // 8, dtype=np.float64)  # written once: every page is resident
    parts = _chunks(arr, threads)
    best = math.inf
    with ThreadPoolExecutor(max_workers=threads) as pool:
        list(pool.map(np.add.reduce, parts))  # warm-up pass
        for _ in range(passes):
            start = clock()
            total = sum(pool.map(np.add.reduce, parts))
            elapsed = clock() - start
            if total != len(arr):  # keeps the reduction from being skipped
                raise RuntimeError("read-stream probe: the buffer did not sum to its length")
            best = min(best, elapsed)
    del parts, arr
    nbytes = (buffer_bytes // 8) * 8
    return ProbeResult(nbytes, nbytes / best / 1e9, best, passes, threads)


def run_probe(
    max_bytes: int | None = None,
    *,
    min_bytes: int = MIN_BYTES,
    fraction: float = DEFAULT_FRACTION,
    passes: int = 5,
    threads: int | None = None,
) -> Iterator[ProbeResult]:
    """Probe each buffer size in turn, up to `max_bytes` and `fraction` of free memory."""
    if not 0 < fraction <= 0.9:
        raise UsageError(f"--fraction {fraction}: expected a share of free memory in (0, 0.9]")
    free = available_bytes()
    limit = max_bytes
    if free is not None:
        cap = int(free * fraction)
        limit = cap if limit is None else min(limit, cap)
    if limit is None:
        limit = 4 * GIB
    for size in sizes(limit, min_bytes):
        yield read_rate(size, passes=passes, threads=threads)


def size_text(value: int) -> str:
    """Bytes as MiB or GiB, for tables."""
    if value >= GIB:
        n = value / GIB
        return f"{n:g} GiB" if n == int(n) else f"{n:.2f} GiB"
    n = value / MIB
    return f"{n:g} MiB" if n == int(n) else f"{n:.1f} MiB"


def write_records(
    path: str | Path, results: list[ProbeResult], *, run_id: str | None = None, append: bool = False
) -> None:
    """Write `results` as `probe` records (JSON Lines) that the audit reads, attached to
    `run_id` when given; `append` adds them to an existing file (e.g. the trace itself)."""
    import json

    text = "".join(json.dumps(r.record(run_id), ensure_ascii=False) + "\n" for r in results)
    try:
        target = Path(path)
        if append and target.exists() and target.stat().st_size:
            existing = target.read_bytes()
            if not existing.endswith(b"\n"):
                text = "\n" + text
        with target.open("a" if append else "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as exc:
        raise UsageError(f"{path}: cannot write: {exc.strerror}") from None
