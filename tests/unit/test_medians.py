"""reporter.medians: the medians np.median and pandas' group-by median take, to the last bit,
from one partition each."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from hypothesis.extra.numpy import arrays

from reporter.medians import median, medians_by_code
from tests.conftest import float_bits

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


#: few distinct values (ties), signed zeros, infinities and NaN among ordinary figures
VALUES = st.one_of(
    st.sampled_from([0.0, -0.0, 1.0, -1.0, 2.5, np.inf, -np.inf, np.nan]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(-10, 10).map(lambda x: round(x, 1)),
)


def _pandas_medians(values: np.ndarray, codes: np.ndarray) -> np.ndarray:
    runs = pd.Categorical.from_codes(codes, categories=[f"r{i}" for i in range(5)])
    medians = pd.Series(values).groupby(runs, observed=True).median()
    return medians.to_numpy(dtype=np.float64)


def _same_as_pandas(values: np.ndarray, codes: np.ndarray) -> None:
    with np.errstate(all="ignore"):  # inf − inf: NaN, as pandas gives it
        expected = _pandas_medians(values, codes)
        found = medians_by_code(values.copy(), codes.copy())
    assert float_bits(found) == float_bits(expected)


@settings(max_examples=600, deadline=None)
@given(
    st.integers(0, 60).flatmap(
        lambda n: st.tuples(
            hnp.arrays(np.float64, n, elements=VALUES),
            hnp.arrays(np.int8, n, elements=st.integers(-1, 4)),
            st.booleans(),
        )
    )
)
@pytest.mark.slow
def test_medians_by_code_are_pandas(case: tuple[np.ndarray, np.ndarray, bool]) -> None:
    values, codes, grouped = case
    if grouped:  # the usual trace: each run's rows together
        codes = np.sort(codes)
    _same_as_pandas(values, codes)


def test_medians_by_code_of_many_sizes_are_pandas() -> None:
    rng = np.random.default_rng(5)
    for size in [*range(1, 40), 1000, 4097, 65_537]:
        for draw in range(3):
            values = rng.lognormal(-3, 1.5, size)
            codes = np.sort(rng.integers(0, 5, size)).astype(np.int8)
            if draw == 1:
                values = np.round(values, 2)  # ties
                codes = rng.integers(-1, 5, size).astype(np.int8)
            if draw == 2:
                values[rng.random(size) < 0.2] = np.nan
            _same_as_pandas(values, codes)
