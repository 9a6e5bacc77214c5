"""The per-run chart data: the lone request a completion chart draws, and a run whose
requests did not all end."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from reporter import api
from reporter.series import even_sample, lone_runs, run_series


def _trace(path: Path, runs: list[tuple[str, str, int, list[dict[str, Any]]]]) -> Path:
    """A native trace of runs (id, group, concurrency, requests)."""
    lines: list[dict[str, Any]] = []
    for run, group, concurrency, requests in runs:
        lines.append(
            {
                "kind": "run",
                "schema": "benchreport/1",
                "id": run,
                "group": group,
                "repeat": 0,
                "tool": {"name": "test", "version": "1"},
                "engine": {"name": "engine", "version": "1"},
                "workload": {"concurrency": concurrency, "output_tokens": 8, "stop": "forced"},
            }
        )
        for i, times in enumerate(requests):
            lines.append(
                {
                    "kind": "request",
                    "run": run,
                    "id": f"{run}-{i}",
                    "prompt_tokens": 10,
                    "output_tokens": 8,
                    "finish_reason": "length",
                    **times,
                }
            )
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _one(t: float, e2e: float) -> dict[str, Any]:
    return {"t_send": t, "t_first": t + 0.1, "t_end": t + e2e}


def test_lone_runs_are_each_groups_runs_at_one_in_table_order(tmp_path: Path) -> None:
    trace = _trace(
        tmp_path / "t.jsonl",
        [
            ("b1", "g", 1, [_one(0, 2.0)]),
            ("a4", "g", 4, [_one(0, 3.0), _one(0, 3.0)]),
            ("a1", "g", 1, [_one(0, 1.0), _one(1, 1.0)]),
            ("h1", "h", 1, [_one(0, 5.0)]),
        ],
    )
    data = api.analyse(api.load([trace]))
    assert lone_runs(data) == {"g": [("b1", 2.0), ("a1", 1.0)], "h": [("h1", 5.0)]}
    # a run at 1 draws the group's other run at 1, the first in the table
    alone = lone_runs(data)
    for run, single in (("a4", "b1"), ("b1", "a1"), ("a1", "b1"), ("h1", None)):
        done = run_series(data, run, alone).completions
        assert done is not None and done.single_run == single
        assert run_series(data, run).completions == done  # the same when the series takes it


def test_a_run_whose_requests_did_not_all_end_draws_the_ended_ones(tmp_path: Path) -> None:
    requests = [_one(float(i), 1.0) for i in range(5)]
    del requests[1]["t_end"], requests[3]["t_end"]
    trace = _trace(tmp_path / "t.jsonl", [("r", "g", 2, requests)])
    data = api.analyse(api.load([trace]))
    drawn = run_series(data, "r")
    assert drawn.timeline is not None and drawn.completions is not None
    assert (drawn.timeline.requests, drawn.timeline.drawn) == (3, 3)
    ends = [s["end"] for s in drawn.timeline.segments if s["part"] == "decode"]
    assert ends == [1.0, 3.0, 5.0]
    assert [p["t"] for p in drawn.completions.points] == [1.0, 3.0, 5.0]


def test_an_even_sample_keeps_the_first_and_last_and_never_repeats_a_row() -> None:
    for limit in (1, 2, 3, 200, 600):
        for n in [*range(1, 2 * limit + 3), 62_500, 10**6, 10**9 + 7]:
            pick = even_sample(n, limit)
            assert len(pick) == min(n, limit)
            assert np.all(np.diff(pick) > 0)  # increasing: no row twice
            assert pick[0] == 0
            if limit > 1:
                assert pick[-1] == n - 1
