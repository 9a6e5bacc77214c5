"""table.derive_request_columns makes a large table's columns on two threads: the columns
are the ones made on one, bit for bit (NaN, infinities from times far apart, zero and
negative decode times, one-token rows)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from reporter import table
from tests.conftest import float_bits


def _frame(rows: int) -> pd.DataFrame:
    rng = np.random.default_rng(5)
    send = rng.uniform(0, 100, rows)
    first = send + rng.uniform(-0.5, 2, rows)
    end = first + rng.uniform(-0.5, 30, rows)
    first[::7] = np.nan
    end[::11] = 1e308
    send[::13] = -1e308
    end[::17] = first[::17]
    tokens = rng.integers(0, 300, rows)
    tokens[::5] = 1
    return pd.DataFrame(
        {
            "t_send": send,
            "t_first": first,
            "t_end": end,
            "output_tokens": tokens,
            "finish_reason": pd.Categorical(["stop", "length"] * (rows // 2)),
            "error": [None] * rows,
        }
    )


@pytest.mark.parametrize("rows", [2, 1000])
def test_columns_made_on_two_threads_are_the_serial_ones(
    rows: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    serial, threaded = _frame(rows), _frame(rows)
    monkeypatch.setattr(table, "PARALLEL_ROWS", rows + 1)
    table.derive_request_columns(serial)
    monkeypatch.setattr(table, "PARALLEL_ROWS", 0)
    table.derive_request_columns(threaded)
    assert list(threaded.columns) == list(serial.columns)
    for name in ("ttft", "e2e", "decode_s", "decode_tps"):
        assert float_bits(threaded[name].to_numpy()) == float_bits(serial[name].to_numpy()), name
    assert (threaded["ok"] == serial["ok"]).all()
    assert np.isnan(serial["decode_tps"].to_numpy()).any()
