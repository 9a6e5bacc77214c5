"""The HTML report: self-contained, deterministic, and holding what DESIGN.md asks of it."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from markupsafe import escape
from report_helpers import parse

from reporter import api
from reporter.cli import main
from reporter.render.html import render_html
from reporter.verdict import Verdict

ROOT = Path(__file__).resolve().parents[2]
LADDER = "tests/fixtures/report/ladder.jsonl"


@pytest.fixture(scope="module")
def ladder_html(fixture_verdicts: Callable[[str], Verdict]) -> str:
    return render_html(fixture_verdicts("ladder.jsonl"))


def test_nothing_is_loaded_from_anywhere(ladder_html: str) -> None:
    doc = parse(ladder_html)
    names = {tag for tag, _ in doc.tags}
    assert not names & {"script", "iframe", "img", "object", "embed", "image", "foreignobject"}
    links = [attrs for tag, attrs in doc.tags if tag == "link"]
    assert links == [{"rel": "icon", "href": "data:,"}]
    assert [attrs for tag, attrs in doc.tags if "src" in attrs] == []
    hrefs = {attrs["href"] for _, attrs in doc.tags if attrs.get("href")}
    assert all(h.startswith("#") or h == "data:," for h in hrefs), hrefs
    css = "".join(doc.styles)
    assert "@import" not in css
    assert "url(" not in css
    assert "@font-face" not in css
    assert all(not a.startswith("on") for _, attrs in doc.tags for a in attrs)


def test_content_security_policy_forbids_scripts_and_fetches(ladder_html: str) -> None:
    doc = parse(ladder_html)
    csp = [a["content"] for t, a in doc.tags if t == "meta" and a.get("http-equiv")]
    assert csp == [
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src 'none'; "
        "script-src 'none'; connect-src 'none'; frame-src 'none'; form-action 'none'; "
        "base-uri 'none'"
    ]


def test_ids_are_unique_across_the_inline_svgs(ladder_html: str) -> None:
    ids = [attrs["id"] for _, attrs in parse(ladder_html).tags if attrs.get("id")]
    assert len(ids) == len(set(ids))
    targets = {h[1:] for _, a in parse(ladder_html).tags if (h := a.get("href")) and h[0] == "#"}
    assert targets <= set(ids)
    clips = [i for i in ids if "-" in i and i.split("-")[0] in ("run", "scaling", "wall")]
    assert clips, "the charts' clip paths carry the chart's name"


@pytest.mark.slow
def test_same_input_same_bytes(
    fixture_verdicts: Callable[[str], Verdict], ladder_html: str, real_chart_drawing: None
) -> None:
    """Drawn again, charts included, the report is the same to the byte."""
    again = render_html(fixture_verdicts("ladder.jsonl"))
    assert (
        hashlib.sha256(again.encode()).hexdigest()
        == hashlib.sha256(ladder_html.encode()).hexdigest()
    )


def test_the_claim_with_its_arithmetic(ladder_html: str) -> None:
    assert '<p class="equation">4 × 512 tokens ÷ 22.50 s = 91.0 tok/s; claimed 350 = 3.85×</p>' in (
        ladder_html
    )
    assert '<pre class="arith">run case-a-n4: 2,048 tokens ÷ 22.50 s = 91.0 tok/s\n</pre>' in (
        ladder_html
    )
    assert '<span class="badge v-inflated">Inflated</span>' in ladder_html


def test_three_questions_and_what_the_figure_contains(ladder_html: str) -> None:
    assert "<th>1. How was the aggregate computed?</th>" in ladder_html
    assert (
        '<td class="long"><bdi>total ÷ wall: 2,048 tokens ÷ 22.50 s = 91.0 tok/s; the sum of '
        "self-reported rates would be 368.0</bdi></td>"
    ) in ladder_html
    assert '<td class="long"><bdi>ladder (serial)</bdi></td>' in ladder_html
    row = (
        '<tr><td class="id"><bdi>case-a-n4</bdi></td><td><bdi>forced</bdi></td><td>requested 512; '
        'got 512</td><td class="num">24</td>'
    )
    assert row in ladder_html


def test_findings_link_to_rule_pages_that_are_in_the_report(ladder_html: str) -> None:
    doc = parse(ladder_html)
    links = {a["href"] for t, a in doc.tags if t == "a" and a.get("class") == "code"}
    pages = {a["id"] for t, a in doc.tags if t == "article" and a.get("class") == "rule-page"}
    assert {"#BR001", "#BR003", "#BR005"} <= links
    assert pages == {code[1:] for code in links}
    assert "<h4>What it checks</h4>" in ladder_html


def test_inputs_hash_and_rerun_command(ladder_html: str) -> None:
    digest = hashlib.sha256((ROOT / LADDER).read_bytes()).hexdigest()
    assert f'<td class="hash"><code>{digest}</code></td>' in ladder_html
    assert f'<pre class="command">benchreport audit {LADDER}</pre>' in ladder_html
    # its runs state every setting, or their requests count it (the prompt tokens)
    assert '<p class="none">Nothing: stop mode, prompt and context length' in ladder_html
    assert "/work/" not in ladder_html and "/root/" not in ladder_html


@pytest.mark.slow
def test_default_output_is_report_html_in_the_working_directory(
    fixture_verdicts: Callable[[str], Verdict], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    written = api.render_outputs(fixture_verdicts("batched.jsonl"), default_html=True)
    assert written == ["report.html"]
    assert (tmp_path / "report.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


@pytest.mark.slow
def test_cli_writes_every_document_and_prints_the_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trace = ROOT / "tests" / "fixtures" / "report" / "batched.jsonl"
    args = ["audit", str(trace), "-o", "r.html", "--md", "s.md", "--json", "v.json"]
    monkeypatch.setattr("sys.argv", ["benchreport", *args])
    runner = CliRunner()
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(main, args)
    assert result.exit_code == 0, result.output
    assert result.stderr == "wrote v.json\nwrote r.html\nwrote s.md\n"
    html = Path("r.html").read_text(encoding="utf-8")
    assert f'<pre class="command">benchreport audit {trace} -o r.html --md s.md' in html
    assert (
        Path("s.md")
        .read_text(encoding="utf-8")
        .startswith("### benchreport audit: **Supported**\n")
    )


@pytest.mark.slow
def test_cli_rerun_command_quotes_what_the_shell_would_split(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trace = tmp_path / "my trace's.jsonl"
    trace.write_bytes((ROOT / "tests" / "fixtures" / "report" / "batched.jsonl").read_bytes())
    args = ["audit", "my trace's.jsonl", "--claim", "aggregate=600 N=8", "-o", "r.html"]
    monkeypatch.setattr("sys.argv", ["benchreport", *args])
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    expected = "benchreport audit 'my trace'\"'\"'s.jsonl' --claim 'aggregate=600 N=8' -o r.html"
    assert f'<pre class="command">{escape(expected)}</pre>' in html


@pytest.mark.slow
def test_cli_default_html(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    trace = ROOT / "tests" / "fixtures" / "report" / "batched.jsonl"
    runner = CliRunner()
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(main, ["audit", str(trace)])
    assert result.exit_code == 0, result.output
    assert result.stderr == "wrote report.html\n"
    assert Path("report.html").is_file()


def _rows_and_cards(html: str) -> tuple[dict[str, str], dict[str, str]]:
    """Each run row by its id, each finding card by its id (their HTML)."""
    rows = dict(re.findall(r'<tr id="(run-row-\d+)">(.*?)</tr>', html, re.DOTALL))
    cards = dict(re.findall(r'<article class="finding [^"]*" id="([^"]+)">(.*?)</article>',
                            html, re.DOTALL))  # fmt: skip
    return rows, cards


def test_every_finding_about_a_run_is_linked_from_its_row_and_back(ladder_html: str) -> None:
    rows, cards = _rows_and_cards(ladder_html)
    assert len(rows) == 3 and cards
    linked = 0
    for card_id, card in cards.items():
        for run in [a for a in parse(card).tags if a[0] == "a"]:
            target = run[1]["href"][1:]
            if target.startswith("run-row-"):
                assert f'href="#{card_id}"' in rows[target], (card_id, target)
                linked += 1
    for row_id, row in rows.items():
        for href in [a["href"][1:] for tag, a in parse(row).tags if tag == "a"]:
            assert f'href="#{row_id}"' in cards[href], (row_id, href)
    # BR001 on the claim's run, BR003 on two runs, BR005 on the whole ladder (3 runs), ...
    assert linked >= 6


def test_runs_are_shown_by_group_with_their_questions_and_charts(ladder_html: str) -> None:
    section = ladder_html[ladder_html.index('<section class="group" id="group-1">') :]
    section = section[: section.index("</section>")]
    assert section.count('<tr id="run-row-') == 3
    assert "<th>1. How was the aggregate computed?</th>" in section
    assert 'id="chart-scaling-1"' in section and 'id="chart-run-3"' in section


@pytest.mark.slow
def test_long_per_run_tables_collapse_past_a_handful_of_runs(
    fixture_verdicts: Callable[[str], Verdict],
) -> None:
    few = render_html(fixture_verdicts("ladder.jsonl"))
    assert few.count('<details class="per-run" open>') == 3
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(ROOT)
        many = render_html(api.audit(["traces/honest-batched.jsonl"]))
    assert many.count('<details class="per-run">') == 3
    assert '<details class="per-run" open>' not in many


def test_what_the_trace_did_not_disclose_is_listed(
    fixture_verdicts: Callable[[str], Verdict],
) -> None:
    page = render_html(fixture_verdicts("hostile.jsonl"))
    assert "<li><bdi>content type: all runs</bdi></li>" in page
    assert "<li><bdi>whether speculative decoding was on: all runs</bdi></li>" in page


@pytest.mark.slow
def test_a_rule_page_shows_the_severities_its_findings_fired_at() -> None:
    """BR012 is a warning by default; among the shipped traces it fires only as an info, and
    BR001 fires both as an error (a claim) and as an info (runs without one)."""
    from reporter.render.context import build_context

    verdict = api.audit(sorted((ROOT / "traces").glob("*.jsonl")))
    pages = {p.code: p.severities for p in build_context(verdict, charts=False).rule_pages}
    fired: dict[str, set[str]] = {}
    for f in verdict.findings:
        if f.fired:
            fired.setdefault(f.code, set()).add(str(f.severity))
    assert {code: set(s) for code, s in pages.items()} == fired
    assert pages["BR012"] == ["info"]
    assert pages["BR001"] == ["error", "info"]
    html = render_html(verdict)
    heading = re.search(r'<article class="rule-page" id="BR012">\s*<h3>(.*?)</h3>', html, re.S)
    assert heading and ">info</span>" in heading.group(1) and "warning" not in heading.group(1)
