"""Slope over the load axis (METHOD §3): does the aggregate grow with the load?

Closed loop (concurrency N): a flat aggregate is the signature of serial service, unless the
runs themselves prove their requests overlapped, in which case the server is saturated.
Open loop (request rate): the aggregate follows the offered load until the server saturates;
past that point extra requests queue, the requests in flight grow and the aggregate stays
flat. That is saturation, never serial service.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd

from reporter.auditdata import AuditData, run_ref
from reporter.config import threshold
from reporter.decision import CONCURRENCY, RATE, Decision, RunFacts, proves_overlap
from reporter.numbers import counted, fmt
from reporter.types import Outcome, Severity

FLAT_GROWTH = threshold(
    "flat_growth",
    1.2,
    "serial service stays within ±5% of flat (noise of single runs, ~2% lost per switch); "
    "batching of even two requests adds well over 20%",
)


def levels(data: AuditData, runs: list[str], ns: Mapping[str, float] | None = None) -> pd.Series:
    """Median aggregate per concurrency level (repeats folded), sorted by N: each run at its
    stated N, or at `ns[run]` where given (the most it can have had in flight)."""
    frame = pd.DataFrame(
        {
            "n": [data.concurrency(r) if ns is None else ns[r] for r in runs],
            "agg": [float(data.figures(r)["aggregate_tps"]) for r in runs],
        }
    ).dropna()
    return frame.groupby("n")["agg"].median().sort_index()


def most_in_flight(data: AuditData, run: str) -> float:
    """The most requests a closed-loop run can have had in flight: its concurrency N, or its
    request count when it sent fewer (k < N requests are never N at once)."""
    n = data.concurrency(run)
    requests = float(data.figures(run)["requests"])
    return requests if requests >= 1 and requests < n else n


def _fewer_than_n(data: AuditData, in_flight: Mapping[str, float]) -> list[str]:
    """Each run that sent fewer requests than its concurrency (`in_flight`: each run's
    `most_in_flight`), said with its numbers."""
    said = []
    for r, bound in in_flight.items():
        n = data.concurrency(r)
        if bound < n:
            said.append(
                f"run {r}: {counted(int(bound), 'request')} at N={n:g}, so at most "
                f"{bound:g} in flight"
            )
    return said


def _refs(data: AuditData, runs: list[str]) -> list[str]:
    return [x for r in runs for x in run_ref(data, r)][:8]


def slope(
    data: AuditData, group: str, runs: list[str], facts: dict[str, RunFacts], axis: str
) -> Decision:
    """The group's answer to "does the aggregate grow with the load"."""
    if axis == RATE:
        return _rate_slope(data, runs, facts)
    members = [r for r in runs if r not in facts or facts[r].axis == CONCURRENCY]
    return _concurrency_slope(data, members or runs, facts)


def _concurrency_slope(data: AuditData, runs: list[str], facts: dict[str, RunFacts]) -> Decision:
    ns = {data.concurrency(r) for r in runs}
    ns = {n for n in ns if not np.isnan(n)}
    refs = _refs(data, runs)
    if len(ns) < 2:
        why = "concurrency not stated" if not ns else f"every run at N={int(next(iter(ns)))}"
        return Decision(Outcome.NOT_APPLICABLE, f"not a sweep over concurrency ({why})", refs=refs)
    # a run of fewer requests than its N never had N in flight: it stands at its count
    in_flight = {r: most_in_flight(data, r) for r in runs}
    fewer = _fewer_than_n(data, in_flight)
    bounds = {n for n in in_flight.values() if not np.isnan(n)}
    if fewer and len(bounds) < 2:
        return Decision(
            Outcome.NOT_APPLICABLE,
            f"not a sweep over concurrency: every run had at most "
            f"{counted(int(next(iter(bounds))), 'request')} in flight ({'; '.join(fewer)})",
            arithmetic=fewer,
            refs=refs,
        )
    table = levels(data, runs, in_flight)  # (each run's stated N, unless it sent fewer)
    if len(table) < 2:
        return Decision(
            Outcome.UNDECIDABLE,
            "the sweep's runs have no wall clock to compute an aggregate from",
            refs=refs,
        )
    n_min, n_max = float(table.index[0]), float(table.index[-1])
    if n_max < 2 * n_min:
        return Decision(
            Outcome.UNDECIDABLE,
            f"the sweep spans N={n_min:g}..{n_max:g}, less than a factor of two"
            + (f" ({'; '.join(fewer)})" if fewer else ""),
            arithmetic=fewer,
            refs=refs,
        )
    first, last = float(table.iloc[0]), float(table.iloc[-1])
    if not (math.isfinite(first) and math.isfinite(last)) or first <= 0:
        return Decision(
            Outcome.UNDECIDABLE,
            f"the aggregate at N={n_min:g} is {fmt(first)} tok/s: no growth to measure from it",
            refs=refs,
        )
    growth = last / first
    limit = data.config[FLAT_GROWTH]
    series = " / ".join(fmt(v) for v in table.to_numpy())
    ns_text = "/".join(f"{n:g}" for n in table.index)
    numbers = {
        "concurrency": [float(n) for n in table.index],
        "aggregate_tps": [float(v) for v in table.to_numpy()],
        "growth": growth,
        "ideal_growth": n_max / n_min,
    }
    arithmetic = [
        *fewer,
        f"aggregate at N={ns_text}: {series} tok/s",
        f"growth A({n_max:g}) ÷ A({n_min:g}) = {fmt(table.iloc[-1])} ÷ {fmt(table.iloc[0])} "
        f"= {fmt(growth, 2)}× (ideal {fmt(n_max / n_min, 0)}×, serial 1×)",
    ]
    if growth < limit:
        overlapping = [
            r for r in runs if r in facts and proves_overlap(facts[r]) and facts[r].concurrency > 1
        ]
        # an aggregate that fell by more than a flat one may rise is not "flat"
        falls = growth * limit < 1
        trend = "falls with N" if falls else "flat in N"
        if overlapping:
            shown = facts[overlapping[-1]]
            return Decision(
                Outcome.FIRED,
                f"aggregate {trend}: {series} tok/s at N={ns_text} ({fmt(growth, 2)}× from "
                f"N={n_min:g} to N={n_max:g}), but the requests overlap (run {shown.run}: "
                f"{shown.overlap.message}): "
                + (
                    "decoding more at once made it slower, not serial"
                    if falls
                    else "the server is saturated, not serial"
                ),
                arithmetic=[*arithmetic, f"run {shown.run}: {shown.overlap.message}"],
                numbers=numbers | {"saturated": True},
                refs=refs,
                help="quote the best point (its N and aggregate); more at once lowers the "
                "aggregate here"
                if falls
                else "quote the capacity (the flat aggregate) and the lowest N that reaches "
                "it; more concurrency only adds queueing",
                serial=None,
                severity=Severity.INFO,
            )
        return Decision(
            Outcome.FIRED,
            f"aggregate {trend}: {series} tok/s at N={ns_text} ({fmt(growth, 2)}× from "
            f"N={n_min:g} to N={n_max:g}, below {fmt(limit, 2)}×): serial service",
            arithmetic=arithmetic,
            numbers=numbers,
            refs=refs,
            help="treat the server as serial; check that batching is really enabled (server "
            "log, slots) before quoting any concurrent figure",
            serial=True,
        )
    message = f"aggregate grows {fmt(growth, 2)}× from N={n_min:g} to N={n_max:g} ({series} tok/s)"
    peak = int(np.argmax(table.to_numpy()))
    if peak < len(table) - 1 and last < 0.995 * float(table.iloc[peak]):
        # growth from end to end hides a sweep that rose, then fell (a last point within
        # half a percent of the highest is no fall: it would read "100% of it")
        top, n_top = float(table.iloc[peak]), float(table.index[peak])
        message += (
            f"; highest at N={n_top:g} ({fmt(top)} tok/s), and lower beyond it "
            f"({fmt(last / top * 100, 0)}% of it at N={n_max:g})"
        )
        numbers["peak_concurrency"] = n_top
    return Decision(
        Outcome.PASSED,
        message,
        arithmetic=arithmetic,
        numbers=numbers,
        refs=refs,
        serial=False,
    )


def _rate_label(rate: float) -> str:
    return "inf" if math.isinf(rate) else f"{rate:g}"


def _rate_slope(data: AuditData, runs: list[str], facts: dict[str, RunFacts]) -> Decision:
    """Open loop: where the aggregate stops following the offered load, and the queue."""
    refs = _refs(data, runs)
    rows = []
    for r in runs:
        f = facts.get(r)
        if f is None or math.isnan(f.rate):
            continue
        s = data.figures(r)
        rows.append(
            {
                "run": r,
                "rate": f.rate,
                "agg": s["aggregate_tps"],
                "out": s["out_mean"],
                "in_flight": f.in_flight.value if f.in_flight is not None else math.nan,
                "approx": f.in_flight is not None and not f.in_flight.exact,
                "decode": f.decode.value if f.decode is not None else math.nan,
                "decode_approx": f.decode is not None and not f.decode.exact,
                # the client's limit on requests in flight, when the run had one as well
                # as its rate (vLLM's --max-concurrency beside --request-rate)
                "cap": data.concurrency(r),
                "done_rate": s["ok"] / s["wall_s"] if s["wall_s"] > 0 else math.nan,
            }
        )
    frame = pd.DataFrame(rows)
    if frame.empty or frame["rate"].nunique() < 2:
        return Decision(
            Outcome.NOT_APPLICABLE,
            "an open-loop run at one request rate: not a sweep over the load",
            refs=refs,
        )
    table = frame.groupby("rate").median(numeric_only=True).sort_index()
    table["approx"] = frame.groupby("rate")["approx"].any()
    table["decode_approx"] = frame.groupby("rate")["decode_approx"].any()
    labels = [_rate_label(float(x)) for x in table.index]
    series = " / ".join(fmt(v) for v in table["agg"])
    lines = [f"aggregate at {'/'.join(labels)} req/s: {series} tok/s"]
    rates = table.index.to_numpy(dtype=float)
    outs = table["out"].to_numpy(dtype=float)
    for label, rate, out, agg in zip(labels, rates, outs, table["agg"], strict=True):
        off = rate * out
        if math.isfinite(rate):
            lines.append(
                f"{label} req/s × {fmt(out, 1)} tokens per request = "
                f"{fmt(off)} tok/s offered; measured {fmt(agg)} ({fmt(agg / off * 100, 0)}%)"
            )
    limit = data.config[FLAT_GROWTH]
    numbers = {
        "request_rate": [float(x) if math.isfinite(x) else None for x in table.index],
        "aggregate_tps": [float(v) for v in table["agg"]],
        "in_flight": [float(v) for v in table["in_flight"]],
    }
    # saturation between two successive rates: the requests in flight grow by flat_growth or
    # more (a queue), while the aggregate grows less than flat_growth or the share of the
    # offered load it serves falls by more than flat_growth (the offered load doubles, the
    # aggregate barely moves)
    aggs = table["agg"].to_numpy(dtype=float)
    flight = table["in_flight"].to_numpy(dtype=float)
    with np.errstate(all="ignore"):
        offered = np.where(np.isfinite(rates), rates * outs, np.nan)
        served = aggs / offered
    # the most any run of the sweep served: a server seen to serve more than a rate offers
    # keeps up with that rate, whatever share of it a short run's wall clock shows (the last
    # long requests drain after the sends end, a tail that weighs more the higher the rate)
    best = float(np.nanmax(aggs)) if np.isfinite(aggs).any() else math.nan
    for i in range(1, len(table)):
        grew = aggs[i] / aggs[i - 1] if aggs[i - 1] > 0 else math.nan
        queue = flight[i] / flight[i - 1] if flight[i - 1] > 0 else math.nan
        flat = grew < limit
        # a share above 1 is the noise of a short run (no server serves more than it is
        # offered for long): a fall is counted from at most all of it
        falling = bool(served[i] * limit < min(served[i - 1], 1.0))  # False where unknown
        # the requests in flight unknown at either rate (no latency to rebuild them from, or
        # a rebuilt figure disproved): a share of the offered load that falls is enough
        unknown = math.isnan(queue)
        if not ((queue >= limit and (flat or falling)) or (unknown and falling)):
            continue
        if bool(offered[i] <= best):  # False where unknown
            lines.append(
                f"{labels[i]} req/s offers {fmt(offered[i])} tok/s, no more than the "
                f"{fmt(best)} tok/s a run of this sweep served: not saturated there"
            )
            continue
        approx = "≈" if bool(table["approx"].iloc[i]) else ""
        decode = float(table["decode"].iloc[i])
        # the queue: in flight against decoding at once, where both are known
        queue_text = (
            f"; {approx}{fmt(flight[i], 1)} in flight against {fmt(decode, 1)} decoding at once"
            if not (math.isnan(decode) or math.isnan(flight[i]))
            else ""
        )
        # more in flight than decoding at once: the difference waits; about as many: they all
        # joined the batch (the time to first token is in flight, not decoding)
        queued = math.isnan(decode) or math.isnan(flight[i]) or flight[i] > decode * limit
        queue_text += (
            ": the extra requests queue"
            if queued
            else ": nearly all of them decoding together, not waiting"
        )
        flight_text = (
            f"in flight {approx}{fmt(flight[i - 1], 1)} → {approx}{fmt(flight[i], 1)}"
            if not unknown
            else "requests in flight unknown"
        )
        lines.append(
            f"from {labels[i - 1]} to {labels[i]} req/s: aggregate × {fmt(grew, 2)}, " + flight_text
        )
        cap = float(table["cap"].iloc[i])
        # the client's limit full: the requests beyond it waited in the client, and the
        # server only ever saw that many, whatever the rate asked for
        held = math.isfinite(cap) and cap > 0 and flight[i] * limit >= cap
        if flat:
            what = (
                f"the aggregate grows only {fmt(grew, 2)}× ({fmt(aggs[i - 1])} → "
                f"{fmt(aggs[i])} tok/s)"
            )
        else:
            lines.append(
                f"share of the offered load served: {fmt(served[i - 1] * 100, 0)}% → "
                f"{fmt(served[i] * 100, 0)}%, a fall of more than {fmt(limit, 2)}×"
            )
            what = (
                f"the offered load grows {fmt(offered[i] / offered[i - 1], 2)}× "
                f"({fmt(offered[i - 1])} → {fmt(offered[i])} tok/s) but the aggregate only "
                f"{fmt(grew, 2)}× ({fmt(aggs[i - 1])} → {fmt(aggs[i])} tok/s): "
                f"{fmt(served[i - 1] * 100, 0)}% → {fmt(served[i] * 100, 0)}% of it served"
            )
        if held:
            done = float(table["done_rate"].iloc[i])
            lines.append(
                f"at {labels[i]} req/s the client allowed at most {fmt(cap, 0)} requests in "
                f"flight (max_concurrency) and had {approx}{fmt(flight[i], 1)} on average"
                + (
                    f"; {fmt(done, 2)} req/s completed of the {labels[i]} offered"
                    if math.isfinite(done)
                    else ""
                )
            )
            return Decision(
                Outcome.FIRED,
                f"open-loop rate sweep held back by the client: from {labels[i - 1]} to "
                f"{labels[i]} req/s {what}, while the requests in flight grow "
                f"{approx}{fmt(flight[i - 1], 1)} → {approx}{fmt(flight[i], 1)}, at the "
                f"client's limit of {fmt(cap, 0)} (max_concurrency): the other requests "
                "waited in the client, so the server never saw the offered rate; this is the "
                "client's limit, not the server's capacity, and not serial service",
                arithmetic=lines,
                numbers=numbers | {"client_limited_at": labels[i], "client_limit": cap},
                refs=refs,
                help="raise max_concurrency above request rate × mean latency to measure the "
                "rate, or quote each run as a closed loop at its max_concurrency",
                serial=None,
                severity=Severity.INFO,
            )
        return Decision(
            Outcome.FIRED,
            f"open-loop rate sweep saturates: from {labels[i - 1]} to {labels[i]} req/s "
            f"{what}"
            + (
                f", while the requests in flight grow {approx}{fmt(flight[i - 1], 1)} → "
                f"{approx}{fmt(flight[i], 1)}{queue_text}"
                if not unknown
                else ""
            )
            + "; this is the server's capacity, not serial service",
            arithmetic=lines,
            numbers=numbers | {"saturated_at": labels[i - 1]},
            refs=refs,
            help="quote the capacity with the rate that reaches it, and latencies only "
            "below it; past saturation they measure the queue",
            serial=None,
            severity=Severity.INFO,
        )
    return Decision(
        Outcome.PASSED,
        f"open-loop rate sweep: the aggregate rises with the offered load ({series} tok/s at "
        f"{'/'.join(labels)} req/s); no saturation seen",
        arithmetic=lines,
        numbers=numbers,
        refs=refs,
        serial=None,
    )
