"""Write the example traces in traces/: the worked cases of METHOD.md, rebuilt as native JSONL.

Each trace is built from the figures the field notes report (completion times, aggregates,
medians) and from a schedule that is consistent with them: a serial queue for case A, eight
slots for case B's queue, concurrent decode for the batched runs. Times are rounded to the
millisecond, so the recomputed figures match the notes to the precision they state.

Run `python scripts/make_traces.py` to rewrite them; a test fails when they are stale.
"""

from __future__ import annotations

import hashlib
import json
import statistics
from collections.abc import Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "traces"
SCHEMA = "benchreport/1"


def _r(x: float, digits: int = 4) -> float:
    return round(x, digits)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def run(
    run_id: str,
    *,
    group: str,
    concurrency: int,
    workload: dict[str, Any],
    engine: dict[str, Any],
    model: dict[str, Any],
    hardware: dict[str, Any],
    repeat: int = 0,
    tool: dict[str, Any] | None = None,
) -> dict[str, Any]:
    return {
        "kind": "run",
        "schema": SCHEMA,
        "id": run_id,
        "group": group,
        "repeat": repeat,
        "tool": tool or {"name": "field notes, rebuilt by scripts/make_traces.py", "version": "1"},
        "engine": engine,
        "model": model,
        "hardware": hardware,
        "workload": {"concurrency": concurrency, **workload},
    }


def request(
    run_id: str,
    i: int,
    send: float,
    first: float,
    end: float,
    out: int,
    prompt: int,
    finish: str,
    prompt_text: str,
    reported: float | None = None,
) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "kind": "request",
        "run": run_id,
        "id": f"{run_id}-{i}",
        "t_send": _r(send),
        "t_first": _r(first),
        "t_end": _r(end),
        "prompt_tokens": prompt,
        "output_tokens": out,
        "finish_reason": finish,
        "prompt_sha256": _sha(f"{prompt_text}#{i}"),
    }
    if reported is not None:
        rec["reported_tps"] = _r(reported, 2)
    return rec


def write(name: str, records: Iterable[dict[str, Any]]) -> None:
    lines = [json.dumps(r, ensure_ascii=False, separators=(",", ":")) for r in records]
    (OUT / name).write_text("\n".join(lines) + "\n", encoding="utf-8")


# --- case A: a laptop, a 35B-A3B MoE at 4 bits, a closed engine that queues ----------------

CASE_A_ENGINE = {
    "name": "closed Mac engine",
    "version": "1.0",
    "flags": ["--continuous-batching", "4"],
}
CASE_A_MODEL = {
    "name": "35B-A3B MoE (hybrid Gated-DeltaNet + MoE)",
    "params_total": 35e9,
    "params_active": 3e9,
    "quant": "4-bit",
    "bytes_per_token": 1.849e9,
    "working_set_bytes": 21 * 2**30,
}
CASE_A_HW = {"name": "M1 Max 64GB", "bandwidth_nominal_gbps": 400, "bandwidth_measured_gbps": 316}
FORCED_512 = {
    "output_tokens": 512,
    "stop": "forced",
    "ignore_eos": True,
    "min_tokens": 512,
    "temperature": 0,
    "prompt_tokens": 24,
    "context_tokens": 536,
    "content": "prose",
    "speculative": {"enabled": False},
}


def serial_run(
    run_id: str, ends: list[float], *, out: int, single_tps: float, prompt: int, text: str
) -> list[dict[str, Any]]:
    """Requests all sent at 0, served one at a time: each decodes after the previous ends."""
    recs = []
    start = 0.0
    for i, end in enumerate(ends):
        first = end - out / single_tps
        first = max(first, start + 0.01)
        recs.append(
            request(
                run_id,
                i,
                0.0,
                first,
                end,
                out,
                prompt,
                "length",
                text,
                reported=out / (end - first),
            )
        )
        start = end
    return recs


def case_a_ladder() -> None:
    recs: list[dict[str, Any]] = []
    # completion times from the isolated retest (seed 000 §2); N=1 and N=2 unrounded so that
    # they give the table's 93.0 and 93.4 tok/s, N=4 as quoted: 4 × 512 ÷ 22.5 = 91.0
    ladders = {1: [5.505], 2: [5.4, 10.964], 4: [5.5, 11.1, 16.8, 22.5]}
    for n, ends in ladders.items():
        run_id = f"a-retest-n{n}"
        recs.append(
            run(
                run_id,
                group="case-a-retest",
                concurrency=n,
                workload=FORCED_512,
                engine=CASE_A_ENGINE,
                model=CASE_A_MODEL,
                hardware=CASE_A_HW,
            )
        )
        recs.extend(
            serial_run(
                run_id,
                ends,
                out=512,
                single_tps=97.8,
                prompt=24,
                text="Explain continuous batching.",
            )
        )
    recs.append(
        {
            "kind": "claim",
            "id": "a-350",
            "metric": "aggregate_tps",
            "value": 350,
            "concurrency": 4,
            "method": "sum",
            "run": "a-retest-n4",
            "source": "field note: four concurrent requests each reported 86–98 tok/s; "
            "summed about 350 tok/s",
        }
    )
    recs.append(
        {
            "kind": "log",
            "run": "a-retest-n4",
            "level": "warning",
            "t": 0.0,
            "text": "WARNING: continuous batching is not available for this model: the "
            "Gated-DeltaNet hybrid architecture keeps recurrent state for one "
            "sequence only; falling back to serial scheduling",
        }
    )
    write("case-a-ladder.jsonl", recs)


def case_a_versions() -> None:
    recs: list[dict[str, Any]] = []
    versions = {
        "old-default": ("1.0", [], [90.3, 89.5, 89.6, 88.5], 98.0),
        "new-default": ("1.1", [], [87.5, 89.3, 88.7, 88.3], 98.0),
        "new-cb8": ("1.1", ["--continuous-batching", "8"], [86.7, 87.2, 86.8, 86.3], 95.0),
    }
    for name, (version, flags, aggregates, single) in versions.items():
        engine = {"name": "closed Mac engine", "version": version, "flags": flags}
        for n, agg in zip((1, 2, 4, 8), aggregates, strict=True):
            run_id = f"a-{name}-c{n}"
            recs.append(
                run(
                    run_id,
                    group=f"case-a-{name}",
                    concurrency=n,
                    workload=FORCED_512,
                    engine=engine,
                    model=CASE_A_MODEL,
                    hardware=CASE_A_HW,
                )
            )
            each = 512 / agg  # serial: every request takes wall ÷ N
            ends = [_r(each * (k + 1), 4) for k in range(n)]
            ends[-1] = _r(n * 512 / agg, 4)
            recs.extend(
                serial_run(
                    run_id,
                    ends,
                    out=512,
                    single_tps=single,
                    prompt=24,
                    text="Explain continuous batching.",
                )
            )
    write("case-a-versions.jsonl", recs)


# --- case B: three GPUs in a pipeline, 284B-A13B, prefill 3,005 tok/s ------------------------

CASE_B_ENGINE = {
    "name": "llama.cpp (pipeline, 3 GPUs, layers 15/16/12)",
    "version": "b5606",
    "flags": ["--parallel", "8", "-cb"],
}
CASE_B_MODEL = {
    "name": "284B-A13B MoE",
    "params_total": 284e9,
    "params_active": 13e9,
    "quant": "mixed",
}
CASE_B_HW = {"name": "3 × 64 GB data-centre GPUs on PCIe 2.0 x4"}
PREFILL_PROBE = {
    "kind": "probe",
    "what": "prefill_rate",
    "value": 3005,
    "unit": "tok/s",
    "buffer_bytes": None,
}


def batch(
    run_id: str,
    ttfts: list[float],
    outs: list[int],
    rates: list[float],
    prompt: int,
    finish: str,
    text: str,
    *,
    send: float = 0.0,
) -> list[dict[str, Any]]:
    """Requests sent together, decoding at once, each at its own rate (tokens ÷ decode time)."""
    return [
        request(run_id, i, send, send + t, send + t + o / r, o, prompt, finish, text, reported=r)
        for i, (t, o, r) in enumerate(zip(ttfts, outs, rates, strict=True))
    ]


def case_b_natural() -> None:
    wl = {
        "output_tokens": 256,
        "stop": "natural",
        "ignore_eos": False,
        "temperature": 0,
        "prompt_tokens": 352,
        "context_tokens": 608,
        "content": "prose",
        "speculative": {"enabled": True, "method": "draft model", "acceptance": 0.305},
    }
    text = "一段知识问答式的中文问题"
    recs: list[dict[str, Any]] = [PREFILL_PROBE]
    group = "case-b-natural-qa"
    # N=1: 76 tokens in 1.26 s = 60.3 tok/s
    recs.append(
        run(
            "b-natural-n1",
            group=group,
            concurrency=1,
            workload=wl,
            engine=CASE_B_ENGINE,
            model=CASE_B_MODEL,
            hardware=CASE_B_HW,
        )
    )
    recs += batch("b-natural-n1", [0.16], [76], [76 / 1.10], 352, "stop", text)
    # N=8: 486 tokens in 2.839 s = 171.2 tok/s; median TTFT 0.974 s; median decode 40.95
    ttfts = [0.95, 0.96, 0.97, 0.97, 0.978, 0.98, 0.99, 1.0]
    outs = [45, 52, 56, 60, 62, 66, 68, 77]
    rates = [40.2, 40.5, 40.8, 40.9, 41.0, 41.1, 41.2, 77 / (2.839 - 1.0)]
    recs.append(
        run(
            "b-natural-n8",
            group=group,
            concurrency=8,
            workload=wl,
            engine=CASE_B_ENGINE,
            model=CASE_B_MODEL,
            hardware=CASE_B_HW,
        )
    )
    recs += batch("b-natural-n8", ttfts, outs, rates, 352, "stop", text)
    # N=16: 906 tokens in 5.27 s = 171.9 tok/s: eight slots, two waves
    recs.append(
        run(
            "b-natural-n16",
            group=group,
            concurrency=16,
            workload=wl,
            engine=CASE_B_ENGINE,
            model=CASE_B_MODEL,
            hardware=CASE_B_HW,
        )
    )
    wave1 = batch(
        "b-natural-n16",
        ttfts,
        [50, 55, 56, 58, 60, 62, 64, 52],
        [40.4, 40.6, 40.8, 40.9, 41.0, 41.2, 41.3, 40.7],
        352,
        "stop",
        text,
    )
    recs += wave1
    outs2 = [54, 55, 56, 57, 58, 59, 60]
    outs2.append(906 - sum(r["output_tokens"] for r in wave1) - sum(outs2))
    for j, o in enumerate(outs2):
        prev = wave1[j]
        first = prev["t_end"] + 0.12
        rate = 40.0 + 0.2 * j
        end = first + o / rate
        if j == 7:
            end, rate = 5.27, o / (5.27 - first)
        recs.append(
            request("b-natural-n16", 8 + j, 0.0, first, end, o, 352, "stop", text, reported=rate)
        )
    write("case-b-natural-stop.jsonl", recs)

    # long prompts: 8 × 5,634 tokens, natural stop, 1,280 tokens in 17.77 s = 72.03 tok/s
    wl_long = wl | {"prompt_tokens": 5634, "context_tokens": 5890}
    recs = [
        PREFILL_PROBE,
        run(
            "b-long-n8",
            group="case-b-long-prompt",
            concurrency=8,
            workload=wl_long,
            engine=CASE_B_ENGINE,
            model=CASE_B_MODEL,
            hardware=CASE_B_HW,
        ),
    ]
    outs = [190, 175, 170, 165, 160, 150, 140, 130]
    firsts = [5634 * (k + 1) / 3005 for k in range(8)]
    for k, (first, out) in enumerate(zip(firsts, outs, strict=True)):
        end = 17.77 if k == 7 else min(first + out / 42.0, 17.7 - 0.01 * k)
        recs.append(
            request(
                "b-long-n8",
                k,
                0.0,
                first,
                end,
                out,
                5634,
                "stop",
                "一段 5,634 token 的长提示",
                reported=out / (end - first),
            )
        )
    write("case-b-long-prompt.jsonl", recs)


def case_b_forced() -> None:
    """Forced 512 tokens, speculation on and off, code and prose, N=1 and N=8 (seed 001 §3–4)."""
    recs: list[dict[str, Any]] = [PREFILL_PROBE]
    aggregates = {  # (content, speculation) -> (N=1, N=8, median decode at N=8)
        ("code", True): (140.6, 606.1, 79.45),
        ("code", False): (53.0, 199.8, 25.5),
        ("prose", True): (113.8, 359.3, 47.25),
        ("prose", False): (52.3, 228.3, 29.2),
    }
    acceptance = {"code": 0.689, "prose": 0.305}
    for (content, spec), (agg1, agg8, decode8) in aggregates.items():
        tag = f"{content}-spec-{'on' if spec else 'off'}"
        group = f"case-b-forced-{tag}"
        wl = {
            "output_tokens": 512,
            "stop": "forced",
            "ignore_eos": True,
            "min_tokens": 512,
            "temperature": 0,
            "prompt_tokens": 16,
            "context_tokens": 528,
            "content": content,
            "speculative": (
                {"enabled": True, "method": "draft model", "acceptance": acceptance[content]}
                if spec
                else {"enabled": False}
            ),
        }
        text = "Write a few small Python functions." if content == "code" else "讲讲注意力机制"
        # N=1: one request, TTFT 0.23 s, the rest decode
        r1 = f"b-{tag}-n1"
        recs.append(
            run(
                r1,
                group=group,
                concurrency=1,
                workload=wl,
                engine=CASE_B_ENGINE,
                model=CASE_B_MODEL,
                hardware=CASE_B_HW,
            )
        )
        wall1 = 512 / agg1
        recs += batch(r1, [0.23], [512], [512 / (wall1 - 0.23)], 16, "length", text)
        # N=8: all eight at once; medians TTFT 0.23 s and decode `decode8`; wall = 4096 ÷ agg8
        r8 = f"b-{tag}-n8"
        recs.append(
            run(
                r8,
                group=group,
                concurrency=8,
                workload=wl,
                engine=CASE_B_ENGINE,
                model=CASE_B_MODEL,
                hardware=CASE_B_HW,
            )
        )
        wall8 = 4096 / agg8
        ttfts = [0.20, 0.21, 0.22, 0.225, 0.235, 0.24, 0.245, 0.25]
        spread = [-0.6, -0.4, -0.05, 0.05, 0.2, 0.4, 0.6]
        rates = [decode8 + s * decode8 / 80 for s in reversed(spread)]
        rates.append(512 / (wall8 - 0.25))
        assert max(t + 512 / r for t, r in zip(ttfts, rates, strict=True)) <= wall8 + 1e-9
        recs += batch(r8, ttfts, [512] * 8, rates, 16, "length", text)
    recs.append(
        {
            "kind": "claim",
            "id": "b-scaling",
            "metric": "scaling",
            "value": 4.31,
            "concurrency": 8,
            "method": "wall",
            "run": "b-code-spec-on-n8",
            "source": "field note: forced 512, N=8 606 ÷ N=1 140.6",
        }
    )
    write("case-b-forced.jsonl", recs)


def case_b_queue() -> None:
    """16 prose requests, the server admits 8: Σ reported 840.1 against total ÷ wall 401.3."""
    wl = {
        "output_tokens": 256,
        "stop": "natural",
        "ignore_eos": False,
        "temperature": 0,
        "prompt_tokens": 40,
        "context_tokens": 296,
        "content": "prose",
        "speculative": {"enabled": True, "method": "draft model", "acceptance": 0.305},
    }
    run_id = "b-queue-n16"
    text = "讲讲注意力机制"
    recs: list[dict[str, Any]] = [
        run(
            run_id,
            group="case-b-queue",
            concurrency=16,
            workload=wl,
            engine=CASE_B_ENGINE,
            model=CASE_B_MODEL,
            hardware=CASE_B_HW,
        )
    ]
    rates1 = [51.6, 52.0, 52.3, 52.5, 52.7, 52.9, 53.1, 53.4]
    outs1 = [232, 234, 236, 235, 237, 233, 238, 235]
    ttft1 = [0.18, 0.19, 0.20, 0.20, 0.21, 0.21, 0.22, 0.23]
    ends1 = [t + o / r for t, o, r in zip(ttft1, outs1, rates1, strict=True)]
    # the queued half starts as slots free up; prefill of a short prompt takes p seconds,
    # chosen so that the queued half's median time to first token is 4.72 s
    order = sorted(ends1)
    p = 4.72 - (order[3] + order[4]) / 2
    # the queued half: request 15 writes the most and closes the wall clock, whose length
    # follows from total ÷ wall = 401.3; request 8 takes the rest of Σ reported = 840.1
    outs2 = [200, 202, 198, 201, 199, 203, 200]
    starts2 = [e + p for e in ends1]
    other = sum(outs1) + sum(outs2)
    o_last = round((other / 401.3 - starts2[7]) / (1 / 52.0 - 1 / 401.3))
    outs2.append(o_last)
    wall = (other + o_last) / 401.3
    rates2 = [0.0, 52.4, 52.6, 52.1, 52.8, 52.3, 52.5, o_last / (wall - starts2[7])]
    rates2[0] = 840.1 - sum(rates1) - sum(rates2[1:])
    for i in range(8):
        recs.append(
            request(
                run_id, i, 0.0, ttft1[i], ends1[i], outs1[i], 40, "stop", text, reported=rates1[i]
            )
        )
    for j in range(8):
        first = starts2[j]
        end = wall if j == 7 else first + outs2[j] / rates2[j]
        recs.append(
            request(run_id, 8 + j, 0.0, first, end, outs2[j], 40, "stop", text, reported=rates2[j])
        )
    ends = [r["t_end"] for r in recs[1:]]
    assert max(ends) == _r(wall), "request 15 must close the wall clock"
    queued = sorted(r["t_first"] for r in recs[9:])
    assert abs(statistics.median(queued) - 4.72) < 0.002
    recs.append(
        {
            "kind": "claim",
            "id": "b-840",
            "metric": "aggregate_tps",
            "value": 840.1,
            "concurrency": 16,
            "method": "sum",
            "run": run_id,
            "source": "field note: 16 prose requests, per-request rates summed",
        }
    )
    write("case-b-queue.jsonl", recs)


def case_b_repeats() -> None:
    """One point repeated: 140.55 vs 133.27 tok/s, TTFT 0.062 vs 0.316 s (seed 001 §6)."""
    wl = {
        "output_tokens": 512,
        "stop": "forced",
        "ignore_eos": True,
        "min_tokens": 512,
        "temperature": 0,
        "prompt_tokens": 16,
        "context_tokens": 528,
        "content": "code",
        "speculative": {"enabled": True, "method": "draft model", "acceptance": 0.689},
    }
    recs: list[dict[str, Any]] = []
    # the aggregates are the quoted figures; decode then comes out at 142.98 and 145.22 tok/s,
    # within 0.02% of the quoted 143.01 and 145.24 (the note's own rounding)
    for rep, (ttft, aggregate) in enumerate(((0.062, 140.55), (0.316, 133.27))):
        run_id = f"b-repeat-{rep}"
        recs.append(
            run(
                run_id,
                group="case-b-code-n1-repeats",
                concurrency=1,
                workload=wl,
                engine=CASE_B_ENGINE,
                model=CASE_B_MODEL,
                hardware=CASE_B_HW,
                repeat=rep,
            )
        )
        recs += batch(
            run_id,
            [ttft],
            [512],
            [512 / (512 / aggregate - ttft)],
            16,
            "length",
            "Write a few small Python functions.",
        )
    write("case-b-repeats.jsonl", recs)


def honest_batched() -> None:
    """A server that really batches: per-step cost grows with the batch, aggregate rises."""
    engine = {"name": "vLLM", "version": "0.25.1", "flags": ["--max-num-seqs", "16"]}
    model = {
        "name": "Llama-3.1-8B-Instruct",
        "params_total": 8.0e9,
        "params_active": 8.0e9,
        "quant": "bf16",
        "bytes_per_token": 16.1e9,
    }
    hw = {
        "name": "1 × H100 80GB SXM",
        "bandwidth_nominal_gbps": 3350,
        "bandwidth_measured_gbps": 2900,
    }
    wl = {
        "output_tokens": 256,
        "stop": "forced",
        "ignore_eos": True,
        "min_tokens": 256,
        "temperature": 0,
        "prompt_tokens": 32,
        "context_tokens": 288,
        "content": "prose",
        "speculative": {"enabled": False},
    }
    recs: list[dict[str, Any]] = [
        {"kind": "probe", "what": "prefill_rate", "value": 12000, "unit": "tok/s"}
    ]
    per_stream = {1: 90.0, 2: 86.0, 4: 79.0, 8: 66.0}
    for n, rate in per_stream.items():
        for rep in range(2):
            run_id = f"honest-n{n}-r{rep}"
            recs.append(
                run(
                    run_id,
                    group="honest-batched",
                    concurrency=n,
                    workload=wl,
                    engine=engine,
                    model=model,
                    hardware=hw,
                    repeat=rep,
                )
            )
            wobble = 1.0 + (0.01 if rep else -0.01)
            ttfts = [0.020 + 0.004 * k for k in range(n)]
            rates = [rate * wobble * (1 - 0.002 * k) for k in range(n)]
            recs += batch(
                run_id, ttfts, [256] * n, rates, 32, "length", "Describe the water cycle."
            )
    recs.append(
        {
            "kind": "claim",
            "id": "honest-510",
            "metric": "aggregate_tps",
            "value": 510,
            "concurrency": 8,
            "method": "wall",
            "group": "honest-batched",
            "source": "release note: 8 concurrent requests, 510 tok/s",
        }
    )
    write("honest-batched.jsonl", recs)


def main() -> None:
    OUT.mkdir(exist_ok=True)
    case_a_ladder()
    case_a_versions()
    case_b_natural()
    case_b_forced()
    case_b_queue()
    case_b_repeats()
    honest_batched()


if __name__ == "__main__":
    main()
