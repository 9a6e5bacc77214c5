"""Requests of a concurrent run were served one after another: the completions form a ladder.

## What it checks
Whether the requests of a run with concurrency above one actually ran at the same time, or
queued and ran one by one.

## Why it matters
A server that accepts N connections but decodes one request at a time reports full
single-stream speed for every request: each one runs alone once its turn comes. Summed, those
rates look like N-way parallelism. The completion times tell the truth: real batching makes
them cluster; a queue makes them an evenly spaced staircase whose step is one request's time.

## How it decides
With first-token times, from the decode intervals `[t_first, t_end]` of the run's successful
requests: the *overlap* is the time-weighted mean number of requests decoding at once,
`Σ decode time ÷ length of the union of decode intervals` (1.0 = serial). The run is a ladder
when the overlap is at most `serial_overlap` (1.15).

Without first-token times, from completion times alone, which needs equal output lengths
(coefficient of variation at most 5%) and requests sent together (spread of send times at most
5% of the wall clock): the completions, sorted and measured from the first send, step by
`Δ = diff(completions)`. The run is a ladder when the steps after the first are within
`ladder_step_tolerance` (25%) of the first completion (one request's duration) and the
spread `(last − first completion) ÷ last` is at least 75% of the serial value `(N − 1) ÷ N`.
It is a cluster when the spread is at most 25% of that value.

## Worked example
METHOD.md §2, case A: four requests of 512 forced tokens complete at 5.5, 11.1, 16.8 and
22.5 s. Steps 5.6, 5.7, 5.7 s against a single request's 5.5 s; spread (22.5 − 5.5) ÷ 22.5 =
0.76 against the serial 0.75. Decode intervals do not overlap: overlap 1.0. A ladder: the
server is serial, and `4 × 512 ÷ 22.5 = 91.0 tok/s` is all it does.

Without per-request times, from a summary (a bound, stated as one): the time-averaged number
of requests decoding at once is `Σ decode time ÷ wall`, where Σ decode time is Σ (e2e − TTFT)
(completed × (mean e2e − mean TTFT)), or Σ ITL (mean ITL × inter-chunk gaps), or completed ×
(len − 1) × mean TPOT when every output has one length (approximate otherwise). At some
moment at least that many requests were decoding (pigeonhole), so above `serial_overlap`
(twice that for an approximation) the run is not serial. A value below it is consistent with
serial service but does not prove it.

## When it cannot decide
A single request, a run with fewer than two successful requests, or a run with concurrency 1,
is not applicable. Without completion times and without a bound that decides,
or with unequal output lengths and no first-token times (unequal lengths smear a ladder into
something that looks like a cluster), or with staggered send times, it says it cannot decide.

## What to do
Do not publish the concurrency figure. Check the server's startup log for a refused batching
flag (BR013), or the slot / parallel setting; rerun with forced equal lengths.

## References
METHOD.md §2 "Ladder or cluster"; seed 000 §2.
"""

from __future__ import annotations

from reporter.facts import SERIAL_OVERLAP
from reporter.ladder import EQUAL_LENGTH_CV, LADDER_STEP_TOLERANCE, SEND_SPREAD
from reporter.rules.base import AuditData, Finding, Rule
from reporter.types import Severity

__all__ = ["EQUAL_LENGTH_CV", "LADDER_STEP_TOLERANCE", "SEND_SPREAD", "SERIAL_OVERLAP"]


def check(data: AuditData) -> list[Finding]:
    """The overlap answer of each run (reporter.facts), printed."""
    return [RULE.printed(str(r), data.facts.runs[str(r)].overlap) for r in data.stats.index]


RULE = Rule(
    code="BR003",
    name="serial-completion-ladder",
    severity=Severity.ERROR,
    summary="completions evenly stepped by one request's duration; decode intervals do not overlap",
    check=check,
    doc=__doc__ or "",
)
