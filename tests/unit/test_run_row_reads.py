"""run_row reads every field as `_read` does, one field at a time, on any record."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reporter.runfields import RECORD_KEYS, RUN_COLUMNS, RUN_FIELDS
from reporter.runrecord import _extra, _read, run_row


def _by_field(record: dict[str, Any], path: str, line: int | None, fmt: str) -> dict[str, Any]:
    """run_row as first written: `_read` per field."""
    row = {f.column: _read(f, record, fmt) for f in RUN_FIELDS if f.path is not None}
    row["group_explicit"] = record.get("group") is not None
    row["extra"] = _extra(record, RECORD_KEYS)
    row["source_path"] = path
    row["source_line"] = line
    return {column: row[column] for column in RUN_COLUMNS}


_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-5, 5)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.sampled_from(["inf", "", "unknown", "x", 0, 0.0, -0.0])
)
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner),
    max_leaves=6,
)
_paths = sorted({f.path for f in RUN_FIELDS if f.path is not None})


@st.composite
def _records(draw: st.DrawFn) -> dict[str, Any]:
    record: dict[str, Any] = {}
    for path in draw(st.lists(st.sampled_from(_paths), max_size=12)):
        node = record
        for key in path[:-1]:
            if not isinstance(node.get(key), dict) or draw(st.integers(0, 9)) == 0:
                node[key] = {} if draw(st.integers(0, 9)) else draw(_values)
            if not isinstance(node[key], dict):
                break
            node = node[key]
        else:
            node[path[-1]] = draw(_values)
    return record


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and (a is b or a == b)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(_records(), st.sampled_from(["benchreport", "vllm", ""]))
def test_run_row_reads_as_each_field_does(record: dict[str, Any], fmt: str) -> None:
    try:
        want = _by_field(record, "p.jsonl", 3, fmt)
    except TypeError as e:  # a value of another type than its field's (a list of a bool)
        try:
            run_row(record, "p.jsonl", 3, fmt)
        except TypeError as f:
            assert str(f) == str(e)
            return
        raise AssertionError("run_row read what _read could not") from e
    got = run_row(record, "p.jsonl", 3, fmt)
    assert list(got) == list(want)
    for column in want:
        assert _same(got[column], want[column]), (column, got[column], want[column])
