"""SGLang bench_serving lines: the real files' figures (FORMATS.md §11b), --output-details,
the Infinity token, and malformed lines."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from reporter import api
from reporter.errors import TraceError
from tests.adapters.conftest import HERE, load, run, stats_of

C8 = "sglang/tonyli15-sglang055-qwen25-3b-agg-n50-c8.jsonl"
N200 = "sglang/tonyli15-sglang055-agg-local-n200.jsonl"


def test_concurrency_is_little_law_at_max_concurrency_8(real):
    assert b'"request_rate": Infinity' in real(C8).read_bytes()
    tables = load(real(C8))
    assert tables.inputs[0].format == "sglang"
    r = run(tables)
    assert (r["run"], r["concurrency"], r["request_rate"]) == (
        "agg_n50_in128_out64_c8",
        8,
        math.inf,
    )
    assert r["extra"]["request_rate"] == "inf"
    s = stats_of(tables).iloc[0]
    # 50 × 0.3069 s ÷ 1.971 s, which SGLang itself wrote as `concurrency`
    assert round(s["in_flight"], 2) == 7.78 == round(r["summary"]["tool_concurrency"], 2)
    assert round(s["aggregate_tps"], 1) == 710.8  # 1401 tokens ÷ 1.971 s
    assert math.isnan(s["failed"])  # SGLang does not write a failure count
    assert (r["engine_name"], r["engine_version"], r["spec_enabled"]) == (
        "sglang", "0.5.5.post3", False,
    )  # fmt: skip
    assert r["model_name"] == "Qwen/Qwen2.5-3B-Instruct"
    assert (
        "output tokens as the tool counted them (1401: the server's count, or the length "
        "asked for where a client falls back to it); re-tokenized from the text the client "
        "received: 1400" in (r["derived"])
    )


def test_two_hundred_at_once(real):
    tables = load(real(N200))
    s = stats_of(tables).iloc[0]
    assert run(tables)["concurrency"] == 200
    assert round(s["in_flight"], 1) == 168.1
    assert round(s["aggregate_tps"], 1) == 7420.1


def test_output_details_give_request_rows():
    tables = load(HERE / "sglang-output-details.jsonl")
    req = tables.requests
    assert list(req["output_tokens"]) == [16, 16, 16, 0]
    assert list(req["n_chunks"][:3]) == [16.0] * 3
    assert list(req["ok"]) == [True, True, True, False]
    assert req["error"][3].endswith("ServerDisconnectedError: Server disconnected\n")
    r = run(tables)
    assert (r["output_tokens_requested"], r["prompt_tokens"]) == (16, 128)  # range ratio 1.0
    s = stats_of(tables).iloc[0]
    assert (s["requests"], s["failed"], s["aggregate_tps"]) == (4, 1, 96.0)


def test_bad_line(tmp_path):
    good = (HERE / "sglang-output-details.jsonl").read_text()
    path = tmp_path / "bench.jsonl"
    path.write_text(good + '{"backend": "sglang", "duration": NaN, "completed": 3}\n')
    with pytest.raises(TraceError) as err:
        api.load([path], "sglang")
    assert str(err.value).splitlines() == [
        f'{path}:2: "duration" is NaN; expected a number of seconds ≥ 0 (SGLang bench_serving '
        "result)",
        f'{path}:2: "total_output_tokens" is missing; expected a whole number ≥ 0 (SGLang '
        "bench_serving result)",
    ]


BOWEN_REPEATS = "sglang/bowenwan6-benchserving-vllm-backend-c16-repeats"
BOWEN_TWO_LINES = "sglang/bowenwan6-sglang-oai-c1-two-lines-same-settings.jsonl"


def test_c16_repeats_in_three_files(real):
    paths = [real(f"{BOWEN_REPEATS}/caseC_batched_vllm_rep{i}.json") for i in (1, 2, 3)]
    tables = api.load(paths)
    runs = tables.runs
    assert len(runs) == 3
    # one setting repeated: N 16, every request at once up to it, the same dataset
    assert list(runs["concurrency"]) == [16] * 3
    assert list(runs["request_rate"]) == [math.inf] * 3
    assert list(runs["dataset"]) == ["autobench"] * 3
    # random_input_len / random_output_len (1024) describe nothing for dataset "autobench"
    assert runs["output_tokens_requested"].isna().all() and runs["prompt_tokens"].isna().all()
    r = dict(runs.iloc[0])
    assert (
        "requested lengths not recorded: the dataset is 'autobench', so random_input_len 1024 "
        "and random_output_len 1024 describe nothing that was sent"
    ) in r["derived"]
    assert r["summary"]["tool_peak_concurrency"] == 48  # 3× the client limit: a bucket count
    s = stats_of(tables)
    # SOURCES.md round 2: 256,000 tokens each; 2,163.3 / 2,181.7 / 2,161.6; Little 15.91 /
    # 15.95 / 15.96; 128 tokens per request
    assert list(s["output_tokens"]) == [256000] * 3
    assert list(s["aggregate_tps"]) == pytest.approx([2163.3, 2181.7, 2161.6], abs=0.1)
    assert list(s["in_flight"]) == pytest.approx([15.91, 15.95, 15.96], abs=0.01)
    assert list(s["out_mean"]) == [128.0] * 3
    # re-tokenizing the text gives 12.7–12.8% fewer tokens than the server counted
    retokenized = [x["extra"]["total_output_tokens_retokenized"] for _, x in runs.iterrows()]
    assert retokenized == [223505, 223312, 223329]


def test_two_lines_with_the_same_settings(real):
    tables = load(real(BOWEN_TWO_LINES))
    runs = tables.runs
    assert list(runs["run"]) == ["sglang-oai:infqps:c1", "sglang-oai:infqps:c1#2"]
    settings = ["concurrency", "request_rate", "dataset", "output_tokens_requested", "group"]
    first, second = (dict(r) for _, r in runs.iterrows())
    assert all(first[k] == second[k] or (first[k] is None and second[k] is None) for k in settings)
    assert (first["concurrency"], first["request_rate"]) == (1, math.inf)
    # bench_serving sends ignore_eos unless told not to, and the line does not say which
    assert first["stop"] == "unknown"
    s = stats_of(tables)
    # SOURCES.md: 400 requests, 51,200 tokens each; 175.87 and 175.63 tok/s; Little 1.00
    assert list(s["requests"]) == [400, 400] and list(s["output_tokens"]) == [51200] * 2
    assert list(s["aggregate_tps"]) == pytest.approx([175.87, 175.63], abs=0.01)
    assert list(s["in_flight"]) == pytest.approx([1.00, 1.00], abs=0.005)


def test_range_ratio_records_the_requested_range(real):
    tables = api.load([real(N200), real(C8)])
    runs = tables.runs.set_index("run")
    # random_range_ratio 0.0: each request's length drawn from [0, len]
    assert (
        runs.at["agg_local", "output_tokens_requested_min"],
        runs.at["agg_local", "output_tokens_requested"],
    ) == (0, 128)
    assert pd.isna(runs.at["agg_local", "prompt_tokens"])  # prompts drawn from [0, 512] too
    s = stats_of(tables)
    assert round(s.loc["agg_local", "out_mean"], 1) == 65.8  # 13,162 ÷ 200
    assert round(s.loc["agg_n50_in128_out64_c8", "out_mean"], 1) == 28.0
    verdict = api.audit([real(N200)])
    (finding,) = [f for f in verdict.findings if f.code == "BR006"]
    assert finding.fired
    assert finding.message == (
        "each request's output length was drawn from [0, 128] tokens (mean asked for ≈64); the "
        "outputs average 65.8: the figure is for outputs of that mean, not of 128 tokens"
    )


def test_request_rates_datasets_and_a_range_below_its_lower_end():
    tables = load(HERE / "sglang-rate-sweep-range-ratio.jsonl")
    runs = tables.runs
    assert list(runs["request_rate"]) == [4.0, 8.0, 4.0]  # the open-loop load axis
    assert runs["concurrency"].isna().all()  # no max_concurrency: not a closed loop
    assert list(runs["dataset"]) == ["random", "random", "sharegpt"]
    assert list(runs["output_tokens_requested_min"][:2]) == [64, 64]
    assert list(runs["output_tokens_requested"][:2]) == [128, 128]
    assert pd.isna(runs["output_tokens_requested"][2])  # sharegpt: random_* mean nothing
    verdict = api.audit([HERE / "sglang-rate-sweep-range-ratio.jsonl"])
    br006 = {f.subject: f for f in verdict.findings if f.code == "BR006"}
    assert br006["sglang:4qps"].fired and br006["sglang:4qps"].message == (
        "each request's output length was drawn from [64, 128] tokens, yet the outputs average "
        "62.0, below the range's lower end: not one length, and answers stopped before their "
        "drawn length (natural stop)"
    )
    assert str(br006["sglang:4qps#2"].outcome) == "undecidable"


def test_server_info_shows_speculation_off_but_does_not_state_it(real):
    # server_info.speculative_algorithm is null: SGLang's record of the server, read as "off"
    r = run(load(real(C8)))
    assert r["spec_enabled"] == False  # noqa: E712 (a numpy bool)
    assert r["spec_source"] == "server_info.speculative_algorithm null"
    verdict = api.audit([real(C8)], select=["BR011"])
    (f,) = verdict.findings
    assert str(f.outcome) == "passed"
    assert f.message == (
        "speculative decoding off (inferred: server_info.speculative_algorithm null)"
    )


#: A bench_serving line of the fewest fields, for tests that add the ones they are about.
LINE = {
    "backend": "sglang", "dataset_name": "random", "request_rate": 1.0,
    "max_concurrency": 1, "duration": 10.0, "completed": 10, "total_input_tokens": 1000,
    "total_output_tokens": 640,
}  # fmt: skip
#: The same with EAGLE speculation, as server_info and accept_length say it.
SPECULATIVE = LINE | {
    "accept_length": 2.4,
    "server_info": {"speculative_algorithm": "EAGLE", "version": "0.5.5"},
}


def test_an_accept_length_shows_speculation_on(tmp_path):
    line = SPECULATIVE
    path = tmp_path / "sglang.jsonl"
    path.write_text(json.dumps(line) + "\n")
    r = run(load(path, "sglang"))
    assert (r["spec_enabled"], r["spec_method"]) == (True, "EAGLE")
    assert r["spec_source"] == "accept_length 2.40"


def test_without_server_info_no_version_is_said_to_be_recorded(tmp_path):
    line = LINE
    path = tmp_path / "sglang.jsonl"
    path.write_text(json.dumps(line) + "\n" + json.dumps(line | {"server_info": None}) + "\n")
    runs = load(path, "sglang").runs
    for derived in runs["derived"]:
        assert "tool version not recorded, nor the server's (no server_info)" in derived


def test_first_token_times_the_client_never_took_are_unknown(tmp_path):
    # sglang issue 12389: 300 requests of 250,000-token prompts at N=16; the server counted
    # 300,000 output tokens, the client re-tokenized none and wrote 0.0 for every TTFT and ITL
    # statistic. BR008 had passed "prompt processing took at most 0.0% of the wall clock"
    line = LINE | {
        "request_rate": float("inf"), "max_concurrency": 16, "duration": 91.82,
        "completed": 300, "total_input_tokens": 75_000_000, "total_output_tokens": 300_000,
        "total_output_tokens_retokenized": 0, "mean_e2e_latency_ms": 4825.6,
        "median_e2e_latency_ms": 4825.6, "mean_ttft_ms": 0.0, "median_ttft_ms": 0.0,
        "p99_ttft_ms": 0.0, "mean_itl_ms": 0.0, "median_itl_ms": 0.0, "mean_tpot_ms": 0.0,
        "median_tpot_ms": 0.0,
    }  # fmt: skip
    path = tmp_path / "bench.jsonl"
    path.write_text(json.dumps(line) + "\n")  # request_rate Infinity, as SGLang writes it
    summary = run(load(path))["summary"]
    assert summary["sum_latency_s"] == pytest.approx(300 * 4.8256)
    assert all(summary[k] is None for k in summary if any(m in k for m in ("ttft", "itl", "tpot")))
    verdict = api.audit([path], select=["BR003", "BR008"])
    assert {f.code: str(f.outcome) for f in verdict.findings} == {
        "BR003": "undecidable", "BR008": "undecidable",
    }  # fmt: skip


def test_keys_bench_serving_does_not_write_are_settings(tmp_path):
    # SGLang-dLoRA's fork adds num_instances (absent on its first line, 2 on the others):
    # the lines were "sharing every setting", and BR016 called the three repeats. A key
    # bench_serving writes itself (a statistic, a total, a throughput) stays out of it
    first = LINE | {
        "architecture": "sglang", "p95_itl_ms": 3.0, "total_throughput": 90.0,
        "total_output_tokens_retokenized": 640,
    }  # fmt: skip
    second = first | {"num_instances": 2, "instance_load_distribution": {"0": 50, "1": 50}}
    third = second | {"duration": 11.0, "p95_itl_ms": 4.0, "total_throughput": 80.0}
    path = tmp_path / "bench.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in (first, second, third)))
    verdict = api.audit([path])
    assert sorted(len(g.runs) for g in verdict.groups) == [1, 2]
    (pair,) = [g for g in verdict.groups if len(g.runs) == 2]
    assert "num_instances 2" in pair.why and "architecture sglang" in pair.why
    assert "p95_itl_ms" not in pair.why and "total_throughput" not in pair.why


#: `python -m sglang.bench_one_batch` lines, as a repository committed them (result.jsonl):
#: one static batch of 32 sequences, prefill then output_len − 1 decode steps
ONE_BATCH = [
    {
        "run_name": "default", "batch_size": 32, "input_len": 256, "output_len": 32,
        "prefill_latency": 0.1867663860321045, "prefill_throughput": 43862.2825768649,
        "median_decode_latency": 0.00800180435180664,
        "median_decode_throughput": 3999.0980275311363, "total_latency": 0.43756580352783203,
        "overall_throughput": 21061.97496627225,
    },
    {
        "run_name": "default", "batch_size": 32, "input_len": 1349, "output_len": 79,
        "prefill_latency": 1.0352277755737305, "prefill_throughput": 41699.03572774213,
        "median_decode_latency": 0.00967264175415039,
        "median_decode_throughput": 3308.2999260537345, "total_latency": 1.79437255859375,
        "overall_throughput": 25466.283342970848,
    },
]  # fmt: skip


def test_bench_one_batch_lines_are_read_as_one_static_batch_each(tmp_path):
    # the file was refused ("could not tell the format") though it holds every figure of
    # the run: 32 sequences × 32 tokens in 0.4376 s, 0.1868 s of it the batch's prefill
    path = tmp_path / "result.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in ONE_BATCH))
    tables = load(path)
    assert tables.inputs[0].format == "sglang"
    r = run(tables, "default:b32:in256:out32")
    assert (r["concurrency"], r["stop"], r["spec_enabled"]) == (32, "forced", False)
    assert r["summary"]["mean_ttft_s"] == pytest.approx(0.18677, abs=1e-5)
    # (0.43757 − 0.18677) s ÷ 31 steps: every sequence's time per output token
    assert r["summary"]["mean_tpot_s"] == pytest.approx(0.0080903, abs=1e-6)
    s = stats_of(tables).loc["default:b32:in256:out32"]
    assert round(s["aggregate_tps"], 1) == 2340.2  # 32 × 32 ÷ 0.43757 s
    verdict = api.audit([path], select=["BR003", "BR008"])
    outcomes = {(f.code, f.subject): str(f.outcome) for f in verdict.findings}
    assert outcomes[("BR003", "default:b32:in256:out32")] == "passed"
    # the batch's prefill took 0.1868 s of the 0.4376 s: 43% of the wall, timed by the tool
    (prefill,) = [
        f for f in verdict.findings if f.code == "BR008" and f.subject == "default:b32:in256:out32"
    ]
    assert str(prefill.outcome) == "fired"
    assert "(43% > 30%)" in prefill.message


def test_bench_one_batch_server_output_throughput_leaves_out_the_first_tokens(tmp_path):
    # bench_one_batch_server (with last_gen_throughput: streamed) writes batch × output_len ÷
    # (latency − the last first-token time): 2.1 million tok/s for 819,200 tokens in 70.19 s
    line = {
        "run_name": "default", "batch_size": 8192, "input_len": 32, "output_len": 100,
        "latency": 70.1871, "output_throughput": 2103963.11, "overall_throughput": 15406.58,
        "last_gen_throughput": 1038.5,
    }  # fmt: skip
    repeat = line | {"latency": 69.1983, "output_throughput": 1801403.55}
    path = tmp_path / "result.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in (line, repeat)))
    tables = load(path)
    r = run(tables, "default:b8192:in32:out100")
    assert r["tool_name"] == "sglang bench_one_batch_server"
    assert r["summary"].get("sum_latency_s") is None  # sequences may end before the batch
    assert any("(69.80 s of the 70.19 s)" in d for d in r["derived"])
    assert round(stats_of(tables).loc["default:b8192:in32:out100", "aggregate_tps"], 1) == 11671.7
    verdict = api.audit([path])
    assert [len(g.runs) for g in verdict.groups] == [2]  # repeats of one point


def test_the_one_batch_figures_say_how_the_tool_computed_them(tmp_path):
    # the aggregate each line states, its key, and how it differs from total ÷ wall: decode
    # only (offline: batch ÷ the median step; server, streamed: after the last first token)
    streamed = {
        "run_name": "s", "batch_size": 1016, "input_len": 1024, "output_len": 8192,
        "latency": 2688.9099, "output_throughput": 3412.91, "overall_throughput": 3482.25,
        "last_ttft": 250.2049, "last_gen_throughput": 425.93, "acc_length": -1.0,
    }  # fmt: skip
    # an older server line, not streamed: output_throughput = batch × output_len ÷ latency
    whole = {
        "run_name": "w", "batch_size": 8, "input_len": 32, "output_len": 100,
        "latency": 10.0, "output_throughput": 80.0, "overall_throughput": 105.6,
    }  # fmt: skip
    path = tmp_path / "result.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in (OFFLINE_BATCH, streamed, whole)))
    tables = load(path)
    offline = run(tables, "default:b8:in1024:out16")["summary"]
    assert (offline["tool_aggregate_tps"], offline["tool_aggregate_field"]) == (
        672.3, "median_decode_throughput",
    )  # fmt: skip
    assert offline["tool_aggregate_how"] == (
        "batch_size ÷ the median decode step: decode alone, without the prefill"
    )
    server = run(tables, "s:b1016:in1024:out8192")["summary"]
    assert (server["tool_aggregate_tps"], server["tool_aggregate_field"]) == (
        3412.91, "output_throughput",
    )  # fmt: skip
    assert server["tool_aggregate_how"] == (
        "batch_size × output_len ÷ (latency − the batch's last first-token time): it leaves "
        "out the prefill and any wait"
    )
    plain = run(tables, "w:b8:in32:out100")["summary"]
    assert plain["tool_aggregate_field"] == "output_throughput"
    assert "tool_aggregate_how" not in plain  # total ÷ wall itself
    notes = {r.id: r.stated_aggregate_note for r in api.audit([path]).runs}
    assert notes["w:b8:in32:out100"] is None
    assert notes["s:b1016:in1024:out8192"] is not None
    assert notes["s:b1016:in1024:out8192"].startswith(
        "the file states 3,412.91 tok/s (output_throughput), 1.10× total ÷ wall (3,095.3): "
    )


def test_a_value_nested_deeper_than_a_native_record_may_is_refused(tmp_path):
    # a one-line document is parsed whole (orjson reads 1,024 levels), but the run it makes
    # must be one convert can write and the audit read back: at most 64 levels
    record = json.loads((HERE / "sglang-output-details.jsonl").read_text().splitlines()[0])
    record["backend"] = json.loads("[" * 64 + "0" + "]" * 64)
    path = tmp_path / "result.jsonl"
    path.write_text(json.dumps(record) + "\n")
    with pytest.raises(TraceError) as err:
        api.load([path], "sglang")
    [problem] = err.value.problems
    assert problem.message.endswith("'backend' is nested 65 deep")
    assert problem.expected == "at most 64 levels of [ and {"
    tables = api.load([path], "sglang", lenient=True)
    assert tables.inputs[0].skipped_reasons == ["run value a native record cannot hold: 1"]
    converted = tmp_path / "converted.jsonl"
    api.convert_file(path, str(converted), lenient=True)
    assert len(api.load([converted]).runs) == 1


#: A bench_one_batch line: 8 sequences of 1,024 prompt tokens, 16 output tokens each.
OFFLINE_BATCH = {
    "run_name": "default", "batch_size": 8, "input_len": 1024, "output_len": 16,
    "prefill_latency": 0.31, "prefill_throughput": 26425.8,
    "median_decode_latency": 0.0119, "median_decode_throughput": 672.3,
    "total_latency": 0.4885, "overall_throughput": 17031.1,
}  # fmt: skip


def test_bench_one_batch_prefill_rate_is_said_to_come_from_its_own_timing(tmp_path):
    # the adapter turns the line's prefill_latency into the run's prefill rate; no probe record
    # is in the file, so BR008 and the report name the line's timing, not "probe at"
    path = tmp_path / "result.jsonl"
    path.write_text(json.dumps(OFFLINE_BATCH) + "\n")
    verdict = api.audit([str(path)], select=["BR008"])
    (prefill,) = [f for f in verdict.findings if f.code == "BR008"]
    (source,) = [a for a in prefill.arithmetic if "rate from" in a]
    assert "probe" not in source
    assert source.endswith(
        f"(rate from the batch's own prefill timing at {path}:1: batch_size × input_len ÷ "
        "prefill_latency = 8 × 1,024 ÷ 0.3100 s)"
    )
    assert verdict.runs[0].prefill_rate_source == source.split("(rate from ", 1)[1][:-1]


def test_bench_one_batch_forced_length_is_decided(tmp_path):
    # bench_one_batch forces every sequence to output_len tokens (ignore_eos): the line has no
    # per-sequence rows, but the run's summary gives each of the 8 sequences 16 tokens
    path = tmp_path / "result.jsonl"
    path.write_text(json.dumps(OFFLINE_BATCH) + "\n")
    (forced,) = api.audit([str(path)], select=["BR007"]).findings
    assert str(forced.outcome) == "passed"
    assert forced.message == (
        "all 8 requests wrote the requested 16 tokens (the run's summary: 16 tokens each)"
    )
    assert forced.numbers["shortest"] == forced.numbers["longest"] == 16


def test_bench_one_batch_notes_are_short_enough_to_be_shown_whole(tmp_path):
    # the reports cut a note past MAX_SHOWN characters: each note says one thing, in full
    from reporter.render.common import MAX_SHOWN

    server = {
        "run_name": "default", "batch_size": 8192, "input_len": 32, "output_len": 100,
        "latency": 70.19, "ttft": 69.8, "input_throughput": 1000.0,
        "output_throughput": 2100000.0, "overall_throughput": 2000.0,
        "last_gen_throughput": 5000.0, "last_ttft": 69.8, "acc_length": -1,
    }  # fmt: skip
    path = tmp_path / "result.jsonl"
    path.write_text(json.dumps(OFFLINE_BATCH) + "\n" + json.dumps(server) + "\n")
    notes = [d for r in api.audit([str(path)]).runs for d in r.derived]
    assert len(notes) >= 10
    assert all(len(note) <= MAX_SHOWN for note in notes), max(notes, key=len)


def _wall_finding(tmp_path: Path, line: dict[str, Any]) -> Any:
    """BR009's finding on a result file of this one line."""
    path = tmp_path / "result.jsonl"
    path.write_text(json.dumps(line) + "\n")
    (wall,) = api.audit([str(path)], select=["BR009"]).findings
    return wall


def test_bench_one_batch_wall_is_its_prefill_and_decode_steps(tmp_path):
    # all 8 sequences are admitted and prefilled in one pass (nothing waits for a slot), so
    # the batch's 0.31 s prefill is every sequence's time to first token; 15 decode steps of
    # 0.0119 s follow (the first of the 16 tokens came from the prefill): 0.4885 s, the wall.
    # BR009 called this undecidable, saying the TTFT "may include waiting for a slot"
    wall = _wall_finding(tmp_path, OFFLINE_BATCH)
    assert "slot" not in wall.message
    assert str(wall.outcome) == "passed"
    assert wall.message == (
        "TTFT + decode explain the wall: predicted 0.49 s, measured 0.49 s (0.0% apart)"
    )
    assert wall.arithmetic[0] == (
        "predicted wall = the batch's one TTFT (8 requests prefilled together) 0.31 + "
        "(longest output 16 − 1, its first token from the prefill) ÷ median decode 84.03 "
        "= 0.49 s"
    )
    assert wall.numbers["predicted_wall_s"] == pytest.approx(0.4885)


def test_bench_one_batch_of_two_tokens_is_not_said_to_be_short_of_its_prediction(tmp_path):
    # one sequence, 2 tokens: a 20 ms prefill, then one 20 ms decode step. Counting the first
    # token as decoded too (16 tokens ÷ the rate of one step) would predict 60 ms against the
    # 40 ms wall, "33% shorter", of a wall that is exactly prefill + its one step
    line = OFFLINE_BATCH | {
        "batch_size": 1, "input_len": 32, "output_len": 2, "prefill_latency": 0.02,
        "median_decode_latency": 0.02, "median_decode_throughput": 50.0,
        "total_latency": 0.04,
    }  # fmt: skip
    wall = _wall_finding(tmp_path, line)
    assert str(wall.outcome) == "passed"
    assert wall.arithmetic[0] == (
        "predicted wall = the batch's one TTFT (its one request) 0.02 + (longest output 2 − 1, "
        "its first token from the prefill) ÷ median decode 50.00 = 0.04 s"
    )


def test_bench_one_batch_of_one_token_is_its_prefill(tmp_path):
    # output_len 1: the prefill yields each sequence's only token, no decode step follows, so
    # the wall is the prefill and no decode rate is needed (it was undecidable for want of one)
    line = {
        "run_name": "default", "batch_size": 4, "input_len": 512, "output_len": 1,
        "prefill_latency": 0.05, "prefill_throughput": 40960.0, "total_latency": 0.05,
        "overall_throughput": 40960.0,
    }  # fmt: skip
    wall = _wall_finding(tmp_path, line)
    assert str(wall.outcome) == "passed"
    assert wall.arithmetic[0] == (
        "predicted wall = the batch's one TTFT (4 requests prefilled together) 0.05 + no decode "
        "step (each request's one token is the prefill's) = 0.05 s"
    )


def test_bench_one_batch_server_line_makes_no_claim_about_waiting(tmp_path):
    # the server schedules the batch's sequences as it likes: nothing says they were admitted
    # at once, and the line times no first token, so BR009 stays undecidable, without a hedge
    line = {
        "run_name": "default", "batch_size": 64, "input_len": 128, "output_len": 32,
        "latency": 3.2, "output_throughput": 640.0, "overall_throughput": 3200.0,
    }  # fmt: skip
    wall = _wall_finding(tmp_path, line)
    assert str(wall.outcome) == "undecidable"
    assert "slot" not in wall.message


def test_bench_one_batch_ttft_is_the_batchs_one_not_a_percentile(tmp_path):
    # prefill_latency is one timing of the whole batch, not the tool's median of per-request
    # TTFTs: the latency table showed it as "310.0 / n/a / n/a" under "the tool's own
    # percentiles". It is shown once, said to be the batch's; the median decode step stays
    # the tool's own p50 of the gaps between tokens
    from reporter.render.context import build_context
    from reporter.render.html import render_html_context
    from reporter.render.text import render_text

    path = tmp_path / "result.jsonl"
    path.write_text(json.dumps(OFFLINE_BATCH) + "\n")
    verdict = api.audit([str(path)])
    # the page without its charts: the latency table is what is looked at
    page = render_html_context(build_context(verdict, charts=False))
    text = render_text(verdict)
    assert "310.0 / n/a / n/a" not in page
    assert "310.0 / n/a / n/a" not in text
    (run_,) = verdict.runs
    assert run_.latency["ttft_s"] == {"p50": None, "p90": None, "p99": None}
    assert run_.latency["itl_s"]["p50"] == pytest.approx(0.0119)
    assert run_.batch_ttft_s == pytest.approx(0.31)
    assert verdict.to_dict()["runs"][0]["batch_ttft_s"] == pytest.approx(0.31)
    cells = '<td class="num">310.0 (whole batch)</td><td class="num">11.9 / n/a / n/a</td>'
    assert cells in page
    assert "310.0 (whole batch)" in text and "11.9 / n/a / n/a" in text
    note = (
        "(whole batch): the batch's one time to first token, timed once by the tool (its "
        "sequences were prefilled together, in one pass), not a percentile"
    )
    assert f"  {note}" in text
    escaped = note.replace("'", "&#39;")  # as the report's escaping writes it
    assert f'<p class="note">{escaped}</p>' in page


def test_a_converted_bench_one_batch_keeps_its_batch_ttft(tmp_path):
    path = tmp_path / "result.jsonl"
    path.write_text(json.dumps(OFFLINE_BATCH) + "\n")
    converted = tmp_path / "converted.jsonl"
    api.convert_file(path, str(converted))
    verdict = api.audit([converted], select=["BR009"])
    (wall,) = verdict.findings
    assert str(wall.outcome) == "passed"
    assert verdict.runs[0].batch_ttft_s == pytest.approx(0.31)


#: One request of SGLang's LoRA benchmark client (benchmark/lora/lora_bench.py, which
#: imports bench_serving's metrics), as a public fork's result line has it: the /generate
#: answer came in one piece, the client counted the length it asked for (285) and
#: re-tokenized the 3 tokens of text it got back.
ONE_PIECE = {
    "backend": "sglang", "request_rate": float("inf"), "total_input_tokens": 42,
    "total_output_tokens": 285, "total_output_tokens_retokenized": 3,
    "mean_e2e_latency_ms": 97.98683994449675, "median_e2e_latency_ms": 97.98683994449675,
    "median_ttft_ms": 98.00630086101592, "median_itl_ms": 0.0,
    "output_throughput": 2894.8968119024844, "random_input_len": 1024,
    "random_output_len": 128, "random_range_ratio": 0.0, "duration": 0.09844910493120551,
    "completed": 1,
}  # fmt: skip


def test_a_ttft_just_past_the_end_times_an_answer_that_came_in_one_piece(tmp_path):
    path = tmp_path / "bench.jsonl"
    path.write_text(json.dumps(ONE_PIECE) + "\n")
    r = run(load(path))
    summary = r["summary"]
    assert all(summary[k] is None for k in summary if any(m in k for m in ("ttft", "itl", "tpot")))
    assert (
        "median_ttft_ms 98.006 is 0.019 ms past median_e2e_latency_ms 97.987: the client "
        "reads its first-token clock after parsing a chunk and its end clock before, so the "
        "text came in one piece; the TTFT, ITL and TPOT statistics time no first token and are "
        "unknown"
    ) in r["derived"]
    verdict = api.audit([path], select=["BR008"])
    assert [str(f.outcome) for f in verdict.findings] == ["undecidable"]


def test_a_ttft_far_past_the_end_to_end_latency_is_refused(tmp_path):
    line = ONE_PIECE | {"mean_ttft_ms": 120.0, "median_ttft_ms": 120.0, "p99_ttft_ms": 90.0}
    path = tmp_path / "bench.jsonl"
    path.write_text(json.dumps(ONE_PIECE) + "\n" + json.dumps(line) + "\n")
    with pytest.raises(TraceError) as err:
        api.load([path], "sglang")
    expected = (
        "a TTFT no later than the end-to-end latency (bench_serving takes both over the same "
        "completed requests; an answer that came in one piece puts the TTFT at most 10 ms past "
        "it)"
    )
    assert str(err.value).splitlines() == [
        f"{path}:2: mean_ttft_ms 120.000 is 22.013 ms past mean_e2e_latency_ms 97.987; "
        f"expected {expected}",
        f"{path}:2: median_ttft_ms 120.000 is 22.013 ms past median_e2e_latency_ms 97.987; "
        f"expected {expected}",
    ]


def test_output_the_client_never_received_as_text_is_not_supported(tmp_path):
    path = tmp_path / "bench.jsonl"
    path.write_text(json.dumps(ONE_PIECE) + "\n")
    verdict = api.audit([path], select=["BR019"])
    (finding,) = verdict.findings
    assert (str(finding.outcome), str(finding.severity)) == ("fired", "error")
    assert finding.message == (
        "the client received text for 3 of the 285 output tokens counted (re-tokenized, "
        "1.1%): 285 ÷ 0.0984 s = 2,894.9 tok/s counts tokens no received text shows; "
        "on the text received, 3 ÷ 0.0984 s = 30.5 tok/s"
    )
    assert finding.numbers["received_tps"] == pytest.approx(3 / 0.09844910493120551)
    (r,) = verdict.runs
    assert str(r.verdict) == "insufficient-data"
    assert r.reasons == [finding.message]


def test_re_tokenizing_a_little_below_the_servers_count_is_no_shortfall(tmp_path):
    # the real c16 vLLM-backend repeats re-tokenize 223,505 of 256,000 (87%)
    line = ONE_PIECE | {"total_output_tokens_retokenized": 249, "median_ttft_ms": 50.0}
    path = tmp_path / "bench.jsonl"
    path.write_text(json.dumps(line) + "\n")
    verdict = api.audit([path], select=["BR019"])
    assert [str(f.outcome) for f in verdict.findings] == ["undecidable"]
    assert str(verdict.runs[0].verdict) == "supported"


def test_random_lengths_of_a_line_without_a_dataset_are_not_said_to_describe_nothing(tmp_path):
    # the LoRA benchmark client writes no dataset_name; upstream it sent random prompts of
    # random_input_len, the fork ShareGPT ones: the file cannot tell which
    path = tmp_path / "bench.jsonl"
    path.write_text(json.dumps(ONE_PIECE) + "\n")
    derived = run(load(path))["derived"]
    assert (
        "requested lengths not recorded: the dataset is not recorded, so random_input_len 1024 "
        "and random_output_len 128 may or may not describe what was sent (they are written "
        "whatever the dataset)"
    ) in derived
    assert not any("describe nothing" in d for d in derived)
