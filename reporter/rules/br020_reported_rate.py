"""A per-request rate the tool or engine reported disagrees with its own tokens ÷ time.

## What it checks
For each request with a reported rate (`reported_tps`), which definition it matches:
tokens ÷ decode time (excludes the wait and the prefill), tokens ÷ end-to-end time (includes
them), or chunks ÷ time (counts stream events, not tokens), and whether it matches any.

## Why it matters
The same words, "tokens per second of this request", hide three quantities. A rate that
excludes the queue wait is the one that inflates a sum (BR001); a rate that counts chunks is
wrong by the number of tokens per chunk (LLMPerf before its PR #45 divided SSE events by the
latency); a rate that matches nothing means the token counts or the times are wrong.

## How it decides
Per request, three candidates from the trace: decode `output ÷ (t_end − t_first)`,
end-to-end `output ÷ (t_end − t_send)`, chunks `chunks ÷ (t_end − t_first)`. The
median ratio `reported ÷ candidate` over the run's requests decides: within
`rate_match` (10%) of 1 is a match. Decode or end-to-end matches pass (and say which, since
only the decode one must never be summed); a chunk match, or no match, fires.

## Worked example
llama-server's `timings.predicted_per_second` on a serial slot (the recipe's N=4 ladder):
89.8, 94.0, 86.1, 90.5 tok/s, each its own decode rate, queue wait excluded, while the run's
aggregate was ~89 tok/s: the decode definition, consistent, but never to be summed.

Without absolute times, the durations a tool measured per request stand in: LLMPerf lists
each request's TTFT and end-to-end latency, so end-to-end is `output ÷ e2e` and decode
`output ÷ (e2e − TTFT)`. When both definitions fall within the tolerance (a short wait), the
closer one is named.

## When it cannot decide
Without reported rates it is not applicable; without send, first-token or end times, or the
tool's own per-request durations, there is nothing to compare a reported rate with.

## What to do
Use the trace's own tokens and times; if the reported rate counts chunks, count tokens
(usage) instead.

## References
FORMATS.md §9.4 (LLMPerf), §4 (llama-server timings).
"""

from __future__ import annotations

import math

import numpy as np

from reporter.config import threshold
from reporter.medians import median
from reporter.numbers import fmt
from reporter.rules.base import AuditData, Finding, Rule
from reporter.types import Outcome, Severity

RATE_MATCH = threshold(
    "rate_match",
    0.10,
    "engines time decode from their own clocks, a few ms apart from the client's; 10% "
    "separates definitions that differ by the wait or by tokens per chunk",
)


def check(data: AuditData) -> list[Finding]:
    return [_check_run(data, str(r)) for r in data.stats.index]


def _check_run(data: AuditData, run_id: str) -> Finding:
    # the successful requests with a reported rate, as arrays: no frame taken per run (most
    # tools report none)
    reported = np.asarray(data.values_of(run_id, "reported_tps"), dtype="float64")
    kept = ~np.isnan(reported) & np.asarray(data.values_of(run_id, "ok"), dtype=bool)
    if not kept.any():
        only_summed = data.summary(run_id).get("mean_reported_tps") is not None
        return RULE.finding(
            run_id,
            Outcome.NOT_APPLICABLE,
            "no per-request reported rate (the tool's summary gives only statistics over all "
            "requests)"
            if only_summed and not len(data.values_of(run_id, "reported_tps"))
            else "no per-request reported rate",
        )

    # every row kept (the usual case): the columns themselves, not copies of them
    rows = slice(None) if kept.all() else np.flatnonzero(kept)

    def column(name: str) -> np.ndarray:
        return np.asarray(data.values_of(run_id, name), dtype="float64")[rows]

    reported = reported[rows]
    out = column("output_tokens")
    chunks = column("n_chunks")
    with np.errstate(invalid="ignore", divide="ignore"):
        candidates = {
            "tokens ÷ decode time": column("decode_tps"),
            "tokens ÷ end-to-end time": out / column("e2e"),
        }
        # no chunk counted (most tools record none): its ratios would all be NaN, none usable
        if not np.isnan(chunks).all():
            candidates["chunks ÷ decode time"] = chunks / column("decode_s")
    ratios = {}
    with np.errstate(invalid="ignore", divide="ignore"):
        for name, values in candidates.items():
            r = reported / values
            usable = np.isfinite(r) & (values > 0)
            # every ratio usable (the usual case): the ratios themselves, not a copy
            r = r if usable.all() else r.compress(usable)
            if len(r):
                ratios[name] = median(r)
    if not ratios:
        return RULE.finding(
            run_id,
            Outcome.UNDECIDABLE,
            "reported rates, but no send/first-token/end times to compare with",
        )
    tol = data.config[RATE_MATCH]
    lines = [f"median reported ÷ {name} = {fmt(v, 2)}" for name, v in ratios.items()]
    matches = [name for name, v in ratios.items() if abs(v - 1) <= tol]
    median_reported = median(reported)
    numbers = {
        "ratios": {k: round(v, 4) for k, v in ratios.items()},
        "median_reported_tps": median_reported,
    }
    best = min(ratios, key=lambda k: abs(math.log(ratios[k])) if ratios[k] > 0 else math.inf)
    token_matches = [m for m in matches if m.startswith("tokens")]
    if token_matches:
        # with a short wait both definitions can fall within the tolerance: the closer one
        which = min(token_matches, key=lambda k: abs(math.log(ratios[k])))
        note = (
            " (it excludes the queue wait: never sum it)"
            if "decode" in which
            else " (it includes the wait and the prefill)"
        )
        return RULE.finding(
            run_id,
            Outcome.PASSED,
            f"reported rates are {which}{note}",
            arithmetic=lines,
            numbers=numbers,
        )
    if matches:
        return RULE.finding(
            run_id,
            Outcome.FIRED,
            f"reported rates count stream chunks, not tokens: they match chunks ÷ decode time, "
            f"and are {fmt(ratios.get('tokens ÷ decode time', math.nan), 2)}× the tokens ÷ "
            "decode time",
            arithmetic=lines,
            numbers=numbers,
            refs=data.refs_of(run_id, np.flatnonzero(kept)[:8]),
            help="use the token counts (usage) and the trace's own times, not the reported rate",
        )
    return RULE.finding(
        run_id,
        Outcome.FIRED,
        f"reported rates match no definition: median {fmt(median_reported)} tok/s "
        f"is {fmt(ratios[best], 2)}× {best}",
        arithmetic=lines,
        numbers=numbers,
        refs=data.refs_of(run_id, np.flatnonzero(kept)[:8]),
        help="check the token counts and the clocks; use tokens ÷ time from the trace itself",
    )


RULE = Rule(
    code="BR020",
    name="reported-rate-inconsistent",
    severity=Severity.WARNING,
    summary="a reported per-request rate disagrees with its own tokens ÷ time (chunks, wait)",
    check=check,
    doc=__doc__ or "",
)
