"""AuditData reads each run's figures as `stats.to_dict("index")` gives them: the same values
of the same types, read a column at a time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reporter import api
from reporter.auditdata import AuditData

FLOATS = st.sampled_from([0.0, -0.0, 1.5, np.nan, np.inf, -1e300])
OBJECTS = st.sampled_from([None, "text", 3, 2.5, np.float64(-0.0), np.int64(7), np.nan, pd.NA])


def _same(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return np.array([a]).tobytes() == np.array([b]).tobytes()
    return a is b or a == b


@settings(max_examples=60, deadline=None)
@pytest.mark.slow
@given(
    rows=st.lists(
        st.tuples(FLOATS, st.integers(-5, 5), st.booleans(), OBJECTS, st.sampled_from(["a", None])),
        max_size=6,
    )
)
def test_each_runs_figures_are_to_dicts(rows: list[tuple[Any, ...]]) -> None:
    stats = pd.DataFrame(
        {
            "f": pd.Series([r[0] for r in rows], dtype="float64"),
            "i": pd.Series([r[1] for r in rows], dtype="int64"),
            "b": pd.Series([r[2] for r in rows], dtype="bool"),
            "o": pd.Series([r[3] for r in rows], dtype=object),
            "s": pd.Series([r[4] for r in rows], dtype="str"),
            "c": pd.Series([r[4] for r in rows], dtype="category"),
        },
        index=pd.Index([f"run{i}" for i in range(len(rows))], dtype="str"),
    )
    got = AuditData(None, stats)._stats_rows  # type: ignore[arg-type]
    expected = {
        str(k): {str(c): x for c, x in v.items()} for k, v in stats.to_dict("index").items()
    }
    assert list(got) == list(expected)
    for run, figures in expected.items():
        assert list(got[run]) == list(figures)
        assert all(_same(got[run][c], x) for c, x in figures.items()), (got[run], figures)


def test_run_columns_taken_when_read_are_the_tables() -> None:
    trace = Path(__file__).resolve().parents[2] / "traces" / "honest-batched.jsonl"
    data = api.analyse(api.load([trace]))
    eager = {str(c): data.runs[c].to_numpy() for c in data.runs.columns}
    for name, values in eager.items():
        got = data._run_columns[name]
        assert got.dtype == values.dtype and len(got) == len(values)
        assert all(_same(a, b) or (a != a and b != b) for a, b in zip(got, values, strict=True))
    with pytest.raises(KeyError):
        data._run_columns["no such field"]
