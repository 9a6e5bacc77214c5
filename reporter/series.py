"""What the report's per-run charts draw, computed in the library so the verdict carries it.

A run's timeline (each request from send to last token, split into waiting, prefill and
decode) and its completions (requests finished over time, beside the serial staircase of one
request at a time). Big runs are sampled evenly in a fixed order, so that the verdict, the
JSON and the chart hold the same points; the counts say how many there were in all.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from reporter.auditdata import AuditData
from reporter.model import MAX_COMPLETIONS, MAX_TIMELINE, Completions, RunSeries, Timeline
from reporter.values import number


def even_sample(n: int, limit: int) -> np.ndarray:
    """Indices of `limit` rows spread evenly over `n` (first and last kept)."""
    if n <= limit:
        return np.arange(n)
    # more rows than points: the points lie over a row apart, so no two round to one row
    # (and np.unique, which would say so, costs more than the rest of the sample)
    return np.linspace(0, n - 1, limit).round().astype(int)


def _rate(value: Any) -> float | None:
    rate = number(value)
    return rate if rate is not None and math.isfinite(rate) and rate > 0 else None


def _drawing_order(
    send: np.ndarray,
    first: np.ndarray,
    end: np.ndarray,
    line: np.ndarray,
    by_send: np.ndarray | None = None,
) -> np.ndarray:
    """The order of a stable sort by send, first-token and end time, then line (NaN last):
    one stable sort by send (the rows come nearly in that order; `by_send` when the caller
    has it), then the rows of equal send times (often those sent together at the start)
    ordered by the other keys."""
    # the caller's sort is only read, and copied only when ties are to be reordered
    order = np.argsort(send, kind="stable") if by_send is None else by_send
    s = send[order]
    same = s[1:] == s[:-1]
    if len(s) and np.isnan(s[-1]):  # the sort puts NaN last: with none there, none at all
        unknown = np.isnan(s)
        same |= unknown[1:] & unknown[:-1]
    if not same.any():
        return order
    if by_send is not None:
        order = by_send.copy()
    tied = np.zeros(len(s), dtype=bool)
    tied[1:] |= same
    tied[:-1] |= same
    at = np.flatnonzero(tied)
    # each stretch of equal send times, numbered (a tied row starts one unless it follows the
    # row before it in the same one); within one, rows in table order so far
    follows = (np.diff(at) == 1) & same[at[:-1]]
    stretch = np.cumsum(np.concatenate(([True], ~follows)))
    rows = order[at]
    order[at] = rows[np.lexsort((line[rows], end[rows], first[rows], stretch))]
    return order


def timeline(
    columns: dict[str, np.ndarray],
    t0: float,
    prefill_rate: float | None,
    by_send: np.ndarray | None = None,
) -> Timeline:
    """The requests' segments from send to last token (`columns`: t_send, t_first, t_end,
    source_line and prompt_tokens of the requests with an end time, as arrays; `by_send`
    their stable sort by send time, if known)."""
    order = _drawing_order(
        columns["t_send"], columns["t_first"], columns["t_end"], columns["source_line"], by_send
    )
    pick = even_sample(len(order), MAX_TIMELINE)
    drawn = order[pick]
    # the drawn values as Python floats at once: a numpy scalar read per value costs more
    sends = (columns["t_send"][drawn] - t0).tolist()
    firsts = (columns["t_first"][drawn] - t0).tolist()
    ends = (columns["t_end"][drawn] - t0).tolist()
    prompts = columns["prompt_tokens"][drawn].tolist()
    segs: list[dict[str, Any]] = []
    add, isfinite = segs.append, math.isfinite  # read once, not per request
    for y, s, f, e, prompt in zip((pick + 1).tolist(), sends, firsts, ends, prompts, strict=True):
        s = s if isfinite(s) else 0.0
        if not isfinite(f):
            add({"request": y, "start": s, "end": e, "part": "request"})
            continue
        if prefill_rate is not None and isfinite(prompt):
            p0 = max(s, f - prompt / prefill_rate)
            if p0 > s:
                add({"request": y, "start": s, "end": p0, "part": "waiting"})
            add({"request": y, "start": p0, "end": f, "part": "prefill"})
        elif f > s:
            add({"request": y, "start": s, "end": f, "part": "wait + prefill"})
        add({"request": y, "start": f, "end": e, "part": "decode"})
    return Timeline(requests=len(order), drawn=len(pick), segments=segs)


#: Each group's runs at concurrency 1 with a known, positive median end-to-end time, and that
#: time, in the run table's order (`lone_runs`).
LoneRuns = dict[str, list[tuple[str, float]]]


def lone_runs(data: AuditData) -> LoneRuns:
    """The runs whose median request a completion chart can draw as one request alone, by
    group: taken in one pass over the run table for the charts of every run."""
    runs = data.runs
    out: LoneRuns = {}
    for other, its_group in zip(runs["run"], runs["group"], strict=True):
        if pd.isna(its_group) or data.concurrency(str(other)) != 1:
            continue
        e2e = data.figures(str(other))["median_e2e_s"]
        if math.isfinite(e2e) and e2e > 0:
            out.setdefault(str(its_group), []).append((str(other), e2e))
    return out


def _single_request_time(
    data: AuditData, run_id: str, first_done: float, alone: LoneRuns
) -> tuple[float, str | None]:
    """One request's duration alone: the N=1 run of the group if any, else the first
    completion (`first_done`)."""
    group = str(data.runs.at[run_id, "group"])
    for other, e2e in alone.get(group, []):
        if other != run_id:
            return e2e, other
    return first_done, None


def completions(
    data: AuditData, run_id: str, ends: np.ndarray, t0: float, alone: LoneRuns
) -> Completions:
    """The completions chart of a run whose requests ended at `ends` (ascending, none NaN,
    at least one), each end read from `t0` only where a point is drawn: the values of
    `ends - t0` without a copy of every end, and its overflow warning, if any (the points
    drawn keep the first and the last end: finite, the least and greatest differences)."""
    pick = even_sample(len(ends), MAX_COMPLETIONS)
    if math.isfinite(ends[0]) and math.isfinite(ends[-1]):
        times = (ends[pick] - t0).tolist()  # Python floats at once, not a numpy scalar each
    else:  # an infinite end overflows no more: another may, drawn or not, as in the whole
        times = (ends - t0)[pick].tolist()
    single, single_run = _single_request_time(data, run_id, times[0], alone)
    points = [{"t": t, "done": n} for t, n in zip(times, (pick + 1).tolist(), strict=True)]
    return Completions(len(ends), points, single, single_run)


def run_series(data: AuditData, run_id: str, alone: LoneRuns | None = None) -> RunSeries:
    """The run's timeline and completions (`alone`: `lone_runs(data)`, when the caller draws
    several runs)."""
    end = np.asarray(data.values_of(run_id, "t_end"), dtype="float64")
    known = ~np.isnan(end)  # the requests with an end time, as arrays (no frame copied)
    if not known.any():
        return RunSeries(run_id, None, None)
    every = bool(known.all())  # the usual case: the columns as they are, no copy

    def ended(column: str) -> np.ndarray:
        values = data.values_of(run_id, column)
        return values if every else values[known]

    columns = {
        c: np.asarray(ended(c), dtype="float64")
        for c in ("t_send", "t_first", "t_end", "prompt_tokens")
    }
    line = ended("source_line")
    # whole line numbers sort as they are; any other column as numbers, a missing one last
    columns["source_line"] = (
        line
        if line.dtype.kind in "iuf"
        else pd.Series(line).to_numpy(dtype="float64", na_value=np.nan)
    )
    figures = data.figures(run_id)
    t0 = figures["t0"]
    if not math.isfinite(t0):
        sends = columns["t_send"][~np.isnan(columns["t_send"])]
        t0 = float(sends.min()) if len(sends) else math.nan
    if not math.isfinite(t0):
        return RunSeries(run_id, None, None)
    # every request ended: the run's rows sorted by send once serve here too
    by_send = data.send_order(run_id) if every else None
    drawn = timeline(columns, t0, _rate(figures["prefill_rate"]), by_send)
    ends = data.sorted_ends(run_id)  # NaN last: the ends known are the first ones
    ends = ends[: np.count_nonzero(~np.isnan(ends))]
    if not len(ends):
        return RunSeries(run_id, drawn, None)
    alone = lone_runs(data) if alone is None else alone
    return RunSeries(run_id, drawn, completions(data, run_id, ends, t0, alone))


def with_request_times(data: AuditData, runs: list[tuple[str, int | None]]) -> list[str]:
    """The runs (id, request count) that have requests and an end time, in the order given."""
    return [
        run_id
        for run_id, requests in runs
        if requests and not math.isnan(data.figures(run_id)["t1"])
    ]
