"""`--badge` and `--card`: what they say, that they are deterministic, and that they can
load or run nothing (the same checks the report's charts pass)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from html.parser import HTMLParser

import pytest

from reporter import api
from reporter.render.badge import badge_message, render_badge
from reporter.render.card import card_id, render_card
from reporter.render.svgcheck import check_svg
from reporter.verdict import Verdict

SVG = "{http://www.w3.org/2000/svg}"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("pair", "inflated up to 3.85×"),  # a-350 3.85× and b-840 2.09× are both inflated
        ("ladder", "inflated 3.85×"),
        ("honest", "supported"),
    ],
)
def test_the_badge_says_the_verdict_and_the_factor(
    name: str, message: str, audited: Callable[[str], Verdict]
) -> None:
    verdict = audited(name)
    assert badge_message(verdict) == message
    svg = render_badge(verdict)
    assert svg == render_badge(verdict)  # deterministic, byte for byte
    check_svg(svg, "badge")
    root = ET.fromstring(svg)
    assert root.get("aria-label") == f"audit: {message}"
    assert [t.text for t in root.iter(f"{SVG}text")] == ["audit", message]
    assert {el.tag.removeprefix(SVG) for el in root.iter()} <= {"svg", "title", "rect", "g", "text"}
    assert "href" not in svg and "url(" not in svg and "@import" not in svg


def test_a_serial_audit_without_claims_has_no_factor() -> None:
    verdict = api.audit(["traces/case-a-versions.jsonl"])
    assert badge_message(verdict) == "serial"


class _Page(HTMLParser):
    """The tags, attributes and text of an HTML fragment, as a browser's parser sees them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str]] = []
        self.text: list[str] = []
        self.style: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs.extend((k, v or "") for k, v in attrs)
        self._in_style = tag == "style"

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False

    def handle_data(self, data: str) -> None:
        (self.style if self._in_style else self.text).append(data)


def _parsed(html: str) -> _Page:
    page = _Page()
    page.feed(html)
    page.close()
    return page


def _inert(html: str, ident: str) -> _Page:
    page = _parsed(html)
    assert not {"script", "link", "img", "iframe", "object", "embed", "base", "meta", "form"} & set(
        page.tags
    )
    assert page.tags.count("style") == 1 and page.tags.count("svg") <= 1
    for name, value in page.attrs:
        assert not name.startswith("on") and name not in ("src", "style", "srcset"), name
        if name == "href":
            assert value.startswith(f"#{ident}-"), value
        if name == "id":
            assert value == ident or value.startswith(f"{ident}-"), value
    for url in re.findall(r"url\(([^)]*)\)", html):
        assert url.startswith(f"#{ident}-"), url
    # every rule of the one style block applies inside the card only
    css = "".join(page.style)
    selectors = re.findall(r"(?:^|})\s*([^{}]+)\{", css)
    assert selectors
    for group in selectors:
        for selector in group.split(","):
            assert selector.strip().startswith(".benchreport-card"), selector
    return page


@pytest.mark.slow
def test_the_card_holds_the_verdict_claims_questions_and_one_chart(
    audited: Callable[[str], Verdict],
) -> None:
    verdict = audited("pair")
    html = render_card(verdict)
    assert html == render_card(verdict)
    page = _inert(html, card_id(verdict))
    text = " ".join(" ".join(page.text).split())
    assert "Inflated a published figure is higher than the trace supports" in text
    # each claim against its recomputed figure, with its equation
    assert "4 × 512 tokens ÷ 22.50 s = 91.0 tok/s; claimed 350 = 3.85×" in text
    assert "3,493 tokens ÷ 8.70 s = 401.3 tok/s; claimed 840.1 = 2.09×" in text
    # the three questions, for the runs the claims rest on
    assert "1. How was the aggregate computed?" in text and "3. Does it grow with N?" in text
    assert "total ÷ wall: 2,048 tokens ÷ 22.50 s = 91.0 tok/s" in text
    assert "ladder (serial)" in text and "flat in N (serial)" in text
    assert "not-applicable: not a sweep over concurrency (every run at N=16)" in text
    assert "more run" not in text
    # one scaling chart: the sweep of the first claim's run (case A, flat in N)
    assert page.tags.count("svg") == 1
    assert "aggregate against N: case-a-retest" in text
    assert "93.0 → 91.0 tok/s, 0.98× for 4× the concurrency" in text
    assert len(html.encode()) < 40_000


@pytest.mark.slow
def test_hostile_strings_in_the_card_stay_text(audited: Callable[[str], Verdict]) -> None:
    for name in ("report-hostile", "hostile"):
        verdict = audited(name)
        html = render_card(verdict)
        page = _inert(html, card_id(verdict))
        text = "".join(page.text)
        assert "\x1b" not in html and "\u202e" not in html
        if name == "report-hostile":
            assert '"><img src=x onerror=alert(1)>' in text  # shown, as text, not parsed
            assert "<script>alert(1)</script>" in text
        else:
            # the claim's sweep, drawn with the hostile group as its title, as SVG text
            assert page.tags.count("svg") == 1
            assert "aggregate against N: </svg><script>alert(2)</script><U+202E>&lt;" in text


@pytest.mark.slow
def test_a_claim_the_card_cannot_judge_by_its_factor_says_why() -> None:
    verdict = api.audit(
        ["traces/case-a-ladder.jsonl"],
        claim_texts=["aggregate=91 tok/s N=4 run=a-retest-n4 id=mine", "stream=45 tok/s run=nope"],
    )
    text = " ".join("".join(_parsed(render_card(verdict)).text).split())
    # the figure holds (1.00×) but its concurrency was not real: the card says so
    assert "mine: aggregate tok/s 91.0 at N=4; recomputed 91.0 (1.00×)" in text
    assert "the figure holds, but run a-retest-n4 was served one request at a time" in text
    # no recomputed figure: no factor printed, the reason instead
    assert "single-stream tok/s 45.0names run 'nope', which is not in the trace" in text
    assert "(n/a)" not in text
