"""Canonical tables → the native trace (JSON Lines, schema benchreport/1).

`benchreport convert` reads any supported file through its adapter and writes what the audit
saw: one run record per run (with the tool's summary, what was derived, the source format and
the resolved group, so that auditing the converted file gives the same verdict), then the
request records of each run, then claims, probes and log lines. The schema allows the extra
fields; the native reader restores them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pandas as pd

from reporter.errors import RenderError
from reporter.ingest.validate import SCHEMA_NAME
from reporter.runfields import RECORD_ORDER, RUN_COLUMNS, RUN_FIELDS, RunField
from reporter.table import Tables

#: Run columns written in their own place of the run record (all others go to `extra`).
_FLAT = set(RUN_COLUMNS)


def _plain(value: Any) -> Any:
    """A JSON-ready value: numpy scalars unwrapped, NaN as null, whole floats as integers
    where the schema wants integers (the caller decides)."""
    if value is None:
        return None
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | np.ndarray):
        return [_plain(v) for v in value]
    if value is pd.NA or value is pd.NaT:
        return None
    return value


def _int(value: Any) -> int | float | None:
    """A whole number as int (the schema's integers); other numbers as they are."""
    v = _plain(value)
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v if isinstance(v, int | float) else None


def _raw_number(value: Any) -> float | None:
    """A number cell as float, infinities kept (None for null, NaN and text)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        return None
    return float(value)


def _num(value: Any) -> float | int | None:
    v = _plain(value)
    return v if isinstance(v, int | float) and not isinstance(v, bool) else None


def _str(value: Any) -> str | None:
    v = _plain(value)
    return None if v is None else str(v)


def _drop_none(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}


def _written(field: RunField, value: Any) -> Any:
    """One run-table value as the run record holds it (`RunField.write`)."""
    match field.write:
        case "id":
            return str(value)
        case "integer":
            return _int(value)
        case "number":
            return _num(value)
        case "string":
            return _str(value)
        case "rate":
            return "inf" if _raw_number(value) == math.inf else _num(value)
        case "strings":
            return [str(v) for v in value or []] or None
        case "dict":
            return _drop_none(_plain(value or {})) or None
        case "flag":
            return True if value is True else None
    return _plain(value)


class _Object(dict[str, Any]):
    """An object of the run record built from the field map (not a value such as `summary`)."""


def _pruned(obj: _Object, top: bool) -> Any:
    """The record's objects below the top, each without its nulls, and null when empty."""
    inner = {k: _pruned(v, False) if isinstance(v, _Object) else v for k, v in obj.items()}
    return inner if top else (_drop_none(inner) or None)


_BY_PATH = {".".join(f.path): f for f in RUN_FIELDS if f.path is not None and f.write}


def run_record(row: dict[str, Any]) -> dict[str, Any]:
    """One run of the run table as a native run record (reporter.runfields)."""
    top = _Object(kind="run", schema=SCHEMA_NAME)
    for dotted in RECORD_ORDER:
        field = _BY_PATH[dotted]
        assert field.path is not None
        place = top
        for key in field.path[:-1]:
            place = place.setdefault(key, _Object())
        place[field.path[-1]] = _written(field, row.get(field.column))
    record: dict[str, Any] = _pruned(top, True)
    for key, value in (row.get("extra") or {}).items():
        if key not in record and key not in _FLAT and key != "kind":
            record[key] = _plain(value)
        elif key == "request_rate" and str(value).lower() in ("inf", "infinity"):
            # no JSON number is infinite: an unpaced run (every request sent at once) keeps
            # its rate as a flag beside the record
            record["request_rate_inf"] = True
    return _drop_none(record)


def request_records(requests: pd.DataFrame) -> Iterator[dict[str, Any]]:
    """The request rows as native request records, in table order."""
    columns = {
        c: requests[c].to_numpy(dtype=object)
        for c in (
            "run",
            "id",
            "t_send",
            "t_first",
            "t_end",
            "prompt_tokens",
            "output_tokens",
            "finish_reason",
            "reported_tps",
            "prompt_sha256",
            "token_times",
            "chunk_tokens",
            "error",
            "n_chunks",
            "ttft",
            "e2e",
        )
    }
    for i in range(len(requests)):
        times = columns["token_times"][i]
        per_chunk = _int(columns["chunk_tokens"][i])
        record = {
            "kind": "request",
            "run": str(columns["run"][i]),
            "id": str(columns["id"][i]),
            "t_send": _num(columns["t_send"][i]),
            "t_first": _num(columns["t_first"][i]),
            "t_end": _num(columns["t_end"][i]),
            "prompt_tokens": _int(columns["prompt_tokens"][i]),
            "output_tokens": _int(columns["output_tokens"][i]),
            "finish_reason": _str(columns["finish_reason"][i]),
            "reported_tps": _num(columns["reported_tps"][i]),
            "prompt_sha256": _str(columns["prompt_sha256"][i]),
            # absent: None, NaN, or NA in the native reader's Arrow lists
            "token_times": None
            if times is None or times is pd.NA or (isinstance(times, float) and math.isnan(times))
            else [float(t) for t in times],
            # the table keeps a mean; only a whole one is a valid native value
            "chunk_tokens": per_chunk if isinstance(per_chunk, int) and per_chunk >= 1 else None,
            "error": _str(columns["error"][i]),
            "n_chunks": _int(columns["n_chunks"][i]),
        }
        if record["t_send"] is None:
            # durations the tool measured without absolute times (LLMPerf lists)
            record["ttft"] = _num(columns["ttft"][i])
            record["e2e"] = _num(columns["e2e"][i])
        yield _drop_none(record)


def records(tables: Tables) -> Iterator[dict[str, Any]]:
    """Every record of the native trace of these tables: runs, requests, claims, probes, logs."""
    for row in tables.runs.to_dict("records"):
        yield run_record({str(k): v for k, v in row.items()})
    yield from request_records(tables.requests)
    for row in tables.claims.to_dict("records"):
        yield _drop_none(
            {
                "kind": "claim",
                "id": _str(row.get("claim")),
                "metric": row.get("metric"),
                "value": _num(row.get("value")),
                "concurrency": _int(row.get("concurrency")),
                "method": _str(row.get("method")),
                "run": _str(row.get("run")),
                "group": _str(row.get("group")),
                "runs": [str(r) for r in row["runs"]] if row.get("runs") else None,
                "source": _str(row.get("source")),
            }
        )
    for row in tables.probes.to_dict("records"):
        yield _drop_none(
            {
                "kind": "probe",
                "what": row.get("what"),
                "value": _num(row.get("value")),
                "unit": _str(row.get("unit")),
                "buffer_bytes": _int(row.get("buffer_bytes")),
                "run": _str(row.get("run")),
            }
        )
    for row in tables.logs.to_dict("records"):
        yield _drop_none(
            {
                "kind": "log",
                "run": _str(row.get("run")),
                "level": _str(row.get("level")),
                "text": str(row.get("text") or ""),
                "t": _num(row.get("t")),
            }
        )


def to_jsonl(tables: Tables) -> bytes:
    """The native trace as bytes, one record a line."""
    return b"".join(_line(r) for r in records(tables))


def _line(record: dict[str, Any]) -> bytes:
    """One record as a JSON line. orjson refuses integers beyond 64 bits, which JSON and the
    native reader allow (a workload's prompt_tokens of 2**64): those records go through the
    standard library, still strict (no NaN or Infinity)."""
    try:
        return orjson.dumps(record) + b"\n"
    except orjson.JSONEncodeError:
        text = json.dumps(record, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        return text.encode("utf-8") + b"\n"


def write(tables: Tables, path: str) -> int:
    """Write the native trace; returns the number of records written."""
    data = to_jsonl(tables)
    try:
        Path(path).write_bytes(data)
    except OSError as exc:
        raise RenderError(f"{path}: cannot write: {exc.strerror}") from None
    return data.count(b"\n")
