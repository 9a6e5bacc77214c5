"""A chart that cannot be drawn safely is left out with a note; the report is still written."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from reporter import api
from reporter.cli import main
from reporter.render.drawing import draw_charts
from reporter.render.html import render_html

HOSTILE_ID = "a url(http://evil.example/x) b"


def two_runs(tmp_path: Path) -> Path:
    lines = []
    for run_id in ("plain-run", HOSTILE_ID):
        run = {"kind": "run", "schema": "benchreport/1", "id": run_id, "group": "g",
               "workload": {"concurrency": 2, "output_tokens": 4, "stop": "forced"}}  # fmt: skip
        request = {"kind": "request", "run": run_id, "t_send": 0, "t_first": 0.1, "t_end": 1,
                   "output_tokens": 4}  # fmt: skip
        lines += [run, {**request, "id": 1}, {**request, "id": 2}]
    trace = tmp_path / "url.jsonl"
    trace.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return trace


@pytest.mark.slow
def test_only_the_unsafe_chart_is_left_out(tmp_path: Path) -> None:
    verdict = api.audit([two_runs(tmp_path)])
    drawn = draw_charts(verdict)
    by_title = {c.title: c for c in drawn.runs}
    plain, hostile = by_title["Run plain-run"], by_title[f"Run {HOSTILE_ID}"]
    assert plain.svg.startswith("<svg") and not plain.left_out
    assert hostile.svg == ""
    assert hostile.left_out.startswith("This chart was left out: it could not be drawn safely")
    html = render_html(verdict)
    assert html.count("<svg") == 1
    assert 'class="none left-out"' in html and "This chart was left out" in html
    # what the sanitiser refused is only ever text: no url() outside a local reference
    svg_parts = re.findall(r"<svg.*?</svg>", html, flags=re.S)
    assert all("url(http" not in part for part in svg_parts)


@pytest.mark.slow
def test_the_command_writes_the_report_and_keeps_its_exit_code(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    result = CliRunner().invoke(main, ["audit", str(two_runs(tmp_path)), "-o", str(out)])
    assert result.exit_code == 0, result.stderr
    assert "refused" not in result.stderr
    assert "This chart was left out" in out.read_text(encoding="utf-8")
