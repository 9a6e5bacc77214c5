"""The drawing order, with the caller's sort by send time or without, is the stable sort by
send, first-token and end time, then line (NaN last), and leaves the caller's sort as it was."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reporter.series import _drawing_order

#: coarse times: many ties (requests sent together), missing ones, signed zeros
TIMES = st.sampled_from([0.0, -0.0, 1.0, 1.5, 2.0, np.nan, np.inf])


@settings(max_examples=400, deadline=None)
@pytest.mark.slow
@given(
    st.lists(st.tuples(TIMES, TIMES, TIMES, st.integers(1, 4)), min_size=1, max_size=60),
    st.booleans(),
)
def test_drawing_order_is_the_stable_sort(
    rows: list[tuple[float, float, float, int]], sorted_first: bool
) -> None:
    frame = pd.DataFrame(rows, columns=["t_send", "t_first", "t_end", "source_line"])
    expected = frame.sort_values(
        ["t_send", "t_first", "t_end", "source_line"], kind="stable"
    ).index.to_numpy()
    send, first, end, line = (frame[c].to_numpy() for c in frame.columns)
    by_send = np.argsort(send, kind="stable") if sorted_first else None
    kept = None if by_send is None else by_send.copy()
    if by_send is not None:
        by_send.flags.writeable = False  # as the audit shares it
    order = _drawing_order(send, first, end, line, by_send)
    assert order.tolist() == expected.tolist()
    if by_send is not None:
        assert kept is not None and by_send.tolist() == kept.tolist()
