"""Charts drawn by helper processes (reporter.render.drawing) are the charts drawn in process.

The CLI starts two helpers before the audit so that their JavaScript engines start while
the traces are checked; the report must not change by a byte, and a helper that dies or
fails must cost only time.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from reporter.render import charts, drawer, drawing
from reporter.verdict import Verdict


@pytest.fixture
def helpers() -> Iterator[None]:
    yield
    drawing.stop()


@pytest.mark.slow  # two helper processes start a JavaScript engine each: ~2 s of CPU
def test_helpers_draw_the_same_bytes_as_the_report_process(
    fixture_verdicts: Callable[[str], Verdict], helpers: None, real_chart_drawing: None
) -> None:
    verdict = fixture_verdicts("batched.jsonl")
    here = charts.draw_charts(verdict)
    drawing.start(2)
    assert drawing.running()
    there = charts.draw_charts(verdict)
    assert there == here
    assert [c.id for c in there.runs] == ["run-1", "run-2", "run-3", "run-4"]
    assert all(c.svg.startswith("<svg") for c in [*there.overview, *there.runs])


def test_a_helper_that_dies_leaves_its_charts_to_the_report_process(
    fixture_verdicts: Callable[[str], Verdict],
    helpers: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    verdict = fixture_verdicts("ladder.jsonl")
    here = charts.draw_charts(verdict)
    monkeypatch.setattr(drawing, "_SOURCE", "import sys; sys.exit(3)")
    drawing.start(2)
    there = charts.draw_charts(verdict)
    assert there == here
    assert not any(c.left_out for c in [*there.overview, *there.runs])


def test_a_chart_a_helper_cannot_draw_is_left_out_with_its_reason(
    fixture_verdicts: Callable[[str], Verdict],
    helpers: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    answer = '{"error": "unsupported mark"}'
    monkeypatch.setattr(
        drawing,
        "_SOURCE",
        f"import sys\nfor line in sys.stdin:\n    print({answer!r}, flush=True)\n",
    )
    drawing.start(1)
    drawn = charts.draw_charts(fixture_verdicts("ladder.jsonl"))
    assert drawn.overview and drawn.runs
    for chart in [*drawn.overview, *drawn.runs]:
        assert chart.svg == "" and chart.caption == ""
        assert chart.left_out == (
            "This chart was left out: it could not be drawn safely "
            f"(chart {chart.id}: cannot draw: unsupported mark)."
        )


def test_one_helper_on_a_busy_machine_and_one_more_per_spare_core(
    helpers: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(drawing, "WORKERS", 2)
    monkeypatch.setattr(drawing.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(drawing.os, "getloadavg", lambda: (5.0, 5.0, 5.0))
    monkeypatch.setattr(drawing, "_running_now", lambda: 6)
    assert drawing.spare_cores() == 0
    assert drawing.helpers_wanted() == 1
    monkeypatch.setattr(drawing, "_SOURCE", "import sys; sys.stdin.read()")
    drawing.start()
    assert len(drawing._workers) == 1
    drawing.stop()
    monkeypatch.setattr(drawing.os, "getloadavg", lambda: (0.3, 0.3, 0.3))
    assert drawing.spare_cores() == 1
    drawing.start()
    assert len(drawing._workers) == 2
    drawing.stop()
    monkeypatch.setattr(drawing, "WORKERS", 0)  # as in the tests: none at all
    drawing.start()
    assert not drawing.running()


def test_a_lagging_load_average_does_not_hide_an_idle_core(monkeypatch: pytest.MonkeyPatch) -> None:
    # the last minute still counts this program's previous run; nothing else runs now
    monkeypatch.setattr(drawing.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(drawing.os, "getloadavg", lambda: (1.4, 0.9, 0.5))
    monkeypatch.setattr(drawing, "_running_now", lambda: 0)
    assert drawing.spare_cores() == 2
    # a busy machine: both say so
    monkeypatch.setattr(drawing.os, "getloadavg", lambda: (6.0, 6.0, 6.0))
    monkeypatch.setattr(drawing, "_running_now", lambda: 5)
    assert drawing.spare_cores() == 0
    # no /proc: the average alone
    monkeypatch.setattr(drawing, "_running_now", lambda: None)
    monkeypatch.setattr(drawing.os, "getloadavg", lambda: (0.5, 0.5, 0.5))
    assert drawing.spare_cores() == 1


@pytest.mark.skipif(not Path("/proc/loadavg").exists(), reason="Linux only")
def test_the_threads_running_now_are_read_from_the_kernel() -> None:
    running = drawing._running_now()
    assert isinstance(running, int) and running >= 0


# --------------------------------------------------------------------------- the helpers' fonts

#: Labels a trace may hold: the helpers draw those whose every character has a glyph in
#: both DejaVu Sans faces, and leave the others (CJK, emoji) to the report process.
SCRIPTS = {
    "latin": ["émigré ő Ł ß", "AVAWAT Te Yo", "ﬁ ligature fi fl"],
    "greek and cyrillic": ["run-α β γ", "Тест кириллица"],
    "signs": ["N=4 → 8", "≤ 2× — … ÷ −1 µs"],
    "bidi": ["ab\u202ecd", "עברית 12", "العربية 3"],
    "cjk": ["日本語テスト"],
    "emoji": ["🦀 crab"],
}
DRAWN_BY_HELPERS = ["latin", "greek and cyrillic", "signs", "bidi"]


def _labels_spec(labels: list[str]) -> dict[str, object]:
    rows = [{"run": label, "s": k + 1.5} for k, label in enumerate(labels)]
    return {
        "data": {"values": rows},
        "mark": "bar",
        "encoding": {
            "y": {"field": "run", "type": "nominal", "title": None},
            "x": {"field": "s", "type": "quantitative", "title": "seconds ÷ run"},
            "color": {"field": "run", "type": "nominal"},
        },
        "title": f"runs: {labels[0]}",
    }


def _faces_found() -> dict[str, Path]:
    faces = drawer.find_faces()
    if faces is None:
        pytest.skip("fontconfig finds no DejaVu Sans regular and bold")
    return faces


def test_a_helper_draws_with_copies_of_the_two_faces_fontconfig_finds(helpers: None) -> None:
    faces = _faces_found()
    drawing.start(1)
    worker = drawing._workers[0]
    assert worker.stdin is not None and worker.stdout is not None
    worker.stdin.write('{"fonts": null}\n')
    worker.stdin.flush()
    conf = Path(json.loads(worker.stdout.readline())["fonts"])
    (directory,) = re.findall(r"<dir>(.*)</dir>", conf.read_text(encoding="utf-8"))
    copies = sorted(p for p in Path(directory).iterdir() if p != conf)
    assert [p.name for p in copies] == sorted(f.name for f in faces.values())
    assert {p.read_bytes() for p in copies} == {f.read_bytes() for f in faces.values()}
    drawing.stop()
    assert not Path(directory).exists()  # the copies go with the helper


@pytest.mark.slow  # a helper's engine and this process's: ~1 s of CPU
def test_labels_in_several_scripts_are_drawn_by_a_helper_as_in_process(
    helpers: None, real_chart_drawing: None
) -> None:
    _faces_found()
    drawing.start(1)
    batch = drawing.Batch(charts.CONFIG)
    specs = {name: _labels_spec(labels) for name, labels in SCRIPTS.items()}
    for spec in specs.values():
        batch.submit(spec)
    answers = dict(zip(specs, batch.results(), strict=True))
    assert {name for name, svg in answers.items() if isinstance(svg, str)} == set(DRAWN_BY_HELPERS)
    assert answers["cjk"] is None and answers["emoji"] is None  # declined: drawn in process
    for name in DRAWN_BY_HELPERS:
        there = charts.finished_svg(str(answers[name]), name)
        assert there == charts.to_svg(specs[name], name), name


@pytest.mark.slow  # a helper's engine: ~0.5 s of CPU
def test_hostile_labels_are_drawn_by_a_helper_as_in_process(
    fixture_verdicts: Callable[[str], Verdict],
    helpers: None,
    real_chart_drawing: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    verdict = fixture_verdicts("hostile.jsonl")
    here = charts.draw_charts(verdict)
    answers: list[str | Exception | None] = []
    results = drawing.Batch.results

    def kept(batch: drawing.Batch) -> list[str | Exception | None]:
        answers.extend(results(batch))
        return answers

    monkeypatch.setattr(drawing.Batch, "results", kept)
    drawing.start(1)
    there = charts.draw_charts(verdict)
    assert there == here
    assert answers and all(isinstance(a, str) for a in answers)  # none left to this process
    # the trace's bidi override, shown as its name, in a title the helper measured
    assert any("evil&lt;U+202E&gt;gnp.exe" in c.svg for c in [*there.overview, *there.runs])


def test_the_characters_of_a_font_are_read_as_fonttools_reads_them() -> None:
    ttlib = pytest.importorskip("fontTools.ttLib")
    for face in _faces_found().values():
        cmap = ttlib.TTFont(face).getBestCmap()
        expected = {c for c, glyph in cmap.items() if glyph != ".notdef"}
        assert drawer.characters(face.read_bytes()) == expected
    assert drawer.characters(b"not a font") is None


def test_the_faces_are_those_fontconfig_lists_once(tmp_path: Path) -> None:
    regular, bold, other = (tmp_path / n for n in ("r.ttf", "b.ttf", "o.ttf"))
    regular.write_bytes(b"regular")
    bold.write_bytes(b"bold")
    other.write_bytes(b"another regular")

    def listing(*lines: str) -> Callable[..., subprocess.CompletedProcess[str]]:
        text = "".join(f"{line}\n" for line in lines)
        return lambda args, **kw: subprocess.CompletedProcess(args, 0, stdout=text)

    found = drawer.find_faces(
        listing(f"{regular}\t80\t100\t0", f"{bold}\t200\t100\t0", f"{other}\t80\t87\t0")
    )
    assert found == {"regular": regular, "bold": bold}
    # a second, different file for a face: which one vl-convert picks is not known
    assert drawer.find_faces(listing(f"{regular}\t80\t100\t0", f"{other}\t80\t100\t0")) is None
    assert drawer.find_faces(listing(f"{regular}\t80\t100\t0")) is None  # no bold
    assert drawer.find_faces(listing()) is None

    def missing(args: list[str], **kw: object) -> None:
        raise FileNotFoundError(args[0])

    assert drawer.find_faces(missing) is None


def test_a_chart_is_declined_unless_the_two_faces_draw_every_text() -> None:
    faces = _faces_found()
    guard = drawer.Guard({name: face.read_bytes() for name, face in faces.items()})
    config = charts.CONFIG
    assert guard.declines(_labels_spec(SCRIPTS["signs"]), config) is None
    assert "日" in str(guard.declines(_labels_spec(SCRIPTS["cjk"]), config))
    assert guard.declines(_labels_spec(["two\nlines"]), config) == "a control character"
    italic = {"mark": {"type": "text", "fontStyle": "italic"}}
    assert guard.declines(italic, config) == 'fontStyle "italic"'
    serif = {"title": {"text": "t", "font": "DejaVu Serif"}}
    assert guard.declines(serif, config) == 'font "DejaVu Serif"'
    by_field = {"encoding": {"fontWeight": {"field": "w"}}}
    assert str(guard.declines(by_field, config)).startswith("fontWeight {")
    assert guard.declines({"mark": {"type": "text", "fontWeight": 700}}, config) is None
    assert guard.declines({}, {"font": "Liberation Sans"}) == "the config sets no DejaVu Sans"
