"""What does the HTML report cost on top of the audit?

Times, as whole processes and alternating, `benchreport audit traces/*.jsonl` writing its
default HTML report and the same audit with `--no-html` (median of --repeats each), and prints
both medians, their ratio and the CPU time of each (user + system, helpers included). Both
runs exit 1: the shipped traces hold inflated claims.

    python benchmarks/report_speed.py [--repeats 5] [TRACE ...]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def timed(args: list[str]) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system of the process and its children)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(args, cwd=ROOT, capture_output=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        sys.exit(f"{' '.join(args)} exited {done.returncode}: {done.stderr.decode()[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("traces", nargs="*", help="default: traces/*.jsonl")
    args = ap.parse_args()
    traces = args.traces or sorted(str(p.relative_to(ROOT)) for p in ROOT.glob("traces/*.jsonl"))
    audit = [sys.executable, "-m", "reporter", "audit", *traces]
    env_path = os.environ.get("PYTHONPATH", "")
    os.environ["PYTHONPATH"] = f"{ROOT}{os.pathsep}{env_path}" if env_path else str(ROOT)
    with tempfile.TemporaryDirectory() as tmp:
        runs = {
            "with the HTML report": [*audit, "-o", str(Path(tmp) / "report.html")],
            "--no-html": [*audit, "--no-html"],
        }
        timed(runs["--no-html"])  # warm the page cache: imports and traces read from memory
        walls: dict[str, list[float]] = {name: [] for name in runs}
        cpus: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(args.repeats):
            for name, command in runs.items():
                wall, cpu = timed(command)
                walls[name].append(wall)
                cpus[name].append(cpu)
    print(f"benchreport audit of {len(traces)} trace(s), median of {args.repeats}, whole processes")
    for name in runs:
        wall, cpu = statistics.median(walls[name]), statistics.median(cpus[name])
        print(f"  {name:22} {wall:6.2f} s wall   {cpu:6.2f} s CPU")
    html, bare = (statistics.median(walls[name]) for name in runs)
    html_cpu, bare_cpu = (statistics.median(cpus[name]) for name in runs)
    print(f"  ratio                  {html / bare:6.2f}× wall   {html_cpu / bare_cpu:6.2f}× CPU")


if __name__ == "__main__":
    main()
