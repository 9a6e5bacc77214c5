"""The report's charts, made by helper processes started while the audit runs.

A chart costs three things: altair's import and the Vega-Lite spec (reporter.render.charts),
vl-convert's JavaScript engine, which it starts once per process (about 0.4 s of CPU) and
which holds the GIL while it draws, and the drawing itself, most of which is vega measuring
text. `start()` launches one helper process, and a second when a core is idle; each starts
its engine and imports altair while the report process parses and checks the traces. Once
the audit is done, `send(verdict)` hands each helper the verdict (pickled, a few hundred kB
for the shipped traces) and the charts one job at a time (`chart_jobs`: the scaling charts,
the wall-clock split, the bandwidth chart, each run's timeline), and the helpers specify and
draw them while the report process prints the summary and builds the rest of the report; it
never imports altair or starts an engine of its own. A helper runs the very code the report
process would (`charts.made`), so the report is byte for byte the same.

Without `start()` (library use, tests) nothing is launched and every chart is made in
process; a helper that fails or dies costs nothing but time: the report process makes the
charts it did not.

This module imports neither altair nor vl-convert: the report process loads them only to
make a chart no helper made.
"""

from __future__ import annotations

import atexit
import os
import pickle
import queue
import struct
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reporter.model import Verdict
    from reporter.render.common import Chart

#: Helper processes: two, the cores of the smallest machine the audits run on.
WORKERS = 2
#: The helper's program: `serve()` from the same package the report process runs (the
#: folder holding it is the argument), with nothing else of the caller's on the path.
_SOURCE = (
    "import sys; sys.path.insert(0, sys.argv[1]); "
    "from reporter.render.drawing import serve; serve()"
)
#: A chart job: what to make (`SCALING`, `WALL_SPLIT`, `BANDWIDTH`, `RUN`) and, for a run's
#: chart, the index of its series in `verdict.series.runs`.
Job = tuple[str, int]
SCALING, WALL_SPLIT, BANDWIDTH, RUN = "scaling", "wall split", "bandwidth", "run"
#: What a message to a helper holds: a verdict, or a chart job about the last one sent.
VERDICT, JOB = "verdict", "job"
#: What a job makes: its charts, in the report's order, and the notes it adds.
Made = tuple[list["Chart"], list[str]]


@dataclass
class Drawn:
    """The charts of one report, and what was left out or sampled."""

    overview: list[Chart] = field(default_factory=list)
    runs: list[Chart] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


_workers: list[subprocess.Popen[bytes]] = []
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
    (one engine either way) and starts its engine while the audit runs. A second one costs
    its own engine (half a second of CPU) and pays only on a free core, where it draws half
    the charts while the report process waits: on a busy machine (measured: a 2-core machine
    at load 4-7) two helpers cost a second of CPU more and were no faster.
    """
    return min(WORKERS, 1 + spare_cores())


def start(count: int | None = None) -> None:
    """Launch the helpers (once): `count`, else `helpers_wanted()`; they start their
    engine and import altair at once, in the background."""
    if _workers:
        return
    package_root = str(Path(__file__).resolve().parents[2])
    for _ in range(helpers_wanted() if count is None else count):
        try:
            # -P: no script or current directory on sys.path, so that no file of the
            # user's can stand in for a module the helper imports.
            _workers.append(
                subprocess.Popen(
                    [sys.executable, "-P", "-c", _SOURCE, package_root],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                )
            )
        except OSError:
            break
    atexit.register(stop)


def stop() -> None:
    """End the helpers: closing their input ends their loop; one that hangs is killed."""
    global _sent
    _sent = None
    while _workers:
        worker = _workers.pop()
        try:
            if worker.stdin is not None:
                worker.stdin.close()
            worker.wait(timeout=2)
        except (OSError, subprocess.TimeoutExpired):
            worker.kill()
            worker.wait()
        if worker.stdout is not None:
            worker.stdout.close()


def running() -> bool:
    return bool(_workers)


def chart_jobs(verdict: Verdict) -> list[Job]:
    """The report's charts as jobs, in the order the report shows them: the scaling charts,
    the wall-clock split, the bandwidth chart, then each run's timeline that has times."""
    return [(SCALING, 0), (WALL_SPLIT, 0), (BANDWIDTH, 0)] + [
        (RUN, k) for k, series in enumerate(verdict.series.runs) if series.timeline is not None
    ]


def send(verdict: Verdict) -> None:
    """Hand `verdict` to the helpers, which make its charts while the caller goes on;
    `draw_charts(verdict)` collects them. Nothing when no helper runs."""
    global _sent
    if running() and (_sent is None or _sent[0] is not verdict):
        _sent = (verdict, Batch(verdict))


def draw_charts(verdict: Verdict) -> Drawn:
    """Every chart of the report, in the order the report shows them: made by the helpers
    when they were started, each job they did not make here."""
    global _sent
    jobs = chart_jobs(verdict)
    results: list[Made | None] = [None] * len(jobs)
    if running():
        if _sent is None or _sent[0] is not verdict:
            send(verdict)
        assert _sent is not None
        results = _sent[1].results()
        _sent = None
    made = [result if result is not None else _made_here(verdict, job)
            for job, result in zip(jobs, results, strict=True)]  # fmt: skip
    return assembled(verdict, jobs, made)


def _made_here(verdict: Verdict, job: Job) -> Made:
    from reporter.render.charts import made

    return made(verdict, job)


def assembled(verdict: Verdict, jobs: list[Job], made: list[Made]) -> Drawn:
    """The jobs' charts in the report's places, and their notes in the jobs' order."""
    from reporter.model import MAX_RUN_CHARTS

    drawn = Drawn()
    for (kind, _), (charts, notes) in zip(jobs, made, strict=True):
        (drawn.runs if kind == RUN else drawn.overview).extend(charts)
        drawn.notes.extend(notes)
    if verdict.series.runs_with_times > MAX_RUN_CHARTS:
        drawn.notes.append(
            f"timelines: {MAX_RUN_CHARTS} of {verdict.series.runs_with_times} runs drawn (in "
            "the order of the run table)"
        )
    return drawn


class Batch:
    """One verdict's chart jobs, handed to the helpers one at a time as each helper is free."""

    def __init__(self, verdict: Verdict) -> None:
        self._verdict = pickle.dumps((VERDICT, verdict), protocol=pickle.HIGHEST_PROTOCOL)
        jobs = chart_jobs(verdict)
        self._results: list[Made | None] = [None] * len(jobs)
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

    def _serve(self, worker: subprocess.Popen[bytes]) -> None:
        assert worker.stdin is not None and worker.stdout is not None
        try:
            _write(worker.stdin, self._verdict)
            while (item := self._jobs.get()) is not None:
                index, job = item
                _write(worker.stdin, pickle.dumps((JOB, job)))
                answer = pickle.loads(_read(worker.stdout))
                if isinstance(answer, tuple):
                    self._results[index] = answer
        except (OSError, ValueError, EOFError, pickle.UnpicklingError):
            return  # this helper is gone (or stopped): the others, or the caller, make the rest


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


def serve(stdin: IO[bytes] | None = None, stdout: IO[bytes] | None = None) -> None:
    """A helper's loop: start vl-convert's engine and import the chart code, then read
    messages: `(VERDICT, verdict)`, the verdict the next jobs are about, and `(JOB, job)`,
    answered with the job's `(charts, notes)`, or the text of the error that stopped it (the
    report process then makes the job itself and meets the error)."""
    import vl_convert

    vl_convert.vegalite_to_svg({"mark": "point"})  # the engine starts here, not at a chart
    from reporter.render import charts

    stdin = stdin or sys.stdin.buffer
    stdout = stdout or sys.stdout.buffer
    verdict: Verdict | None = None
    try:
        while True:
            kind, body = pickle.loads(_read(stdin))
            if kind == VERDICT:
                verdict = body
                continue
            try:
                assert verdict is not None, "a chart job before its verdict"
                answer: Any = charts.made(verdict, body)
            except Exception as exc:  # the report process makes this job and reports it
                answer = f"{type(exc).__name__}: {exc}"
            _write(stdout, pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL))
    except EOFError:
        return
