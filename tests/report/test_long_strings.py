"""Long trace strings are cut before they are escaped: a 1 MiB id renders as fast as a short one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reporter import api
from reporter.render import common
from reporter.render.common import MAX_SHOWN, shown
from reporter.render.markdown import render_markdown
from reporter.render.text import render_text

HUGE = "\u202e" * (1 << 20)


def test_shown_cuts_before_it_escapes(monkeypatch: pytest.MonkeyPatch) -> None:
    # the escaping pass must only ever see the cut string: escaping the whole MiB first is
    # what made a 1 MiB id take ~30 s to render
    seen: list[int] = []
    real_sub = common._INVISIBLE.sub

    class Spy:
        def sub(self, repl: Any, text: str) -> str:
            seen.append(len(text))
            return real_sub(repl, text)

    monkeypatch.setattr(common, "_INVISIBLE", Spy())
    text = shown(HUGE)
    assert seen and max(seen) <= MAX_SHOWN + 40
    assert text == "<U+202E>" * (MAX_SHOWN - 1) + "… (1,048,576 characters)"


@pytest.mark.slow
def test_a_one_mib_run_id_renders_quickly(tmp_path: Path) -> None:
    run = {"kind": "run", "schema": "benchreport/1", "id": HUGE,
           "workload": {"concurrency": 2, "output_tokens": 4, "stop": "forced"}}  # fmt: skip
    request = {"kind": "request", "run": HUGE, "t_send": 0, "t_first": 0.1, "t_end": 1,
               "output_tokens": 4}  # fmt: skip
    trace = tmp_path / "huge-id.jsonl"
    lines = [run, {**request, "id": 1}, {**request, "id": 2}]
    trace.write_text("".join(json.dumps(x) + "\n" for x in lines))
    verdict = api.audit([trace])
    md = render_markdown(verdict)
    text = render_text(verdict)
    assert "\\<U+202E\\>" in md and "\u202e" not in md
    assert len(md) < 20_000
    assert "…(1,048,576 chars)" in text and "\u202e" not in text
    assert max(len(line) for line in text.splitlines()) < 20_000
