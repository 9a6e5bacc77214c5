"""The recorder against its peers: GuideLLM and AIPerf, back to back, on one llama-server.

Starts its own llama-server (the tiny model of tests/realengine, continuous batching), then
for each concurrency N runs the same workload with each tool, one process per run: N requests
in flight, ``--requests`` requests of ``--prompt-tokens`` prompt tokens and ``--output-tokens``
forced output tokens (``ignore_eos``), streamed over /v1/completions. Per run it measures:

- the tool's own aggregate (what it prints and writes: GuideLLM's output tokens per second,
  AIPerf's output token throughput, the recorder's total ÷ wall) and the aggregate
  ``benchreport audit`` recomputes from the tool's files (total output tokens ÷ first send to
  last end);
- the server's own count: ``llamacpp:tokens_predicted_total`` from /metrics before and after
  the run, divided by the same wall (the recorder's preflight request, sent before its run,
  is taken off with the count its trace scraped around the run); and the prompt tokens the
  server restored from its cache;
- the tool process's wall time (start-up included), its CPU (user + system of it and its
  children, from ``wait4``) and its peak memory (the RSS of its process tree, summed, sampled
  every 0.2 s);
- the audit's verdict on the tool's files.

GuideLLM and AIPerf are optional: each lives in its own virtualenv under ``--venv-root``
(default ~/.cache/benchreport-peers/<tool>), created and filled with pip on first use; a tool
that cannot be installed or started is reported as such and the rest still runs. Both need a
Hugging Face tokenizer: one mirroring the model's own vocabulary is written from the GGUF file
(local_tokenizer.py), so nothing is downloaded, and its counts are checked against the
server's /tokenize.

    python benchmarks/peers.py                                   # N = 1,2,4, 8 × 128 tokens
    python benchmarks/peers.py --repeats 3 --markdown --json peers.json
    python benchmarks/peers.py --tools recorder,aiperf --concurrency 4
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

import llama_server  # noqa: E402
from local_tokenizer import vocab_from_gguf, write_tokenizer_dir  # noqa: E402

PEERS = {"guidellm": "guidellm==0.8.1", "aiperf": "aiperf==0.13.0"}
TOOLS = ("recorder", "guidellm", "aiperf")
COUNT_TARGET = 0.03
PORTS = range(18300, 18310)


# ---------------------------------------------------------------------------------- server


def http_get(url: str, timeout: float = 5.0) -> bytes:
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return bytes(r.read())


def http_post(url: str, body: dict[str, Any], timeout: float = 10.0) -> Any:
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read())


def metrics(base: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for line in http_get(base + "/metrics").decode().splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            with contextlib.suppress(ValueError):
                out[name] = float(value)
    return out


def port_free(port: int) -> bool:
    import socket

    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


def start_server(
    args: argparse.Namespace, log: Path
) -> tuple[subprocess.Popen[bytes], str, list[str]]:
    binary, model = llama_server.binary_and_model(args.build)
    port = args.port or next((p for p in PORTS if port_free(p)), 0)
    if not port:
        raise SystemExit(f"no free port in {PORTS.start}-{PORTS.stop - 1}")
    flags = [
        "--parallel",
        str(args.parallel),
        "-cb",
        "-c",
        str(2048 * args.parallel),
        "-t",
        str(args.threads),
        "-tb",
        str(args.threads),
        "--metrics",
        "--no-webui",
        "-a",
        "tiny",
    ]
    cmd = [str(binary), "-m", str(model), "--host", "127.0.0.1", "--port", str(port), *flags]
    base = f"http://127.0.0.1:{port}"
    return llama_server.start(cmd, base, log, timeout=60), base, flags


# ------------------------------------------------------------------------------- the peers


def venv_tool(root: Path, tool: str) -> Path:
    return root / tool / "bin" / tool


def ensure_peer(root: Path, tool: str, install: bool) -> str | None:
    """None when the tool runs; otherwise why it does not."""
    exe = venv_tool(root, tool)
    if not exe.exists():
        if not install:
            return f"not installed at {exe.parent.parent} (and --no-install)"
        venv = root / tool
        log = root / f"{tool}.install.log"
        print(f"installing {PEERS[tool]} into {venv} (log: {log}) ...", file=sys.stderr, flush=True)
        root.mkdir(parents=True, exist_ok=True)
        with log.open("ab") as out:
            steps = [
                [sys.executable, "-m", "venv", str(venv)],
                [str(venv / "bin" / "pip"), "install", PEERS[tool]],
            ]
            for step in steps:
                rc = subprocess.call(step, stdout=out, stderr=subprocess.STDOUT)
                if rc:
                    return f"pip install {PEERS[tool]} failed (exit {rc}; see {log})"
    try:
        res = subprocess.run([str(exe), "--version"], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{exe} does not start: {exc}"
    if res.returncode:
        return f"{exe} --version failed: {(res.stderr or res.stdout).strip().splitlines()[-1:]}"
    return None


CHECK_TOKENIZER = r"""
import json, sys, urllib.request
from transformers import AutoTokenizer
tok = AutoTokenizer.from_pretrained(sys.argv[1])
base = sys.argv[2]
words = ("the model server request stream batch queue slot latency throughput bench random "
         "tiny Hello, World! 42 (x) [y] {z} foo-bar naïve café über 😀 tab\there  two  "
         "spaces\nline").split(" ")
import random
rng = random.Random(0)
texts = [" ".join(rng.choice(words) for _ in range(rng.randint(1, 80))) for _ in range(100)]
same = diff = srv_total = 0
for t in texts:
    req = urllib.request.Request(base + "/tokenize", data=json.dumps({"content": t}).encode())
    srv = json.load(urllib.request.urlopen(req))["tokens"]
    mine = tok(t, add_special_tokens=False)["input_ids"]
    same += srv == mine
    diff += abs(len(srv) - len(mine))
    srv_total += len(srv)
print(json.dumps({"prompts": len(texts), "identical": same, "count_diff": diff,
                  "server_tokens": srv_total}))
"""


def check_tokenizer(python: Path, tok_dir: Path, base: str) -> dict[str, Any] | str:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    res = subprocess.run(
        [str(python), "-c", CHECK_TOKENIZER, str(tok_dir), base],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    if res.returncode:
        return (res.stderr.strip().splitlines() or ["failed"])[-1]
    result: dict[str, Any] = json.loads(res.stdout.strip().splitlines()[-1])
    return result


# ------------------------------------------------------------------------- running a process


def tree_rss_mb(pid: int) -> float:
    """The summed RSS of ``pid`` and its descendants (shared pages counted in each)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    page = os.sysconf("SC_PAGE_SIZE")
    total, todo, seen = 0, [pid], set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        with contextlib.suppress(OSError):
            total += int(Path(f"/proc/{p}/statm").read_text().split()[1]) * page
        todo.extend(children.get(p, []))
    return total / 2**20


@dataclass
class Proc:
    rc: int
    wall_s: float
    cpu_s: float
    peak_mb: float
    stdout: str
    stderr: str


def run_measured(
    cmd: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: float = 1800
) -> Proc:
    out, err = cwd / "stdout.txt", cwd / "stderr.txt"
    t0 = time.perf_counter()
    with out.open("wb") as fo, err.open("wb") as fe:
        proc = subprocess.Popen(
            cmd, cwd=cwd, env=env, stdout=fo, stderr=fe, stdin=subprocess.DEVNULL
        )
        peak = [0.0]
        done = threading.Event()

        def sample() -> None:
            while not done.is_set():
                peak[0] = max(peak[0], tree_rss_mb(proc.pid))
                done.wait(0.2)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        deadline = time.monotonic() + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                proc.kill()
            time.sleep(0.05)
        wall = time.perf_counter() - t0
        done.set()
        sampler.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    return Proc(
        proc.returncode,
        wall,
        usage.ru_utime + usage.ru_stime,
        peak[0],
        out.read_text(errors="replace"),
        err.read_text(errors="replace"),
    )


# ------------------------------------------------------------------------------- the tools


@dataclass
class Row:
    tool: str
    n: int
    repeat: int
    ok: bool = False
    note: str = ""
    reported_tps: float | None = None
    audit_tps: float | None = None
    audit_wall_s: float | None = None
    audit_tokens: float | None = None
    server_tokens: float | None = None
    outside_tokens: float = 0.0
    server_tps: float | None = None
    ratio_reported: float | None = None
    ratio_audit: float | None = None
    cached_prompt_tokens: float | None = None
    prompt_tokens: float | None = None
    wall_s: float | None = None
    cpu_s: float | None = None
    peak_mb: float | None = None
    verdict: str = ""
    findings: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)


def command_for(
    tool: str, args: argparse.Namespace, base: str, n: int, seed: int, tok: Path, out: Path
) -> tuple[list[str], dict[str, str], Path]:
    """The command line, its environment and the file to audit."""
    env = dict(os.environ)
    if tool == "recorder":
        trace = out / "trace.jsonl"
        cmd = [
            sys.executable,
            "-m",
            "reporter",
            "record",
            base,
            "--model",
            "tiny",
            "-c",
            str(n),
            "--requests",
            str(args.requests),
            "--output-tokens",
            str(args.output_tokens),
            "--prompt-tokens",
            str(args.prompt_tokens),
            "--seed",
            str(seed),
            "--pause",
            "0",
            "--out",
            str(trace),
            "-q",
        ]
        env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
        return cmd, env, trace
    exe = str(venv_tool(args.venv_root, tool))
    if tool == "guidellm":
        env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
        path = out / "benchmarks.json"
        cmd = [
            exe,
            "run",
            "--backend",
            f"kind=openai_http,target={base},model=tiny,request_format=/v1/completions",
            "--profile",
            f"kind=concurrent,streams={n}",
            "--constraint",
            f"kind=max_requests,count={args.requests}",
            "--tokenizer",
            f"kind=huggingface_auto,model={tok}",
            "--data",
            f"kind=synthetic_text,prompt_tokens={args.prompt_tokens},output_tokens={args.output_tokens}",
            "--seed",
            f"kind=static,value={seed}",
            "--output",
            f"kind=json,path={path}",
            "--disable-console-interactive",
        ]
        return cmd, env, path
    # AIPerf: HF_HUB_OFFLINE makes it look a local path up in the hub cache (and fail); a local
    # directory is loaded from disk without it.
    env.pop("HF_HUB_OFFLINE", None)
    env.pop("TRANSFORMERS_OFFLINE", None)
    art = out / "artifacts"
    cmd = [
        exe,
        "profile",
        "--model",
        "tiny",
        "--url",
        base,
        "--endpoint-type",
        "completions",
        "--streaming",
        "--tokenizer",
        str(tok),
        "--concurrency",
        str(n),
        "--request-count",
        str(args.requests),
        "--prompt-input-tokens-mean",
        str(args.prompt_tokens),
        "--prompt-input-tokens-stddev",
        "0",
        "--prompt-output-tokens-mean",
        str(args.output_tokens),
        "--prompt-output-tokens-stddev",
        "0",
        "--extra-inputs",
        "ignore_eos:true",
        "--use-legacy-max-tokens",
        "--random-seed",
        str(seed),
        "--output-artifact-dir",
        str(art),
        "--ui",
        "none",
        "--no-gpu-telemetry",
    ]
    return cmd, env, art / "profile_export.jsonl"


def reported_aggregate(tool: str, path: Path, stdout: str) -> float | None:
    try:
        if tool == "guidellm":
            bench = json.loads(path.read_text())["benchmarks"][0]
            return float(bench["metrics"]["output_tokens_per_second"]["successful"]["mean"])
        if tool == "aiperf":
            summary = json.loads((path.parent / "profile_export_aiperf.json").read_text())
            return float(summary["output_token_throughput"]["avg"])
        header = None
        for line in stdout.splitlines():
            cells = line.split()
            if "tok/s" in cells and "wall" in cells:
                header = cells
            elif header and len(cells) >= 6 and cells[1].isdigit():
                return float(cells[5].replace(",", ""))  # run N ok/sent tokens wall tok/s ...
    except (OSError, KeyError, IndexError, ValueError, TypeError):
        return None
    return None


def audit(path: Path, out: Path) -> dict[str, Any] | str:
    verdict = out / "audit.json"
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "reporter",
            "audit",
            str(path),
            "--no-html",
            "--json",
            str(verdict),
            "--fail-on",
            "never",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    (out / "audit.txt").write_text(res.stdout + res.stderr)
    if not verdict.exists():
        return (res.stderr.strip().splitlines() or ["audit failed"])[-1]
    data: dict[str, Any] = json.loads(verdict.read_text())
    return data


def recorder_server_tokens(trace: Path) -> float | None:
    for line in trace.read_text().splitlines():
        record = json.loads(line)
        if record.get("kind") == "run_end":
            value = (record.get("metrics_delta") or {}).get("generation_tokens")
            return float(value) if value is not None else None
    return None


def run_one(
    tool: str,
    args: argparse.Namespace,
    base: str,
    n: int,
    repeat: int,
    seed: int,
    tok: Path,
    work: Path,
) -> Row:
    row = Row(tool, n, repeat)
    out = work / f"{tool}-c{n}-r{repeat}"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    cmd, env, path = command_for(tool, args, base, n, seed, tok, out)
    (out / "command.txt").write_text(" ".join(cmd) + "\n")
    before = metrics(base)
    proc = run_measured(cmd, out, env)
    after = metrics(base)
    row.wall_s, row.cpu_s, row.peak_mb = proc.wall_s, proc.cpu_s, proc.peak_mb

    def delta(name: str) -> float:
        return after.get(f"llamacpp:{name}", 0.0) - before.get(f"llamacpp:{name}", 0.0)

    row.server_tokens = delta("tokens_predicted_total")
    row.prompt_tokens = delta("prompt_tokens_total")
    row.cached_prompt_tokens = delta("prompt_tokens_cached_total")
    if proc.rc != 0 or not path.exists():
        tail = (proc.stderr.strip() or proc.stdout.strip()).splitlines()[-3:]
        row.note = f"exit {proc.rc}: " + " | ".join(t.strip()[:160] for t in tail)
        return row
    row.files = [str(path)]
    if tool == "recorder":
        # its one preflight request (a few tokens, before the run) is outside the run's wall:
        # the server's count around the run itself is in the trace, scraped just before the
        # first send and after the last end
        inside = recorder_server_tokens(path)
        if inside is not None:
            row.outside_tokens = row.server_tokens - inside
            row.server_tokens = inside
    row.reported_tps = reported_aggregate(tool, path, proc.stdout)
    verdict = audit(path, out)
    if isinstance(verdict, str):
        row.note = f"audit failed: {verdict}"
        return row
    runs = verdict.get("runs") or []
    row.verdict = str(verdict.get("verdict", ""))
    row.findings = sorted(
        {
            f"{f.get('code')} {f.get('name', '')} ({f.get('severity')})"
            for f in verdict.get("findings", [])
            if f.get("outcome", "fired") == "fired"
        }
    )
    if runs:
        r = runs[0]
        row.audit_tps, row.audit_wall_s, row.audit_tokens = (
            r.get("aggregate_tps"),
            r.get("wall_s"),
            r.get("output_tokens"),
        )
    if row.audit_wall_s:
        row.server_tps = row.server_tokens / row.audit_wall_s
        if row.server_tps:
            row.ratio_reported = row.reported_tps / row.server_tps if row.reported_tps else None
            row.ratio_audit = row.audit_tps / row.server_tps if row.audit_tps else None
    row.ok = True
    return row


# ---------------------------------------------------------------------------------- report


def median(values: list[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return statistics.median(vals) if vals else None


def fmt(v: float | None, spec: str) -> str:
    return "–" if v is None else format(v, spec)


def table(rows: list[Row], skipped: dict[str, str], markdown: bool) -> str:
    cols = [
        "tool",
        "N",
        "runs",
        "tool tok/s",
        "audit tok/s",
        "server tok/s",
        "tool ÷ server",
        "audit ÷ server",
        "cached prompt tok",
        "wall s",
        "client CPU s",
        "peak MB",
        "audit verdict",
    ]
    lines: list[list[str]] = []
    keys = sorted({(r.tool, r.n) for r in rows}, key=lambda k: (TOOLS.index(k[0]), k[1]))
    for tool, n in keys:
        group = [r for r in rows if (r.tool, r.n) == (tool, n)]
        good = [r for r in group if r.ok]
        if not good:
            lines.append([tool, str(n), f"0/{len(group)}", *["–"] * 9, group[0].note[:60]])
            continue
        verdicts = sorted({r.verdict for r in good})
        lines.append(
            [
                tool,
                str(n),
                f"{len(good)}/{len(group)}",
                fmt(median([r.reported_tps for r in good]), ".1f"),
                fmt(median([r.audit_tps for r in good]), ".1f"),
                fmt(median([r.server_tps for r in good]), ".1f"),
                fmt(median([r.ratio_reported for r in good]), ".3f"),
                fmt(median([r.ratio_audit for r in good]), ".3f"),
                fmt(median([r.cached_prompt_tokens for r in good]), ".0f"),
                fmt(median([r.wall_s for r in good]), ".1f"),
                fmt(median([r.cpu_s for r in good]), ".1f"),
                fmt(median([r.peak_mb for r in good]), ".0f"),
                "/".join(verdicts),
            ]
        )
    for tool, why in skipped.items():
        lines.append([tool, "–", "0", *["–"] * 9, f"not run: {why}"[:80]])
    if markdown:
        out = [
            "| " + " | ".join(cols) + " |",
            "|" + "|".join("---" if i in (0, 12) else "---:" for i in range(len(cols))) + "|",
        ]
        out += ["| " + " | ".join(line) + " |" for line in lines]
        return "\n".join(out)
    widths = [
        max(len(c), *(len(line[i]) for line in lines)) if lines else len(c)
        for i, c in enumerate(cols)
    ]
    fmt_line = "  ".join(
        f"{{:<{w}}}" if i in (0, 12) else f"{{:>{w}}}" for i, w in enumerate(widths)
    )
    return "\n".join(fmt_line.format(*line) for line in [cols, *lines])


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--tools", default=",".join(TOOLS), help="recorder,guidellm,aiperf")
    ap.add_argument("--concurrency", "-c", default="1,2,4")
    ap.add_argument("--requests", "-n", type=int, default=8)
    ap.add_argument("--prompt-tokens", type=int, default=128)
    ap.add_argument("--output-tokens", type=int, default=128)
    ap.add_argument("--repeats", "-r", type=int, default=1)
    ap.add_argument("--pause", type=float, default=2.0, help="seconds between runs")
    ap.add_argument(
        "--port",
        type=int,
        default=0,
        help=f"llama-server's port [default: a free one in {PORTS.start}-{PORTS.stop - 1}]",
    )
    ap.add_argument(
        "--parallel", type=int, default=4, help="llama-server slots (continuous batching)"
    )
    ap.add_argument(
        "--threads",
        type=int,
        default=1,
        help="llama-server threads (one: a shared machine's other load "
        "stalls a multi-thread decode at every barrier)",
    )
    ap.add_argument(
        "--build",
        type=Path,
        default=llama_server.BUILD,
    )
    ap.add_argument("--venv-root", type=Path, default=Path.home() / ".cache/benchreport-peers")
    ap.add_argument("--no-install", action="store_true", help="do not pip install a missing peer")
    ap.add_argument(
        "--work", type=Path, help="keep every run's files here [default: a temporary directory]"
    )
    ap.add_argument("--json", type=Path, help="write every run's figures here")
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    args = ap.parse_args()

    tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    if unknown := set(tools) - set(TOOLS):
        ap.error(f"unknown tools: {sorted(unknown)}")
    levels = [int(c) for c in args.concurrency.split(",")]
    work = args.work or Path(tempfile.mkdtemp(prefix="peers-"))
    work.mkdir(parents=True, exist_ok=True)

    skipped: dict[str, str] = {}
    for tool in tools:
        if tool in PEERS and (why := ensure_peer(args.venv_root, tool, not args.no_install)):
            skipped[tool] = why
            print(f"{tool}: not run: {why}", file=sys.stderr)
    tools = [t for t in tools if t not in skipped]

    server, base, flags = start_server(args, work / "llama-server.log")
    try:
        tok = write_tokenizer_dir(
            vocab_from_gguf(args.build / "models" / "tiny.gguf"), work / "tokenizer"
        )
        check_with = next(
            (args.venv_root / t / "bin" / "python" for t in ("guidellm", "aiperf") if t in tools),
            None,
        )
        tokenizer_check: dict[str, Any] | str = "not checked (no peer to load it)"
        if check_with:
            tokenizer_check = check_tokenizer(check_with, tok, base)
        print(
            f"llama-server {' '.join(flags)} on {base}; tokenizer {tok}: ", end="", file=sys.stderr
        )
        if isinstance(tokenizer_check, dict):
            check = tokenizer_check
            print(
                f"{check['identical']}/{check['prompts']} prompts tokenized exactly as the "
                f"server's /tokenize ({check['count_diff']} tokens apart in "
                f"{check['server_tokens']})",
                file=sys.stderr,
            )
        else:
            print(tokenizer_check, file=sys.stderr)

        load_before = os.getloadavg()
        rows: list[Row] = []
        # a fresh seed per run: no peer reuses an earlier run's prompts
        seed = int(time.time()) % 100_000
        for repeat in range(args.repeats):
            # rotate: no tool always first
            order = tools[repeat % len(tools) :] + tools[: repeat % len(tools)]
            for n in levels:
                for tool in order:
                    seed += 1
                    row = run_one(tool, args, base, n, repeat, seed, tok, work)
                    rows.append(row)
                    status = "ok" if row.ok else row.note
                    print(
                        f"  r{repeat} N={n} {tool:<8} wall {fmt(row.wall_s, '.1f')} s, "
                        f"CPU {fmt(row.cpu_s, '.1f')} s, tool {fmt(row.reported_tps, '.1f')} / "
                        f"audit {fmt(row.audit_tps, '.1f')} / server "
                        f"{fmt(row.server_tps, '.1f')} tok/s, {row.verdict or '–'}: {status}",
                        file=sys.stderr,
                        flush=True,
                    )
                    time.sleep(args.pause)
        load_after = os.getloadavg()
    finally:
        llama_server.stop(server, grace=10)

    print(table(rows, skipped, args.markdown))
    n_cpu = os.cpu_count()
    print(
        f"\n{args.requests} requests × {args.prompt_tokens} prompt + {args.output_tokens} "
        f"forced output tokens per run, medians of {args.repeats} repeat(s); llama-server "
        f"{' '.join(flags)}; {n_cpu} cores; load average {load_before[0]:.1f} before, "
        f"{load_after[0]:.1f} after."
    )
    print(
        "tool tok/s: the tool's own aggregate; audit tok/s: benchreport audit of the tool's "
        "files (total ÷ first send to last end); server tok/s: the server's "
        "tokens_predicted_total over the run ÷ that same wall."
    )
    worst = [
        r
        for r in rows
        if r.ok and r.ratio_audit is not None and abs(r.ratio_audit - 1) > COUNT_TARGET
    ]
    if worst:
        print(
            f"audit ÷ server outside ±{COUNT_TARGET:.0%}: "
            + ", ".join(f"{r.tool} N={r.n} r{r.repeat} {r.ratio_audit:.3f}" for r in worst)
        )
    for tool in sorted({r.tool for r in rows}):
        found = sorted({f for r in rows if r.tool == tool for f in r.findings})
        print(f"{tool} audit findings: {', '.join(found) or 'none'}")
    for tool, why in skipped.items():
        print(f"{tool}: not run: {why}")
    print(f"files: {work}")
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "rows": [asdict(r) for r in rows],
                    "skipped": skipped,
                    "server_flags": flags,
                    "cores": n_cpu,
                    "load_average": {"before": load_before, "after": load_after},
                    "tokenizer_check": tokenizer_check,
                    "workload": {
                        "requests": args.requests,
                        "prompt_tokens": args.prompt_tokens,
                        "output_tokens": args.output_tokens,
                        "concurrency": levels,
                        "repeats": args.repeats,
                    },
                },
                indent=1,
            )
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
