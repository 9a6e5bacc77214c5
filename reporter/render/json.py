"""The machine verdict as JSON: sorted keys, fixed float formatting, byte-identical reruns."""

from __future__ import annotations

import json
import math
from typing import Any

import orjson

from reporter.model import Verdict, finite_leaf


def render_json(verdict: Verdict, *, include_series: bool = False) -> str:
    """Strict JSON: no NaN or Infinity (the verdict's dict has none; allow_nan=False says so).
    `include_series` adds the per-run chart data (schemas/verdict-2.schema.json, `series`).

    The text `json_text(verdict.to_dict(...))` gives, from one pass over the verdict's dict
    that nulls what is not finite and writes each float's text (`_written`), not a pass for
    each; on anything that pass does not write as they do, theirs is the answer."""
    raw = verdict.raw_dict(include_series=include_series)
    reasons: dict[str, str] = {}
    try:
        written = _written(raw, "", reasons)
        if reasons:
            written["null_reasons"] = reasons
        return orjson.dumps(written, option=orjson.OPT_INDENT_2).decode() + "\n"
    except Exception:  # whatever it is, the two passes say it as they did
        pass
    return json_text(verdict.to_dict(include_series=include_series))


def json_text(data: Any) -> str:
    """`data` as `json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False)` writes it,
    and a newline, byte for byte.

    orjson writes it (json indents in pure Python: 20× slower on a verdict with its series),
    with each float as the text json writes for it (orjson spells 1e-05 as 0.00001). What
    orjson might write otherwise or refuses is written by json, as before: a value of another
    type than dict, list, tuple, str, int, float, bool and None, a float that is not finite,
    a key that is not a str, an int beyond 64 bits, a lone surrogate, nesting beyond 255."""
    try:
        return orjson.dumps(_floats_as_text(data), option=orjson.OPT_INDENT_2).decode() + "\n"
    except (_NotPlain, orjson.JSONEncodeError, RecursionError):
        pass
    return json.dumps(data, indent=2, ensure_ascii=False, sort_keys=False, allow_nan=False) + "\n"


#: The leaves orjson writes as json does (tests/report/test_json_text.py holds it to that).
_AS_THEY_ARE = frozenset({str, int, bool, type(None)})


class _NotPlain(Exception):
    """A value orjson might write otherwise than json: json writes the document."""


def _written(value: Any, path: str, reasons: dict[str, str]) -> Any:
    """`_floats_as_text(finite_only(value, path, reasons))` in one pass (reporter.model): each
    float that is not finite None (the path of an infinite one in `reasons`), a numpy scalar
    its Python value, each finite float its text; raises _NotPlain where they would."""
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        for k, v in value.items():
            kind = type(v)
            if kind in _AS_THEY_ARE:
                out[k] = v
            elif kind is float and math.isfinite(v):
                out[k] = orjson.Fragment(float.__repr__(v))
            else:
                out[k] = _written(v, f"{path}.{k}" if path else str(k), reasons)
        return out
    if isinstance(value, list | tuple):
        items: list[Any] = []
        for i, v in enumerate(value):
            kind = type(v)
            if kind in _AS_THEY_ARE:
                items.append(v)
            elif kind is float and math.isfinite(v):
                items.append(orjson.Fragment(float.__repr__(v)))
            else:
                items.append(_written(v, f"{path}[{i}]", reasons))
        return items
    return _floats_as_text(finite_leaf(value, path, reasons))


def _floats_as_text(value: Any) -> Any:
    """`value` rebuilt with each float as the text json writes for it (its repr), which
    orjson writes as it is (orjson.Fragment); raises _NotPlain for a value of another type."""
    kind = type(value)
    if kind is dict:
        return {k: v if type(v) in _AS_THEY_ARE else _floats_as_text(v) for k, v in value.items()}
    if kind is list or kind is tuple:
        return [v if type(v) in _AS_THEY_ARE else _floats_as_text(v) for v in value]
    if kind is float and math.isfinite(value):
        return orjson.Fragment(float.__repr__(value))
    if kind in _AS_THEY_ARE:
        return value
    raise _NotPlain(kind.__name__)
