"""The shortcuts of reporter.compare read what pandas reads: `fields` a run's values as
`Series.get` gives them, `Cells` a frame's numbers as `cell` (`.at`) gives them."""

from __future__ import annotations

import math
import struct
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reporter.compare import Cells, cell, fields, values

_labels = st.sampled_from(["a", "b", "run", "r1", "r2", "x y", "0", ""])
_floats = st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from([0.0, -0.0, 1.0])
_elements = {
    "float": _floats,
    "int": st.integers(-(2**40), 2**40),
    "bool": st.booleans(),
    "object": st.none() | st.text(max_size=2) | _floats | st.booleans() | st.integers(-3, 3),
    "str": st.text(max_size=2),
}


@st.composite
def _frames(draw: st.DrawFn) -> pd.DataFrame:
    n = draw(st.integers(1, 5))
    kinds = draw(st.lists(st.sampled_from(sorted(_elements)), min_size=1, max_size=5))
    data: dict[str, Any] = {}
    for i, kind in enumerate(kinds):
        column = draw(st.lists(_elements[kind], min_size=n, max_size=n))
        data[f"c{i}"] = pd.Series(column, dtype="str") if kind == "str" else column
    index = draw(st.lists(_labels, min_size=n, max_size=n))
    frame = pd.DataFrame(data)
    frame.index = pd.Index(index, dtype="str") if draw(st.booleans()) else pd.Index(index)
    if draw(st.booleans()) and len(frame.columns) > 1:  # a column label repeated
        frame.columns = ["c0", *frame.columns[1:-1], "c0"]
    return frame


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return struct.pack("<d", a) == struct.pack("<d", b) or (math.isnan(a) and math.isnan(b))
    return type(a) is type(b) and (a is b or a == b)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(_frames(), st.lists(_labels | st.just("absent"), max_size=6))
def test_cells_read_as_cell(frame: pd.DataFrame, keys: list[str]) -> None:
    cells = Cells(frame)
    for key in [*keys, *map(str, frame.index)]:
        for column in [*map(str, frame.columns), "missing"]:
            try:
                want: Any = cell(frame, key, column)
            except Exception as e:  # the same failure either way
                want = type(e)
            try:
                got: Any = cells(key, column)
            except Exception as e:
                got = type(e)
            assert _same(got, want), (key, column, got, want)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(_frames())
def test_fields_get_as_the_series_does(frame: pd.DataFrame) -> None:
    for _, run in frame.iterrows():
        record = fields(run)
        for key in [*map(str, run.index), "absent"]:
            want = run.get(key)
            got = record.get(key)
            if isinstance(want, pd.Series):  # a label repeated: `fields` keeps the Series
                assert record is run
                continue
            assert got is want or _same(got, want), (key, got, want)


def test_values_of_a_run_row_and_of_its_fields_are_the_same() -> None:
    frame = pd.DataFrame(
        {
            "run": ["a", "b"],
            "prompt_tokens": [np.nan, 32.0],
            "stop": ["forced", None],
            "extra": [{"dataset_name": "sharegpt", "random_input_len": 5}, None],
            "engine_flags": [["--x"], []],
            "format": ["benchreport", "vllm"],
        }
    )
    stats = pd.DataFrame({"prompt_tokens_mean": [12.5, 3.0]}, index=["a", "b"])
    for _, run in frame.iterrows():
        key = str(run["run"])
        assert values(run, stats.loc[key]) == values(fields(run), stats.loc[key])
