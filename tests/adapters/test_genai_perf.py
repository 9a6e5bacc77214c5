"""GenAI-Perf: perf_analyzer's raw profile_export.json (its documented layout; no public real file
was found) and genai-perf's summary."""

from __future__ import annotations

import json
import math

import pytest

from reporter import api
from reporter.errors import TraceError
from tests.adapters.conftest import HERE, load, run, stats_of

RAW = HERE / "genai-perf-profile_export.json"


def test_experiments_become_runs_with_exact_clocks():
    tables = load(RAW)
    assert tables.inputs[0].format == "genai-perf"
    assert list(tables.runs["run"]) == ["concurrency-2", "concurrency-4"]
    assert list(tables.runs["concurrency"]) == [2, 4]
    req = tables.requests
    c2 = req[req["run"] == "concurrency-2"]
    # epoch nanoseconds, rebased as integers: 2 ns apart stays 2 ns apart
    assert list(c2["t_send"]) == [0.0, 2e-09, 0.130000006]
    # the role-only first chunk, the usage chunk and [DONE] carry no content
    assert list(c2["n_chunks"]) == [4.0, 4.0, 4.0]
    assert c2["t_first"].iloc[0] == 0.060000123
    assert c2["t_end"].iloc[0] == 0.121500492  # the stream's last response ([DONE])
    assert list(c2["output_tokens"]) == [8.0, 8.0, 8.0]  # from the streamed usage
    assert list(c2["finish_reason"]) == ["length"] * 3
    assert c2["prompt_sha256"].nunique() == 1
    assert list(c2["source_line"]) == [9, 47, 85]
    r = run(tables, "concurrency-2")
    assert (r["stop"], r["output_tokens_requested"], r["min_tokens"]) == ("forced", 8, 8)
    assert (r["tool_version"], r["model_name"]) == ("2.40.0", "meta-llama/Llama-3.1-8B-Instruct")
    s = stats_of(tables)
    assert s.loc["concurrency-2", "aggregate_tps"] == 24 / 0.251500498


def test_without_usage_the_tokens_are_unknown():
    tables = load(RAW)
    s = stats_of(tables).loc["concurrency-4"]
    assert math.isnan(s["output_tokens"]) and math.isnan(s["aggregate_tps"])
    assert round(s["overlap"], 6) == 4.0  # the times are still there
    assert (
        "output tokens unknown for 4 of 4 requests: genai-perf re-tokenizes the text with a "
        "client tokenizer the file does not hold, and no usage was streamed"
    ) in run(tables, "concurrency-4")["derived"]


def test_summary(tmp_path):
    path = tmp_path / "profile_export_genai_perf.json"
    path.write_text(json.dumps({
        "request_throughput": {"unit": "requests/sec", "avg": 4.0},
        "request_latency": {"unit": "ms", "avg": 500.0, "p50": 480.0},
        "time_to_first_token": {"unit": "ms", "avg": 40.0, "p50": 38.0},
        "inter_token_latency": {"unit": "ms", "avg": 5.0},
        "output_token_throughput": {"unit": "tokens/sec", "avg": 400.0},
        "output_sequence_length": {"unit": "tokens", "avg": 100.0, "min": 90, "max": 110},
        "request_count": {"unit": "count", "avg": 40},
        "input_config": {"model_names": ["m"]},
    }))  # fmt: skip
    tables = load(path)
    s = stats_of(tables).iloc[0]
    assert (s["requests"], s["wall_s"], s["output_tokens"]) == (40, 10.0, 4000.0)
    assert s["aggregate_tps"] == 400.0
    assert s["in_flight"] == 2.0  # 40 × 0.5 s ÷ 10 s


def test_response_count_mismatch(tmp_path):
    doc = json.loads(RAW.read_text())
    doc["experiments"][0]["requests"][1]["response_outputs"].pop()
    path = tmp_path / "profile_export.json"
    path.write_text(json.dumps(doc, indent=2))
    with pytest.raises(TraceError) as err:
        api.load([path], "genai-perf")
    assert str(err.value) == (
        f'{path}:47: "response_outputs" has 6 items; expected one per response timestamp, 7 '
        "(perf_analyzer profile export request)"
    )


def test_payloads_that_are_not_strict_json_are_not_read(tmp_path):
    # NaN is not JSON: a request body holding one anywhere is not read (no requested length
    # from it), as the server it was sent to could not have read it either
    text = RAW.read_text(encoding="utf-8")
    assert '\\"max_tokens\\": 8,' in text
    text = text.replace('\\"max_tokens\\": 8,', '\\"max_tokens\\": 8, \\"temperature\\": NaN,')
    path = tmp_path / "profile_export.json"
    path.write_text(text, encoding="utf-8")
    first = str(load(RAW).runs["run"].iloc[0])
    assert run(load(RAW), first)["output_tokens_requested"] == 8
    assert run(load(path), first)["output_tokens_requested"] is None


def test_a_summary_without_a_request_count_is_not_said_to_hold_none(tmp_path):
    # older GenAI-Perf summaries give rates and latencies but no request_count: the run had
    # requests, how many the file does not say (not "0 requests")
    path = tmp_path / "profile_export_genai_perf.json"
    path.write_text(json.dumps({
        "request_throughput": {"unit": "requests/sec", "avg": 17.2},
        "request_latency": {"unit": "ms", "avg": 5767.4, "p50": 5778.7},
        "time_to_first_token": {"unit": "ms", "avg": 40.0, "p50": 38.0},
        "output_token_throughput": {"unit": "tokens/sec", "avg": 44190.0},
        "input_config": {"model_names": ["m"]},
    }))  # fmt: skip
    verdict = api.audit([path], select=["BR003"])
    (ladder,) = verdict.findings
    assert str(ladder.outcome) == "undecidable"
    assert ladder.message == "the summary gives no request count and no completion times"


def test_outputs_far_over_the_requested_length_are_not_called_close(tmp_path):
    # GenAI-Perf issue 298's summary, abridged: --output-tokens-mean 500 (stddev 0) to a Triton
    # TensorRT-LLM server, and every output was 2,522-2,619 tokens long
    path = tmp_path / "profile_export_genai_perf.json"
    path.write_text(json.dumps({
        "request_throughput": {"unit": "requests/sec", "avg": 17.222547659562533},
        "request_latency": {"unit": "ms", "avg": 5767.4, "p50": 5778.7},
        "time_to_first_token": {"unit": "ms", "avg": 173.2, "p50": 173.0},
        "inter_token_latency": {"unit": "ms", "avg": 2.18, "p50": 2.18},
        "output_token_throughput": {"unit": "tokens/sec", "avg": 44190.56002502682},
        "output_sequence_length": {"unit": "tokens", "avg": 2565.855, "min": 2522.0,
                                   "max": 2619.0},
        "input_sequence_length": {"unit": "tokens", "avg": 199.9, "min": 160, "max": 240},
        "input_config": {"model": ["ensemble"], "backend": "tensorrtllm",
                         "service_kind": "triton", "output_tokens_mean": 500,
                         "output_tokens_stddev": 0, "concurrency": 100},
    }))  # fmt: skip
    r = run(load(path))
    assert (r["output_tokens_requested"], r["engine_name"]) == (500, "tensorrt-llm")
    verdict = api.audit([path], select=["BR006", "BR017"])
    stop = next(f for f in verdict.findings if f.code == "BR006")
    assert str(stop.outcome) == "fired"
    assert stop.message == (
        "stop mode not stated, and the outputs are 2,522–2,619 tokens (mean 2,565.9), longer "
        "than the 500 requested: the requested length was not applied (or the tokens were "
        "counted another way), so the figure is not at the length asked for, and its stop "
        "mode is unknown"
    )
    assert stop.arithmetic == ["shortest output 2,522.0 ÷ requested 500 = 5.04×"]
    # the mean prompt the summary states is the run's context length
    context = next(f for f in verdict.findings if f.code == "BR017")
    assert str(context.outcome) == "passed"
    assert context.message == (
        "context 200 tokens (the summary's mean prompt length; context at the first decoded token)"
    )
    assert "prompt length" not in " ".join(verdict.undisclosed)


def test_genai_perfs_csv_is_refused_by_name_not_as_a_broken_aiperf_csv(tmp_path):
    # perf_analyzer issue 393's profile_export_genai_perf.csv, abridged: it was refused with
    # '"Benchmark Duration (sec)" is missing ... (AIPerf summary CSV)', naming the wrong tool
    path = tmp_path / "profile_export_genai_perf.csv"
    path.write_text(
        "Metric,avg,min,max,p99,p95,p90,p75,p50,p25\n"
        'Time To First Token (ms),"32,688.40",936.53,"69,427.64","66,402.05","59,014.50",'
        '"49,160.43","45,225.75","35,425.56","21,652.69"\n'
        "Inter Token Latency (ms),159.59,121.85,257.25,239.76,214.06,205.23,184.28,144.32,"
        "134.63\n\n"
        "Metric,Value\nOutput Token Throughput (per sec),410.43\n"
        "Request Throughput (per sec),1.70\nRequest Count (count),353.00\n"
    )
    with pytest.raises(TraceError) as err:
        api.load([path])
    assert str(err.value) == (
        f"{path}: this is GenAI-Perf's summary CSV (rates per sec, no benchmark duration), "
        "which is not read; expected GenAI-Perf's profile_export_genai_perf.json, written "
        "beside it"
    )


def test_a_concurrency_of_zero_is_refused_and_unknown_when_lenient(tmp_path):
    # no run had 0 concurrent requests: the file is refused as a native run record saying so
    # would be, and `convert` never writes a trace the audit then refuses
    doc = json.loads(RAW.read_text())
    doc["experiments"][1]["experiment"]["value"] = 0
    path = tmp_path / "profile_export.json"
    path.write_text(json.dumps(doc, indent=2))
    with pytest.raises(TraceError) as err:
        api.load([path], "genai-perf")
    [problem] = err.value.problems
    assert problem.path == str(path)
    assert problem.line is not None
    # the line the second experiment's record begins on
    assert '"experiment": {' in path.read_text().splitlines()[problem.line]
    assert problem.message == (
        "run 'concurrency-0': \"workload.concurrency\" is 0 as read from the file"
    )
    assert problem.expected is not None and problem.expected.startswith("a number ≥ 1")
    tables = api.load([path], "genai-perf", lenient=True)
    assert math.isnan(run(tables, "concurrency-0")["concurrency"])
    assert tables.inputs[0].skipped_reasons == ["run value a native record cannot hold: 1"]


@pytest.mark.parametrize(
    ("where", "stamp", "message"),
    [
        (2, 0, '"response_timestamps" go backwards'),
        (0, 1, '"response_timestamps" start before "timestamp" (the send)'),
    ],
)
def test_response_timestamps_out_of_order_are_refused(tmp_path, where, stamp, message):
    # a response stamped before the one before it, or before its request was sent, is no
    # time a response came back at (convert would write chunk times the audit refuses)
    doc = json.loads(RAW.read_text())
    doc["experiments"][0]["requests"][1]["response_timestamps"][where] = stamp
    path = tmp_path / "profile_export.json"
    path.write_text(json.dumps(doc, indent=2))
    with pytest.raises(TraceError) as err:
        api.load([path], "genai-perf")
    [problem] = err.value.problems
    assert problem.message == message
    assert problem.line is not None
    tables = api.load([path], "genai-perf", lenient=True)
    assert len(tables.requests) == 6
