"""vLLM bench serve / benchmark_serving.py results: the real files' figures (FORMATS.md §11b),
the 2026 per-request layout, and the errors of malformed files."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from reporter import api
from reporter.errors import TraceError
from tests.adapters.conftest import HERE, load, run, stats_of
from tests.conftest import finding

LAMBDA = "vllm/lambdalabs-1xH100-llama31-8b-fp8-10prompts-detailed.json"
SWEEP_RUN = "vllm/er0080-v0.25.1-sweep-maxseqs4-conc2-run0.json"
SWEEP_SUMMARY = "vllm/er0080-v0.25.1-sweep-maxseqs4-conc2-summary.json"
CONC2 = "vllm/er0080-v0.25.1-opt125m-conc2-summary-reformatted.json"
NERDALERT = "vllm/nerdalert-h100-llama31-8b-rate-sweep.jsonl"


def test_sweep_run_little_law_and_the_untrusted_peak(real):
    tables = load(real(SWEEP_RUN))
    s = stats_of(tables).loc["openai:infqps:c2:run0"]
    r = run(tables)
    assert tables.inputs[0].format == "vllm"
    assert (r["concurrency"], r["repeat"], r["tool_name"]) == (2, 0, "vllm bench serve")
    assert round(s["aggregate_tps"], 2) == 93.75  # 128 tokens ÷ 1.3654 s
    # Little's law: 8 × 0.3403 s ÷ 1.365 s, while vLLM's own peak says 6 at a limit of 2
    assert round(s["in_flight"], 2) == 1.99
    assert r["summary"]["tool_peak_concurrency"] == 6
    assert r["summary"]["tool_peak_concurrency_trusted"] is False
    assert (
        "max_concurrent_requests 6 not trusted: vLLM versions of Aug 2025 – Sept 2026 count it "
        "in 1-second buckets, which over-counts requests that follow each other (vLLM issue "
        "#56653)"
    ) in r["derived"]
    assert (
        "no per-request send times: no completion times to order into a ladder; effective "
        "concurrency from Little's law (Σ latency ÷ duration)"
    ) in r["derived"]
    # the load axis: an infinite rate (every request at once), carried as such
    assert r["extra"]["request_rate"] == "inf" and r["request_rate"] == math.inf
    assert r["group"] == "vllm sweep facebook/opt-125m max_num_seqs=4"


def test_sweep_summary_is_a_list_of_repeats_in_one_group(real):
    tables = load(real(SWEEP_SUMMARY))
    runs = tables.runs
    assert list(runs["run"]) == ["openai:infqps:c2:run0", "openai:infqps:c2:run1"]
    assert list(runs["repeat"]) == [0, 1]
    assert set(runs["group"]) == {"vllm sweep facebook/opt-125m max_num_seqs=4"}
    # each element points at the line where its object starts
    text = real(SWEEP_SUMMARY).read_text().splitlines()
    lines = [int(x) for x in runs["source_line"]]
    assert [text[n - 1].strip() for n in lines] == ["{", "{"]
    assert lines[0] == 2
    s = stats_of(tables)
    assert [round(x, 2) for x in s["in_flight"]] == [1.99, 1.99]
    assert [round(x, 1) for x in s["aggregate_tps"]] == [93.7, 199.4]
    # two repeats 112.7% apart (run 0 a cold start): repeated, but no figure to trust
    (spread,) = api.audit([real(SWEEP_SUMMARY)], select=["BR016"]).findings
    assert (str(spread.outcome), spread.message) == (
        "fired",
        "repeated, but repeats of one point differ by up to 112.7% (above 25%): either the "
        "point's figure is uncertain by that much, or something the files do not record "
        "differed between the runs",
    )


def test_summary_without_e2el_leaves_little_law_unknown(real):
    tables = load(real(CONC2))
    s = stats_of(tables).iloc[0]
    assert round(s["aggregate_tps"], 2) == 82.89
    assert math.isnan(s["in_flight"])
    assert run(tables)["summary"]["tool_peak_concurrency"] == 6


def test_lambdalabs_zero_token_successes_and_chunk_bundling(real):
    raw = json.loads(real(LAMBDA).read_text())
    # the figures FORMATS.md §11b quotes, from the file itself
    assert raw["output_lens"] == [120, 1, 1, 194, 0, 40, 0, 0, 6, 80]
    assert [len(i) + 1 for i in raw["itls"]] == [13, 1, 1, 21, 1, 5, 1, 1, 2, 9]
    tables = load(real(LAMBDA))
    req = tables.requests
    assert list(req["output_tokens"]) == raw["output_lens"]
    # chunks received: none at all where TTFT stayed 0.0 (no chunk ever came)
    assert list(req["n_chunks"]) == [13, 1, 1, 21, 0, 5, 0, 0, 2, 9]
    zero = req[req["ok"] & (req["output_tokens"] == 0)]
    assert list(zero["id"]) == ["4", "6", "7"]
    r = run(tables)
    assert round(r["summary"]["mean_itl_s"] * 1000, 1) == 50.3
    assert round(r["summary"]["mean_tpot_s"] * 1000, 1) == 6.0
    assert r["summary"]["chunks"] == 52  # 442 tokens in 52 chunks: ~9 tokens a chunk
    s = stats_of(tables).iloc[0]
    assert round(s["in_flight"], 2) == 2.53  # Σ (TTFT + Σ ITL) ÷ duration
    assert round(s["aggregate_tps"], 1) == 413.9
    assert r["concurrency"] == 10 and r["concurrency_derived"]
    assert r["tool_name"] == "vllm benchmark_serving.py"
    verdict = api.audit([real(LAMBDA)], select=["BR019"])
    f = finding(verdict, "BR019", "vllm:infqps")
    assert f["outcome"] == "fired" and f["numbers"]["empty"] == 3


def test_nerdalert_rate_sweep_twelve_runs(real):
    tables = load(real(NERDALERT))
    assert len(tables.runs) == 12
    assert list(tables.runs["source_line"]) == list(range(1, 13))
    rates = list(tables.runs["request_rate"])
    assert rates == [1.0, 10.0, 20.0, 30.0, 35.0, math.inf] * 2
    s = stats_of(tables)
    assert [round(x, 1) for x in s["aggregate_tps"][:6]] == [
        120.8, 959.7, 1922.0, 2791.2, 2845.2, 2677.8,
    ]  # fmt: skip
    assert list(s["output_tokens"] / (s["requests"] - s["failed"])) == [100.0] * 12
    inf = run(tables, "vllm:infqps:framework=vllm")
    assert (inf["concurrency"], inf["summary"]["failed"]) == (2000, 985)
    assert (
        "failed = num_prompts − completed = 2000 − 1015 = 985 (this vLLM version wrote no failed "
        "count)"
    ) in inf["derived"]
    # --metadata framework=…: the engine; "backend" is the client's request format
    assert inf["engine_name"] == "vllm"
    assert "engine from the metadata framework='vllm'" in inf["derived"]
    sgl = run(tables, "vllm:infqps:framework=sgl")
    assert sgl["engine_name"] == "sglang"
    assert (
        "engine from the metadata framework='sgl', not the client backend 'vllm'"
        in (sgl["derived"])
    )
    assert "framework" not in sgl["extra"]  # one factor (engine), not a deployment setting too


def test_2026_save_detailed_has_a_schedule():
    tables = load(HERE / "vllm-2026-save-detailed-c2.json")
    req = tables.requests
    assert list(req["t_send"]) == [353399.72, 353399.721, 353400.23, 353400.231, 353400.74]
    assert round(req.at[0, "t_first"] - req.at[0, "t_send"], 6) == 0.02
    assert list(req["n_chunks"][:4]) == [32.0] * 4
    assert len(req.at[0, "token_times"]) == 32
    assert req.at[4, "error"] == "Internal Server Error" and not req.at[4, "ok"]
    s = stats_of(tables).iloc[0]
    assert round(s["overlap"], 2) == 1.99
    assert round(s["aggregate_tps"], 3) == 125.675
    r = run(tables)
    assert (
        "times are perf_counter seconds (start_times): one clock per run, zero unknown"
        in (r["derived"])
    )
    assert r["summary"]["tool_peak_concurrency"] == 2
    assert "tool_peak_concurrency_trusted" not in r["summary"]  # dated after the fix: unknown


def test_truncated_document(tmp_path):
    path = tmp_path / "result.json"
    path.write_text('{"date": "20250101-000000", "backend": "vllm",\n "duration": 1.0, "compl')
    with pytest.raises(TraceError) as err:
        api.load([path], "vllm")
    assert str(err.value) == (
        f"{path}:2:25: the JSON document ends early (the file is truncated); expected a "
        "complete JSON document"
    )


def test_bad_line_of_appended_results(tmp_path):
    good = (HERE / "vllm-2026-save-detailed-c2.json").read_text()
    path = tmp_path / "results.jsonl"
    path.write_text(good + "\n" + good + "\n" + '{"duration": 1.0,, }' + "\n")
    with pytest.raises(TraceError) as err:
        api.load([path], "vllm")
    assert str(err.value) == (
        f"{path}:3:18: not valid JSON: Expecting property name enclosed in double quotes; "
        "expected one JSON object per line"
    )


def test_missing_and_mistyped_fields(tmp_path):
    doc = json.loads((HERE / "vllm-2026-save-detailed-c2.json").read_text())
    del doc["duration"]
    doc["completed"] = "4"
    doc["ttfts"] = doc["ttfts"][:3]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(TraceError) as err:
        api.load([path], "vllm")
    assert str(err.value).splitlines() == [
        f'{path}:1: "duration" is missing; expected a number of seconds ≥ 0 (vLLM bench serve '
        "result)",
        f'{path}:1: "completed" is "4"; expected a whole number ≥ 0 (vLLM bench serve result)',
        f'{path}:1: "ttfts" has 3 items; expected one per request, 5 (vLLM bench serve result)',
    ]


def test_lenient_audits_the_good_results(tmp_path):
    good = (HERE / "vllm-2026-save-detailed-c2.json").read_text()
    path = tmp_path / "results.jsonl"
    path.write_text(good + "\n" + '{"duration": 1.0,, }' + "\n" + good + "\n")
    tables = api.load([path], "vllm", lenient=True)
    assert list(tables.runs["run"]) == ["openai:infqps:c2", "openai:infqps:c2#2"]
    assert list(tables.runs["source_line"]) == [1, 3]
    inp = tables.inputs[0]
    assert (inp.skipped, inp.skipped_reasons) == (
        1,
        ["not valid JSON: Expecting property name enclosed in double quotes: 1"],
    )


AUTOMATION = "vllm/nerdalert-automation-llama32-3b-l40s-mixed-deployments-rate-sweep.jsonl"


def test_metadata_numbers_written_as_strings_are_read(real):
    tables = load(real(AUTOMATION))
    runs = tables.runs
    assert len(runs) == 9
    # --metadata output_len=500 input_len=1000 wrote strings: read as numbers where one is
    # expected, the other metadata kept as text
    assert set(runs["output_tokens_requested"]) == {500}
    assert set(runs["prompt_tokens"]) == {1000}
    first = run(tables, runs["run"][0])
    assert first["extra"]["deployment"] == "no-features"
    assert first["extra"]["prefill_replicas"] == "0"
    assert "read as numbers, written as text (vLLM --metadata writes strings): " in " ".join(
        first["derived"]
    )
    # the --metadata key that differs between the lines names each run
    assert list(runs["run"][:4]) == [
        "vllm:10qps:deployment=no-features",
        "vllm:30qps:deployment=no-features",
        "vllm:infqps:deployment=no-features",
        "vllm:10qps:deployment=base",
    ]
    # the load axis: 10, 30 and inf req/s for each of the three deployments
    assert list(runs["request_rate"]) == [10.0, 30.0, math.inf] * 3
    assert [None if math.isnan(c) else c for c in runs["concurrency"]] == [None, None, 900] * 3
    s = stats_of(tables)
    # SOURCES.md round 2: no-features, base, kvcache at 10 / 30 / inf req/s
    assert list(s["aggregate_tps"]) == pytest.approx(
        [2258.2, 5841.4, 8321.2, 2282.3, 5889.4, 10145.3, 2262.2, 5806.2, 11011.4], abs=0.1
    )
    assert list(s["failed"]) == [0] * 9


YANG = "vllm/yangligt2-llama4scout-fp8-2node-maxconc-sweep"
YANG_FILES = {
    # file: N, prompts, wall, output tokens, aggregate, Little, max_concurrent_requests
    "c4-20251022-234422.json": (4, 256, 113.72, 37712, 331.6, 3.96, 11),
    "c16-20251022-234745.json": (16, 256, 33.32, 37805, 1134.5, 15.31, 28),
    "c64-20251022-235048.json": (64, 512, 31.33, 71808, 2291.6, 59.97, 93),
    "c256-20251022-235601.json": (256, 1024, 38.35, 148061, 3861.2, 234.5, 300),
    "c256-20251023-185002-other-config.json": (256, 2048, 96.18, 289415, 3009.0, 249.3, 298),
    "c1024-20251023-200539-other-config.json": (1024, 4096, 162.12, 593375, 3660.1, 994.5, 1063),
}


@pytest.mark.parametrize(("name", "expected"), sorted(YANG_FILES.items()))
def test_one_file_per_max_concurrency(real, name, expected):
    n, prompts, wall, tokens, aggregate, little, peak = expected
    tables = load(real(f"{YANG}/{name}"))
    r = run(tables)
    s = stats_of(tables).iloc[0]
    # SOURCES.md round 2, per file
    assert (r["concurrency"], r["request_rate"]) == (n, math.inf)
    assert s["requests"] == prompts and s["output_tokens"] == tokens
    assert round(s["wall_s"], 2) == wall
    assert s["aggregate_tps"] == pytest.approx(aggregate, abs=0.1)
    assert s["in_flight"] == pytest.approx(little, abs=0.01 if little < 100 else 0.1)
    # the bucket-counted peak is kept, never trusted, never the concurrency
    assert r["summary"]["tool_peak_concurrency"] == peak
    assert r["summary"]["tool_peak_concurrency_trusted"] is False
    # the result file does not record the requested output length (the script asked for 250)
    assert pd.isna(r["output_tokens_requested"])


def test_single_request_with_a_long_prompt(real):
    tables = load(real("vllm/diogoaav-llama33-70b-fp8-100k-prompt-single-request.json"))
    r = run(tables)
    s = stats_of(tables).iloc[0]
    # SOURCES.md: 1,565 tokens ÷ 49.96 s = 31.3 tok/s, N = 1 (Little 1.00), TTFT 21.82 s
    assert (r["concurrency"], s["requests"], s["output_tokens"]) == (1, 1, 1565)
    assert round(s["wall_s"], 2) == 49.96
    assert round(s["aggregate_tps"], 1) == 31.3
    assert round(s["in_flight"], 2) == 1.00
    assert round(r["summary"]["mean_ttft_s"], 2) == 21.82
    assert round(1 / r["summary"]["mean_tpot_s"], 1) == 55.6  # decode alone, TPOT 17.99 ms


def test_the_hardware_named_in_the_metadata_is_the_runs(real):
    # `--metadata gpu=4xNVIDIA_L40S` on every line: the hardware is disclosed, not "not
    # disclosed: hardware"; the engine is not in the file (its client backend "vllm" is the
    # request format, which other servers speak too), nor its version, and that is said
    verdict = api.audit(
        [real("vllm/nerdalert-automation-llama32-3b-l40s-mixed-deployments-rate-sweep.jsonl")]
    )
    assert {r.hardware for r in verdict.runs} == {"4xNVIDIA_L40S"}
    assert not any(u.startswith("hardware") for u in verdict.undisclosed)
    assert "engine and version: all runs" in verdict.undisclosed
    assert {r.engine for r in verdict.runs} == {None}


def test_an_acceptance_rate_shows_speculation_on_but_does_not_state_it(tmp_path):
    doc = json.loads((HERE / "vllm-2026-save-detailed-c2.json").read_text())
    doc["spec_decode_acceptance_rate"] = 71.5
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(doc))
    r = run(load(path))
    assert (r["spec_enabled"], r["spec_acceptance"]) == (True, 0.715)
    assert r["spec_source"] == "spec_decode_acceptance_rate 71.5"
    f = finding(api.audit([path], select=["BR011"]), "BR011", r["run"])
    assert f["outcome"] == "passed"
    assert f["message"] == "speculative decoding on (inferred: spec_decode_acceptance_rate 71.5)"


def test_a_run_where_nothing_completed_has_no_latencies(tmp_path):
    # er0080's all-failed vLLM 0.25.1 result: every latency statistic written as 0.0
    from tests.rules.test_br003 import SUMMARY

    zeros = {k: 0.0 for k in SUMMARY if k.endswith("_ms")}
    doc = SUMMARY | zeros | {
        "completed": 0, "failed": 8, "total_output_tokens": 0, "output_throughput": 0.0,
        "duration": 0.01, "max_concurrent_requests": 0,
    }  # fmt: skip
    path = tmp_path / "failed.json"
    path.write_text(json.dumps(doc))
    r = run(load(path))
    for key in ("median_ttft_s", "mean_tpot_s", "ttft_p99_s", "tool_peak_concurrency"):
        assert r["summary"].get(key) is None, key
    assert (
        "no request completed: the latency statistics (written as 0) are unknown" in (r["derived"])
    )
    verdict = api.audit([path])
    by_code = {f.code: f for f in verdict.findings}
    assert by_code["BR015"].message == "no tokens decoded: no request completed"
    assert str(by_code["BR017"].outcome) == "not-applicable"
    assert "0.000 s" not in by_code["BR009"].message


def test_a_multi_turn_run_is_a_closed_loop_of_its_conversations(tmp_path):
    # big-yellow-duck's multi-turn runs: no request rate, `multi_turn_concurrency` 1, 2 and 8
    # conversations at once. Before, each was "infqps" with no N ("concurrency not
    # disclosed") and alone in its group
    paths = []
    for n, duration in ((1, 56.276253075), (2, 97.39), (8, 165.77)):
        record = {
            "date": "2026-09-04T20:33:17Z", "mode": "multi_turn", "backend": "openai-chat",
            "model_id": "m", "num_conversations": n, "turns_per_conversation": 3,
            "multi_turn_concurrency": n, "inter_turn_delay_ms": 0, "duration": duration,
            "conversations_completed": n, "conversations_failed": 0, "avg_turns_completed": 8.0,
            "avg_conversation_duration_ms": duration * 1000, "completed": 8 * n, "failed": 0,
            "total_input_tokens": 2400 * 8 * n, "total_output_tokens": 512 * 8 * n,
            "output_throughput": 512 * 8 * n / duration, "mean_ttft_ms": 797.3,
            "median_ttft_ms": 769.1, "mean_tpot_ms": 12.2, "median_tpot_ms": 11.0,
            "mean_e2el_ms": 7034.4 * n**0.5, "median_e2el_ms": 6441.1,
        }  # fmt: skip
        path = tmp_path / f"multiturn-concurrency{n}.json"
        path.write_text(json.dumps(record))
        paths.append(path)
    verdict = api.audit(paths)
    assert [(r.id, r.concurrency) for r in verdict.runs] == [
        ("openai-chat:multiturn:c1", 1),
        ("openai-chat:multiturn:c2", 2),
        ("openai-chat:multiturn:c8", 8),
    ]
    (group,) = verdict.groups
    assert group.axis == "concurrency" and len(group.runs) == 3
    assert finding(verdict, "BR005", group.name)["outcome"] == "passed"
    assert "concurrency" not in verdict.undisclosed


def _rate_run(date: str, duration: float, output_tokens: int) -> dict:
    """A `vllm bench serve` result at 1 req/s (Oct 2025 schema, summary only)."""
    return {
        "date": date, "endpoint_type": "vllm", "backend": "vllm", "label": None,
        "model_id": "Qwen/Qwen3-235B-A22B", "tokenizer_id": "Qwen/Qwen3-235B-A22B",
        "num_prompts": 256, "request_rate": 1.0, "burstiness": 1.0, "max_concurrency": None,
        "duration": duration, "completed": 256, "total_input_tokens": 1048576,
        "total_output_tokens": output_tokens, "request_throughput": 256 / duration,
        "output_throughput": output_tokens / duration, "mean_ttft_ms": 300.0,
        "median_ttft_ms": 300.0, "mean_tpot_ms": 13.0, "median_tpot_ms": 13.0,
        "mean_e2el_ms": 5000.0,
    }  # fmt: skip


def test_runs_at_one_rate_that_ran_at_the_same_time_are_not_called_repeats(tmp_path):
    # Two results at 1 req/s whose dates (written when each run ended) are 15 s apart while
    # each run lasted 261-262 s: the two ran at the same time, against one server (each
    # then carried the other's load too) or two (the files do not say which setup each was)
    paths = []
    for date, duration, tokens in (
        ("20251021-203116", 262.18, 94860),
        ("20251021-203131", 261.49, 92080),
    ):
        path = tmp_path / f"vllm-1.0qps-{date}.json"
        path.write_text(json.dumps(_rate_run(date, duration, tokens)))
        paths.append(path)
    verdict = api.audit(paths, select=["BR016"])
    (f,) = [f for f in verdict.to_dict()["findings"] if f["code"] == "BR016"]
    assert f["outcome"] == "fired"
    assert "repeated: the largest spread" not in f["message"]
    assert f["message"].startswith(
        "no repeat for certain: the 2 runs at 1 req/s, 256 prompts ran at the same time"
    )
    assert "each run lasted 261–262 s" in " ".join(f["arithmetic"])
    # the same two runs a day apart are repeats
    later = _rate_run("20251022-203131", 261.49, 92080)
    paths[1].write_text(json.dumps(later))
    verdict = api.audit(paths, select=["BR016"])
    messages = [f.message for f in verdict.findings if f.code == "BR016"]
    assert not any("same time" in m for m in messages)


def test_a_multi_turn_run_of_one_conversation_states_each_requests_output_length(tmp_path):
    # big-yellow-duck's multi-turn run at one conversation: `per_turn_metrics` holds one
    # request per turn (num_samples 1), each with 512 output tokens. The lengths of every
    # request are in the file; "no per-request lengths" would be false of it
    turns = [
        {"turn_index": i, "num_samples": 1, "completed": 1, "failed": 0,
         "total_input_tokens": 1200 + 1000 * i, "total_output_tokens": 512}
        for i in range(8)
    ]  # fmt: skip
    record = {
        "date": "2026-09-04T20:33:17Z", "mode": "multi_turn", "backend": "openai-chat",
        "model_id": "m", "num_conversations": 1, "turns_per_conversation": 3,
        "multi_turn_concurrency": 1, "inter_turn_delay_ms": 0, "duration": 56.276253075,
        "conversations_completed": 1, "conversations_failed": 0, "avg_turns_completed": 8.0,
        "completed": 8, "failed": 0, "total_input_tokens": 19149,
        "total_output_tokens": 4096, "output_throughput": 72.78380802185274,
        "mean_ttft_ms": 797.2878244999999, "median_ttft_ms": 769.1, "mean_tpot_ms": 12.2,
        "median_tpot_ms": 11.0, "mean_e2el_ms": 7034.3788485, "per_turn_metrics": turns,
    }  # fmt: skip
    path = tmp_path / "multiturn-concurrency1.json"
    path.write_text(json.dumps(record))
    verdict = api.audit([path])
    (run,) = verdict.runs
    assert (run.output_tokens_min, run.output_tokens_max) == (512, 512)
    stop = finding(verdict, "BR006", run.id)
    assert "no per-request lengths" not in stop["message"]
    # two conversations per turn: a turn's total is not one request's length
    for turn in turns:
        turn |= {"num_samples": 2, "completed": 2, "total_output_tokens": 1024}
    record |= {"num_conversations": 2, "multi_turn_concurrency": 2, "completed": 16,
               "total_output_tokens": 8192, "per_turn_metrics": turns}  # fmt: skip
    path.write_text(json.dumps(record))
    (run,) = api.audit([path]).runs
    assert run.output_tokens_min is None and run.output_tokens_max is None


def _multi_turn(turns: list[dict]) -> dict:
    return {
        "date": "2026-09-04T20:33:17Z", "mode": "multi_turn", "backend": "openai-chat",
        "model_id": "m", "num_conversations": 1, "multi_turn_concurrency": 1,
        "duration": 56.276253075, "completed": 8, "failed": 0, "total_input_tokens": 19149,
        "total_output_tokens": 4096, "output_throughput": 72.78380802185274,
        "mean_ttft_ms": 797.3, "median_ttft_ms": 769.1, "mean_tpot_ms": 12.2,
        "median_tpot_ms": 11.0, "per_turn_metrics": turns,
    }  # fmt: skip


def test_turn_lengths_that_do_not_add_up_to_the_runs_output_are_refused(tmp_path):
    # 8 turns of 100,000 tokens each in a run of 4,096 output tokens: each request was said
    # to be 24 times longer than the whole run
    turns = [
        {"turn_index": i, "num_samples": 1, "completed": 1, "failed": 0,
         "total_output_tokens": 100_000}
        for i in range(8)
    ]  # fmt: skip
    path = tmp_path / "multiturn.json"
    path.write_text(json.dumps(_multi_turn(turns)))
    with pytest.raises(TraceError, match="per_turn_metrics"):
        api.audit([path])


def test_a_turn_whose_completed_count_is_a_bool_gives_no_lengths(tmp_path):
    turns = [
        {"turn_index": i, "num_samples": 1, "completed": True, "failed": 0,
         "total_output_tokens": 512}
        for i in range(8)
    ]  # fmt: skip
    path = tmp_path / "multiturn.json"
    path.write_text(json.dumps(_multi_turn(turns)))
    (run,) = api.audit([path]).runs
    assert run.output_tokens_min is None and run.output_tokens_max is None
