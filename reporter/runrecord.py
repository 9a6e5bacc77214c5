"""The native run and claim records flattened into the canonical table rows.

One flattening for every reader: the native adapter, the other adapters (which build native
records), the Parquet reader, and the table builder (a run with requests but no record).
Below both the table and the adapters, so that neither imports the other for it.
"""

from __future__ import annotations

import math
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


def run_row(record: dict[str, Any], path: str, line: int | None, fmt: str) -> dict[str, Any]:
    """Flatten one run record into the canonical run columns (reporter.runfields)."""
    row = {f.column: _read(f, record, fmt) for f in RUN_FIELDS if f.path is not None}
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
