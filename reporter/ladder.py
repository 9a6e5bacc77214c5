"""Ladder or cluster (METHOD §2): were a run's requests served one after another?

The answer every reader takes (BR003 prints it, the verdict decides by it, BR014 cites it),
computed once per run by reporter.facts.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from reporter.auditdata import AuditData
from reporter.config import threshold
from reporter.decision import SERIAL_OVERLAP, Decision
from reporter.numbers import counted, fmt
from reporter.types import Outcome

#: What to do about a serial run, whichever way the ladder was found.
SERIAL_HELP = (
    "do not publish this as concurrent throughput; look for a refused batching flag in the "
    "server log and check the number of slots"
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
    high=1.0,
)


def _completions(data: AuditData, run_id: str) -> np.ndarray:
    """The successful requests' end times from the run's first send, in order (NaN last)."""
    # subtracting one number keeps the order: the sorted ends shifted are the shifted sorted
    return data.sorted_ends(run_id) - data.figures(run_id)["t0"]


def ladder(data: AuditData, run_id: str) -> Decision:
    """Ladder or cluster (METHOD §2): from decode intervals, else from completion times."""
    s = data.figures(run_id)
    n = data.concurrency(run_id)
    requests = int(s["requests"])
    if requests == 0 and s.flag("from_summary"):
        # a summary without a request count: the run has requests, how many is not said
        return Decision(
            Outcome.UNDECIDABLE, "the summary gives no request count and no completion times"
        )
    if requests < 2:
        return Decision(
            Outcome.NOT_APPLICABLE,
            "1 request: a single request cannot queue"
            if requests == 1
            else "no request recorded: nothing to queue",
        )
    if n == 1:
        return Decision(
            Outcome.NOT_APPLICABLE,
            "concurrency 1: requests run one after another by design",
        )
    if int(s["ok"]) < 2:
        return Decision(
            Outcome.NOT_APPLICABLE,
            f"{counted(int(s['ok']), 'successful request')} of {requests}: nothing to overlap "
            "(the failures are BR019's)",
        )
    if not s.flag("has_end"):
        return Decision(Outcome.UNDECIDABLE, "no completion time (t_end) for every request")
    refs = data.refs_of(run_id)
    done = _completions(data, run_id)
    if np.isnan(n) and s["in_flight"] < 1.05:
        return Decision(
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
    lone, value = data.lone_requests(str(data.run_field(run_id, "group")))
    if lone and not np.isnan(value):
        return value, f"one request alone (run {lone[0]})"
    return data.median_of(run_id, "decode_s"), "median decode time of one request"


def _shown(done: np.ndarray, limit: int = 8) -> str:
    text = ", ".join(fmt(x) for x in done[:limit])
    return text + (f", … ({len(done)} in all)" if len(done) > limit else "")


def _by_overlap(
    data: AuditData, run_id: str, done: np.ndarray, numbers: dict[str, Any], refs: list[str]
) -> Decision:
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
        return Decision(
            Outcome.FIRED,
            f"requests decoded one at a time (overlap {fmt(overlap, 2)} ≤ {fmt(limit, 2)}): "
            f"completions step by {fmt(step, 2)} s ≈ one request's {fmt(single, 2)} s; "
            "the run is serial",
            arithmetic=arithmetic,
            numbers=numbers,
            refs=refs,
            help=SERIAL_HELP,
            serial=True,
        )
    return Decision(
        Outcome.PASSED,
        f"requests decoded together: overlap {fmt(overlap, 2)} requests at a time",
        arithmetic=arithmetic,
        numbers=numbers,
        refs=refs,
        serial=False,
    )


def _by_completions(
    data: AuditData, run_id: str, done: np.ndarray, numbers: dict[str, Any], refs: list[str]
) -> Decision:
    s = data.figures(run_id)
    cv = float(s["out_cv"]) if not np.isnan(s["out_cv"]) else float("nan")
    if np.isnan(cv) or cv > data.config[EQUAL_LENGTH_CV]:
        why = (
            "output lengths unknown"
            if np.isnan(cv)
            else f"output lengths vary (CV {fmt(cv * 100, 0)}%, {fmt(s['out_min'], 0)}–"
            f"{fmt(s['out_max'], 0)} tokens)"
        )
        return Decision(
            Outcome.UNDECIDABLE,
            f"no first-token times and {why}: unequal lengths smear a ladder into a cluster",
            numbers=numbers,
            refs=refs,
            help="record t_first, or rerun with forced equal output lengths",
        )
    wall = float(s["wall_s"])
    if not s.flag("has_send") or float(s["send_spread_s"]) > data.config[SEND_SPREAD] * wall:
        return Decision(
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
        return Decision(
            Outcome.FIRED,
            f"completions form a ladder: {_shown(done, 4)} s, stepping by "
            f"{fmt(float(np.median(steps)), 2)} s ≈ one request's {fmt(first, 2)} s; the run "
            "is serial",
            arithmetic=arithmetic,
            numbers=numbers,
            refs=refs,
            help=SERIAL_HELP,
            serial=True,
        )
    if spread <= 0.25 * serial_spread:
        return Decision(
            Outcome.PASSED,
            f"completions cluster: spread {fmt(spread, 2)} against a serial "
            f"{fmt(serial_spread, 2)}",
            arithmetic=arithmetic,
            numbers=numbers,
            refs=refs,
            serial=False,
        )
    return Decision(
        Outcome.UNDECIDABLE,
        f"completions neither cluster nor step evenly (spread {fmt(spread, 2)}, serial "
        f"{fmt(serial_spread, 2)})",
        arithmetic=arithmetic,
        numbers=numbers,
        refs=refs,
        help="record first-token times so the decode intervals can be compared",
    )
