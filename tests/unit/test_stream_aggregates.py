"""Per-run figures as streaming reductions and as SQL on DuckDB give the in-memory figures
(reporter.metrics): exact ones to 1e-9, sketched medians within the sketch's stated bound."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reporter import api, metrics
from reporter.api import convert_file
from reporter.stream.aggregates import EXACT, SKETCHED, aggregate
from reporter.stream.sketch import RELATIVE_ACCURACY, QuantileSketch
from reporter.stream.sql import duckdb_aggregates, run_aggregates_sql
from tests.adapters.conftest import REAL
from tests.adapters.test_detect import REAL_FILES

TRACES = Path(__file__).resolve().parents[2] / "traces"
SHIPPED = sorted(p.name for p in TRACES.glob("*.jsonl"))
#: SQL on two shipped traces in the default lane, on all of them in the slow one.
SQL_SHIPPED = [
    pytest.param(
        n, marks=() if n in ("case-b-forced.jsonl", "honest-batched.jsonl") else pytest.mark.slow
    )
    for n in SHIPPED
]
#: Figures compared with reporter.metrics.run_stats (the others are intermediate sums).
COMPARED = (
    "requests", "ok", "output_tokens", "t0", "t1", "sum_reported_tps", "out_min", "out_max",
    "out_mean", "send_spread_s", "prompt_tokens_total", "prompt_tokens_mean",
)  # fmt: skip


@pytest.fixture
def real() -> Any:
    """`real("vllm/x.json")`: a real file, read in place (skipped when the folder is absent)."""
    if not REAL.is_dir():
        pytest.skip("../shared/real-traces is absent")
    return lambda name: REAL / name


def in_memory(path: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The request rows and the in-memory figures from the rows alone (no tool summary)."""
    tables = api.load([path])
    tables.runs["summary"] = None
    return tables.requests, metrics.run_stats(tables)


def assert_same(expected: pd.DataFrame, got: pd.DataFrame, columns: tuple[str, ...]) -> None:
    __tracebackhide__ = True
    runs = list(got.index)
    assert set(runs) <= set(expected.index)
    for column in columns:
        a = expected.loc[runs, column].to_numpy(dtype="float64")
        b = got.loc[runs, column].to_numpy(dtype="float64")
        assert np.allclose(a, b, rtol=1e-9, atol=0, equal_nan=True), (column, a, b)


def assert_within_sketch(expected: pd.DataFrame, got: pd.DataFrame) -> None:
    __tracebackhide__ = True
    runs = list(got.index)
    for column in SKETCHED:
        a = expected.loc[runs, column].to_numpy(dtype="float64")
        b = got.loc[runs, column].to_numpy(dtype="float64")
        assert (np.isnan(a) == np.isnan(b)).all(), column
        known = ~np.isnan(a)
        assert (np.abs(b[known] - a[known]) <= RELATIVE_ACCURACY * np.abs(a[known])).all(), (
            column,
            a,
            b,
        )


@pytest.mark.parametrize("name", SHIPPED)
def test_streamed_in_batches_of_three_rows(name):
    requests, stats = in_memory(TRACES / name)
    batches = (requests.iloc[i : i + 3] for i in range(0, len(requests), 3))
    got = aggregate(batches).table()
    assert list(got.columns) == [*EXACT, *SKETCHED]
    assert_same(stats, got, COMPARED)
    assert_within_sketch(stats, got)


def test_sketched_medians_are_not_just_copied():
    """On a trace whose medians fall between buckets, the sketch's figure differs from the
    exact one (so the comparison above has something to compare) but stays in the bound."""
    requests, stats = in_memory(TRACES / "case-b-forced.jsonl")
    got = aggregate([requests]).table()
    differs = got["median_e2e_s"] != stats.loc[got.index, "median_e2e_s"]
    assert differs.any()


def _sql_round_trip(path: Path, tmp_path: Path) -> None:
    __tracebackhide__ = True
    _, stats = in_memory(path)
    out = tmp_path / "trace.parquet"
    convert_file(path, str(out))
    got = duckdb_aggregates(out)
    assert_same(stats, got, (*COMPARED, *SKETCHED, "overlap"))
    wall = stats.loc[got.index, "wall_s"] > 0
    assert_same(stats[wall.reindex(stats.index, fill_value=False)], got[wall], ("in_flight",))


@pytest.mark.parametrize("name", SQL_SHIPPED)
def test_sql_on_duckdb_gives_the_in_memory_figures(tmp_path, name):
    _sql_round_trip(TRACES / name, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(REAL_FILES))
def test_sql_on_real_files(real, tmp_path, name):
    _sql_round_trip(real(name), tmp_path)


def test_sql_reads_a_folder_of_parquet(tmp_path):
    import pyarrow.parquet as pq

    out = tmp_path / "trace.parquet"
    convert_file(TRACES / "honest-batched.jsonl", str(out))
    table = pq.read_table(out)
    (tmp_path / "parts" / "day=1").mkdir(parents=True)
    pq.write_table(table.slice(0, 20), tmp_path / "parts" / "a.parquet")
    pq.write_table(table.slice(20), tmp_path / "parts" / "day=1" / "b.parquet")
    assert_same(duckdb_aggregates(out), duckdb_aggregates(tmp_path / "parts"), COMPARED)


def test_sql_file_ships_in_the_package():
    assert "GROUP BY run" in run_aggregates_sql()


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(st.just(0.0), st.floats(1e-6, 1e6, allow_nan=False)), min_size=1, max_size=200
    ),
    st.sampled_from([0.0, 0.1, 0.5, 0.9, 0.99, 1.0]),
)
def test_sketch_quantile_is_within_its_relative_bound(values, q):
    sketch = QuantileSketch()
    half = len(values) // 2
    sketch.add(np.asarray(values[:half]))  # two batches, merged
    other = QuantileSketch()
    other.add(np.asarray(values[half:]))
    sketch.merge(other)
    exact = sorted(values)[int(np.floor(q * (len(values) - 1)))]
    assert abs(sketch.quantile(q) - exact) <= RELATIVE_ACCURACY * exact


def test_sketch_refuses_negative_values():
    with pytest.raises(ValueError, match="≥ 0"):
        QuantileSketch().add(np.asarray([1.0, -2.0]))
