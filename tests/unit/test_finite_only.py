"""finite_only, which keeps most leaves without looking twice, is its plain definition."""

from __future__ import annotations

import math
from collections import OrderedDict
from typing import Any

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from reporter.model import INFINITE, finite_only
from reporter.types import VerdictKind


def _by_definition(value: Any, path: str, reasons: dict[str, str]) -> Any:
    """Every value looked at, every path spelled."""
    if isinstance(value, dict):
        return {
            k: _by_definition(v, f"{path}.{k}" if path else str(k), reasons)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [_by_definition(v, f"{path}[{i}]", reasons) for i, v in enumerate(value)]
    if isinstance(value, np.generic) and not isinstance(value, np.bool_):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        if not math.isnan(value):
            reasons[path] = INFINITE
        return None
    return value


_leaves = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=4)
    | st.sampled_from(list(VerdictKind))
    | st.floats().map(np.float64)
    | st.integers(min_value=-(2**31), max_value=2**31 - 1).map(np.int32)
    | st.booleans().map(np.bool_)
)
_values = st.recursive(
    _leaves,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(st.text(max_size=3) | st.integers(), inner, max_size=4)
        | st.dictionaries(st.text(max_size=3), inner, max_size=3).map(OrderedDict)
    ),
    max_leaves=30,
)


def _typed(value: Any) -> Any:
    """`value` with each leaf beside its type: equal values of other types differ here."""
    if isinstance(value, dict):
        return (type(value), [(k, _typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return (list, [_typed(v) for v in value])
    return (type(value), repr(value))


@settings(max_examples=400)
@given(_values)
@example(
    {"runs": [{"wall_s": math.inf, "tps": -math.inf, "x": math.nan, "n": np.float64(-np.inf)}]}
)
@pytest.mark.slow
def test_finite_only_is_its_definition(value: Any) -> None:
    got: dict[str, str] = {}
    expected: dict[str, str] = {}
    assert _typed(finite_only(value, "", got)) == _typed(_by_definition(value, "", expected))
    assert got == expected
