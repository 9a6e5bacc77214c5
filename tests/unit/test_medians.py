"""reporter.medians: the median np.median takes, to the last bit, from one partition."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from reporter.medians import median

#: Values that tie or sit at the edges: signed zeros, infinities, the largest and smallest.
EDGES = [0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, 1e308, -1e308, 5e-324, math.nan]


def _numpy(values: np.ndarray) -> float:
    kept = values[~np.isnan(values)]
    return float(np.median(kept)) if len(kept) else math.nan


def _same(a: float, b: float) -> bool:
    """Equal to the bit (0.0 is not -0.0), NaN equal to NaN."""
    return np.float64(a).tobytes() == np.float64(b).tobytes() or (math.isnan(a) and math.isnan(b))


def test_examples() -> None:
    assert median(np.array([3.0, 1.0, 2.0])) == 2.0
    assert median(np.array([4.0, 1.0, 3.0, 2.0])) == 2.5
    assert median(np.array([1.0, math.nan, 5.0])) == 3.0
    assert math.isnan(median(np.array([math.nan])))
    assert math.isnan(median(np.array([], dtype="float64")))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # overflow of two huge middle values
@given(arrays("float64", st.integers(1, 64), elements=st.sampled_from(EDGES)))
def test_edges_as_numpy(values: np.ndarray) -> None:
    assert _same(median(values), _numpy(values))


@given(arrays("float64", st.integers(1, 300), elements=st.floats(-1e6, 1e6, width=64)))
def test_as_numpy(values: np.ndarray) -> None:
    assert _same(median(values), _numpy(values))


def test_large_arrays_as_numpy() -> None:
    rng = np.random.default_rng(7)
    for count in (62_500, 62_501, 100_000):
        values = rng.normal(1.0, 0.05, count)
        assert _same(median(values), float(np.median(values)))
        rounded = np.round(values, 2)  # many ties
        assert _same(median(rounded), float(np.median(rounded)))


def test_reads_without_writing() -> None:
    values = np.array([5.0, 1.0, 4.0, 2.0])
    values.flags.writeable = False
    assert median(values) == 3.0
    assert values.tolist() == [5.0, 1.0, 4.0, 2.0]
