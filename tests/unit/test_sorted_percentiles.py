"""Percentiles read from partitions are np.percentile's, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from reporter.latency import PERCENTILES, _percentiles_of, _select, percentiles
from tests.conftest import float_bits

#: what the latency table asks, and the ends and odd points of the range
ASKED = [p / 100 * 100 for p in PERCENTILES]
PERCENTS = st.lists(
    st.one_of(st.sampled_from([0.0, 0.5, 25.0, 50.0, 90.0, 99.0, 99.9, 100.0]), st.floats(0, 100)),
    min_size=1,
    max_size=6,
)
#: few distinct values (ties), signed zeros, infinities and NaN among ordinary figures
VALUES = st.one_of(
    st.sampled_from([0.0, -0.0, 1.0, -1.0, 2.5, np.inf, -np.inf, np.nan, 1e308, -1e308]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(-10, 10).map(lambda x: round(x, 1)),
)


def _same(values: np.ndarray, percents: list[float]) -> None:
    with np.errstate(all="ignore"):  # inf − inf: NaN, as numpy gives it
        expected = np.percentile(values.copy(), percents)
        found = percentiles(values.copy(), percents)
    assert float_bits(found) == float_bits(expected)


@settings(max_examples=600, deadline=None)
@given(hnp.arrays(np.float64, st.integers(1, 80), elements=VALUES), PERCENTS)
@pytest.mark.slow
def test_percentiles_are_numpys(values: np.ndarray, percents: list[float]) -> None:
    _same(values, percents)


def test_percentiles_of_many_sizes_are_numpys() -> None:
    rng = np.random.default_rng(7)
    for size in [*range(1, 70), 127, 128, 129, 1000, 4097, 65_537]:
        for draw in range(3):
            values = rng.lognormal(-3, 1.5, size)
            if draw == 1:
                values = np.round(values, 2)  # ties
            if draw == 2:
                values[rng.random(size) < 0.1] = np.nan
            _same(values, ASKED)
            _same(values, [0.0, 100.0, float(rng.uniform(0, 100))])


def test_a_lone_value_and_infinities_are_numpys() -> None:
    for values in ([3.0], [np.inf], [1.0, np.inf], [-np.inf, np.inf], [1.0, 2.0, np.inf]):
        _same(np.asarray(values), ASKED)
        _same(np.asarray(values), [0.0, 50.0, 100.0])


@settings(max_examples=300, deadline=None)
@given(
    st.lists(hnp.arrays(np.float64, st.integers(0, 40), elements=VALUES), min_size=1, max_size=4)
)
@pytest.mark.slow
def test_percentiles_of_pieces_are_numpys_without_nan(pieces: list[np.ndarray]) -> None:
    """A run's chunk gaps, with NaN among them (partitioned, not sorted)."""
    joined = np.concatenate(pieces)
    known = joined[~np.isnan(joined)]
    with np.errstate(all="ignore"):
        table = _percentiles_of({3: np.concatenate(pieces)}, [p / 100 for p in PERCENTILES])
        expected = np.percentile(known, ASKED) if len(known) else None
    if expected is None:
        assert table.empty
    else:
        assert float_bits(table.loc[3].to_numpy()) == float_bits(expected)


@settings(max_examples=300, deadline=None)
@given(
    hnp.arrays(np.float64, st.integers(1, 300), elements=st.floats(-1e3, 1e3)),
    st.lists(st.floats(0, 1), min_size=1, max_size=8),
)
@pytest.mark.slow
def test_selected_positions_hold_the_sorted_values(values: np.ndarray, at: list[float]) -> None:
    positions = np.unique((np.asarray(at) * (len(values) - 1)).astype(np.intp))
    chosen = values.copy()
    _select(chosen, positions)
    assert np.sort(chosen).tolist() == np.sort(values).tolist()  # the same values
    assert chosen[positions].tolist() == np.sort(values)[positions].tolist()
