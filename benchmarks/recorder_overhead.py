"""How much load the recorder itself can take before its own timing goes wrong.

Against a zero-cost streaming server on loopback (the reference engine with a slot for every
request and no per-sequence cost: every stream gets a token every ``--step-ms``), it records
N = 1, 2, 4, … concurrent streams and reports, per N: the aggregate, the chunks per second
the recorder parsed, its event-loop lag (p50 / p99 / max) and CPU, and its recorded tokens
against the server's own count (/metrics). Then the largest N with a lag p99 under 1 ms, and
the largest disagreement with the server's count (the target is within 1%).

    python benchmarks/recorder_overhead.py
    python benchmarks/recorder_overhead.py --concurrency 1,8,64,256 --tokens 100 --json out.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from reporter.recorder import RecordConfig, record  # noqa: E402
from reporter.recorder.health import HealthMonitor  # noqa: E402

LAG_TARGET_MS = 1.0
COUNT_TARGET = 0.01


def start_engine(step_ms: float, log: Path) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "reporter.refengine", "--port", "0", "--slots", "100000",
         "--step-ms", str(step_ms), "--log-file", str(log)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
    )  # fmt: skip
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if "listening on" not in line:
        proc.kill()
        raise SystemExit(f"the reference engine did not start: {proc.communicate()[1]}")
    return proc, line.split("listening on ")[1].strip()


def idle_lag(seconds: float = 2.0) -> dict[str, float | int | None]:
    """The lag of a loop doing nothing: what the machine itself adds (other processes)."""

    async def watch() -> dict[str, float | int | None]:
        monitor = HealthMonitor()
        monitor.start()
        await asyncio.sleep(seconds)
        return (await monitor.stop()).to_record()

    return asyncio.run(watch())


def measure(levels: list[int], tokens: int, step_ms: float, client: str) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as tmp:
        proc, url = start_engine(step_ms, Path(tmp) / "engine.log")
        try:
            out = Path(tmp) / "overhead.jsonl"
            cfg = RecordConfig(base_url=url, model="ref", out=str(out),
                               concurrency=tuple(levels), output_tokens=tokens, pause_s=0.5,
                               group="overhead", max_in_flight=max(levels) + 8,
                               client=client)  # fmt: skip
            record(cfg)
            records = [orjson.loads(x) for x in out.read_bytes().splitlines()]
        finally:
            proc.terminate()
            proc.communicate(timeout=10)
    rows = []
    for end in (r for r in records if r["kind"] == "run_end"):
        reqs = [r for r in records if r["kind"] == "request" and r["run"] == end["run"]]
        ok = [r for r in reqs if r["finish_reason"] == "length"]
        recorded = sum(r["output_tokens"] for r in ok)
        chunks = sum(r["n_chunks"] for r in reqs)
        wall = max(r["t_end"] for r in reqs) - min(r["t_send"] for r in reqs)
        server = (end.get("metrics_delta") or {}).get("generation_tokens")
        client = end["client"]
        rows.append({
            "concurrency": len(reqs), "ok": len(ok), "recorded_tokens": recorded,
            "server_tokens": server, "wall_s": wall, "aggregate_tps": recorded / wall,
            "chunks_per_s": chunks / wall, "lag_p50_ms": client["loop_lag_p50_ms"],
            "lag_p99_ms": client["loop_lag_p99_ms"], "lag_max_ms": client["loop_lag_max_ms"],
            "cpu_percent": client["cpu_percent"],
            "cpu_us_per_chunk": client["cpu_percent"] / 100 * wall / chunks * 1e6,
            "recorded_vs_server": recorded / server - 1 if server else None,
        })  # fmt: skip
    return rows


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--concurrency", default="1,2,4,8,16,32,64,128,256")
    ap.add_argument("--tokens", type=int, default=200, help="forced tokens per request")
    ap.add_argument("--step-ms", type=float, default=10.0, help="one token per stream per step")
    ap.add_argument("--client", choices=("lean", "httpx"), default="lean",
                    help="the recorder's streaming client")  # fmt: skip
    ap.add_argument("--json", help="also write the rows here")
    args = ap.parse_args(argv)
    levels = [int(x) for x in args.concurrency.split(",")]
    idle = idle_lag()
    rows = measure(levels, args.tokens, args.step_ms, args.client)
    print(
        f"idle loop (the machine alone): lag p50 {idle['loop_lag_p50_ms']:.2f} ms, "
        f"p99 {idle['loop_lag_p99_ms']:.2f} ms, max {idle['loop_lag_max_ms']:.2f} ms"
    )
    print(
        f"{args.client} client; zero-cost server: a token per stream every {args.step_ms:g} ms, "
        f"{args.tokens} tokens per request; loop lag in ms"
    )
    print(
        f"{'N':>5} {'ok':>5} {'tok/s':>9} {'chunks/s':>9} {'p50 ms':>8} {'p99 ms':>8} "
        f"{'max ms':>8} {'CPU %':>6} {'µs/chunk':>8} {'recorded/server':>16}"
    )
    for r in rows:
        diff = "n/a" if r["recorded_vs_server"] is None else f"{r['recorded_vs_server']:+.2%}"
        print(
            f"{r['concurrency']:>5} {r['ok']:>5} {r['aggregate_tps']:>9,.0f} "
            f"{r['chunks_per_s']:>9,.0f} {r['lag_p50_ms']:>8.2f} {r['lag_p99_ms']:>8.2f} "
            f"{r['lag_max_ms']:>8.2f} {r['cpu_percent']:>6.0f} {r['cpu_us_per_chunk']:>8.0f} "
            f"{diff:>16}"
        )
    under = [r["concurrency"] for r in rows if r["lag_p99_ms"] < LAG_TARGET_MS]
    print(
        f"largest N with loop lag p99 under {LAG_TARGET_MS:g} ms: {max(under) if under else 'none'}"
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
        Path(args.json).write_text(
            json.dumps({"idle": idle, "rows": rows}, indent=1), encoding="utf-8"
        )


if __name__ == "__main__":
    main()
