"""A decode speed stated without the context length it was measured at.

## What it checks
For each run, whether the trace says how long the context was: `workload.context_tokens`,
or the prompt length (`workload.prompt_tokens`, or `prompt_tokens` on the requests), from
which the context at the start of decoding follows. Where runs of one setup differ only in
context length (a sweep), it shows the decode rate against the context.

## Why it matters
Decode slows as the context grows: every token attends over the whole KV cache, and the cache
is read with the weights. METHOD.md §6: the same machine decodes ~98 tok/s at short context
and 34 tok/s with a 43k-token prompt. A single-stream figure without its context length is
the short-context ceiling, whatever the workload it is quoted for.

## How it decides
Per run: passes when `workload.context_tokens` is given, or the prompt length (the run's,
the requests' mean, or a summary's prompt tokens ÷ completed requests); fires (information)
otherwise. Per audit, when runs that agree on everything but
prompt and context length (stop mode, content, speculation, N, engine, model, hardware) show
at least two context lengths: the median decode rate at each, and the fall from the shortest
to the longest; fires (information) when it falls by more than `context_decode_drop` (10%).

## Worked example
METHOD.md §6: short prompts, 97.83 tok/s single-stream decode; a 43k-token prompt, 34 tok/s:
65% slower. Quoted without context, "98 tok/s" promises a long conversation three times the
speed it gets.

## When it cannot decide
It always decides per run. The sweep needs first-token times for a decode rate; without
them, no sweep finding is made.

## What to do
State `workload.context_tokens` (or the prompt length) with every decode figure, and measure
at the context lengths the workload has.

## References
METHOD.md §6 "How fast can one stream be"; seed 000 §6.
"""

from __future__ import annotations

import math
from typing import Any

from reporter import compare
from reporter.config import threshold
from reporter.numbers import fmt
from reporter.rules.base import AuditData, Finding, Rule, run_ref
from reporter.types import Outcome, Severity
from reporter.values import number

CONTEXT_DROP = threshold(
    "context_decode_drop",
    0.10,
    "run-to-run decode rates differ by ~2% (METHOD §7: 143.01 vs 145.24); a fall of more than "
    "10% with context is the context's doing",
    high=1.0,
)

_LENGTHS = ("prompt_tokens", "context_tokens", "output_tokens_requested")


def check(data: AuditData) -> list[Finding]:
    findings = [_check_run(data, str(r["run"]), r) for _, r in data.tables.runs.iterrows()]
    sweep = _check_sweep(data)
    if sweep is not None:
        findings.append(sweep)
    return findings


def context_of(data: AuditData, run_id: str, run: Any) -> tuple[float | None, str]:
    """The run's context length and where it came from."""
    ctx = number(run.get("context_tokens"))
    if ctx is not None:
        return ctx, "workload.context_tokens"
    prompt = number(run.get("prompt_tokens"))
    if prompt is not None:
        return prompt, "workload.prompt_tokens (context at the first decoded token)"
    mean = number(compare.cell(data.stats, run_id, "prompt_tokens_mean"))
    if mean is not None and compare.cell(data.stats, run_id, "from_summary") == 1:
        return mean, "the summary's mean prompt length; context at the first decoded token"
    if mean is not None:
        return mean, "the requests' prompt_tokens (mean; context at the first decoded token)"
    # a summary's prompt tokens over its completed requests (vLLM, SGLang and LLMPerf count
    # the prompts of those only): their mean
    total = number(compare.cell(data.stats, run_id, "prompt_tokens_total"))
    done = number(compare.cell(data.stats, run_id, "ok"))
    if total is not None and done:
        return total / done, (
            f"the summary's prompt tokens ÷ completed requests: {fmt(total, 0)} ÷ "
            f"{fmt(done, 0)}, a mean; context at the first decoded token"
        )
    return None, ""


def _check_run(data: AuditData, run_id: str, run: Any) -> Finding:
    ctx, source = context_of(data, run_id, run)
    if ctx is not None:
        return RULE.finding(
            run_id,
            Outcome.PASSED,
            f"context {fmt(ctx, 0)} tokens ({source})",
            numbers={"context_tokens": ctx, "source": source},
        )
    rate = compare.cell(data.stats, run_id, "median_decode_tps")
    if math.isnan(rate) and not compare.cell(data.stats, run_id, "output_tokens") > 0:
        return RULE.finding(
            run_id,
            Outcome.NOT_APPLICABLE,
            "no tokens decoded: no figure to give a context length to",
        )
    figure = f"the decode rate {fmt(rate, 1)} tok/s" if not math.isnan(rate) else "the figure"
    return RULE.finding(
        run_id,
        Outcome.FIRED,
        f"{figure} comes without a context length: no workload.context_tokens, no "
        "workload.prompt_tokens and no prompt_tokens on the requests",
        numbers={"context_tokens": None, "median_decode_tps": rate},
        refs=run_ref(data, run_id),
        arithmetic=["METHOD §6: ~98 tok/s at short context, 34 tok/s with a 43k-token prompt"],
        help="state workload.context_tokens (or the prompt length) with every decode figure",
    )


def _check_sweep(data: AuditData) -> Finding | None:
    """Decode rate against context, over runs that agree on everything else."""
    sets: dict[tuple[str, ...], list[tuple[float, float, str]]] = {}
    for _, run in data.tables.runs.iterrows():
        run_id = str(run["run"])
        rate = compare.cell(data.stats, run_id, "median_decode_tps")
        ctx, _ = context_of(data, run_id, run)
        if ctx is None or math.isnan(rate) or rate <= 0:
            continue
        vals = compare.values(run, compare.row(data.stats, run_id))
        key = tuple(compare.show(v) for k, v in vals.items() if k not in _LENGTHS)
        sets.setdefault(key, []).append((ctx, rate, run_id))
    sweeps = [pts for pts in sets.values() if len({round(c) for c, _, _ in pts}) >= 2]
    if not sweeps:
        return None
    limit = data.config[CONTEXT_DROP]
    lines: list[str] = []
    worst: tuple[float, list[tuple[float, float]]] | None = None
    worst_runs: list[str] = []
    for pts in sweeps:
        by_ctx: dict[float, list[float]] = {}
        for c, r, _ in pts:
            by_ctx.setdefault(c, []).append(r)
        table = sorted((c, sorted(rs)[len(rs) // 2]) for c, rs in by_ctx.items())
        runs = ", ".join(sorted({r for _, _, r in pts})[:4])
        lines.append(
            "decode at context "
            + "; ".join(f"{fmt(c, 0)} tokens: {fmt(r, 1)} tok/s" for c, r in table)
            + f" (runs {runs})"
        )
        drop = 1 - table[-1][1] / table[0][1]
        if worst is None or drop > worst[0]:
            worst = (drop, table)
            worst_runs = sorted({r for _, _, r in pts})
    assert worst is not None
    drop, table = worst
    short, long_ = table[0], table[-1]
    numbers = {
        "context_tokens": [c for c, _ in table],
        "decode_tps": [r for _, r in table],
        "drop": drop,
    }
    head = (
        f"decode falls from {fmt(short[1], 1)} tok/s at {fmt(short[0], 0)} tokens of context "
        f"to {fmt(long_[1], 1)} at {fmt(long_[0], 0)} ({fmt(drop * 100, 0)}% slower)"
    )
    if drop > limit:
        return RULE.finding(
            "audit",
            Outcome.FIRED,
            f"{head}: a decode figure holds only at its context length",
            severity=Severity.INFO,
            arithmetic=lines,
            numbers=numbers,
            refs=[x for r in worst_runs for x in run_ref(data, r)][:8],
            help="quote decode figures with their context length; measure at the workload's",
        )
    return RULE.finding(
        "audit",
        Outcome.PASSED,
        f"decode holds across context: {fmt(short[1], 1)} tok/s at "
        f"{fmt(short[0], 0)} tokens, {fmt(long_[1], 1)} at {fmt(long_[0], 0)}",
        arithmetic=lines,
        numbers=numbers,
    )


RULE = Rule(
    code="BR017",
    name="context-undisclosed",
    severity=Severity.INFO,
    summary="decode speed stated without context length",
    check=check,
    doc=__doc__ or "",
)
