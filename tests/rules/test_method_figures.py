"""METHOD.md's worked figures, recomputed from the shipped traces to the precision it states."""

from __future__ import annotations

import pytest

from tests.conftest import finding, run_of


def test_case_a_claim_is_a_sum_inflated_3_8x(trace_audit):
    v = trace_audit("case-a-ladder.jsonl")
    n4 = run_of(v, "a-retest-n4")
    assert n4["output_tokens"] == 2048
    assert n4["wall_s"] == 22.5
    assert round(n4["aggregate_tps"], 1) == 91.0  # 4 × 512 ÷ 22.5
    claim = v["claims"][0]
    assert claim["id"] == "a-350"
    assert claim["verdict"] == "inflated"
    assert round(claim["recomputed"], 1) == 91.0
    assert round(claim["factor"], 1) == 3.8
    br001 = finding(v, "BR001", "a-350")
    assert br001["outcome"] == "fired"
    assert br001["message"] == (
        "aggregate 350.0 tok/s is a sum of per-request rates (method sum); output tokens ÷ "
        "wall clock is 91.0 tok/s (3.85× lower)"
    )
    assert v["verdict"] == "inflated"


def test_case_a_ladder_steps_by_one_request(trace_audit):
    v = trace_audit("case-a-ladder.jsonl")
    f = finding(v, "BR003", "a-retest-n4")
    assert f["outcome"] == "fired"
    assert f["numbers"]["completions_s"] == [5.5, 11.1, 16.8, 22.5]
    assert f["numbers"]["overlap"] == 1.0
    # step ≈ 5.5 s = the single-request time (N=1 completes at 5.51 s)
    assert round(f["numbers"]["step_s"], 1) == 5.6
    assert f["numbers"]["single_request_s"] == pytest.approx(5.51, abs=0.006)
    assert abs(f["numbers"]["step_s"] / f["numbers"]["single_request_s"] - 1) < 0.03
    assert run_of(v, "a-retest-n4")["verdict"] == "serial"
    assert run_of(v, "a-retest-n2")["verdict"] == "serial"
    assert run_of(v, "a-retest-n1")["verdict"] == "supported"


def test_case_a_table_and_serial_cost(trace_audit):
    v = trace_audit("case-a-ladder.jsonl")
    aggs = [round(run_of(v, f"a-retest-n{n}")["aggregate_tps"], 1) for n in (1, 2, 4)]
    assert aggs == [93.0, 93.4, 91.0]
    # serial costs a little: N=4 is 2% below N=1
    assert round(1 - aggs[2] / aggs[0], 2) == 0.02
    flat = finding(v, "BR005", "case-a-retest")
    assert flat["outcome"] == "fired"


@pytest.mark.parametrize(
    ("group", "aggregates"),
    [
        ("case-a-old-default", [90.3, 89.5, 89.6, 88.5]),
        ("case-a-new-default", [87.5, 89.3, 88.7, 88.3]),
        ("case-a-new-cb8", [86.7, 87.2, 86.8, 86.3]),
    ],
)
def test_case_a_versions_all_flat(trace_audit, group, aggregates):
    v = trace_audit("case-a-versions.jsonl")
    f = finding(v, "BR005", group)
    assert f["outcome"] == "fired"
    assert f["numbers"]["concurrency"] == [1.0, 2.0, 4.0, 8.0]
    assert [round(a, 1) for a in f["numbers"]["aggregate_tps"]] == aggregates
    assert 0.97 <= f["numbers"]["growth"] <= 1.02


def test_case_a_batching_flag_made_it_2pct_slower(trace_audit):
    v = trace_audit("case-a-versions.jsonl")
    default = finding(v, "BR005", "case-a-new-default")["numbers"]["aggregate_tps"]
    cb8 = finding(v, "BR005", "case-a-new-cb8")["numbers"]["aggregate_tps"]
    assert round(1 - sum(cb8) / sum(default), 2) == 0.02


def test_case_b_queue_sum_840_against_401(trace_audit):
    v = trace_audit("case-b-queue.jsonl")
    run = run_of(v, "b-queue-n16")
    assert round(run["sum_reported_tps"], 1) == 840.1
    assert round(run["aggregate_tps"], 1) == 401.3
    claim = v["claims"][0]
    assert claim["verdict"] == "inflated"
    assert round(claim["factor"], 2) == 2.09
    assert finding(v, "BR001", "b-840")["outcome"] == "fired"


def test_case_b_admission_queue_found_at_8_of_16(trace_audit):
    v = trace_audit("case-b-queue.jsonl")
    f = finding(v, "BR004", "b-queue-n16")
    assert f["outcome"] == "fired"
    assert (f["numbers"]["k"], f["numbers"]["n"], f["numbers"]["queued"]) == (8, 16, 8)
    assert round(f["numbers"]["queued_median_ttft_s"], 2) == 4.72
    assert f["message"] == (
        "only 8 of 16 requests were served at once; the other 8 waited a median 4.72 s for "
        "their first token"
    )


def test_case_b_long_prompts_staggered_by_prefill_are_no_admission_queue(trace_audit):
    # 8 prompts of 5,634 tokens read one after another: first tokens every 1.87 s whatever
    # finishes, on a server with 8 slots; one of the five first tokens that came after a
    # completion happens to follow it closely, which is no queue for slots
    v = trace_audit("case-b-long-prompt.jsonl")
    f = finding(v, "BR004", "b-long-n8")
    assert f["outcome"] == "passed"
    assert f["message"] == (
        "no queue: of the 5 requests whose first token came after another request finished, "
        "only 1 got it within 0.39 s of a completion, as a freed slot would give it"
    )


def test_case_b_natural_stop_figures(trace_audit):
    v = trace_audit("case-b-natural-stop.jsonl")
    n1, n8, n16 = (run_of(v, f"b-natural-n{n}") for n in (1, 8, 16))
    assert (n1["output_tokens"], round(n1["wall_s"], 2), round(n1["aggregate_tps"], 1)) == (
        76,
        1.26,
        60.3,
    )
    assert (n8["output_tokens"], round(n8["wall_s"], 2), round(n8["aggregate_tps"], 1)) == (
        486,
        2.84,
        171.2,
    )
    assert (n16["output_tokens"], round(n16["wall_s"], 2), round(n16["aggregate_tps"], 1)) == (
        906,
        5.27,
        171.9,
    )
    assert round(n8["median_ttft_s"], 3) == 0.974
    assert round(n8["median_decode_tps"], 2) == 40.95
    # prefill share: 8 × 352 = 2,816 tokens ÷ 3,005 = 0.94 s of 2.84 s
    br008 = finding(v, "BR008", "b-natural-n8")
    assert br008["numbers"]["prompt_tokens"] == 2816
    assert round(br008["numbers"]["prefill_s"], 2) == 0.94
    assert round(n8["output_tokens"] / 8) == 61
    assert round(n8["aggregate_tps"] / n1["aggregate_tps"], 2) == 2.84
    for run in ("b-natural-n1", "b-natural-n8", "b-natural-n16"):
        assert finding(v, "BR006", run)["outcome"] == "fired"


def test_case_b_long_prompts_are_84pct_prefill(trace_audit):
    v = trace_audit("case-b-long-prompt.jsonl")
    run = run_of(v, "b-long-n8")
    assert round(run["aggregate_tps"], 2) == 72.03
    assert run["wall_s"] == 17.77
    f = finding(v, "BR008", "b-long-n8")
    assert f["outcome"] == "fired"
    assert f["numbers"]["prompt_tokens"] == 45072  # 8 × 5,634
    assert round(f["numbers"]["prefill_s"], 1) == 15.0  # ÷ 3,005 tok/s
    assert round(f["numbers"]["prefill_share"], 2) == 0.84
    assert f["message"] == (
        "prompt processing ≈ 15.00 s of the 17.77 s wall clock (84% > 30%): the 72.0 tok/s "
        "measures prefill"
    )


def test_case_b_forced_prediction_614_against_606(trace_audit):
    v = trace_audit("case-b-forced.jsonl")
    f = finding(v, "BR009", "b-code-spec-on-n8")
    assert f["outcome"] == "passed"
    n = f["numbers"]
    assert round(n["median_ttft_s"], 2) == 0.23
    assert round(n["median_decode_tps"], 2) == 79.45
    assert round(n["predicted_wall_s"], 2) == 6.67  # 0.23 + 512 ÷ 79.45
    assert round(n["predicted_aggregate_tps"]) == 614  # 8 × 512 ÷ 6.67
    assert round(n["measured_wall_s"], 2) == 6.76
    assert round(n["measured_aggregate_tps"]) == 606  # 4,096 ÷ 6.76
    assert round(abs(n["off"]) * 100, 1) == 1.3


def test_case_b_forced_scaling_4_31(trace_audit):
    v = trace_audit("case-b-forced.jsonl")
    claim = next(c for c in v["claims"] if c["id"] == "b-scaling")
    assert round(claim["recomputed"], 2) == 4.31  # 606 ÷ 140.6
    assert claim["verdict"] == "supported"
    assert round(run_of(v, "b-code-spec-on-n1")["aggregate_tps"], 1) == 140.6


@pytest.mark.parametrize(
    ("tag", "n1", "n8", "multiplier_n1", "multiplier_n8"),
    [("code", 53.0, 199.8, 2.65, 3.03), ("prose", 52.3, 228.3, 2.18, 1.57)],
)
def test_case_b_speculation_table(trace_audit, tag, n1, n8, multiplier_n1, multiplier_n8):
    v = trace_audit("case-b-forced.jsonl")
    off1 = run_of(v, f"b-{tag}-spec-off-n1")["aggregate_tps"]
    off8 = run_of(v, f"b-{tag}-spec-off-n8")["aggregate_tps"]
    on1 = run_of(v, f"b-{tag}-spec-on-n1")["aggregate_tps"]
    on8 = run_of(v, f"b-{tag}-spec-on-n8")["aggregate_tps"]
    assert (round(off1, 1), round(off8, 1)) == (n1, n8)
    assert round(on1 / off1, 2) == multiplier_n1
    assert round(on8 / off8, 2) == multiplier_n8


def test_case_b_pure_batching_and_decomposition(trace_audit):
    forced = trace_audit("case-b-forced.jsonl")
    natural = trace_audit("case-b-natural-stop.jsonl")
    off1 = run_of(forced, "b-code-spec-off-n1")["aggregate_tps"]
    off8 = run_of(forced, "b-code-spec-off-n8")["aggregate_tps"]
    assert round(off8 / off1, 2) == 3.77
    qa = run_of(natural, "b-natural-n8")["aggregate_tps"]
    prose = run_of(forced, "b-prose-spec-on-n8")
    code = run_of(forced, "b-code-spec-on-n8")
    assert round(prose["median_decode_tps"], 2) == 47.25
    stop_factor, content_factor = (
        prose["aggregate_tps"] / qa,
        code["aggregate_tps"] / prose["aggregate_tps"],
    )
    assert (round(stop_factor, 2), round(content_factor, 2)) == (2.10, 1.69)
    assert round(code["aggregate_tps"] / qa, 2) == 3.54


def test_case_b_repeats_differ_5pct(trace_audit):
    v = trace_audit("case-b-repeats.jsonl")
    a, b = (run_of(v, f"b-repeat-{i}") for i in (0, 1))
    assert (round(a["aggregate_tps"], 2), round(b["aggregate_tps"], 2)) == (140.55, 133.27)
    assert (a["median_ttft_s"], b["median_ttft_s"]) == (0.062, 0.316)
    assert a["median_decode_tps"] == pytest.approx(143.01, rel=3e-4)
    assert b["median_decode_tps"] == pytest.approx(145.24, rel=3e-4)
    f = finding(v, "BR016", "case-b-code-n1-repeats")
    assert f["outcome"] == "passed"
    assert round(f["numbers"]["max_spread"], 3) == 0.055


def test_honest_batched_sweep_is_supported(trace_audit):
    v = trace_audit("honest-batched.jsonl")
    assert v["verdict"] == "supported"
    fired = [
        (f["code"], f["subject"])
        for f in v["findings"]
        if f["outcome"] == "fired" and f["severity"] != "info"
    ]
    assert fired == []
    assert finding(v, "BR005", "honest-batched")["outcome"] == "passed"
    assert all(r["verdict"] == "supported" for r in v["runs"])


@pytest.mark.slow
def test_all_shipped_traces_together(traces_verdict):
    v = traces_verdict
    assert v["verdict"] == "inflated"
    assert {c["id"]: c["verdict"] for c in v["claims"]} == {
        "a-350": "inflated",
        "b-840": "inflated",
        "b-scaling": "supported",
        "honest-510": "supported",
    }
