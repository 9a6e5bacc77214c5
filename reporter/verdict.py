"""The verdict built: per-run figures, claims against recomputed values, findings.

The contract between the library and every output is the records of reporter.model, which
this module fills in from the tables, the figures, the facts and the findings: everything a
report shows is computed here, and the renderers read only the records.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from reporter.auditdata import AuditData, RunFigures
from reporter.claims import CLAIM_TOLERANCE, matching
from reporter.facts import RATE, Decision, RunFacts
from reporter.findings import Finding, RuleDoc
from reporter.ingest.validate import SCHEMA_NAME
from reporter.latency import batch_ttft, run_latencies, run_latency, with_summary
from reporter.model import (
    EMPTY_RUN,
    FORMAT_VERSION,
    MAX_RUN_CHARTS,
    ClaimCheck,
    ClaimSummary,
    GroupSummary,
    InputSummary,
    RunSummary,
    Series,
    Verdict,
    claim_digits,
    rate_digits,
    verdict_from_dict,
)
from reporter.numbers import counted, fmt, listed
from reporter.received import RECEIVED_SHARE, shortfall
from reporter.series import lone_runs, run_series, with_request_times
from reporter.stated import STATED_GAP, difference, stated_aggregate
from reporter.types import Outcome, VerdictKind, worst
from reporter.values import finite, number

#: The records are named here too, for the readers that import them with the builder.
__all__ = [
    "EMPTY_RUN",
    "FORMAT_VERSION",
    "ClaimSummary",
    "GroupSummary",
    "InputSummary",
    "RunSummary",
    "Series",
    "Verdict",
    "build_verdict",
    "claim_digits",
    "undisclosed",
    "verdict_from_dict",
]


def _question_answers(facts: RunFacts, slope: Decision | None, stats: RunFigures) -> dict[str, str]:
    agg = stats["aggregate_tps"]
    how = (
        f"total ÷ wall: {stats['output_tokens']:,.0f} tokens ÷ {stats['wall_s']:,.2f} s "
        f"= {agg:,.1f} tok/s"
        if not math.isnan(agg)
        else "no output tokens (a prompt-processing test): prompt tokens ÷ time = "
        f"{stats['prompt_tokens_total']:,.0f} ÷ {stats['wall_s']:,.2f} s = "
        f"{stats['prompt_tps']:,.1f} tok/s"
        if not math.isnan(stats["prompt_tps"]) and stats["output_tokens"] == 0
        else f"{_no_aggregate(stats)}: cannot recompute"
    )
    if not math.isnan(stats["sum_reported_tps"]):
        how += f"; the sum of self-reported rates would be {stats['sum_reported_tps']:,.1f}"
    overlap = facts.overlap
    return {
        "aggregate": how,
        "ladder": _answer(overlap, "ladder (serial)", "cluster (overlapping)"),
        "slope": _answer(slope, "flat in N (serial)", _grows(slope)),
    }


def _grows(slope: Decision | None) -> str:
    """The sweep's answer when it grows: up to its peak only, when it fell beyond it (each run
    gets the sweep's answer, and "grows with N" is untrue of the runs past the peak)."""
    numbers = slope.numbers if slope is not None else {}
    peak = numbers.get("peak_concurrency")
    if peak is None:
        return "grows with N"
    top = numbers["aggregate_tps"][numbers["concurrency"].index(peak)]
    return f"grows with N up to N={peak:g} ({fmt(top)} tok/s), and is lower beyond it"


def _answer(d: Decision | None, fired: str, passed: str) -> str:
    if d is None:
        return "not checked"
    if d.outcome is Outcome.FIRED and d.serial:
        return fired
    if d.outcome is Outcome.PASSED and d.serial is False:
        if d.message.startswith("not serial"):
            return f"overlapping: {d.message}"
        return passed
    return f"{d.outcome}: {d.message}"


def _request_count(s: RunFigures, summary: dict[str, Any]) -> int | None:
    """The run's request count; unknown (None), not 0, for a summary that does not count them."""
    if s.flag("from_summary") and finite(summary.get("requests")) is None:
        return None
    return int(s["requests"])


def build_verdict(
    data: AuditData, checks: list[ClaimCheck], findings: list[Finding], rules: list[RuleDoc]
) -> Verdict:
    by_subject = {(f.code, f.subject): f for f in findings}
    facts = data.facts
    latencies = data.tables.latencies()
    latency_of = run_latencies(latencies)  # each run's, read at once
    runs: list[RunSummary] = []
    run_verdicts: dict[str, VerdictKind] = {}
    records = _records(data)
    for row in records:
        run_id, group = str(row["run"]), str(row["group"])
        s = data.figures(run_id)
        reasons = []
        concurrency = number(row["concurrency"])
        rf = facts.runs[run_id]
        group_facts = facts.groups.get(group)
        slope = group_facts.slope if group_facts is not None else None
        prompt_only = row.get("phase") == "prompt"
        if rf.serial:
            kind = VerdictKind.SERIAL
            reasons += rf.reasons
        elif prompt_only and not math.isnan(s["prompt_tps"]):
            kind = VerdictKind.SUPPORTED
            reasons.append(
                f"prompt-processing test, one sequence: {s['prompt_tokens_total']:,.0f} prompt "
                f"tokens ÷ {s['wall_s']:,.2f} s = {s['prompt_tps']:,.1f} tok/s; no output tokens"
            )
        elif s["requests"] == 0 and not s.flag("from_summary"):
            # what a recording killed before its first answer leaves: a run record alone
            kind = VerdictKind.INSUFFICIENT_DATA
            reasons.append(EMPTY_RUN)
        elif math.isnan(s["aggregate_tps"]):
            kind = VerdictKind.INSUFFICIENT_DATA
            reasons.append(f"{_no_aggregate(s)}, so no total ÷ wall aggregate")
        elif math.isinf(s["aggregate_tps"]):
            # a wall clock too short for a double to divide by: no figure to support
            kind = VerdictKind.INSUFFICIENT_DATA
            reasons.append(
                f"the wall clock ({s['wall_s']:.3g} s) is too short to divide by: "
                "total ÷ wall is infinite"
            )
        elif (concurrency or 0) > 1 and rf.serial is None:
            kind = VerdictKind.INSUFFICIENT_DATA
            said = "would decide" in rf.why
            decide = f"; {rf.missing} would decide" if rf.missing and not said else ""
            reasons.append(
                "neither the request times, a bound from the summary, nor a sweep over N show "
                f"the requests decoding at the same time: {rf.why}{decide}"
            )
        else:
            kind = VerdictKind.SUPPORTED
        summary = data.summary(run_id)
        gap = shortfall(summary, data.config[RECEIVED_SHARE])
        if gap is not None:
            # the aggregate's token count is not borne out by the text the client received
            reasons.append(gap.message())
            if kind is VerdictKind.SUPPORTED:
                kind = VerdictKind.INSUFFICIENT_DATA
        run_verdicts[run_id] = kind
        latency, latency_source = with_summary(
            latency_of.get(run_id) or run_latency(latencies, run_id), summary
        )
        runs.append(
            RunSummary(
                id=run_id,
                group=group,
                concurrency=concurrency,
                repeat=number(row["repeat"]),
                requests=_request_count(s, summary),
                output_tokens=number(s["output_tokens"]),
                wall_s=number(s["wall_s"]),
                aggregate_tps=number(s["aggregate_tps"]),
                sum_reported_tps=number(s["sum_reported_tps"]),
                overlap=number(s["overlap"]),
                in_flight=rf.in_flight.value if rf.in_flight is not None else None,
                stop=str(row["stop"]),
                prefill_share=number(s["prefill_share"]),
                median_ttft_s=number(s["median_ttft_s"]),
                median_decode_tps=number(s["median_decode_tps"]),
                format=str(row["format"]),
                verdict=kind,
                reasons=reasons,
                questions=_question_answers(rf, slope, s),
                derived=list(row["derived"] or []),
                source=f"{row['source_path']}:{int(row['source_line'])}"
                if number(row["source_line"]) is not None
                else str(row["source_path"]),
                latency=latency,
                latency_source=latency_source,
                batch_ttft_s=batch_ttft(latency_source, summary),
                **_stated(summary, s, prompt_only, data.config[STATED_GAP]),
                phase=None if row.get("phase") is None else str(row["phase"]),
                prompt_tps=number(s["prompt_tps"]) if prompt_only else None,
                decode_bound=rf.decode.value if rf.decode is not None else None,
                decode_bound_exact=rf.decode.exact if rf.decode is not None else None,
                in_flight_how=rf.in_flight.how
                if rf.in_flight is not None and math.isnan(s["in_flight"])
                else None,
                request_rate=rf.rate if math.isfinite(rf.rate) and rf.rate > 0 else None,
                load=rf.axis,
                **_run_details(row, s),
                **_run_facts(rf),
            )
        )
    claims = [_claim_verdict(c, by_subject, run_verdicts, data) for c in checks]
    for c in claims:
        c.equation = _equation(c.check, data)
    headline = worst([r.verdict for r in runs] + [c.verdict for c in claims])
    if not runs and not claims:
        headline = VerdictKind.INSUFFICIENT_DATA
    return Verdict(
        verdict=headline,
        runs=runs,
        claims=claims,
        findings=findings,
        inputs=_inputs(data, records),
        undisclosed=undisclosed(data),
        rules=[r.code for r in rules],
        rule_docs=rules,
        groups=[
            GroupSummary(g.group, g.runs, g.axis, g.why, g.slope.message, *_levels(runs, g.group))
            for g in facts.groups.values()
        ],
        series=_series(data, runs),
    )


def _records(data: AuditData) -> list[dict[str, Any]]:
    """Each run's record as a dict of the values its row holds: a look-up in a pandas row
    costs more than what the verdict does with the value (thirty of them per run). The rows
    share their index (the run table's columns): its names are read once, not per run."""
    records = []
    index, names = None, []
    for row in data.run_rows():
        if row.index is not index:
            index, names = row.index, [str(k) for k in row.index]
        records.append(dict(zip(names, row, strict=True)))
    return records


def _text(value: Any) -> str | None:
    """A string field of the run record; None when unset (None or empty)."""
    return None if not value else str(value)


def _run_details(row: dict[str, Any], s: RunFigures) -> dict[str, Any]:
    """What the report shows of a run beyond its figures: its setup as the record states
    it, its lengths, its prefill, its bandwidth."""
    enabled = row.get("spec_enabled")
    unknown = enabled is None or (isinstance(enabled, float) and math.isnan(enabled))
    prompt = finite(s["prompt_tokens_mean"])
    decode = finite(s["median_decode_tps"])
    failed = finite(s["failed"])
    per_token, bandwidth = (
        finite(row.get("bytes_per_token")),
        finite(row.get("bandwidth_measured_gbps")),
    )
    utilization = (
        decode * per_token / 1e9 / bandwidth
        if decode and per_token and bandwidth and min(decode, per_token, bandwidth) > 0
        else None
    )
    return {
        "failed": None if failed is None else int(failed),
        "engine": _text(row.get("engine_name")),
        "engine_version": _text(row.get("engine_version")),
        "model": _text(row.get("model_name")),
        "hardware": _text(row.get("hardware_name")),
        "content": _text(row.get("content")),
        "speculation": None if unknown else bool(enabled),
        "speculation_method": _text(row.get("spec_method")),
        "speculation_acceptance": finite(row.get("spec_acceptance")),
        "context_tokens": finite(row.get("context_tokens")),
        "tool": _text(row.get("tool_name")),
        "tool_version": _text(row.get("tool_version")),
        "prompt_tokens": prompt if prompt is not None else finite(row.get("prompt_tokens")),
        "prompt_tokens_total": finite(s["prompt_tokens_total"]),
        "output_tokens_requested": finite(row.get("output_tokens_requested")),
        "output_tokens_min": finite(s["out_min"]),
        "output_tokens_max": finite(s["out_max"]),
        "prefill_rate": finite(s["prefill_rate"]),
        "prefill_rate_source": s.text("prefill_rate_source"),
        "prefill_s": finite(s["prefill_s"]),
        "bandwidth_utilization": utilization,
        "prompts": row.get("prompts") if isinstance(row.get("prompts"), dict) else None,
    }


def _stated(
    summary: dict[str, Any], s: RunFigures, prompt_only: bool, gap: float
) -> dict[str, Any]:
    """The aggregate the run's file states, and the note when it is more than `gap` away
    from the run's recomputed figure (a prompt-processing test's: prompt tokens ÷ wall)."""
    stated = stated_aggregate(summary)
    if stated is None:
        return {}
    recomputed, what = (
        (s["prompt_tps"], "prompt tokens ÷ wall")
        if prompt_only
        else (s["aggregate_tps"], "total ÷ wall")
    )
    return {
        "stated_aggregate_tps": stated.tps,
        "stated_aggregate_field": stated.field,
        "stated_aggregate_how": stated.how,
        "stated_aggregate_note": difference(stated, recomputed, what, gap),
    }


def _run_facts(rf: RunFacts) -> dict[str, Any]:
    """The analysis layer's facts of a run, as the JSON verdict carries them."""
    window = rf.prefill_window
    return {
        "serial": rf.serial,
        "serial_missing": rf.missing or None,
        "decode_bound_arithmetic": list(rf.decode.arithmetic) if rf.decode is not None else [],
        "stream_tps": finite(rf.stream_tps),
        "stream_multiple": finite(rf.stream_multiple),
        "ttft_share": finite(rf.ttft_share),
        "prefill_window_s": None if window is None else finite(window.seconds),
        "prefill_window_share": None if window is None else finite(window.share),
        "prefill_window_how": None if window is None else window.how,
    }


def _levels(runs: list[RunSummary], group: str) -> tuple[list[tuple[float, float]], float | None]:
    """The median aggregate at each N of a group's runs (repeats folded), and last ÷ first;
    nothing for a group that does not span two levels of N."""
    points = [
        (r.concurrency, r.aggregate_tps)
        for r in runs
        if r.group == group and r.concurrency is not None and r.aggregate_tps is not None
    ]
    if len({n for n, _ in points}) < 2:
        return [], None
    frame = pd.DataFrame(points, columns=["n", "tps"])
    medians = frame.groupby("n")["tps"].median().sort_index()
    ns, tps = medians.index.to_numpy(dtype="float64"), medians.to_numpy(dtype="float64")
    levels = [(float(n), float(t)) for n, t in zip(ns, tps, strict=True)]
    base, top = levels[0][1], levels[-1][1]
    return levels, top / base if base else None


def _inputs(data: AuditData, records: list[dict[str, Any]]) -> list[InputSummary]:
    """The files read, each with the tools its run records (`_records`) name and the schema
    they declare."""
    tools: dict[str, list[tuple[str, str | None]]] = {}
    schemas: dict[str, str] = {}
    for row in records:
        path = str(row.get("source_path") or "")
        if row.get("tool_name"):
            tool = (str(row["tool_name"]), _text(row.get("tool_version")))
            if tool not in tools.setdefault(path, []):
                tools[path].append(tool)
        if row.get("format") == "benchreport":
            schemas[path] = SCHEMA_NAME
    return [
        InputSummary(
            path=i.path, sha256=i.sha256, format=i.format, records=i.records,
            skipped=i.skipped, skipped_reasons=list(i.skipped_reasons), notes=list(i.notes),
            tools=tools.get(i.path, []), schema=schemas.get(i.path),
        )
        for i in data.tables.inputs
    ]  # fmt: skip


def _series(data: AuditData, runs: list[RunSummary]) -> Series:
    """The chart data of the first runs with request times (reporter.series)."""
    timed = with_request_times(data, [(r.id, r.requests) for r in runs])
    alone = lone_runs(data) if timed else {}
    return Series([run_series(data, r, alone) for r in timed[:MAX_RUN_CHARTS]], len(timed))


def _equation(k: ClaimCheck, data: AuditData) -> str:
    """The claim in one line: '4 × 512 tokens ÷ 22.50 s = 91.0 tok/s; claimed 350 = 3.85×'."""
    if k.recomputed is None or k.factor is None:
        return ""
    unit = " tok/s" if k.metric in ("aggregate_tps", "stream_tps") else "×"
    digits = 2 if unit == "×" else claim_digits(k)
    left = ""
    one_run = k.metric == "aggregate_tps" and len(k.runs) == 1 and k.runs[0] in data.stats.index
    s = data.figures(k.runs[0]) if one_run else None
    # a prompt-processing run (no output tokens) is judged by its prompt rate, which the
    # claim's own arithmetic states ("512 prompt tokens ÷ 0.1089 s")
    if s is not None and finite(s["output_tokens"]):
        rows = data.requests_of(k.runs[0])
        rows = rows[rows["ok"]]
        lengths = rows["output_tokens"].dropna().unique()
        wall = fmt(finite(s["wall_s"]), 2)
        if len(rows) and len(lengths) == 1:
            tokens = fmt(finite(float(lengths[0])), 0)
            left = f"{len(rows):,} × {tokens} tokens ÷ {wall} s = "
        elif finite(s["output_tokens"]) is not None:
            left = f"{fmt(finite(s['output_tokens']), 0)} tokens ÷ {wall} s = "
    claimed = f"{k.value:,g}"
    recomputed = f"{left}{fmt(finite(k.recomputed), digits)}{unit}"
    if unit == "×" and k.arithmetic and "=" in k.arithmetic[-1]:
        # "scaling = 606.1 ÷ 140.6 = 4.31×": the ratio with its operands
        recomputed = k.arithmetic[-1].split("=", 1)[1].strip()
    elif not left and k.arithmetic:
        # "median of 3 repeats = 514.3 tok/s"
        recomputed = k.arithmetic[-1]
    claimed += unit if unit == "×" else ""
    return f"{recomputed}; claimed {claimed} = {fmt(finite(k.factor), 2)}×"


def _claim_verdict(
    c: ClaimCheck,
    by_subject: dict[tuple[str, str], Finding],
    run_verdicts: dict[str, VerdictKind],
    data: AuditData,
) -> ClaimSummary:
    """Above the recomputed figure: inflated, unless it reproduces a narrower window of the
    same run. Below it: a per-request rate (incomparable) or understated. Within tolerance:
    supported, or serial when its concurrency was not real."""
    tol = data.config[CLAIM_TOLERANCE]
    incomparable = by_subject.get(("BR012", c.claim))
    if c.problem:
        return ClaimSummary(c, VerdictKind.INSUFFICIENT_DATA, c.problem)
    if incomparable is not None and incomparable.fired:
        return ClaimSummary(c, VerdictKind.INCOMPARABLE, incomparable.message)
    if c.factor is None or c.recomputed is None:
        # evaluate() gives every claim a factor or a problem; should one slip through, the
        # claim stays unjudged with that said, rather than ending the audit.
        return ClaimSummary(
            c, VerdictKind.INSUFFICIENT_DATA, "no recomputed figure to compare the claim with"
        )
    digits = 2 if c.metric in ("speedup", "scaling") else 1  # ratios to 0.01, rates to 0.1
    if digits == 1:
        digits = rate_digits(min(c.value, c.recomputed))
    claimed, recomputed = fmt(c.value, digits), fmt(c.recomputed, digits)
    if c.factor > 1 + tol:
        mixed = matching(c.mixed, c.value, tol)
        if mixed is not None:
            return ClaimSummary(
                c,
                VerdictKind.INCOMPARABLE,
                f"{c.value:,g} tok/s is {mixed.what}: {mixed.arithmetic}; the generated "
                f"tokens alone come at {recomputed} tok/s",
            )
        alike = matching(c.alike, c.value, tol)
        if alike is not None:
            return ClaimSummary(
                c,
                VerdictKind.SUPPORTED,
                f"reproduces {alike.what} ({fmt(alike.value, digits)} tok/s); their median is "
                f"{recomputed} tok/s (the claim is {c.factor:.2f}× that): name the run with "
                "run=, or quote the median and the spread",
            )
        window = matching(c.windows, c.value, tol)
        if window is None:
            return ClaimSummary(
                c,
                VerdictKind.INFLATED,
                f"claimed {claimed} is {c.factor:.2f}× the recomputed {recomputed}",
            )
        return ClaimSummary(
            c,
            VerdictKind.SUPPORTED,
            f"reproduces the aggregate over {window.what}: {window.arithmetic}; over the whole "
            f"run ({_wall_text(data, c.runs)}) it is {recomputed} tok/s (the claim is "
            f"{c.factor:.2f}× that)",
        )
    if c.factor < 1 - tol:
        rate = matching(c.per_request, c.value, tol) if c.metric == "aggregate_tps" else None
        if rate is not None:
            at = _concurrency_text([data.concurrency(r) for r in c.runs])
            return ClaimSummary(
                c,
                VerdictKind.INCOMPARABLE,
                f"{c.value:,g} tok/s is a per-request rate ({rate.what}); the run's "
                f"aggregate is {recomputed} tok/s{at}",
            )
        return ClaimSummary(
            c,
            VerdictKind.UNDERSTATED,
            f"claimed {claimed} is {c.factor:.2f}× the recomputed {recomputed}: below what "
            "the trace measures",
        )
    serial = [r for r in c.runs if run_verdicts.get(r) is VerdictKind.SERIAL]
    if serial and c.metric in ("aggregate_tps", "scaling") and (c.concurrency or 2) > 1:
        return ClaimSummary(
            c,
            VerdictKind.SERIAL,
            f"the figure holds, but run {serial[0]} was served one request "
            "at a time: the concurrency is not real",
        )
    return ClaimSummary(
        c, VerdictKind.SUPPORTED, f"within {tol:.0%} of the recomputed {recomputed}"
    )


def _wall_text(data: AuditData, runs: list[str]) -> str:
    walls = [data.figures(r)["wall_s"] for r in runs]
    return f"{fmt(walls[0], 2)} s" if len(walls) == 1 else "every request"


def _concurrency_text(levels: list[float]) -> str:
    known = {n for n in levels if not math.isnan(n)}
    return f" at {next(iter(known)):g} concurrent" if len(known) == 1 else ""


def _no_aggregate(s: Any) -> str:
    """Why a run has no total ÷ wall: no wall clock, no request completed, or no token count."""
    wall, requests, ok = (float(s[c]) for c in ("wall_s", "requests", "ok"))
    if math.isnan(wall) or wall <= 0:
        return "no wall clock"
    if requests > 0 and ok == 0:
        return f"none of its {counted(requests, 'request')} completed"
    return "no output token counts"


def undisclosed(data: AuditData) -> list[str]:
    """What the trace did not say, that a reader needs to trust a figure."""
    runs = data.tables.runs

    def unset(column: str, *unknown: str) -> np.ndarray:
        values = runs[column].to_numpy(dtype=object)
        return np.fromiter((v is None or v in unknown for v in values), bool, len(values))

    def absent(column: str) -> np.ndarray:
        return np.asarray(pd.isna(runs[column]), dtype=bool)

    def paced() -> np.ndarray:
        """Runs on the open-loop axis, as the facts place them (a finite request rate)."""
        axes = (data.facts.runs[str(r)].axis for r in runs["run"])
        return np.fromiter((axis == RATE for axis in axes), bool, len(runs))

    def counted(column: str) -> np.ndarray:
        """Runs whose figure (reporter.metrics) the file's requests or summary give."""
        ids = runs["run"].astype(str)
        return np.asarray(pd.notna(data.stats[column].reindex(ids)), dtype=bool)

    # prompt tokens counted per request, or in all by a summary, disclose the prompt length
    # (their mean) and the context at the first decoded token, as BR017 takes them
    no_prompt = absent("prompt_tokens") & ~counted("prompt_tokens_mean")
    no_prompt &= ~counted("prompt_tokens_total")
    # one pass per column, not a row object per run and check (5,000 runs took seconds)
    checks: list[tuple[str, np.ndarray]] = [
        ("stop mode (forced or natural)", unset("stop", "unknown")),
        ("prompt length", no_prompt),
        ("content type", unset("content", "unknown")),
        ("whether speculative decoding was on", unset("spec_enabled")),
        ("context length", absent("context_tokens") & no_prompt),
        ("hardware", unset("hardware_name")),
        ("engine and version", unset("engine_name")),
        # an engine named without its version (vLLM's results, a Triton backend)
        ("engine version", ~unset("engine_name") & unset("engine_version")),
        # an open-loop run's load is its request rate: no concurrency to disclose
        ("concurrency", absent("concurrency") & ~paced()),
    ]
    ids = runs["run"].astype(str).to_numpy()
    out = []
    for label, missing_mask in checks:
        missing = ids[missing_mask]
        if len(missing):
            which = "all runs" if len(missing) == len(runs) else listed(list(missing), 5)
            out.append(f"{label}: {which}")
    return out
