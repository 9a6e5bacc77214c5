"""Validation of native records: column-wise for the bulk, jsonschema to word each failure.

A jsonschema call costs ~140 µs a record, so the million request records of a big trace are
checked column by column (numpy), and only the records that fail go through jsonschema, whose
errors give the exact wording. Run, claim, probe and log records are few: each is checked whole.
"""

from __future__ import annotations

import itertools
import json
import math
from functools import cache
from typing import Any

import jsonschema
import numpy as np
import pandas as pd
import pyarrow as pa

from reporter.resources import schemas_dir
from reporter.values import MAX_INT64, finite_number

SCHEMA_FILE = "benchreport-1.schema.json"
SCHEMA_NAME = "benchreport/1"
KINDS = ("run", "request", "claim", "probe", "log", "run_end")

#: Request fields: (kind of value, minimum or None).
_NUMBER_FIELDS: dict[str, tuple[str, float | None]] = {
    "t_send": ("number", None),
    "t_first": ("number", None),
    "t_end": ("number", None),
    "prompt_tokens": ("integer", 0),
    "output_tokens": ("integer", 0),
    "reported_tps": ("number", 0),
    "n_chunks": ("integer", 0),
    "ttft": ("number", 0),
    "e2e": ("number", 0),
}
_STRING_FIELDS = ("prompt_sha256", "error")
#: The number fields compared with each other (and with the chunk times).
_TIME_FIELDS = ("t_send", "t_first", "t_end")
_ID_FIELDS = ("run", "id")
FINISH_REASONS = ("length", "stop", "error", "abort", "cancelled", "time_limit", "too_short")
#: Whole numbers above this lose units in a double and overflow numpy's and orjson's integers.
MAX_WHOLE = 2**53


@cache
def schema() -> dict[str, Any]:
    with (schemas_dir() / SCHEMA_FILE).open(encoding="utf-8") as f:
        loaded: dict[str, Any] = json.load(f)
    return loaded


@cache
def validator() -> jsonschema.protocols.Validator:
    cls = jsonschema.validators.validator_for(schema())
    return cls(schema())


def _type_words(types: Any) -> str:
    words = {
        "number": "a number",
        "integer": "a whole number",
        "string": "a string",
        "boolean": "true or false",
        "array": "a list",
        "object": "an object",
        "null": "null",
    }
    if isinstance(types, str):
        types = [types]
    return " or ".join(words.get(t, t) for t in types)


def _field(error: jsonschema.ValidationError) -> str:
    parts = [str(p) for p in error.absolute_path]
    return ".".join(parts) if parts else "the record"


def word_error(error: jsonschema.ValidationError) -> tuple[str, str]:
    """(what is wrong, what was expected) for one jsonschema error, with the field and value."""
    name = _field(error)
    where = f"(schema {SCHEMA_NAME}, {error.json_path})"
    value = error.instance
    kw = error.validator
    arg: Any = error.validator_value
    shown = json.dumps(value, ensure_ascii=False, default=str)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    if kw == "required":
        missing = error.message.split("'")[1] if "'" in error.message else "?"
        target = f'"{missing}"' if name == "the record" else f'"{name}.{missing}"'
        return f"{target} is missing", f"a {target} field {where}"
    if kw == "type":
        return f'"{name}" is {shown}', f"{_type_words(arg)} {where}"
    if kw in ("enum", "const"):
        options = list(arg) if kw == "enum" else [arg]
        listed = ", ".join(json.dumps(o) for o in options)
        if name == "kind":
            return f'"kind" is {shown}', f"one of {listed}"
        return f'"{name}" is {shown}', f"one of {listed} {where}"
    if kw in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
        sign = {"minimum": "≥", "exclusiveMinimum": ">", "maximum": "≤", "exclusiveMaximum": "<"}
        return f'"{name}" is {shown}', f"a number {sign[kw]} {arg} {where}"
    if kw in ("minItems", "maxItems"):
        count = len(value) if isinstance(value, list) else 0
        return f'"{name}" has {count} items', f"{kw} {arg} {where}"
    return f'"{name}": {error.message}', f"a value matching the schema {where}"


@cache
def _integer_fields() -> frozenset[str]:
    """Names of the fields the schema types as whole numbers, anywhere in a record."""
    names: set[str] = set()
    stack: list[Any] = [schema()]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, sub in (node.get("properties") or {}).items():
                types = sub.get("type") if isinstance(sub, dict) else None
                if types == "integer" or (isinstance(types, list) and "integer" in types):
                    names.add(key)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return frozenset(names)


def _nonfinite(record: Any, prefix: str = "") -> list[tuple[str, str]]:
    """NaN and infinities pass jsonschema's number checks; they are never valid here."""
    found: list[tuple[str, str]] = []
    items = (
        record.items()
        if isinstance(record, dict)
        else enumerate(record)
        if isinstance(record, list)
        else []
    )
    for key, value in items:
        name = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, float) and not math.isfinite(value):
            # an integer too long for a double was read as one: inf
            found.append((f'"{name}" is {value}', "a finite number (within ±1.8e308)"))
        elif (
            isinstance(value, int | float)
            and not isinstance(value, bool)
            and abs(value) > MAX_INT64
            and (isinstance(value, int) or str(key) in _integer_fields())
        ):
            # beyond what numpy and the JSON writer of `convert` hold (orjson reads a whole
            # number above 2^64 as a float, so the schema's integer fields are checked too)
            found.append((f'"{name}" is {value:g}', "a whole number within ±(2^63 − 1)"))
        elif isinstance(value, dict | list):
            found.extend(_nonfinite(value, name))
    return found


def _cross_field(record: dict[str, Any]) -> list[tuple[str, str]]:
    """Constraints between fields that a schema cannot state."""
    found: list[tuple[str, str]] = []

    def num(key: str) -> float | None:
        return finite_number(record.get(key))

    for key, (kind, _) in _NUMBER_FIELDS.items():
        v = num(key)
        if kind == "integer" and v is not None and abs(v) > MAX_WHOLE:
            found.append((f'"{key}" is {v:g}', "a whole number ≤ 2^53"))
    send, first, end = num("t_send"), num("t_first"), num("t_end")
    if send is not None and first is not None and first < send:
        found.append((f'"t_first" {first:g} is before "t_send" {send:g}', "t_first ≥ t_send"))
    if first is not None and end is not None and end < first:
        found.append((f'"t_end" {end:g} is before "t_first" {first:g}', "t_end ≥ t_first"))
    elif send is not None and end is not None and end < send:
        found.append((f'"t_end" {end:g} is before "t_send" {send:g}', "t_end ≥ t_send"))
    times = record.get("token_times")
    if isinstance(times, list) and all(
        isinstance(t, int | float) and not isinstance(t, bool) for t in times
    ):
        if any(b < a for a, b in itertools.pairwise(times)):
            found.append(('"token_times" go backwards', "non-decreasing times"))
        if times and send is not None and times[0] < send:
            found.append(('"token_times" start before "t_send"', 'times ≥ "t_send"'))
    return found


def record_problems(record: Any) -> list[tuple[str, str]]:
    """Every problem of one parsed record, worded; empty when it is valid."""
    if not isinstance(record, dict):
        kind = type(record).__name__
        return [(f"the line holds a JSON {kind}", 'a JSON object with a "kind"')]
    if "kind" not in record:
        return [('"kind" is missing', 'a "kind" field: one of ' + ", ".join(KINDS))]
    errors = sorted(validator().iter_errors(record), key=lambda e: list(e.absolute_path))
    found = [word_error(e) for e in errors if e.validator not in ("if", "allOf")]
    found.extend(_nonfinite(record))
    if record.get("kind") == "request":
        found.extend(_cross_field(record))
    return found


def _is_number(series: pd.Series) -> np.ndarray:
    """True where the value is a JSON number or null (bools are not numbers)."""
    if series.dtype.kind in "fiu":
        return np.ones(len(series), dtype=bool)
    if series.dtype.kind == "b":
        return np.zeros(len(series), dtype=bool)
    values = series.to_numpy(dtype=object)
    return np.fromiter(
        (v is None or (isinstance(v, int | float) and not isinstance(v, bool)) for v in values),
        dtype=bool,
        count=len(values),
    )


def _is_string(series: pd.Series) -> np.ndarray:
    if isinstance(series.dtype, pd.CategoricalDtype) or (
        pd.api.types.is_string_dtype(series.dtype) and series.dtype != object
    ):
        return np.ones(len(series), dtype=bool)
    values = series.to_numpy(dtype=object)
    nulls = np.full(len(values), None, dtype=object)
    absent: np.ndarray = np.asarray(np.equal(values, nulls), dtype=bool)
    if absent.all():  # a column of nulls (no error on any request): no loop over it
        return absent
    return np.fromiter(
        (v is None or isinstance(v, str) for v in values), dtype=bool, count=len(values)
    )


def _as_float(series: pd.Series, ok: np.ndarray) -> np.ndarray:
    if series.dtype.kind in "fiu":
        return series.to_numpy(dtype="float64", na_value=np.nan)
    values = series.to_numpy(dtype=object)
    out = np.full(len(values), np.nan)
    idx = np.flatnonzero(ok)
    out[idx] = [np.nan if values[i] is None else float(values[i]) for i in idx]
    return out


def bad_request_rows(frame: pd.DataFrame) -> np.ndarray:
    """Column-wise checks of request records; True for every row that fails one.

    Returns a mask; the failing rows are then worded one by one by `record_problems`.
    """
    n = len(frame)
    bad = np.zeros(n, dtype=bool)
    floats: dict[str, np.ndarray] = {}
    for name in _ID_FIELDS:
        if name not in frame:
            return np.ones(n, dtype=bool)
        col = frame[name]
        if col.dtype.kind in "iu" or (
            isinstance(col.dtype, pd.CategoricalDtype)
            and all(
                isinstance(c, str | int) and not isinstance(c, bool) for c in col.cat.categories
            )
        ):
            bad |= ~pd.notna(col).to_numpy() if col.dtype.kind not in "iu" else False
            continue
        present = pd.notna(col).to_numpy()
        bad |= ~present
        if col.dtype.kind == "f":
            bad |= present & (np.mod(col.to_numpy(na_value=np.nan), 1) != 0)
        elif not (pd.api.types.is_string_dtype(col.dtype) and col.dtype != object):
            values = col.to_numpy(dtype=object)
            ok = np.fromiter(
                (
                    isinstance(v, str) or (isinstance(v, int) and not isinstance(v, bool))
                    for v in values
                ),
                dtype=bool,
                count=n,
            )
            bad |= ~ok
    for name, (kind, minimum) in _NUMBER_FIELDS.items():
        if name not in frame:
            continue
        col = frame[name]
        if isinstance(col.dtype, np.dtype) and col.dtype.kind in "iu":
            # whole numbers in every row (numpy's integers hold no null): only bounds can fail,
            # and only if the smallest or the largest fails them (as doubles, as compared here)
            whole = col.to_numpy()
            low, high = (float(whole.min()), float(whole.max())) if n else (0.0, 0.0)
            if name in _TIME_FIELDS or (minimum is not None and low < minimum):
                floats[name] = whole.astype("float64")
            if minimum is not None and low < minimum:
                bad |= floats[name] < minimum
            if kind == "integer" and max(-low, high) > MAX_WHOLE:
                bad |= np.abs(whole.astype("float64")) > MAX_WHOLE
            continue
        ok = _is_number(col)
        bad |= ~ok
        values = _as_float(col, ok)
        floats[name] = values
        present = ~np.isnan(values)
        with np.errstate(invalid="ignore"):
            if col.dtype.kind == "f" or col.dtype == object:
                # NaN and ±inf written in the file (null became NaN only for float columns)
                raw_nan = col.isna().to_numpy() if col.dtype == object else None
                if raw_nan is not None:
                    bad |= np.isnan(values) & ~raw_nan & ok
            bad |= np.isinf(values)
            if minimum is not None:
                bad |= present & (values < minimum)
            if kind == "integer":
                bad |= present & ((np.mod(values, 1) != 0) | (np.abs(values) > MAX_WHOLE))
    if "t_send" in floats and "t_end" in floats:
        with np.errstate(invalid="ignore"):
            bad |= floats["t_end"] < floats["t_send"]
    if "t_first" in floats:
        with np.errstate(invalid="ignore"):
            if "t_send" in floats:
                bad |= floats["t_first"] < floats["t_send"]
            if "t_end" in floats:
                bad |= floats["t_end"] < floats["t_first"]
    for name in _STRING_FIELDS:
        if name in frame:
            bad |= ~_is_string(frame[name])
    if "finish_reason" in frame:
        col = frame["finish_reason"]
        if isinstance(col.dtype, pd.CategoricalDtype):  # each row's code looked up, not hashed
            allowed = np.append(col.cat.categories.isin(FINISH_REASONS), True)  # -1: missing
            if not allowed.all():
                bad |= ~allowed[col.cat.codes.to_numpy()]
        else:
            bad |= ~(col.isna() | col.isin(FINISH_REASONS)).to_numpy(dtype=bool)
    if "token_times" in frame:
        bad |= _bad_token_times(frame["token_times"], floats.get("t_send"))
    if "chunk_tokens" in frame:
        col = frame["chunk_tokens"]
        if col.dtype.kind == "f":  # whole numbers of at least 1, or absent (NaN)
            values = col.to_numpy()
            with np.errstate(invalid="ignore"):
                bad |= ~np.isnan(values) & ~((np.mod(values, 1) == 0) & (values >= 1))
        elif col.dtype.kind in "iu":  # every row whole: each must be at least 1
            bad |= col.to_numpy() < 1
        else:
            values = col.to_numpy(dtype=object)
            bad |= np.fromiter((not _chunk_tokens_ok(v) for v in values), dtype=bool, count=n)
    return bad


def _chunk_tokens_ok(v: Any) -> bool:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return True
    if isinstance(v, bool):
        return False
    if isinstance(v, int):
        return v >= 1
    if isinstance(v, float):
        return v.is_integer() and v >= 1
    if isinstance(v, list | np.ndarray):
        return all(
            isinstance(x, int | np.integer) and not isinstance(x, bool) and x >= 0 for x in v
        )
    return False


def _bad_token_times(col: pd.Series, send: np.ndarray | None) -> np.ndarray:
    if isinstance(col.dtype, pd.ArrowDtype) and pa.types.is_list(col.dtype.pyarrow_dtype):
        value_type = col.dtype.pyarrow_dtype.value_type
        if pa.types.is_floating(value_type) or pa.types.is_integer(value_type):
            return _bad_arrow_token_times(pa.chunked_array(col.array._pa_array), send)
    values = col.to_numpy(dtype=object)
    out = np.zeros(len(values), dtype=bool)
    for i, v in enumerate(values):
        if v is None or (isinstance(v, float) and math.isnan(v)):
            continue
        if not isinstance(v, list | np.ndarray):
            out[i] = True
            continue
        try:
            arr = np.asarray(v, dtype="float64")
        except (TypeError, ValueError):
            out[i] = True
            continue
        if any(isinstance(x, bool) for x in v) or (
            len(arr)
            and (
                not np.isfinite(arr).all()
                or (np.diff(arr) < 0).any()
                or (send is not None and not np.isnan(send[i]) and arr[0] < send[i])
            )
        ):
            out[i] = True
    return out


def _bad_arrow_token_times(lists: pa.ChunkedArray, send: np.ndarray | None) -> np.ndarray:
    """_bad_token_times on Arrow lists of numbers, a chunk at a time with no loop per row: a
    list is bad if a time is not finite, goes backwards, or its first is before the send.

    The times that are not finite and the steps back are few: each is found once in the
    flat array of all the lists' times, then located in its list by the offsets."""
    out = np.zeros(len(lists), dtype=bool)
    row = 0
    for chunk in lists.chunks:
        n = len(chunk)
        offsets = np.asarray(chunk.offsets, dtype=np.int64)
        # the child array whole (offsets index it), NaN where a time is null
        values = np.asarray(chunk.values.to_numpy(zero_copy_only=False), dtype="float64")
        lo, hi = offsets[:-1], offsets[1:]
        present = np.asarray(chunk.is_valid(), dtype=bool) & (hi > lo)
        bad = np.zeros(n, dtype=bool)
        with np.errstate(invalid="ignore"):
            finite = np.isfinite(values)
            if not finite.all():  # the times are rarely anything else: no search for them
                _, holder = _holders(offsets, np.flatnonzero(~finite))
                bad[holder] = True
            # a step back from position p to p + 1 inside one list (not from a list to the next)
            steps, holder = _holders(offsets, np.flatnonzero(values[1:] < values[:-1]))
            bad[holder[steps + 1 < hi[holder]]] = True
            if send is not None:
                row_send = send[row : row + n]
                first = values[np.minimum(lo, max(len(values) - 1, 0))] if len(values) else lo
                bad |= ~np.isnan(row_send) & (first < row_send)
        out[row : row + n] = present & bad
        row += n
    return out


def _holders(offsets: np.ndarray, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The positions of a list array's child that its lists hold, and the list holding each:
    the last whose first offset is at or before it (a sliced array's child is longer)."""
    inside = positions[(positions >= offsets[0]) & (positions < offsets[-1])]
    return inside, np.searchsorted(offsets, inside, side="right") - 1
