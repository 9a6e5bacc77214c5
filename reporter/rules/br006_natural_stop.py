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

## Worked example
METHOD.md §4, case B, natural stop, 352-token prompts, max_tokens 256: at N=8 the requests
wrote 486 tokens in all, ~61 each, in 2.84 s: 171.2 tok/s. Forced to 512 tokens with a
one-sentence prompt, the same server does 606 tok/s.

## When it cannot decide
No output token counts and no stop mode: undecidable.

## What to do
Measure decode speed with forced equal lengths (greedy, `ignore_eos` + `min_tokens` or
`max_tokens`), and report the natural-stop figure only as "this workload's" throughput.

## References
METHOD.md §4 "Stop mode and prompt length"; seed 001 §1, §5.
"""

from __future__ import annotations

import math

from reporter.rules.base import AuditData, Finding, Rule, request_refs
from reporter.rules.br003_serial_ladder import EQUAL_LENGTH_CV
from reporter.types import Outcome, Severity, fmt


def check(data: AuditData) -> list[Finding]:
    return [_check_run(data, str(r)) for r in data.stats.index]


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
    rows = data.requests_of(run_id)
    eos = rows[rows["finish_reason"] == "stop"] if len(rows) else rows
    mean, lo, hi = float(s["out_mean"]), float(s["out_min"]), float(s["out_max"])
    numbers = {
        "stop": stop,
        "mean_output_tokens": mean,
        "min_output_tokens": lo,
        "max_output_tokens": hi,
        "ended_on_eos": len(eos),
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
            refs=request_refs(rows, 3),
        )
    if stop == "forced":
        return RULE.finding(
            run_id, Outcome.PASSED, "output forced to a fixed length", numbers=numbers
        )
    cv = float(s["out_cv"])
    if len(eos):
        return RULE.finding(
            run_id,
            Outcome.FIRED,
            f"stop mode not stated, and {len(eos)} of {int(s['requests'])} requests ended on "
            f"end-of-sequence ({lengths}): natural stop",
            numbers=numbers,
            help=help_text,
            refs=request_refs(eos, 5),
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
            refs=request_refs(rows, 3),
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


RULE = Rule(
    code="BR006",
    name="natural-stop",
    severity=Severity.WARNING,
    summary="output not forced to a fixed length: the figure measures answer length too",
    check=check,
    doc=__doc__ or "",
)
