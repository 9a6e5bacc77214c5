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
from reporter.table import RUN_COLUMNS, Tables

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


def run_record(row: dict[str, Any]) -> dict[str, Any]:
    """One run of the run table as a native run record."""
    spec = _drop_none(
        {
            "enabled": _plain(row.get("spec_enabled")),
            "method": _str(row.get("spec_method")),
            "acceptance": _num(row.get("spec_acceptance")),
        }
    )
    workload = _drop_none(
        {
            "concurrency": _int(row.get("concurrency")),
            "output_tokens": _int(row.get("output_tokens_requested")),
            "stop": _str(row.get("stop")),
            "ignore_eos": _plain(row.get("ignore_eos")),
            "min_tokens": _int(row.get("min_tokens")),
            "temperature": _num(row.get("temperature")),
            "prompt_tokens": _int(row.get("prompt_tokens")),
            "context_tokens": _int(row.get("context_tokens")),
            "request_rate": "inf"
            if _raw_number(row.get("request_rate")) == math.inf
            else _num(row.get("request_rate")),
            "dataset": _str(row.get("dataset")),
            "output_tokens_min": _int(row.get("output_tokens_requested_min")),
            "phase": _str(row.get("phase")),
            "content": _str(row.get("content")),
            "speculative": spec or None,
        }
    )
    record: dict[str, Any] = {
        "kind": "run",
        "schema": SCHEMA_NAME,
        "id": str(row["run"]),
        "tool": _drop_none(
            {"name": _str(row.get("tool_name")), "version": _str(row.get("tool_version"))}
        )
        or None,
        "engine": _drop_none(
            {
                "name": _str(row.get("engine_name")),
                "version": _str(row.get("engine_version")),
                "flags": [str(f) for f in row.get("engine_flags") or []] or None,
            }
        )
        or None,
        "model": _drop_none(
            {
                "name": _str(row.get("model_name")),
                "params_total": _num(row.get("params_total")),
                "params_active": _num(row.get("params_active")),
                "quant": _str(row.get("quant")),
                "bytes_per_token": _num(row.get("bytes_per_token")),
                "working_set_bytes": _num(row.get("working_set_bytes")),
            }
        )
        or None,
        "hardware": _drop_none(
            {
                "name": _str(row.get("hardware_name")),
                "bandwidth_nominal_gbps": _num(row.get("bandwidth_nominal_gbps")),
                "bandwidth_measured_gbps": _num(row.get("bandwidth_measured_gbps")),
            }
        )
        or None,
        "workload": workload or None,
        "repeat": _int(row.get("repeat")),
        "group": _str(row.get("group")),
        "interrupted": _plain(row.get("interrupted")),
        "summary": _drop_none(_plain(row.get("summary") or {})) or None,
        "derived": [str(d) for d in row.get("derived") or []] or None,
        "source_format": _str(row.get("format")),
        "concurrency_derived": True if row.get("concurrency_derived") is True else None,
    }
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
