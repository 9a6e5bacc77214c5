"""The PDF report: WeasyPrint from the same HTML; every page renders; nothing is fetched."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from PIL import Image, ImageStat

from reporter.render.html import render_html
from reporter.render.pdf import FetchLog, html_to_pdf
from reporter.verdict import Verdict

# WeasyPrint takes seconds per report: the PDF tests run in the full lane (CI), not the quick one.
pytestmark = [pytest.mark.pdf, pytest.mark.slow]

POPPLER = all(shutil.which(tool) for tool in ("pdftoppm", "pdfinfo", "pdftotext"))
needs_poppler = pytest.mark.skipif(not POPPLER, reason="poppler-utils (pdftoppm) not installed")


def _pages(pdf: Path) -> int:
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True)
    line = next(x for x in info.stdout.splitlines() if x.startswith("Pages:"))
    return int(line.split()[1])


def _text(pdf: Path) -> str:
    out = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True,
                         text=True, check=True)  # fmt: skip
    return out.stdout


def _render_pages(pdf: Path, tmp_path: Path) -> list[Path]:
    subprocess.run(["pdftoppm", "-r", "40", "-png", str(pdf), str(tmp_path / "page")], check=True)
    return sorted(tmp_path.glob("page-*.png"))


def _not_blank(png: Path) -> bool:
    """Ink between the running header and footer: the page shows more than page furniture."""
    with Image.open(png) as im:
        gray = im.convert("L")
        w, h = gray.size
        body = gray.crop((0, int(h * 0.08), w, int(h * 0.92)))
        dark = body.point(lambda p: 255 if p < 240 else 0)
        return (ImageStat.Stat(dark).mean[0] / 255) * body.width * body.height >= 20


@pytest.fixture(scope="module")
def ladder_pdf(fixture_verdicts: Callable[[str], Verdict],
               tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, FetchLog]:  # fmt: skip
    log = FetchLog()
    pdf = html_to_pdf(render_html(fixture_verdicts("ladder.jsonl")), log)
    path = tmp_path_factory.mktemp("pdf") / "ladder.pdf"
    path.write_bytes(pdf)
    return path, log


def test_pdf_starts_as_a_pdf_and_fetched_nothing(ladder_pdf: tuple[Path, FetchLog]) -> None:
    path, log = ladder_pdf
    assert path.read_bytes()[:5] == b"%PDF-"
    assert log.refused == []
    assert log.allowed == []


@needs_poppler
def test_every_page_renders(ladder_pdf: tuple[Path, FetchLog], tmp_path: Path) -> None:
    path, _ = ladder_pdf
    pages = _pages(path)
    assert pages >= 4
    images = _render_pages(path, tmp_path)
    assert len(images) == pages
    assert all(_not_blank(p) for p in images)


@needs_poppler
def test_pdf_has_the_verdict_the_arithmetic_and_the_charts(
    ladder_pdf: tuple[Path, FetchLog],
) -> None:
    text = _text(ladder_pdf[0])
    assert "Inflated" in text
    assert "4 × 512 tokens ÷ 22.50 s = 91.0 tok/s; claimed 350 = 3.85×" in text
    # chart titles and axis titles are SVG text, drawn into the PDF as text
    for label in ("aggregate against N: ladder", "timeline", "completions",
                  "seconds from the first send", "requests finished"):  # fmt: skip
        assert label in text, label
    assert "page 1 of" in text


@needs_poppler
def test_hostile_strings_render_as_text(
    fixture_verdicts: Callable[[str], Verdict], tmp_path: Path
) -> None:
    log = FetchLog()
    path = tmp_path / "hostile.pdf"
    path.write_bytes(html_to_pdf(render_html(fixture_verdicts("hostile.jsonl")), log))
    assert log.refused == [] and log.allowed == []
    text = _text(path)
    assert "<script>alert(1)</script>" in text
    assert '"><img src=x onerror=alert(1)>' in text
    images = _render_pages(path, tmp_path)
    assert len(images) == _pages(path)
    assert all(_not_blank(p) for p in images)


def test_the_fetcher_refuses_files_and_network() -> None:
    page = (
        "<html><head><link rel=stylesheet href='http://evil.invalid/x.css'>"
        "<style>@import url('file:///etc/hostname');"
        " body { background: url(https://e.invalid/b.png) }</style></head><body>"
        "<img src='file:///etc/hostname'><img src='data:image/gif;base64,R0lGODlhAQABAAAAACw='>"
        "<p>text</p></body></html>"
    )
    log = FetchLog()
    assert html_to_pdf(page, log)[:5] == b"%PDF-"
    assert sorted(log.refused) == [
        "file:///etc/hostname",
        "file:///etc/hostname",
        "http://evil.invalid/x.css",
        "https://e.invalid/b.png",
    ]
    assert log.allowed == ["data:image/gif;base64,R0lGODlhAQABAAAAACw="]
