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
import re

from reporter.model import RunSummary, Verdict
from reporter.numbers import plain

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


def run_row(verdict: Verdict, r: RunSummary) -> dict[str, str]:
    m = _LINE_REF.fullmatch(r.source)
    source_file, source_line = (m.group(1), m.group(2)) if m else (r.source, "")
    return {
        "run": _text(r.id),
        "group": _text(r.group),
        "load": r.load,
        "concurrency": plain(r.concurrency),
        "request_rate": plain(r.request_rate),
        "requests": plain(r.requests),
        "failed": plain(r.failed),
        "output_tokens": plain(r.output_tokens),
        "wall_s": plain(r.wall_s),
        "aggregate_tps": plain(r.aggregate_tps),
        "sum_reported_tps": plain(r.sum_reported_tps),
        "overlap": plain(r.overlap),
        # without request times: Σ decode ÷ wall, a lower bound of the overlap
        "overlap_bound": plain(r.decode_bound),
        "stop": _text(r.stop),
        "prefill_share": plain(r.prefill_share),
        "median_ttft_s": plain(r.median_ttft_s),
        "median_decode_tps": plain(r.median_decode_tps),
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
