"""Bounds of whole-number request columns in bad_request_rows (reporter.ingest.validate)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from reporter.ingest.validate import bad_request_rows


def _frame(**columns: list[int]) -> pd.DataFrame:
    n = len(next(iter(columns.values())))
    base = {"run": pd.Categorical(["r"] * n), "id": [str(i) for i in range(n)]}
    return pd.DataFrame(base | {k: np.asarray(v, dtype=np.int64) for k, v in columns.items()})


def test_integer_columns_within_bounds() -> None:
    assert not bad_request_rows(_frame(prompt_tokens=[0, 5, 2**53])).any()


def test_integer_columns_out_of_bounds() -> None:
    frame = _frame(prompt_tokens=[3, -1, 2**53 + 2, -(2**53) - 2], t_send=[0, 1, 2, 3])
    assert bad_request_rows(frame).tolist() == [False, True, True, True]
    # 2^53 + 1 is 2^53 as a double: within bounds, as the file's other readers see it
    assert not bad_request_rows(_frame(output_tokens=[2**53 + 1])).any()


def test_integer_times_compared() -> None:
    frame = _frame(t_send=[5, 5], t_first=[6, 4], t_end=[7, 7])
    assert bad_request_rows(frame).tolist() == [False, True]


def test_finish_reason_categories() -> None:
    frame = _frame(prompt_tokens=[1, 1, 1])
    frame["finish_reason"] = pd.Categorical(["stop", None, "length"])
    assert not bad_request_rows(frame).any()
    frame["finish_reason"] = pd.Categorical(["stop", "weird", None])
    assert bad_request_rows(frame).tolist() == [False, True, False]
