"""The Markdown summary rendered by GitHub's own renderer (cmark-gfm with its autolink
extension) holds no link made from trace text: escaping alone does not stop autolinks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from reporter.cli import main
from tests.conftest import SHARED

cmarkgfm = pytest.importorskip("cmarkgfm")

INJECT = SHARED / "hostile" / "inject01-markdown-email-autolink.jsonl"
LINKY = (
    "see www.evil.example, http://evil.example/x, HTTPS://evil.example, ftp://evil.example, "
    "me@evil.example, mailto:a@evil.example, xmpp:a@evil.example, @octocat and #12"
)


def gfm(markdown: str) -> str:
    return str(cmarkgfm.github_flavored_markdown_to_html(markdown))


def summary(trace: Path, tmp_path: Path) -> str:
    out = tmp_path / "summary.md"
    result = CliRunner().invoke(main, ["audit", str(trace), "--md", str(out)])
    assert result.exit_code in (0, 1), result.stderr
    return out.read_text(encoding="utf-8")


def test_the_renderer_does_autolink_plain_text() -> None:
    """The check below can fail: the same strings, unescaped, become links."""
    html = gfm(LINKY)
    assert 'href="mailto:me@evil.example"' in html
    assert 'href="http://www.evil.example"' in html
    assert 'href="http://evil.example/x"' in html


@pytest.mark.skipif(not INJECT.exists(), reason="hostile inputs not present")
def test_email_addresses_in_ids_are_no_mailto_links(tmp_path: Path) -> None:
    md = summary(INJECT, tmp_path)
    html = gfm(md)
    assert "<a " not in html and "mailto:" not in html
    assert "attacker@\u200devil.example" in html  # still there to read


def test_no_autolink_of_any_kind_forms(tmp_path: Path) -> None:
    trace = tmp_path / "links.jsonl"
    run = {"kind": "run", "schema": "benchreport/1", "id": LINKY, "model": {"name": LINKY},
           "workload": {"concurrency": 2, "output_tokens": 4, "stop": "forced"}}  # fmt: skip
    request = {"kind": "request", "run": LINKY, "t_send": 0, "t_first": 0.1, "t_end": 1,
               "output_tokens": 4}  # fmt: skip
    claim = {"kind": "claim", "id": LINKY, "metric": "aggregate_tps", "value": 100,
             "concurrency": 2, "method": "sum", "run": LINKY, "source": LINKY}  # fmt: skip
    lines = [run, {**request, "id": 1}, {**request, "id": 2}, claim]
    trace.write_text("".join(json.dumps(x) + "\n" for x in lines))
    md = summary(trace, tmp_path)
    assert md.count("www\u200d.evil") >= 2  # the ids are in the summary, neutralised
    html = gfm(md)
    assert "<a " not in html and "href" not in html
