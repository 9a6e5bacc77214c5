"""Latency percentiles per run, as every load-testing tool reports them: TTFT, ITL, TPOT, e2e.

- TTFT: ``t_first − t_send``, the wait for the first token (queue + prefill).
- ITL: the gaps between consecutive streamed chunks of a request (``token_times``). Where a
  chunk carries several tokens this is an inter-*chunk* latency, as in vLLM's and AIPerf's
  files; TPOT is the per-token figure.
- TPOT: ``(t_end − t_first) ÷ (output_tokens − 1)``, the mean time per output token after the
  first (vLLM's convention).
- e2e: ``t_end − t_send``.

Only successful requests count. Percentiles are p50, p90 and p99 (linear interpolation),
computed for all runs at once: one flattening of the chunk times and a few group-bys.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

PERCENTILES = (50, 90, 99)
METRICS = ("ttft_s", "itl_s", "tpot_s", "e2e_s")


def _gaps(requests: pd.DataFrame) -> pd.Series:
    """Every gap between consecutive chunk times, labelled with its run."""
    times = requests["token_times"]
    if not len(times):
        return pd.Series(dtype="float64")
    arr = pa.array(
        [None if t is None or (isinstance(t, float) and np.isnan(t)) else list(t) for t in times],
        type=pa.list_(pa.float64()),
    )
    offsets = np.asarray(arr.offsets)
    lengths = np.diff(offsets)
    values = np.asarray(arr.flatten(), dtype="float64")
    if len(values) < 2:
        return pd.Series(dtype="float64")
    gaps = np.diff(values)
    # a gap is inside one request unless it spans the boundary between two requests
    ends = offsets[1:][lengths > 0] - 1
    inside = np.ones(len(gaps), dtype=bool)
    inside[ends[ends < len(gaps)]] = False
    labels = np.repeat(requests["run"].astype(str).to_numpy(), np.maximum(lengths, 0))
    return pd.Series(gaps[inside], index=labels[:-1][inside])


def latency_table(requests: pd.DataFrame) -> pd.DataFrame:
    """One row per run; columns ``<metric>_p<q>`` in seconds (NaN where unknown)."""
    ok = requests[requests["ok"]] if "ok" in requests else requests
    run = ok["run"].astype(str)
    with np.errstate(invalid="ignore", divide="ignore"):
        steps = ok["output_tokens"] - 1.0
        tpot = ((ok["t_end"] - ok["t_first"]) / steps).where(steps >= 1)
    series = {
        "ttft_s": pd.Series((ok["t_first"] - ok["t_send"]).to_numpy(), index=run.to_numpy()),
        "tpot_s": pd.Series(tpot.to_numpy(), index=run.to_numpy()),
        "e2e_s": pd.Series((ok["t_end"] - ok["t_send"]).to_numpy(), index=run.to_numpy()),
        "itl_s": _gaps(ok),
    }
    columns = {}
    qs = [p / 100 for p in PERCENTILES]
    for name, values in series.items():
        values = values.dropna()
        if values.empty:
            continue
        table = values.groupby(level=0).quantile(np.asarray(qs)).unstack()
        for p, q in zip(PERCENTILES, qs, strict=True):
            columns[f"{name.removesuffix('_s')}_p{p}"] = table[q]
    frame = pd.DataFrame(columns)
    runs = pd.unique(requests["run"].astype(str))
    wanted = [f"{m.removesuffix('_s')}_p{p}" for m in METRICS for p in PERCENTILES]
    return frame.reindex(index=runs, columns=wanted)


def run_latency(table: pd.DataFrame, run_id: str) -> dict[str, dict[str, Any]]:
    """``{"ttft_s": {"p50": …, "p90": …, "p99": …}, "itl_s": …}`` for one run (None = unknown)."""
    out: dict[str, dict[str, Any]] = {}
    has = run_id in table.index
    for metric in METRICS:
        short = metric.removesuffix("_s")
        out[metric] = {}
        for p in PERCENTILES:
            value = float(table.at[run_id, f"{short}_p{p}"]) if has else np.nan  # type: ignore[arg-type]
            out[metric][f"p{p}"] = None if np.isnan(value) else value
    return out
