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


def timeline(rows: pd.DataFrame, t0: float, prefill_rate: float | None) -> Timeline:
    order = rows.sort_values(["t_send", "t_first", "t_end", "source_line"], kind="stable")
    pick = even_sample(len(order), MAX_TIMELINE)
    drawn = order.iloc[pick]
    send = drawn["t_send"].to_numpy(dtype="float64") - t0
    first = drawn["t_first"].to_numpy(dtype="float64") - t0
    end = drawn["t_end"].to_numpy(dtype="float64") - t0
    prompt = drawn["prompt_tokens"].to_numpy(dtype="float64")
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
    alone = runs[(runs["group"].astype(str) == group) & (runs["concurrency"] == 1)]
    for other in alone["run"]:
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
    rows = data.requests_of(run_id)
    rows = rows[rows["t_end"].notna()]
    stats = data.stats.loc[run_id]
    t0 = number_or_nan(stats["t0"])
    if not rows.empty and not math.isfinite(t0):
        t0 = number_or_nan(rows["t_send"].min())
    if rows.empty or not math.isfinite(t0):
        return RunSeries(run_id, None, None)
    line = timeline(rows, t0, _rate(stats["prefill_rate"]))
    ends = data.sorted_ends(run_id)  # NaN last: the ends known are the first ones
    done = ends[: np.count_nonzero(~np.isnan(ends))] - t0
    return RunSeries(run_id, line, completions(data, run_id, done) if len(done) else None)


def with_request_times(data: AuditData, runs: list[tuple[str, int | None]]) -> list[str]:
    """The runs (id, request count) that have requests and an end time, in the order given."""
    return [
        run_id
        for run_id, requests in runs
        if requests and not math.isnan(number_or_nan(data.stats.at[run_id, "t1"]))
    ]
