"""Each run's median read from one sort is pandas' group-by median, bit for bit."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from reporter.metrics import _medians

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


def _bits(values: np.ndarray) -> list[int]:
    """Each value's bits; every NaN alike."""
    return np.where(np.isnan(values), np.nan, values).view(np.int64).tolist()


def _same(values: np.ndarray, codes: np.ndarray) -> None:
    with np.errstate(all="ignore"):  # inf − inf: NaN, as pandas gives it
        expected = _pandas_medians(values, codes)
        found = _medians(values.copy(), codes.copy())
    assert _bits(found) == _bits(expected)


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
def test_medians_are_pandas(case: tuple[np.ndarray, np.ndarray, bool]) -> None:
    values, codes, grouped = case
    if grouped:  # the usual trace: each run's rows together
        codes = np.sort(codes)
    _same(values, codes)


def test_medians_of_many_sizes_are_pandas() -> None:
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
            _same(values, codes)
