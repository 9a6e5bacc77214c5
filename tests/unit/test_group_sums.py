"""table.group_sums, which sums a stretch of rows at a time, is np.bincount bit for bit:
every sum (signs of zero, NaN, infinities, overflow) and every count."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from reporter import table
from reporter.table import group_sums

_values = st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from(
    [0.0, -0.0, 1e308, -1e308, 0.1, 3.0, 2.0**53, 1.0]
)


def _by_bincount(codes: np.ndarray, values: np.ndarray, size: int) -> tuple[np.ndarray, ...]:
    return np.bincount(codes, weights=values, minlength=size), np.bincount(codes, minlength=size)


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype.kind == b.dtype.kind and a.tobytes() == b.astype(a.dtype).tobytes()


@settings(max_examples=300, deadline=None)
@pytest.mark.slow
@given(
    st.lists(st.tuples(st.integers(0, 5), st.lists(_values, min_size=1, max_size=6)), max_size=8),
    st.integers(0, 3),
    st.booleans(),
)
@example([], 0, False)
@example([(0, [-0.0])], 0, False)
@example([(0, [-0.0, -0.0]), (1, [0.0, -0.0])], 0, False)
@example([(2, [1e308, 1e308, -1e308])], 1, False)
def test_group_sums_is_bincount(
    stretches: list[tuple[int, list[float]]], spare: int, shuffle: bool
) -> None:
    codes = np.array([c for c, vs in stretches for _ in vs], dtype=np.int8)
    values = np.array([v for _, vs in stretches for v in vs], dtype=np.float64)
    if shuffle and len(codes):
        order = np.random.default_rng(len(codes)).permutation(len(codes))
        codes, values = codes[order], values[order]
    size = (int(codes.max()) + 1 if len(codes) else 0) + spare
    sums, counts = group_sums(codes, values, size)
    want_sums, want_counts = _by_bincount(codes, values, size)
    assert _same(sums, want_sums)
    assert np.array_equal(counts, want_counts)


def test_many_stretches_take_bincount() -> None:
    codes = np.tile(np.arange(2, dtype=np.int8), table.MAX_STRETCHES)
    values = np.linspace(-1, 1, len(codes))
    sums, counts = group_sums(codes, values, 2)
    want_sums, want_counts = _by_bincount(codes, values, 2)
    assert _same(sums, want_sums)
    assert np.array_equal(counts, want_counts)


def test_means_by_run_unchanged() -> None:
    rng = np.random.default_rng(7)
    n = 5000
    run = pd.Series(pd.Categorical(np.repeat(["b", "a", "c"], [2000, 2000, 1000])))
    values = rng.normal(100, 30, n)
    values[rng.integers(0, n, 50)] = np.nan
    values[:5] = -0.0
    frame = pd.DataFrame({"run": run, "output_tokens": values, "ok": rng.random(n) > 0.1})
    codes = run.cat.codes.to_numpy()
    known = np.isfinite(values) & frame["ok"].to_numpy()
    sums = np.bincount(codes[known], weights=values[known], minlength=3)
    counts = np.bincount(codes[known], minlength=3)
    want = {str(k): float(sums[i] / counts[i]) for i, k in enumerate(run.cat.categories)}
    got = table._means_by_run(frame, "output_tokens", completed=True)
    assert got == want
    assert [np.float64(v).tobytes() for v in got.values()] == [
        np.float64(want[k]).tobytes() for k in got
    ]
