"""GuideLLM benchmarks.json, 0.2-era and ≥ 0.5: the real files' figures (FORMATS.md §11b), the
measurement window, sampled request lists, and malformed reports."""

from __future__ import annotations

import copy
import json
import math
from typing import Any

import numpy as np
import pytest
import yaml

from reporter import api
from reporter.errors import TraceError
from tests.adapters.conftest import load, run, stats_of
from tests.conftest import finding

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
        "2 records outside the measurement window dropped (warm-up / cool-down)" in (r["derived"])
    )
    text = path.read_text().splitlines()
    assert text[int(req["source_line"][0]) - 1].strip() == "{"
    assert '"request_id": "r1",' in text[int(req["source_line"][0]) + 1]


def test_dropped_records_of_a_run_without_warm_up_or_cool_down(tmp_path):
    """A 0.5 synchronous run with no warm-up or cool-down (warmup_duration and cooldown_duration
    0.0, none configured): the request queued behind the last one was started after the time
    limit closed the window and cancelled at once. Dropping it is right; calling it a warm-up or
    cool-down record is not (a real 0.5.0 file of this shape holds one such record)."""
    doc = _report()
    bench = doc["benchmarks"][0]
    t = 1_772_000_000.0
    bench["config"]["warmup"] = {"percent": None, "value": None, "mode": "prefer_duration"}
    bench["config"]["cooldown"] = {"percent": None, "value": None, "mode": "prefer_duration"}
    bench["warmup_duration"] = 0.0
    bench["cooldown_duration"] = 0.0
    lists = bench["requests"]
    lists["successful"] = lists["successful"][1:4]  # the three inside the window
    late = copy.deepcopy(lists["successful"][0])
    late["request_id"] = "r9"
    late["info"]["status"] = "cancelled"
    late["info"]["timings"] = {
        "request_start": t + 9.5,
        "request_end": None,
        "resolve_end": t + 9.6,
    }
    late["output_tokens"] = None
    lists["incomplete"] = [late]
    path = tmp_path / "benchmarks.json"
    path.write_text(json.dumps(doc, indent=2))
    tables = load(path)
    assert tables.inputs[0].notes == [
        "GuideLLM concurrent-2: kept 4 of 5 records inside the measurement window; dropped 1 "
        "outside it (the file sets no warm-up or cool-down)"
    ]
    r = run(tables)
    assert not any("warm-up / cool-down" in d for d in r["derived"])
    assert (
        "1 record outside the measurement window dropped: it started after the window closed "
        "(the file sets no warm-up or cool-down)" in r["derived"]
    )


def test_records_outside_the_window_are_placed_by_their_own_times():
    """Each record is said to fall where its times show, never later than they show: one
    without a send time that ended after the window ended after it (it may have started
    inside)."""
    from reporter.adapters.guidellm import _outside_words

    rows = [
        {"t_send": 0.0, "t_end": 0.5},  # before the window [1, 9]
        {"t_send": 9.5, "t_end": 9.6},
        {"t_send": 9.7, "t_end": math.nan},
        {"t_send": None, "t_end": 9.9},
        {"t_send": 2.0, "t_end": None},
        {"t_send": None, "t_end": None},
    ]
    assert _outside_words(rows, 1.0, 9.0) == (
        "1 ended before the window opened, 2 started after the window closed, 1 ended after "
        "the window closed, 2 have no end time"
    )
    assert _outside_words(rows[3:4], 1.0, 9.0) == "it ended after the window closed"


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


@pytest.mark.slow
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


# --------------------------------------------------------------------------- round 2 files

RATE10 = "guidellm/rsevilla87-guidellm-qwen3-06b-constant-10rps.json"
YAML = "guidellm/guidellm-v02-test-asset-benchmarks_stripped.yaml"
V08 = "guidellm/llmd-guidellm080dev-report-v2-constant-2-4rps-mock-server.json"


@pytest.mark.slow
def test_open_loop_at_ten_per_second(real):
    tables = load(real(RATE10))
    r = run(tables)
    # open loop: a rate, never a concurrency
    assert (r["run"], r["request_rate"], r["concurrency"]) == ("constant-10rps", 10.0, None)
    assert any(d.startswith("open loop: requests sent at 10 req/s") for d in r["derived"])
    assert "9.78 req/s achieved" in " ".join(r["derived"])
    s = stats_of(tables).iloc[0]
    assert (s["requests"], s["ok"], s["output_tokens"]) == (609, 586, 75008.0)  # 586 × 128
    assert round(s["wall_s"], 2) == 60.01
    assert round(s["aggregate_tps"], 1) == 1249.9  # ÷ the 60.01 s benchmark window
    req = tables.requests
    ok = req[req["ok"]]
    span = ok["t_end"].max() - ok["t_send"].min()
    assert round(span, 2) == 59.93 and round(75008 / span, 1) == 1251.6
    assert round(ok["e2e"].sum() / span, 1) == 22.8  # Little's law over the completed requests
    assert round(r["summary"]["tool_concurrency"], 2) == 22.78  # GuideLLM's own measure
    assert round(s["sum_reported_tps"]) == 32191  # 25.8× the aggregate
    assert round(ok["ttft"].min(), 3) == 1.005 and round(ok["ttft"].max(), 3) == 1.044
    assert set(ok["output_tokens"]) == {128.0}
    # the 23 incomplete requests were cut by the 60 s limit, not failed by the server
    cut = req[~req["ok"]]
    assert len(cut) == 23 and set(cut["finish_reason"].astype(object)) == {"time_limit"}
    assert cut["output_tokens"].sum() == 2151
    assert (cut["t_send"] - req["t_send"].min()).min() > 57.6  # all sent in the last 2.3 s
    assert cut.iloc[0]["error"].startswith("cut by the time limit")
    f = finding(api.audit([real(RATE10)], select=["BR019"]), "BR019", "constant-10rps")
    assert (f["outcome"], f["severity"]) == ("fired", "info")
    assert f["numbers"]["time_limited"] == 23 and f["numbers"]["failed"] == 0
    assert f["message"].startswith("of 609 requests: 23 cut by the time limit")


def test_yaml_summary_synchronous_with_one_request_cut(real):
    tables = load(real(YAML))
    r = run(tables)
    s = stats_of(tables).iloc[0]
    assert (r["concurrency"], s["output_tokens"]) == (1, 5888.0)  # 46 × 128
    assert round(s["wall_s"], 3) == 29.997 and round(s["aggregate_tps"], 1) == 196.3
    assert round(s["in_flight"], 3) == 0.998  # synchronous
    assert r["summary"]["time_limited"] == 1
    f = finding(api.audit([real(YAML)], select=["BR019"]), "BR019", "synchronous")
    # the same severity as from per-request records: a time-limit cut is not a failure
    assert (f["outcome"], f["severity"]) == ("fired", "info")
    assert f["message"] == (
        "of 47 requests the tool counted 1 cut by the time limit (ended by the client on "
        "purpose, not server failures)"
    )


def test_yaml_type_key_far_into_the_file_is_recognised(real, tmp_path):
    text = real(YAML).read_text()
    # a long top-level block first, and the type key after 100 KiB of a benchmark's fields
    padding = "".join(f"  - padding line {i:05d} {'x' * 80}\n" for i in range(1200))
    first = "- type_: generative_benchmark\n  id_:"
    assert text.startswith("---\nbenchmarks:\n" + first), "the stored YAML changed"
    moved = (
        "---\npadding:\n"
        + padding
        + text.removeprefix("---\n")
        .replace(first, "- id_:", 1)
        .replace(
            "\n  worker:",
            "\n  notes:\n"
            + padding.replace("  - ", "    - ")
            + "  type_: generative_benchmark\n  worker:",
            1,
        )
    )
    assert moved.index("generative_benchmark") > 64 << 10
    path = tmp_path / "benchmarks.yaml"
    path.write_text(moved)
    tables = load(path)
    assert tables.inputs[0].format == "guidellm"
    assert round(stats_of(tables).iloc[0]["aggregate_tps"], 1) == 196.3


def test_json_type_key_far_into_the_file_is_recognised(real, tmp_path):
    doc = json.loads(real(SANITY).read_text())
    bench = doc["benchmarks"][0]
    kind = bench.pop("type_")
    bench["padding"] = ["x" * 100] * 1000
    bench["type_"] = kind  # now the last key, after 100 KiB
    path = tmp_path / "benchmarks.json"
    path.write_text(json.dumps({"padding": ["y" * 100] * 700, **doc}, indent=2))
    assert path.read_text().index('"type_": "generative_benchmark"') > 64 << 10
    assert load(path).inputs[0].format == "guidellm"


def test_report_version_2_two_rates(real):
    tables = load(real(V08))
    runs = tables.runs
    assert list(runs["run"]) == ["constant-2rps", "constant-4rps"]
    assert list(runs["request_rate"]) == [2.0, 4.0]
    assert list(runs["concurrency"]) == [None, None]
    assert set(runs["tool_version"]) == {"0.8.0.dev18"}
    assert set(runs["model_name"]) == {"e2e-mock-model"}  # config.spec.backend.model
    assert list(runs["output_tokens_requested"]) == [8, 8]  # config.spec.data: 8, no stdev
    s = stats_of(tables)
    assert [round(x, 2) for x in s["aggregate_tps"]] == [3.19, 6.35]  # 16 ÷ 5.02 s, ÷ 2.52 s
    assert [round(r["summary"]["tool_aggregate_tps"], 2) for _, r in runs.iterrows()] == [
        3.20, 6.38,
    ]  # fmt: skip
    assert [round(x, 2) for x in s["in_flight"]] == [0.01, 0.01]


def _short_of(doc: dict[str, Any], wanted: int) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    bench = doc["benchmarks"][0]
    constraint = bench["config"]["constraints"]["max_requests"]
    if "max_num" in constraint:  # 0.5
        constraint["max_num"] = wanted
    else:  # 0.8
        constraint["args"]["count"] = wanted
    return doc


@pytest.mark.parametrize(("name", "held"), [(SANITY, 4), (V08, 2)], ids=["0.5", "0.8"])
def test_fewer_requests_than_its_max_requests_asked_for(real, tmp_path, name, held):
    path = tmp_path / "benchmarks.json"
    path.write_text(json.dumps(_short_of(json.loads(real(name).read_text()), held + 1)))
    tables = load(path)
    said = (
        f"holds {held} requests of the {held + 1} its own max_requests constraint asked for "
        "(1 missing: the benchmark stopped early or the file was cut)"
    )
    assert said in tables.runs["derived"].iloc[0]
    assert said in tables.inputs[0].notes[0]
    # a file holding what it asked for says nothing
    assert not any("max_requests" in d for d in load(real(name)).runs["derived"].iloc[0])


def test_requests_a_warm_up_left_out_of_the_window_are_not_missing(real, tmp_path):
    # GuideLLM 0.5 with --warmup: the scheduler made every request max_requests asked for,
    # and its figures count those inside the measurement window only (a real 0.5.0.dev0 file
    # of 30 requests had 26 in it, a 90 s warm-up holding the first 4). That was said to be
    # "4 missing: the benchmark stopped early or the file was cut"
    doc = json.loads(real(SANITY).read_text())
    bench = doc["benchmarks"][0]
    ends = sorted(r["request_end_time"] for r in bench["requests"]["successful"])
    bench["scheduler_metrics"]["measure_start_time"] = (ends[0] + ends[1]) / 2
    bench["metrics"]["request_totals"].update(successful=3, total=3)
    path = tmp_path / "benchmarks.json"
    path.write_text(json.dumps(doc))
    derived = load(path).runs["derived"].iloc[0]
    assert (
        "holds 3 requests inside its measurement window (4 made: the other 1 fell in the "
        "warm-up or cool-down, which GuideLLM's figures leave out); all 4 its max_requests "
        "constraint asked for were made, none is missing"
    ) in derived
    assert not any("missing:" in d or "file was cut" in d for d in derived)


def test_request_bodies_written_as_python_dicts_read_as_the_json_ones(real, tmp_path):
    # GuideLLM 0.5.0 writes request_args as the repr of a dict (single quotes, True, None);
    # read as JSON it failed, and the bodies (ignore_eos, the prompts) were silently lost:
    # "stop mode unknown" of runs that forced their length
    import ast

    doc = json.loads(real(SANITY).read_text())
    rewritten = 0
    for bench in doc["benchmarks"]:
        for status in bench["requests"].values():
            for item in status or []:
                if isinstance(item.get("request_args"), str):
                    item["request_args"] = repr(json.loads(item["request_args"]))
                    rewritten += 1
    assert rewritten and "'ignore_eos': True" in item["request_args"]
    assert ast.literal_eval(item["request_args"])["body"]["ignore_eos"] is True
    path = tmp_path / "benchmarks.json"
    path.write_text(json.dumps(doc))
    as_json, as_repr = api.audit([real(SANITY)]), api.audit([path])
    assert [r.stop for r in as_repr.runs] == [r.stop for r in as_json.runs] == ["forced"]
    findings = [(f.code, f.outcome, f.message) for f in as_json.findings]
    assert [(f.code, f.outcome, f.message) for f in as_repr.findings] == findings


def test_a_time_limit_counted_from_the_scheduler_start_and_a_json_data_spec(real, tmp_path):
    # jhurlocker's GuideLLM 0.3 YAML: `--data` written back as JSON, 60 s max_duration, and
    # 15 of up to 100 requests. The benchmark's `duration` (57.27 s) starts at its first
    # request, 2.7 s after the scheduler's (run_stats: 62.76 s): the time limit ended it,
    # and no request is missing from the file
    doc = json.loads(real(V02).read_text())
    bench = doc["benchmarks"][0]
    bench["request_loader"]["data"] = (
        '{"type": "emulated", "prompt_tokens": 256, "output_tokens": 128}'
    )
    bench["args"]["max_number"] = 100
    bench["duration"] = 27.0  # under 0.99 × the 30 s limit
    stats = bench["run_stats"]
    stats["end_time"] = stats["start_time"] + 30.2
    path = tmp_path / "benchmarks.json"
    path.write_text(json.dumps(doc))
    r = run(load(path))
    assert r["output_tokens_requested"] == 128
    held = bench["request_totals"]["successful"] + bench["request_totals"]["incomplete"]
    assert (
        f"holds {held} requests of up to 100 (its max_requests constraint): its 30 s time "
        "limit ended the benchmark first"
    ) in r["derived"]
    assert not any("missing" in d for d in r["derived"])


def test_a_yaml_report_with_sorted_keys_points_at_each_benchmark_s_start(real, tmp_path):
    # jhurlocker's GuideLLM 0.3 YAML sorts each benchmark's keys: `type_` is its last line,
    # and every finding and request pointed there (line 1974) instead of where the benchmark
    # starts (its `- args:` line)
    doc = yaml.safe_load(real(YAML).read_text())
    text = yaml.safe_dump(doc, sort_keys=True)
    path = tmp_path / "benchmarks.yaml"
    path.write_text(text)
    starts = [n for n, line in enumerate(text.splitlines(), start=1) if line.startswith("- ")]
    assert len(starts) == len(doc["benchmarks"])
    runs = load(path).runs
    assert list(runs["source_line"]) == starts
