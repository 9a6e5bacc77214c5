"""Long trace strings are cut before they are escaped: a 1 MiB id renders as fast as a short one."""

from __future__ import annotations

import json
import time
from pathlib import Path

from reporter import api
from reporter.render.context import MAX_SHOWN, shown
from reporter.render.markdown import render_markdown
from reporter.render.text import render_text

HUGE = "\u202e" * (1 << 20)


def test_shown_cuts_before_it_escapes() -> None:
    start = time.perf_counter()
    text = shown(HUGE)
    took = time.perf_counter() - start
    assert took < 0.1  # escaping the whole MiB first takes seconds
    assert text == "<U+202E>" * (MAX_SHOWN - 1) + "… (1,048,576 characters)"


def test_a_one_mib_run_id_renders_quickly(tmp_path: Path) -> None:
    run = {"kind": "run", "schema": "benchreport/1", "id": HUGE,
           "workload": {"concurrency": 2, "output_tokens": 4, "stop": "forced"}}  # fmt: skip
    request = {"kind": "request", "run": HUGE, "t_send": 0, "t_first": 0.1, "t_end": 1,
               "output_tokens": 4}  # fmt: skip
    trace = tmp_path / "huge-id.jsonl"
    lines = [run, {**request, "id": 1}, {**request, "id": 2}]
    trace.write_text("".join(json.dumps(x) + "\n" for x in lines))
    verdict = api.audit([trace])
    start = time.perf_counter()
    md = render_markdown(verdict)
    text = render_text(verdict)
    took = time.perf_counter() - start
    assert took < 2
    assert "\\<U+202E\\>" in md and "\u202e" not in md
    assert len(md) < 20_000
    assert "…(1,048,576 chars)" in text and "\u202e" not in text
    assert max(len(line) for line in text.splitlines()) < 20_000
