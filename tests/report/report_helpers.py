"""Helpers of the report tests: the golden cases, an HTML element lister, and chart outlines
to compare."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: The golden cases: case name → trace path relative to the repository root (goldens hold no
#: absolute path): every shipped trace, and each report fixture as `fixture-<name>`.
CASES = {
    **{p.stem: f"traces/{p.name}" for p in sorted((ROOT / "traces").glob("*.jsonl"))},
    **{
        f"fixture-{p.stem}": f"tests/fixtures/report/{p.name}"
        for p in sorted((ROOT / "tests" / "fixtures" / "report").glob("*.jsonl"))
    },
}
#: The cases the quick lane (`-m "not slow"`) renders: the hostile fixture (escaping) and a
#: file of repeats; the full lane renders every case.
QUICK_CASES = ("case-b-repeats", "fixture-hostile")


def case_params() -> list[Any]:
    """Every golden case as a parameter, those outside QUICK_CASES marked slow."""
    return [
        pytest.param(c, id=c, marks=() if c in QUICK_CASES else pytest.mark.slow)
        for c in sorted(CASES)
    ]


SVG_NS = "http://www.w3.org/2000/svg"


class Elements(HTMLParser):
    """Every start tag with its attributes, and the text of <style> elements."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.styles: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in_style = tag == "style"

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.styles.append(data)


def parse(html: str) -> Elements:
    parser = Elements()
    parser.feed(html)
    parser.close()
    return parser


# --------------------------------------------------------------------------- chart outlines

_SVG = re.compile(r"<svg\b.*?</svg>", re.DOTALL)
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e-?\d+)?")
#: What a chart says in words, by the role vega gives the text's group.
_WORDS = ("title-text", "axis-title", "axis-label", "legend-title", "legend-label")
#: Where a mark is drawn: the attributes that place and shape it, and its colours.
_GEOMETRY = ("d", "transform", "x", "y", "x1", "y1", "x2", "y2", "width", "height")
_PAINT = ("fill", "stroke", "stroke-dasharray", "opacity")


def _rounded(value: str) -> str:
    """Coordinates to the whole pixel: how a chart library formats them is not ours."""
    return _NUMBER.sub(lambda m: f"{round(float(m.group())):d}", value)


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _mark(element: ET.Element) -> str:
    """One drawn mark: its shape and place (rounded), its colours, any text it carries."""
    parts = [_local(element.tag)]
    parts += [f"{a}={_rounded(v)}" for a in _GEOMETRY if (v := element.get(a)) is not None]
    parts += [f"{a}={v}" for a in _PAINT if (v := element.get(a)) is not None]
    text = "".join(element.itertext())
    if text:
        parts.append(repr(text))
    return " ".join(parts)


def chart_outline(svg: str) -> str:
    """What a chart shows, without how the chart library lays it out.

    Its titles, axis titles and labels and legend entries word for word, and every data mark
    (line, point, bar, rule, text) with its place rounded to the pixel and its colour. Left
    out: the canvas size, the positions of titles, legends and grid lines, element ids, and
    fonts, all of which a new release of vl-convert may change without changing the chart.
    """
    root = ET.fromstring(svg)
    lines = ["<svg> (chart outline: tests/report/report_helpers.py chart_outline)"]
    for group in root.iter(f"{{{SVG_NS}}}g"):
        classes = (group.get("class") or "").split()
        kind = next((c for c in classes if c.startswith("mark-")), None)
        role = next((c.removeprefix("role-") for c in classes if c.startswith("role-")), None)
        if kind is None or role is None:
            continue
        children = list(group)
        if role in _WORDS:
            words = ["".join(child.itertext()) for child in children]
            lines.append(f"  {role}: " + " | ".join(words))
        elif role == "mark":
            lines.append(f"  {kind} ({len(children)}):")
            lines += [f"    {_mark(child)}" for child in children]
    lines.append("</svg>")
    return "\n".join(lines)


def outline_charts(html: str) -> str:
    """The HTML with every inline chart replaced by its outline (`chart_outline`)."""
    return _SVG.sub(lambda m: chart_outline(m.group()), html)
