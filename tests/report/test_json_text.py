"""The JSON verdict's text is json.dumps's, byte for byte, though orjson writes it."""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from reporter import api
from reporter.render import json as json_render
from reporter.render.json import json_text, render_json

TRACES = Path(__file__).resolve().parents[2] / "traces"


def _stdlib(data: Any) -> str:
    """What render_json wrote before orjson: the reference."""
    return json.dumps(data, indent=2, ensure_ascii=False, sort_keys=False, allow_nan=False) + "\n"


def _outcome(write: Any, data: Any) -> tuple[str, str]:
    try:
        return "text", write(data)
    except Exception as error:  # the same refusal, with the same message
        return type(error).__name__, str(error)


def _same(data: Any) -> None:
    assert _outcome(json_text, data) == _outcome(_stdlib, data)


# floats of every magnitude: orjson spells those below 1e-4 otherwise than repr
_floats = st.floats(allow_nan=True, allow_infinity=True) | st.floats(
    min_value=-1e-3, max_value=1e-3
)
_leaves = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(2**64), max_value=2**64)
    | _floats
    | st.text()  # any code point but surrogates
    | st.text(st.characters(categories=["Cs", "Cc", "Zl", "Lo"]))  # lone surrogates, controls
)
_keys = st.text() | st.integers() | st.floats() | st.booleans() | st.none()
_documents = st.recursive(
    _leaves,
    lambda inner: (
        st.lists(inner, max_size=5)
        | st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(st.text(max_size=8), inner, max_size=5)
        | st.dictionaries(_keys, inner, max_size=3)
    ),
    max_leaves=40,
)


@settings(max_examples=500)
@given(_documents)
@example({"off": -7e-06, "zero": -0.0, "big": 1e16, "huge": 1.7976931348623157e308})
@example([5e-324, 1e-05, 2.5e-05, 9.999999999999999e-05, 1e-4, 1e-9, 1e-10, 123456789.0])
@example({"a": [], "b": {}, "c": [[], {}], "d": "é\x00\x1f\x7f\u2028\ud800"})
@example({"nan": math.nan})
@example({"inf": [math.inf]})
@example({1: "key not a str", None: 0})
@example({"int": 2**64, "tuple": (1, 2.5)})
@pytest.mark.slow
def test_the_text_is_json_dumps_for_any_document(document: Any) -> None:
    _same(document)


# any bit pattern, and a mantissa at every power of ten (subnormal to overflow)
_any_float = st.integers(min_value=0, max_value=2**64 - 1).map(
    lambda bits: struct.unpack("<d", struct.pack("<Q", bits))[0]
) | st.builds(
    lambda mantissa, exponent: mantissa * 10.0**exponent,
    st.floats(min_value=1, max_value=10),
    st.integers(min_value=-323, max_value=308),
)


@settings(max_examples=3000)
@given(_any_float)
@example(-0.0)
@example(9.999999999999999e-05)
@example(1e16)
@pytest.mark.slow
def test_every_float_is_written_as_its_repr(value: float) -> None:
    _same({"value": value, "list": [value, -value]})


def test_values_of_other_types_are_written_by_json() -> None:
    _same({"numpy": np.float64(0.5)})  # a float subclass
    _same({"set": {1}})  # json refuses it, orjson must not write it
    _same({"fragment": [__import__("orjson").Fragment(b"1")]})
    deep: list[Any] = []
    for _ in range(300):  # beyond orjson's nesting limit
        deep = [deep]
    _same(deep)


@pytest.mark.parametrize("trace", sorted(TRACES.glob("*.jsonl")), ids=lambda p: p.name)
def test_a_verdict_is_written_by_orjson_as_json_wrote_it(
    trace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    verdict = api.audit([trace])
    for series in (False, True):
        expected = _stdlib(verdict.to_dict(include_series=series))
        # no fallback to json: orjson writes the verdict
        monkeypatch.setattr(json_render, "json", None)
        assert render_json(verdict, include_series=series) == expected
        monkeypatch.undo()
