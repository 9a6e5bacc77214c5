"""How long does `benchreport` take to start, against a bare Python?

Times, in one run, alternating (so that a busy machine slows all alike), fresh processes of:
  - `python -c pass` (the floor: the interpreter itself),
  - `benchreport --version`, `--help`, `rules` and `explain BR003`,
  - `benchreport audit TRACE --no-html --json -` (the whole audit of a small shipped trace),
each run as `python -m reporter ...` with the repository on PYTHONPATH. Prints the median
wall of each, its excess over the floor and its ratio to it. Target: --version and --help
within 0.3 s of `python -c pass`.

    python benchmarks/startup.py [--repeats 15]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TRACE = ROOT / "traces" / "case-a-ladder.jsonl"
CASES: list[tuple[str, list[str]]] = [
    ("python -c pass", ["-c", "pass"]),
    ("benchreport --version", ["-m", "reporter", "--version"]),
    ("benchreport --help", ["-m", "reporter", "--help"]),
    ("benchreport rules", ["-m", "reporter", "rules"]),
    ("benchreport explain BR003", ["-m", "reporter", "explain", "BR003"]),
    ("benchreport audit --json -", ["-m", "reporter", "audit", str(TRACE), "--no-html",
                                    "--json", "-", "--fail-on", "never"]),
]  # fmt: skip


def wall(args: list[str]) -> float:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    subprocess.run([sys.executable, *args], env=env, cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=15)
    repeats = parser.parse_args().repeats
    for _, args in CASES:  # warm the file cache and the bytecode
        wall(args)
    times: dict[str, list[float]] = {name: [] for name, _ in CASES}
    for _ in range(repeats):
        for name, args in CASES:
            times[name].append(wall(args))
    floor = statistics.median(times[CASES[0][0]])
    print(f"{'command':<28} {'median s':>9} {'over floor s':>13} {'ratio':>6}")
    for name, values in times.items():
        med = statistics.median(values)
        print(f"{name:<28} {med:>9.3f} {med - floor:>13.3f} {med / floor:>6.1f}")
    python = sys.version.split()[0]
    print(f"({repeats} runs each, alternating; {os.cpu_count()} CPUs; Python {python})")


if __name__ == "__main__":
    main()
