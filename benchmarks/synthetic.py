"""The synthetic sweep the speed benchmarks audit: its runs, one record each.

benchmarks/audit_speed.py writes it as JSON Lines and benchmarks/stream_audit.py as Parquet;
both take the run records (and the sweep's levels) from here so that they audit the same
trace.
"""

from __future__ import annotations

from typing import Any

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
