"""Outputs were not forced to one length: the figure measures how long the answers were.

## What it checks
The stop mode of each run: forced (`ignore_eos` / `min_tokens` / n_predict, every request
writes exactly the requested tokens) or natural (each request stops at its end-of-sequence).

## Why it matters
With natural stop, the aggregate depends on how much the model chose to write as much as on
how fast it writes: short answers leave the wall clock full of prompt processing and tail.
Two natural-stop figures with different prompt sets are not comparable, and neither is a
natural-stop figure with a forced one.

## How it decides
A run whose workload says `stop: natural` fires. A run whose stop is unknown fires when its
requests ended on end-of-sequence (`finish_reason: stop`) or their output lengths vary
(coefficient of variation above `equal_length_cv`, 5%); it passes when every completed
request wrote the same number of tokens, or nearly the same with none short of the requested
length (inferred forced). Only completed requests are counted, and the message says so when
some failed (BR019). Nearly equal lengths with some completed requests short of the requested
length (cut, or stopped early) decide nothing. A run that says `stop: forced` passes here
(BR007 checks that the lengths were honoured). A prompt-processing test (llama-bench `pp512`)
writes no output: not applicable.

When each request was asked for its own length (AIPerf sends each its dataset's length as
max_tokens), the run fires as capped but not one length when more than half provably wrote
exactly the length asked. AIPerf's `osl_mismatch_count` counts only the requests past its
threshold (min(5% of the length asked, 50 tokens)), so it says nothing of how many wrote
exactly it; the counts come from the statistics of `osl_mismatch_diff_pct` (min, max, sum and
its linearly interpolated percentiles), as bounds: "at least 92 of 96 (at most 93)". With the
count alone, or bounds that prove no majority either way, it cannot decide.

When each request's length was drawn from a range (SGLang `random_range_ratio` < 1:
`output_tokens_requested_min` to `output_tokens_requested`), the outputs were not of one
length by design: the run fires, naming the range and the mean written (below the range's
lower end, the answers also stopped early). A run with only a tool's summary (no per-request
lengths) is judged on its mean: a mean equal to the requested length means every request wrote
it (none can write more); a mean below 95% of it means answers stopped early. Outputs that all
exceed the requested length by more than 5% (the shortest, or a summary's mean when it gives
no minimum) fire: the length asked for was not applied, so the figure is not at it and its
stop mode is unknown (GenAI-Perf with `--output-tokens-mean 500` that wrote 2,522–2,619
tokens).

## Worked example
METHOD.md §4, case B, natural stop, 352-token prompts, max_tokens 256: at N=8 the requests
wrote 486 tokens in all, ~61 each, in 2.84 s: 171.2 tok/s. Forced to 512 tokens with a
one-sentence prompt, the same server does 606 tok/s.

## When it cannot decide
No output token counts and no stop mode: undecidable; a summary's mean between 95% and 100% of
the requested length decides nothing either. Lengths asked per request with only the tool's
thresholded count of those that differ, or with bounds that show no majority capped: undecidable.

## What to do
Measure decode speed with forced equal lengths (greedy, `ignore_eos` + `min_tokens` or
`max_tokens`), and report the natural-stop figure only as "this workload's" throughput.

## References
METHOD.md §4 "Stop mode and prompt length"; seed 001 §1, §5.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from reporter.ladder import EQUAL_LENGTH_CV
from reporter.numbers import fmt
from reporter.rules.base import (
    AuditData,
    Finding,
    Rule,
)
from reporter.types import Outcome, Severity
from reporter.values import number


def check(data: AuditData) -> list[Finding]:
    return [_check_run(data, str(r)) for r in data.stats.index]


def _summary_lengths(s: Any, mean: float, lo: float, hi: float) -> str:
    """What a summary tells of its output lengths: one request's, a range, or a mean."""
    if int(s["requests"]) == 1:
        return f"its one request wrote {fmt(mean, 0)} tokens"
    if not (math.isnan(lo) or math.isnan(hi)) and lo == hi:
        return f"every one of its {int(s['requests'])} requests wrote {fmt(lo, 0)} tokens"
    if not (math.isnan(lo) or math.isnan(hi)) and lo != hi:
        return (
            f"the summary gives outputs of {fmt(lo, 0)}–{fmt(hi, 0)} tokens (mean "
            f"{fmt(mean, 1)}) but no per-request lengths"
        )
    return f"only the mean output ({fmt(mean, 1)} tokens) is known, with no per-request lengths"


def _check_run(data: AuditData, run_id: str) -> Finding:
    s = data.figures(run_id)
    if data.run_field(run_id, "phase") == "prompt":
        return RULE.finding(
            run_id,
            Outcome.NOT_APPLICABLE,
            "a prompt-processing test (no output tokens): how outputs stop does not arise",
        )
    stop = str(data.run_field(run_id, "stop") or "unknown")
    requested = data.run_field(run_id, "output_tokens_requested")
    # a mask, not a filtered frame: most runs never need the rows themselves
    eos = data.finish_reason_is(run_id, "stop")
    ended_on_eos = int(np.count_nonzero(eos))
    # a count of 0 only where finish reasons were recorded: a summary has none to count
    reasons_known = bool(data.finish_reason_known(run_id).any())
    mean, lo, hi = float(s["out_mean"]), float(s["out_min"]), float(s["out_max"])
    numbers = {
        "stop": stop,
        "mean_output_tokens": mean,
        "min_output_tokens": lo,
        "max_output_tokens": hi,
        **({"ended_on_eos": ended_on_eos} if reasons_known else {}),
        "requested": None if requested is None or math.isnan(requested) else requested,
    }
    of_requested = f" of {fmt(requested, 0)} requested" if numbers["requested"] else ""
    if math.isnan(mean):
        lengths = "output lengths unknown"
    elif lo == hi:
        lengths = f"{fmt(lo, 0)} output tokens{of_requested}"
    else:
        lengths = f"outputs {fmt(lo, 0)}–{fmt(hi, 0)} tokens, mean {fmt(mean, 0)}{of_requested}"
    help_text = (
        "measure decode with forced equal lengths (ignore_eos + min_tokens); quote this "
        "figure only as this prompt set's throughput"
    )
    if stop == "natural":
        return RULE.finding(
            run_id,
            Outcome.FIRED,
            f"natural stop: {lengths}; the figure measures answer length too",
            numbers=numbers,
            help=help_text,
            refs=data.refs_of(run_id, limit=3),
        )
    low = number(data.run_field(run_id, "output_tokens_requested_min"))
    if low is not None and numbers["requested"]:
        return _drawn_range(
            run_id, low, float(requested), mean, numbers, help_text, data.refs_of(run_id, limit=3)
        )
    if stop == "forced":
        return RULE.finding(
            run_id, Outcome.PASSED, "output forced to a fixed length", numbers=numbers
        )
    if numbers["requested"]:
        longer = _longer_than_requested(
            run_id, mean, lo, hi, float(requested), numbers, data.refs_of(run_id, limit=3)
        )
        if longer is not None:
            return longer
    capped = _capped_per_request(data, run_id, s, lengths, numbers, help_text)
    if capped is not None:
        return capped
    cv = float(s["out_cv"])
    if ended_on_eos:
        return RULE.finding(
            run_id,
            Outcome.FIRED,
            f"stop mode not stated, and {ended_on_eos} of {int(s['requests'])} requests ended on "
            f"end-of-sequence ({lengths}): natural stop",
            numbers=numbers,
            help=help_text,
            refs=data.refs_of(run_id, np.flatnonzero(eos), 5),
        )
    if (
        math.isnan(cv)
        and not math.isnan(mean)
        and numbers["requested"]
        and not len(data.values_of(run_id, "ok"))
    ):
        return _summary_mean(run_id, mean, lo, hi, float(requested), numbers, help_text)
    if math.isnan(cv) and not math.isnan(mean):
        return RULE.finding(
            run_id,
            Outcome.UNDECIDABLE,
            f"stop mode not stated; {_summary_lengths(s, mean, lo, hi)}, and no requested "
            "length to compare with (workload.stop or ignore_eos would decide)",
            numbers=numbers,
        )
    if math.isnan(cv):
        return RULE.finding(
            run_id, Outcome.UNDECIDABLE, "stop mode not stated and no output token counts"
        )
    if cv > data.config[EQUAL_LENGTH_CV]:
        return RULE.finding(
            run_id,
            Outcome.FIRED,
            f"stop mode not stated, and {lengths} (CV {fmt(cv * 100, 0)}%): natural stop",
            numbers=numbers,
            help=help_text,
            refs=data.refs_of(run_id, limit=3),
        )
    # only completed requests have lengths to compare; failed ones are BR019's, and are named
    completed, total = int(s["ok"]), int(s["requests"])
    who = (
        "every request"
        if completed >= total
        else f"every completed request ({completed:,} of {total:,})"
    )
    if lo == hi:
        return RULE.finding(
            run_id,
            Outcome.PASSED,
            f"stop mode not stated, but {who} wrote {fmt(lo, 0)} tokens{of_requested} "
            "(forced length inferred)",
            numbers=numbers,
        )
    rows = data.requests_of(run_id)
    ok_rows = rows[rows["ok"].astype(bool)] if len(rows) else rows
    short = (
        int((ok_rows["output_tokens"] < requested).sum())
        if numbers["requested"] and len(ok_rows)
        else 0
    )
    numbers["completed_short_of_requested"] = short
    if short:
        return RULE.finding(
            run_id,
            Outcome.UNDECIDABLE,
            f"stop mode not stated; completed requests wrote {lengths}, {short:,} of them fewer "
            "than requested: neither a forced length nor a natural stop can be inferred "
            "(workload.stop or ignore_eos would decide)",
            numbers=numbers,
        )
    return RULE.finding(
        run_id,
        Outcome.PASSED,
        f"stop mode not stated, but {who} wrote nearly the same length ({lengths}, CV "
        f"{fmt(cv * 100, 1)}%): forced length inferred",
        numbers=numbers,
    )


def _capped_per_request(
    data: AuditData, run_id: str, s: Any, lengths: str, numbers: dict[str, Any], help_text: str
) -> Finding | None:
    """A tool that asked each request for its own length (AIPerf sends each its expected
    length as max_tokens): mostly written exactly, it was capped, not a natural stop, but not
    one length either. The tool's own count (osl_mismatch_count) is of requests past a
    threshold, so it never says how many wrote exactly their length; the bounds the
    adapter proved from the differences' distribution do."""
    summary = data.summary(run_id)
    if float(s["out_min"]) == float(s["out_max"]):
        return None
    mismatches = number(summary.get("length_mismatches"))
    compared = number(summary.get("length_compared"))
    completed = float(s["ok"])
    if (mismatches is None and compared is None) or not completed > 0:
        return None
    extra = data.run_field(run_id, "extra")
    extra = extra if isinstance(extra, dict) else {}
    threshold = str(extra.get("length_threshold") or "a threshold")
    counted = (
        f"the tool counts {fmt(mismatches, 0)} past its threshold, {threshold}"
        if mismatches is not None
        else "the tool gives no count"
    )
    if mismatches is not None:
        numbers["length_mismatches"] = mismatches
    if compared is None:
        if mismatches is not None and mismatches > completed / 2:
            return None  # most wrote another length: decided by the lengths below
        return RULE.finding(
            run_id,
            Outcome.UNDECIDABLE,
            f"stop mode not stated; each request was asked for its own length, and "
            f"{counted} of {fmt(completed, 0)} completed, which does not say how many wrote "
            f"exactly it ({lengths}): without the distribution of the differences, capped "
            "and natural stop cannot be told apart",
            numbers=numbers,
        )
    bounds = {
        k: float(summary.get(f"length_{k}") or 0)
        for k in ("exact_min", "exact_max", "short_min", "short_max", "over_min", "over_max")
    }
    numbers.update({f"length_{k}": v for k, v in bounds.items()})
    numbers["length_compared"] = compared
    wrote = (
        f"{_bound(bounds, 'exact', compared)} wrote exactly it{_most(bounds, 'exact')}, and "
        f"{_bound(bounds, 'short')} wrote fewer tokens{_most(bounds, 'short')}"
    )
    if bounds["over_max"]:
        wrote += f", {_bound(bounds, 'over')} more{_most(bounds, 'over')}"
    # the tool's count goes inside the last bracket, or in one of its own
    wrote = f"{wrote[:-1]}; {counted})" if wrote.endswith(")") else f"{wrote} ({counted})"
    arithmetic = [str(x) for x in extra.get("length_steps") or []]
    if bounds["exact_min"] > compared / 2:
        return RULE.finding(
            run_id,
            Outcome.FIRED,
            f"stop mode not stated; each request was asked for its own length: {wrote} "
            f"({lengths}): mostly capped, not a natural stop, but not one length either; the "
            "figure is for this mix of lengths",
            numbers=numbers,
            arithmetic=arithmetic,
            help=help_text,
        )
    return RULE.finding(
        run_id,
        Outcome.UNDECIDABLE,
        f"stop mode not stated; each request was asked for its own length: {wrote} "
        f"({lengths}): the summary's figures bound these counts but prove neither that most "
        "were capped nor that most stopped on their own",
        numbers=numbers,
        arithmetic=arithmetic,
    )


def _bound(bounds: dict[str, float], kind: str, of: float | None = None) -> str:
    """'3', or 'at least 3' where the summary bounds the count; ' of N' after it if given."""
    least, most = bounds[f"{kind}_min"], bounds[f"{kind}_max"]
    whole_of = f" of {fmt(of, 0)}" if of is not None else ""
    return f"{'' if least == most else 'at least '}{fmt(least, 0)}{whole_of}"


def _most(bounds: dict[str, float], kind: str) -> str:
    """' (at most 4)', or '' where the bound is the count itself."""
    least, most = bounds[f"{kind}_min"], bounds[f"{kind}_max"]
    return "" if least == most else f" (at most {fmt(most, 0)})"


#: Outputs longer than the requested length by more than this factor were not limited to it
#: (a margin for tokens counted by another tokenizer than the server's).
LONGER_THAN_REQUESTED = 1.05


def _longer_than_requested(
    run_id: str,
    mean: float,
    lo: float,
    hi: float,
    requested: float,
    numbers: dict[str, Any],
    refs: list[str],
) -> Finding | None:
    """Every output (or, from a summary without a minimum, their mean) well over the requested
    length: the length was not what the server applied, so it decides no stop mode."""
    shortest = mean if math.isnan(lo) else lo
    if math.isnan(shortest) or shortest <= requested * LONGER_THAN_REQUESTED:
        return None
    numbers["longer_than_requested"] = shortest / requested
    what = "mean output" if math.isnan(lo) else "shortest output"
    if math.isnan(lo):
        outputs = f"the outputs average {fmt(mean, 1)} tokens"
    elif lo == hi:
        outputs = f"every output is {fmt(lo, 0)} tokens"
    else:
        outputs = f"the outputs are {fmt(lo, 0)}–{fmt(hi, 0)} tokens (mean {fmt(mean, 1)})"
    return RULE.finding(
        run_id,
        Outcome.FIRED,
        f"stop mode not stated, and {outputs}, longer than the {fmt(requested, 0)} requested: "
        "the requested length was not applied (or the tokens were counted another way), so "
        "the figure is not at the length asked for, and its stop mode is unknown",
        numbers=numbers,
        arithmetic=[
            f"{what} {fmt(shortest, 1)} ÷ requested {fmt(requested, 0)} = "
            f"{shortest / requested:.2f}×"
        ],
        help="check that the requested length reaches the server (max_tokens in each "
        "request) and force it (ignore_eos + min_tokens) to measure decode at one length",
        refs=refs,
    )


#: A summary's mean output below this share of the requested length: answers stopped early
#: (a forced run writes the requested length, give or take a token of re-tokenization).
SHORT_MEAN_SHARE = 0.95


def _drawn_range(
    run_id: str,
    low: float,
    high: float,
    mean: float,
    numbers: dict[str, Any],
    help_text: str,
    refs: list[str],
) -> Finding:
    """Lengths drawn per request from [low, high]: not one length by design."""
    middle = (low + high) / 2
    numbers.update({"requested_min": low, "requested_middle": middle})
    drawn = f"each request's output length was drawn from [{fmt(low, 0)}, {fmt(high, 0)}] tokens"
    if math.isnan(mean):
        message = f"{drawn} (mean asked for ≈{fmt(middle, 0)}): not one length"
    elif mean < low:
        message = (
            f"{drawn}, yet the outputs average {fmt(mean, 1)}, below the range's lower end: "
            "not one length, and answers stopped before their drawn length (natural stop)"
        )
    else:
        message = (
            f"{drawn} (mean asked for ≈{fmt(middle, 0)}); the outputs average {fmt(mean, 1)}: "
            f"the figure is for outputs of that mean, not of {fmt(high, 0)} tokens"
        )
    return RULE.finding(
        run_id,
        Outcome.FIRED,
        message,
        numbers=numbers,
        arithmetic=[
            f"range [{fmt(low, 0)}, {fmt(high, 0)}]: middle ({fmt(low, 0)} + {fmt(high, 0)}) ÷ 2 "
            f"= {fmt(middle, 1)}; mean written {fmt(mean, 1)}"
        ]
        if not math.isnan(mean)
        else [],
        help="quote the range (or its mean) with the figure; set random_range_ratio 1 for one "
        "length",
        refs=refs,
    )


def _summary_mean(
    run_id: str,
    mean: float,
    lo: float,
    hi: float,
    requested: float,
    numbers: dict[str, Any],
    help_text: str,
) -> Finding:
    """Only a tool's summary: the mean output against the requested length (and its range,
    where it gives one: a mean near the requested length proves nothing when the outputs
    spread, or some exceed it)."""
    share = mean / requested
    numbers["mean_share_of_requested"] = share
    arithmetic = [f"mean output {fmt(mean, 1)} ÷ requested {fmt(requested, 0)} = {share:.1%}"]
    spread = not (math.isnan(lo) or math.isnan(hi)) and lo != hi
    if spread:
        arithmetic.append(f"the summary's outputs: {fmt(lo, 0)}–{fmt(hi, 0)} tokens")
    if abs(mean - requested) < 0.5 and not spread:
        return RULE.finding(
            run_id,
            Outcome.PASSED,
            f"stop mode not stated, but the mean output equals the requested "
            f"{fmt(requested, 0)} tokens, which no request can exceed: every request wrote it "
            "(forced length inferred from the summary)",
            numbers=numbers,
            arithmetic=arithmetic,
        )
    if share < SHORT_MEAN_SHARE:
        return RULE.finding(
            run_id,
            Outcome.FIRED,
            f"stop mode not stated, and the outputs average {fmt(mean, 1)} tokens of "
            f"{fmt(requested, 0)} requested ({share:.0%}): answers stopped early (natural "
            "stop); the figure measures answer length too",
            numbers=numbers,
            arithmetic=arithmetic,
            help=help_text,
        )
    over = f", over {fmt(lo, 0)}–{fmt(hi, 0)}" if spread else ""
    return RULE.finding(
        run_id,
        Outcome.UNDECIDABLE,
        f"stop mode not stated; the outputs average {fmt(mean, 1)} of {fmt(requested, 0)} "
        f"requested tokens{over}: a summary's mean this close decides neither (per-request "
        "lengths, workload.stop or ignore_eos would)",
        numbers=numbers,
        arithmetic=arithmetic,
    )


RULE = Rule(
    code="BR006",
    name="natural-stop",
    severity=Severity.WARNING,
    summary="output not forced to a fixed length: the figure measures answer length too",
    check=check,
    doc=__doc__ or "",
)
