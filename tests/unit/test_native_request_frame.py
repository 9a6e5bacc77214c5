"""native._request_frame converts a large table's columns on two threads: the frame is the
one the columns make converted one after another, column for column and dtype for dtype."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pytest

from reporter.adapters import native


def _table(rows: int) -> pa.Table:
    return pa.table(
        {
            "run": pa.array([f"r{i // 3}" for i in range(rows)]),
            "id": pa.array([f"q{i}" for i in range(rows)]),
            "t_send": pa.array([0.5 * i for i in range(rows)]),
            "output_tokens": pa.array(list(range(rows)), pa.int64()),
            "finish_reason": pa.array(["stop", "length"] * (rows // 2) + ["stop"] * (rows % 2)),
            "token_times": pa.array([[0.1 * i, 0.2 * i] for i in range(rows)]),
            "n_chunks": pa.nulls(rows),
            "error": pa.nulls(rows),
        }
    )


@pytest.mark.parametrize("rows", [0, 1, 7, 1000])
def test_threaded_conversion_is_the_serial_one(rows: int, monkeypatch: pytest.MonkeyPatch) -> None:
    table = _table(rows)
    monkeypatch.setattr(native, "PARALLEL_ROWS", rows + 1)
    serial = native._request_frame(table)
    monkeypatch.setattr(native, "PARALLEL_ROWS", 0)
    threaded = native._request_frame(table)
    assert list(threaded.columns) == list(table.column_names)
    pd.testing.assert_frame_equal(threaded, serial, check_exact=True)
