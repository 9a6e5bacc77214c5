"""How much load the recorder itself can take before its own timing goes wrong.

It records N = 1, 2, 4, … concurrent streams against a server on loopback and reports, per N
(the median of ``--repeats`` runs): the recorder's event-loop lag (p50 / p99 / max) and CPU,
the lag of an idle event loop in another process over the same window (what the machine
itself adds: other processes, the server's own threads), the load average, and the recorded
tokens against the server's own count (/metrics). Then the largest N whose lag p99 is under
1 ms, and the largest disagreement with the server's count (the target is within 1%).

Servers (``--engine``):

- ``llama`` (default): llama.cpp's ``llama-server`` with the tiny random-weight model that
  ``tests/realengine/setup.sh`` builds (``REALENGINE_BUILD``), one slot per stream
  (``--parallel`` = the largest N, continuous batching), so every stream decodes at once and a
  decode step sends one chunk for each of them together.
- ``ref``: the zero-cost reference engine (``python -m reporter.refengine``): a token for
  every stream each ``--step-ms``, however many there are.

    python benchmarks/recorder_overhead.py
    python benchmarks/recorder_overhead.py --concurrency 64,256 --tokens 64 --repeats 3
    python benchmarks/recorder_overhead.py --engine ref --concurrency 1,8,64,256 --json out.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import llama_server  # noqa: E402

from reporter.recorder import RecordConfig, record  # noqa: E402
from reporter.recorder.health import HealthMonitor  # noqa: E402

LAG_TARGET_MS = 1.0
COUNT_TARGET = 0.01


@contextmanager
def engine(args: argparse.Namespace, slots: int, tmp: Path) -> Iterator[tuple[str, str]]:
    """The server (its URL and model name), stopped on the way out."""
    port = args.port or llama_server.free_port()
    log = tmp / "engine.log"
    if args.engine == "llama":
        binary, model = llama_server.binary_and_model()
        per_slot = max(256, args.tokens + 128)
        cmd = [str(binary), "-m", str(model), "--host", "127.0.0.1", "--port", str(port),
               "--parallel", str(slots), "-cb", "-c", str(slots * per_slot),
               "--threads-http", str(slots + 4), "-t", str(args.threads),
               "-tb", str(args.threads), "--metrics", "--no-webui", "-a", "tiny"]  # fmt: skip
        name = "tiny"
    else:
        cmd = [sys.executable, "-m", "reporter.refengine", "--port", str(port), "--slots",
               "100000", "--step-ms", str(args.step_ms), "--model", "ref"]  # fmt: skip
        name = "ref"
    if args.server_nice:
        cmd = ["nice", "-n", str(args.server_nice), *cmd]
    env = os.environ | {"OMP_WAIT_POLICY": "PASSIVE"}  # waiting threads do not spin
    url = f"http://127.0.0.1:{port}"
    with llama_server.running(cmd, url, log, env=env, cwd=ROOT):
        yield url, name


def idle_probe() -> None:
    """(In its own process) an idle loop's lag until stdin closes, printed as JSON."""

    async def watch() -> dict[str, Any]:
        monitor = HealthMonitor()
        monitor.start()
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
        return (await monitor.stop()).to_record()

    print(json.dumps(asyncio.run(watch())), flush=True)


@contextmanager
def idle_alongside() -> Iterator[dict[str, Any]]:
    """An idle loop in another process over the same window; its lag fills the dict."""
    proc = subprocess.Popen([sys.executable, __file__, "--idle-probe"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, cwd=ROOT)  # fmt: skip
    out: dict[str, Any] = {}
    time.sleep(0.5)  # its interpreter starts before the run does
    try:
        yield out
    finally:
        stdout, _ = proc.communicate("", timeout=30)
        out.update(json.loads(stdout))


def one_run(
    url: str, model: str, n: int, workers: int, args: argparse.Namespace, tmp: Path
) -> dict[str, Any]:
    out = tmp / f"c{n}-{time.monotonic_ns()}.jsonl"
    cfg = RecordConfig(base_url=url, model=model, out=str(out), concurrency=(n,),
                       output_tokens=args.tokens, pause_s=0, group="overhead",
                       max_in_flight=n + 8, client=args.client,
                       workers=workers)  # fmt: skip
    load_before = os.getloadavg()[0]
    with idle_alongside() as idle:
        record(cfg)
    load_after = os.getloadavg()[0]
    records = [orjson.loads(x) for x in out.read_bytes().splitlines()]
    end = next(r for r in records if r["kind"] == "run_end")
    reqs = [r for r in records if r["kind"] == "request"]
    ok = [r for r in reqs if r["finish_reason"] == "length"]
    recorded = sum(r["output_tokens"] for r in ok)
    chunks = sum(r["n_chunks"] for r in reqs)
    wall = max(r["t_end"] for r in reqs) - min(r["t_send"] for r in reqs)
    server = (end.get("metrics_delta") or {}).get("generation_tokens")
    client = end["client"]
    return {
        "concurrency": n, "ok": len(ok), "recorded_tokens": recorded, "server_tokens": server,
        "wall_s": wall, "aggregate_tps": recorded / wall, "chunks_per_s": chunks / wall,
        "lag_p50_ms": client["loop_lag_p50_ms"], "lag_p99_ms": client["loop_lag_p99_ms"],
        "lag_max_ms": client["loop_lag_max_ms"], "cpu_percent": client["cpu_percent"],
        "cpu_us_per_chunk": client.get("cpu_percent_total", client["cpu_percent"]) / 100 * wall
        / chunks * 1e6,
        "workers": workers,
        "idle_lag_p50_ms": idle["loop_lag_p50_ms"], "idle_lag_p99_ms": idle["loop_lag_p99_ms"],
        "load": (load_before + load_after) / 2,
        "recorded_vs_server": recorded / server - 1 if server else None,
    }  # fmt: skip


def median_row(runs: list[dict[str, Any]]) -> dict[str, Any]:
    row = dict(runs[0])
    for key, value in runs[0].items():
        if isinstance(value, float) and key != "recorded_vs_server":
            row[key] = statistics.median(r[key] for r in runs)
    diffs = [r["recorded_vs_server"] for r in runs if r["recorded_vs_server"] is not None]
    row["recorded_vs_server"] = max(diffs, key=abs) if diffs else None  # the worst, not a median
    row["ok"] = min(r["ok"] for r in runs)
    row["runs"] = runs
    return row


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--engine", choices=("llama", "ref"), default="llama")
    ap.add_argument("--concurrency", default="1,4,16,64,128,256")
    ap.add_argument("--tokens", type=int, default=64, help="forced tokens per request")
    ap.add_argument("--repeats", type=int, default=1, help="runs per N (the median is shown)")
    ap.add_argument("--workers", default="1",
                    help="the recorder's streaming processes (a list: a row each)")  # fmt: skip
    ap.add_argument("--step-ms", type=float, default=10.0,
                    help="ref engine: one token per stream per step")  # fmt: skip
    ap.add_argument("--threads", type=int, default=2, help="llama-server's threads")
    ap.add_argument("--server-nice", type=int, default=0,
                    help="run the server at this niceness (0: as the recorder)")  # fmt: skip
    ap.add_argument("--port", type=int, default=0, help="the server's port (0: a free one)")
    ap.add_argument("--client", choices=("lean", "httpx"), default="lean",
                    help="the recorder's streaming client")  # fmt: skip
    ap.add_argument("--json", help="also write the rows here")
    ap.add_argument("--idle-probe", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.idle_probe:
        idle_probe()
        return
    levels = [int(x) for x in args.concurrency.split(",")]
    pools = [int(x) for x in args.workers.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as tmp, engine(args, max(levels), Path(tmp)) as (url, m):
        for n in levels:
            for workers in pools:  # side by side: the machine's load drifts between N
                runs = [one_run(url, m, n, workers, args, Path(tmp)) for _ in range(args.repeats)]
                rows.append(median_row(runs))
    server = (
        f"llama-server --parallel {max(levels)} -cb (tiny model)"
        if args.engine == "llama"
        else f"zero-cost reference engine, a token per stream every {args.step_ms:g} ms"
    )
    print(
        f"{args.client} client; {server}; "
        f"{args.tokens} tokens a request; median of {args.repeats} run(s) per N; lag in ms"
    )
    print(
        f"{'N':>5} {'W':>3} {'ok':>5} {'tok/s':>8} {'chunks/s':>9} {'p50':>6} {'p99':>7} "
        f"{'max':>7} {'idle p99':>9} {'load':>5} {'CPU %':>6} {'µs/chunk':>8} "
        f"{'recorded/server':>16}"
    )
    for r in rows:
        diff = "n/a" if r["recorded_vs_server"] is None else f"{r['recorded_vs_server']:+.2%}"
        print(
            f"{r['concurrency']:>5} {r['workers']:>3} {r['ok']:>5} {r['aggregate_tps']:>8,.0f} "
            f"{r['chunks_per_s']:>9,.0f} {r['lag_p50_ms']:>6.2f} {r['lag_p99_ms']:>7.2f} "
            f"{r['lag_max_ms']:>7.2f} {r['idle_lag_p99_ms']:>9.2f} {r['load']:>5.2f} "
            f"{r['cpu_percent']:>6.0f} {r['cpu_us_per_chunk']:>8.0f} {diff:>16}"
        )
    print("W: streaming processes (record --workers); idle p99: an idle loop in another "
          "process over the same window (the machine alone)")  # fmt: skip
    for workers in pools:
        under = [r["concurrency"] for r in rows
                 if r["workers"] == workers and r["lag_p99_ms"] < LAG_TARGET_MS]  # fmt: skip
        print(
            f"largest N with loop lag p99 under {LAG_TARGET_MS:g} ms, {workers} streaming "
            f"process(es): {max(under) if under else 'none'}"
        )
    diffs = [abs(r["recorded_vs_server"]) for r in rows if r["recorded_vs_server"] is not None]
    if diffs:
        worst = max(diffs)
        verdict = "within" if worst <= COUNT_TARGET else "NOT within"
        print(
            f"recorded tokens against the server's count: worst {worst:.3%} "
            f"({verdict} the {COUNT_TARGET:.0%} target)"
        )
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows}, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
