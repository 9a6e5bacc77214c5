"""reporter.rules.base: the finish reasons of request rows, read as arrays."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from reporter.rules.base import finish_reason_is, finish_reason_known

REASONS = ["stop", None, "length", "stop", "abort", None]


@pytest.mark.parametrize("dtype", ["category", "object", "str"])
def test_as_pandas_compares(dtype: str) -> None:
    rows = pd.DataFrame({"finish_reason": pd.Series(REASONS, dtype=dtype)})
    for reason in ("stop", "length", "abort", "error"):
        expected = (rows["finish_reason"] == reason).to_numpy(dtype=bool, na_value=False)
        assert finish_reason_is(rows, reason).tolist() == expected.tolist()
    known = rows["finish_reason"].notna().to_numpy(dtype=bool)
    assert finish_reason_known(rows).tolist() == known.tolist()


def test_a_reason_no_row_has() -> None:
    rows = pd.DataFrame({"finish_reason": pd.Categorical(["length", "length"])})
    assert finish_reason_is(rows, "stop").tolist() == [False, False]
    assert finish_reason_known(rows).tolist() == [True, True]


def test_no_rows() -> None:
    rows = pd.DataFrame({"finish_reason": pd.Categorical([])})
    assert finish_reason_is(rows, "stop").dtype == np.bool_
    assert len(finish_reason_is(rows, "stop")) == 0
    assert not finish_reason_known(rows).any()


def test_a_slice_of_the_rows() -> None:
    rows = pd.DataFrame({"finish_reason": pd.Categorical(REASONS)}).iloc[2:5]
    assert finish_reason_is(rows, "stop").tolist() == [False, True, False]
    assert finish_reason_known(rows).tolist() == [True, True, True]
