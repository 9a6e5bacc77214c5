"""What does the HTML report cost on top of the audit?

Times, as whole processes and alternating, `benchreport audit traces/*.jsonl` writing its
default HTML report and the same audit with `--no-html` (median of --repeats each), and prints
both medians, their ratio and the CPU time of each (user + system, helpers included), all
measured in the same run. With --pdf, the audit writing the PDF report (`--pdf`, WeasyPrint)
is timed in the same rounds; with --against DIR, the HTML report of the code in DIR (another
checkout, the code before a change) too. All runs exit 1: the shipped traces hold inflated
claims.

The machine's 1-minute load average is printed before and after: the report draws its charts
in one helper process, two when a core is idle (reporter.render.drawing), so the HTML figure
depends on the load; read the ratios, which are measured side by side.

    python benchmarks/report_speed.py [--repeats 5] [--pdf] [--against DIR] [TRACE ...]
"""

from __future__ import annotations

import argparse
import ctypes
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: prctl(2): orphaned descendants are reparented to this process, not to init.
PR_SET_CHILD_SUBREAPER = 36


def adopt_orphans() -> None:
    """Make this process the reaper of its descendants that outlive their parent (Linux): the
    report's chart helpers end after the report process, unwaited, and their CPU time counts
    only when someone reaps them."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        print("cannot adopt orphans: the CPU time of unwaited helpers is not counted")


def reap() -> None:
    """Wait for every descendant left (orphans adopted by `adopt_orphans`)."""
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def environment(code: Path) -> dict[str, str]:
    """This process's environment with `code` first on PYTHONPATH."""
    env_path = os.environ.get("PYTHONPATH", "")
    return {**os.environ, "PYTHONPATH": f"{code}{os.pathsep}{env_path}" if env_path else str(code)}


def timed(args: list[str], code: Path = ROOT) -> tuple[float, float]:
    """Wall seconds (until the process ends) and CPU seconds (user + system of the process
    and every process it started, helpers included), of `args` run with the package in
    `code`."""
    env = environment(code)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    # in `code`: `python -m` puts the current directory first on the path, before PYTHONPATH
    done = subprocess.run(args, cwd=code, env=env, capture_output=True, check=False)
    wall = time.perf_counter() - start
    reap()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        sys.exit(f"{' '.join(args)} exited {done.returncode}: {done.stderr.decode()[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def package_of(code: Path) -> Path:
    """The folder of the `reporter` package that runs as `timed` runs it with `code`."""
    env = environment(code)
    out = subprocess.run(
        [sys.executable, "-c", "import reporter; print(reporter.__file__)"],
        cwd=code, env=env, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    return Path(out.strip()).parent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--pdf", action="store_true", help="also time the PDF report")
    ap.add_argument("--against", type=Path, help="also time the HTML report of the code in DIR")
    ap.add_argument("traces", nargs="*", help="default: traces/*.jsonl")
    args = ap.parse_args()
    adopt_orphans()
    # absolute: each checkout's code runs in its own folder, on the same files
    traces = [str(Path(t).resolve()) for t in args.traces] or sorted(
        str(p) for p in ROOT.glob("traces/*.jsonl")
    )
    audit = [sys.executable, "-m", "reporter", "audit", *traces]
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        html = [*audit, "-o", str(Path(tmp) / "report.html")]
        runs = {"with the HTML report": (html, ROOT), "--no-html": ([*audit, "--no-html"], ROOT)}
        if args.pdf:
            pdf = [*audit, "--no-html", "--pdf", str(Path(tmp) / "r.pdf")]
            runs["with the PDF report"] = (pdf, ROOT)
        if args.against:
            against = args.against.resolve()
            if package_of(against) != against / "reporter":
                sys.exit(f"{against}: its own package is not the one imported there")
            runs["with the HTML report of --against"] = (html, against)
        for command, code in runs.values():
            timed(command, code)  # warm the page cache: imports and traces read from memory
        walls: dict[str, list[float]] = {name: [] for name in runs}
        cpus: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(args.repeats):
            for name, (command, code) in runs.items():
                wall, cpu = timed(command, code)
                walls[name].append(wall)
                cpus[name].append(cpu)
    print(
        f"benchreport audit of {len(traces)} trace(s), median of {args.repeats}, whole processes"
        f" (load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after)"
    )
    for name in runs:
        wall, cpu = statistics.median(walls[name]), statistics.median(cpus[name])
        print(f"  {name:34} {wall:6.2f} s wall   {cpu:6.2f} s CPU")
    bare, bare_cpu = statistics.median(walls["--no-html"]), statistics.median(cpus["--no-html"])
    for name in runs:
        if name != "--no-html":
            wall, cpu = statistics.median(walls[name]), statistics.median(cpus[name])
            what = name.removeprefix("with the ").replace(" report", "")
            print(f"  ratio, {what:27} {wall / bare:6.2f}× wall   {cpu / bare_cpu:6.2f}× CPU")


if __name__ == "__main__":
    main()
