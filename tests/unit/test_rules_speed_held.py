"""BR004's level held (the top levels tried first, small whole-number steps) is the level the
sums of every level found, on any times: ties, NaN, infinities, signed zeros, none at all."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from reporter.rules.br004_admission_queue import (
    _held,
    _known_first,
    _merge,
    _merge_unordered,
    held_level,
)


def _held_by_every_level(starts: np.ndarray, ends: np.ndarray, share: float) -> int:
    """The level as it was found before: a bincount of every level, then the candidates'
    own sums from the highest down (starts sorted by the default sort)."""
    if len(starts) == 0:
        return 0
    starts, ends = np.sort(starts), np.sort(ends, kind="stable")
    times = np.concatenate((ends, starts))
    order = np.argsort(times, kind="stable")
    times, n_ends = times[order], len(ends)
    if len(times) == n_ends:
        return 0
    starts_so_far = np.cumsum(order >= n_ends)
    level = (2 * starts_so_far - np.arange(1, len(times) + 1))[:-1]
    spans = np.diff(times)
    busy = spans[level > 0].sum()
    top = int(level.max(initial=0))
    if busy <= 0:
        return top
    need = share * busy
    at_level = np.bincount(np.maximum(level, 0), weights=spans, minlength=top + 1)
    at_least = np.cumsum(at_level[::-1])[::-1]
    candidates = np.flatnonzero(at_least[1:] >= need - 1e-6 * busy) + 1
    for k in range(int(candidates.max(initial=0)), 0, -1):
        if spans[level >= k].sum() >= need:
            return k
    return 0


_times = st.sampled_from([0.0, -0.0, 0.1, 0.2, 0.3, 0.5, 1.0, 1.5, 7.0, np.nan, np.inf, -np.inf])


@st.composite
def _intervals(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    """Starts and ends: of few values (ties, levels held exactly the threshold), or random."""
    n = draw(st.integers(0, 40))
    if draw(st.booleans()):
        starts = np.array(draw(st.lists(_times, min_size=n, max_size=n)), dtype=float)
        ends = np.array(draw(st.lists(_times, min_size=n, max_size=n)), dtype=float)
        if draw(st.booleans()):  # most ends after their starts, as a trace has them
            with np.errstate(invalid="ignore"):  # -inf + inf
                ends = starts + np.abs(ends)
        return starts, ends
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    starts = np.round(rng.random(n) * 10, int(rng.integers(0, 4)))
    ends = starts + np.round(rng.random(n) * rng.integers(1, 8), int(rng.integers(0, 4)))
    return starts, ends


_shares = st.sampled_from([0.0, 0.1, 0.25, 1 / 3, 0.5, 0.9, 1.0]) | st.floats(0.0, 1.0)


@pytest.mark.slow
@settings(max_examples=3000, deadline=None)
@given(_intervals(), _shares)
@example((np.array([]), np.array([])), 0.1)
@example((np.array([1.0]), np.array([2.0])), 0.1)
@example((np.array([0.0, -0.0, 0.0]), np.array([-0.0, 0.0, 1.0])), 0.5)
@example((np.array([0.0, 0.0, 1.0, 1.0]), np.array([1.0, 1.0, 2.0, 2.0])), 0.5)
@example((np.array([0.0, 0.0, np.inf]), np.array([np.inf, 1.0, np.inf])), 0.1)
@example((np.array([0.0, np.nan, 1.0]), np.array([2.0, 3.0, np.nan])), 0.1)
def test_held_level_is_the_level_of_the_sums_of_every_level(
    intervals: tuple[np.ndarray, np.ndarray], share: float
) -> None:
    starts, ends = intervals
    with np.errstate(invalid="ignore"):  # inf - inf: a NaN span, as the rule meets it
        expected = _held_by_every_level(starts, ends, share)
        assert held_level(starts, ends, share) == expected
        ordered = np.sort(starts, kind="stable"), np.sort(ends, kind="stable")
        assert held_level(*ordered, share, ordered=True) == expected
        assert _held(*_merge(*ordered), share) == expected
        assert _held(*_merge_unordered(starts, ordered[1]), share) == expected


def test_held_level_of_many_levels_is_found_below_the_top() -> None:
    # a brief overlap of many at hand-overs: the top levels are not held, a lower one is
    rng = np.random.default_rng(3)
    for _ in range(200):
        n = int(rng.integers(3, 200))
        starts = np.sort(np.round(rng.random(n) * 10, 1))
        ends = starts + np.round(rng.random(n) * rng.integers(1, 5), 1)
        burst = np.full(int(rng.integers(0, 20)), 5.0)
        starts, ends = np.concatenate((starts, burst)), np.concatenate((ends, burst + 1e-3))
        for share in (0.0, 0.1, 0.3, 0.6, 1.0):
            assert held_level(starts, ends, share) == _held_by_every_level(starts, ends, share)


_any_times = st.lists(
    st.floats(allow_nan=True, allow_infinity=True)
    | st.sampled_from([0.0, -0.0, 1.0, 2.5, 5e-324, 1e308, np.nan])
    | st.floats(0.0, 10.0),
    max_size=30,
) | st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.5, 5e-324, 1e308]) | st.floats(0.0, 1e300))


@pytest.mark.slow
@settings(max_examples=2000, deadline=None)
@given(_any_times, _any_times)
@example([], [])
@example([0.0, 0.0, 1.0], [0.0, 1.0, 1.0])
@example([1.0, 0.5, 0.5, 2.0], [0.5, 1.0])
@example([-0.0, 0.0], [0.0])
def test_merge_of_unordered_starts_is_the_merge_of_them_sorted(
    starts: list[float], ends: list[float]
) -> None:
    """Bit for bit: the same times, the same starts, ends first at equal times."""
    start_times = np.array(starts, dtype=np.float64)
    end_times = np.sort(np.array(ends, dtype=np.float64), kind="stable")
    times, is_start = _merge_unordered(start_times, end_times)
    expected_times, expected_starts = _merge(np.sort(start_times, kind="stable"), end_times)
    assert times.dtype == expected_times.dtype and is_start.dtype == expected_starts.dtype
    assert times.tobytes() == expected_times.tobytes()
    assert is_start.tobytes() == expected_starts.tobytes()


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from([0.0, -0.0, 1.0, 2.0, np.inf, -np.inf, np.nan]), max_size=8),
    st.integers(0, 10),
)
def test_known_first_is_the_count_of_known_times(values: list[float], count: int) -> None:
    ordered = np.sort(np.array(values, dtype=np.float64), kind="stable")
    expected = np.count_nonzero(~np.isnan(ordered)) == count
    assert _known_first(ordered, count) == expected
