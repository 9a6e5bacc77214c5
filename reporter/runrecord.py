"""The native run and claim records flattened into the canonical table rows.

One flattening for every reader: the native adapter, the other adapters (which build native
records), the Parquet reader, and the table builder (a run with requests but no record).
Below both the table and the adapters, so that neither imports the other for it.
"""

from __future__ import annotations

import math
from typing import Any


def _get(record: dict[str, Any], *keys: str) -> Any:
    value: Any = record
    for key in keys:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def run_row(record: dict[str, Any], path: str, line: int | None, fmt: str) -> dict[str, Any]:
    """Flatten one run record into the canonical run columns."""
    wl = record.get("workload") or {}
    spec = wl.get("speculative") or {}
    group = record.get("group")
    known = {
        "kind",
        "schema",
        "id",
        "tool",
        "engine",
        "model",
        "hardware",
        "workload",
        "repeat",
        "group",
        "interrupted",
        "summary",
        "derived",
        "source_format",
        "concurrency_derived",
    }
    # written by `benchreport convert` so that a converted summary-only run audits the same
    summary = record.get("summary")
    derived = record.get("derived")
    return {
        "run": str(record["id"]),
        "group": None if group is None else str(group),
        "group_explicit": group is not None,
        "concurrency": wl.get("concurrency"),
        "concurrency_derived": record.get("concurrency_derived") is True,
        "repeat": record.get("repeat"),
        "stop": wl.get("stop") or "unknown",
        "output_tokens_requested": wl.get("output_tokens"),
        "ignore_eos": wl.get("ignore_eos"),
        "min_tokens": wl.get("min_tokens"),
        "temperature": wl.get("temperature"),
        "prompt_tokens": wl.get("prompt_tokens"),
        "context_tokens": wl.get("context_tokens"),
        "request_rate": math.inf if wl.get("request_rate") == "inf" else wl.get("request_rate"),
        "dataset": wl.get("dataset"),
        "output_tokens_requested_min": wl.get("output_tokens_min"),
        "phase": wl.get("phase"),
        "content": wl.get("content") or "unknown",
        "spec_enabled": spec.get("enabled"),
        "spec_method": spec.get("method"),
        "spec_acceptance": spec.get("acceptance"),
        "engine_name": _get(record, "engine", "name"),
        "engine_version": _get(record, "engine", "version"),
        "engine_flags": list(_get(record, "engine", "flags") or []),
        "tool_name": _get(record, "tool", "name"),
        "tool_version": _get(record, "tool", "version"),
        "model_name": _get(record, "model", "name"),
        "params_total": _get(record, "model", "params_total"),
        "params_active": _get(record, "model", "params_active"),
        "quant": _get(record, "model", "quant"),
        "bytes_per_token": _get(record, "model", "bytes_per_token"),
        "working_set_bytes": _get(record, "model", "working_set_bytes"),
        "hardware_name": _get(record, "hardware", "name"),
        "bandwidth_nominal_gbps": _get(record, "hardware", "bandwidth_nominal_gbps"),
        "bandwidth_measured_gbps": _get(record, "hardware", "bandwidth_measured_gbps"),
        "interrupted": record.get("interrupted"),
        "format": record.get("source_format") or fmt,
        "summary": summary if isinstance(summary, dict) else None,
        "derived": [str(d) for d in derived] if isinstance(derived, list) else [],
        "extra": _extra(record, known),
        "source_path": path,
        "source_line": line,
    }


def _extra(record: dict[str, Any], known: set[str]) -> dict[str, Any] | None:
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
