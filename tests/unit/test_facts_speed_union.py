"""The union of one run's intervals (the prefill window's) is `union_length`'s of them, summed,
to the last bit: ties, touching intervals, ends before starts, signed zeros, infinities and
overflows."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from reporter import metrics
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


RUN_TIMES = st.one_of(
    st.sampled_from([0.0, -0.0, 1.0, 2.0, 2.5, np.inf, -np.inf, np.nan, 1e308]),
    st.floats(-5, 5).map(lambda x: round(x, 1)),
)


def _blocks_both_ways(
    run: np.ndarray, start: np.ndarray, end: np.ndarray
) -> list[tuple[np.ndarray, np.ndarray] | None]:
    """`_blocks_by_sorted_ends` one run at a time and over every row at once."""
    if not len(run):
        return [None, None]
    found = []
    for rows in (0, 10**9):
        with pytest.MonkeyPatch.context() as patch, np.errstate(all="ignore"):
            patch.setattr(metrics, "_RUN_AT_A_TIME_ROWS", rows)
            found.append(metrics._blocks_by_sorted_ends(run.copy(), start.copy(), end.copy()))
    return found


@pytest.mark.slow
@settings(max_examples=500, deadline=None)
@given(
    st.integers(1, 50).flatmap(
        lambda n: st.tuples(
            hnp.arrays(np.int8, n, elements=st.integers(0, 3)),
            hnp.arrays(np.float64, n, elements=RUN_TIMES),
            hnp.arrays(np.float64, n, elements=RUN_TIMES),
            st.booleans(),
            st.booleans(),
        )
    )
)
def test_blocks_one_run_at_a_time(case: tuple[np.ndarray, ...]) -> None:
    """The blocks of each run found apart are those found over every row at once (and
    `union_length`, which leaves out rows with NaN itself, is the same either way)."""
    run, start, end, grouped, well_formed = case
    if grouped:
        run = np.sort(run)
    if well_formed:
        with np.errstate(all="ignore"):
            end = start + np.abs(end)
    kept = ~(np.isnan(start) | np.isnan(end))
    # (union_length answers a call without rows itself)
    one_at_a_time, at_once = _blocks_both_ways(run[kept], start[kept], end[kept])
    assert (one_at_a_time is None) == (at_once is None)
    if kept.any() and one_at_a_time is not None and at_once is not None:
        assert one_at_a_time[0].dtype == at_once[0].dtype
        assert one_at_a_time[0].tolist() == at_once[0].tolist()
        assert one_at_a_time[1].tobytes() == at_once[1].tobytes()
    unions = []
    for rows in (0, 10**9):
        with pytest.MonkeyPatch.context() as patch, np.errstate(all="ignore"):
            patch.setattr(metrics, "_RUN_AT_A_TIME_ROWS", rows)
            unions.append(union_length(run, start, end))
            expected = union_length(run[kept], start[kept], end[kept])
        assert unions[-1].index.tolist() == expected.index.tolist()
        assert unions[-1].to_numpy().tobytes() == expected.to_numpy().tobytes()


def test_large_runs_one_at_a_time() -> None:
    rng = np.random.default_rng(11)
    n = 40_000
    run = np.repeat(np.arange(4, dtype=np.int16), n // 4)
    for concurrency in (1, 8, 128):
        send = np.sort(np.repeat(np.cumsum(rng.exponential(0.1, n)), concurrency)[:n])
        first = send + rng.exponential(0.03, n) + 1.0
        end = first + rng.exponential(0.5 * concurrency, n)
        for runs in (run, rng.permutation(run)):
            one_at_a_time, at_once = _blocks_both_ways(runs, first, end)
            assert one_at_a_time is not None and at_once is not None
            assert one_at_a_time[0].tolist() == at_once[0].tolist()
            assert one_at_a_time[1].tobytes() == at_once[1].tobytes()
