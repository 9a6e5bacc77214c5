"""Statements the real files would contradict: a constant first-token delay is no queue, an
arrival schedule or timeouts are no unexplained wall, failed requests wrote no tokens."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reporter import api
from tests.adapters.conftest import REAL

RSEVILLA = "guidellm/rsevilla87-guidellm-qwen3-06b-constant-10rps.json"
DATABLOOM = "aiperf/databloom-aiperf-llama32-3b-gguf-c1-dualhost-half-timeouts-profile_export.jsonl"
BEDROCK = "llmperf/leaderboard-bedrock_70b_individual_responses.json"
GROQ = "llmperf/leaderboard-groq_70b_individual_responses.json"


def _real(name: str) -> Path:
    """A file of ../shared/real-traces, read in place; the test is skipped without them."""
    path = REAL / name
    if not path.is_file():
        pytest.skip("../shared/real-traces is absent")
    return path


def _finding(name: str, code: str) -> Any:
    path = _real(name)
    verdict = api.audit([Path(path)], select=[code, "BR019"])
    (finding,) = [f for f in verdict.findings if f.code == code]
    return finding


def test_a_constant_first_token_delay_is_not_a_queue() -> None:
    # TTFT 1.005–1.044 s for every request, the first (nothing in flight) included.
    f = _finding(RSEVILLA, "BR004")
    assert str(f.outcome) == "passed"
    assert f.message == (
        "no queue: every request, the first included (sent with nothing in flight, 1.020 s), "
        "got its first token after 1.005–1.044 s: a constant first-token delay, not waiting "
        "for a slot"
    )


def test_an_open_loop_wall_is_its_arrival_schedule() -> None:
    # 609 requests sent over 59.90 s at 10 req/s, + TTFT 1.01 + 128 ÷ 96.67: 62.24 vs 60.01 s.
    f = _finding(RSEVILLA, "BR009")
    assert str(f.outcome) == "passed"
    assert f.message.startswith("the arrival schedule, TTFT and decode explain the wall")
    assert f.arithmetic[0].startswith(
        "predicted wall = last send 59.90 s after the first (609 requests at 10 req/s) + "
    )
    assert f.numbers["predicted_wall_s"] == pytest.approx(62.24, abs=0.01)


def test_a_wall_that_is_mostly_timeouts_says_so() -> None:
    # 10 TimeoutErrors of 20.3–20.8 s, serial, alone in flight for 205.0 s of 211.64 s.
    f = _finding(DATABLOOM, "BR009")
    assert str(f.outcome) == "fired"
    assert f.message == (
        "the wall is mostly failed requests: 10 failed (TimeoutError, 20.3–20.8 s each) were the "
        "only requests in flight for 205.02 s of the 211.64 s wall; the successful requests "
        "account for the other 6.62 s"
    )
    assert "unexplained" not in f.message and "longer than" not in f.message


@pytest.mark.slow
def test_lengths_are_counted_over_completed_requests_and_short_ones_are_not_hidden() -> None:
    # 101 completed of 150: 120–152 tokens for 150 requested, 9 of them short (BR019: cut).
    f = _finding(BEDROCK, "BR006")
    assert str(f.outcome) == "undecidable"
    assert "every request" not in f.message
    assert "outputs 120–152 tokens" in f.message and "9 of them fewer than requested" in f.message
    assert _finding(RSEVILLA, "BR006").message == (
        "stop mode not stated, but every completed request (586 of 609) wrote 128 tokens of 128 "
        "requested (forced length inferred)"
    )
    assert "every request wrote 150 tokens of 150 requested" in _finding(GROQ, "BR006").message


def test_a_prompt_processing_test_has_no_stop_mode() -> None:
    path = _real("llama-bench/lhl-8060s-rocm-llama32-1b-default-hip-depth-sweep.jsonl")
    findings = {f.subject: f for f in api.audit([path], select=["BR006"]).findings}
    assert str(findings["pp512"].outcome) == "not-applicable"
    assert str(findings["tg128"].outcome) == "passed"


def test_llama_bench_tests_need_no_prefill_rate() -> None:
    # a tg test reads no prompt (n_prompt 0): nothing of its wall is prefill; a pp test is a
    # prefill rate by design, and asks for no output
    path = _real("llama-bench/lhl-8060s-rocm-llama32-1b-default-hip-depth-sweep.jsonl")
    findings = api.audit([path], select=["BR007", "BR008"]).findings
    outcome = {(f.code, f.subject): str(f.outcome) for f in findings}
    assert outcome[("BR008", "tg128")] == "passed"
    assert outcome[("BR008", "tg128@d65536")] == "passed"
    assert outcome[("BR008", "pp512")] == "not-applicable"
    assert outcome[("BR007", "pp512")] == "not-applicable"
    assert outcome[("BR007", "tg128")] == "passed"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        (
            "vllm/yangligt2-llama4scout-fp8-2node-maxconc-sweep/c16-20251022-234745.json",
            "context 4,999 tokens (the summary's prompt tokens ÷ completed requests: 1,279,744 "
            "÷ 256, a mean; context at the first decoded token)",
        ),
        (
            "sglang/tonyli15-sglang055-qwen25-3b-agg-n50-c8.jsonl",
            "context 60 tokens (the summary's prompt tokens ÷ completed requests: 3,019 ÷ 50, a "
            "mean; context at the first decoded token)",
        ),
    ],
)
def test_a_summary_that_counts_its_prompt_tokens_states_a_context(name: str, message: str) -> None:
    # vLLM's total_input_tokens and SGLang's: the figure is not "stated without a context
    # length", as BR017 said of every summary whose prompts were not all of one length
    f = _finding(name, "BR017")
    assert str(f.outcome) == "passed"
    assert f.message == message


def test_a_summary_with_a_median_ttft_is_not_said_to_have_none() -> None:
    # the vLLM summary gives a median TTFT; what BR009 lacks is the first wave's, which only
    # per-request times tell (the median may include waiting for a slot)
    f = _finding("vllm/er0080-v0.25.1-opt125m-conc2-summary-reformatted.json", "BR009")
    assert str(f.outcome) == "undecidable"
    assert f.message.startswith(
        "no per-request first-token and end times, so no time to first token of the first wave "
        "(the file's median TTFT, "
    )
    assert "no TTFT" not in f.message


@pytest.mark.parametrize(
    "name",
    [
        "vllm/er0080-v0.25.1-opt125m-conc2-summary-reformatted.json",
        "sglang/tonyli15-sglang055-qwen25-3b-agg-n50-c8.jsonl",
    ],
)
def test_a_summarys_median_decode_rate_is_one_over_its_median_tpot(name: str) -> None:
    # it was 1 ÷ the mean TPOT, under the name of a median
    import json

    path = _real(name)
    text = path.read_text(encoding="utf-8").splitlines()[0] if name.endswith("l") else None
    doc = json.loads((text or path.read_text(encoding="utf-8")).replace("Infinity", "1e999"))
    (run,) = api.audit([path]).runs
    assert run.median_decode_tps == pytest.approx(1000 / doc["median_tpot_ms"], rel=1e-6)
    assert run.median_decode_tps != pytest.approx(1000 / doc["mean_tpot_ms"], rel=1e-3)


def test_a_summarys_latency_percentiles_are_shown_as_the_tools_own() -> None:
    # SGLang states median and p99 of TTFT, TPOT, ITL and e2e (no p90): the verdict gives
    # them, says they are the tool's, and leaves p90 unknown; the terminal marks the run
    from reporter.render.context import build_context
    from reporter.render.html import render_html_context
    from reporter.render.text import render_text

    path = _real("sglang/tonyli15-sglang055-qwen25-3b-agg-n50-c8.jsonl")
    verdict = api.audit([path])
    (run,) = verdict.runs
    assert run.latency_source == "summary"
    assert run.latency["ttft_s"]["p50"] == pytest.approx(33.528951462358236e-3)
    assert run.latency["ttft_s"]["p99"] == pytest.approx(599.2950061988086e-3)
    assert run.latency["e2e_s"]["p50"] == pytest.approx(223.48943213000894e-3)
    assert run.latency["ttft_s"]["p90"] is None
    text = render_text(verdict)
    assert "* agg_n50_in128_out64_c8  33.5 / n/a / 599.3" in text
    assert "* the tool's own percentiles, from its summary (n/a where it gives none)" in text
    page = render_html_context(build_context(verdict, charts=False))  # the table, no charts
    assert "(tool's summary)" in page and "33.5 / n/a / 599.3" in page
    assert verdict.to_dict()["runs"][0]["latency_source"] == "summary"


def test_rows_percentiles_are_the_requests_own() -> None:
    (run, *_) = api.audit([Path(__file__).parents[2] / "traces" / "case-a-ladder.jsonl"]).runs
    assert run.latency_source == "requests"


def test_one_request_summarised_is_explained_and_its_prefill_told() -> None:
    # one request, 102,399 prompt tokens, TTFT 21.82 s of a 49.96 s wall (SOURCES.md): the
    # summary's TTFT is that request's, so its prefill rate is known (4.7k tok/s) and the
    # 31.3 tok/s mixes prefill into a decode figure (BR008); TTFT + 1,564 tokens after the
    # first at 55.6 tok/s (1 ÷ TPOT 17.99 ms) explain the wall (BR009): 21.82 + 28.14, the
    # file's own e2e latency, with no "waiting for a slot" of a request alone
    name = "vllm/diogoaav-llama33-70b-fp8-100k-prompt-single-request.json"
    prefill = _finding(name, "BR008")
    assert str(prefill.outcome) == "fired"
    assert prefill.message == (
        "prompt processing ≈ 21.82 s of the 49.96 s wall clock (44% > 30%): the 31.3 tok/s "
        "measures prefill"
    )
    wall = _finding(name, "BR009")
    assert str(wall.outcome) == "passed"
    assert wall.arithmetic[0] == (
        "predicted wall = TTFT of its one request 21.82 + (output 1,565 − 1, its first token "
        "at the TTFT) ÷ decode 55.58 (1 ÷ TPOT) = 49.96 s"
    )
    assert wall.numbers["predicted_wall_s"] == pytest.approx(49.9579, abs=1e-4)  # e2el_ms


def test_a_run_whose_requests_all_timed_out_has_a_wall_but_nothing_completed() -> None:
    path = _real("aiperf/databloom-aiperf-qwen35-4b-gguf-c1-all-timeouts-profile_export.jsonl")
    (run,) = api.audit([path]).runs
    assert run.wall_s == pytest.approx(618.49, abs=0.01)
    assert run.reasons == ["none of its 20 requests completed, so no total ÷ wall aggregate"]
    assert run.questions["aggregate"].startswith("none of its 20 requests completed")


def test_n_streams_rates_are_said_to_be_n_times_the_mean_not_a_sum() -> None:
    # LLMPerf at 5 streams, 150 requests: the figure a reader would publish is 5 × the mean
    # rate (920.8), which the finding must not call "summing the per-request rates" (the sum
    # of all 150 is 27,624.7, in the runs table)
    f = _finding(GROQ, "BR001")
    assert str(f.outcome) == "fired"
    assert f.message == (
        "adding up its 5 streams' rates (N × the mean per-request rate) would claim 920.8 "
        "tok/s, 2.08× the honest 441.8 tok/s"
    )


def test_a_summary_with_an_output_range_is_not_said_to_give_only_a_mean() -> None:
    # AIPerf's CSV gives the output lengths' min and max (3 and 1,125) with their mean
    f = _finding("aiperf/akamaslabs-aiperf0.11-qwen3-4b-conc16-profile_export_aiperf.csv", "BR006")
    assert str(f.outcome) == "undecidable"
    assert f.message.startswith(
        "stop mode not stated; the summary gives outputs of 3–1,125 tokens (mean 263.0) but no "
        "per-request lengths, and no requested length to compare with"
    )


def test_prompts_not_completed_are_not_said_to_be_counted_by_the_tool() -> None:
    # this vLLM version writes no failed count: 985 is num_prompts 2,000 − completed 1,015,
    # which the run's derived list shows; "the tool counted 985 failed" was false of it
    path = _real("vllm/nerdalert-h100-llama31-8b-rate-sweep.jsonl")
    verdict = api.audit([path], select=["BR019"])
    f = next(f for f in verdict.findings if f.subject == "vllm:infqps:framework=vllm")
    assert f.message == "985 of 2000 requests failed or did not complete"


def test_a_run_not_shown_decoding_together_is_not_said_to_lack_its_figures() -> None:
    # vLLM bench serve at max_concurrency 2, 8 requests: 128 tokens ÷ 1.37 s = 93.7 tok/s is
    # recomputed, and 1.99 requests were in flight on average (Σ e2e ÷ wall); but a cold
    # first request (TTFT p99 762 ms) leaves Σ decode ÷ wall at 0.72, which cannot show two
    # decoding at once. The headline said the trace could not "recompute the figures", and
    # the reason that no bound showed "the requests overlapping"
    from reporter.render.markdown import render_markdown

    verdict = api.audit([_real("vllm/er0080-v0.25.1-sweep-maxseqs4-conc2-run0.json")])
    (run,) = verdict.runs
    assert str(run.verdict) == "insufficient-data"
    assert run.aggregate_tps == pytest.approx(93.7, abs=0.05)
    assert run.reasons[0].startswith(
        "neither the request times, a bound from the summary, nor a sweep over N show the "
        "requests decoding at the same time: no completion time (t_end) for every request; "
        "Σ decode ÷ wall = 0.72"
    )
    summary = render_markdown(verdict)
    assert "the trace does not hold enough to decide the figures" in summary
    assert "recompute the figures" not in summary


@pytest.mark.parametrize(
    "name",
    [
        "aiperf/akamaslabs-aiperf0.11-qwen3-4b-conc16-profile_export_aiperf.json",
        "llmperf/leaderboard-groq_70b_summary.json",
    ],
)
def test_a_run_whose_ladder_question_is_decided_is_not_said_to_leave_it_undecidable(
    name: str,
) -> None:
    # a summary has no completion times to order, but Σ decode ÷ wall can still show many
    # requests decoding at once (15.72 for AIPerf's N=16): the adapter's note said "the ladder
    # question is undecidable" beside the run's decided answer "overlapping"
    (run,) = api.audit([_real(name)]).runs
    assert run.questions["ladder"].startswith("overlapping: not serial: at least")
    assert not [d for d in run.derived if "undecidable" in d]
    assert [d for d in run.derived if "no completion times to order into a ladder" in d]
