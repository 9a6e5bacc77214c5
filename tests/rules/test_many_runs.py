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


def write_many_runs(path: Path, runs: int, *, server: bool = False) -> Path:
    """A native trace of `runs` closed-loop runs of one forced 4-token request each.

    With `server`, every run names the same engine and flags (batching, prefix caching) and the
    file holds a server log line, so that the rules about one server's runs (BR013, BR014) look
    at every run with all the others."""
    import json

    lines = []
    workload = {"concurrency": 1, "output_tokens": 4, "stop": "forced"}
    engine = {"name": "vllm", "version": "0.6", "flags": ["--max-num-seqs", "64",
              "--enable-prefix-caching"]}  # fmt: skip
    for i in range(runs):
        run = f"run-{i}"
        record = {"kind": "run", "schema": "benchreport/1", "id": run, "group": f"g{i // 10}",
                  "workload": workload} | ({"engine": engine} if server else {})  # fmt: skip
        lines.append(record)
        lines.append({"kind": "request", "run": run, "id": 1, "t_send": 0, "t_first": 0.1,
                      "t_end": 1, "output_tokens": 4})  # fmt: skip
    if server:
        lines.append({"kind": "log", "text": "INFO: Started server process"})
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


@pytest.mark.slow
def test_thousands_of_runs_of_one_server_are_each_audited_once(tmp_path: Path) -> None:
    """Each run's server is found once for all: per run, it was a walk over every run."""
    verdict = api.audit([write_many_runs(tmp_path / "many.jsonl", RUNS, server=True)])
    for code in ("BR013", "BR014"):
        judged = [f.subject for f in verdict.findings if f.code == code]
        assert sorted(judged) == sorted(r.id for r in verdict.runs), code
    # every run names batching, and the one-request runs at N=1 cannot show it
    batching = [f for f in verdict.findings if f.code == "BR014"]
    assert all(f.outcome is not Outcome.FIRED for f in batching)
