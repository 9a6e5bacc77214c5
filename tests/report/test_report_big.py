"""A trace of 100,000 requests: the report stays small and says what it sampled."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reporter import api
from reporter.model import MAX_COMPLETIONS, MAX_TIMELINE
from reporter.render.html import render_html
from reporter.render.markdown import render_markdown

pytestmark = pytest.mark.slow

REQUESTS = 100_000
SLOTS = 64


def _write_trace(path: Path) -> None:
    """64 slots served in waves: each request 128 tokens in 2 s after a 0.1 s first token."""
    lines = [json.dumps({
        "kind": "run", "schema": "benchreport/1", "id": "big", "group": "big",
        "workload": {"concurrency": SLOTS, "output_tokens": 128, "stop": "forced"},
    })]  # fmt: skip
    for i in range(REQUESTS):
        start = (i // SLOTS) * 2.1
        lines.append(
            f'{{"kind":"request","run":"big","id":"r{i}","t_send":0.0,"t_first":{start + 0.1:.3f},'
            f'"t_end":{start + 2.1:.3f},"prompt_tokens":32,"output_tokens":128,'
            f'"finish_reason":"length"}}'
        )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_hundred_thousand_requests(tmp_path: Path) -> None:
    trace = tmp_path / "big.jsonl"
    _write_trace(trace)
    verdict = api.audit([str(trace)])
    html = render_html(verdict)
    assert len(html.encode()) < 600_000
    assert (
        f"timeline: {MAX_TIMELINE} of {REQUESTS:,} requests drawn, evenly spaced in send order"
        in html
    )
    assert (
        f"completions: {MAX_COMPLETIONS} of {REQUESTS:,} drawn, evenly spaced in completion order"
        in html
    )
    assert "request (send order, 100,000)" in html
    md = render_markdown(verdict)
    assert len(md.splitlines()) <= 60
