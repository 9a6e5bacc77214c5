"""Charts drawn by helper processes (reporter.render.drawing) are the charts drawn in process.

The CLI starts two helpers before the audit so that their JavaScript engines start while
the traces are checked; the report must not change by a byte, and a helper that dies or
fails must cost only time.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from reporter import api
from reporter.render import chartjobs, drawing, fonts
from reporter.verdict import Verdict
from tests.report.conftest import ROOT


@pytest.fixture
def helpers() -> Iterator[None]:
    yield
    drawing.stop()


@pytest.mark.slow  # two helper processes start a JavaScript engine each: ~2 s of CPU
def test_helpers_make_the_same_charts_as_the_report_process(
    fixture_verdicts: Callable[[str], Verdict], helpers: None, real_chart_drawing: None
) -> None:
    verdict = fixture_verdicts("batched.jsonl")
    here = drawing.draw_charts(verdict)
    drawing.start(2)
    assert drawing.running()
    drawing.send(verdict)
    assert drawing._sent is not None and drawing._sent[0] is verdict
    batch = drawing._sent[1]
    there = drawing.draw_charts(verdict)
    assert drawing._sent is None
    assert there == here
    assert batch.refused == {}
    assert [c.id for c in there.runs] == ["run-1", "run-2", "run-3", "run-4"]
    assert all(c.svg.startswith("<svg") for c in [*there.overview, *there.runs])
    # a second verdict is sent anew: nothing of the first one's batch is reused, and a batch
    # left uncollected ends before the next one starts (the helpers answer one at a time)
    other = fixture_verdicts("ladder.jsonl")
    assert drawing.draw_charts(other) == _in_process(other)
    drawing.send(verdict)
    drawing.send(other)
    assert drawing.draw_charts(other) == _in_process(other)
    assert drawing.draw_charts(verdict) == here


@pytest.mark.slow  # two helpers, and the 22 charts of the shipped traces drawn twice: ~6 s
def test_helpers_drawing_with_the_font_subsets_draw_the_shipped_traces_byte_for_byte(
    helpers: None, real_chart_drawing: None
) -> None:
    if fonts.private_fonts() is None:
        pytest.skip("no DejaVu Sans, fontconfig or fontTools here: helpers use the machine's fonts")
    verdict = api.audit(sorted(str(p) for p in (ROOT / "traces").glob("*.jsonl")))
    there, batch = _by_helpers(verdict)
    assert there == (here := _in_process(verdict))
    assert batch.refused == {}  # every chart drawn with the subsets
    assert len(here.overview) + len(here.runs) == 22


@pytest.mark.slow  # two helpers start a JavaScript engine each: ~2 s of CPU
def test_a_chart_the_font_subsets_do_not_cover_is_drawn_by_the_report_process(
    fixture_verdicts: Callable[[str], Verdict], helpers: None, real_chart_drawing: None
) -> None:
    if fonts.private_fonts() is None:
        pytest.skip("no DejaVu Sans, fontconfig or fontTools here: helpers use the machine's fonts")
    verdict = fixture_verdicts("batched.jsonl")
    first, *rest = verdict.series.runs
    renamed = dataclasses.replace(
        verdict,
        series=dataclasses.replace(
            verdict.series, runs=[dataclasses.replace(first, run="模型 ✓"), *rest]
        ),
    )
    there, batch = _by_helpers(renamed)
    assert there == (here := _in_process(renamed))
    index = chartjobs.chart_jobs(renamed).index((chartjobs.RUN, 0))
    assert list(batch.refused) == [index]
    assert "NotCovered: chart run-1: characters the subsets do not hold" in batch.refused[index]
    assert "模型 ✓" in here.runs[0].svg


def _by_helpers(verdict: Verdict, count: int = 2) -> tuple[chartjobs.Drawn, drawing.Batch]:
    """The charts drawn by `count` helpers, and the batch that sent them (what they refused)."""
    drawing.start(count)
    drawing.send(verdict)
    assert drawing._sent is not None
    batch = drawing._sent[1]
    return drawing.draw_charts(verdict), batch


def _in_process(verdict: Verdict) -> chartjobs.Drawn:
    workers, drawing._workers[:] = list(drawing._workers), []
    try:
        return drawing.draw_charts(verdict)
    finally:
        drawing._workers[:] = workers


@pytest.mark.slow  # a helper starts a JavaScript engine: ~1 s of CPU
def test_the_report_process_imports_no_chart_code_when_the_helpers_make_every_chart(
    tmp_path: Path,
) -> None:
    trace = ROOT / "traces" / "honest-batched.jsonl"
    program = (
        "import sys\n"
        "from reporter import api\n"
        "api.prepare_outputs(default_html=True)\n"
        f"verdict = api.audit([{str(trace)!r}])\n"
        "api.begin_outputs(verdict)\n"
        f"api.render_outputs(verdict, html={str(tmp_path / 'report.html')!r})\n"
        "print(sorted(m for m in ('altair', 'vl_convert', 'reporter.render.charts')"
        " if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert done.stdout.strip() == "[]"
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert page.count("<svg") >= 3


@pytest.mark.parametrize(
    ("options", "started"),
    [
        ([], True),
        pytest.param(["--pdf", "r.pdf"], True, marks=pytest.mark.slow),
        pytest.param(["--no-html"], False, marks=pytest.mark.slow),
        pytest.param(["--json", "v.json"], False, marks=pytest.mark.slow),
    ],
)
def test_the_cli_starts_the_helpers_before_pandas_only_for_a_report(
    tmp_path: Path, options: list[str], started: bool
) -> None:
    # the helpers start on the core that the import of pandas and pyarrow leaves idle; the
    # start is recorded here, not carried out (nothing is drawn: --pdf is never written)
    program = (
        "import sys\n"
        "from reporter.render import drawing\n"
        "def start(count=None):\n"
        "    print('start, pandas loaded:', 'pandas' in sys.modules, file=sys.stderr)\n"
        "    sys.exit(0)\n"
        "drawing.start = start\n"
        "from reporter.cli import main\n"
        "main.main(sys.argv[1:])\n"
    )
    trace = str(ROOT / "traces" / "honest-batched.jsonl")
    done = subprocess.run(
        [sys.executable, "-c", program, "audit", trace, *options],
        capture_output=True, text=True, cwd=tmp_path, check=False,
    )  # fmt: skip
    if started:
        assert done.stderr.strip() == "start, pandas loaded: False"
        assert done.returncode == 0
    else:
        assert "start" not in done.stderr
        assert done.returncode in (0, 1)


@pytest.mark.slow
def test_a_helper_that_dies_leaves_its_charts_to_the_report_process(
    fixture_verdicts: Callable[[str], Verdict],
    helpers: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    verdict = fixture_verdicts("ladder.jsonl")
    here = drawing.draw_charts(verdict)
    monkeypatch.setattr(drawing, "_SOURCE", "import sys; sys.exit(3)")
    drawing.start(2)
    there = drawing.draw_charts(verdict)
    assert there == here
    assert not any(c.left_out for c in [*there.overview, *there.runs])


#: A helper that reads the verdict, then answers every job with this JSON text.
_ANSWERING = (
    "import sys; sys.path.insert(0, sys.argv[1])\n"
    "from reporter.render import drawing as d\n"
    "d._read(sys.stdin.buffer)\n"
    "while True:\n"
    "    d._read(sys.stdin.buffer)\n"
    "    d._write(sys.stdout.buffer, {answer!r}.encode())\n"
)
_SVG = '<svg xmlns="http://www.w3.org/2000/svg">{}</svg>'
_EVIL_CHART = {"id": "x", "title": "t", "caption": "c", "svg": _SVG.format('<image href="x.png"/>')}
_EVIL = json.dumps({"charts": [_EVIL_CHART], "notes": []})


@pytest.mark.parametrize(
    ("answer", "refused"),
    [
        ('{"error": "RuntimeError: no"}', "RuntimeError: no"),
        ("[1, 2]", "the answer is not an object"),
        ('{"charts": [{"id": "x"}], "notes": []}', "refused answer: "),
        ('{"charts": [], "notes": [3]}', "refused answer: notes: expected a list of texts"),
        (
            '{"charts": [{"id": "x", "title": "t", "caption": "c", "svg": 7}], "notes": []}',
            "refused answer: chart 'x': a field of the wrong type",
        ),
        (_EVIL, "refused answer: chart x: refused element <image> in the SVG"),
    ],
)
@pytest.mark.slow
def test_a_job_a_helper_fails_or_answers_wrongly_is_made_by_the_report_process(
    fixture_verdicts: Callable[[str], Verdict],
    helpers: None,
    monkeypatch: pytest.MonkeyPatch,
    answer: str,
    refused: str,
) -> None:
    monkeypatch.setattr(drawing, "_SOURCE", _ANSWERING.format(answer=answer))
    verdict = fixture_verdicts("ladder.jsonl")
    here = drawing.draw_charts(verdict)
    there, batch = _by_helpers(verdict, 1)
    assert there == here
    assert len(batch.refused) == len(chartjobs.chart_jobs(verdict))
    assert all(reason.startswith(refused) for reason in batch.refused.values())


@pytest.mark.slow  # a helper starts a JavaScript engine: ~1 s of CPU
def test_a_chart_a_helper_cannot_draw_is_left_out_with_its_reason(
    fixture_verdicts: Callable[[str], Verdict],
    helpers: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # vl-convert in the helper refuses every chart's spec: the helper leaves each chart out,
    # as the report process would, and says why
    monkeypatch.setattr(
        drawing,
        "_SOURCE",
        "import sys; sys.path.insert(0, sys.argv[1])\n"
        "import vl_convert\n"
        "def refuse(spec, *args, **kwargs):\n"
        "    if spec == {'mark': 'point'}:\n"
        "        return ''  # the engine's start\n"
        "    raise ValueError('unsupported mark')\n"
        "vl_convert.vegalite_to_svg = refuse\n"
        "from reporter.render import drawing\n"
        "drawing.serve()\n",
    )
    drawing.start(1)
    drawn = drawing.draw_charts(fixture_verdicts("ladder.jsonl"))
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


def test_a_process_that_started_helpers_reaps_them_at_its_exit(tmp_path: Path) -> None:
    # the helper is killed at exit without waiting for it to draw; left unreaped, Python
    # reports a subprocess still running (a ResourceWarning, shown with -W default)
    program = "from reporter.render import drawing\ndrawing.start(1)\nassert drawing.running()\n"
    done = subprocess.run(
        [sys.executable, "-W", "always::ResourceWarning", "-c", program],
        capture_output=True, text=True, cwd=ROOT, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "still running" not in done.stderr
