"""BR007 forced-length-not-honoured: runs whose output lengths come from a summary."""

from __future__ import annotations

import json
from pathlib import Path

from reporter import api


def _br007(path: Path, lines: list[dict[str, object]]) -> tuple[str, str]:
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    (finding,) = api.audit([str(path)], select=["BR007"]).findings
    return str(finding.outcome), finding.message


def test_without_output_token_counts_it_stays_undecided(tmp_path: Path) -> None:
    # forced length asked for, but neither the requests nor a summary count the output
    run = {
        "kind": "run",
        "schema": "benchreport/1",
        "id": "r",
        "workload": {"concurrency": 2, "output_tokens": 64, "stop": "forced"},
    }
    requests = [
        {"kind": "request", "run": "r", "id": k, "t_send": 0, "t_first": 0.1, "t_end": 1.0}
        for k in range(2)
    ]  # fmt: skip
    assert _br007(tmp_path / "t.jsonl", [run, *requests]) == (
        "undecidable",
        "no output token counts to compare",
    )


def _aiperf_summary(shortest: float) -> dict[str, object]:
    """An AIPerf summary (no per-request records) of 100 requests sent with ignore_eos and
    min_tokens 50, whose output lengths run from `shortest` to 50 tokens."""

    def metric(tag: str, unit: str, **stats: float) -> dict[str, object]:
        return {"tag": tag, "header": tag.replace("_", " ").title(), "unit": unit, **stats}

    return {
        "records": {
            "request_latency": metric("request_latency", "ms", avg=400.0, count=100, sum=40000.0),
            "benchmark_duration": metric("benchmark_duration", "sec", avg=10.0),
            "request_count": metric("request_count", "requests", avg=100),
            "output_sequence_length": metric("output_sequence_length", "tokens", avg=50.0,
                                             min=shortest, max=50.0, sum=5000.0),
            "output_token_throughput": metric("output_token_throughput", "tokens/sec", avg=500.0),
        },
        "input_config": {"loadgen": {"concurrency": 4},
                         "endpoint": {"extra": [["ignore_eos", True], ["min_tokens", 50]]}},
        "was_cancelled": False,
        "error_summary": [],
    }  # fmt: skip


def test_a_summary_of_the_forced_length_passes(tmp_path: Path) -> None:
    assert _br007(tmp_path / "profile_export_aiperf.json", [_aiperf_summary(50.0)]) == (
        "passed",
        "all 100 requests wrote the requested 50 tokens (the run's summary: 50 tokens each)",
    )


def test_a_summary_shorter_than_the_forced_length_fires(tmp_path: Path) -> None:
    assert _br007(tmp_path / "profile_export_aiperf.json", [_aiperf_summary(12.0)]) == (
        "fired",
        "forced length 50 asked for, but the shortest of 100 requests wrote 12 tokens (the "
        "run's summary): the flag was accepted, not honoured",
    )
