"""How does the audit's cost grow with the number of runs (one request each)?

Writes native traces of 500, 1,000 and 5,000 one-request runs and times, in one process,
alternating, `api.audit` on each (median of --repeats). Prints seconds and the cost per run,
and the ratio of per-run cost at the largest size to the smallest: near 1 means linear,
above 1 means something per run grows with the number of runs. Each size is written twice:
bare runs, and runs of one server (engine flags and a server log line), which the rules about
a server's runs (BR013, BR014) read together.

    python benchmarks/many_runs.py [--sizes 500,1000,5000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "rules"))

from test_many_runs import write_many_runs

from reporter import api


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="500,1000,5000")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    shapes = {"bare runs": False, "runs of one server": True}
    with tempfile.TemporaryDirectory() as tmp:
        traces = {
            (shape, n): write_many_runs(Path(tmp) / f"runs-{n}-{server}.jsonl", n, server=server)
            for shape, server in shapes.items()
            for n in sizes
        }
        times: dict[tuple[str, int], list[float]] = {key: [] for key in traces}
        for _ in range(args.repeats):
            for key, trace in traces.items():
                start = time.perf_counter()
                api.audit([trace])
                times[key].append(time.perf_counter() - start)
    for shape in shapes:
        print(f"{shape}:")
        print(f"{'runs':>6} {'median s':>9} {'ms / run':>9}   all")
        per_run = {}
        for n in sizes:
            med = statistics.median(times[shape, n])
            per_run[n] = med / n
            each = [round(t, 2) for t in times[shape, n]]
            print(f"{n:>6} {med:>9.2f} {per_run[n] * 1e3:>9.2f}   {each}")
        lo, hi = min(sizes), max(sizes)
        print(f"per-run cost at {hi} runs ÷ at {lo} runs: {per_run[hi] / per_run[lo]:.2f}")


if __name__ == "__main__":
    main()
