"""The aggregate a result file states, beside total output tokens ÷ wall clock.

Every tool's summary states an aggregate of its own (the adapters keep it as the summary's
`tool_aggregate_tps`, with the file's key of it). Most are total ÷ wall: vLLM's and
bench_serving's output_throughput divide the output tokens by the benchmark's duration. Some
are not, and the page that publishes a run quotes them all the same: SGLang
bench_one_batch_server's output_throughput leaves out the batch's prefill and any wait,
llama-batched-bench's S_TG the prompt processing, llama-bench's t/s averages the
repetitions' rates and counts a pp+tg test's prompt tokens. The adapter that knows such a
definition says it in one sentence (`tool_aggregate_how`). A reader shown only total ÷ wall
would take the figure the file states, and quotes, to hold: the verdict names each run whose
stated figure is more than `stated_aggregate_gap` away from it, with how the tool computed it.
This is not a claim check (BR001, BR002 with --claim are): a file's figure computed another
way is not a claim of total ÷ wall.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from reporter.config import threshold
from reporter.numbers import fmt
from reporter.values import finite, finite_number

STATED_GAP = threshold(
    "stated_aggregate_gap",
    0.02,
    "the files' rounding (2 decimals, times to the millisecond) moves a figure by far less "
    "than 0.1%; one more than 2% from total ÷ wall divides other tokens or another time",
    high=1.0,
)


@dataclass(frozen=True)
class Stated:
    """The aggregate a run's file states: tok/s, the file's key of it and, where the adapter
    knows it is not total ÷ wall, how the tool computed it (one sentence)."""

    tps: float
    field: str | None
    how: str | None


def stated_aggregate(summary: Mapping[str, Any] | None) -> Stated | None:
    """The file's own aggregate from a run's summary; None when the file states none."""
    if not summary:
        return None
    tps = finite_number(summary.get("tool_aggregate_tps"))
    if tps is None:
        return None
    field, how = summary.get("tool_aggregate_field"), summary.get("tool_aggregate_how")
    return Stated(
        tps,
        field if isinstance(field, str) and field else None,
        how if isinstance(how, str) and how else None,
    )


def _ratio_text(ratio: float) -> str:
    """The ratio at 2 decimals, more where 2 would print 1.00 (a gap set below 0.5%)."""
    digits = 2
    while digits < 4 and round(ratio, digits) == 1:
        digits += 1
    return f"{ratio:.{digits}f}×"


def difference(stated: Stated, recomputed: float | None, what: str, gap: float) -> str | None:
    """What a reader should know when the stated figure is more than `gap` (a share) away
    from the recomputed one: both figures, their ratio and how the tool computed its own;
    None when they agree within `gap` or there is no recomputed figure. `what` names the
    recomputed figure ("total ÷ wall")."""
    base = finite(recomputed)
    if base is None or base <= 0:
        return None
    ratio = stated.tps / base
    if abs(ratio - 1) <= gap:
        return None
    text = f"the file states {fmt(stated.tps, 2)} tok/s"
    if stated.field:
        text += f" ({stated.field})"
    if math.isfinite(ratio):
        text += f", {_ratio_text(ratio)} {what} ({fmt(base)})"
    else:  # beyond floating point: no ratio to print
        text += f", beyond any ratio to {what} ({fmt(base)})"
    return f"{text}: {stated.how}" if stated.how else text
