"""The native run and claim records flattened into the canonical table rows.

One flattening for every reader: the native adapter, the other adapters (which build native
records), the Parquet reader, and the table builder (a run with requests but no record).
Below both the table and the adapters, so that neither imports the other for it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from reporter.runfields import RECORD_KEYS, RUN_COLUMNS, RUN_FIELDS, RunField


def _get(record: dict[str, Any], *keys: str) -> Any:
    value: Any = record
    for key in keys:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def _read(field: RunField, record: dict[str, Any], fmt: str) -> Any:
    """One field of a run record as its run-table value (`RunField.read`)."""
    assert field.path is not None
    value = _get(record, *field.path)
    match field.read:
        case "id":
            return str(value)
        case "text":
            return None if value is None else str(value)
        case "unknown":
            return value or "unknown"
        case "rate":
            return math.inf if value == "inf" else value
        case "list":
            return list(value or [])
        case "strings":
            return [str(d) for d in value] if isinstance(value, list) else []
        case "dict":
            return value if isinstance(value, dict) else None
        case "flag":
            return value is True
        case "fallback":
            return value or fmt
    return value


def _as_is(value: Any, _: str) -> Any:
    """A field read as it is (`RunField.read` "value")."""
    return value


#: `_read` of each kind of field, by `RunField.read` (a value of a kind not listed as it is).
_CONVERT: dict[str, Callable[[Any, str], Any]] = {
    "id": lambda value, _: str(value),
    "text": lambda value, _: None if value is None else str(value),
    "unknown": lambda value, _: value or "unknown",
    "rate": lambda value, _: math.inf if value == "inf" else value,
    "list": lambda value, _: list(value or []),
    "strings": lambda value, _: [str(d) for d in value] if isinstance(value, list) else [],
    "dict": lambda value, _: value if isinstance(value, dict) else None,
    "flag": lambda value, _: value is True,
    "fallback": lambda value, fmt: value or fmt,
}
#: The record's fields as `run_row` reads them: (column, path, conversion), in table order.
_FIELD_READS = tuple(
    (f.column, f.path, _CONVERT.get(f.read, _as_is)) for f in RUN_FIELDS if f.path is not None
)


def run_row(record: dict[str, Any], path: str, line: int | None, fmt: str) -> dict[str, Any]:
    """Flatten one run record into the canonical run columns (reporter.runfields)."""
    # `_read` of every field, with the path walked and the conversion chosen inline: a call
    # and a match per field took half the time of a run's flattening
    row = {}
    for column, keys, convert in _FIELD_READS:
        value: Any = record
        for key in keys:
            value = value.get(key) if isinstance(value, dict) else None
        row[column] = convert(value, fmt)
    row["group_explicit"] = record.get("group") is not None
    row["extra"] = _extra(record, RECORD_KEYS)
    row["source_path"] = path
    row["source_line"] = line
    return {column: row[column] for column in RUN_COLUMNS}


def _extra(record: dict[str, Any], known: frozenset[str]) -> dict[str, Any] | None:
    """Fields of a run record beyond the canonical columns, kept for the rules that read them."""
    extra = {k: v for k, v in record.items() if k not in known}
    command = _get(record, "tool", "command")  # "record": the recorder, which ends with run_end
    if command is not None:
        extra["tool_command"] = command
    return extra or None


def claim_row(record: dict[str, Any]) -> dict[str, Any]:
    runs = record.get("runs")
    return {
        "claim": None if record.get("id") is None else str(record["id"]),
        "metric": record.get("metric"),
        "value": float(record["value"]),
        "concurrency": record.get("concurrency"),
        "method": record.get("method") or "unknown",
        "run": None if record.get("run") is None else str(record["run"]),
        "group": None if record.get("group") is None else str(record["group"]),
        "runs": None if runs is None else [str(r) for r in runs],
        "source": record.get("source"),
    }
