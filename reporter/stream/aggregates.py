"""Per-run figures of the request rows as streaming reductions: one batch at a time.

What `reporter.metrics.run_stats` computes from the whole request table, computed here from
batches of it in memory that does not grow with the rows (one accumulator per run):

- exact: counts, sums, minima and maxima (requests, ok, output tokens, t0 = first send,
  t1 = last end, Σ reported tok/s, Σ end-to-end time, prompt tokens), and the mean and
  population standard deviation of output lengths (merged per batch by Chan's formula);
  sums are added batch by batch, so they may differ from one whole-column sum in the last
  bits (relative 1e-15), never at a printed digit;
- sketched: the medians of TTFT, decode rate and end-to-end time (reporter.stream.sketch),
  each within `RELATIVE_ACCURACY` (1%) of the exact one.

`reporter/sql/run_aggregates.sql` is the same reduction in SQL (DuckDB here; Spark SQL
runs it too), with exact medians and the decode overlap.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from reporter.stream.sketch import RELATIVE_ACCURACY, QuantileSketch

#: Figures the reductions give exactly, and those they give from a sketch.
EXACT = (
    "requests", "ok", "output_tokens", "t0", "t1", "sum_reported_tps", "sum_e2e", "out_min",
    "out_max", "out_mean", "out_std", "send_spread_s", "prompt_tokens_total",
    "prompt_tokens_mean", "n_send", "n_first", "n_end", "n_reported",
)  # fmt: skip
SKETCHED = ("median_ttft_s", "median_decode_tps", "median_e2e_s")


def _nan_min(a: float, b: float) -> float:
    return b if math.isnan(a) else a if math.isnan(b) else min(a, b)


def _nan_max(a: float, b: float) -> float:
    return b if math.isnan(a) else a if math.isnan(b) else max(a, b)


@dataclass
class _Sum:
    """A sum that stays unknown (NaN) until a value is added (pandas' `min_count=1`)."""

    total: float = 0.0
    count: int = 0

    def add(self, values: np.ndarray) -> None:
        present = values[~np.isnan(values)]
        self.total += float(present.sum())
        self.count += len(present)

    @property
    def value(self) -> float:
        return self.total if self.count else math.nan


@dataclass
class RunAccumulator:
    """Everything kept about one run while its rows stream by."""

    requests: int = 0
    ok: int = 0
    n_send: int = 0
    n_first: int = 0
    n_end: int = 0
    n_reported: int = 0
    t0: float = math.nan
    t1: float = math.nan
    send_max: float = math.nan
    output_tokens: _Sum = field(default_factory=_Sum)
    reported: _Sum = field(default_factory=_Sum)
    e2e: _Sum = field(default_factory=_Sum)
    prompt: _Sum = field(default_factory=_Sum)
    out_min: float = math.nan
    out_max: float = math.nan
    out_count: int = 0
    out_mean: float = 0.0
    out_m2: float = 0.0
    ttft: QuantileSketch = field(default_factory=QuantileSketch)
    decode_tps: QuantileSketch = field(default_factory=QuantileSketch)
    e2e_sketch: QuantileSketch = field(default_factory=QuantileSketch)

    def add(self, rows: pd.DataFrame) -> None:
        """Fold in rows of this run (normalized request rows: reporter.table)."""
        ok_mask = rows["ok"].to_numpy(dtype=bool)
        send = rows["t_send"].to_numpy(dtype="float64")
        first = rows["t_first"].to_numpy(dtype="float64")
        end = rows["t_end"].to_numpy(dtype="float64")
        self.requests += len(rows)
        self.ok += int(ok_mask.sum())
        self.n_send += int((~np.isnan(send)).sum())
        self.n_first += int((~np.isnan(first)).sum())
        self.n_end += int((~np.isnan(end[ok_mask])).sum())
        if len(rows) and not np.isnan(send).all():
            self.t0 = _nan_min(self.t0, float(np.nanmin(send)))
            self.send_max = _nan_max(self.send_max, float(np.nanmax(send)))
        if len(rows) and not np.isnan(end).all():
            self.t1 = _nan_max(self.t1, float(np.nanmax(end)))
        reported = rows["reported_tps"].to_numpy(dtype="float64")[ok_mask]
        self.n_reported += int((~np.isnan(reported)).sum())
        self.reported.add(reported)
        self.e2e.add(rows["e2e"].to_numpy(dtype="float64"))
        self.prompt.add(rows["prompt_tokens"].to_numpy(dtype="float64"))
        out = rows["output_tokens"].to_numpy(dtype="float64")[ok_mask]
        self.output_tokens.add(out)
        out = out[~np.isnan(out)]
        if len(out):
            self.out_min = _nan_min(self.out_min, float(out.min()))
            self.out_max = _nan_max(self.out_max, float(out.max()))
            # Chan et al.: merge this batch's mean and squared deviations into the run's
            n_b, mean_b = len(out), float(out.mean())
            m2_b = float(((out - mean_b) ** 2).sum())
            n = self.out_count + n_b
            delta = mean_b - self.out_mean
            self.out_mean += delta * n_b / n
            self.out_m2 += m2_b + delta**2 * self.out_count * n_b / n
            self.out_count = n
        self.ttft.add(rows["ttft"].to_numpy(dtype="float64")[ok_mask])
        self.decode_tps.add(rows["decode_tps"].to_numpy(dtype="float64")[ok_mask])
        self.e2e_sketch.add(rows["e2e"].to_numpy(dtype="float64")[ok_mask])

    def figures(self) -> dict[str, float]:
        counted = self.out_count > 0
        return {
            "requests": float(self.requests),
            "ok": float(self.ok),
            "output_tokens": self.output_tokens.value,
            "t0": self.t0,
            "t1": self.t1,
            "sum_reported_tps": self.reported.value,
            "sum_e2e": self.e2e.value,
            "out_min": self.out_min,
            "out_max": self.out_max,
            "out_mean": self.out_mean if counted else math.nan,
            "out_std": math.sqrt(self.out_m2 / self.out_count) if counted else math.nan,
            "send_spread_s": self.send_max - self.t0,
            "prompt_tokens_total": self.prompt.value,
            "prompt_tokens_mean": self.prompt.total / self.prompt.count
            if self.prompt.count
            else math.nan,
            "n_send": float(self.n_send),
            "n_first": float(self.n_first),
            "n_end": float(self.n_end),
            "n_reported": float(self.n_reported),
            "median_ttft_s": self.ttft.median(),
            "median_decode_tps": self.decode_tps.median(),
            "median_e2e_s": self.e2e_sketch.median(),
        }


@dataclass
class RunAggregates:
    """Accumulators of every run seen, in order of first appearance."""

    runs: dict[str, RunAccumulator] = field(default_factory=dict)
    #: the relative error bound of every sketched figure
    relative_accuracy: float = RELATIVE_ACCURACY

    def add(self, rows: pd.DataFrame) -> None:
        """Fold in a batch of normalized request rows of any runs."""
        if not len(rows):
            return
        for run, part in rows.groupby("run", observed=True, sort=False):
            self.runs.setdefault(str(run), RunAccumulator()).add(part)

    def table(self) -> pd.DataFrame:
        """One row per run: the EXACT and SKETCHED columns."""
        frame = pd.DataFrame(
            [acc.figures() for acc in self.runs.values()],
            index=pd.Index(list(self.runs), name="run"),
            columns=[*EXACT, *SKETCHED],
        )
        return frame.astype("float64")


def aggregate(batches: Iterable[pd.DataFrame]) -> RunAggregates:
    """The per-run aggregates of a stream of normalized request-row batches."""
    out = RunAggregates()
    for batch in batches:
        out.add(batch)
    return out
