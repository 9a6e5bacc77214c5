"""The synthetic sweep the speed benchmarks audit: its runs, one record each.

benchmarks/audit_speed.py writes it as JSON Lines and benchmarks/stream_audit.py as Parquet;
both take the run records (and the sweep's levels) from here so that they audit the same
trace.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: The sweep: N = 1 … 128, each point twice.
LEVELS = [1, 2, 4, 8, 16, 32, 64, 128]
RUNS = [(n, rep) for n in LEVELS for rep in (0, 1)]


def run_record(n: int, rep: int) -> dict[str, Any]:
    """The native run record of point N, repeat `rep` (id `n{N}-r{rep}`)."""
    return {
        "kind": "run",
        "schema": "benchreport/1",
        "id": f"n{n}-r{rep}",
        "group": "sweep",
        "repeat": rep,
        "engine": {"name": "synthetic", "version": "1"},
        "workload": {
            "concurrency": n,
            "output_tokens": 128,
            "stop": "forced",
            "ignore_eos": True,
            "prompt_tokens": 32,
            "content": "prose",
            "speculative": {"enabled": False},
        },
    }


def point_times(
    rng: np.random.Generator, n: int, requests: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Send, first-token and end times of one point's requests: N streams, each request sent
    when its stream's previous one ended; the aggregate rises with N (batching)."""
    per_stream = 100.0 / (1 + 0.02 * (n - 1))
    stream = np.arange(requests) % n
    ttft = 0.02 + rng.random(requests) * 0.01
    decode = 128 / per_stream * (1 + rng.random(requests) * 0.02)
    duration = ttft + decode
    ends = np.zeros(requests)
    for s in range(n):
        mask = stream == s
        ends[mask] = np.cumsum(duration[mask])
    sends = ends - duration
    return sends, sends + ttft, ends
