"""The aggregate does not grow with the number of concurrent requests.

## What it checks
Across a sweep (runs of one group that differ only in concurrency or repeat), whether the
honest aggregate `total output tokens ÷ wall clock` rises from the lowest N to the highest.

## Why it matters
A flat aggregate is the signature of serial service: one request at a time, whatever N is.
Real batching reads the weights once for several requests and rises at least from N=1 to
N=4; how much depends on the model and the KV cache, but it is not flat.

## How it decides
Per concurrency level the median aggregate over repeats, `A(N)`. The growth is
`A(N_max) ÷ A(N_min)`, and needs `N_max ≥ 2 × N_min`. The sweep is flat when the growth is
below `flat_growth` (1.2): single runs differ by ~5% and serial runs lose ~2% per step
(METHOD §2, §7), while even weak batching of two requests gains well over 20%.

## Worked example
METHOD.md §3, case A, three engine versions at C = 1/2/4/8: old default 90.3 / 89.5 / 89.6 /
88.5 tok/s (growth 0.98), new default 87.5 / 89.3 / 88.7 / 88.3 (1.01), new with continuous
batching 8: 86.7 / 87.2 / 86.8 / 86.3 (1.00). All flat: serial in every version, and the
batching flag made it 2% slower.

## When it cannot decide
A group with one concurrency level is not a sweep (not applicable). A sweep whose runs have
no wall clock, or whose levels do not span a factor of two, cannot be decided.

## What to do
Treat the server as serial until a sweep rises. Look for a refused batching flag (BR013) and
for the ladder in each run (BR003).

## References
METHOD.md §3 "Slope with N"; seed 000 §3.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from reporter.config import threshold
from reporter.rules.base import AuditData, Finding, Rule, run_ref
from reporter.types import Outcome, Severity, fmt

FLAT_GROWTH = threshold(
    "flat_growth",
    1.2,
    "serial service stays within ±5% of flat (noise of single runs, ~2% lost per switch); "
    "batching of even two requests adds well over 20%",
)


def check(data: AuditData) -> list[Finding]:
    return [_check_group(data, name, runs) for name, runs in data.groups().items()]


def levels(data: AuditData, runs: list[str]) -> pd.Series:
    """Median aggregate per concurrency level (repeats folded), sorted by N."""
    frame = pd.DataFrame(
        {
            "n": [data.concurrency(r) for r in runs],
            "agg": [float(data.figures(r)["aggregate_tps"]) for r in runs],
        }
    ).dropna()
    return frame.groupby("n")["agg"].median().sort_index()


def _check_group(data: AuditData, group: str, runs: list[str]) -> Finding:
    ns = {data.concurrency(r) for r in runs}
    ns.discard(float("nan"))
    ns = {n for n in ns if not np.isnan(n)}
    refs = [x for r in runs for x in run_ref(data, r)][:8]
    if len(ns) < 2:
        why = "concurrency not stated" if not ns else f"every run at N={int(next(iter(ns)))}"
        return RULE.finding(
            group, Outcome.NOT_APPLICABLE, f"not a sweep over concurrency ({why})", refs=refs
        )
    table = levels(data, runs)
    if len(table) < 2:
        return RULE.finding(
            group,
            Outcome.UNDECIDABLE,
            "the sweep's runs have no wall clock to compute an aggregate from",
            refs=refs,
        )
    n_min, n_max = float(table.index[0]), float(table.index[-1])
    if n_max < 2 * n_min:
        return RULE.finding(
            group,
            Outcome.UNDECIDABLE,
            f"the sweep spans N={n_min:g}..{n_max:g}, less than a factor of two",
            refs=refs,
        )
    growth = float(table.iloc[-1] / table.iloc[0])
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
        f"aggregate at N={ns_text}: {series} tok/s",
        f"growth A({n_max:g}) ÷ A({n_min:g}) = {fmt(table.iloc[-1])} ÷ {fmt(table.iloc[0])} "
        f"= {fmt(growth, 2)}× (ideal {fmt(n_max / n_min, 0)}×, serial 1×)",
    ]
    if growth < limit:
        return RULE.finding(
            group,
            Outcome.FIRED,
            f"aggregate flat in N: {series} tok/s at N={ns_text} ({fmt(growth, 2)}× from "
            f"N={n_min:g} to N={n_max:g}, below {fmt(limit, 2)}×): serial service",
            arithmetic=arithmetic,
            numbers=numbers,
            refs=refs,
            help="treat the server as serial; check that batching is really enabled (server "
            "log, slots) before quoting any concurrent figure",
        )
    return RULE.finding(
        group,
        Outcome.PASSED,
        f"aggregate grows {fmt(growth, 2)}× from N={n_min:g} to N={n_max:g} ({series} tok/s)",
        arithmetic=arithmetic,
        numbers=numbers,
        refs=refs,
    )


RULE = Rule(
    code="BR005",
    name="flat-throughput-in-concurrency",
    severity=Severity.ERROR,
    summary="aggregate does not grow from N=1 upward",
    check=check,
    doc=__doc__ or "",
)
