"""The outline HTML goldens compare charts by: blind to layout, not to what a chart shows."""

from __future__ import annotations

import re

from report_helpers import chart_outline, outline_charts

from tests.report.conftest import GOLDEN

HTML = (GOLDEN / "case-a-ladder" / "report.html").read_text(encoding="utf-8")
SVGS = re.findall(r"<svg\b.*?</svg>", HTML, flags=re.DOTALL)
WALL_SPLIT = next(svg for svg in SVGS if "wall clock: prefill and the rest" in svg)


def test_every_chart_is_outlined_and_the_rest_kept() -> None:
    outlined = outline_charts(HTML)
    assert "<svg" in HTML and len(SVGS) == 6
    assert outlined.count("<svg> (chart outline") == 6
    assert re.sub(r"<svg\b.*?</svg>", "", HTML, flags=re.DOTALL) == re.sub(
        r"<svg> \(chart outline.*?</svg>", "", outlined, flags=re.DOTALL
    )


def test_an_outline_holds_titles_labels_and_every_mark() -> None:
    outline = chart_outline(WALL_SPLIT)
    assert "  title-text: wall clock: prefill and the rest" in outline
    assert "  axis-title: seconds of wall clock" in outline
    assert "  axis-label: a-retest-n1 | a-retest-n2 | a-retest-n4" in outline
    assert "  mark-rect (6):" in outline  # prefill and decode of three runs
    assert "    path d=M5,4h96v14h-96Z fill=#3566a8" in outline
    assert "'prefill 5%'" in outline


def test_layout_the_chart_library_chooses_is_not_compared() -> None:
    """What a new vl-convert may change: canvas size, offsets, fonts, sub-pixel places."""
    moved = WALL_SPLIT.replace('width="542" height="155"', 'width="560" height="150"')
    moved = moved.replace("translate(73,22)", "translate(80,20)")
    moved = moved.replace("DejaVu Sans, ", "")
    moved = moved.replace("h95.97866666666667v", "h96.1v")
    assert moved != WALL_SPLIT
    assert chart_outline(moved) == chart_outline(WALL_SPLIT)


def test_data_words_and_colours_are_compared() -> None:
    for old, new in [
        ("h95.97866666666667v", "h90v"),  # a bar's length: a figure
        (">prefill 5%<", ">prefill 6%<"),  # a label drawn on the chart
        (">seconds of wall clock<", ">seconds<"),  # an axis title
        ('fill="#e0a030"/>', 'fill="#3566a8"/>'),  # which part a bar is
    ]:
        assert old in WALL_SPLIT, old
        changed = WALL_SPLIT.replace(old, new, 1)
        assert chart_outline(changed) != chart_outline(WALL_SPLIT), (old, new)
    fewer = re.sub(r'<path d="M0,48\.07[^>]*/>', "", WALL_SPLIT, count=1)
    assert chart_outline(fewer) != chart_outline(WALL_SPLIT)  # a mark less
