"""Charts drawn by helper processes, started while the audit runs.

vl-convert draws a chart in a JavaScript engine that it starts once per process (about half
a second of CPU) and that holds the GIL while it draws; most of a chart's cost is vega's
text measurement, which reads the font for every glyph it measures. A report of the shipped
traces draws 22 charts, about 2 s of CPU in one process. `start()` launches one helper
process, and a second when a core is idle, that start their engine while the audit parses
and checks the traces; the report's charts are then sent to them as soon as each is
specified (`Batch`), so that they draw while the report process specifies the rest. Each
helper runs vl-convert exactly as the report process would (same spec, same config), and
the SVG goes through the same id renaming and safety check (`charts.finished_svg`), so the
report is byte for byte the same.

Without `start()` (library use, tests) nothing is launched and charts are drawn in process;
a helper that fails or dies costs nothing but time: its charts are drawn in process.
"""

from __future__ import annotations

import atexit
import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

#: Helper processes: two, the cores of the smallest machine the audits run on.
WORKERS = 2
#: The helper: reads one JSON job per line, writes one JSON answer per line. It imports
#: nothing of benchreport (whose import pulls pandas and pyarrow), only vl-convert.
_SOURCE = r"""
import json, sys
import vl_convert as vlc
vlc.vegalite_to_svg({"mark": "point"})
for line in sys.stdin:
    job = json.loads(line)
    try:
        answer = {"svg": vlc.vegalite_to_svg(job["spec"], config=job["config"],
                                             allowed_base_urls=[])}
    except Exception as exc:
        answer = {"error": str(exc)}
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()
"""

_workers: list[subprocess.Popen[str]] = []


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
    engine at once, in the background."""
    if _workers:
        return
    for _ in range(helpers_wanted() if count is None else count):
        try:
            # -P: no script or current directory on sys.path, so that no file of the
            # user's (or this package's json.py) can stand in for a module the helper imports.
            _workers.append(
                subprocess.Popen(
                    [sys.executable, "-P", "-c", _SOURCE],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    text=True,
                    encoding="utf-8",
                )
            )
        except OSError:
            break
    atexit.register(stop)


def stop() -> None:
    """End the helpers: closing their input ends their loop; one that hangs is killed."""
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


class Batch:
    """Charts sent to the helpers as soon as each is specified, so that they draw the first
    while the report process specifies the rest."""

    def __init__(self, config: dict[str, Any]) -> None:
        self._config = config
        self._jobs: queue.Queue[tuple[int, dict[str, Any]] | None] = queue.Queue()
        self._results: list[str | Exception | None] = []
        self._threads = [
            threading.Thread(target=self._serve, args=(worker,), daemon=True) for worker in _workers
        ]
        for thread in self._threads:
            thread.start()

    def submit(self, spec: dict[str, Any]) -> None:
        """Draw `spec` (its result is the next of `results()`)."""
        self._results.append(None)
        self._jobs.put((len(self._results) - 1, spec))

    def results(self) -> list[str | Exception | None]:
        """Each submitted spec drawn: its SVG, the error vl-convert raised, or None when no
        helper could draw it (the caller draws those in process). Waits for the helpers."""
        for _ in self._threads:
            self._jobs.put(None)  # after every job: a helper stops when none is left
        for thread in self._threads:
            thread.join()
        return self._results

    def _serve(self, worker: subprocess.Popen[str]) -> None:
        while (job := self._jobs.get()) is not None:
            index, spec = job
            try:
                assert worker.stdin is not None and worker.stdout is not None
                worker.stdin.write(json.dumps({"spec": spec, "config": self._config}) + "\n")
                worker.stdin.flush()
                answer = json.loads(worker.stdout.readline())
            except (OSError, ValueError):
                return  # this helper is gone: the others, or the caller, draw the rest
            if "svg" in answer:
                self._results[index] = str(answer["svg"])
            else:
                self._results[index] = ValueError(str(answer.get("error", "no answer")))
