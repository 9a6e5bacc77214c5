"""What every renderer shares: trace strings made safe to show, numbers as text, a chart.

Below the report's content (reporter.render.context) and its charts (reporter.render.charts),
so that each of those can use it without importing the other.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

# num and pct: the renderers' names for the shared number formatting (reporter.numbers)
from reporter.model import RunSummary
from reporter.numbers import at_least, fmt, num, pct, readable
from reporter.safetext import UNSAFE_ABOVE_C0
from reporter.values import finite

__all__ = [
    "MAX_MESSAGE", "MAX_SHOWN", "SPACES", "Chart", "all_prefill", "num", "overlap_cell", "pct",
    "prefill_lacks", "shown", "value_text",
]  # fmt: skip

#: Longest trace string shown in full; longer ones are cut and say how long they were.
MAX_SHOWN = 160
#: Longest finding message shown (messages quote trace strings).
MAX_MESSAGE = 1200
# Characters that reorder or hide text (bidi embeddings, overrides and isolates, marks, zero
# width, tags, line separators) and C0/C1 controls, the same set the terminal escapes
# (reporter.safetext): shown as a visible <U+XXXX> instead of acting on the page.
_INVISIBLE = re.compile(f"[\x00-\x08\x0b-\x1f{UNSAFE_ABOVE_C0}]")
#: Line breaks and tabs, which a shown string turns into one space.
SPACES = re.compile(r"[\t\n\r]+")


def overlap_cell(overlap: float | None, bound: float | None, bound_exact: bool | None) -> str:
    """A run's overlap as its table shows it: measured (2 decimals), else the lower bound a
    summary gives (`≥`, rounded down) or its approximation (`~`); `n/a` when neither."""
    if overlap is not None or bound is None:
        return num(overlap, 2)
    return "≥" + at_least(bound, 1) if bound_exact else "~" + fmt(bound, 1)


def rate_cell(r: RunSummary) -> str | None:
    """An open-loop run's load as its N cell shows it in every report ("10/s"); None for a
    closed loop, whose N is its concurrency."""
    if r.load == "rate" and r.request_rate is not None:
        return f"{r.request_rate:g}/s"
    return None


def all_prefill(r: RunSummary) -> bool:
    """A prompt-processing test (llama-bench pp): its wall clock is all prefill, timed at its
    own rate (`prompt_tps`)."""
    return r.phase == "prompt" and r.prompt_tps is not None


def prefill_lacks(r: RunSummary) -> str:
    """What a run lacks for its prefill share (its prompt tokens ÷ the prefill rate, over its
    wall clock), as the wall clock split and the prefill note both word it ("no finite
    prefill time" when it lacks none of them: a rate of 0)."""
    lacks: list[str] = []
    if r.prompt_tokens_total is None:
        # a prompt length the file states is not a count of the prompts sent
        lacks.append("no prompt lengths" if r.prompt_tokens is None else "no prompt token counts")
    if r.prefill_rate is None:
        lacks.append("no prefill rate")
    wall = r.wall_s
    if finite(wall) is None:
        lacks.append("no wall clock")
    elif wall is not None and wall <= 0:
        lacks.append(f"a wall clock of {num(wall, 2)} s")
    return " and ".join(lacks) or "no finite prefill time"


def shown(value: object, limit: int = MAX_SHOWN) -> str:
    """A trace string made safe to look at: visible controls, one line, at most `limit` chars.

    The string is cut before anything is replaced in it, so that a 1 MiB id costs no more
    than a short one; a cut string says how many characters it had.
    """
    text = "" if value is None else str(value)
    if len(text) > limit:
        text = f"{text[: limit - 1]}… ({len(text):,} characters)"
    text = SPACES.sub(" ", text)
    return _INVISIBLE.sub(lambda m: f"<U+{ord(m.group(0)):04X}>", text)


def value_text(value: Any) -> str:
    """An evidence or numbers value as text (numbers at a readable precision)."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float):
        return readable(value)
    if isinstance(value, list | tuple):
        items = [value_text(v) for v in value[:8]]
        more = f", … ({len(value)} in all)" if len(value) > 8 else ""
        return ", ".join(items) + more
    return shown(value)


@dataclass(frozen=True)
class Chart:
    """One chart: an SVG document (already checked to load nothing) and what it shows."""

    id: str
    title: str
    caption: str
    svg: str
    note: str = ""
    #: Small charts sit side by side in a grid; the others take the full width.
    small: bool = False
    #: Why the chart was left out (it could not be drawn safely); printed in its place.
    left_out: str = ""
    #: The group (sweep) or the run it is about, as in the verdict ("" for both: all runs);
    #: the report shows it in that group's section.
    group: str = ""
    run: str = ""
