"""5,000 runs of one request each: the rules' per-run work is arrays, not frame filtering.

Before, each rule filtered each run's rows as a DataFrame several times and looked its
figures up row by row: about 54 s for this audit on a quiet machine.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from reporter import api
from reporter.types import Outcome

RUNS = 5000


@pytest.mark.slow
def test_five_thousand_one_request_runs_audit_in_seconds(tmp_path: Path) -> None:
    lines = []
    workload = {"concurrency": 1, "output_tokens": 4, "stop": "forced"}
    for i in range(RUNS):
        run = f"run-{i}"
        lines.append({"kind": "run", "schema": "benchreport/1", "id": run, "group": f"g{i // 10}",
                      "workload": workload})  # fmt: skip
        lines.append({"kind": "request", "run": run, "id": 1, "t_send": 0, "t_first": 0.1,
                      "t_end": 1, "output_tokens": 4})  # fmt: skip
    trace = tmp_path / "many.jsonl"
    trace.write_text("".join(json.dumps(x) + "\n" for x in lines))
    start = time.perf_counter()
    verdict = api.audit([trace])
    took = time.perf_counter() - start
    assert len(verdict.runs) == RUNS
    passed = [f for f in verdict.findings if f.code in ("BR007", "BR019")]
    assert len(passed) == 2 * RUNS and all(f.outcome is Outcome.PASSED for f in passed)
    assert took < 45  # about 15 s on a quiet machine; 54 s before
