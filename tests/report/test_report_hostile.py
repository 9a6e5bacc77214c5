"""Hostile strings from a trace show as text and run or load nothing (HTML, Markdown, SVG)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from report_helpers import parse

from reporter import api
from reporter.findings import Finding
from reporter.render.drawing import draw_charts
from reporter.render.html import render_html
from reporter.render.markdown import render_markdown
from reporter.render.text import render_text
from reporter.types import Outcome, Severity
from reporter.verdict import Verdict

SCRIPT = "<script>alert(1)</script>"
IMG = '"><img src=x onerror=alert(1)>'


@pytest.fixture(scope="module")
def hostile(fixture_verdicts: Callable[[str], Verdict]) -> Verdict:
    return fixture_verdicts("hostile.jsonl")


@pytest.fixture(scope="module")
def html(hostile: Verdict) -> str:
    return render_html(hostile)


@pytest.fixture(scope="module")
def md(hostile: Verdict) -> str:
    return render_markdown(hostile)


def test_html_has_no_element_from_the_trace(html: str) -> None:
    doc = parse(html)
    counts: dict[str, int] = {}
    for tag, _ in doc.tags:
        counts[tag] = counts.get(tag, 0) + 1
    for tag in ("script", "img", "iframe", "object", "embed", "base", "form", "style"):
        assert counts.get(tag, 0) == (1 if tag == "style" else 0), tag
    equiv = [a.get("http-equiv") for t, a in doc.tags if t == "meta" and a.get("http-equiv")]
    assert equiv == ["Content-Security-Policy"]
    assert counts["link"] == 1  # the data: favicon that stops browsers asking for one
    assert all(not name.startswith("on") for _, attrs in doc.tags for name in attrs)
    hrefs = {a["href"] for _, a in doc.tags if a.get("href")}
    assert all(h.startswith("#") or h == "data:," for h in hrefs)
    assert not [a for _, a in doc.tags if "src" in a]


def test_html_shows_the_strings_as_text(html: str) -> None:
    assert "<bdi>&lt;script&gt;alert(1)&lt;/script&gt;</bdi>" in html
    assert "&#34;&gt;&lt;img src=x onerror=alert(1)&gt;" in html
    assert "javascript:alert(1) evil&lt;U+202E&gt;gnp.exe" in html
    assert "&lt;iframe src=&#34;http://evil.invalid/x&#34;&gt;&lt;/iframe&gt;" in html
    assert "&lt;link rel=&#34;stylesheet&#34; href=&#34;http://evil.invalid/x.css&#34;&gt;" in html
    assert "\u202e" not in html
    assert "L" * 159 + "… (5,000 characters)" in html
    assert "L" * 161 not in html


def test_svg_labels_from_the_trace_are_escaped(hostile: Verdict) -> None:
    drawn = draw_charts(hostile)
    svg = "".join(c.svg for c in drawn.runs)
    assert "run &lt;script&gt;alert(1)&lt;/script&gt;</text>" in svg
    assert "<script" not in svg and "<img" not in svg and "<iframe" not in svg
    assert "\u202e" not in svg


def test_markdown_escapes_every_syntax_character(md: str) -> None:
    assert "| \\<script\\>alert\\(1\\)\\</script\\> | 2 |" in md
    assert '| "\\>\\<img src=x onerror=alert\\(1\\)\\> | aggregate tok/s |' in md
    assert "javascript:alert\\(1\\) evil\\<U+202E\\>gnp.exe" in md
    assert "<" not in md.replace("\\<", "")
    assert "](" not in md.replace("\\]\\(", "")
    assert "\u202e" not in md
    assert max(len(line) for line in md.splitlines()) < 1200


def test_markdown_renders_to_no_tag_and_no_link(md: str) -> None:
    rendered = MarkdownIt("commonmark", {"html": True}).enable("table").render(md)
    tags = set(re.findall(r"<([a-zA-Z][a-zA-Z0-9]*)", rendered))
    assert tags <= {
        "h3",
        "p",
        "strong",
        "table",
        "thead",
        "tbody",
        "tr",
        "th",
        "td",
        "ul",
        "li",
        "pre",
        "code",
    }, tags
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in rendered


def test_arithmetic_of_undecided_and_passed_checks_stays_text(hostile: Verdict) -> None:
    """A run id inside the steps of a check that could not decide (BR017 names its runs) or
    passed is escaped like the message around it, in the HTML and in the Markdown."""
    steps = [f"decode at context 296 tokens: 52.5 tok/s (runs {SCRIPT}, {IMG})", "www.evil.invalid"]
    extra = [
        Finding("BR017", "context-undisclosed", Severity.WARNING, outcome, "audit", "m", steps)
        for outcome in (Outcome.UNDECIDABLE, Outcome.PASSED)
    ]
    verdict = replace(hostile, findings=[*hostile.findings, *extra])
    html = render_html(verdict)
    assert (
        html.count(
            "<li><bdi>decode at context 296 tokens: 52.5 tok/s (runs &lt;script&gt;alert(1)"
            "&lt;/script&gt;, &#34;&gt;&lt;img src=x onerror=alert(1)&gt;)</bdi></li>"
        )
        == 2
    )
    doc = parse(html)
    assert not [t for t, _ in doc.tags if t in ("script", "img")]
    md = render_markdown(verdict)
    line = next(x for x in md.splitlines() if x.startswith("- **BR017**"))
    assert line.endswith(
        "; arithmetic: decode at context 296 tokens: 52.5 tok/s \\(runs \\<script\\>alert\\(1\\)"
        '\\</script\\>, "\\>\\<img src=x onerror=alert\\(1\\)\\>\\) · www\u200d.evil.invalid'
    )
    assert "<" not in md.replace("\\<", "")


def test_a_hostile_run_id_in_the_stated_figure_line_stays_text(tmp_path: Path) -> None:
    """The line that names a run whose file states another aggregate than total ÷ wall
    quotes its run id: escaped in the Markdown and the HTML, made visible on the terminal."""
    name = f"@someone \u202e{SCRIPT}|[x](javascript:alert(1))"
    line = {
        "run_name": name, "batch_size": 8, "input_len": 32, "output_len": 100,
        "latency": 10.0, "output_throughput": 100.0, "overall_throughput": 105.0,
        "last_ttft": 2.0, "last_gen_throughput": 90.0, "acc_length": -1.0,
    }  # fmt: skip
    path = tmp_path / "result.jsonl"
    path.write_text(json.dumps(line) + "\n")
    verdict = api.audit([path])
    (run,) = verdict.runs
    assert run.stated_aggregate_note is not None  # 100 tok/s stated, 800 ÷ 10 s = 80
    md = render_markdown(verdict)
    (stated,) = [x for x in md.splitlines() if "the file states" in x]
    # the id cut as in the run table's cell, then escaped
    assert stated.startswith(
        "- @\u200dsomeone \\<U+202E\\>\\<script\\>alert\\(1\\)\\</script\\>\\|\\[x\\]"
        "\\(javascript:a…: the file states 100.00 tok/s "
        "\\(output\\_throughput\\), 1.25× total ÷ wall \\(80.0\\)"
    )
    assert "<" not in md.replace("\\<", "")
    rendered = MarkdownIt("commonmark", {"html": True}).enable("table").render(md)
    assert "<a " not in rendered and "<script" not in rendered
    html = render_html(verdict)
    doc = parse(html)
    assert not [t for t, _ in doc.tags if t in ("script", "img", "iframe")]
    hrefs = {a["href"] for _, a in doc.tags if a.get("href")}
    assert all(h.startswith("#") or h == "data:," for h in hrefs)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;|[x](javascript:alert(1))" in html
    assert "\u202e" not in html
    text = render_text(verdict)
    (said,) = [x for x in text.splitlines() if "the file states" in x]
    assert "\u202e" not in said and "\\u202e" in said
