"""AIPerf profile_export.jsonl records and the profile_export_aiperf.json / .csv summaries: the
real files' figures (FORMATS.md §11b), the per-user `sum` trap, exact nanosecond clocks."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from reporter import adapters, api
from reporter.adapters.aiperf import run_name
from reporter.errors import TraceError
from reporter.ingest.lines import Source
from tests.adapters.conftest import HERE, load, run, stats_of
from tests.conftest import finding

SUMMARY = "aiperf/akamaslabs-aiperf0.11-qwen3-4b-conc16-profile_export_aiperf.json"
CSV = "aiperf/akamaslabs-aiperf0.11-qwen3-4b-conc16-profile_export_aiperf.csv"
RECORDS = "aiperf/anud18-aiperf-qwen3vl-c2-profile_export-first2records-excerpt.jsonl"


def test_summary_json_and_the_per_user_sum_trap(real):
    tables = load(real(SUMMARY))
    r = run(tables)
    assert (r["run"], r["concurrency"], r["tool_version"]) == ("aiperf:c16", 16, "0.11.0")
    s = stats_of(tables).iloc[0]
    assert round(s["aggregate_tps"], 1) == 1792.2  # 537 554 tokens ÷ 299.94 s
    assert round(r["summary"]["tool_aggregate_tps"], 1) == 1792.2
    assert round(s["in_flight"], 1) == 15.9  # Σ request latency 4772.3 s ÷ 299.9 s
    # the per-request rates: mean 114.0, and AIPerf's own `sum` of them, 130× the aggregate
    assert round(r["summary"]["mean_reported_tps"], 1) == 114.0
    assert round(s["sum_reported_tps"]) == 233110
    assert round(s["sum_reported_tps"] / s["aggregate_tps"]) == 130
    assert (s["out_min"], s["out_max"]) == (3.0, 1125.0)
    assert (r["stop"], r["ignore_eos"]) == ("natural", False)  # no ignore_eos in the extras
    assert r["group"] == "aiperf sweep 4a9ac728-ad3f-40ef-b933-acfc46a330fd"
    assert r["summary"]["chunks"] == 537886.0  # HTTP chunks ≈ tokens: one token a chunk


def test_summary_csv_same_figures_rounded(real):
    tables = load(real(CSV))
    assert tables.inputs[0].format == "aiperf"
    s = stats_of(tables).iloc[0]
    assert round(s["aggregate_tps"], 1) == 1792.2
    assert round(s["in_flight"], 1) == 15.9
    assert s["sum_reported_tps"] == 233110.37
    assert (s["requests"], s["out_min"], s["out_max"]) == (2044.0, 3.0, 1125.0)
    assert "concurrency not recorded in the summary CSV" in run(tables)["derived"]


def test_records_keep_nanosecond_clocks_exact(real):
    lines = real(RECORDS).read_text().splitlines()
    starts = [json.loads(x)["metadata"]["request_start_ns"] for x in lines]
    ends = [json.loads(x)["metadata"]["request_end_ns"] for x in lines]
    tables = load(real(RECORDS))
    req = tables.requests
    base = min(starts)
    # subtracted as integers: the 0.3 ms between the two sends survives (floats of the raw
    # epoch values would be off by tens of nanoseconds)
    assert list(req["t_send"]) == [(s - base) / 1e9 for s in starts]
    assert req.at[0, "t_send"] == 0.000301264
    assert list(req["t_end"]) == [(e - base) / 1e9 for e in ends]
    assert list(req["output_tokens"]) == [284.0, 292.0]
    assert round(req.at[0, "e2e"], 1) == 82.0
    assert round(req.at[0, "ttft"], 1) == 12.9
    assert list(req["n_chunks"]) == [284.0, 292.0]  # 283 and 291 chunk gaps
    assert round(req.at[0, "reported_tps"], 2) == 4.09  # 1000 ÷ 244.36 ms
    assert run(tables)["extra"]["t0_epoch_ns"] == base
    s = stats_of(tables).iloc[0]
    assert round(s["in_flight"], 2) == 1.76


def _record(i: int, start: int, phase: str = "profiling", error: dict | None = None) -> str:
    metrics = {
        "time_to_first_token": {"value": 50.0, "unit": "ms"},
        "request_latency": {"value": 500.0, "unit": "ms"},
        "output_sequence_length": {"value": 20, "unit": "tokens"},
        "inter_chunk_latency": {"value": [10.0] * 19, "unit": "ms"},
        "output_token_throughput_per_user": {"value": 42.2, "unit": "tokens/sec/user"},
    }
    return json.dumps({
        "metadata": {"session_num": i, "x_request_id": f"q{i}", "request_start_ns": start,
                     "request_end_ns": start + 500_000_000, "benchmark_phase": phase},
        "metrics": {} if error else metrics,
        "error": error,
    })  # fmt: skip


def test_warmup_left_out_and_errors_kept(tmp_path):
    t0 = 1_785_000_000_000_000_000
    path = tmp_path / "profile_export.jsonl"
    path.write_text("\n".join([
        _record(0, t0, "warmup"),
        _record(1, t0 + 10**9),
        _record(2, t0 + 10**9 + 7),
        _record(3, t0 + 2 * 10**9, error={"code": 500, "type": "HTTPError", "message": "boom"}),
    ]) + "\n")  # fmt: skip
    tables = load(path)
    assert tables.inputs[0].notes == [
        "AIPerf: 3 profiling records",
        "AIPerf: left out 1 warm-up record (benchmark_phase)",
    ]
    req = tables.requests
    assert list(req["id"]) == ["q1", "q2", "q3"]
    assert list(req["t_send"]) == [0.0, 7e-09, 1.0]
    assert list(req["ok"]) == [True, True, False]
    assert req.at[2, "error"] == "boom" and req.at[2, "finish_reason"] == "error"
    assert [round(x, 6) for x in req.at[0, "token_times"][:3]] == [0.05, 0.06, 0.07]


def test_bad_record(tmp_path):
    path = tmp_path / "profile_export.jsonl"
    record = json.loads(_record(1, 1_785_000_000_000_000_000))
    record["metadata"]["request_start_ns"] = "soon"
    path.write_text(_record(0, 1_785_000_000_000_000_000) + "\n" + json.dumps(record) + "\n")
    with pytest.raises(TraceError) as err:
        api.load([path], "aiperf")
    assert str(err.value) == (
        f'{path}:2: "metadata.request_start_ns" is "soon"; expected a whole number (AIPerf record)'
    )


def test_2025_summary_nests_the_metrics_under_records(tmp_path):
    def metric(tag: str, unit: str, **stats: float) -> dict[str, object]:
        return {"tag": tag, "header": tag.replace("_", " ").title(), "unit": unit, **stats}

    doc = {
        "records": {
            "request_latency": metric("request_latency", "ms", avg=400.0, count=100, sum=40000.0),
            "benchmark_duration": metric("benchmark_duration", "sec", avg=10.0),
            "request_count": metric("request_count", "requests", avg=100),
            "output_sequence_length": metric("output_sequence_length", "tokens", avg=50.0,
                                             min=50.0, max=50.0, sum=5000.0),
            "output_token_throughput": metric("output_token_throughput", "tokens/sec", avg=500.0),
            "time_to_first_token": metric("time_to_first_token", "ms", avg=30.0, p50=28.0),
        },
        "input_config": {"loadgen": {"concurrency": 4},
                         "endpoint": {"extra": [["ignore_eos", True], ["min_tokens", 50]]}},
        "was_cancelled": False,
        "error_summary": [{"error_details": {"code": 500}, "count": 2}],
    }  # fmt: skip
    path = tmp_path / "profile_export_aiperf.json"
    path.write_text(json.dumps(doc, indent=2))
    tables = load(path)
    assert tables.inputs[0].format == "aiperf"
    r = run(tables)
    assert (r["concurrency"], r["stop"], r["min_tokens"]) == (4, "forced", 50)
    s = stats_of(tables).iloc[0]
    assert (s["requests"], s["failed"], s["aggregate_tps"], s["in_flight"]) == (102, 2, 500, 4)
    assert s["median_ttft_s"] == 0.028


# --------------------------------------------------------------------------- older and newer files

#: Records in the layout of AIPerf's first releases: `metadata.timestamp_ns` and
#: `credit_phase`, the error inside the metadata, metric tags `ttft`, `isl`, `osl`, `itl` (the
#: `MetricTag` enum of mid-2025 and the record example of its examples/README.md).
OLD_TAGS = HERE / "aiperf-old-tags-profile_export.jsonl"
HALF = "aiperf/databloom-aiperf-llama32-3b-gguf-c1-dualhost-half-timeouts-profile_export.jsonl"
ALL_TIMEOUTS = "aiperf/databloom-aiperf-qwen35-4b-gguf-c1-all-timeouts-profile_export.jsonl"


def test_old_metric_tags_keep_first_token_times():
    tables = load(OLD_TAGS)
    req = tables.requests
    assert list(req["ok"]) == [True, True, False]  # the warm-up record is left out
    assert [round(x, 5) for x in req["ttft"][:2]] == [0.08025, 0.082]
    assert list(req["output_tokens"][:2]) == [101.0, 101.0]
    assert list(req["prompt_tokens"][:2]) == [550.0, 550.0]
    assert req.at[2, "error"] == "timed out" and req.at[2, "finish_reason"] == "error"
    assert any("first releases" in d for d in run(tables)["derived"])
    # with the first-token times kept, the reported rates (1000 ÷ itl) match tokens ÷ decode
    verdict = api.audit([OLD_TAGS], select=["BR020"])
    assert finding(verdict, "BR020", run(tables)["run"])["outcome"] == "passed"


def _run_of(real, name: str, tag: str) -> bytes:
    """A real records file as another run of it: its request ids tagged, so that the copies are
    not one run given twice (which the audit reads once)."""
    return real(name).read_bytes().replace(b'"x_request_id":"', f'"x_request_id":"{tag}-'.encode())


def _sweep_folder(tmp_path, real, concurrency: int, name: str = HALF):
    folder = tmp_path / f"llama-3.2-3b-openai-chat-concurrency{concurrency}"
    folder.mkdir()
    (folder / "profile_export.jsonl").write_bytes(_run_of(real, name, f"c{concurrency}"))
    return folder / "profile_export.jsonl"


@pytest.mark.slow
def test_records_of_one_sweep_audit_together(tmp_path, real):
    paths = [_sweep_folder(tmp_path, real, n) for n in (1, 2, 4)]
    verdict = api.audit(paths)  # every file was run "aiperf" before: an AssertionError
    ids = [r.id for r in verdict.runs]
    assert ids == [f"aiperf:llama-3.2-3b-openai-chat-concurrency{n}" for n in (1, 2, 4)]
    tables = api.load(paths)
    assert list(tables.runs["concurrency"]) == [1, 2, 4]
    assert "from the artifact folder's name" in " ".join(tables.runs["derived"].iloc[0])
    assert [r.id for r in api.audit(paths).runs] == ids  # the same ids on every read


def test_same_named_files_in_same_named_folders_stay_apart(tmp_path, real):
    paths = []
    for top in ("a", "b"):
        (tmp_path / top / "c1").mkdir(parents=True)
        path = tmp_path / top / "c1" / "profile_export.jsonl"
        path.write_bytes(_run_of(real, HALF, top))
        paths.append(path)
    verdict = api.audit(paths)
    assert sorted(r.id for r in verdict.runs) == [
        "a/c1/profile_export.jsonl:aiperf:c1",
        "b/c1/profile_export.jsonl:aiperf:c1",
    ]


def test_cancelled_records_are_named_not_failures(tmp_path):
    t0 = 1_785_000_000_000_000_000
    lines = [json.loads(_record(i, t0 + i * 10**9)) for i in range(10)]
    for i in (3, 7):  # --request-cancellation-rate 20
        lines[i]["metadata"]["was_cancelled"] = True
        lines[i]["metadata"]["cancellation_time_ns"] = t0 + i * 10**9 + 100_000_000
        lines[i]["metrics"] = {}
        lines[i]["error"] = {"code": 499, "type": "RequestCancellationError",
                             "message": "Request was cancelled"}  # fmt: skip
    path = tmp_path / "profile_export.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    tables = load(path)
    req = tables.requests
    assert list(req["finish_reason"].astype(object)[[3, 7]]) == ["cancelled", "cancelled"]
    assert req.at[3, "error"].startswith("cancelled by the client")
    f = finding(api.audit([path], select=["BR019"]), "BR019", run(tables)["run"])
    assert (f["outcome"], f["severity"]) == ("fired", "info")
    assert f["message"].startswith("of 10 requests: 2 cancelled by the client (ended by the client")
    assert f["numbers"]["failed"] == 0 and f["numbers"]["cancelled"] == 2


def test_timeouts_stay_failures(real):
    tables = load(real(ALL_TIMEOUTS))
    f = finding(api.audit([real(ALL_TIMEOUTS)], select=["BR019"]), "BR019", run(tables)["run"])
    assert (f["outcome"], f["severity"], f["numbers"]["failed"]) == ("fired", "error", 20)


def _summary_doc(concurrency: int, **endpoint: object) -> dict[str, object]:
    return {
        "schema_version": "1.3",
        "aiperf_version": "0.13.0",
        "benchmark_duration": {"unit": "sec", "avg": 3.0},
        "request_count": {"unit": "requests", "avg": 2},
        "output_token_throughput": {"unit": "tokens/sec", "avg": 192.0},
        "input_config": {
            "endpoint": {"streaming": True, **endpoint},
            "phases": [{"name": "profiling", "type": "concurrency", "concurrency": concurrency}],
            "models": {"items": [{"name": "Qwen/Qwen3-VL"}]},
        },
    }


def test_records_read_their_summary_and_inputs_beside_them(tmp_path, real):
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "profile_export.jsonl").write_bytes(real(RECORDS).read_bytes())
    (folder / "profile_export_aiperf.json").write_text(json.dumps(_summary_doc(2)))
    payload = {"model": "Qwen/Qwen3-VL", "max_tokens": 300, "ignore_eos": True, "stream": True}
    inputs = {"data": [{"session_id": f"s{i}", "payloads": [payload]} for i in range(2)]}
    (folder / "inputs.json").write_text(json.dumps(inputs))
    tables = load(folder / "profile_export.jsonl")
    r = run(tables)
    assert (r["run"], r["concurrency"], r["tool_version"]) == ("aiperf:run", 2, "0.13.0")
    assert (r["output_tokens_requested"], r["ignore_eos"], r["stop"]) == (300, True, "forced")
    assert r["model_name"] == "Qwen/Qwen3-VL"
    derived = " ".join(r["derived"])
    assert "from the summary beside it" in derived and "from the request inputs" in derived
    assert any("profile_export_aiperf.json" in n for n in tables.inputs[0].notes)


# Multi-run exports of AIPerf 0.13, written by tests/fixtures/adapters from the layouts in its
# source (src/aiperf/exporters/aggregate/): the confidence aggregate of one setting
# (`{schema_version "1.0", aiperf_version, metadata {aggregation_type "confidence",
# num_profile_runs, …}, metrics {"<tag>_<stat>": {mean, std, min, max, cv, se, ci_low,
# ci_high, t_critical, unit}}}` and its CSV `metric,mean,…,unit` then a metadata block), and
# the sweep (`per_combination_metrics [{parameters {concurrency}, metrics {…}}]` and its CSV:
# parameter columns then `<key>_mean/_std/_min/_max/_cv`, then Best Configurations, Pareto and
# Metadata sections). The 0.13 summary CSV adds rows whose statistics AIPerf leaves empty (the
# row names there are stand-ins; the exporter writes "" for a statistic it does not compute).
AGGREGATE = HERE / "aiperf-0.13-concurrency2-profile_export_aiperf_aggregate.json"
AGGREGATE_CSV = HERE / "aiperf-0.13-concurrency2-profile_export_aiperf_aggregate.csv"
SWEEP = HERE / "aiperf-0.13-profile_export_aiperf_sweep.json"
SWEEP_CSV = HERE / "aiperf-0.13-profile_export_aiperf_sweep.csv"
CSV_013 = HERE / "aiperf-0.13-concurrency2-profile_export_aiperf.csv"


def test_013_summary_csv_with_empty_cells_is_read():
    tables = load(CSV_013)
    s = stats_of(tables).iloc[0]
    assert (s["requests"], s["output_tokens"], s["wall_s"]) == (60.0, 7680.0, 39.05)
    assert round(s["aggregate_tps"], 1) == 196.7  # 7 680 ÷ 39.05
    assert round(s["in_flight"], 2) == 1.97  # Σ latency 76.926 s ÷ 39.05 s
    assert tables.inputs[0].skipped == 0


@pytest.mark.parametrize("path", [AGGREGATE, AGGREGATE_CSV], ids=["json", "csv"])
def test_confidence_aggregate_is_one_run_of_means(path):
    assert adapters.detect(Source.read(str(path))).NAME == "aiperf"
    tables = load(path)
    r = run(tables)
    s = stats_of(tables).iloc[0]
    assert (s["requests"], s["output_tokens"], s["wall_s"]) == (54.0, 6912.0, 60.0)
    assert round(s["aggregate_tps"], 1) == 115.2
    assert round(s["in_flight"], 2) == 1.98  # 54 × 2.2 s ÷ 60 s
    assert r["derived"][0].startswith("figures are AIPerf's means across")
    if path == AGGREGATE:
        assert "3 profile runs" in r["derived"][0] and r["tool_version"] == "0.13.0"


@pytest.mark.parametrize("path", [AGGREGATE, AGGREGATE_CSV], ids=["json", "csv"])
def test_confidence_aggregate_states_the_spread_of_its_profile_runs(path):
    """The means of 3 profile runs, with the aggregate's deviation across them (115.2 ± 1.152
    tok/s, 114.048–116.352): the point was repeated and its spread is known, so BR016 does
    not say "none repeated: the error of each figure is unknown"."""
    from reporter import api

    (f,) = [f for f in api.audit([path], select=["BR016"]).findings if f.code == "BR016"]
    assert f.outcome == "passed"
    assert f.message.endswith(
        "with their spread stated: at most ±1.00% (aiperf:aiperf-0.13-concurrency2-profile_"
        f"export_aiperf_aggregate: 3 profile runs, 115.2 ± 1.15 tok/s, "
        f"{'114.0–116.4' if path == AGGREGATE else '114.0–116.3'})"
    )


@pytest.mark.parametrize("path", [SWEEP, SWEEP_CSV], ids=["json", "csv"])
def test_sweep_export_is_one_run_per_setting(path):
    assert adapters.detect(Source.read(str(path))).NAME == "aiperf"
    tables = load(path)
    runs = tables.runs
    assert list(runs["run"]) == ["aiperf:c1", "aiperf:c2", "aiperf:c4"]
    assert list(runs["concurrency"]) == [1, 2, 4]
    assert runs["group"].nunique() == 1
    s = stats_of(tables)
    assert [round(x, 1) for x in s["aggregate_tps"]] == [64.0, 115.2, 196.3]
    assert [round(x, 2) for x in s["in_flight"]] == [1.0, 1.98, 3.99]


def test_records_and_summary_passed_together_are_one_run(tmp_path, real):
    records = tmp_path / "records.jsonl"
    records.write_bytes(real(RECORDS).read_bytes())
    summary = tmp_path / "elsewhere" / "summary.json"
    summary.parent.mkdir()
    summary.write_text(json.dumps(_summary_doc(2)))
    inputs = tmp_path / "inputs-of-the-run.json"
    payload = {"model": "m", "max_completion_tokens": 512, "stream": True}
    sessions = [{"session_id": f"s{i}", "payloads": [payload]} for i in range(2)]
    inputs.write_text(json.dumps({"data": sessions}))
    tables = api.load([records, summary, inputs])
    assert len(tables.runs) == 1  # not a records run and a summary run
    r = run(tables)
    assert (r["run"], r["concurrency"], r["output_tokens_requested"]) == ("aiperf:records", 2, 512)
    # the payloads carry no ignore_eos: the server stops at EOS; the lengths vary (284, 292)
    assert (r["tool_version"], r["ignore_eos"], r["stop"]) == ("0.13.0", False, "natural")
    notes = {i.path: i.notes for i in tables.inputs}
    assert "AIPerf: joined to run aiperf:records (the same run's records)" in notes[str(summary)]
    assert "AIPerf: joined to run aiperf:records (its request inputs)" in notes[str(inputs)]
    verdict = api.audit([records, summary, inputs])
    assert [x.id for x in verdict.runs] == ["aiperf:records"]


def test_a_sweep_of_records_and_summaries_pairs_by_folder(tmp_path, real):
    paths = []
    for n in (1, 2):
        path = _sweep_folder(tmp_path, real, n)
        summary = path.parent / "profile_export_aiperf.json"
        doc = {**_summary_doc(n), "aiperf_version": f"0.13.{n}"}
        doc["request_count"] = {"unit": "requests", "avg": 10}  # + 10 errors: the 20 records
        doc["error_request_count"] = {"unit": "requests", "avg": 10}
        summary.write_text(json.dumps(doc))
        paths += [path, summary]
    tables = api.load(paths)
    assert list(tables.runs["concurrency"]) == [1, 2]
    assert list(tables.runs["tool_version"]) == ["0.13.1", "0.13.2"]


def test_inputs_alone_are_not_results(tmp_path):
    path = tmp_path / "inputs.json"
    path.write_text(json.dumps({"data": [{"session_id": "s", "payloads": [{"max_tokens": 5}]}]}))
    with pytest.raises(TraceError) as err:
        api.load([path])
    assert str(err.value) == (
        f"{path}: AIPerf's inputs.json holds the requests sent, no results; expected the run's "
        "profile_export.jsonl (or its summary) audited with it"
    )


def test_dual_host_half_timeouts(real):
    tables = load(real(HALF))
    req = tables.requests
    s = stats_of(tables).iloc[0]
    assert (s["requests"], s["ok"], s["output_tokens"]) == (20, 10, 110.0)
    assert sorted(set(req.loc[req["ok"], "output_tokens"])) == [6.0, 16.0]  # natural stop
    assert round(s["wall_s"], 2) == 211.64 and round(s["aggregate_tps"], 2) == 0.52
    ok = req[req["ok"]]
    last_ok = ok["t_end"].max() - req["t_send"].min()
    assert round(last_ok, 2) == 191.26 and round(110 / last_ok, 3) == 0.575  # AIPerf's window
    assert round(req["e2e"].sum() / s["wall_s"], 2) == 1.00  # Little over all 20 records
    assert round(s["sum_reported_tps"], 1) == 453.6
    assert round(req.at[0, "ttft"], 2) == 1.70  # cold first request
    assert ok["ttft"][1:].round(2).between(0.23, 0.26).all()
    # every odd-numbered request timed out after 20.3–20.8 s: failures, not cancellations
    bad = req[~req["ok"]]
    assert list(bad.index) == list(range(1, 20, 2))
    assert set(bad["finish_reason"].astype(object)) == {"error"}
    assert bad["e2e"].between(20.3, 20.8).all()
    # most of the wall (SOURCES.md says 204.9 s; start → end of the ten records sums to 205.0)
    assert round(bad["e2e"].sum(), 1) == 205.0
    assert bad["error"].eq("TimeoutError()").all()
    f = finding(api.audit([real(HALF)], select=["BR019"]), "BR019", run(tables)["run"])
    assert (f["severity"], f["numbers"]["failed"]) == ("error", 10)
    assert "cancelled" not in f["numbers"] and "time_limited" not in f["numbers"]


def test_all_timeouts_no_throughput(real):
    tables = load(real(ALL_TIMEOUTS))
    req = tables.requests
    s = stats_of(tables).iloc[0]
    assert (s["requests"], s["ok"]) == (20, 0)
    assert np.isnan(s["aggregate_tps"])  # no throughput exists
    assert round(s["wall_s"]) == 618
    assert req["e2e"].round(1).eq(30.0).all() and req["error"].eq("TimeoutError()").all()


def test_summary_cancellations_at_the_records_severity(tmp_path):
    doc = _summary_doc(4)
    doc["request_count"] = {"unit": "requests", "avg": 8}
    doc["error_request_count"] = {"unit": "requests", "avg": 2}
    doc["cancelled_request_count"] = {"unit": "requests", "avg": 2}  # both errors cancelled
    path = tmp_path / "profile_export_aiperf.json"
    path.write_text(json.dumps(doc))
    tables = load(path)
    assert run(tables)["summary"]["cancelled"] == 2
    f = finding(api.audit([path], select=["BR019"]), "BR019", "aiperf:c4")
    assert (f["outcome"], f["severity"]) == ("fired", "info")
    assert f["message"] == (
        "of 10 requests the tool counted 2 cancelled by the client (ended by the client on "
        "purpose, not server failures)"
    )
    doc["error_request_count"]["avg"] = 5  # three errors besides the two cancellations
    path.write_text(json.dumps(doc))
    f = finding(api.audit([path], select=["BR019"]), "BR019", "aiperf:c4")
    assert (f["severity"], f["numbers"]["failed"], f["numbers"]["cancelled"]) == ("error", 3, 2)


def test_another_runs_summary_is_not_joined(real):
    records, summary = real(RECORDS), real(SUMMARY)  # 2 records at c2; 2 044 requests at c16
    tables = api.load([records, summary])
    assert list(tables.runs["run"]) == [run_name(str(records)), "aiperf:c16"]
    assert pd.isna(tables.runs["concurrency"].iloc[0])  # not the summary's 16
    assert tables.inputs[1].notes[-1] == (
        f"AIPerf: not joined to run {run_name(str(records))}: its summary counts 2044 "
        "requests, the records file holds 2"
    )


def test_a_synthetic_prompt_length_without_spread_is_the_runs_prompt_length(tmp_path, real):
    """AIPerf 0.13 states its synthetic input length in the summary's input_config: with no
    spread every prompt had it, so the run's prompt length is disclosed, not missing."""
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "profile_export.jsonl").write_bytes(real(RECORDS).read_bytes())
    doc = _summary_doc(2)
    synthetic = {"name": "main", "type": "synthetic", "entries": 8, "random_seed": 7}
    doc["input_config"]["datasets"] = [  # type: ignore[index]
        {**synthetic, "prompts": {"isl": {"mean": 128.0, "stddev": 0.0}, "osl": {"mean": 64.0}}}
    ]
    (folder / "profile_export_aiperf.json").write_text(json.dumps(doc))
    r = run(load(folder / "profile_export.jsonl"))
    assert r["prompt_tokens"] == 128
    assert "prompt_tokens 128" in " ".join(r["derived"])
    verdict = api.audit([folder / "profile_export.jsonl"])
    assert not any(u.startswith("prompt length") for u in verdict.undisclosed)
    # a spread, or prompts from a file, state no single length
    for dataset in (
        {**synthetic, "prompts": {"isl": {"mean": 128.0, "stddev": 16.0}}},
        {"name": "main", "type": "file", "path": "prompts.jsonl"},
    ):
        doc["input_config"]["datasets"] = [dataset]  # type: ignore[index]
        (folder / "profile_export_aiperf.json").write_text(json.dumps(doc))
        assert run(load(folder / "profile_export.jsonl"))["prompt_tokens"] is None


def test_a_rate_phase_and_lengths_asked_per_request(tmp_path, real):
    # AIPerf 0.10 writes a poisson phase's rate as "rate". It asks each request for its own
    # length and counts those past a threshold (osl_mismatch_count, min(5% of the length
    # asked, 50 tokens)): 2 of 2,044 past it does not say how many wrote exactly their length
    # (one token short is under it), so capped and natural stop cannot be told apart
    doc = json.loads(real(SUMMARY).read_text())
    doc["input_config"]["phases"] = [
        {"name": "warmup", "type": "poisson", "exclude_from_results": True, "rate": 4.0},
        {"name": "profiling", "type": "poisson", "requests": 2044, "rate": 6.5},
    ]
    doc["osl_mismatch_count"] = {"unit": "requests", "avg": 2.0}
    path = tmp_path / "profile_export_aiperf.json"
    path.write_text(json.dumps(doc))
    r = run(load(path))
    assert (r["request_rate"], r["concurrency"], r["stop"]) == (6.5, None, "unknown")
    assert not any("wrote exactly that length" in d for d in r["derived"])
    assert any(
        "osl_mismatch_count 2 counts those past min(5% of the length asked, 50 tokens), of 2044 "
        "completed; how many wrote exactly their length is not recorded" in d
        for d in r["derived"]
    )
    (stop,) = api.audit([path], select=["BR006"]).findings
    assert (str(stop.outcome), stop.message) == (
        "undecidable",
        "stop mode not stated; each request was asked for its own length, and the tool counts "
        "2 past its threshold, min(5% of the length asked, 50 tokens) of 2,044 completed, "
        "which does not say how many wrote exactly it (outputs 3–1,125 tokens, mean 263): "
        "without the distribution of the differences, capped and natural stop cannot be told "
        "apart",
    )


def test_n_streams_rates_use_the_summarys_own_mean(tmp_path, real):
    # a summary's per-user rate may be counted over fewer requests than completed (one request
    # of one token has none): N × its own mean, not its sum ÷ the completed requests
    doc = json.loads(real(SUMMARY).read_text())
    doc["output_token_throughput_per_user"]["count"] = 2043
    doc["output_token_throughput_per_user"]["avg"] = 233110.3738032954 / 2043
    path = tmp_path / "profile_export_aiperf.json"
    path.write_text(json.dumps(doc))
    (f,) = api.audit([path], select=["BR001"]).findings
    assert f.arithmetic[0] == "N × mean reported_tps = 16 × 114.1 = 1,825.6 tok/s"
    assert f.message == (
        "N × the mean reported rate (1,825.6) agrees with total ÷ wall (1,792.2 tok/s): the "
        "requests overlapped"
    )


def test_a_summarys_rates_are_not_said_to_be_absent(real):
    # BR001 quotes the summary's mean per-user rate; BR020, which needs each request's, says
    # the summary has only statistics over all requests, not that there are no rates
    (f,) = api.audit([real(SUMMARY)], select=["BR020"]).findings
    assert (str(f.outcome), f.message) == (
        "not-applicable",
        "no per-request reported rate (the tool's summary gives only statistics over all requests)",
    )


@pytest.mark.parametrize("longest", [-1.5625, 0.0])
def test_outputs_all_short_of_their_asked_length_are_a_natural_stop(tmp_path, real, longest):
    # anud18's agent runs: AIPerf asked each request for its expected length, and every one of
    # the 96 wrote less (osl_mismatch_diff_pct at most -1.6%, median -86.6%): the model ended
    # them, not the cap, though the extras are not recorded. With one output at exactly its
    # length (0.0%), that one may have been capped: undecided
    doc = json.loads(real(SUMMARY).read_text())
    del doc["input_config"]["endpoint"]["extra"]  # no ignore_eos either way
    completed = doc["request_count"]["avg"] - doc.get("error_request_count", {}).get("avg", 0)
    doc["osl_mismatch_diff_pct"] = {
        "unit": "%", "avg": -78.3, "p50": -86.572265625, "min": -97.75, "max": longest,
        "count": completed,
    }  # fmt: skip
    path = tmp_path / "profile_export_aiperf.json"
    path.write_text(json.dumps(doc))
    r = run(load(path))
    said = (
        f"stop natural: every one of the {completed:g} completed requests wrote fewer tokens than "
        "the length asked of it (osl_mismatch_diff_pct at most -1.6%, median -86.6%): the model "
        "ended them, not the cap"
    )
    if longest < 0:
        assert r["stop"] == "natural" and said in r["derived"]
    else:
        assert r["stop"] == "unknown" and not any(
            "osl_mismatch_diff_pct" in d for d in r["derived"]
        )


@pytest.mark.parametrize("longest", ["-9.47", "0.00"])
def test_a_summary_csv_with_every_output_short_of_its_asked_length_is_a_natural_stop(
    tmp_path, longest
):
    # the same agent runs' profile_export_aiperf.csv: the CSV writes no count per metric, but
    # its "OSL Mismatch Count" (96) equals the requests: every one wrote another length than
    # asked, and the largest difference (-9.47%) is below 0, so every one wrote fewer
    head = "Metric,avg,min,max,sum,p1,p5,p10,p25,p50,p75,p90,p95,p99,std"
    stats = [
        "OSL Mismatch Diff % (%),-78.77,-98.19,{longest},-7562.30,-96.25,-95.86,-94.92,-92.14,"
        "-87.48,-71.56,-52.10,-38.12,-13.09,19.52",
        "Output Sequence Length (tokens),434.71,37.00,1854.00,41732.00,76.90,84.75,104.00,"
        "161.00,256.50,582.50,981.00,1267.25,1779.90,399.82",
        "Request Latency (ms),2617.76,284.05,10683.64,251304.81,508.09,582.38,686.46,1038.46,"
        "1560.04,3393.58,5869.87,7053.48,10438.08,2294.58",
        "Time to First Token (ms),154.26,74.40,341.90,14809.38,78.61,88.37,92.10,117.29,136.49,"
        "189.90,224.47,248.81,292.50,53.98",
    ]
    totals = [
        "Metric,Value", "Benchmark Duration (sec),128.68", "OSL Mismatch Count,96.00",
        "Output Token Throughput (tokens/sec),324.31", "Request Count,96.00",
        "Total Output Sequence Length (tokens),41732.00",
    ]  # fmt: skip
    lines = [head, *(s.format(longest=longest) for s in stats), "", *totals, ""]
    path = tmp_path / "profile_export_aiperf.csv"
    path.write_bytes("\r\n".join(lines).encode())
    r = run(load(path))
    said = (
        "stop natural: every one of the 96 completed requests wrote fewer tokens than the "
        "length asked of it (osl_mismatch_diff_pct at most -9.5%, median -87.5%): the model "
        "ended them, not the cap"
    )
    if longest != "0.00":
        assert r["stop"] == "natural" and said in r["derived"]
    else:
        assert r["stop"] == "unknown"


# A summary shaped as AIPerf 0.10's profile_export_aiperf.json of a Poisson run of ShareGPT
# prompts (written here, numbers made up): AIPerf sends each request its dataset's output
# length as max_tokens. 93 requests wrote exactly it; three wrote fewer (−64.8%, −23.3% and
# one token of 260, −0.4%). AIPerf's osl_mismatch_count counts only the requests past its
# threshold, min(5% of the length asked, 50 tokens): 2, not 3.
_ASKED_WROTE = [(196, 69), (60, 46), (260, 259)] + [(100 + i * 6, 100 + i * 6) for i in range(93)]


def _percent_stats(values: list[float], unit: str) -> dict[str, object]:
    """Statistics as AIPerf computes them: numpy's linear percentiles, population std."""
    a = np.array(values, dtype=float)
    qs = (1, 5, 10, 25, 50, 75, 90, 95, 99)
    percentiles = dict(zip(qs, np.percentile(a, qs), strict=True))
    return {
        "unit": unit, "avg": float(a.mean()), "min": float(a.min()), "max": float(a.max()),
        "std": float(a.std()), "count": len(a), "sum": float(a.sum()),
        **{f"p{q}": float(v) for q, v in percentiles.items()},
    }  # fmt: skip


def _asked_per_request_doc() -> dict[str, object]:
    wrote = [float(w) for _, w in _ASKED_WROTE]
    diffs = [(w - a) / a * 100 for a, w in _ASKED_WROTE]
    return {
        "schema_version": "1.3",
        "aiperf_version": "0.10.0",
        "benchmark_duration": {"unit": "sec", "avg": 80.0},
        "request_count": {"unit": "requests", "avg": 96.0},
        "output_token_throughput": {"unit": "tokens/sec", "avg": sum(wrote) / 80.0},
        "total_osl": {"unit": "tokens", "avg": sum(wrote)},
        "output_sequence_length": _percent_stats(wrote, "tokens"),
        "osl_mismatch_diff_pct": _percent_stats(diffs, "%"),
        "osl_mismatch_count": {"unit": "requests", "avg": 2.0},
        "error_summary": [],
        "input_config": {
            "endpoint": {"type": "chat", "streaming": True, "extra": {"temperature": 0}},
            "phases": [{"name": "profiling", "type": "poisson", "requests": 96, "rate": 1.2}],
            "models": {"items": [{"name": "qwen"}]},
        },
    }


def _as_summary_csv(doc: dict[str, object], diff_row: str = "OSL Mismatch Diff % (%)") -> bytes:
    """The same run as AIPerf's profile_export_aiperf.csv: values to 2 decimals, no count."""
    head = "Metric,avg,min,max,sum,p1,p5,p10,p25,p50,p75,p90,p95,p99,std"
    rows = [head]
    for tag, name in (
        ("osl_mismatch_diff_pct", diff_row),
        ("output_sequence_length", "Output Sequence Length (tokens)"),
    ):
        s = doc[tag]
        assert isinstance(s, dict)
        rows.append(",".join([name, *(f"{s[k]:.2f}" for k in head.split(",")[1:])]))
    total = doc["total_osl"]
    assert isinstance(total, dict)
    rows += [
        "", "Metric,Value", "Benchmark Duration (sec),80.00", "OSL Mismatch Count,2.00",
        "Request Count,96.00", f"Total Output Sequence Length (tokens),{total['avg']:.2f}", "",
    ]  # fmt: skip
    return "\r\n".join(rows).encode()


EXACT_BOUND = (
    "stop mode not stated; each request was asked for its own length: at least 92 of 96 "
    "wrote exactly it (at most 93), and at least 3 wrote fewer tokens (at most 4; the tool "
    "counts 2 past its threshold, min(5% of the length asked, 50 tokens)) (outputs 46–652 "
    "tokens, mean 368): mostly capped, not a natural stop, but not one length either; the "
    "figure is for this mix of lengths"
)


def test_lengths_asked_per_request_are_bounded_from_the_difference_distribution(tmp_path):
    # the tool's count is thresholded: it never says how many wrote exactly their length.
    # The distribution of osl_mismatch_diff_pct does: the lowest (min), the second lowest
    # (p1 interpolates between them), a sum the two leave unexplained (one more below 0), and
    # p5 = 0 with nothing above 0 (at most 4 below 0)
    path = tmp_path / "profile_export_aiperf.json"
    path.write_text(json.dumps(_asked_per_request_doc()))
    r = run(load(path))
    assert r["stop"] == "unknown"
    s = r["summary"]
    assert (s["length_mismatches"], s["length_compared"]) == (2, 96)
    assert (s["length_short_min"], s["length_short_max"]) == (3, 4)
    assert (s["length_exact_min"], s["length_exact_max"]) == (92, 93)
    assert (s["length_over_min"], s["length_over_max"]) == (0, 0)
    (stop,) = api.audit([path], select=["BR006"]).findings
    assert (str(stop.outcome), stop.message) == ("fired", EXACT_BOUND)
    assert stop.numbers["length_mismatches"] == 2
    assert "ended_on_eos" not in stop.numbers  # a summary has no finish reasons to count
    assert stop.arithmetic == [
        "osl_mismatch_diff_pct over 96 requests: min −64.80%, max 0.00%, sum −88.51%",
        "second lowest = min + (p1 − min) ÷ 0.95 = −64.80 + (−25.41 − (−64.80)) ÷ 0.95 = −23.33%",
        "sum − the two lowest = −88.51 − (−64.80) − (−23.33) = −0.38%: one more below 0",
        "p5 = 0.00% with none above 0 (ranks 5–6 of 96): from rank 5 on none is below 0, so at "
        "most 4 are",
    ]


@pytest.mark.parametrize("diff_row", ["OSL Mismatch Diff % (%)", "OSL Mismatch Diff (%)"])
def test_the_summary_csv_of_the_same_run_reads_the_same(tmp_path, diff_row):
    # the CSV rounds to 2 decimals and writes no count (sum ÷ avg gives it): the same bounds,
    # proved with the rounding allowed for. Newer AIPerf names the row without the "%"
    path = tmp_path / "profile_export_aiperf.csv"
    path.write_bytes(_as_summary_csv(_asked_per_request_doc(), diff_row))
    s = run(load(path))["summary"]
    assert (s["length_compared"], s["length_short_min"], s["length_short_max"]) == (96, 3, 4)
    assert (s["length_exact_min"], s["length_exact_max"]) == (92, 93)
    (stop,) = api.audit([path], select=["BR006"]).findings
    assert (str(stop.outcome), stop.message) == ("fired", EXACT_BOUND)


def _aggregate_csv(tmp_path, old: str, new: str):
    text = AGGREGATE_CSV.read_text()
    assert old in text
    path = tmp_path / "profile_export_aiperf_aggregate.csv"
    path.write_text(text.replace(old, new))
    return path


@pytest.mark.parametrize("count", ["²", "٣", "9" * 500, "9" * 5000, "-3", "0", "2.5", "three"])
def test_an_aggregate_csv_run_count_that_is_no_count_is_refused(tmp_path, count):
    # "Successful Runs" is read as the number of profile runs behind the means; a superscript
    # digit, 5,000 digits or a count below one made an internal error or passed unsaid
    path = _aggregate_csv(tmp_path, "Successful Runs,3", f"Successful Runs,{count}")
    with pytest.raises(TraceError) as error:
        load(path)
    assert '"Successful Runs" is' in str(error.value)
    assert "a whole number of profile runs, at least 1" in str(error.value)
    assert f"{path}:" in str(error.value)


def test_an_aggregate_csv_run_count_given_twice_is_refused(tmp_path):
    path = _aggregate_csv(tmp_path, "Successful Runs,3", "Successful Runs,3\nSuccessful Runs,1")
    with pytest.raises(TraceError, match="given again"):
        load(path)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("benchmark_duration_avg,60.00", "request_count_avg,54.00,0.54,53.46,54.54,0.0100,"
         "0.3118,52.66,55.34,4.3027,requests\nbenchmark_duration_avg,60.00"),
        ("request_count_avg,54.00", "benchmark_duration_avg,30.00,0.00,30.00,30.00,0.0000,"
         "0.0000,30.00,30.00,4.3027,sec\nrequest_count_avg,54.00"),
    ],
    ids=["request_count", "duration"],
)  # fmt: skip
def test_an_aggregate_csv_metric_given_twice_is_refused(tmp_path, old, new):
    # the later row silently won: a duration of 30 s beside 60 s made 230.4 tok/s of 115.2
    with pytest.raises(TraceError, match="given again"):
        load(_aggregate_csv(tmp_path, old, new))


SPREAD_ROW = "output_token_throughput_avg,115.20,1.15,114.05,116.35"


@pytest.mark.parametrize(
    ("row", "wrong"),
    [
        ("output_token_throughput_avg,115.20,-1.15,114.05,116.35", "below 0"),
        ("output_token_throughput_avg,115.20,1.15,116.35,114.05", "above its max"),
        ("output_token_throughput_avg,115.20,1.15,200.00,300.00", "outside its min"),
    ],
    ids=["negative-std", "min-above-max", "mean-outside"],
)
def test_an_impossible_spread_of_the_profile_runs_is_refused(tmp_path, row, wrong):
    # BR016 passed on "at most ±-1.00%" and quoted a min above the max
    path = _aggregate_csv(tmp_path, SPREAD_ROW, row)
    with pytest.raises(TraceError, match=wrong):
        load(path)
    doc = json.loads(AGGREGATE.read_text())
    stats = doc["metrics"]["output_token_throughput_avg"]
    mean, std, lo, hi = (float(x) for x in row.split(",")[1:5])
    stats.update(mean=mean, std=std, min=lo, max=hi)
    other = tmp_path / "profile_export_aiperf_aggregate.json"
    other.write_text(json.dumps(doc))
    with pytest.raises(TraceError, match=wrong):
        load(other)


@pytest.mark.parametrize("count", ["3", True, [3], {"n": 3}, 0, -3, 2.5])
def test_an_aggregate_json_run_count_that_is_no_count_is_refused(tmp_path, count):
    # the means "across -3 profile runs", or across "n/a" of them, were read as one run
    doc = json.loads(AGGREGATE.read_text())
    doc["metadata"]["num_successful_runs"] = count
    path = tmp_path / "profile_export_aiperf_aggregate.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(TraceError, match="num_successful_runs"):
        load(path)


@pytest.mark.parametrize("trials", ["3", True, 0, -1, 1.5])
def test_a_sweep_trial_count_that_is_no_count_is_refused(tmp_path, trials):
    # a string "3" left the means over three trials read as one trial's run
    doc = json.loads(SWEEP.read_text())
    doc["metadata"]["num_trials_per_value"] = trials
    path = tmp_path / "profile_export_aiperf_sweep.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(TraceError, match="num_trials_per_value"):
        load(path)


@pytest.mark.parametrize("cell", ["nan", "NaN", "inf", "-Infinity", "1e400"])
def test_an_aggregate_csv_cell_that_is_not_finite_is_refused_for_what_it_is(tmp_path, cell):
    # a NaN duration was read as no duration: 'no "benchmark_duration_avg" row', untrue
    path = _aggregate_csv(
        tmp_path, "benchmark_duration_avg,60.00", f"benchmark_duration_avg,{cell}"
    )
    with pytest.raises(TraceError) as error:
        load(path)
    assert str(error.value) == (f'{path}:2: "mean" is "{cell}"; expected a finite number or empty')
    assert len(error.value.problems) == 1


@pytest.mark.parametrize("cell", ["nan", "inf", "1e400", "n/a"])
def test_a_summary_csv_cell_that_is_not_finite_is_refused(tmp_path, cell):
    # a NaN benchmark duration was audited (exit 0, insufficient data): a non-finite figure
    # must never reach a verdict
    text = CSV_013.read_text()
    line, old = next(
        (n, x) for n, x in enumerate(text.splitlines(), 1) if x.startswith("Benchmark Duration")
    )
    path = tmp_path / "profile_export_aiperf.csv"
    path.write_text(text.replace(old, f"Benchmark Duration (sec),{cell}", 1))
    with pytest.raises(TraceError) as error:
        load(path)
    assert str(error.value).startswith(
        f'{path}:{line}: "Benchmark Duration (sec)" "Value" is "{cell}"; expected a finite '
        "number or empty"
    )


def test_a_sweep_csv_cell_that_is_not_finite_is_refused_for_what_it_is(tmp_path):
    text = SWEEP_CSV.read_text()
    header, first = text.splitlines()[:2]
    column = next(
        c for c in header.split(",") if c.startswith("benchmark_duration") and c.endswith("_mean")
    )
    cells = first.split(",")
    cells[header.split(",").index(column)] = "inf"
    path = tmp_path / "sweep.csv"
    path.write_text(text.replace(first, ",".join(cells), 1))
    with pytest.raises(TraceError) as error:
        load(path)
    assert str(error.value) == f'{path}:2: "{column}" is "inf"; expected a finite number or empty'


@pytest.mark.parametrize(("count", "shown"), [(1e30, "1e+30"), (2**70, "1.1805916207174113e+21")])
@pytest.mark.parametrize("top", [False, True], ids=["metadata", "top-level"])
def test_an_aggregate_json_run_count_too_large_is_refused_by_the_files_key(
    tmp_path, count, shown, top
):
    # it was refused as "extra.profile_runs.count", a name the file does not hold (an integer
    # of more than 19 digits is read as a float, and quoted so)
    doc = json.loads(AGGREGATE.read_text())
    if top:
        del doc["metadata"]["num_successful_runs"]
        doc["num_successful_runs"] = count
    else:
        doc["metadata"]["num_successful_runs"] = count
    path = tmp_path / "profile_export_aiperf_aggregate.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(TraceError) as error:
        load(path)
    key = "num_successful_runs" if top else "metadata.num_successful_runs"
    assert str(error.value) == (
        f"{path}: {key} is {shown}; expected a whole number of profile runs, at least 1 and "
        "at most 2^63 − 1"
    )
