"""The verdict on a claim below the recomputed figure, and where it ranks in the headline."""

from __future__ import annotations

import json

import pytest

from reporter import api
from reporter.types import VerdictKind, worst
from tests.conftest import TRACES

HONEST = TRACES / "honest-batched.jsonl"


def _claim(text: str) -> tuple[str, str]:
    verdict = api.audit([HONEST], claim_texts=[text], select=["BR002"])
    claim = next(c for c in verdict.claims if c.check.claim == "cli-1")
    return str(claim.verdict), claim.reason


def test_a_claim_far_below_the_aggregate_is_understated() -> None:
    # N=8 repeats: 509.3 and 519.3 tok/s, median 514.3; 300 is 0.58× that.
    assert _claim("aggregate=300 tok/s N=8") == (
        "understated",
        "claimed 300.0 is 0.58× the recomputed 514.3: below what the trace measures",
    )


def test_a_claim_matching_one_requests_rate_is_incomparable() -> None:
    kind, reason = _claim("aggregate=64 tok/s N=8")
    assert kind == "incomparable"
    assert reason == (
        "64 tok/s is a per-request rate (median 65.0, mean 65.0 over 16 completed requests: "
        "output tokens ÷ end-to-end time); the run's aggregate is 514.3 tok/s at 8 concurrent"
    )


@pytest.mark.parametrize("text", ["scaling=2 N=8", "stream=30 N=8"])
def test_ratios_and_stream_rates_below_are_understated_never_per_request(text: str) -> None:
    assert _claim(text)[0] == "understated"


def test_understated_ranks_above_supported_and_below_any_doubt_or_accusation() -> None:
    assert worst([VerdictKind.SUPPORTED, VerdictKind.UNDERSTATED]) is VerdictKind.UNDERSTATED
    for other in (
        VerdictKind.INSUFFICIENT_DATA,
        VerdictKind.INCOMPARABLE,
        VerdictKind.SERIAL,
        VerdictKind.INFLATED,
    ):
        assert worst([VerdictKind.UNDERSTATED, other]) is other


def test_a_claim_without_run_is_judged_beside_one_that_names_a_run() -> None:
    # with an earlier --claim naming run=, a later one that names none was refused with
    # "names run 'nan', which is not in the trace": the field it left out was NaN
    verdict = api.audit(
        [HONEST],
        claim_texts=["aggregate=514 tok/s N=8 run=honest-n8-r0", "aggregate=514 tok/s N=8"],
    )
    by_name = {c.check.claim: c for c in verdict.claims}
    assert by_name["cli-2"].check.problem is None
    assert str(by_name["cli-2"].verdict) == "supported"
    assert by_name["cli-1"].check.runs == ["honest-n8-r0"]


def test_a_claim_that_is_one_of_runs_recorded_alike_is_not_inflated(tmp_path) -> None:
    # simon-mo's R1 benchmark: two vLLM-format files (a vLLM and an SGLang server, which the
    # files do not record), 96.62 and 70.84 tok/s. The README's 96.62 was "inflated, 1.15×
    # the recomputed 83.7" (their median); it is one of the runs
    import json

    for name, duration in (("vllm.json", 51.75), ("sgl.json", 70.58)):
        record = {
            "date": "20250201-120000", "backend": "vllm", "model_id": "llama-8b",
            "num_prompts": 50, "request_rate": 10.0, "duration": duration, "completed": 50,
            "total_input_tokens": 1_600_000, "total_output_tokens": 5000,
            "output_throughput": 5000 / duration, "mean_ttft_ms": 20000.0,
            "median_ttft_ms": 20000.0, "mean_tpot_ms": 30.0, "median_tpot_ms": 30.0,
        }  # fmt: skip
        (tmp_path / name).write_text(json.dumps(record))
    files = [tmp_path / "vllm.json", tmp_path / "sgl.json"]
    verdict = api.audit(files, claim_texts=["aggregate=96.62 tok/s"])
    (claim,) = verdict.claims
    assert str(claim.verdict) == "supported"
    assert claim.reason.startswith("reproduces run vllm.json:vllm:10qps, one of the 2 runs")
    (above,) = [f for f in verdict.findings if f.code == "BR002"]
    assert str(above.outcome) == "passed"
    # a figure none of them reaches is still above what the trace measures
    verdict = api.audit(files, claim_texts=["aggregate=120 tok/s"])
    assert str(verdict.claims[0].verdict) == "inflated"


@pytest.mark.slow
def test_a_claim_record_of_no_run_is_about_its_own_files_runs(tmp_path) -> None:
    # the honest trace's claim, with its group taken away, audited beside case A's ladder
    # (runs at N=8 too, a serial 88 tok/s): it is about the honest file's N=8 runs, not
    # "matches 4 runs in 3 groups; name one"
    lines = HONEST.read_text().splitlines()
    claim = json.loads(next(line for line in lines if '"claim"' in line))
    del claim["group"]
    text = "\n".join(line for line in lines if '"claim"' not in line)
    path = tmp_path / "honest.jsonl"
    path.write_text(text + "\n" + json.dumps(claim) + "\n")
    verdict = api.audit([path, TRACES / "case-a-versions.jsonl"], select=["BR002"])
    (check,) = [c for c in verdict.claims if c.check.claim == "honest-510"]
    assert str(check.verdict) == "supported"
    assert set(check.check.runs) == {"honest-n8-r0", "honest-n8-r1"}
    # a claim given on the command line is about every run audited, as before
    verdict = api.audit(
        [path, TRACES / "case-a-versions.jsonl"], claim_texts=["aggregate=510 tok/s N=8"]
    )
    (cli,) = [c for c in verdict.claims if c.check.claim == "cli-1"]
    assert "name one with run= or group=" in cli.reason
