"""reporter.numbers: one way to print a figure, and an unknown one never prints as nan or inf."""

from __future__ import annotations

import math
from decimal import Decimal, localcontext

from hypothesis import given
from hypothesis import strategies as st

from reporter.numbers import UNKNOWN, all_of, at_least, fmt, num, pct, plain, readable
from reporter.render.common import overlap_cell

ANY_FLOAT = st.floats(allow_nan=True, allow_infinity=True)
FINITE = st.floats(allow_nan=False, allow_infinity=False)
DIGITS = st.integers(min_value=0, max_value=6)
UNKNOWNS = [None, math.nan, math.inf, -math.inf]


def _no_word(text: str) -> None:
    assert "nan" not in text.lower() and "inf" not in text.lower(), text


def test_examples() -> None:
    assert fmt(1234.56) == "1,234.6"
    assert fmt(3, 0) == "3"
    assert num(12.345, 2, " s") == "12.35 s"
    assert pct(0.256) == "26%"
    assert pct(0.25, 1) == "25.0%"
    assert plain(91.0) == "91"
    assert plain(7) == "7"
    assert plain(1 / 3) == "0.333333"
    assert readable(1234.5) == "1,234.5"
    assert readable(0.25) == "0.25"
    assert readable(0.00123) == "0.00123"
    assert readable(12_000) == "12,000"


def test_unknown_figures() -> None:
    for value in UNKNOWNS:
        assert fmt(value) == UNKNOWN
        assert num(value, 2, " s") == UNKNOWN  # no unit after what is not a figure
        assert pct(value) == UNKNOWN
        assert plain(value) == ""
    for value in (math.nan, math.inf, -math.inf):
        assert readable(value) == UNKNOWN


@given(ANY_FLOAT, DIGITS)
def test_printed_figures_never_read_nan_or_inf(value: float, digits: int) -> None:
    for text in (fmt(value, digits), num(value, digits, " s"), pct(value, digits)):
        _no_word(text)
    _no_word(plain(value))
    _no_word(readable(value))


@given(FINITE, DIGITS)
def test_fmt_rounds_to_the_nearest_shown_decimal(value: float, digits: int) -> None:
    text = fmt(value, digits)
    shown = Decimal(text.replace(",", ""))
    # the shown figure is the exact binary value rounded at `digits` decimals
    assert abs(shown - Decimal(value)) <= Decimal(5) * Decimal(10) ** -(digits + 1)
    assert num(value, digits, " s") == text + " s"


@given(FINITE, DIGITS)
def test_pct_is_the_fraction_times_100(value: float, digits: int) -> None:
    text = pct(value, digits)
    if text != UNKNOWN:  # a fraction whose percentage overflows a double is no figure
        assert text.endswith("%")
        assert text[:-1] == fmt(value * 100, digits)
    else:
        assert not math.isfinite(value * 100)


@given(FINITE)
def test_plain_is_the_json_figure(value: float) -> None:
    """A CSV cell reads back as the figure the JSON verdict writes (6 decimals)."""
    text = plain(value)
    assert "," not in text and " " not in text
    assert float(text) == round(value, 6)


@given(st.integers(min_value=-(10**18), max_value=10**18))
def test_whole_numbers_stay_whole(value: int) -> None:
    assert plain(value) == str(value)
    assert readable(value) == f"{value:,}"
    if abs(value) <= 2**53:  # fixed decimals go through a double, exact up to 2^53
        assert fmt(value, 0) == f"{value:,}"


def test_a_bound_is_rounded_down() -> None:
    # a summary's overlap bound of 0.485 is no bound of 0.5, and 0.959 none of 1.0
    assert at_least(0.485) == "0.4"
    assert at_least(0.959) == "0.9"
    assert at_least(2.3) == "2.3"  # 22.999999999999996 in binary, shown as written
    assert at_least(1234.56, 1) == "1,234.5"
    assert at_least(7, 0) == "7"
    for value in UNKNOWNS:
        assert at_least(value) == UNKNOWN
    assert overlap_cell(None, 0.959, True) == "≥0.9"
    assert overlap_cell(None, 0.959, False) == "~1.0"  # an approximation: the nearest
    assert overlap_cell(1.234, 0.959, True) == "1.23"  # measured: the bound is not shown
    assert overlap_cell(None, None, None) == UNKNOWN


@given(FINITE, DIGITS)
def test_a_bound_never_prints_more_than_it_is(value: float, digits: int) -> None:
    shown = Decimal(at_least(value, digits).replace(",", ""))
    written = Decimal(repr(value))
    with localcontext(prec=400):  # exact: a double has at most 309 digits before the point
        assert shown <= written < shown + Decimal(10) ** -digits


def test_all_of_says_the_one_request_not_all_1_requests() -> None:
    assert all_of(1, "request") == "the one request"
    assert all_of(2, "request") == "both requests"
    assert all_of(3, "request") == "all 3 requests"
    assert all_of(1_000.0, "run") == "all 1,000 runs"
