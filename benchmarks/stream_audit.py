"""A trace larger than the memory it is audited in: the streamed audit under a memory cap.

Writes a synthetic native trace as Parquet (default 10,000,000 requests: a sweep of 16 runs,
N = 1 … 128, two repeats each, closed loop, as benchmarks/audit_speed.py), written a run at a
time so that writing it needs little memory either. Then, each in a fresh subprocess:
  - the streamed audit (`api.audit([trace], stream=True)`) under an address-space cap
    (RLIMIT_AS, default 1 GiB), and
  - unless --no-in-memory, the in-memory audit of the same file, without a cap,
and prints seconds, peak memory (max RSS) and whether the two JSON verdicts are equal (all
but the inputs' notes, where the streamed audit says it streamed).

    python benchmarks/stream_audit.py [--requests 10000000] [--cap-gb 1] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

# the sweep shared with the other speed benchmarks, importable when this file is loaded by path
sys.path.insert(0, str(Path(__file__).resolve().parent))
from synthetic import RUNS, point_times, run_record

ROOT = Path(__file__).resolve().parents[1]
#: An address-space cap counts what allocators reserve, not only what they fill: pyarrow's
#: default pool (mimalloc) and glibc's per-thread arenas reserve gigabytes they never touch.
#: Both audits run with the system allocator and two arenas (README, "Beyond memory").
ALLOCATION = {"ARROW_DEFAULT_MEMORY_POOL": "system", "MALLOC_ARENA_MAX": "2"}

AUDIT = """
import resource, sys, time
cap = float(sys.argv[3])
if cap > 0:
    limit = int(cap * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
from reporter import api
from reporter.render.json import render_json
t = time.perf_counter()
verdict = api.audit([sys.argv[1]], stream=sys.argv[4] == "stream")
open(sys.argv[2], "w").write(render_json(verdict))
seconds = time.perf_counter() - t
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(seconds, peak, sum(r.requests for r in verdict.runs))
"""


def write_trace(path: Path, total: int) -> None:
    """The sweep of benchmarks/audit_speed.py, as native Parquet rows (reporter.parquet)."""
    sys.path.insert(0, str(ROOT))
    from reporter.parquet import ROW_GROUP, SCHEMA

    rng = np.random.default_rng(1234)
    runs = RUNS
    per_run = total // len(runs)
    records = [(run_record(n, rep), line) for line, (n, rep) in enumerate(runs, start=1)]
    source = "synthetic.jsonl"
    with pq.ParquetWriter(path, SCHEMA, compression="zstd") as writer:
        head = {name: [None] * len(records) for name in SCHEMA.names}
        head["kind"] = ["run"] * len(records)
        head["record"] = [json.dumps(r, separators=(",", ":")) for r, _ in records]
        head["source_path"] = [source] * len(records)
        head["source_line"] = [line for _, line in records]
        writer.write_table(pa.Table.from_pydict(head, schema=SCHEMA))
        line = len(records)
        for n, rep in runs:
            run_id = f"n{n}-r{rep}"
            sends, firsts, ends = point_times(rng, n, per_run)
            columns = {
                "kind": pa.array(["request"] * per_run).dictionary_encode(),
                "record": pa.nulls(per_run, pa.string()),
                "run": pa.array([run_id] * per_run),
                "id": pa.array([f"{run_id}-{i}" for i in range(per_run)]),
                "finish_reason": pa.array(["length"] * per_run),
                "prompt_sha256": pa.nulls(per_run, pa.string()),
                "error": pa.nulls(per_run, pa.string()),
                "t_send": np.round(sends, 6),
                "t_first": np.round(firsts, 6),
                "t_end": np.round(ends, 6),
                "reported_tps": np.round(128 / (np.round(ends, 6) - np.round(firsts, 6)), 3),
                "prompt_tokens": np.full(per_run, 32.0),
                "output_tokens": np.full(per_run, 128.0),
                "n_chunks": pa.nulls(per_run, pa.float64()),
                "chunk_tokens": pa.nulls(per_run, pa.float64()),
                "token_times": pa.nulls(per_run, pa.list_(pa.float64())),
                "source_path": pa.array([source] * per_run).dictionary_encode(),
                "source_line": np.arange(line + 1, line + per_run + 1),
            }
            line += per_run
            for field in SCHEMA:  # the native fields this trace leaves out
                columns.setdefault(field.name, pa.nulls(per_run, field.type))
            table = pa.Table.from_pydict(columns, schema=SCHEMA)
            writer.write_table(table, row_group_size=ROW_GROUP)
            del table, columns


def run_audit(trace: Path, out: Path, cap_gb: float, mode: str) -> tuple[float, float, int]:
    result = subprocess.run(
        [sys.executable, "-c", AUDIT, str(trace), str(out), str(cap_gb), mode],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", **ALLOCATION},
        check=False,
    )
    if result.returncode != 0:
        sys.exit(f"{mode} audit failed:\n{result.stderr[-3000:]}")
    seconds, peak, requests = result.stdout.split()
    return float(seconds), float(peak), int(requests)


def comparable(path: Path) -> dict[str, object]:
    verdict = json.loads(path.read_text())
    for entry in verdict["inputs"]:
        entry.pop("notes", None)
    return verdict


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=10_000_000)
    parser.add_argument("--cap-gb", type=float, default=1.0)
    parser.add_argument("--no-in-memory", action="store_true", help="skip the in-memory audit")
    parser.add_argument("--keep", type=Path, help="write the trace here and keep it")
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="benchreport-stream-"))
    folder.mkdir(parents=True, exist_ok=True)
    trace = folder / f"trace-{args.requests}.parquet"
    if not trace.exists():
        t = time.perf_counter()
        write_trace(trace, args.requests)
        print(
            f"wrote {trace} ({trace.stat().st_size / 1e6:,.0f} MB, {args.requests:,} requests) "
            f"in {time.perf_counter() - t:.1f} s"
        )
    streamed = folder / "streamed.json"
    seconds, peak, requests = run_audit(trace, streamed, args.cap_gb, "stream")
    print(
        f"streamed audit under a {args.cap_gb:g} GiB address-space cap: {seconds:.1f} s, "
        f"peak RSS {peak:,.0f} MB, {requests:,} requests"
    )
    if args.no_in_memory:
        return
    whole = folder / "in-memory.json"
    seconds, peak, requests = run_audit(trace, whole, 0, "memory")
    print(f"in-memory audit, no cap: {seconds:.1f} s, peak RSS {peak:,.0f} MB")
    same = comparable(streamed) == comparable(whole)
    print(f"verdicts and figures equal: {same}")
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
