"""The per-run reductions as SQL (reporter/sql/run_aggregates.sql), run here on DuckDB.

The same file runs on a distributed engine over the Parquet (README, "Beyond one machine").
DuckDB is an optional dependency (the `sql` extra; the dev extras include it).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd

from reporter.types import PathLike

SQL_FILE = "run_aggregates.sql"


def run_aggregates_sql() -> str:
    """The text of the shipped SQL file."""
    return (resources.files("reporter") / "sql" / SQL_FILE).read_text(encoding="utf-8")


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def duckdb_aggregates(path: PathLike, connection: Any = None) -> pd.DataFrame:
    """The SQL's figures, one row per run (indexed by run id), over a native Parquet file or
    a folder of them."""
    import duckdb

    p = Path(path)
    pattern = str(p / "**" / "*.parquet") if p.is_dir() else str(p)
    con = connection if connection is not None else duckdb.connect()
    con.execute(
        "CREATE OR REPLACE TEMP VIEW requests AS SELECT * FROM read_parquet("
        f"{_quoted(pattern)}, union_by_name = true) WHERE kind = 'request'"
    )
    frame: pd.DataFrame = con.execute(run_aggregates_sql()).df()
    frame["run"] = frame["run"].astype(str)
    return frame.set_index("run")
