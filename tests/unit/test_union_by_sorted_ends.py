"""reporter.metrics.union_length's merged blocks, from each run's starts and ends sorted apart
and from the reach at a block's last row: the blocks and lengths of the definition (the sort
by run then start, the running maximum of ends, each block's maximum end), to the last bit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from reporter import metrics
from tests.conftest import float_bits

#: coarse times (ties, touching intervals), zeros of both signs, infinities and NaN
TIMES = st.one_of(
    st.sampled_from([0.0, -0.0, 1.0, 2.0, 2.5, np.inf, -np.inf, np.nan, 1e308, -1e308]),
    st.floats(-5, 5).map(lambda x: round(x, 1)),
    st.floats(allow_nan=True, allow_infinity=True),
)
#: the same without zeros (where the sorted ends decline): coarse times that tie and touch
NONZERO_TIMES = st.one_of(
    st.sampled_from([1.0, 2.0, 2.5, -1.0, np.inf, -np.inf, np.nan, 1e308, -1e308]),
    st.floats(-5, 5).map(lambda x: round(x, 1)).filter(lambda x: x != 0),
)


def _blocks_by_definition(
    run: np.ndarray, start: np.ndarray, end: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    order = np.lexsort((start, run))
    run, start, end = run[order], start[order], end[order]
    group_start = np.concatenate(([True], run[1:] != run[:-1]))
    reach = np.empty(len(end))
    for a, b in zip(
        np.flatnonzero(group_start), [*np.flatnonzero(group_start)[1:], len(end)], strict=True
    ):
        reach[a:b] = np.maximum.accumulate(end[a:b])
    new_block = group_start.copy()
    new_block[1:] |= start[1:] > reach[:-1]
    firsts = np.flatnonzero(new_block)
    return run[firsts], np.maximum.reduceat(end, firsts) - start[firsts]


def _same_as_by_reach(run: np.ndarray, start: np.ndarray, end: np.ndarray) -> None:
    if not len(run):  # union_length answers an empty call itself
        return
    with np.errstate(all="ignore"):
        expected_runs, expected = _blocks_by_definition(run, start, end)
        found = [metrics._blocks_by_reach(run, start, end, None)]
        found.append(metrics._blocks_by_reach(run, start, end, np.lexsort((start, run))))
        found.append(metrics._blocks_by_sorted_ends(run.copy(), start.copy(), end.copy()))
    for blocks in found:
        if blocks is not None:
            assert blocks[0].tolist() == expected_runs.tolist()
            assert float_bits(blocks[1]) == float_bits(expected)


def _cases(
    draw_start: st.SearchStrategy[float], draw_end: st.SearchStrategy[float]
) -> st.SearchStrategy[tuple[np.ndarray, ...]]:
    return st.integers(1, 50).flatmap(
        lambda n: st.tuples(
            hnp.arrays(np.int8, n, elements=st.integers(0, 4)),
            hnp.arrays(np.float64, n, elements=draw_start),
            hnp.arrays(np.float64, n, elements=draw_end),
            st.booleans(),
        )
    )


@pytest.mark.slow
@settings(max_examples=600, deadline=None)
@given(_cases(NONZERO_TIMES, st.floats(0, 3).map(lambda x: round(x, 1))))
def test_well_formed_intervals(case: tuple[np.ndarray, ...]) -> None:
    run, start, length, grouped = case
    if grouped:  # the usual trace: each run's rows together
        run = np.sort(run)
    keep = ~np.isnan(start)
    with np.errstate(all="ignore"):
        end = start + length
    _same_as_by_reach(run[keep], start[keep], end[keep])


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(_cases(TIMES, TIMES))
def test_any_intervals(case: tuple[np.ndarray, ...]) -> None:
    """Ends before starts, zeros and infinities: left to the sort by start, or the same."""
    run, start, end, grouped = case
    if grouped:
        run = np.sort(run)
    keep = ~(np.isnan(start) | np.isnan(end))
    _same_as_by_reach(run[keep], start[keep], end[keep])


def test_union_length_of_large_nearly_ordered_runs() -> None:
    """Runs of thousands of overlapping requests, each nearly in time order, some apart."""
    rng = np.random.default_rng(3)
    for concurrency in (1, 4, 64):
        n = 20_000
        run = np.repeat(np.arange(4, dtype=np.int8), n // 4)
        send = np.cumsum(rng.exponential(0.01, n)) + 1.0
        first = send + rng.exponential(0.05 * concurrency, n)
        end = first + rng.exponential(0.5 * concurrency, n)
        for runs in (run, rng.permutation(run)):
            blocks = metrics._blocks_by_sorted_ends(runs, first, end)
            assert blocks is not None
            expected = _blocks_by_definition(runs, first, end)
            assert blocks[0].tolist() == expected[0].tolist()
            assert blocks[1].tobytes() == expected[1].tobytes()
            assert metrics.union_length(runs, first, end).size == 4


def test_declines_where_it_could_differ() -> None:
    run = np.zeros(2, dtype=np.int8)
    one = np.array([1.0, 2.0])
    assert metrics._blocks_by_sorted_ends(run, one, one[::-1].copy()) is None  # ends first
    assert metrics._blocks_by_sorted_ends(run, np.array([-0.0, 1.0]), one + 1) is None
    assert metrics._blocks_by_sorted_ends(run.astype(float), one, one + 1) is None
    assert metrics._blocks_by_sorted_ends(run, one, one + 1) is not None
