"""The report's charts, made by helper processes started while the audit runs.

A chart costs three things: altair's import and the Vega-Lite spec (reporter.render.charts),
vl-convert's JavaScript engine, which it starts once per process (about 0.4 s of CPU) and
which holds the GIL while it draws, and the drawing itself, most of which is vega measuring
text. `start()` launches one helper process, and a second when a core is idle: the first
imports altair and the chart code, then forks the second, so that the import is paid once;
it starts its engine, and the fork starts its own once the first one's is up (two engines
starting at once beside the audit took a core from it). The CLI calls `start()` before it
imports the audit's stack, so all of this runs on the core the report process leaves idle.
They draw with subsets of the charts' font (reporter.render.fonts), which vl-convert measures
faster. Once the audit is done, `send(verdict)` hands the helpers the verdict (pickled, a few
hundred kB for the shipped traces) and the charts one job at a time (`chart_jobs`: the scaling
charts, the wall-clock split, the bandwidth chart, each run's timeline), and the helpers
specify and draw them while the report process prints the summary and builds the rest of the
report; it never imports altair or starts an engine of its own. A helper runs the very code
the report process would (`charts.made`), so the report is byte for byte the same.

Without `start()` (library use, tests) nothing is launched and every chart is made in
process. A helper that fails or dies, or a chart its fonts do not cover, costs nothing but
time: the report process makes the jobs the helpers did not.

This module imports neither altair nor vl-convert: the report process loads them only to
make a chart no helper made.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import json
import os
import pickle
import queue
import struct
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from reporter.render.chartjobs import Drawn, Job, Made, assembled, chart_jobs

if TYPE_CHECKING:
    from reporter.model import Verdict

#: Helper processes: two, the cores of the smallest machine the audits run on.
WORKERS = 2
#: The helper's program: `serve()` from the same package the report process runs (the
#: folder holding it is the argument), with nothing else of the caller's on the path.
_SOURCE = (
    "import os, sys; sys.path.insert(0, sys.argv[1]); "
    "from reporter.render.drawing import serve; serve(sys.argv[2:]); os._exit(0)"
)
#: What a message to a helper holds: a verdict, or a chart job about the last one sent.
VERDICT, JOB = "verdict", "job"


@dataclass
class _Helper:
    """A helper process as the report process sees it: where its jobs go, where its answers
    come from."""

    input: IO[bytes]
    output: IO[bytes]


_workers: list[_Helper] = []
#: The first helper's process (the others are its forks), and ended ones not yet reaped.
_process: subprocess.Popen[bytes] | None = None
_ended: list[subprocess.Popen[bytes]] = []
#: The verdict handed to the helpers by `send` and the batch drawing it.
_sent: tuple[Verdict, Batch] | None = None


def spare_cores() -> int:
    """Cores no other process is using: the cores less the load, which is the smaller of the
    load average of the last minute and the threads running now besides this one.

    The average lags: it still counts, for a minute, the processes that just ended, among
    them this program's own previous runs (a benchmark's, a script's), so alone it calls an
    idle machine busy. The count of running threads is a sample of one instant. Either one
    saying a core is idle is taken at its word: a wrong guess costs one engine's start.
    """
    try:
        load = os.getloadavg()[0]
    except OSError:
        return 0
    running = _running_now()
    if running is not None:
        load = min(load, running)
    return max(0, int((os.cpu_count() or 1) - load))


def _running_now() -> int | None:
    """Threads running or ready to run now, other than this one (Linux: /proc/loadavg)."""
    try:
        fields = Path("/proc/loadavg").read_text(encoding="ascii").split()
        return max(0, int(fields[3].split("/")[0]) - 1)
    except (OSError, ValueError, IndexError):
        return None


def helpers_wanted() -> int:
    """One helper, and one more for each spare core, up to `WORKERS`.

    The engine holds the GIL while it starts and draws, so in the report process it can do
    nothing alongside the audit. The first helper costs no more CPU than drawing in process
    (one engine and one import of altair either way) and does it while the audit runs. A
    second one, a fork of the first, costs its own engine (about 0.4 s of CPU) and pays only
    on a free core, where it draws half the charts while the report process waits: on a busy
    machine (a 2-core machine at load 4-7, measured when each helper was started alone) two
    helpers cost a second of CPU more and were no faster.
    """
    return min(WORKERS, 1 + spare_cores())


def prepare(*, html: str | None = None, pdf: str | None = None, default_html: bool = False) -> None:
    """Before the audit: start the helpers when a report will be drawn (an HTML page, named
    or by default, or a PDF), so that they get ready while the audit runs."""
    if html or pdf or default_html:
        start()


def start(count: int | None = None) -> None:
    """Launch the helpers (once): `count`, else `helpers_wanted()`. One process is started;
    it imports altair and the chart code, then forks the others, so that the import is paid
    once; each then starts its own engine. All of it in the background, while the audit runs.
    """
    global _process
    if _workers:
        return
    _ended[:] = [process for process in _ended if process.poll() is None]
    count = helpers_wanted() if count is None else count
    if not hasattr(os, "fork"):  # the others are forks of the first (POSIX)
        count = min(count, 1)
    if count < 1:
        return
    # each fork's pipes: it reads its jobs from the first fd and answers on the second
    forks = [(*os.pipe(), *os.pipe()) for _ in range(count - 1)]
    theirs = [fd for jobs_r, _, _, answers_w in forks for fd in (jobs_r, answers_w)]
    try:
        # -P: no script or current directory on sys.path, so that no file of the user's
        # can stand in for a module the helper imports. One BLAS thread: numpy's thread
        # pool would be started by the import, before the fork.
        _process = subprocess.Popen(
            [sys.executable, "-P", "-c", _SOURCE, str(Path(__file__).resolve().parents[2]),
             *(f"{jobs_r},{answers_w}" for jobs_r, _, _, answers_w in forks)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            pass_fds=theirs,
            env={**os.environ, "OPENBLAS_NUM_THREADS": "1"},
        )  # fmt: skip
    except OSError:
        for fd in (fd for pipes in forks for fd in pipes):
            os.close(fd)
        return
    for fd in theirs:  # the helper has them now
        os.close(fd)
    assert _process.stdin is not None and _process.stdout is not None
    _workers.append(_Helper(_process.stdin, _process.stdout))
    for _, jobs_w, answers_r, _ in forks:
        _workers.append(_Helper(os.fdopen(jobs_w, "wb"), os.fdopen(answers_r, "rb")))
    atexit.register(_stop_at_exit)


def stop() -> None:
    """End the helpers without waiting for them: each ends at once when its input closes
    (or, stuck in a chart, when it next writes), and the first one is killed."""
    global _sent, _process
    _sent = None
    while _workers:
        helper = _workers.pop()
        for stream in (helper.input, helper.output):
            with contextlib.suppress(OSError):
                stream.close()
    if _process is not None:
        _process.kill()
        _ended.append(_process)
        _process = None


#: How long the report process waits at its exit for a killed helper to be reaped.
REAP_SECONDS = 1.0


def _stop_at_exit() -> None:
    """`stop`, then reap the killed helpers: a killed process ends at once, and one left
    unreaped at exit is reported by Python as a subprocess still running."""
    stop()
    while _ended:
        with contextlib.suppress(subprocess.TimeoutExpired, OSError):
            _ended.pop().wait(timeout=REAP_SECONDS)


def running() -> bool:
    return bool(_workers)


def send(verdict: Verdict) -> None:
    """Hand `verdict` to the helpers, which make its charts while the caller goes on;
    `draw_charts(verdict)` collects them. Nothing when no helper runs."""
    global _sent
    if running() and (_sent is None or _sent[0] is not verdict):
        if _sent is not None:
            _sent[1].results()  # the helpers answer one batch at a time: let the last one end
        _sent = (verdict, Batch(verdict))


def draw_charts(verdict: Verdict) -> Drawn:
    """Every chart of the report, in the order the report shows them: made by the helpers
    when they were started, each job they did not make here."""
    global _sent
    jobs = chart_jobs(verdict)
    results: list[Made | None] = [None] * len(jobs)
    if running():
        send(verdict)  # nothing when the CLI has sent it already
        assert _sent is not None
        results = _sent[1].results()
        _sent = None
    made = [result if result is not None else _made_here(verdict, job)
            for job, result in zip(jobs, results, strict=True)]  # fmt: skip
    return assembled(verdict, jobs, made)


def _made_here(verdict: Verdict, job: Job) -> Made:
    from reporter.render.charts import made

    return made(verdict, job)


class Batch:
    """One verdict's chart jobs, handed to the helpers one at a time as each helper is free."""

    def __init__(self, verdict: Verdict) -> None:
        self._verdict = pickle.dumps((VERDICT, verdict), protocol=pickle.HIGHEST_PROTOCOL)
        jobs = chart_jobs(verdict)
        self._results: list[Made | None] = [None] * len(jobs)
        #: Why a helper did not make a job (the error it met, or the chart its fonts decline).
        self.refused: dict[int, str] = {}
        self._jobs: queue.Queue[tuple[int, Job] | None] = queue.Queue()
        for item in enumerate(jobs):
            self._jobs.put(item)
        self._threads = [
            threading.Thread(target=self._serve, args=(worker,), daemon=True) for worker in _workers
        ]
        for thread in self._threads:
            self._jobs.put(None)  # after every job: a helper stops when none is left
            thread.start()

    def results(self) -> list[Made | None]:
        """Each job's charts and notes, or None for a job no helper made (the caller makes
        those). Waits for the helpers."""
        for thread in self._threads:
            thread.join()
        return self._results

    def _serve(self, worker: _Helper) -> None:
        try:
            _write(worker.input, self._verdict)
            while (item := self._jobs.get()) is not None:
                index, job = item
                _write(worker.input, pickle.dumps((JOB, job)))
                answer = _received(json.loads(_read(worker.output)))
                if isinstance(answer, tuple):
                    self._results[index] = answer
                else:
                    self.refused[index] = answer
        except (OSError, ValueError, EOFError):
            return  # this helper is gone (or stopped): the others, or the caller, make the rest


def _received(answer: Any) -> Made | str:
    """A helper's answer to a job: its charts and notes, or why there are none (the error it
    met, or what is wrong with the answer). The answer is JSON, never code, and each chart's
    SVG is checked here again, as if drawn here."""
    from reporter.errors import RenderError
    from reporter.render.common import Chart
    from reporter.render.svgcheck import check_svg

    if not isinstance(answer, dict):
        return "the answer is not an object"
    if "error" in answer:
        return str(answer["error"])
    try:
        charts = [Chart(**fields) for fields in answer["charts"]]
        notes = answer["notes"]
        for chart in charts:
            if not all(
                isinstance(getattr(chart, f.name), _FIELD_TYPES[str(f.type)])
                for f in dataclasses.fields(chart)
            ):
                raise TypeError(f"chart {chart.id!r}: a field of the wrong type")
            if chart.svg:
                check_svg(chart.svg, chart.id)
        if not (isinstance(notes, list) and all(isinstance(n, str) for n in notes)):
            raise TypeError("notes: expected a list of texts")
    except (KeyError, TypeError, RenderError) as exc:
        return f"refused answer: {exc}"
    return charts, notes


#: The types a chart's fields are declared with (`Chart`, its annotations as text), as classes.
_FIELD_TYPES = {"str": str, "bool": bool}


def _write(stream: IO[bytes], message: bytes) -> None:
    stream.write(struct.pack(">Q", len(message)) + message)
    stream.flush()


def _read(stream: IO[bytes]) -> bytes:
    """One message: its length (8 bytes), then that many bytes; EOFError at the end."""
    head = stream.read(8)
    if len(head) < 8:
        raise EOFError
    (size,) = struct.unpack(">Q", head)
    message = stream.read(size)
    if len(message) < size:
        raise EOFError
    return message


def serve(forks: Sequence[str] = ()) -> None:
    """A helper's program: import the chart code, find the fonts to draw with
    (reporter.render.fonts), fork one process for each of `forks` ("jobs fd,answers fd"; the
    first helper's own are its stdin and stdout), then in each, start vl-convert's engine and
    answer messages (`_answer`) until the input ends."""
    from reporter.render import charts, fonts

    private = fonts.private_fonts()
    if private is not None:  # read by vl-convert when its engine starts, in each fork
        os.environ["FONTCONFIG_FILE"] = str(private[0])
        charts.COVERAGE = private[1]
    stdin: IO[bytes] = sys.stdin.buffer
    stdout: IO[bytes] = sys.stdout.buffer
    pipes = [tuple(int(fd) for fd in text.split(",")) for text in forks]
    # the forks start their engines once the first helper's is up (the end of `started`):
    # two engines starting at once beside the audit would take a core from it
    waiting, started = os.pipe()
    for k, (jobs, answers) in enumerate(pipes):
        try:
            pid = os.fork()
        except OSError:
            pid = -1  # no fork: its pipes close below, and the report process makes its jobs
        if pid == 0:
            # the fork: only its own pipes stay open, so that when a helper ends, the report
            # process reads the end of that helper's answers (the engine wants a stdin and a
            # stdout all the same: /dev/null)
            nothing = os.open(os.devnull, os.O_RDWR)
            os.dup2(nothing, 0)
            os.dup2(nothing, 1)
            os.close(nothing)
            for later in pipes[k + 1 :]:
                for fd in later:
                    os.close(fd)
            stdin, stdout = os.fdopen(jobs, "rb"), os.fdopen(answers, "wb")
            os.close(started)
            started = -1
            os.read(waiting, 1)  # returns at the first helper's signal, or its end
            break
        os.close(jobs)
        os.close(answers)
    os.close(waiting)
    import vl_convert

    vl_convert.vegalite_to_svg({"mark": "point"})  # the engine starts here, not at a chart
    if started >= 0:  # the first helper: the forks may start theirs
        os.close(started)
    _answer(stdin, stdout, charts.made)


def _answer(stdin: IO[bytes], stdout: IO[bytes], made: Callable[[Verdict, Job], Made]) -> None:
    """Read messages (pickled by the report process): `(VERDICT, verdict)`, the verdict the
    next jobs are about, and `(JOB, job)`, answered in JSON with the job's charts and notes,
    or the error that stopped it (the report process then makes the job itself and meets the
    error)."""
    verdict: Verdict | None = None
    try:
        while True:
            kind, body = pickle.loads(_read(stdin))
            if kind == VERDICT:
                verdict = body
                continue
            answer: dict[str, Any]
            try:
                assert verdict is not None, "a chart job before its verdict"
                charts, notes = made(verdict, body)
                answer = {"charts": [dataclasses.asdict(c) for c in charts], "notes": notes}
            except Exception as exc:  # the report process makes this job and reports it
                answer = {"error": f"{type(exc).__name__}: {exc}"}
            _write(stdout, json.dumps(answer).encode())
    except (EOFError, OSError):
        return
