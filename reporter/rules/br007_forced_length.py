"""A forced output length was asked for, but the requests did not write that many tokens.

## What it checks
Runs that ask for a forced length (`stop: forced`, `ignore_eos: true` or `min_tokens`): did
every successful request write the requested number of tokens?

## Why it matters
A flag accepted is not a feature enabled. Engines silently ignore parameters they do not know
(llama-cpp-python ignores `ignore_eos`; llama-server ignores `min_tokens`), and a request that
stops early turns a forced-length run into a natural-stop one: every figure computed as
`N × requested ÷ wall` is then wrong, and the ladder test loses its footing.

## How it decides
The requested length is `workload.output_tokens` (or `min_tokens` when only that is given);
when each request's length was drawn from a range (`workload.output_tokens_min` to
`output_tokens`), it is the range's lower end, the length every request asked for at least.
A request falls short when it wrote fewer tokens, or ended on end-of-sequence
(`finish_reason: stop`). Any short request fires; the finding counts them and gives the
shortest. Without request rows that count their output, the run's summary decides: its
shortest output (a tool's statistics, or the length the tool's design fixes, as
bench_one_batch and llama-bench generate exactly the length asked) below the requested length
fires, at or above it passes.

## Worked example
Case B forced runs (METHOD.md §4) ask for 512 tokens with `ignore_eos` + `min_tokens`: all
8 requests write 512, 4,096 tokens in 6.76 s. Had the server ignored the flags, answers of
~61 tokens would have come back and the run would measure prompt processing instead.

## When it cannot decide
Without output token counts (the requests' or a summary's shortest and longest), or without a
requested length, it cannot compare.

## What to do
Send the forced-length parameters the engine honours (`ignore_eos` and `n_predict` for
llama-server, `min_tokens` for vLLM and llama-cpp-python), and check the server's own
completion token counts after every run.

## References
METHOD.md §2, §4; the recipe's parameter table for llama.cpp servers.
"""

from __future__ import annotations

import numpy as np

from reporter.numbers import all_of, fmt
from reporter.rules.base import (
    AuditData,
    Finding,
    Rule,
    run_ref,
)
from reporter.types import Outcome, Severity
from reporter.values import number


def check(data: AuditData) -> list[Finding]:
    return [_check_run(data, str(r)) for r in data.stats.index]


def _check_run(data: AuditData, run_id: str) -> Finding:
    if data.run_field(run_id, "phase") == "prompt":
        return RULE.finding(
            run_id,
            Outcome.NOT_APPLICABLE,
            "a prompt-processing test: no output was asked for",
        )
    stop = data.run_field(run_id, "stop")
    min_tokens = number(data.run_field(run_id, "min_tokens"))
    forced = (
        stop == "forced"
        or data.run_field(run_id, "ignore_eos") is True
        or (min_tokens is not None and min_tokens > 0)
    )
    if not forced:
        return RULE.finding(
            run_id, Outcome.NOT_APPLICABLE, f"no forced length asked for (stop {stop})"
        )
    requested = number(data.run_field(run_id, "output_tokens_requested"))
    if requested is None:
        requested = min_tokens
    # lengths drawn per request from [min, max]: only the lower end is a length every
    # request was asked for at least, so only a request below it is surely short
    low = number(data.run_field(run_id, "output_tokens_requested_min"))
    if requested is not None and low is not None and 0 < low < requested:
        requested = low
    # on the columns as arrays: filtering the whole frame per run dominated big audits
    ok = np.asarray(data.values_of(run_id, "ok"), dtype=bool)
    # every request served (the usual case): the column itself, and its positions those
    # of the run's rows
    every = bool(ok.all())
    out = np.asarray(data.values_of(run_id, "output_tokens"), dtype="float64")
    out = out if every else out[ok]
    if not len(out) or np.isnan(out).all():
        return _by_summary(data, run_id, requested)
    if requested is None:
        return RULE.finding(
            run_id,
            Outcome.UNDECIDABLE,
            "forced length asked for, but the requested length is not stated "
            "(workload.output_tokens)",
        )
    stopped = data.finish_reason_is(run_id, "stop")
    short = (out < requested) | (stopped if every else stopped[ok])
    short_at = np.flatnonzero(short) if every else np.flatnonzero(ok)[short]
    shortest, longest = float(np.nanmin(out)), float(np.nanmax(out))
    n = len(out)
    numbers = {
        "requested": requested,
        "requests": n,
        "short": len(short_at),
        "shortest": shortest,
        "longest": longest,
    }
    if not len(short_at):
        return RULE.finding(
            run_id,
            Outcome.PASSED,
            f"{all_of(n, 'request')} wrote the requested {fmt(requested, 0)} tokens",
            numbers=numbers,
        )
    return RULE.finding(
        run_id,
        Outcome.FIRED,
        f"forced length {fmt(requested, 0)} asked for, but {len(short_at)} of {n} requests "
        f"wrote fewer (shortest {fmt(shortest, 0)} tokens): the flag was accepted, not honoured",
        numbers=numbers,
        refs=data.refs_of(run_id, short_at),
        arithmetic=[
            f"requested {fmt(requested, 0)} tokens; written {fmt(shortest, 0)}–{fmt(longest, 0)}"
        ],
        help="send the parameters this engine honours (ignore_eos, min_tokens, n_predict) and "
        "check its completion token counts after each run",
    )


def _by_summary(data: AuditData, run_id: str, requested: float | None) -> Finding:
    """Without request rows that count their output: the shortest and longest output of the
    run's summary (a tool's statistics, or what the tool's design fixes: bench_one_batch and
    llama-bench generate exactly the length asked), against the length asked for."""
    s = data.figures(run_id)
    shortest, longest, n = float(s["out_min"]), float(s["out_max"]), float(s["ok"])
    if requested is None or np.isnan(shortest) or np.isnan(longest) or not n > 0:
        return RULE.finding(run_id, Outcome.UNDECIDABLE, "no output token counts to compare")
    lengths = (
        f"{fmt(shortest, 0)} tokens each"
        if shortest == longest
        else f"{fmt(shortest, 0)}–{fmt(longest, 0)} tokens"
    )
    numbers = {"requested": requested, "requests": int(n), "shortest": shortest, "longest": longest}
    if shortest >= requested:
        return RULE.finding(
            run_id,
            Outcome.PASSED,
            f"{all_of(n, 'request')} wrote the requested {fmt(requested, 0)} tokens (the "
            f"run's summary: {lengths})",
            numbers=numbers,
        )
    return RULE.finding(
        run_id,
        Outcome.FIRED,
        f"forced length {fmt(requested, 0)} asked for, but the shortest of {fmt(n, 0)} requests "
        f"wrote {fmt(shortest, 0)} tokens (the run's summary): the flag was accepted, not "
        "honoured",
        numbers=numbers,
        refs=run_ref(data, run_id),
        arithmetic=[f"requested {fmt(requested, 0)} tokens; written {lengths}"],
        help="send the parameters this engine honours (ignore_eos, min_tokens, n_predict) and "
        "check its completion token counts after each run",
    )


RULE = Rule(
    code="BR007",
    name="forced-length-not-honoured",
    severity=Severity.ERROR,
    summary="forced length requested, outputs not of that length: flag accepted, not effective",
    check=check,
    doc=__doc__ or "",
)
