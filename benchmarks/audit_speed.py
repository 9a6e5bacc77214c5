"""How fast is an audit of a big trace, against merely parsing it?

Writes a synthetic native trace of 1,000,000 requests (a sweep of 16 runs, N = 1 … 128, two
repeats each, closed loop), and one of 100,000 requests with 128 chunk times each, as the
recorder writes them (about as many bytes); then for each, in one run, alternating, times:
  - a bare pyarrow parse of the file (`pyarrow.json.read_json`), and
  - the audit to a JSON verdict (`benchreport audit FILE --json OUT --no-html`, in process),
each in a fresh subprocess (imports before the clock starts, for both) so that its peak
memory (max RSS) is its own. Prints every measurement, the medians, their ratio (and the ratio
of CPU time, steadier on a machine others load), the audit's time outside its own parse of the
request lines (what the audit adds to a parse, steadier than the ratio, which moves with the
parse) and the peak memory. Targets: ratio ≤ 1.5,
peak ≤ 1.5 GB. With --against DIR, the audit of the code in DIR (another checkout: the code
before a change) is timed in the same rounds, run in its own folder.

    python benchmarks/audit_speed.py [--requests 1000000] [--chunk-requests 100000]
        [--repeats 5] [--keep DIR] [--against DIR]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import orjson

# the sweep shared with the other speed benchmarks, importable when this file is loaded by path
sys.path.insert(0, str(Path(__file__).resolve().parent))
from report_speed import environment, package_of
from synthetic import RUNS, point_times, run_record

ROOT = Path(__file__).resolve().parents[1]

PARSE = """
import sys, time, pyarrow.json as pj
c, t = time.process_time(), time.perf_counter()
table = pj.read_json(sys.argv[1])
print(time.perf_counter() - t, time.process_time() - c, table.num_rows)
"""

AUDIT = """
import sys, time
from reporter import api
from reporter.adapters import native
from reporter.render.json import render_json
# the audit's own parse of the request lines, timed apart: the rest is what the audit adds
own = [0.0]
parse_segments = native._parse_segments
def timed(*args):
    t = time.perf_counter()
    try:
        return parse_segments(*args)
    finally:
        own[0] += time.perf_counter() - t
native._parse_segments = timed
c, t = time.process_time(), time.perf_counter()
verdict = api.audit([sys.argv[1]])
open(sys.argv[2], "w").write(render_json(verdict))
print(time.perf_counter() - t, time.process_time() - c, own[0])
"""


#: Chunk times a request of the chunk-times trace carries (one per token, as the recorder
#: writes them when each streamed chunk holds one token).
CHUNKS = 128


def write_trace(path: Path, total: int, chunk_times: bool = False) -> None:
    """A closed-loop sweep: N streams, each request sent when the stream's previous one ended.

    With `chunk_times`, each request is written as the recorder writes it (prompt hash, 128
    chunk times in `token_times`, chunk_tokens, n_chunks, error), except that its id is a
    string: a bare pyarrow parse of the whole file refuses an `id` column that is a string in
    the run records and a number in the requests.
    """
    rng = np.random.default_rng(1234)
    runs = RUNS
    per_run = total // len(runs)
    with path.open("wb") as f:
        for n, rep in runs:
            run_id = f"n{n}-r{rep}"
            f.write(orjson.dumps(run_record(n, rep)) + b"\n")
            sends, firsts, ends = point_times(rng, n, per_run)
            if chunk_times:
                steps = np.linspace(0.0, 1.0, CHUNKS)
                lines = [
                    orjson.dumps(
                        {
                            "kind": "request",
                            "run": run_id,
                            "id": f"{run_id}-{i}",
                            "t_send": round(float(a), 6),
                            "t_first": round(float(b), 6),
                            "t_end": round(float(c), 6),
                            "prompt_tokens": 32,
                            "output_tokens": CHUNKS,
                            "finish_reason": "length",
                            "reported_tps": None,
                            "prompt_sha256": f"{i:064x}",
                            "token_times": np.round(b + (c - b) * steps, 6),
                            "chunk_tokens": 1,
                            "error": None,
                            "output_tokens_source": "usage",
                            "n_chunks": CHUNKS,
                        },
                        option=orjson.OPT_SERIALIZE_NUMPY,
                    )
                    for i, (a, b, c) in enumerate(zip(sends, firsts, ends, strict=True))
                ]
                f.write(b"\n".join(lines) + b"\n")
                continue
            lines = [
                orjson.dumps(
                    {
                        "kind": "request",
                        "run": run_id,
                        "id": f"{run_id}-{i}",
                        "t_send": round(float(a), 6),
                        "t_first": round(float(b), 6),
                        "t_end": round(float(c), 6),
                        "prompt_tokens": 32,
                        "output_tokens": 128,
                        "finish_reason": "length",
                        "reported_tps": round(128 / float(c - b), 3),
                    }
                )
                for i, (a, b, c) in enumerate(zip(sends, firsts, ends, strict=True))
            ]
            f.write(b"\n".join(lines) + b"\n")


def measure(code: str, *args: str, where: Path = ROOT) -> tuple[float, float, float]:
    """Seconds the child reports for its work (interpreter start-up excluded): wall clock, CPU
    time of all its threads (steadier than the wall clock on a machine others load), and the
    third figure it prints (the audit's own parse of the request lines). The child runs in
    `where`, the checkout whose package it imports."""
    out = subprocess.run(
        [sys.executable, "-c", code, *args],
        check=True,
        capture_output=True,
        text=True,
        cwd=where,  # `python -c` puts the current folder first on the path
        env=environment(where),
    )
    wall, cpu, third = out.stdout.split()[:3]
    return float(wall), float(cpu), float(third)


def peak_of(code: str, *args: str, where: Path = ROOT) -> float:
    """Peak RSS of one child, measured alone (a fresh interpreter for the measurement)."""
    probe = (
        "import resource, subprocess, sys\n"
        "subprocess.run([sys.executable, '-c', sys.argv[1], *sys.argv[2:]], check=True, "
        "capture_output=True)\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe, code, *args],
        check=True,
        capture_output=True,
        text=True,
        cwd=where,
        env=environment(where),
    )
    return float(out.stdout.strip())


def compare(
    trace: Path, verdict: Path, requests: int, repeats: int, against: Path | None = None
) -> None:
    """Parse and audit of one trace (and the audit of `against`), alternating; medians,
    ratios and peaks printed."""
    audits = {"audit to JSON": ROOT, **({"audit of --against": against} if against else {})}
    walls: dict[str, list[float]] = {"parse": [], **{name: [] for name in audits}}
    cpus: dict[str, list[float]] = {name: [] for name in walls}
    owns: dict[str, list[float]] = {name: [] for name in audits}
    for i in range(repeats):
        wall, cpu, _ = measure(PARSE, str(trace))
        walls["parse"].append(wall)
        cpus["parse"].append(cpu)
        for name, where in audits.items():
            wall, cpu, own = measure(AUDIT, str(trace), str(verdict), where=where)
            walls[name].append(wall)
            cpus[name].append(cpu)
            owns[name].append(own)
        each = (f"{name} {walls[name][-1]:.2f} s (CPU {cpus[name][-1]:.2f} s)" for name in walls)
        print(f"  round {i + 1}: " + ", ".join(each))
    parse_med = statistics.median(walls["parse"])
    parse_cpu = statistics.median(cpus["parse"])
    parse_peak = peak_of(PARSE, str(trace))
    print(f"median pyarrow parse: {parse_med:.2f} s   peak {parse_peak:,.0f} MB")
    for name, where in audits.items():
        audit_med = statistics.median(walls[name])
        audit_peak = peak_of(AUDIT, str(trace), str(verdict), where=where)
        print(f"median {name}: {audit_med:.2f} s   peak {audit_peak:,.0f} MB")
        print(
            f"  ratio ÷ parse: {audit_med / parse_med:.2f} (target ≤ 1.5); "
            f"peak {audit_peak / 1024:.2f} GB (target ≤ 1.5 GB)"
        )
        print(
            f"  CPU time, all threads: parse {parse_cpu:.2f} s, audit "
            f"{statistics.median(cpus[name]):.2f} s, ratio "
            f"{statistics.median(cpus[name]) / parse_cpu:.2f} (the parse uses every core, the "
            "audit mostly one: on an idle machine the wall-clock ratio is the one to read)"
        )
        outside = statistics.median(w - o for w, o in zip(walls[name], owns[name], strict=True))
        print(
            f"  outside its own parse of the request lines: {outside:.2f} s (that parse "
            f"{statistics.median(owns[name]):.2f} s; steadier than the ratio, which moves "
            "with the parse)"
        )
        print(f"  audit per request: {audit_med / requests * 1e6:.2f} µs")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1_000_000)
    parser.add_argument(
        "--chunk-requests",
        type=int,
        default=100_000,
        help="requests of the trace with 128 chunk times each (about as many bytes as the "
        "1,000,000 without; 0 to skip it)",
    )
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--keep", type=Path, help="write the traces here and keep them")
    parser.add_argument(
        "--against", type=Path, help="also time the audit of the code in DIR (another checkout)"
    )
    args = parser.parse_args()
    against = args.against.resolve() if args.against else None
    if against is not None and package_of(against) != against / "reporter":
        sys.exit(f"{against}: its own package is not the one imported there")
    folder = args.keep or Path(tempfile.mkdtemp(prefix="benchreport-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    traces = [(folder / "trace.jsonl", args.requests, False)]
    if args.chunk_requests:
        traces.append((folder / "trace-chunk-times.jsonl", args.chunk_requests, True))
    for trace, requests, chunk_times in traces:
        if not trace.exists():
            t = time.perf_counter()
            write_trace(trace, requests, chunk_times=chunk_times)
            print(
                f"wrote {trace} ({trace.stat().st_size / 1e6:,.0f} MB, {requests:,} requests) "
                f"in {time.perf_counter() - t:.1f} s"
            )
        what = f" with {CHUNKS} chunk times each" if chunk_times else ""
        print(f"{requests:,} requests{what}:")
        compare(trace, folder / "verdict.json", requests, args.repeats, against)


if __name__ == "__main__":
    main()
