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

## When it cannot decide
A single request, a run with fewer than two successful requests, or a run with concurrency 1,
is not applicable. Without completion times,
or with unequal output lengths and no first-token times (unequal lengths smear a ladder into
something that looks like a cluster), or with staggered send times, it says it cannot decide.

## What to do
Do not publish the concurrency figure. Check the server's startup log for a refused batching
flag (BR013), or the slot / parallel setting; rerun with forced equal lengths.

## References
METHOD.md §2 "Ladder or cluster"; seed 000 §2.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from reporter.config import threshold
from reporter.rules.base import AuditData, Finding, Rule, request_refs
from reporter.types import Outcome, Severity, fmt

SERIAL_OVERLAP = threshold(
    "serial_overlap",
    1.15,
    "a strictly serial server gives 1.0; a few ms of hand-over between requests and clock "
    "jitter add a little, real batching of even two requests gives close to 2",
)
LADDER_STEP_TOLERANCE = threshold(
    "ladder_step_tolerance",
    0.25,
    "steps of a serial queue equal one request's duration; state rebuilt at each switch and "
    "noise (±10% on a busy machine) move them by less than a quarter",
)
EQUAL_LENGTH_CV = threshold(
    "equal_length_cv",
    0.05,
    "completion times only show a ladder when outputs are of one length (METHOD §2)",
)
SEND_SPREAD = threshold(
    "send_spread",
    0.05,
    "requests sent within 5% of the wall clock count as sent together",
)


def check(data: AuditData) -> list[Finding]:
    findings = []
    for run_id in data.stats.index:
        findings.append(_check_run(data, str(run_id)))
    return findings


def _completions(data: AuditData, run_id: str) -> tuple[np.ndarray, float]:
    rows = data.requests_of(run_id)
    rows = rows[rows["ok"]]
    t0 = data.figures(run_id)["t0"]
    return np.sort(rows["t_end"].to_numpy(dtype="float64") - t0), t0


def _check_run(data: AuditData, run_id: str) -> Finding:
    s = data.figures(run_id)
    n = data.concurrency(run_id)
    requests = int(s["requests"])
    if requests < 2:
        return RULE.finding(
            run_id, Outcome.NOT_APPLICABLE, f"{requests} request(s): a single request cannot queue"
        )
    if n == 1:
        return RULE.finding(
            run_id,
            Outcome.NOT_APPLICABLE,
            "concurrency 1: requests run one after another by design",
        )
    if int(s["ok"]) < 2:
        return RULE.finding(
            run_id,
            Outcome.NOT_APPLICABLE,
            f"{int(s['ok'])} successful request(s) of {requests}: nothing to overlap "
            "(the failures are BR019's)",
        )
    if not s.flag("has_end"):
        return RULE.finding(
            run_id, Outcome.UNDECIDABLE, "no completion time (t_end) for every request"
        )
    rows = data.requests_of(run_id)
    refs = request_refs(rows)
    done, _ = _completions(data, run_id)
    if np.isnan(n) and s["in_flight"] < 1.05:
        return RULE.finding(
            run_id,
            Outcome.NOT_APPLICABLE,
            "concurrency not stated and never more than one request in flight",
        )
    numbers: dict[str, Any] = {
        "requests": requests,
        "concurrency": None if np.isnan(n) else n,
        "completions_s": [round(float(x), 3) for x in done[:32]],
    }
    if s.flag("has_first") and not np.isnan(s["overlap"]):
        return _by_overlap(data, run_id, done, numbers, refs)
    return _by_completions(data, run_id, done, numbers, refs)


def single_request_time(data: AuditData, run_id: str) -> tuple[float, str]:
    """One request's duration: a lone request of the same sweep, else the median decode time."""
    group = data.run_field(run_id, "group")
    lone = [
        r
        for r in data.groups().get(str(group), [])
        if data.concurrency(r) == 1 and data.figures(r)["requests"] == 1
    ]
    if lone:
        value = float(np.median([data.figures(r)["wall_s"] for r in lone]))
        if not np.isnan(value):
            return value, f"one request alone (run {lone[0]})"
    return float(data.requests_of(run_id)["decode_s"].median()), "median decode time of one request"


def _shown(done: np.ndarray, limit: int = 8) -> str:
    text = ", ".join(fmt(x) for x in done[:limit])
    return text + (f", … ({len(done)} in all)" if len(done) > limit else "")


def _by_overlap(
    data: AuditData, run_id: str, done: np.ndarray, numbers: dict[str, Any], refs: list[str]
) -> Finding:
    s = data.figures(run_id)
    overlap = float(s["overlap"])
    limit = data.config[SERIAL_OVERLAP]
    single, single_what = single_request_time(data, run_id)
    step = float(done[-1] / len(done))
    numbers |= {"overlap": overlap, "step_s": step, "single_request_s": single}
    arithmetic = [
        f"overlap = Σ decode time ÷ union of decode intervals = {fmt(overlap, 2)} "
        f"(1.0 = one at a time; {int(s['ok'])} requests)",
        f"completions (s from the first send): {_shown(done)}",
        f"mean step = last completion ÷ N = {fmt(done[-1], 2)} ÷ {len(done)} = {fmt(step, 2)} s; "
        f"{single_what}: {fmt(single, 2)} s",
    ]
    if overlap <= limit:
        return RULE.finding(
            run_id,
            Outcome.FIRED,
            f"requests decoded one at a time (overlap {fmt(overlap, 2)} ≤ {fmt(limit, 2)}): "
            f"completions step by {fmt(step, 2)} s ≈ one request's {fmt(single, 2)} s; "
            "the run is serial",
            arithmetic=arithmetic,
            numbers=numbers,
            refs=refs,
            help="do not publish this as concurrent throughput; look for a refused batching "
            "flag in the server log and check the number of slots",
        )
    return RULE.finding(
        run_id,
        Outcome.PASSED,
        f"requests decoded together: overlap {fmt(overlap, 2)} requests at a time",
        arithmetic=arithmetic,
        numbers=numbers,
        refs=refs,
    )


def _by_completions(
    data: AuditData, run_id: str, done: np.ndarray, numbers: dict[str, Any], refs: list[str]
) -> Finding:
    s = data.figures(run_id)
    cv = float(s["out_cv"]) if not np.isnan(s["out_cv"]) else float("nan")
    if np.isnan(cv) or cv > data.config[EQUAL_LENGTH_CV]:
        why = (
            "output lengths unknown"
            if np.isnan(cv)
            else f"output lengths vary (CV {fmt(cv * 100, 0)}%, {fmt(s['out_min'], 0)}–"
            f"{fmt(s['out_max'], 0)} tokens)"
        )
        return RULE.finding(
            run_id,
            Outcome.UNDECIDABLE,
            f"no first-token times and {why}: unequal lengths smear a ladder into a cluster",
            numbers=numbers,
            refs=refs,
            help="record t_first, or rerun with forced equal output lengths",
        )
    wall = float(s["wall_s"])
    if not s.flag("has_send") or float(s["send_spread_s"]) > data.config[SEND_SPREAD] * wall:
        return RULE.finding(
            run_id,
            Outcome.UNDECIDABLE,
            "no first-token times and the requests were not sent together: completion times "
            "alone cannot show a queue",
            numbers=numbers,
            refs=refs,
        )
    count = len(done)
    first = float(done[0])
    steps = np.diff(done)
    spread = (done[-1] - done[0]) / done[-1] if done[-1] > 0 else 0.0
    serial_spread = (count - 1) / count
    tol = data.config[LADDER_STEP_TOLERANCE]
    even = bool(len(steps)) and bool(np.all(np.abs(steps - first) <= tol * first))
    numbers |= {
        "step_s": float(np.median(steps)),
        "single_request_s": first,
        "spread": spread,
        "serial_spread": serial_spread,
    }
    arithmetic = [
        f"completions (s from the first send): {_shown(done)}",
        f"steps {', '.join(fmt(x, 2) for x in steps[:8])} s against one request's "
        f"{fmt(first, 2)} s (±{tol:.0%})",
        f"spread (last − first) ÷ last = {fmt(spread, 2)}; a serial queue gives "
        f"(N − 1) ÷ N = {fmt(serial_spread, 2)}",
    ]
    if even and spread >= 0.75 * serial_spread:
        return RULE.finding(
            run_id,
            Outcome.FIRED,
            f"completions form a ladder: {_shown(done, 4)} s, stepping by "
            f"{fmt(float(np.median(steps)), 2)} s ≈ one request's {fmt(first, 2)} s; the run "
            "is serial",
            arithmetic=arithmetic,
            numbers=numbers,
            refs=refs,
            help="do not publish this as concurrent throughput; look for a refused batching "
            "flag in the server log and check the number of slots",
        )
    if spread <= 0.25 * serial_spread:
        return RULE.finding(
            run_id,
            Outcome.PASSED,
            f"completions cluster: spread {fmt(spread, 2)} against a serial "
            f"{fmt(serial_spread, 2)}",
            arithmetic=arithmetic,
            numbers=numbers,
            refs=refs,
        )
    return RULE.finding(
        run_id,
        Outcome.UNDECIDABLE,
        f"completions neither cluster nor step evenly (spread {fmt(spread, 2)}, serial "
        f"{fmt(serial_spread, 2)})",
        arithmetic=arithmetic,
        numbers=numbers,
        refs=refs,
        help="record first-token times so the decode intervals can be compared",
    )


RULE = Rule(
    code="BR003",
    name="serial-completion-ladder",
    severity=Severity.ERROR,
    summary="completions evenly stepped by one request's duration; decode intervals do not overlap",
    check=check,
    doc=__doc__ or "",
)
