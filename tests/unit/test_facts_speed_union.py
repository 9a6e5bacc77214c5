"""The union of one run's intervals (the prefill window's) is `union_length`'s of them, summed,
to the last bit: ties, touching intervals, ends before starts, signed zeros, infinities and
overflows."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from reporter.metrics import union_length, union_of_one_run

#: coarse times (ties, touching intervals), zeros of both signs, infinities, huge values
TIMES = st.one_of(
    st.sampled_from([0.0, -0.0, 1.0, 2.0, 2.5, np.inf, -np.inf, 1e308, -1e308, 5e-324]),
    st.floats(-5, 5).map(lambda x: round(x, 1)),
    st.floats(allow_nan=False, allow_infinity=True),
)


def _bits(value: float) -> bytes:
    return np.float64(value).tobytes()


def _as_union_length(start: np.ndarray, end: np.ndarray, order: np.ndarray) -> float:
    with np.errstate(all="ignore"):
        return float(union_length(np.zeros(len(start)), start, end, order).sum())


def _same(start: np.ndarray, end: np.ndarray) -> None:
    order = np.argsort(start, kind="stable")
    expected = _as_union_length(start, end, order)
    with np.errstate(all="ignore"):
        found = union_of_one_run(start, end, order)
    assert type(found) is float
    assert _bits(found) == _bits(expected), (start, end, found, expected)


def _pairs(
    draw_start: st.SearchStrategy[float], draw_end: st.SearchStrategy[float]
) -> st.SearchStrategy[tuple[np.ndarray, np.ndarray]]:
    return st.integers(0, 40).flatmap(
        lambda n: st.tuples(
            hnp.arrays(np.float64, n, elements=draw_start),
            hnp.arrays(np.float64, n, elements=draw_end),
        )
    )


@pytest.mark.slow
@settings(max_examples=500, deadline=None)
@given(_pairs(TIMES, TIMES))
def test_any_intervals(case: tuple[np.ndarray, np.ndarray]) -> None:
    _same(*case)


@pytest.mark.slow
@settings(max_examples=500, deadline=None)
@given(_pairs(TIMES, st.floats(0, 3).map(lambda x: round(x, 1))))
def test_well_formed_intervals(case: tuple[np.ndarray, np.ndarray]) -> None:
    """Each interval ends at or after its start (the usual trace)."""
    start, length = case
    with np.errstate(all="ignore"):
        _same(start, start + length)


def test_edges() -> None:
    empty = np.zeros(0)
    _same(empty, empty)
    _same(np.array([1.0]), np.array([3.0]))
    _same(np.array([-0.0]), np.array([-0.0]))
    _same(np.array([0.0, -0.0]), np.array([-0.0, 0.0]))
    _same(np.array([np.inf, -np.inf]), np.array([np.inf, np.inf]))  # an overflow, then -inf
    _same(np.array([-np.inf, 0.0, 1.0]), np.array([np.inf, 2.0, -np.inf]))
    _same(np.array([1e308, -1e308, -1e308]), np.array([1e308, 1e308, 1e308]))


def test_a_large_run_nearly_in_order() -> None:
    rng = np.random.default_rng(7)
    for concurrency in (1, 8, 128):
        send = np.repeat(np.cumsum(rng.exponential(0.1, 2000)), concurrency)[:20_000]
        send[:concurrency] = 0.0  # sent together at the start, as a closed loop does
        first = send + rng.exponential(0.03, len(send))
        _same(send, first)
