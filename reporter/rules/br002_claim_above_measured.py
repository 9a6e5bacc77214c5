"""A claimed figure is above what the trace measures, and the claim does not say how it was got.

## What it checks
Every claim that is not a sum of per-request rates (BR001 handles those): an aggregate, a
single-stream rate, a scaling factor or a speed-up, against the same figure recomputed from
the trace.

## Why it matters
A number above what the recorded requests can produce came from somewhere else: a different
run, a sum, a best case, or a typo. A reader can only trust the figure the trace supports.

## How it decides
`factor = claimed ÷ recomputed`, where the recomputed figure is: for an aggregate, total
output tokens ÷ wall clock (median over repeats); for a stream rate, the median per-request
decode rate `output tokens ÷ (t_end − t_first)`; for scaling, `A(N) ÷ A(N_min)` in the
claim's sweep; for a speed-up `A(a) ÷ A(b)`. A prompt-processing test (llama-bench `pp512`:
no output, only the prompt timed) is measured in prompt tokens ÷ time, and is never compared
with a generation test. The claim is above the measurement when the
factor exceeds `1 + claim_tolerance` (10%, the spread of repeated single runs), unless the
claim reproduces the aggregate over the window from the first start to the last successful
end of a run whose last requests failed (AIPerf ends its Benchmark Duration there), or
llama-bench's rate of a prompt+generation test (`pp512+tg128`: prompt and generated tokens
÷ time, another figure than a generation rate): then the finding passes and says both
figures. A claim below the measurement passes here; its verdict
says whether it is a per-request rate (incomparable) or understated.

## Worked example
METHOD.md §4: "8-way reaches 3× single" against case B's natural-stop runs: 171.2 ÷ 60.3 =
2.84×, so a claimed 3× is 1.06× the measurement (within tolerance, but the threshold's
definition decides, see BR012). A claimed 350 tok/s at N=4 with method unknown against
case A's 91.0 tok/s: 3.8× above.

## When it cannot decide
A claim that names no run, or names several groups, or whose runs have no wall clock.

## What to do
Publish the recomputed figure, with its definition (total ÷ wall), its concurrency and its
stop mode.

## References
METHOD.md §1, §7.
"""

from __future__ import annotations

from reporter.claims import CLAIM_TOLERANCE, matching
from reporter.model import rate_digits
from reporter.numbers import fmt
from reporter.rules.base import AuditData, Finding, Rule, run_ref
from reporter.types import Outcome, Severity

_UNIT = {"aggregate_tps": " tok/s", "stream_tps": " tok/s", "speedup": "×", "scaling": "×"}


def check(data: AuditData) -> list[Finding]:
    findings = []
    tol = data.config[CLAIM_TOLERANCE]
    if not data.claim_checks:
        return [
            RULE.finding(
                "audit",
                Outcome.NOT_APPLICABLE,
                "no claim in the trace or on the command line (--claim)",
            )
        ]
    for c in data.claim_checks:
        if c.method == "sum":
            findings.append(
                RULE.finding(c.claim, Outcome.NOT_APPLICABLE, "a summed claim: see BR001")
            )
            continue
        if c.recomputed is None or c.factor is None:
            findings.append(
                RULE.finding(
                    c.claim, Outcome.UNDECIDABLE, c.problem or "nothing to recompute it from"
                )
            )
            continue
        unit = _UNIT.get(c.metric, "")
        digits = 2 if unit == "×" else rate_digits(min(c.value, c.recomputed))
        numbers = {"claimed": c.value, "recomputed": c.recomputed, "factor": c.factor}
        arithmetic = [
            *c.arithmetic,
            f"claimed {fmt(c.value, digits)} ÷ recomputed "
            f"{fmt(c.recomputed, digits)} = {fmt(c.factor, 2)}×",
        ]
        refs = [x for x in [c.ref] if x] + [x for r in c.runs for x in run_ref(data, r)]
        # a claim above the recomputed figure may reproduce one of several runs recorded
        # alike, or a narrower window of the run: passed, with that reading
        reproduced = None
        if c.factor > 1 + tol and (mixed := matching(c.mixed, c.value, tol)) is not None:
            # llama-bench's pp+tg rate counts prompt tokens too: another figure, not a
            # generation rate above the measured one (the claim's verdict: incomparable)
            reproduced = (
                mixed,
                f"{mixed.what}; the generated tokens alone come at "
                f"{fmt(c.recomputed, digits)}{unit} (the claim is {fmt(c.factor, 2)}× that), "
                "so it is no generation rate",
                "mixed_rate",
            )
        elif c.factor > 1 + tol and (alike := matching(c.alike, c.value, tol)) is not None:
            reproduced = (
                alike,
                f"{alike.what}; their median is {fmt(c.recomputed, digits)}{unit} (the claim is "
                f"{fmt(c.factor, 2)}× that)",
                "run_aggregate",
            )
        elif c.factor > 1 + tol and (window := matching(c.windows, c.value, tol)) is not None:
            reproduced = (
                window,
                f"the aggregate over {window.what}; over the whole run it is "
                f"{fmt(c.factor, 2)}× the recomputed {fmt(c.recomputed, digits)}{unit}",
                "window_aggregate",
            )
        if reproduced is not None:
            reading, what, key = reproduced
            findings.append(
                RULE.finding(
                    c.claim,
                    Outcome.PASSED,
                    f"claimed {fmt(c.value, digits)}{unit} reproduces {what}",
                    arithmetic=[*arithmetic, reading.arithmetic],
                    numbers=numbers | {key: reading.value},
                    refs=refs,
                )
            )
        elif c.factor > 1 + tol:
            findings.append(
                RULE.finding(
                    c.claim,
                    Outcome.FIRED,
                    f"claimed {c.metric} {fmt(c.value, digits)}{unit} (method {c.method}) is "
                    f"{fmt(c.factor, 2)}× what the trace measures, "
                    f"{fmt(c.recomputed, digits)}{unit}",
                    arithmetic=arithmetic,
                    numbers=numbers,
                    refs=refs,
                    help="publish the recomputed figure with its definition (total ÷ wall), its "
                    "concurrency and its stop mode",
                )
            )
        else:
            findings.append(
                RULE.finding(
                    c.claim,
                    Outcome.PASSED,
                    f"claimed {fmt(c.value, digits)}{unit} is "
                    + (
                        f"within {tol:.0%} of"
                        if c.factor >= 1 - tol
                        else f"{fmt(c.factor, 2)}× (below) what the trace measures,"
                    )
                    + f" the recomputed {fmt(c.recomputed, digits)}{unit}",
                    arithmetic=arithmetic,
                    numbers=numbers,
                    refs=refs,
                )
            )
    return findings


RULE = Rule(
    code="BR002",
    name="claim-above-measured",
    severity=Severity.ERROR,
    summary="claimed figure above what the trace measures, method unknown",
    check=check,
    doc=__doc__ or "",
)
