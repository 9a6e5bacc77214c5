"""The machine verdict as JSON: sorted keys, fixed float formatting, byte-identical reruns."""

from __future__ import annotations

import json

from reporter.verdict import Verdict


def render_json(verdict: Verdict) -> str:
    return json.dumps(verdict.to_dict(), indent=2, ensure_ascii=False, sort_keys=False) + "\n"
