"""Values from a trace or a table cell made into numbers and text: the one place that decides
what counts as a number, a whole number or an unknown.

Two families, for two kinds of input:
- table cells (pandas, numpy, text from a CSV): `number`, `number_or_nan`, `finite` accept
  anything `float()` reads, with NaN, None, bools and unreadable text standing for unknown;
- values parsed from JSON (the adapters' records): `is_number`, `finite_number`, `whole`
  accept only int and float (a bool or a numeric string is not a number there), and
  `numeric_text` reads a string that spells exactly one number;
- a mapped field of a custom log (CSV text or JSON): `loose_number` also reads what
  Python's int() or float() read ("1_000", " 12 ").

No imports beyond the standard library: the lowest layer may use it. How figures are
printed is reporter.numbers.
"""

from __future__ import annotations

import math
import re
from typing import Any

#: Whole numbers beyond ±MAX_INT64 overflow numpy's integers and orjson's writer: the native
#: reader refuses them in any record, and the integrity checks in any adapter's run record.
MAX_INT64 = 2**63 - 1

_NUMERIC_TEXT = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")
_WHOLE_TEXT = re.compile(r"[-+]?\d+")


def number(value: object) -> float | None:
    """A finite-or-infinite float from a table cell; None for null, NaN, bools and text."""
    if value is None or isinstance(value, bool):
        return None
    try:
        out = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):  # OverflowError: an int beyond a double
        return None
    return None if out != out else out


def number_or_nan(value: object) -> float:
    """`number`, with NaN standing for unknown (for arithmetic that propagates it)."""
    out = number(value)
    return float("nan") if out is None else out


def finite(value: object) -> float | None:
    """`number`, with infinities also standing for unknown (for what is printed)."""
    out = number(value)
    return out if out is not None and abs(out) != float("inf") else None


def is_number(value: Any) -> bool:
    """An int or a float as JSON gives them (a bool is not a number)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def finite_number(value: Any) -> float | None:
    """A finite int or float (`is_number`) as float, else None."""
    if is_number(value) and math.isfinite(value):
        return float(value)
    return None


def whole(value: Any) -> int | None:
    """A finite number with no fractional part (`3`, `3.0`) as int, else None."""
    v = finite_number(value)
    return int(v) if v is not None and v == int(v) else None


def numeric_text(text: str) -> int | float | None:
    """A string that spells one finite number ("500", " 1.5e3 "), as that number; else None.

    Digits only (with a sign) give an int; anything else a float. No "nan", "inf", hex or
    thousands separators.
    """
    stripped = text.strip()
    if not _NUMERIC_TEXT.fullmatch(stripped):
        return None
    value = float(stripped)
    if not math.isfinite(value):
        return None
    return int(value) if _WHOLE_TEXT.fullmatch(stripped) else value


def loose_number(value: Any) -> int | float | None:
    """An int, a finite float, or text that int() or float() reads as a finite number; else
    None (bools, NaN, infinities, other text and types)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            pass
        try:
            number = float(value)
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    return None
