"""reporter.values: what counts as a number, for table cells and for JSON values."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from reporter.values import (
    finite,
    finite_number,
    is_number,
    loose_number,
    number,
    number_or_nan,
    numeric_text,
    whole,
)

JSONISH = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=12),
    st.lists(st.integers(), max_size=2),
)  # fmt: skip


def test_table_cells() -> None:
    assert number("2.5") == 2.5 and number(True) is None and number(math.nan) is None
    assert number(math.inf) == math.inf and finite(math.inf) is None
    assert math.isnan(number_or_nan(None)) and number_or_nan(3) == 3.0
    assert number(10**400) is None  # beyond a double


def test_json_values() -> None:
    assert is_number(3) and is_number(2.5) and not is_number(True) and not is_number("3")
    assert finite_number(3) == 3.0 and finite_number(math.inf) is None
    assert finite_number("3") is None and finite_number(False) is None
    assert whole(3.0) == 3 and whole(3.5) is None and whole(True) is None
    assert numeric_text(" 1.5e3 ") == 1500.0 and numeric_text("500") == 500
    assert numeric_text("nan") is None and numeric_text("1_000") is None
    assert numeric_text("0x10") is None and numeric_text("1e999") is None
    assert loose_number("1_000") == 1000 and loose_number(" 12 ") == 12
    assert loose_number("nan") is None and loose_number(True) is None


@given(JSONISH)
def test_unknown_is_none_never_nan_or_inf(value: object) -> None:
    for f in (finite, finite_number, loose_number):
        out = f(value)
        assert out is None or (is_number(out) and math.isfinite(out))
    w = whole(value)
    assert w is None or (type(w) is int and w == finite_number(value))


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_a_spelled_number_reads_back(value: float) -> None:
    assert numeric_text(repr(value)) == value
    assert numeric_text(f" {value!r}\t") == value
