"""The per-run table as CSV (`audit --csv runs.csv`), as the other benchmark tools write it.

The columns of the terminal and HTML run tables, as plain numbers (no thousands separators,
no units; an unknown figure is an empty cell), plus the file and line each run came from.
A text cell that a spreadsheet would read as a formula (one starting with `=`, `+`, `-`,
`@`, a tab or a carriage return) is written with a leading `'`, as OWASP advises, so that a
run id cannot compute anything when the file is opened; numbers are never changed.
"""

from __future__ import annotations

import csv
import io
import math
import re

from reporter.model import RunSummary, Verdict

#: The columns, in order (their meaning is in the README's "CSV" section).
COLUMNS = (
    "run",
    "group",
    "load",
    "concurrency",
    "request_rate",
    "requests",
    "failed",
    "output_tokens",
    "wall_s",
    "aggregate_tps",
    "sum_reported_tps",
    "overlap",
    "overlap_bound",
    "stop",
    "prefill_share",
    "median_ttft_s",
    "median_decode_tps",
    "verdict",
    "format",
    "source_file",
    "source_line",
)
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_LINE_REF = re.compile(r"(?s)(.+):([0-9]+)")


_SURROGATE = re.compile("[\ud800-\udfff]")


def _text(value: object) -> str:
    # a lone surrogate (a JSON escape without its pair) cannot be written as UTF-8
    text = _SURROGATE.sub("\ufffd", "" if value is None else str(value))
    return f"'{text}" if text.startswith(_FORMULA_START) else text


def _number(value: float | int | None) -> str:
    """A figure rounded to 6 decimals as the JSON verdict writes it; unknown is empty."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return ""
    if isinstance(value, int):
        return str(value)
    value = round(value, 6)
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)


def run_row(verdict: Verdict, r: RunSummary) -> dict[str, str]:
    m = _LINE_REF.fullmatch(r.source)
    source_file, source_line = (m.group(1), m.group(2)) if m else (r.source, "")
    return {
        "run": _text(r.id),
        "group": _text(r.group),
        "load": r.load,
        "concurrency": _number(r.concurrency),
        "request_rate": _number(r.request_rate),
        "requests": _number(r.requests),
        "failed": _number(r.failed),
        "output_tokens": _number(r.output_tokens),
        "wall_s": _number(r.wall_s),
        "aggregate_tps": _number(r.aggregate_tps),
        "sum_reported_tps": _number(r.sum_reported_tps),
        "overlap": _number(r.overlap),
        # without request times: Σ decode ÷ wall, a lower bound of the overlap
        "overlap_bound": _number(r.decode_bound),
        "stop": _text(r.stop),
        "prefill_share": _number(r.prefill_share),
        "median_ttft_s": _number(r.median_ttft_s),
        "median_decode_tps": _number(r.median_decode_tps),
        "verdict": str(r.verdict),
        "format": _text(r.format),
        "source_file": _text(source_file),
        "source_line": source_line,
    }


def render_csv(verdict: Verdict) -> str:
    """One header line and one row per run, in the run table's order (RFC 4180 quoting)."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\r\n")
    writer.writeheader()
    for r in verdict.runs:
        writer.writerow(run_row(verdict, r))
    return out.getvalue()
