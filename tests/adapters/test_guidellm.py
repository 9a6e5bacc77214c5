"""GuideLLM benchmarks.json, 0.2-era and ≥ 0.5: the real files' figures (FORMATS.md §11b), the
measurement window, sampled request lists, and malformed reports."""

from __future__ import annotations

import copy
import json
from typing import Any

import numpy as np
import pytest

from reporter import api
from reporter.errors import TraceError
from tests.adapters.conftest import load, run, stats_of

SANITY = "guidellm/danielkorat-guidellm050dev-qwen3-4b-concurrent4-sanity.json"
V02 = "guidellm/guidellm-v02-test-asset-benchmarks_stripped.json"


def peak_in_flight(send: np.ndarray, end: np.ndarray) -> int:
    """Sweep-line over [send, end): the most requests in flight at once."""
    events = sorted([(t, 1) for t in send] + [(t, -1) for t in end], key=lambda e: (e[0], e[1]))
    level = peak = 0
    for _, step in events:
        level += step
        peak = max(peak, level)
    return peak


def test_concurrent_four_streams(real):
    tables = load(real(SANITY))
    assert tables.inputs[0].notes == [
        "GuideLLM concurrent-4: kept 4 of 4 records inside the measurement window; dropped 0 "
        "warm-up/cool-down"
    ]
    r = run(tables)
    assert (r["run"], r["concurrency"], r["tool_name"], r["tool_version"]) == (
        "concurrent-4", 4, "guidellm", "0.5.0.dev0",
    )  # fmt: skip
    # request_args recorded ignore_eos true and max_tokens 1024
    assert (r["stop"], r["ignore_eos"], r["output_tokens_requested"]) == ("forced", True, 1024)
    req = tables.requests
    assert len(req) == 4 and req["prompt_sha256"].nunique() == 4
    assert peak_in_flight(req["t_send"].to_numpy(), req["t_end"].to_numpy()) == 4
    assert round(r["summary"]["tool_concurrency"], 1) == 4.0  # request_concurrency mean
    assert round(r["summary"]["tool_aggregate_tps"], 1) == 165.6
    assert [round(x, 1) for x in req["reported_tps"]] == [41.1] * 4
    s = stats_of(tables).iloc[0]
    # summing the per-request rates is roughly right here only because they truly overlapped
    assert round(s["sum_reported_tps"], 1) == 164.4
    assert round(s["aggregate_tps"], 1) == 164.4
    assert round(s["overlap"], 2) == 4.0
    # token iterations: one stream got 1024 tokens in 1019 chunks (a few carried two)
    assert list(req["n_chunks"]) == [1024.0, 1019.0, 1024.0, 1024.0]


def test_v02_sampled_lists_use_the_summary(real):
    tables = load(real(V02))
    assert tables.inputs[0].notes == [
        "GuideLLM synchronous: the request lists are a sample (1 of 47 inside the window): "
        "figures from GuideLLM's own summary, per-request rows not used"
    ]
    assert len(tables.requests) == 0
    r = run(tables)
    assert (r["concurrency"], r["tool_version"]) == (1, None)
    assert (r["output_tokens_requested"], r["prompt_tokens"]) == (128, 256)  # prompt_tokens=256,…
    assert "tool version not recorded (a report without metadata: GuideLLM ≤ 0.3)" in r["derived"]
    s = stats_of(tables).iloc[0]
    assert (s["requests"], s["failed"]) == (47, 1)  # 46 successful + 1 incomplete
    assert round(s["aggregate_tps"], 1) == 196.3  # 5888 tokens ÷ 29.997 s
    assert round(s["in_flight"], 3) == 0.998  # synchronous: one at a time
    assert round(r["summary"]["tool_aggregate_tps"], 1) == 198.1


def _report() -> dict[str, Any]:
    """A small ≥ 0.5 report: 2 streams, warm-up and cool-down records around the window."""

    def request(i: int, start: float, end: float, status: str = "completed") -> dict[str, Any]:
        body = {"body": {"prompt": f"p{i}", "max_tokens": 64, "ignore_eos": False}}
        return {
            "type_": "generative_request_stats",
            "request_id": f"r{i}",
            "request_args": json.dumps(body),
            "info": {
                "status": status,
                "error": "boom" if status == "errored" else None,
                "timings": {
                    "request_start": start,
                    "first_token_iteration": start + 0.1,
                    "last_token_iteration": end - 0.01,
                    "request_end": end,
                    "token_iterations": 40 + i,
                },
            },
            "prompt_tokens": 20,
            "output_tokens": 40 + i,
            "output_tokens_per_second": (40 + i) / (end - start),
        }

    t = 1_772_000_000.0
    return {
        "metadata": {"version": 1, "guidellm_version": "0.5.3"},
        "args": {"model": "m"},
        "benchmarks": [
            {
                "type_": "generative_benchmark",
                "config": {"run_id": "abc", "strategy": {"type_": "concurrent", "streams": 2}},
                "scheduler_metrics": {"measure_start_time": t + 1, "measure_end_time": t + 9},
                "start_time": t + 1,
                "end_time": t + 9,
                "duration": 8.0,
                "metrics": {
                    "request_totals": {"successful": 3, "errored": 1, "incomplete": 0, "total": 4}
                },
                "requests": {
                    "successful": [
                        request(0, t + 0.0, t + 0.9),  # warm-up: ends before the window
                        request(1, t + 0.5, t + 3.0),
                        request(2, t + 3.0, t + 6.0),
                        request(3, t + 6.0, t + 9.5),
                        request(4, t + 9.2, t + 12.0),  # cool-down: starts after it
                    ],
                    "errored": [request(5, t + 2.0, t + 2.5, "errored")],
                    "incomplete": [],
                },
            }
        ],
    }


def test_measurement_window_keeps_overlapping_records(tmp_path):
    path = tmp_path / "benchmarks.json"
    path.write_text(json.dumps(_report(), indent=2))
    tables = load(path)
    assert tables.inputs[0].notes == [
        "GuideLLM concurrent-2: kept 4 of 6 records inside the measurement window; dropped 2 "
        "warm-up/cool-down"
    ]
    req = tables.requests
    assert list(req["id"]) == ["r1", "r2", "r3", "r5"]
    reasons = [x if isinstance(x, str) else "-" for x in req["finish_reason"]]
    assert reasons == ["-", "-", "-", "error"]
    assert req["error"][3] == "boom"
    r = run(tables)
    assert r["stop"] == "natural"  # ignore_eos false in every body, lengths 41–43
    assert r["group"] == "guidellm abc"
    assert (
        "2 record(s) outside the measurement window dropped (warm-up / cool-down)" in (r["derived"])
    )
    text = path.read_text().splitlines()
    assert text[int(req["source_line"][0]) - 1].strip() == "{"
    assert '"request_id": "r1",' in text[int(req["source_line"][0]) + 1]


def test_bad_request_record(tmp_path):
    doc = _report()
    bad = copy.deepcopy(doc)
    bad["benchmarks"][0]["requests"]["successful"][1]["info"]["timings"]["request_end"] = "late"
    path = tmp_path / "benchmarks.json"
    path.write_text(json.dumps(bad, indent=2))
    # the line of the record's opening brace, two lines above its request_id
    line = path.read_text().splitlines().index('            "request_id": "r1",') - 1
    with pytest.raises(TraceError) as err:
        api.load([path], "guidellm")
    assert str(err.value) == (
        f'{path}:{line}: "info.timings.request_end" is "late"; expected a number (GuideLLM '
        "request record)"
    )


def test_not_a_report(tmp_path):
    path = tmp_path / "benchmarks.json"
    path.write_text('{"benchmarks": 3}')
    with pytest.raises(TraceError) as err:
        api.load([path], "guidellm")
    assert str(err.value) == (
        f'{path}:1: no "benchmarks" list; expected a GuideLLM benchmarks.json report'
    )


def test_the_yaml_report_reads_the_same(real, tmp_path):
    import yaml

    path = tmp_path / "benchmarks.yaml"
    path.write_text(yaml.safe_dump(json.loads(real(SANITY).read_text()), sort_keys=False))
    tables = load(path)
    assert tables.inputs[0].format == "guidellm"
    s = stats_of(tables).iloc[0]
    assert round(s["aggregate_tps"], 1) == 164.4 and round(s["overlap"], 2) == 4.0
    # rows point at their benchmark's line (YAML has no cheap per-record positions)
    line = path.read_text().splitlines().index("- type_: generative_benchmark") + 1
    assert set(tables.requests["source_line"]) == {line}
