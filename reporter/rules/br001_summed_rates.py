"""The claimed aggregate is a sum of per-request rates, while total ÷ wall is lower.

## What it checks
Whether a published aggregate was computed by adding up each request's self-reported decode
rate, and whether that overstates the honest aggregate `total output tokens ÷ wall clock`.

## Why it matters
A request's own rate counts from its first token to its last. When requests queue, each one
runs alone once its turn comes and reports full single-stream speed; adding N such rates
turns one stream into "N streams". The sum is right only when the requests truly overlapped.

## How it decides
A claim is a sum when its `method` is `sum`, or when its value is within `sum_match` (3%) of
the run's `Σ reported_tps`. Its factor is `claimed ÷ (Σ output tokens ÷ wall clock)`; it is
inflated when the factor exceeds `1 + claim_tolerance` (10%). A run with reported rates and no
claim gets an informational finding when the sum a reader would publish exceeds the aggregate
by that bound: `Σ reported_tps` when the run sent its requests at once, `N × mean reported_tps`
when a closed loop of N streams sent more requests than N (one stream, N = 1: its mean rate).

## Worked example
METHOD.md §1, case A: four requests each reported 86–98 tok/s, summed ≈ 350 tok/s; the
isolated retest completed at 5.5, 11.1, 16.8, 22.5 s: `4 × 512 ÷ 22.5 = 91.0 tok/s`. Inflated
3.8×. Case B: 16 prose requests, sum 840.1 tok/s against 401.3 tok/s: 2.09×.

## When it cannot decide
A claim whose run has no wall clock (no send or end times) has no honest aggregate to compare
with. Runs without reported rates and without a sum claim are not applicable.

## What to do
Publish `total output tokens ÷ (last completion − first send)`, never the sum of per-request
rates.

## References
METHOD.md §1 "How the aggregate was computed"; seed 000 §1, §5.
"""

from __future__ import annotations

import math

from reporter.claims import CLAIM_TOLERANCE
from reporter.config import threshold
from reporter.numbers import fmt
from reporter.rules.base import AuditData, Finding, Rule, run_ref
from reporter.types import Outcome, Severity
from reporter.values import number

SUM_MATCH = threshold(
    "sum_match",
    0.03,
    "a claim within 3% of the run's sum of reported rates was almost surely computed as that "
    "sum (rounding of published figures)",
)


def check(data: AuditData) -> list[Finding]:
    findings = []
    claimed_runs: set[str] = set()
    tol = data.config[CLAIM_TOLERANCE]
    for c in data.claim_checks:
        if c.metric != "aggregate_tps":
            continue
        sums = [float(data.figures(r)["sum_reported_tps"]) for r in c.runs]
        sums = [x for x in sums if not math.isnan(x)]
        matches_sum = bool(sums) and abs(c.value / sums[0] - 1) <= data.config[SUM_MATCH]
        if c.method != "sum" and not matches_sum:
            findings.append(
                RULE.finding(
                    c.claim,
                    Outcome.NOT_APPLICABLE,
                    f"claim method is {c.method}, and its value matches no sum of reported rates",
                )
            )
            continue
        claimed_runs.update(c.runs)
        if c.recomputed is None or c.factor is None:
            findings.append(
                RULE.finding(
                    c.claim,
                    Outcome.UNDECIDABLE,
                    f"a summed claim, but {c.problem or 'no wall clock'}",
                )
            )
            continue
        how = "method sum" if c.method == "sum" else f"matches Σ reported {fmt(sums[0])}"
        arithmetic = [
            *c.arithmetic,
            f"claimed {fmt(c.value)} ÷ recomputed {fmt(c.recomputed)} = {fmt(c.factor, 2)}×",
        ]
        numbers = {
            "claimed": c.value,
            "recomputed": c.recomputed,
            "factor": c.factor,
            "sum_reported_tps": sums[0] if sums else None,
        }
        refs = [x for x in [c.ref] if x] + [x for r in c.runs for x in run_ref(data, r)]
        if c.factor > 1 + tol:
            findings.append(
                RULE.finding(
                    c.claim,
                    Outcome.FIRED,
                    f"aggregate {fmt(c.value)} tok/s is a sum of per-request rates ({how}); output "
                    f"tokens ÷ wall clock is {fmt(c.recomputed)} tok/s ({fmt(c.factor, 2)}× lower)",
                    arithmetic=arithmetic,
                    numbers=numbers,
                    refs=refs,
                    help="publish total output tokens ÷ wall clock; never add per-request rates",
                )
            )
        else:
            findings.append(
                RULE.finding(
                    c.claim,
                    Outcome.PASSED,
                    f"a summed claim, but the requests overlapped: {fmt(c.value)} is within "
                    f"{tol:.0%} of total ÷ wall {fmt(c.recomputed)} tok/s",
                    arithmetic=arithmetic,
                    numbers=numbers,
                    refs=refs,
                )
            )
    for run_id in data.stats.index:
        run_id = str(run_id)
        if run_id in claimed_runs:
            continue
        s = data.figures(run_id)
        total, agg = float(s["sum_reported_tps"]), float(s["aggregate_tps"])
        if math.isnan(total):
            findings.append(
                RULE.finding(
                    run_id, Outcome.NOT_APPLICABLE, "no per-request reported rate (reported_tps)"
                )
            )
            continue
        if int(s["ok"]) < 2:
            findings.append(
                RULE.finding(run_id, Outcome.NOT_APPLICABLE, "one request: nothing to sum")
            )
            continue
        if math.isnan(agg) or agg <= 0:
            findings.append(
                RULE.finding(
                    run_id, Outcome.UNDECIDABLE, "reported rates but no wall clock to compare with"
                )
            )
            continue
        ok = int(s["ok"])
        n = data.concurrency(run_id)
        # one stream (N = 1) sent its requests one after another: a reader quotes its mean rate
        one_stream = n == 1
        n_streams = not math.isnan(n) and 1 <= n < ok
        if n_streams:
            # a closed loop of N streams: the published sum is N streams' rates, N × the mean
            # (a summary's own mean where it gives one: its sum may count fewer requests)
            stated = number(data.summary(run_id).get("mean_reported_tps"))
            total = n * (stated if stated is not None else total / ok)
            summed = f"N × mean reported_tps = {n:g} × {fmt(total / n)} = {fmt(total)} tok/s"
        else:
            summed = f"Σ reported_tps over {ok} requests = {fmt(total)} tok/s"
        factor = total / agg
        what = "N × the mean reported rate" if n_streams else "the sum of reported rates"
        numbers = {"sum_reported_tps": total, "aggregate_tps": agg, "factor": factor}
        arithmetic = [
            summed,
            f"total ÷ wall = {fmt(s['output_tokens'], 0)} ÷ {fmt(s['wall_s'], 2)} s = "
            f"{fmt(agg)} tok/s",
            f"{fmt(total)} ÷ {fmt(agg)} = {fmt(factor, 2)}×",
        ]
        if factor > 1 + tol:
            findings.append(
                RULE.finding(
                    run_id,
                    Outcome.FIRED,
                    (
                        "quoting the mean per-request rate of its one stream would claim "
                        if one_stream
                        else f"adding up its {n:g} streams' rates (N × the mean per-request "
                        "rate) would claim "
                        if n_streams
                        else "summing the per-request rates would claim "
                    )
                    + f"{fmt(total)} tok/s, {fmt(factor, 2)}× the honest {fmt(agg)} tok/s",
                    severity=Severity.INFO,
                    arithmetic=arithmetic,
                    numbers=numbers,
                    refs=run_ref(data, run_id),
                    help="quote total output tokens ÷ wall clock, not the sum of reported rates",
                )
            )
        else:
            findings.append(
                RULE.finding(
                    run_id,
                    Outcome.PASSED,
                    (
                        f"one stream, one request at a time: its mean reported rate "
                        f"({fmt(total)}) agrees with total ÷ wall ({fmt(agg)} tok/s)"
                        if one_stream
                        else f"{what} ({fmt(total)}) agrees with total ÷ wall ({fmt(agg)} "
                        "tok/s): the requests overlapped"
                    ),
                    arithmetic=arithmetic,
                    numbers=numbers,
                )
            )
    return findings


RULE = Rule(
    code="BR001",
    name="summed-self-reported-rates",
    severity=Severity.ERROR,
    summary="claimed aggregate = sum of per-request rates while total ÷ wall is lower",
    check=check,
    doc=__doc__ or "",
)
