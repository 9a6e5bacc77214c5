"""The pointers of an object array read in place are the ones its copy holds, and a column of
chunk times is all None exactly when every row is None."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from reporter import latency

ITEMS = st.one_of(st.none(), st.integers(), st.floats(), st.text(max_size=3), st.just([1.0]))


@given(st.lists(ITEMS, max_size=30), st.integers(1, 3), st.integers(0, 2))
def test_pointers_in_place_are_the_copys(items: list[Any], step: int, start: int) -> None:
    objects = np.empty(len(items), dtype=object)
    objects[:] = items
    for array in (objects, objects[start::step], objects[::-1]):
        found = latency._pointers(array)
        assert found.dtype == np.uintp and not found.flags.writeable
        assert found.tobytes() == np.frombuffer(array.tobytes(), dtype=np.uintp).tobytes()


@given(st.lists(ITEMS, max_size=30))
def test_all_none_is_every_row_none(items: list[Any]) -> None:
    column = pd.Series(items, dtype=object)
    assert latency._all_none(column) == all(item is None for item in items)


def test_a_column_of_a_block_of_several() -> None:
    """A column of a frame whose object columns pandas keeps in one two-dimensional block."""
    frame = pd.DataFrame({"a": [None, None, None], "b": [None, "x", None]}, dtype=object)
    assert latency._all_none(frame["a"])
    assert not latency._all_none(frame["b"])
    rows = frame.iloc[::2]
    assert latency._all_none(rows["a"]) and latency._all_none(rows["b"])
