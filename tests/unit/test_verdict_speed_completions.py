"""The completions chart reads each end time from t0 only where a point is drawn: the same
points, figures and overflow warnings as the whole of `ends - t0` gave."""

from __future__ import annotations

import warnings
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reporter import series
from reporter.model import MAX_COMPLETIONS, Completions

#: ordinary times, huge ones whose differences overflow, infinities, signed zeros
ENDS = st.one_of(
    st.floats(-1e3, 1e3),
    st.sampled_from([0.0, -0.0, 1.7e308, -1.7e308, 1e308, -1e308, np.inf, -np.inf]),
    st.floats(allow_nan=False, allow_infinity=True),
)
STARTS = st.one_of(st.sampled_from([0.0, -0.0, 1e308, -1e308, 1.5]), st.floats(-1e308, 1e308))


def _data() -> Any:
    """What the chart reads of the audit: the run's group, none with a run at N=1."""
    runs = pd.DataFrame({"run": ["r"], "group": ["g"]}).set_index("run", drop=False)
    return SimpleNamespace(runs=runs)


def _former(ends: np.ndarray, t0: float) -> Completions:
    """The chart as it was made: every end moved by t0, then the points drawn."""
    done = ends - t0
    pick = series.even_sample(len(done), MAX_COMPLETIONS)
    times = done[pick].tolist()
    points = [{"t": t, "done": n} for t, n in zip(times, (pick + 1).tolist(), strict=True)]
    return Completions(len(done), points, float(done[0]), None)


def _outcome(how: Any) -> tuple[Any, list[tuple[type, str]]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        made = how()
    figures = [(p["t"], p["done"]) for p in made.points]
    bits = np.asarray([t for t, _ in figures] + [made.single_s], dtype=np.float64).tobytes()
    said = [(w.category, str(w.message)) for w in caught]
    return (made.total, [n for _, n in figures], bits, made.single_run), said


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(ENDS, min_size=1, max_size=1500), STARTS)
def test_points_drawn_are_the_whole_differences(values: list[float], t0: float) -> None:
    ends = np.sort(np.asarray(values, dtype=np.float64), kind="stable")
    data = _data()
    found = _outcome(lambda: series.completions(data, "r", ends, t0, {}))
    assert found == _outcome(lambda: _former(ends, t0))


@pytest.mark.parametrize(
    ("middle", "last"), [(1e308, 1.0), (1e308, np.inf), (-1e308, np.inf), (5.0, 1e308)]
)
def test_an_overflow_between_the_points_drawn_warns_as_before(middle: float, last: float) -> None:
    """Runs longer than the points drawn, with one end far out between two points."""
    ends = np.linspace(0.0, 10.0, 5 * MAX_COMPLETIONS + 3)
    ends[7] = middle
    ends[-1] = last
    ends = np.sort(ends, kind="stable")
    data = _data()
    for t0 in (-1e308, 1e308, 0.0):
        found = _outcome(lambda t0=t0: series.completions(data, "r", ends, t0, {}))
        assert found == _outcome(lambda t0=t0: _former(ends, t0))
