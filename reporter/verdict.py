"""The verdict: per-run figures, claims against recomputed values, findings; JSON-ready.

The contract between the library and every output: the renderers read only this (never the
tables, the figures or the rules), so everything a report shows is here, and `to_dict` writes
all of it (schemas/verdict-2.schema.json documents each key).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from reporter.auditdata import AuditData, RunFigures
from reporter.claims import CLAIM_TOLERANCE, ClaimCheck, matching, rate_digits
from reporter.facts import Decision, RunFacts
from reporter.findings import Finding, RuleDoc, clean
from reporter.ingest.validate import SCHEMA_NAME
from reporter.latency import latency_table, run_latency
from reporter.series import (
    MAX_RUN_CHARTS,
    Completions,
    RunSeries,
    Timeline,
    run_series,
    with_request_times,
)
from reporter.types import Outcome, Severity, VerdictKind, finite, fmt, number, worst
from reporter.version import __version__

FORMAT_VERSION = 2


#: The reason of a run without request rows (a recording killed before its first answer).
EMPTY_RUN = "0 requests: nothing to audit"


@dataclass
class RunSummary:
    id: str
    group: str
    concurrency: float | None
    repeat: float | None
    #: None when only a summary was read and it does not count the requests.
    requests: int | None
    output_tokens: float | None
    wall_s: float | None
    aggregate_tps: float | None
    sum_reported_tps: float | None
    overlap: float | None
    in_flight: float | None
    stop: str
    prefill_share: float | None
    median_ttft_s: float | None
    median_decode_tps: float | None
    format: str
    verdict: VerdictKind
    reasons: list[str] = field(default_factory=list)
    questions: dict[str, str] = field(default_factory=dict)
    derived: list[str] = field(default_factory=list)
    source: str = ""
    #: TTFT, ITL, TPOT and e2e percentiles in seconds (reporter.latency).
    latency: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: "prompt" for a prompt-processing test (llama-bench pp), whose figure is prompt_tps.
    phase: str | None = None
    prompt_tps: float | None = None
    #: Without per-request times: Σ decode time ÷ wall from the summary, a lower bound of
    #: `overlap` (the time-averaged number decoding at once); approximate when not exact.
    decode_bound: float | None = None
    decode_bound_exact: bool | None = None
    #: How `in_flight` (Little's law) was obtained, when rebuilt from a summary.
    in_flight_how: str | None = None
    #: The open-loop request rate (req/s) when a finite rate paced the sends, else None.
    request_rate: float | None = None
    #: The load axis: "concurrency" (closed loop at N), "rate" (open loop) or "unknown".
    load: str = "unknown"
    #: Requests that failed (None when the file does not say).
    failed: int | None = None
    #: What was served and on what, as the run record states it (None when unstated).
    engine: str | None = None
    engine_version: str | None = None
    model: str | None = None
    hardware: str | None = None
    content: str | None = None
    #: Speculative decoding: on (True), off (False) or unstated (None); its method and
    #: acceptance rate (a share) when stated.
    speculation: bool | None = None
    speculation_method: str | None = None
    speculation_acceptance: float | None = None
    context_tokens: float | None = None
    #: The tool that measured the run, and its version.
    tool: str | None = None
    tool_version: str | None = None
    #: Prompt tokens per request (the mean of the requests, else the run record's).
    prompt_tokens: float | None = None
    prompt_tokens_total: float | None = None
    #: Output length asked for, and the shortest and longest output got.
    output_tokens_requested: float | None = None
    output_tokens_min: float | None = None
    output_tokens_max: float | None = None
    #: Prefill: the rate (prompt tok/s) and where it came from, and the seconds of the wall
    #: it accounts for (prompt tokens ÷ rate); `prefill_share` is those seconds ÷ wall.
    prefill_rate: float | None = None
    prefill_rate_source: str | None = None
    prefill_s: float | None = None
    #: Bandwidth utilization from the run record: median decode rate × bytes per token ÷
    #: the measured read bandwidth (a share; None without all three).
    bandwidth_utilization: float | None = None


@dataclass
class ClaimSummary:
    check: ClaimCheck
    verdict: VerdictKind
    reason: str
    #: The claim in one line: "4 × 512 tokens ÷ 22.50 s = 91.0 tok/s; claimed 350 = 3.85×"
    #: (empty when there is no recomputed figure).
    equation: str = ""


@dataclass
class InputSummary:
    """One file that was read: what a reader needs to rerun the audit, and what wrote it."""

    path: str
    sha256: str
    format: str
    records: int
    skipped: int = 0
    skipped_reasons: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: The tools (name, version) its run records name, in file order.
    tools: list[tuple[str, str | None]] = field(default_factory=list)
    #: The schema its records declare (the native format's), else None.
    schema: str | None = None


@dataclass
class Series:
    """The per-run chart data of the report (reporter.series), for the first runs that have
    request times; `runs_with_times` counts them all."""

    runs: list[RunSeries] = field(default_factory=list)
    runs_with_times: int = 0


@dataclass
class GroupSummary:
    """A sweep (or a single point): its runs, its load axis and why they are together."""

    name: str
    runs: list[str]
    axis: str
    why: str
    slope: str
    #: The median aggregate (tok/s) at each concurrency N of the group's runs, by N
    #: (repeats folded), and the last ÷ the first; empty and None with fewer than 2 levels.
    levels: list[tuple[float, float]] = field(default_factory=list)
    growth: float | None = None


@dataclass
class Verdict:
    verdict: VerdictKind
    runs: list[RunSummary]
    claims: list[ClaimSummary]
    findings: list[Finding]
    inputs: list[InputSummary]
    undisclosed: list[str]
    #: The codes of the rules that ran.
    rules: list[str]
    groups: list[GroupSummary] = field(default_factory=list)
    #: The pages of the rules that ran (their code, name, severity and documentation).
    rule_docs: list[RuleDoc] = field(default_factory=list)
    series: Series = field(default_factory=Series)

    def fired(self) -> list[Finding]:
        return [f for f in self.findings if f.fired]

    def to_dict(self, *, include_series: bool = False) -> dict[str, Any]:
        """The machine verdict (DESIGN.md): stable keys, numbers rounded, strict JSON.

        Everything a report shows is here (schemas/verdict-2.schema.json); the per-run chart
        data (`series`, up to a few thousand points) only when `include_series`.

        A figure that is not finite is null: NaN stands for unknown throughout, so it is
        null without a word; an infinite one (an overflow, a division by a zero wall) is
        listed with its place under `null_reasons`, present only when there is one.
        """
        reasons: dict[str, str] = {}
        raw = self._raw_dict()
        if include_series:
            raw["series"] = _series_dict(self.series)
        data = finite_only(raw, "", reasons)
        if reasons:
            data["null_reasons"] = reasons
        return data  # type: ignore[no-any-return]

    def _raw_dict(self) -> dict[str, Any]:
        fired = {f.code for f in self.findings if f.fired}
        return {
            "format_version": FORMAT_VERSION,
            "benchreport_version": __version__,
            "verdict": str(self.verdict),
            "runs": [_run_dict(r) for r in self.runs],
            "claims": [_claim_dict(c) for c in self.claims],
            "findings": [_finding_dict(f) for f in self.findings],
            "groups": [
                {
                    "name": g.name,
                    "runs": g.runs,
                    "axis": g.axis,
                    "why": g.why,
                    "slope": g.slope,
                    "levels": [{"n": _num(n), "aggregate_tps": _num(t)} for n, t in g.levels],
                    "growth": _num(g.growth),
                }
                for g in self.groups
            ],
            "undisclosed": self.undisclosed,
            "inputs": [
                {
                    "path": i.path,
                    "sha256": i.sha256,
                    "format": i.format,
                    "records": i.records,
                    "skipped": i.skipped,
                    "skipped_reasons": i.skipped_reasons,
                    "notes": i.notes,
                    "tools": [{"name": n, "version": v} for n, v in i.tools],
                    "schema": i.schema,
                }
                for i in self.inputs
            ],
            "rules": self.rules,
            "rule_pages": [
                {
                    "code": d.code,
                    "name": d.name,
                    "severity": str(d.severity),
                    "summary": d.summary,
                    "doc": d.doc,
                }
                for d in self.rule_docs
                if d.code in fired
            ],
        }


def verdict_from_dict(data: dict[str, Any]) -> Verdict:
    """A verdict read back from its JSON (`Verdict.to_dict`): what a CI job or another tool
    needs to render the same reports without the trace. Figures are as rounded in the JSON;
    chart series are there only when the JSON was written with them."""
    if data.get("format_version") != FORMAT_VERSION:
        raise ValueError(
            f"format_version {data.get('format_version')!r}; expected {FORMAT_VERSION}"
        )
    runs = [RunSummary(**{**r, "verdict": VerdictKind(r["verdict"])}) for r in data["runs"]]
    claims = [
        ClaimSummary(
            ClaimCheck(
                claim=c["id"], metric=c["metric"], value=c["value"],
                concurrency=c["concurrency"], method=c["method"], runs=c["runs"],
                recomputed=c["recomputed"], factor=c["factor"], arithmetic=c["arithmetic"],
                source=c["source"], ref=c["ref"],
            ),
            VerdictKind(c["verdict"]), c["reason"], c["equation"],
        )
        for c in data["claims"]
    ]  # fmt: skip
    findings = [
        Finding(
            **{**f, "severity": Severity[f["severity"].upper()], "outcome": Outcome(f["outcome"])}
        )
        for f in data["findings"]
    ]
    groups = [
        GroupSummary(
            g["name"], g["runs"], g["axis"], g["why"], g["slope"],
            [(x["n"], x["aggregate_tps"]) for x in g["levels"]], g["growth"],
        )
        for g in data["groups"]
    ]  # fmt: skip
    inputs = [
        InputSummary(**{**i, "tools": [(t["name"], t["version"]) for t in i["tools"]]})
        for i in data["inputs"]
    ]
    pages = [
        RuleDoc(d["code"], d["name"], Severity[d["severity"].upper()], d["summary"], d["doc"])
        for d in data["rule_pages"]
    ]
    series = Series()
    if "series" in data:
        series = Series(
            [_run_series(r) for r in data["series"]["runs"]], data["series"]["runs_with_times"]
        )
    return Verdict(
        verdict=VerdictKind(data["verdict"]), runs=runs, claims=claims, findings=findings,
        inputs=inputs, undisclosed=data["undisclosed"], rules=data["rules"], groups=groups,
        rule_docs=pages, series=series,
    )  # fmt: skip


def _run_series(data: dict[str, Any]) -> RunSeries:
    line, done = data["timeline"], data["completions"]
    return RunSeries(
        data["run"],
        None if line is None else Timeline(line["requests"], line["drawn"], line["segments"]),
        None
        if done is None
        else Completions(done["total"], done["points"], done["single_s"], done["single_run"]),
    )


def _series_dict(series: Series) -> dict[str, Any]:
    def run(r: RunSeries) -> dict[str, Any]:
        line, done = r.timeline, r.completions
        return {
            "run": r.run,
            "timeline": None
            if line is None
            else {
                "requests": line.requests,
                "drawn": line.drawn,
                "segments": [
                    {
                        "request": seg["request"],
                        "start": _num(seg["start"]),
                        "end": _num(seg["end"]),
                        "part": seg["part"],
                    }
                    for seg in line.segments
                ],
            },
            "completions": None
            if done is None
            else {
                "total": done.total,
                "points": [{"t": _num(p["t"]), "done": p["done"]} for p in done.points],
                "single_s": _num(done.single_s),
                "single_run": done.single_run,
            },
        }

    return {"runs_with_times": series.runs_with_times, "runs": [run(r) for r in series.runs]}


def _num(value: Any, digits: int = 6) -> Any:
    """A number rounded for JSON; a non-finite one is left for `finite_only` to null."""
    if value is None:
        return None
    if isinstance(value, float | int) and not isinstance(value, bool):
        number = float(value) if math.isfinite(value) else value
        return round(number, digits) if math.isfinite(number) else number
    return value


#: Why an infinite figure is written as null.
INFINITE = "infinite (an overflow, or a division by zero): not a figure"


def finite_only(value: Any, path: str, reasons: dict[str, str]) -> Any:
    """`value` with every non-finite float (numpy's too) made None; the paths of the
    infinite ones go to `reasons`, as `runs[0].wall_s`."""
    if isinstance(value, dict):
        return {
            k: finite_only(v, f"{path}.{k}" if path else str(k), reasons) for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [finite_only(v, f"{path}[{i}]", reasons) for i, v in enumerate(value)]
    if isinstance(value, np.generic) and not isinstance(value, np.bool_):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        if not math.isnan(value):
            reasons[path] = INFINITE
        return None
    return value


def _run_dict(r: RunSummary) -> dict[str, Any]:
    return {
        "id": r.id, "group": r.group, "concurrency": _num(r.concurrency), "repeat": _num(r.repeat),
        "requests": r.requests, "output_tokens": _num(r.output_tokens), "wall_s": _num(r.wall_s),
        "aggregate_tps": _num(r.aggregate_tps), "sum_reported_tps": _num(r.sum_reported_tps),
        "overlap": _num(r.overlap), "in_flight": _num(r.in_flight), "stop": r.stop,
        "prefill_share": _num(r.prefill_share), "median_ttft_s": _num(r.median_ttft_s),
        "median_decode_tps": _num(r.median_decode_tps), "format": r.format,
        "verdict": str(r.verdict), "reasons": r.reasons, "questions": r.questions,
        "derived": r.derived, "source": r.source,
        "latency": {m: {p: _num(v, 9) for p, v in q.items()} for m, q in r.latency.items()},
        "phase": r.phase, "prompt_tps": _num(r.prompt_tps),
        "decode_bound": _num(r.decode_bound), "decode_bound_exact": r.decode_bound_exact,
        "in_flight_how": r.in_flight_how, "request_rate": _num(r.request_rate), "load": r.load,
        "failed": r.failed, "engine": r.engine, "engine_version": r.engine_version,
        "model": r.model, "hardware": r.hardware, "content": r.content,
        "speculation": r.speculation, "speculation_method": r.speculation_method,
        "speculation_acceptance": _num(r.speculation_acceptance),
        "context_tokens": _num(r.context_tokens), "tool": r.tool, "tool_version": r.tool_version,
        "prompt_tokens": _num(r.prompt_tokens), "prompt_tokens_total": _num(r.prompt_tokens_total),
        "output_tokens_requested": _num(r.output_tokens_requested),
        "output_tokens_min": _num(r.output_tokens_min),
        "output_tokens_max": _num(r.output_tokens_max),
        "prefill_rate": _num(r.prefill_rate), "prefill_rate_source": r.prefill_rate_source,
        "prefill_s": _num(r.prefill_s), "bandwidth_utilization": _num(r.bandwidth_utilization),
    }  # fmt: skip


def _claim_dict(c: ClaimSummary) -> dict[str, Any]:
    k = c.check
    return {
        "id": k.claim, "metric": k.metric, "value": _num(k.value), "concurrency": k.concurrency,
        "method": k.method, "runs": k.runs, "recomputed": _num(k.recomputed),
        "factor": _num(k.factor), "verdict": str(c.verdict), "reason": c.reason,
        "arithmetic": k.arithmetic, "source": k.source, "ref": k.ref, "equation": c.equation,
    }  # fmt: skip


def _finding_dict(f: Finding) -> dict[str, Any]:
    return {
        "code": f.code, "name": f.name, "severity": str(f.severity), "outcome": str(f.outcome),
        "subject": f.subject, "message": f.message, "arithmetic": f.arithmetic, "help": f.help,
        "numbers": {k: _num(v) for k, v in clean(f.numbers).items()}, "refs": f.refs,
        "evidence": [{k: _num(v) for k, v in clean(row).items()} for row in f.evidence],
    }  # fmt: skip


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
        else "no wall clock: cannot recompute"
    )
    if not math.isnan(stats["sum_reported_tps"]):
        how += f"; the sum of self-reported rates would be {stats['sum_reported_tps']:,.1f}"
    overlap = facts.overlap
    return {
        "aggregate": how,
        "ladder": _answer(overlap, "ladder (serial)", "cluster (overlapping)"),
        "slope": _answer(slope, "flat in N (serial)", "grows with N"),
    }


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


def _request_count(s: RunFigures, row: Any) -> int | None:
    """The run's request count; unknown (None), not 0, for a summary that does not count them."""
    summary = row["summary"] if isinstance(row["summary"], dict) else {}
    if s.flag("from_summary") and finite(summary.get("requests")) is None:
        return None
    return int(s["requests"])


def build_verdict(
    data: AuditData, checks: list[ClaimCheck], findings: list[Finding], rules: list[RuleDoc]
) -> Verdict:
    by_subject = {(f.code, f.subject): f for f in findings}
    facts = data.facts
    latencies = latency_table(data.tables.requests)
    runs: list[RunSummary] = []
    run_verdicts: dict[str, VerdictKind] = {}
    for _, row in data.tables.runs.iterrows():
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
            reasons.append("no wall clock, so no total ÷ wall aggregate")
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
                f"the requests overlapping: {rf.why}{decide}"
            )
        else:
            kind = VerdictKind.SUPPORTED
        run_verdicts[run_id] = kind
        runs.append(
            RunSummary(
                id=run_id,
                group=group,
                concurrency=concurrency,
                repeat=number(row["repeat"]),
                requests=_request_count(s, row),
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
                latency=run_latency(latencies, run_id),
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
        inputs=_inputs(data),
        undisclosed=undisclosed(data),
        rules=[r.code for r in rules],
        rule_docs=rules,
        groups=[
            GroupSummary(g.group, g.runs, g.axis, g.why, g.slope.message, *_levels(runs, g.group))
            for g in facts.groups.values()
        ],
        series=_series(data, runs),
    )


def _text(value: Any) -> str | None:
    """A string field of the run record; None when unset (None or empty)."""
    return None if not value else str(value)


def _run_details(row: pd.Series, s: RunFigures) -> dict[str, Any]:
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


def _inputs(data: AuditData) -> list[InputSummary]:
    """The files read, each with the tools its run records name and the schema they declare."""
    tools: dict[str, list[tuple[str, str | None]]] = {}
    schemas: dict[str, str] = {}
    for _, row in data.tables.runs.iterrows():
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
    return Series([run_series(data, r) for r in timed[:MAX_RUN_CHARTS]], len(timed))


def _equation(k: ClaimCheck, data: AuditData) -> str:
    """The claim in one line: '4 × 512 tokens ÷ 22.50 s = 91.0 tok/s; claimed 350 = 3.85×'."""
    if k.recomputed is None or k.factor is None:
        return ""
    unit = " tok/s" if k.metric in ("aggregate_tps", "stream_tps") else "×"
    digits = 2 if unit == "×" else claim_digits(k)
    left = ""
    if k.metric == "aggregate_tps" and len(k.runs) == 1 and k.runs[0] in data.stats.index:
        rows = data.requests_of(k.runs[0])
        rows = rows[rows["ok"]]
        s = data.figures(k.runs[0])
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


def claim_digits(k: ClaimCheck) -> int:
    """Decimals for a claim's rates: 0.58 and 0.52 tok/s, not 0.6 and 0.5."""
    values = [v for v in (k.value, k.recomputed) if v is not None]
    return rate_digits(min(values)) if values else 1


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


def undisclosed(data: AuditData) -> list[str]:
    """What the trace did not say, that a reader needs to trust a figure."""
    runs = data.tables.runs

    def unset(column: str, *unknown: str) -> np.ndarray:
        values = runs[column].to_numpy(dtype=object)
        return np.fromiter((v is None or v in unknown for v in values), bool, len(values))

    def absent(column: str) -> np.ndarray:
        return np.asarray(pd.isna(runs[column]), dtype=bool)

    # one pass per column, not a row object per run and check (5,000 runs took seconds)
    checks: list[tuple[str, np.ndarray]] = [
        ("stop mode (forced or natural)", unset("stop", "unknown")),
        ("prompt length", absent("prompt_tokens")),
        ("content type", unset("content", "unknown")),
        ("whether speculative decoding was on", unset("spec_enabled")),
        ("context length", absent("context_tokens")),
        ("hardware", unset("hardware_name")),
        ("engine and version", unset("engine_name")),
        ("concurrency", absent("concurrency")),
    ]
    ids = runs["run"].astype(str).to_numpy()
    out = []
    for label, missing_mask in checks:
        missing = ids[missing_mask]
        if len(missing):
            which = (
                "all runs"
                if len(missing) == len(runs)
                else ", ".join(missing[:5])
                + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
            )
            out.append(f"{label}: {which}")
    return out
