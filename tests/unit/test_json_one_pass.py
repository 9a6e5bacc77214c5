"""The verdict's dict written in one pass (nulls and float texts at once) is what nulling it
(finite_only) and then writing its floats' texts gave, bit for bit, and fails where that did."""

from __future__ import annotations

from typing import Any

import numpy as np
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reporter.model import finite_only
from reporter.render.json import _floats_as_text, _NotPlain, _written

LEAVES = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, float("inf"), float("-inf"), float("nan"), 1e-05, 1e16]),
    st.integers(),
    st.integers(min_value=2**64, max_value=2**70),
    st.booleans(),
    st.none(),
    st.text(max_size=5),
    st.floats(allow_nan=True, allow_infinity=True).map(np.float64),
    st.floats(width=32, allow_nan=True, allow_infinity=True).map(np.float32),
    st.integers(-(2**40), 2**40).map(np.int64),
    st.booleans().map(np.bool_),
)
KEYS = st.one_of(st.text(max_size=4), st.integers(0, 3))
TREES = st.recursive(
    LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(KEYS, inner, max_size=4),
    ),
    max_leaves=30,
)


def _outcome(how: Any, tree: Any) -> tuple[str, Any]:
    """What writing `tree` gives: its JSON and the null reasons, or that it is not plain."""
    reasons: dict[str, str] = {}
    try:
        written = how(tree, reasons)
    except _NotPlain:
        return "not plain", None
    try:
        text = orjson.dumps(written, option=orjson.OPT_INDENT_2)
    except orjson.JSONEncodeError:
        return "refused", list(reasons.items())
    return "text", (text, list(reasons.items()))


def _two_passes(tree: Any, reasons: dict[str, str]) -> Any:
    return _floats_as_text(finite_only(tree, "", reasons))


def _one_pass(tree: Any, reasons: dict[str, str]) -> Any:
    return _written(tree, "", reasons)


@pytest.mark.slow
@settings(max_examples=600, deadline=None)
@given(st.dictionaries(st.text(max_size=4), TREES, max_size=5))
def test_one_pass_is_the_two(tree: dict[str, Any]) -> None:
    with np.errstate(all="ignore"):
        assert _outcome(_one_pass, tree) == _outcome(_two_passes, tree)
