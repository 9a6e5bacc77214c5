"""The arrays AuditData sorts once per run are shared by every reader, and read-only."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from reporter import api

TRACE = Path(__file__).resolve().parents[2] / "traces" / "honest-batched.jsonl"


def test_a_runs_sorted_ends_and_send_order_are_shared_and_cannot_be_written() -> None:
    data = api.analyse(api.load([TRACE]))
    run = str(data.tables.runs.index[0])
    ends, order = data.sorted_ends(run), data.send_order(run)
    assert data.sorted_ends(run) is ends and data.send_order(run) is order  # made once
    assert np.all(np.diff(ends[~np.isnan(ends)]) >= 0)
    send = np.asarray(data.values_of(run, "t_send"), dtype="float64")
    assert np.all(np.diff(send[order]) >= 0)
    with pytest.raises(ValueError, match="read-only"):
        ends[0] = 0.0
    with pytest.raises(ValueError, match="read-only"):
        order[0] = 0
