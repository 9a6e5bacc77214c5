"""The derived request columns (reporter.table.derive_request_columns)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from reporter.table import UNFINISHED, normalize_requests, one_of


def test_one_of_by_codes_matches_isin() -> None:
    reasons = ["stop", "error", None, "length", "abort", "cancelled", "too_short", "time_limit"]
    categorical = pd.Series(pd.Categorical(reasons))
    plain = pd.Series(reasons, dtype=object)
    expected = np.array([False, True, False, False, True, True, True, True])
    assert (one_of(categorical, UNFINISHED) == expected).all()
    assert (one_of(plain, UNFINISHED) == expected).all()


def test_derived_columns() -> None:
    frame = pd.DataFrame(
        {
            "run": ["a", "a", "a", "a"],
            "id": ["1", "2", "3", "4"],
            "t_send": [0.0, 1.0, 2.0, np.nan],
            "t_first": [0.5, 1.0, 2.5, 1.0],
            "t_end": [2.5, 1.0, 1e308, 2.0],
            "output_tokens": [5, 1, 3, 4],
            "finish_reason": ["stop", "length", "error", None],
            "error": [None, None, None, "boom"],
        }
    )
    req = normalize_requests(frame)
    assert req["ttft"].tolist()[:3] == [0.5, 0.0, 0.5]
    assert np.isnan(req["ttft"].iloc[3])
    assert req["decode_s"].tolist() == [2.0, 0.0, 1e308 - 2.5, 1.0]
    # one token, or no decode time: no rate
    assert req["decode_tps"].iloc[0] == 2.5
    assert np.isnan(req["decode_tps"].iloc[1])
    assert req["decode_tps"].iloc[3] == 4.0
    assert req["ok"].tolist() == [True, True, False, False]
    assert req["ok"].dtype == bool
    assert req["decode_tps"].dtype == np.float64
