"""How the audit's cost grows with the trace: seconds and peak memory against the parse.

For each size (default 10^5, 10^6 and 10^7 requests; the trace of benchmarks/audit_speed.py,
a sweep of 16 runs), times in fresh processes, alternating, a bare pyarrow parse of the file
and the in-memory audit to a JSON verdict, and prints each one's median seconds and peak
resident memory, the ratios, and the cost per request, so the slope is visible. A trace above
memory is the streamed audit's job (benchmarks/stream_audit.py, `audit --stream` on Parquet).

    python benchmarks/audit_scale.py [--sizes 100000,1000000,10000000] [--repeats 3]
        [--big-repeats 1] [--keep DIR]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from audit_speed import write_trace

ROOT = Path(__file__).resolve().parents[1]

PARSE = """
import resource, sys, time, pyarrow.json as pj
t = time.perf_counter()
table = pj.read_json(sys.argv[1])
print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""

AUDIT = """
import resource, sys, time
from reporter import api
from reporter.render.json import render_json
t = time.perf_counter()
verdict = api.audit([sys.argv[1]])
open(sys.argv[2], "w").write(render_json(verdict))
print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def run(code: str, *args: str) -> tuple[float, float]:
    """(seconds the child reports, its peak RSS in MB), imports before the clock starts."""
    out = subprocess.run(
        [sys.executable, "-c", code, *args], check=True, capture_output=True, text=True, cwd=ROOT
    )
    seconds, peak = out.stdout.split()[:2]
    return float(seconds), float(peak)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000,10000000")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--big-repeats", type=int, default=1, help="repeats from 10^7 up")
    parser.add_argument("--keep", type=Path, help="write the traces here and keep them")
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="benchreport-scale-"))
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        trace = folder / f"trace-{size}.jsonl"
        if not trace.exists():
            start = time.perf_counter()
            write_trace(trace, size)
            print(f"wrote {trace.name}: {trace.stat().st_size / 1e6:,.0f} MB in "
                  f"{time.perf_counter() - start:.0f} s", flush=True)  # fmt: skip
        repeats = args.big_repeats if size >= 10_000_000 else args.repeats
        parse, audit = [], []
        for _ in range(repeats):
            parse.append(run(PARSE, str(trace)))
            audit.append(run(AUDIT, str(trace), str(folder / "verdict.json")))
            print(f"  {size:,}: parse {parse[-1][0]:.2f} s, audit {audit[-1][0]:.2f} s", flush=True)
        p_s, a_s = (statistics.median(t for t, _ in m) for m in (parse, audit))
        p_mb, a_mb = (max(mb for _, mb in m) for m in (parse, audit))
        rows.append((size, trace.stat().st_size / 1e6, p_s, p_mb, a_s, a_mb))
    print()
    print("| requests | MB | parse s | parse peak MB | audit s | audit peak MB | "
          "audit ÷ parse (s) | audit ÷ parse (MB) | audit µs / request |")  # fmt: skip
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for size, mb, p_s, p_mb, a_s, a_mb in rows:
        print(f"| {size:,} | {mb:,.0f} | {p_s:.2f} | {p_mb:,.0f} | {a_s:.2f} | {a_mb:,.0f} | "
              f"{a_s / p_s:.2f} | {a_mb / p_mb:.2f} | {a_s / size * 1e6:.2f} |")  # fmt: skip


if __name__ == "__main__":
    main()
