"""Numbers as text: the one place that decides how a figure is printed.

Every renderer (terminal, Markdown, HTML, CSV), every finding message and the recorder's
summary print figures through these functions, so that a figure reads the same wherever it is
shown and an unknown one (None, NaN, an infinity) never prints as `nan` or `inf`:

- `fmt(value, digits)`: fixed decimals, thousands separated (`1,234.5`); `n/a` when unknown.
- `num(value, digits, unit)`: `fmt` followed by a unit (`12.5 s`) when the figure is known.
- `pct(value, digits)`: a fraction as a percentage (`0.25` → `25%`); `n/a` when unknown.
- `at_least(value, digits)`: a lower bound, rounded down (`0.485` → `0.4`): rounded to the
  nearest, a bound would print a figure it does not reach.
- `plain(value)`: a figure as a CSV cell, at the precision of the JSON verdict (6 decimals,
  no separators, whole numbers without a decimal point); an empty cell when unknown.
- `readable(value)`: a figure at a readable precision for evidence tables, with as many
  decimals as its size needs (`1,234.5`, `0.25`, `0.00123`).

No imports beyond the standard library: the command line's fast paths may use it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from decimal import ROUND_FLOOR, Decimal

#: What a figure that is not known prints as.
UNKNOWN = "n/a"
#: Decimals the JSON verdict and the CSV keep.
JSON_DIGITS = 6


def _known(value: float | int | None) -> bool:
    """A finite number (bools are not figures)."""
    if value is None or isinstance(value, bool):
        return False
    try:
        return math.isfinite(value)
    except (TypeError, OverflowError):  # OverflowError: an int beyond a double
        return False


def fmt(value: float | int | None, digits: int = 1) -> str:
    """A figure with `digits` fixed decimals and thousands separated (`1,234.5`).

    None, NaN and the infinities print as `n/a`: an infinite figure comes from an overflow or a
    division by zero and is no figure to show.
    """
    if not _known(value):
        return UNKNOWN
    return f"{value:,.{digits}f}"


def num(value: float | int | None, digits: int = 1, unit: str = "") -> str:
    """`fmt(value, digits)` followed by `unit` (e.g. `" s"`); just `n/a` when unknown."""
    if not _known(value):
        return UNKNOWN
    return fmt(value, digits) + unit


def at_least(value: float | int | None, digits: int = 1) -> str:
    """A lower bound as `fmt` prints it, but rounded down: a bound of 0.485 is `0.4`, since
    `0.5` would state a figure the file does not show; `n/a` when unknown.

    Rounded in decimal, from the shortest text of the float (repr), so that a bound of 2.3
    stays `2.3` (2.3 × 10 is 22.999999999999996 in binary)."""
    if not _known(value):
        return UNKNOWN
    # moved by exponents only, and cut to a whole number: exact at any size
    scaled = Decimal(repr(float(value))).scaleb(digits)  # type: ignore[arg-type]
    floored = scaled.to_integral_value(ROUND_FLOOR).scaleb(-digits)
    return f"{floored:,.{digits}f}"


def pct(value: float | int | None, digits: int = 0) -> str:
    """A fraction as a percentage with `digits` decimals (`0.256` → `26%`); `n/a` if unknown."""
    if not _known(value):
        return UNKNOWN
    share = value * 100  # type: ignore[operator]
    if not math.isfinite(share):
        return UNKNOWN
    return f"{share:,.{digits}f}%"


def plain(value: float | int | None) -> str:
    """A figure as a CSV cell: rounded to 6 decimals as the JSON verdict writes it.

    No thousands separator and no unit; a whole number has no decimal point; an unknown
    figure (None, NaN, an infinity) is the empty string.
    """
    if value is None or isinstance(value, bool):
        return ""
    if isinstance(value, int):
        return str(value)
    if not math.isfinite(value):
        return ""
    value = round(value, JSON_DIGITS)
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)


def readable(value: float | int) -> str:
    """A figure at the precision a reader needs: whole numbers and large figures with
    thousands separators, others with up to 3 decimals or 3 significant digits."""
    if isinstance(value, int):
        return f"{value:,}"
    if not math.isfinite(value):
        return UNKNOWN
    if value == int(value) and abs(value) < 1e15:
        return f"{int(value):,}"
    if abs(value) >= 1000:
        return f"{value:,.1f}"
    if abs(value) >= 0.01:
        return f"{value:.3f}".rstrip("0").rstrip(".")
    return f"{value:.3g}"


def all_of(count: float | int, noun: str) -> str:
    """ "all 8 requests", and "the one request" or "both requests" rather than "all 1
    requests" or "all 2 requests"."""
    if count == 1:
        return f"the one {noun}"
    return f"both {noun}s" if count == 2 else f"all {fmt(count, 0)} {noun}s"


def listed(items: Sequence[str], limit: int) -> str:
    """The first `limit` items, then how many more: "a, b, c and 4 more"."""
    more = len(items) - limit
    return ", ".join(items[:limit]) + (f" and {more} more" if more > 0 else "")


def counted(count: float | int, noun: str) -> str:
    """ "1 run", "3 runs", "1,024 requests": a count with its noun, singular for one."""
    return f"{fmt(count, 0)} {noun}" if count == 1 else f"{fmt(count, 0)} {noun}s"
