"""The terminal summary: the verdict, the claims against the recomputed figures, the findings.

Every string that came from a trace passes through `v()` (reporter.safetext.visible): cut,
one line, its control, C1 and bidi characters shown as escapes.
"""

from __future__ import annotations

from reporter.findings import Finding
from reporter.model import EMPTY_RUN, RunSummary, Verdict
from reporter.numbers import fmt
from reporter.safetext import visible as v
from reporter.types import Outcome, Severity


def render_text(verdict: Verdict, *, verbose: bool = False) -> str:
    out: list[str] = [f"verdict: {verdict.verdict}", ""]
    if verdict.claims:
        out.append("claims")
        for c in verdict.claims:
            k = c.check
            n = f" at N={k.concurrency}" if k.concurrency else ""
            out.append(
                f"  {v(k.claim)}: {v(k.metric)} {k.value:,g}{n} (method {v(k.method)}) "
                f"→ {c.verdict}: {v(c.reason)}"
            )
            for line in k.arithmetic:
                out.append(f"      {v(line)}")
        out.append("")
    if verdict.runs:
        out.append("runs")
        header = (
            f"  {'run':<22} {'N':>5} {'req':>5} {'tokens':>8} {'wall s':>8} "
            f"{'tok/s':>8} {'Σ rep':>8} {'overlap':>7} {'stop':>8} {'prefill':>7}  verdict"
        )
        out.append(header)
        for r in verdict.runs:
            n = _load(r)
            share = "n/a" if r.prefill_share is None else f"{r.prefill_share:.0%}"
            count = "?" if r.requests is None else str(r.requests)
            out.append(
                f"  {v(r.id)[:22]:<22} {n:>5} {count:>5} {fmt(r.output_tokens, 0):>8} "
                f"{fmt(r.wall_s, 2):>8} {fmt(r.aggregate_tps):>8} {fmt(r.sum_reported_tps):>8} "
                f"{_overlap(r):>7} {v(r.stop):>8} {share:>7}  {r.verdict}"
            )
        prompt_tests = [r for r in verdict.runs if r.phase == "prompt"]
        if prompt_tests:
            out.append("  prompt-processing tests (no output tokens; prompt tokens ÷ time):")
            for r in prompt_tests:
                out.append(f"    {v(r.id)}: {fmt(r.prompt_tps)} tok/s")
        # a run record alone says why there is nothing else to read
        out.extend(f"  {v(r.id)}: {EMPTY_RUN}" for r in verdict.runs if EMPTY_RUN in r.reasons)
        out.append("")
    sweeps = [g for g in verdict.groups if len(g.runs) > 1]
    if sweeps:
        out.append("groups (runs compared as one sweep or as repeats)")
        for g in sweeps:
            out.append(f"  {v(g.name)} [{v(g.axis)}]: {v(g.why)}")
        out.append("")
    out.extend(_latency_lines(verdict))
    fired = [f for f in verdict.findings if f.fired]
    for severity in (Severity.ERROR, Severity.WARNING, Severity.INFO):
        group = [f for f in fired if f.severity is severity]
        if not group:
            continue
        out.append(f"{severity}s ({len(group)})")
        for f in group:
            out.extend(_finding_lines(f))
        out.append("")
    undecided = [f for f in verdict.findings if f.outcome is Outcome.UNDECIDABLE]
    if undecided:
        out.append(f"could not decide ({len(undecided)})")
        for f in undecided[: None if verbose else 12]:
            out.append(f"  {f.code} {f.name} [{v(f.subject)}]: {v(f.message)}")
        if not verbose and len(undecided) > 12:
            out.append(f"  … and {len(undecided) - 12} more (--verbose lists them)")
        out.append("")
    if verdict.undisclosed:
        out.append("not disclosed: " + "; ".join(v(u) for u in verdict.undisclosed))
    counts = {o: sum(1 for f in verdict.findings if f.outcome is o) for o in Outcome}
    out.append(
        f"{counts[Outcome.FIRED]} fired, {counts[Outcome.PASSED]} passed, "
        f"{counts[Outcome.UNDECIDABLE]} undecidable, {counts[Outcome.NOT_APPLICABLE]} not "
        f"applicable, from {len(verdict.rules)} rules on {len(verdict.inputs)} file(s)"
    )
    return "\n".join(out) + "\n"


def _overlap(r: RunSummary) -> str:
    """The measured overlap, or the summary's lower bound of it (≥; ~ when approximate)."""
    if r.overlap is None and r.decode_bound is not None:
        return ("≥" if r.decode_bound_exact else "~") + fmt(r.decode_bound, 1)
    return fmt(r.overlap, 2)


def _latency_lines(verdict: Verdict) -> list[str]:
    """Per run, TTFT / TPOT / ITL / e2e at p50 / p90 / p99 in ms, where measured."""
    from reporter.render.context import LATENCY_METRICS, latency_cells

    rows = [(v(r.id), latency_cells(r.latency)) for r in verdict.runs]
    rows = [(run_id, cells) for run_id, cells in rows if any(cells.values())]
    if not rows:
        return []
    shown = [(key, name) for key, name in LATENCY_METRICS if any(c[key] for _, c in rows)]
    out = ["latency, ms (p50 / p90 / p99)"]
    out.append(f"  {'run':<22} " + "  ".join(f"{name:>26}" for _, name in shown))
    for run_id, cells in rows:
        out.append(f"  {run_id[:22]:<22} " + "  ".join(f"{cells[k] or '-':>26}" for k, _ in shown))
    out.append("")
    return out


def _finding_lines(f: Finding) -> list[str]:
    lines = [f"  {f.code} {f.name} [{v(f.subject)}]: {v(f.message)}"]
    lines.extend(f"      {v(a)}" for a in f.arithmetic)
    if f.help:
        lines.append(f"      → {v(f.help)}")
    if f.refs:
        more = "" if len(f.refs) <= 3 else f" (+{len(f.refs) - 3})"
        lines.append(f"      at {', '.join(v(r) for r in f.refs[:3])}{more}")
    return lines


def _load(r: RunSummary) -> str:
    """The load axis in one cell: N for a closed loop, the rate (e.g. 10/s) for an open one."""
    if r.load == "rate" and r.request_rate is not None:
        return f"{r.request_rate:g}/s"
    return "?" if r.concurrency is None else f"{r.concurrency:g}"
