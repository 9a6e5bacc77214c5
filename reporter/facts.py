"""What the audit knows about each run and each sweep, computed once for every reader.

Rules turn these facts into findings, the verdict takes each run's serial-or-not answer from
them, and the renderers print them: no rule asks another rule, so leaving a rule out
(`--ignore BR003`) changes which findings print, never whether a run is serial.

A run's facts: the ladder question answered from its timestamps (reporter.ladder), the
decode concurrency bounded from a summary when there are no timestamps, the requests in
flight by Little's law, and the run's place on its load axis (closed-loop concurrency or
open-loop request rate). A sweep's facts: the slope of the aggregate over its load axis
(reporter.slope), and for a rate sweep, where it saturates.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from reporter.auditdata import AuditData
from reporter.config import Config
from reporter.decision import (
    APPROXIMATE_MARGIN,
    CONCURRENCY,
    RATE,
    SERIAL_OVERLAP,
    UNKNOWN,
    Decision,
    DecodeBound,
    Facts,
    GroupFacts,
    InFlight,
    PrefillWindow,
    RunFacts,
    proves_overlap,
)
from reporter.ladder import ladder
from reporter.metrics import union_of_one_run
from reporter.numbers import fmt
from reporter.slope import slope
from reporter.table import Tables
from reporter.types import Outcome
from reporter.values import number_or_nan

#: The records this module fills in, named here too for the readers that import them from it.
__all__ = [
    "APPROXIMATE_MARGIN",
    "CONCURRENCY",
    "RATE",
    "SERIAL_OVERLAP",
    "UNKNOWN",
    "Decision",
    "DecodeBound",
    "Facts",
    "GroupFacts",
    "InFlight",
    "PrefillWindow",
    "RunFacts",
    "audit_data",
    "compute",
    "load_axis",
    "proves_overlap",
    "request_rate",
    "unpaced",
]


def _get(summary: dict[str, Any], key: str) -> float:
    value = summary.get(key)
    if isinstance(value, bool):
        return math.nan
    return number_or_nan(value)


def request_rate(data: AuditData, run_id: str) -> float:
    """The run's open-loop request rate; inf when every request was sent at once."""
    rate = number_or_nan(data.run_field(run_id, "request_rate"))
    if not math.isnan(rate):
        return rate
    return math.inf if unpaced(data.run_field(run_id, "extra")) else math.nan


def unpaced(extra: Any) -> bool:
    """The tool sent every request at once (request rate inf), as its `extra` records it."""
    if not isinstance(extra, dict):
        return False
    return extra.get("request_rate_inf") is True or str(extra.get("request_rate")).lower() in (
        "inf",
        "infinity",
    )


def load_axis(concurrency: float, rate: float) -> str:
    """Open loop when a finite request rate paced the sends; closed loop at N otherwise."""
    if math.isfinite(rate) and rate > 0:
        return RATE
    if not math.isnan(concurrency):
        return CONCURRENCY
    return UNKNOWN


def decode_bound(data: AuditData, run_id: str) -> DecodeBound | None:
    """Σ decode time ÷ wall from what a summary (or rows without send times) allows."""
    s = data.figures(run_id)
    wall, ok = s["wall_s"], s["ok"]
    if not (wall > 0) or not (ok > 0):
        return None
    summary = data.summary(run_id)
    sum_latency = _get(summary, "sum_latency_s")
    mean_ttft = _get(summary, "mean_ttft_s")
    mean_tpot = _get(summary, "mean_tpot_s")
    mean_itl = _get(summary, "mean_itl_s")
    chunks = _get(summary, "chunks")
    out_mean = s["out_mean"]
    equal = s["out_min"] == s["out_max"] and not math.isnan(s["out_min"])
    n = int(ok)
    if not math.isnan(sum_latency) and not math.isnan(mean_ttft):
        total = sum_latency - n * mean_ttft
        lines = [
            f"Σ decode = Σ e2e − completed × mean TTFT = {fmt(sum_latency, 2)} s − {n:,} × "
            f"{fmt(mean_ttft, 4)} s = {fmt(total, 2)} s"
        ]
        how = "Σ (e2e − TTFT)"
        exact = True
    elif not math.isnan(mean_itl) and chunks > n:
        total = mean_itl * (chunks - n)
        lines = [
            f"Σ decode = Σ ITL = mean ITL × gaps = {fmt(mean_itl, 5)} s × ({chunks:,.0f} "
            f"chunks − {n:,} first) = {fmt(total, 2)} s"
        ]
        how = "Σ ITL"
        exact = True
    elif not math.isnan(mean_tpot) and out_mean >= 2:
        total = n * (out_mean - 1) * mean_tpot
        exact = bool(equal)
        sign = "=" if exact else "≈"
        lines = [
            f"Σ decode {sign} completed × (output − 1) × mean TPOT = {n:,} × "
            f"({fmt(out_mean, 1)} − 1) × {fmt(mean_tpot, 5)} s = {fmt(total, 2)} s"
            + (
                " (every output the same length)"
                if exact
                else f" ({_unequal(s)}: an approximation)"
            )
        ]
        how = "completed × (len − 1) × mean TPOT"
        floor = _tpot_floor(mean_tpot, _get(summary, "std_tpot_s"), n)
        low = n * (out_mean - 1) * floor.value if floor is not None else math.nan
        if not exact and floor is not None and low / wall > data.config[SERIAL_OVERLAP]:
            # a bound that holds whatever the lengths: every TPOT is at least the floor
            total, exact, how = low, True, "completed × (len − 1) × the lowest TPOT possible"
            lines = [
                floor.line,
                f"Σ decode ≥ completed × (output − 1) × that floor = {n:,} × "
                f"({fmt(out_mean, 1)} − 1) × {fmt(floor.value, 5)} s = {fmt(total, 2)} s "
                "(whatever each output's length)",
            ]
    else:
        return None
    if not total > 0:
        return None
    value = total / wall
    if not exact and value > ok:
        # each request decodes within the wall clock, so no average exceeds the requests:
        # the product of means is disproved (short outputs with long gaps weigh in it)
        return None
    lines.append(
        f"decoding at once, averaged over the wall = Σ decode ÷ wall = {fmt(total, 2)} s ÷ "
        f"{fmt(wall, 2)} s = {fmt(value, 2)}"
    )
    return DecodeBound(value=value, exact=exact, how=how, arithmetic=lines)


def _unequal(s: Any) -> str:
    """Why a Σ decode from the mean output is approximate: lengths known to differ, or not
    known to be equal (a summary without their range)."""
    lo, hi = float(s["out_min"]), float(s["out_max"])
    if not (math.isnan(lo) or math.isnan(hi)) and lo != hi:
        return f"outputs of unequal length, {fmt(lo, 0)}–{fmt(hi, 0)}"
    return "output lengths not known to be equal"


class _Floor(NamedTuple):
    value: float
    line: str


def _tpot_floor(mean: float, std: float, n: int) -> _Floor | None:
    """The lowest TPOT any of n requests can have, from their mean and standard deviation:
    no value lies more than √(n − 1) standard deviations from the mean of n (Samuelson's
    inequality; a sample standard deviation only widens it)."""
    if n < 2 or math.isnan(mean) or math.isnan(std):
        return None
    value = mean - std * math.sqrt(n - 1)
    if not value > 0:
        return None
    return _Floor(
        value,
        f"every TPOT ≥ mean − std × √(completed − 1) = {fmt(mean, 5)} − {fmt(std, 5)} × "
        f"√{n - 1} = {fmt(value, 5)} s (no one of {n:,} values lies further from their mean)",
    )


def in_flight(data: AuditData, run_id: str) -> InFlight | None:
    """Little's law: Σ e2e ÷ wall; rebuilt from mean TTFT + (len − 1) × mean TPOT when the
    file has no end-to-end latency (exact only when every output has one length)."""
    s = data.figures(run_id)
    measured = s["in_flight"]
    if not math.isnan(measured):
        how = "Σ e2e ÷ wall" if s.flag("has_send") else "Σ latency ÷ duration (the tool's)"
        return InFlight(measured, True, how)
    wall, ok = s["wall_s"], s["ok"]
    summary = data.summary(run_id)
    mean_ttft = _get(summary, "mean_ttft_s")
    mean_tpot = _get(summary, "mean_tpot_s")
    out_mean = s["out_mean"]
    if not (wall > 0 and ok > 0 and out_mean >= 1) or math.isnan(mean_ttft + mean_tpot):
        return None
    per_request = mean_ttft + (out_mean - 1) * mean_tpot
    exact = s["out_min"] == s["out_max"]
    sign = "=" if exact else "≈"
    value = ok * per_request / wall
    if not exact and value > ok:
        # more in flight on average than requests there were: the product of means is wrong
        return None
    how = (
        f"Σ e2e {sign} completed × (mean TTFT + (output − 1) × mean TPOT) = {ok:,.0f} × "
        f"({fmt(mean_ttft, 4)} + ({fmt(out_mean, 1)} − 1) × {fmt(mean_tpot, 5)}) s; "
        f"÷ wall {fmt(wall, 2)} s = {fmt(value, 2)} (TPOT excludes the first token)"
    )
    return InFlight(value, exact, how)


def _ttft_share(data: AuditData, run_id: str) -> float:
    s = data.figures(run_id)
    summary = data.summary(run_id)
    mean_ttft = _get(summary, "mean_ttft_s")
    sum_latency = _get(summary, "sum_latency_s")
    if not math.isnan(mean_ttft) and sum_latency > 0 and s["ok"] > 0:
        return float(mean_ttft * s["ok"] / sum_latency)
    ok = data.values_of(run_id, "ok")
    if len(ok) and s.flag("has_first"):
        # every request successful (the usual case): the columns themselves, not copies
        rows = slice(None) if ok.all() else ok
        total = float(np.nansum(data.values_of(run_id, "e2e")[rows]))
        return (
            float(np.nansum(data.values_of(run_id, "ttft")[rows])) / total
            if total > 0
            else math.nan
        )
    return math.nan


def percent(share: float) -> str:
    """Whole percent, except below 1% where that would print a bound of 0.4% as 0%."""
    return f"{share:.1%}" if share < 0.01 else f"{share:.0%}"


def prefill_window(data: AuditData, run_id: str) -> PrefillWindow | None:
    """The wall time all prompt processing fits in (PrefillWindow), or None when the file does
    not bound it: a request without a first-token time (a failed one) may have been prefilled
    at any moment before its end, so its window runs to its end; without either it is open."""
    s = data.figures(run_id)
    wall = float(s["wall_s"])
    if not wall > 0:
        return None
    send = data.values_of(run_id, "t_send")
    if len(send) and s.flag("has_send"):
        first = data.values_of(run_id, "t_first")
        no_first = np.isnan(first)
        close = first  # every first token known (the usual case): the column, not a copy
        if no_first.any():  # a request without a first token: its window runs to its end
            close = np.where(no_first, data.values_of(run_id, "t_end"), first)
            if np.isnan(close).any():
                return None
        if np.isnan(send).any():
            return None
        # one interval a request: sorted by send, as the run is once
        seconds = union_of_one_run(send, close, data.send_order(run_id))
        start = float(send.min())
        last_first = float(np.nanmax(first)) - start if not no_first.all() else math.nan
        how = (
            f"every prompt was processed between its request's send and its first token: the "
            f"union of those windows is {fmt(seconds, 2)} s of the {fmt(wall, 2)} s wall "
            f"= {seconds / wall:.0%}"
        )
        if not math.isnan(last_first):
            how += f" (the last first token came {fmt(last_first, 2)} s after the first send)"
        return PrefillWindow(min(seconds, wall), min(seconds, wall) / wall, how, last_first)
    # without send times: each request's window is its TTFT, and the windows' union is at
    # most their sum; a failed request with no TTFT leaves the bound open
    ok, requests = float(s["ok"]), float(s["requests"])
    ttft = data.values_of(run_id, "ttft")
    if len(ttft) and not np.isnan(ttft).any():
        total, count = float(np.nansum(ttft)), len(ttft)
        source = f"Σ TTFT over {count:,} requests"
    else:
        mean_ttft = _get(data.summary(run_id), "mean_ttft_s")
        if math.isnan(mean_ttft) or not ok > 0 or requests != ok:
            return None
        total = ok * mean_ttft
        source = f"completed × mean TTFT = {ok:,.0f} × {fmt(mean_ttft, 4)} s"
    if not total >= 0:
        return None
    seconds = min(total, wall)
    how = (
        f"every prompt was processed within its request's time to first token, so prefill "
        f"took at most {source} = {fmt(total, 2)} s of the {fmt(wall, 2)} s wall "
        f"= {percent(seconds / wall)}"
    )
    return PrefillWindow(seconds, seconds / wall, how)


def _run_facts(data: AuditData, run_id: str) -> RunFacts:
    n = data.concurrency(run_id)
    rate = request_rate(data, run_id)
    s = data.figures(run_id)
    summary = data.summary(run_id)
    tpot = _get(summary, "mean_tpot_s")
    stream = 1.0 / tpot if tpot > 0 else math.nan
    return RunFacts(
        run=run_id,
        group=str(data.run_field(run_id, "group")),
        axis=load_axis(n, rate),
        concurrency=n,
        rate=rate,
        ladder=ladder(data, run_id),
        decode=None if s.flag("has_first") and s.flag("has_end") else decode_bound(data, run_id),
        stream_tps=stream,
        stream_multiple=s["aggregate_tps"] / stream if stream > 0 else math.nan,
        in_flight=in_flight(data, run_id),
        ttft_share=_ttft_share(data, run_id),
        prefill_window=prefill_window(data, run_id),
    )


def _overlap(data: AuditData, f: RunFacts) -> Decision:
    """Did the run's requests overlap: the timestamps' answer, else the bound's."""
    ladder, bound = f.ladder, f.decode
    if ladder.outcome is not Outcome.UNDECIDABLE or bound is None:
        if ladder.outcome is Outcome.NOT_APPLICABLE and f.concurrency == 1 and bound is not None:
            extra = [*ladder.arithmetic, *bound.arithmetic]
            return Decision(
                ladder.outcome,
                f"{ladder.message} (Σ decode ÷ wall = {fmt(bound.value, 2)})",
                arithmetic=extra,
                numbers=ladder.numbers | {"decode_concurrency": bound.value},
                refs=ladder.refs,
            )
        return ladder
    limit = data.config[SERIAL_OVERLAP]
    margin = limit if bound.exact else APPROXIMATE_MARGIN
    numbers = ladder.numbers | {
        "decode_concurrency": bound.value,
        "decode_concurrency_exact": bound.exact,
        "at_least": bound.at_least,
    }
    arithmetic = [*bound.arithmetic]
    if not math.isnan(f.stream_multiple):
        arithmetic.append(
            f"aggregate ÷ one stream's decode rate (1 ÷ mean TPOT) = "
            f"{fmt(data.figures(f.run)['aggregate_tps'])} ÷ {fmt(f.stream_tps)} tok/s "
            f"≈ {fmt(f.stream_multiple, 2)} streams"
        )
    if bound.value > margin:
        message = (
            f"not serial: at least {bound.at_least} requests decoding at once (Σ decode ÷ "
            f"wall = {fmt(bound.value, 2)}, from {bound.how}; a lower bound, the file has no "
            "per-request times)"
            if bound.exact
            else f"not serial: about {fmt(bound.value, 2)} requests decoding at once on "
            f"average (Σ decode ÷ wall from {bound.how}, approximate as output lengths may "
            "differ, "
            f"but more than {fmt(margin, 0)}× one at a time)"
        )
        return Decision(
            Outcome.PASSED,
            message,
            arithmetic=arithmetic,
            numbers=numbers,
            refs=ladder.refs,
            serial=False,
        )
    reading = (
        "is consistent with one at a time but does not prove it"
        if bound.value <= 1 or bound.exact
        else "is an approximation (output lengths may differ) too near one at a time to "
        "prove either"
    )
    return Decision(
        Outcome.UNDECIDABLE,
        f"{ladder.message}; Σ decode ÷ wall = {fmt(bound.value, 2)} ({bound.how}) "
        f"{reading}; per-request send, first-token and end times (t_send, t_first, t_end) "
        "would decide",
        arithmetic=arithmetic,
        numbers=numbers,
        refs=ladder.refs,
        help="record per-request send, first-token and end times",
    )


def _decide(data: AuditData, f: RunFacts, slope: Decision | None) -> None:
    """The run's serial-or-not answer: its own evidence (timestamps, a bound) and its sweep's.

    Serial when its requests formed a ladder, or when its closed-loop sweep is flat and no
    run of it shows requests overlapping; overlapping when its own evidence or a rising sweep
    shows it; otherwise undecided, naming the field that would decide.
    """
    n = f.concurrency
    if f.overlap.serial:
        f.reasons.append(f"BR003: {f.overlap.message}")
    if slope is not None and slope.serial and n > 1:
        f.reasons.append(f"BR005: {slope.message}")
    if f.reasons:
        f.serial, f.why = True, "; ".join(f.reasons)
        return
    if f.overlap.serial is False:
        f.serial, f.why = False, f.overlap.message
        return
    if slope is not None and slope.serial is False and f.axis == CONCURRENCY and n > 1:
        f.serial, f.why = False, slope.message
        return
    if n == 1:
        f.why = "concurrency 1: one request at a time by design"
        return
    f.why = f.overlap.message
    if f.overlap.outcome is Outcome.UNDECIDABLE:
        f.missing = (
            "first-token times (t_first)"
            if data.figures(f.run).flag("has_send")
            else "per-request send, first-token and end times (t_send, t_first, t_end)"
        )


def compute(data: AuditData) -> Facts:
    runs = {str(r): _run_facts(data, str(r)) for r in data.stats.index}
    for f in runs.values():
        f.overlap = _overlap(data, f)
    groups: dict[str, GroupFacts] = {}
    for name, members in data.groups().items():
        axes = {runs[r].axis for r in members if r in runs}
        axis = RATE if RATE in axes else (CONCURRENCY if CONCURRENCY in axes else UNKNOWN)
        groups[name] = GroupFacts(
            group=name,
            runs=members,
            axis=axis,
            slope=slope(data, name, members, runs, axis),
            why=str(data.group_reason(name)),
        )
    for f in runs.values():
        g = groups.get(f.group)
        _decide(data, f, g.slope if g is not None else None)
    return Facts(runs=runs, groups=groups)


def audit_data(
    tables: Tables, stats: pd.DataFrame, config: Config, claim_checks: list[Any]
) -> AuditData:
    """What the rules read: the tables and figures with their facts computed once."""
    data = AuditData(tables, stats, config, claim_checks)
    data.facts = compute(data)
    return data
