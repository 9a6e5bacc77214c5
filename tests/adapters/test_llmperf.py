"""LLMPerf summary and individual responses: the groq leaderboard figures (FORMATS.md §11b),
the wall clock recovered from the sibling summary, stray entries, malformed elements."""

from __future__ import annotations

import json
import math
import shutil
import statistics

import pytest

from reporter import api
from reporter.errors import TraceError
from tests.adapters.conftest import HERE, load, run, stats_of

SUMMARY = "llmperf/leaderboard-groq_70b_summary.json"
INDIVIDUAL = "llmperf/leaderboard-groq_70b_individual_responses.json"


def test_groq_summary(real):
    tables = load(real(SUMMARY))
    r = run(tables)
    assert (r["run"], r["concurrency"], r["model_name"], r["tool_version"]) == (
        "llama2-70b-4096_550_150", 5, "llama2-70b-4096", "2023-08-31",
    )  # fmt: skip
    assert (r["output_tokens_requested"], r["prompt_tokens"]) == (150, 550)
    s = stats_of(tables).iloc[0]
    assert (s["requests"], s["failed"]) == (150, 0)
    assert round(s["wall_s"], 1) == 50.9  # 150 ÷ (176.74 / 60)
    assert round(s["aggregate_tps"], 1) == 441.8
    assert round(s["in_flight"], 2) == 2.40  # Σ e2e 122.3 s ÷ 50.9 s, at N = 5
    assert round(r["summary"]["sum_latency_s"], 1) == 122.3
    assert round(r["summary"]["mean_reported_tps"], 1) == 184.2
    # N × the mean per-request rate is what a summed claim would say: 921 against 441.8
    assert round(5 * r["summary"]["mean_reported_tps"]) == 921
    assert (
        "output tokens counted with the Llama-2 tokenizer whatever the model (LLMPerf)"
        in r["derived"]
    )
    # the tool's own TTFT and end-to-end percentiles are the run's latency table
    (latency,) = api.audit([real(SUMMARY)]).runs
    assert latency.latency_source == "summary"
    assert [round(latency.latency["ttft_s"][q] * 1000, 1) for q in ("p50", "p90", "p99")] == [
        221.9, 298.8, 350.0,
    ]  # fmt: skip
    assert [round(latency.latency["e2e_s"][q] * 1000, 1) for q in ("p50", "p90", "p99")] == [
        805.2, 932.9, 992.3,
    ]  # fmt: skip


def test_lengths_asked_from_a_spread_are_no_one_requested_length(tmp_path, real):
    doc = json.loads(real(SUMMARY).read_text()) | {"stddev_output_tokens": 20}
    path = tmp_path / "summary.json"
    path.write_text(json.dumps(doc))
    r = run(load(path))
    assert r["output_tokens_requested"] is None or math.isnan(r["output_tokens_requested"])
    assert (
        "output lengths asked per request from a normal of mean 150 and stddev 20 "
        "(LLMPerf's max_tokens): no one requested length"
    ) in r["derived"]


def test_groq_individual_responses_with_their_summary(real):
    raw = json.loads(real(INDIVIDUAL).read_text())
    # per-request rate × e2e ≈ output tokens (149 vs 150): about one token per SSE event
    assert (
        round(
            statistics.fmean(
                x["request_output_throughput_token_per_s"] * x["end_to_end_latency_s"] for x in raw
            )
        )
        == 149
    )
    assert {x["number_output_tokens"] for x in raw} == {150}
    tables = load(real(INDIVIDUAL))
    assert tables.inputs[0].notes == [
        "LLMPerf: 150 individual responses",
        "LLMPerf: run settings and wall clock from the sibling leaderboard-groq_70b_summary.json",
    ]
    req = tables.requests
    assert len(req) == 150 and req["ok"].all()
    assert req["t_send"].isna().all()  # no timestamps: never a made-up schedule
    assert round(req["reported_tps"].mean(), 1) == 184.2
    s = stats_of(tables).iloc[0]
    assert round(s["aggregate_tps"], 1) == 441.8
    assert round(s["in_flight"], 2) == 2.40
    assert run(tables)["concurrency"] == 5
    assert list(req["source_line"][:2]) == [2, 13]


def test_individual_responses_alone_have_no_wall_clock(real, tmp_path):
    path = tmp_path / "groq_individual_responses.json"
    shutil.copyfile(real(INDIVIDUAL), path)
    tables = load(path)
    s = stats_of(tables).iloc[0]
    assert math.isnan(s["aggregate_tps"]) and math.isnan(s["in_flight"])
    assert (
        "wall clock unknown: the responses hold no timestamps and no sibling *_summary.json "
        "was found"
    ) in run(tables)["derived"]


def _response(tokens: int, e2e: float, error: str = "") -> dict[str, object]:
    return {"error_code": 500 if error else None, "error_msg": error,
            "inter_token_latency_s": e2e / max(tokens, 1), "ttft_s": 0.2,
            "end_to_end_latency_s": e2e,
            "request_output_throughput_token_per_s": tokens / e2e,
            "number_total_tokens": tokens + 10, "number_output_tokens": tokens,
            "number_input_tokens": 10}  # fmt: skip


def test_stray_entries_and_errors(tmp_path):
    path = tmp_path / "m_10_20_individual_responses.json"
    items = [_response(20, 1.0), _response(0, 0.5, "Internal Server Error"), "error_code", "ttft_s"]
    path.write_text(json.dumps(items, indent=4))
    tables = load(path)
    assert tables.inputs[0].notes[-1] == (
        "LLMPerf: left aside 2 entries that are not objects (llmperf f1d6bed4 appends a dict's "
        "keys to the list)"
    )
    req = tables.requests
    assert list(req["ok"]) == [True, False]
    assert req.at[1, "error"] == "Internal Server Error"


def test_bad_element(tmp_path):
    path = tmp_path / "m_individual_responses.json"
    bad = _response(20, 1.0)
    bad["end_to_end_latency_s"] = -1.0
    path.write_text(json.dumps([_response(20, 1.0), bad], indent=4))
    with pytest.raises(TraceError) as err:
        api.load([path], "llmperf")
    assert str(err.value) == (
        f'{path}:13: "end_to_end_latency_s" is -1.0; expected a number of seconds ≥ 0 (LLMPerf '
        "individual response)"
    )


BEDROCK = "llmperf/leaderboard-bedrock_70b_summary.json"
BEDROCK_INDIVIDUAL = "llmperf/leaderboard-bedrock_70b_individual_responses.json"


def test_bedrock_summary(real):
    tables = load(real(BEDROCK))
    r = run(tables)
    s = stats_of(tables).iloc[0]
    # SOURCES.md round 2: 15,125 tokens of the 101 completed; wall 240.6 s → 62.87 tok/s;
    # Little over completed requests 712.9 s ÷ 240.6 s = 2.96 of 5
    assert (s["requests"], s["failed"], r["concurrency"]) == (150, 49, 5)
    assert round(s["output_tokens"]) == 15125
    assert round(s["wall_s"], 1) == 240.6
    assert round(s["aggregate_tps"], 2) == 62.87
    assert round(r["summary"]["sum_latency_s"], 1) == 712.9
    assert round(s["in_flight"], 2) == 2.96
    assert (s["out_min"], s["out_max"], round(s["out_mean"], 2)) == (120, 152, 149.75)
    # the 49 errors are all code -100: finished answers flagged short by the client
    assert r["summary"]["too_short"] == 49


def test_bedrock_too_short_responses_are_not_server_failures(real):
    tables = load(real(BEDROCK_INDIVIDUAL))
    req = tables.requests
    flagged = req[req["finish_reason"] == "too_short"]
    assert len(flagged) == 49 and not flagged["ok"].any()
    # they finished with 13–119 tokens; their 3,515 tokens are outside the 62.87
    assert (flagged["output_tokens"].min(), flagged["output_tokens"].max()) == (13, 119)
    assert flagged["output_tokens"].sum() == 3515
    assert req["output_tokens"].sum() == 18640
    s = stats_of(tables).iloc[0]
    assert (s["ok"], s["output_tokens"]) == (101, 15125)
    assert round(s["aggregate_tps"], 2) == 62.87  # the wall from the sibling summary
    verdict = api.audit([real(BEDROCK_INDIVIDUAL)])
    (br019,) = [f for f in verdict.findings if f.code == "BR019"]
    assert str(br019.severity) == "info"
    assert br019.message.startswith(
        "of 150 requests: 49 finished but flagged too short by the client (finished answers "
        "the client left out, not server failures)"
    )
    # finished answers: their tokens are not those of "unfinished" requests
    assert br019.message.endswith("(3,515 tokens of flagged requests left out)")


@pytest.mark.parametrize("order", [(BEDROCK, BEDROCK_INDIVIDUAL), (BEDROCK_INDIVIDUAL, BEDROCK)])
def test_summary_and_its_responses_are_one_run(real, order):
    verdict = api.audit([real(name) for name in order])
    assert [r.id for r in verdict.runs] == ["meta-llama2-70b-chat-v1_550_150"]
    (r,) = verdict.runs
    assert (r.requests, round(r.aggregate_tps or 0, 2), round(r.wall_s or 0, 1)) == (
        150, 62.87, 240.6,
    )  # fmt: skip
    for code in ("BR001", "BR019"):
        assert len([f for f in verdict.findings if f.code == code and f.fired]) == 1
    notes = [n for i in verdict.inputs for n in i.notes if "as one run" in n]
    assert len(notes) == 2


def test_summary_and_responses_under_other_names_are_joined_by_their_counts(real, tmp_path):
    shutil.copyfile(real(BEDROCK), tmp_path / "summary-a.json")
    shutil.copyfile(real(BEDROCK_INDIVIDUAL), tmp_path / "responses-a.json")
    shutil.copyfile(real(SUMMARY), tmp_path / "summary-b.json")
    tables = load(tmp_path / "responses-a.json")  # no sibling: no wall clock
    assert math.isnan(stats_of(tables).iloc[0]["aggregate_tps"])
    tables = api.load(
        [tmp_path / "summary-b.json", tmp_path / "responses-a.json", tmp_path / "summary-a.json"]
    )
    # the groq summary (150 requests, 0 errors) is another run; the bedrock one joins
    assert len(tables.runs) == 2
    s = stats_of(tables)
    joined = run(tables, "responses-a")
    assert joined["model_name"] == "meta.llama2-70b-chat-v1" and joined["concurrency"] == 5
    assert round(s.loc["responses-a", "aggregate_tps"], 2) == 62.87
    assert any(
        d.startswith(
            "one run with the summary summary-a.json (same 150 requests started, 49 "
            "with errors, 15,125 output tokens of the completed requests"
        )
        for d in joined["derived"]
    )


def test_summaries_keyed_by_concurrency():
    tables = load(HERE / "llmperf-summaries-by-concurrency.json")
    assert tables.inputs[0].format == "llmperf"
    assert list(tables.runs["run"]) == ["llama2-70b-4096_550_150:c1", "llama2-70b-4096_550_150:c4"]
    assert list(tables.runs["concurrency"]) == [1, 4]
    s = stats_of(tables)
    # 20 completed × 150 tokens ÷ (20 ÷ per-minute × 60)
    assert list(s["wall_s"]) == [20.0, 6.0]
    assert list(s["aggregate_tps"]) == [150.0, 500.0]
    assert list(s["in_flight"]) == pytest.approx([1.0, 4.0])


def test_bedrock_per_request_rates_and_stop_mode(real):
    tables = api.load([real(BEDROCK), real(BEDROCK_INDIVIDUAL)])
    req = tables.requests
    ok = req[req["ok"]]
    # SOURCES.md: per-request rate ≈ tokens ÷ e2e (TTFT included): median 21.4 / mean 21.1
    # over the 101 completed; 21.2 / 20.6 over all 150
    assert (round(ok["reported_tps"].median(), 1), round(ok["reported_tps"].mean(), 1)) == (
        21.4, 21.1,
    )  # fmt: skip
    assert (round(req["reported_tps"].median(), 1), round(req["reported_tps"].mean(), 1)) == (
        21.2, 20.6,
    )  # fmt: skip
    r = run(tables)
    assert (r["stop"], r["concurrency"], r["output_tokens_requested"]) == ("unknown", 5, 150)


@pytest.mark.parametrize("name", ["bedrock", "groq"])
def test_reported_rates_are_tokens_over_e2e_from_the_listed_durations(real, name):
    # no send times, but each response lists ttft_s and end_to_end_latency_s: LLMPerf's rate
    # is output ÷ e2e (SOURCES.md), which BR020 finds from those durations alone
    individual = BEDROCK_INDIVIDUAL if name == "bedrock" else INDIVIDUAL
    verdict = api.audit([real(individual)], select=["BR020"]).to_dict()
    (finding,) = verdict["findings"]
    assert finding["outcome"] == "passed"
    assert finding["message"].startswith("reported rates are tokens ÷ end-to-end time")
    e2e = finding["numbers"]["ratios"]["tokens ÷ end-to-end time"]
    assert abs(e2e - 1) <= 0.02
    req = api.load([real(individual)]).requests
    assert req["t_send"].isna().all() and req["ttft"].notna().all() and req["e2e"].notna().all()
    assert (req["decode_s"] == req["e2e"] - req["ttft"]).all()


def test_a_spread_of_outputs_around_the_requested_length_is_not_forced(real):
    # bedrock: mean 149.75 of 150 asked, but outputs 120-152: not "every request wrote it"
    (f,) = api.audit([real(BEDROCK)], select=["BR006"]).findings
    assert (str(f.outcome), f.message) == (
        "undecidable",
        "stop mode not stated; the outputs average 149.8 of 150 requested tokens, over "
        "120–152: a summary's mean this close decides neither (per-request lengths, "
        "workload.stop or ignore_eos would)",
    )


def test_the_measured_prompt_is_the_context_when_it_differs_from_the_asked(tmp_path, real):
    # philschmid's summaries asked 750-token prompts and measured 590-614: context 603, not 750
    doc = json.loads(real(SUMMARY).read_text()) | {"results_number_input_tokens_mean": 603.0}
    path = tmp_path / "summary.json"
    path.write_text(json.dumps(doc))
    r = run(load(path))
    assert r["prompt_tokens"] is None or math.isnan(r["prompt_tokens"])
    assert (
        "prompt length asked 550 tokens (mean_input_tokens), measured mean 603: the measured "
        "one is the run's"
    ) in r["derived"]
    (f,) = api.audit([path], select=["BR017"]).findings
    assert f.message == (
        "context 603 tokens (the summary's mean prompt length; context at the first decoded token)"
    )
