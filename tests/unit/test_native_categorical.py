"""native._categorical, which encodes only the first row of each stretch of equal values,
is pandas' categorical of the column: same categories (in order of first appearance), same
codes, same dtypes, whatever the chunking."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from reporter.adapters.native import _categorical, _take_rows


def _plain(column: pa.ChunkedArray) -> pd.Series:
    """Every row encoded (the definition)."""
    encoded = pc.dictionary_encode(column.combine_chunks())
    categories = pd.Index(encoded.dictionary.to_pylist())
    return pd.Series(pd.Categorical.from_codes(np.asarray(encoded.indices), categories))


def _chunked(values: list[str], cuts: list[int]) -> pa.ChunkedArray:
    bounds = sorted({0, len(values), *(c % (len(values) + 1) for c in cuts)})
    return pa.chunked_array(
        [pa.array(values[a:b], pa.string()) for a, b in itertools.pairwise(bounds)] or [[]],
        type=pa.string(),
    )


_words = st.sampled_from(["a", "b", "", "run-1", "run-10", "é", "a\x00", "length", "stop"])


@settings(max_examples=300, deadline=None)
@pytest.mark.slow
@given(
    st.lists(st.tuples(_words, st.integers(1, 5)), max_size=12),
    st.lists(st.integers(0, 60), max_size=4),
)
@example([], [])
@example([("a", 1)], [])
@example([("a", 3), ("b", 2), ("a", 1)], [2, 4])
def test_categorical_is_the_plain_encoding(
    stretches: list[tuple[str, int]], cuts: list[int]
) -> None:
    values = [word for word, times in stretches for _ in range(times)]
    column = _chunked(values, cuts)
    got, want = _categorical(column), _plain(column)
    assert got.dtype == want.dtype
    assert got.cat.codes.dtype == want.cat.codes.dtype
    assert got.cat.categories.equals(want.cat.categories)
    assert got.cat.categories.dtype == want.cat.categories.dtype
    assert np.array_equal(got.cat.codes.to_numpy(), want.cat.codes.to_numpy())


def test_many_categories_take_wider_codes() -> None:
    values = [f"id-{i}" for i in range(40_000)]
    column = _chunked(values, [1000, 30_000])
    got, want = _categorical(column), _plain(column)
    assert got.cat.codes.dtype == want.cat.codes.dtype == np.int32
    assert np.array_equal(got.cat.codes.to_numpy(), want.cat.codes.to_numpy())
    assert got.cat.categories.equals(want.cat.categories)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.lists(_words, max_size=6), max_size=6),
    st.data(),
)
def test_rows_taken_chunk_by_chunk_are_the_rows(
    chunks: list[list[str]], data: st.DataObject
) -> None:
    """native._take_rows (for the heads of stretches) is pyarrow's take of the joined column,
    empty chunks included."""
    column = pa.chunked_array([pa.array(c, pa.string()) for c in chunks], type=pa.string())
    rows = sorted(data.draw(st.sets(st.integers(0, max(len(column) - 1, 0)))))
    rows = [r for r in rows if r < len(column)]
    got = _take_rows(column, np.asarray(rows, dtype=np.int64))
    assert got.to_pylist() == column.combine_chunks().take(pa.array(rows, pa.int64())).to_pylist()
