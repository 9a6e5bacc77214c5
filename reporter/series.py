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
from reporter.values import number, number_or_nan


def even_sample(n: int, limit: int) -> np.ndarray:
    """Indices of `limit` rows spread evenly over `n` (first and last kept)."""
    if n <= limit:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, limit).round().astype(int))


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
    order = np.argsort(send, kind="stable") if by_send is None else by_send.copy()
    s = send[order]
    same = (s[1:] == s[:-1]) | (np.isnan(s[1:]) & np.isnan(s[:-1]))
    if not same.any():
        return order
    tied = np.zeros(len(s), dtype=bool)
    tied[1:] |= same
    tied[:-1] |= same
    at = np.flatnonzero(tied)
    # each stretch of equal send times, numbered; within one, rows in table order so far
    stretch = np.cumsum(np.concatenate(([True], ~same)))[at]
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
    send = columns["t_send"][drawn] - t0
    first = columns["t_first"][drawn] - t0
    end = columns["t_end"][drawn] - t0
    prompt = columns["prompt_tokens"][drawn]
    segs: list[dict[str, Any]] = []
    for k in range(len(drawn)):
        y = int(pick[k]) + 1
        s, f, e = float(send[k]), float(first[k]), float(end[k])
        s = s if math.isfinite(s) else 0.0
        if not math.isfinite(f):
            segs.append({"request": y, "start": s, "end": e, "part": "request"})
            continue
        if prefill_rate is not None and math.isfinite(prompt[k]):
            p0 = max(s, f - float(prompt[k]) / prefill_rate)
            if p0 > s:
                segs.append({"request": y, "start": s, "end": p0, "part": "waiting"})
            segs.append({"request": y, "start": p0, "end": f, "part": "prefill"})
        elif f > s:
            segs.append({"request": y, "start": s, "end": f, "part": "wait + prefill"})
        segs.append({"request": y, "start": f, "end": e, "part": "decode"})
    return Timeline(requests=len(order), drawn=len(pick), segments=segs)


def _single_request_time(
    data: AuditData, run_id: str, done: np.ndarray
) -> tuple[float, str | None]:
    """One request's duration alone: the N=1 run of the group if any, else the first completion."""
    runs = data.runs
    group = str(runs.at[run_id, "group"])
    # the group's runs at concurrency 1, in the run table's order
    for other, its_group in zip(runs["run"], runs["group"], strict=True):
        if pd.isna(its_group) or str(its_group) != group or data.concurrency(str(other)) != 1:
            continue
        e2e = number_or_nan(data.stats.at[str(other), "median_e2e_s"])
        if str(other) != run_id and math.isfinite(e2e) and e2e > 0:
            return e2e, str(other)
    return float(done[0]), None


def completions(data: AuditData, run_id: str, done: np.ndarray) -> Completions:
    pick = even_sample(len(done), MAX_COMPLETIONS)
    single, single_run = _single_request_time(data, run_id, done)
    points = [{"t": float(done[i]), "done": int(i) + 1} for i in pick]
    return Completions(len(done), points, single, single_run)


def run_series(data: AuditData, run_id: str) -> RunSeries:
    end = np.asarray(data.values_of(run_id, "t_end"), dtype="float64")
    known = ~np.isnan(end)  # the requests with an end time, as arrays (no frame copied)
    columns = {
        c: np.asarray(data.values_of(run_id, c), dtype="float64")[known]
        for c in ("t_send", "t_first", "t_end", "prompt_tokens")
    }
    line = data.values_of(run_id, "source_line")[known]
    # whole line numbers sort as they are; any other column as numbers, a missing one last
    columns["source_line"] = (
        line
        if line.dtype.kind in "iuf"
        else pd.Series(line).to_numpy(dtype="float64", na_value=np.nan)
    )
    stats = data.stats.loc[run_id]
    t0 = number_or_nan(stats["t0"])
    sends = columns["t_send"][~np.isnan(columns["t_send"])]
    if known.any() and not math.isfinite(t0):
        t0 = float(sends.min()) if len(sends) else math.nan
    if not known.any() or not math.isfinite(t0):
        return RunSeries(run_id, None, None)
    # every request ended (the usual case): the run's rows sorted by send once serve here too
    by_send = data.send_order(run_id) if known.all() else None
    drawn = timeline(columns, t0, _rate(stats["prefill_rate"]), by_send)
    ends = data.sorted_ends(run_id)  # NaN last: the ends known are the first ones
    done = ends[: np.count_nonzero(~np.isnan(ends))] - t0
    return RunSeries(run_id, drawn, completions(data, run_id, done) if len(done) else None)


def with_request_times(data: AuditData, runs: list[tuple[str, int | None]]) -> list[str]:
    """The runs (id, request count) that have requests and an end time, in the order given."""
    return [
        run_id
        for run_id, requests in runs
        if requests and not math.isnan(number_or_nan(data.stats.at[run_id, "t1"]))
    ]
