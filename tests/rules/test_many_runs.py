"""Thousands of runs of one request each: every run audited, each rule once per run.

How long it takes is measured in benchmarks/many_runs.py (timings do not belong in tests on a
shared machine); this test keeps the behaviour: no run lost, none judged twice.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from reporter import api
from reporter.types import Outcome

RUNS = 2000


def write_many_runs(path: Path, runs: int) -> Path:
    """A native trace of `runs` closed-loop runs of one forced 4-token request each."""
    import json

    lines = []
    workload = {"concurrency": 1, "output_tokens": 4, "stop": "forced"}
    for i in range(runs):
        run = f"run-{i}"
        lines.append({"kind": "run", "schema": "benchreport/1", "id": run, "group": f"g{i // 10}",
                      "workload": workload})  # fmt: skip
        lines.append({"kind": "request", "run": run, "id": 1, "t_send": 0, "t_first": 0.1,
                      "t_end": 1, "output_tokens": 4})  # fmt: skip
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


@pytest.mark.slow
def test_thousands_of_one_request_runs_are_each_audited_once(tmp_path: Path) -> None:
    verdict = api.audit([write_many_runs(tmp_path / "many.jsonl", RUNS)])
    assert len(verdict.runs) == RUNS
    assert len({r.id for r in verdict.runs}) == RUNS
    passed = [f for f in verdict.findings if f.code in ("BR007", "BR019")]
    assert len(passed) == 2 * RUNS and all(f.outcome is Outcome.PASSED for f in passed)
    assert {f.subject for f in passed} == {r.id for r in verdict.runs}
