"""The machine verdict as JSON: sorted keys, fixed float formatting, byte-identical reruns."""

from __future__ import annotations

import json

from reporter.model import Verdict


def render_json(verdict: Verdict, *, include_series: bool = False) -> str:
    """Strict JSON: no NaN or Infinity (the verdict's dict has none; allow_nan=False says so).
    `include_series` adds the per-run chart data (schemas/verdict-2.schema.json, `series`)."""
    data = verdict.to_dict(include_series=include_series)
    return json.dumps(data, indent=2, ensure_ascii=False, sort_keys=False, allow_nan=False) + "\n"
