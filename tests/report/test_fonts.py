"""The chart helpers' font subsets (reporter.render.fonts): made once, what they cover, and
which charts they must leave to the machine's fonts.

That a subset draws the charts byte for byte as the machine's font does is checked where the
helpers draw (tests/report/test_drawing.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reporter.render import charts, fonts

COVERAGE = fonts.Coverage(frozenset(fonts.CHARACTERS))


def spec(*labels: str, **fields: Any) -> dict[str, Any]:
    return {
        "mark": "text",
        "data": {"values": [{"label": label} for label in labels]},
        "encoding": {"text": {"field": "label"}},
        **fields,
    }


def test_the_charts_config_is_covered() -> None:
    assert (
        COVERAGE.declines(spec("N=4", "run 12", "−1.5", "7 µs…", "Zürich"), charts.CONFIG) is None
    )


@pytest.mark.parametrize(
    ("chart", "config", "reason"),
    [
        (spec("模型"), charts.CONFIG, "characters the subsets do not hold: ['型', '模']"),
        (spec("run ✓"), charts.CONFIG, "characters the subsets do not hold: ['✓']"),
        (spec("a\u202eb"), charts.CONFIG, "characters the subsets do not hold: ['\\u202e']"),
        (spec("tab\there"), charts.CONFIG, "a control character"),
        (spec("x"), {**charts.CONFIG, "font": "Liberation Sans"}, "the config sets no DejaVu Sans"),
        (spec("x"), {}, "the config sets no DejaVu Sans"),
        (spec("x", title={"text": "t", "font": "monospace"}), charts.CONFIG, 'font "monospace"'),
        (
            spec("x", title={"text": "t", "fontStyle": "italic"}),
            charts.CONFIG,
            'fontStyle "italic"',
        ),
        (spec("x", title={"text": "t", "fontWeight": 300}), charts.CONFIG, "fontWeight 300"),
        (
            spec("x", config={"axis": {"labelFontWeight": "lighter"}}),
            charts.CONFIG,
            'labelFontWeight "lighter"',
        ),
    ],
)
def test_what_the_subsets_may_not_draw_as_the_machine_fonts_is_declined(
    chart: dict[str, Any], config: dict[str, Any], reason: str
) -> None:
    assert (COVERAGE.declines(chart, config) or "").startswith(reason)


def test_regular_and_bold_weights_in_the_family_are_covered() -> None:
    title = {"text": "t", "font": "DejaVu Sans, sans-serif", "fontWeight": "bold"}
    assert COVERAGE.declines(spec("x", title=title), charts.CONFIG) is None
    assert COVERAGE.declines(spec("x", title={**title, "fontWeight": 700}), charts.CONFIG) is None


@pytest.fixture
def faces() -> dict[str, Path]:
    found = fonts.find_faces()
    if found is None:
        pytest.skip("no single DejaVu Sans regular and bold by fontconfig here")
    return found


@pytest.mark.slow
def test_the_subsets_are_made_once_with_the_characters_both_faces_hold(
    faces: dict[str, Path], tmp_path: Path
) -> None:
    from fontTools.ttLib import TTFont

    made = fonts.private_fonts(tmp_path)
    assert made is not None
    conf, coverage = made
    folder = conf.parent
    assert folder.parent == tmp_path
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        ["fonts.conf", "characters.txt", *(face.name for face in faces.values())]
    )
    assert f"<dir>{folder}</dir>" in conf.read_text(encoding="utf-8")
    assert coverage.characters <= set(fonts.CHARACTERS)
    assert set("0123456789 .,%×÷−…µ≤≥→") <= coverage.characters
    for name, face in faces.items():
        whole, subset = TTFont(face), TTFont(folder / face.name)
        assert subset["name"].getBestFamilyName() == fonts.FAMILY
        kept = {chr(c) for c in subset.getBestCmap()}
        assert coverage.characters <= kept, name
        # every covered character keeps its advance: a text measures the same
        whole_cmap, subset_cmap = whole.getBestCmap(), subset.getBestCmap()
        for char in coverage.characters:
            c = ord(char)
            assert whole["hmtx"][whole_cmap[c]] == subset["hmtx"][subset_cmap[c]], (name, char)
        assert (folder / face.name).stat().st_size < face.stat().st_size / 5
    # a second run reads the folder: nothing is written again
    stamps = {p.name: p.stat().st_mtime_ns for p in folder.iterdir()}
    assert fonts.private_fonts(tmp_path) == made
    assert {p.name: p.stat().st_mtime_ns for p in folder.iterdir()} == stamps


def test_a_cache_that_cannot_be_written_means_the_machine_fonts(
    faces: dict[str, Path], tmp_path: Path
) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    assert fonts.private_fonts(blocked) is None


def test_no_fontconfig_means_the_machine_fonts(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(*args: Any, **kwargs: Any) -> Any:
        raise FileNotFoundError("fc-list")

    monkeypatch.setattr(fonts.subprocess, "run", missing)
    assert fonts.find_faces() is None
    assert fonts.private_fonts() is None


def test_two_different_files_for_one_face_mean_the_machine_fonts(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    one, other = tmp_path / "a.ttf", tmp_path / "b.ttf"
    one.write_bytes(b"one")
    other.write_bytes(b"other")
    bold = tmp_path / "bold.ttf"
    bold.write_bytes(b"bold")
    listed = f"{one}\t80\t100\t0\n{other}\t80\t100\t0\n{bold}\t200\t100\t0\n"

    class Done:
        stdout = listed

    monkeypatch.setattr(fonts.subprocess, "run", lambda *a, **k: Done())
    assert fonts.find_faces() is None
    other.write_bytes(b"one")  # the same bytes twice: either file will do
    assert fonts.find_faces() == {"regular": one, "bold": bold}


def test_the_cache_follows_xdg_cache_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert fonts.cache_home() == tmp_path / "benchreport" / "fonts"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert fonts.cache_home() == Path.home() / ".cache" / "benchreport" / "fonts"


def test_the_subset_maker_writes_each_file_whole(tmp_path: Path) -> None:
    target = tmp_path / "f.bin"
    fonts._write_whole(target, b"x" * 10)
    fonts._write_whole(target, b"y" * 3)
    assert target.read_bytes() == b"yyy"
    assert [p.name for p in tmp_path.iterdir()] == ["f.bin"]  # no part left behind
