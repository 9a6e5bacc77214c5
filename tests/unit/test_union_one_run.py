"""The prefill window's union of one run's intervals is `union_length`'s, to the last bit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reporter.facts import union_of_one_run
from reporter.metrics import union_length

TIMES = st.one_of(
    st.sampled_from([0.0, -0.0, 1.0, 2.5, 1e300, -1e300, np.inf, -np.inf]),
    st.floats(allow_nan=False, allow_infinity=True, width=64),
    st.floats(-10, 10, allow_nan=False).map(lambda x: round(x, 1)),  # ties
)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(pairs=st.lists(st.tuples(TIMES, TIMES), min_size=1, max_size=40))
def test_the_union_of_one_run_is_union_lengths(pairs: list[tuple[float, float]]) -> None:
    start = np.array([a for a, _ in pairs], dtype="float64")
    end = np.array([b for _, b in pairs], dtype="float64")
    order = np.argsort(start, kind="stable")
    with np.errstate(invalid="ignore", over="ignore"):
        expected = float(union_length(np.zeros(len(start)), start, end, order).sum())
        got = union_of_one_run(start, end, order)
    assert np.array([got]).tobytes() == np.array([expected]).tobytes()


def test_no_interval_has_no_length() -> None:
    empty = np.zeros(0)
    assert union_of_one_run(empty, empty, np.zeros(0, dtype=np.intp)) == 0.0
