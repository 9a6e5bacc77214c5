"""Impossible request times (reporter.ingest.integrity.time_order)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from reporter.ingest.integrity import _span, time_order
from reporter.table import normalize_requests


def _requests(send: list[float], first: list[float], end: list[float]) -> pd.DataFrame:
    n = len(send)
    frame = pd.DataFrame(
        {"run": ["a"] * n, "id": [str(i) for i in range(n)], "t_send": send, "t_first": first}
    )
    frame["t_end"] = end
    frame["source_path"] = "f.jsonl"
    frame["source_line"] = np.arange(1, n + 1)
    return normalize_requests(frame)


def _reasons(requests: pd.DataFrame) -> list[tuple[str, list[int]]]:
    return [(f.reason, np.flatnonzero(f.mask).tolist()) for f in time_order(requests)]


def test_span_ignores_nan() -> None:
    assert _span(np.array([np.nan, 3.0, -1.0])).tolist() == [-1.0, 3.0]
    assert np.isnan(_span(np.array([np.nan]))).all()
    assert np.isnan(_span(np.zeros(0))).all()


def test_ordinary_times_pass() -> None:
    assert _reasons(_requests([0.0, 1.0, np.nan], [0.5, 1.5, 2.0], [1.0, 2.0, 3.0])) == []


def test_infinite_and_far_apart_times() -> None:
    requests = _requests([0.0, -1e308, 0.0, 1.0], [np.inf, 1e308, 0.5, 1.5], [1.0, 1e308, 1.0, 2.0])
    assert _reasons(requests) == [
        ("time not finite", [0]),  # counted once, under its first failed check
        ("times too far apart", [1]),
    ]
