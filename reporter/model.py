"""The verdict as plain records: what every output reads, and its JSON.

The lowest layer of the audit's output, beside reporter.findings: the verdict's builder
(reporter.verdict) fills these in from the tables, the figures and the facts; the renderers
(reporter.render) read only these, so a report can show nothing the JSON verdict lacks. The
JSON is `Verdict.to_dict` and is read back by `verdict_from_dict`
(schemas/verdict-2.schema.json documents each key).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from reporter.findings import Finding, RuleDoc, clean
from reporter.types import LEFT_OUT, Outcome, Severity, VerdictKind
from reporter.version import __version__

#: Requests drawn in one timeline; more are sampled evenly in send order.
MAX_TIMELINE = 200
#: Completions drawn in one completion chart; more are sampled evenly in completion order.
MAX_COMPLETIONS = 600
#: Runs that get their own timeline and completion chart.
MAX_RUN_CHARTS = 12


@dataclass
class ClaimCheck:
    """A claim recomputed: which runs it refers to, the honest figure, the factor."""

    claim: str
    metric: str
    value: float
    concurrency: int | None
    method: str
    runs: list[str]
    recomputed: float | None
    factor: float | None
    arithmetic: list[str] = field(default_factory=list)
    problem: str | None = None
    source: str | None = None
    ref: str | None = None
    compared: list[str] = field(default_factory=list)
    #: Per-request rates of the same runs: a claimed "aggregate" far below the recomputed one
    #: that matches one of these is a per-request figure (incomparable), not an understatement.
    per_request: list[Reading] = field(default_factory=list)
    #: The aggregate over a narrower, defensible window (to the last successful response):
    #: a claim above the whole-run figure that matches one reproduces that window.
    windows: list[Reading] = field(default_factory=list)
    #: A mixed-phase rate of the same test (llama-bench pp+tg: prompt and generated tokens
    #: over the test's time): a claim above the output rate that matches it is incomparable.
    mixed: list[Reading] = field(default_factory=list)
    #: Each run's own aggregate, when the claim names none and several runs that the files
    #: record alike match it: a claim above their median that matches one reproduces that run.
    alike: list[Reading] = field(default_factory=list)


@dataclass(frozen=True)
class Reading:
    """Another figure of the claim's runs that the claim may have meant, with its arithmetic."""

    value: float
    what: str
    arithmetic: str


def rate_digits(value: float) -> int:
    """Decimals that keep a rate's first two significant figures (0.52, not 0.5)."""
    return 1 if not abs(value) < 10 else 2 if abs(value) >= 0.1 else 3


def claim_digits(k: ClaimCheck) -> int:
    """Decimals for a claim's rates: 0.58 and 0.52 tok/s, not 0.6 and 0.5."""
    values = [v for v in (k.value, k.recomputed) if v is not None]
    return rate_digits(min(values)) if values else 1


@dataclass
class Timeline:
    """Each drawn request's segments, in seconds from the run's first send."""

    #: Requests with an end time, and how many of them are drawn.
    requests: int
    drawn: int
    #: {"request": position in send order (from 1), "start", "end", "part"}; part is
    #: waiting, prefill, "wait + prefill" (no prefill rate), decode, or request (no first
    #: token time).
    segments: list[dict[str, Any]]


@dataclass
class Completions:
    """Requests finished over time against one request at a time (the serial staircase)."""

    #: Completed requests, and the points drawn of them.
    total: int
    #: {"t": seconds from the first send, "done": requests finished by then}, evenly sampled
    #: in completion order (the first and the last kept).
    points: list[dict[str, Any]]
    #: One request's duration alone: the N=1 run of the group (`single_run`), else the first
    #: completion (`single_run` None).
    single_s: float
    single_run: str | None


@dataclass
class RunSeries:
    run: str
    #: None when no request has an end time or the run has no start.
    timeline: Timeline | None
    completions: Completions | None


#: The JSON verdict's format (schemas/verdict-2.schema.json); a change of keys or meanings
#: bumps it, and `verdict_from_dict` reads this one only.
FORMAT_VERSION = 2


#: The reason of a run without request rows (a recording killed before its first answer).
EMPTY_RUN = "0 requests: nothing to audit"


@dataclass
class RunSummary:
    """One run: its recomputed figures, its verdict and why, and what its record states."""

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
    #: Where the latency percentiles come from: "requests" (computed from the request rows),
    #: "summary" (the tool's own, as its file states them), None when there are none.
    latency_source: str | None = None
    #: The one time to first token of a run whose requests were all prefilled together as one
    #: batch, timed once (seconds): every request's, and no percentile; None for other runs
    #: and wherever the requests' own TTFTs are known.
    batch_ttft_s: float | None = None
    #: The aggregate the run's file states (tok/s), as the tool computed it; None when the
    #: file states none. Its key in the file, and how the tool computed it where the adapter
    #: knows that is not total output tokens ÷ wall clock (one sentence; None otherwise).
    stated_aggregate_tps: float | None = None
    stated_aggregate_field: str | None = None
    stated_aggregate_how: str | None = None
    #: Where the stated figure is more than `stated_aggregate_gap` away from the recomputed
    #: one (reporter.stated): both figures, their ratio and how the tool computed its own.
    stated_aggregate_note: str | None = None
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
    #: The analysis layer's facts of the run (reporter.facts): served one at a time (True),
    #: overlapping (False) or undecided (None), and for an undecided run the field that
    #: would decide it.
    serial: bool | None = None
    serial_missing: str | None = None
    #: How the decode bound was taken, step by step (with `decode_bound`).
    decode_bound_arithmetic: list[str] = field(default_factory=list)
    #: One stream's decode rate (1 ÷ mean TPOT) and the aggregate as a multiple of it.
    stream_tps: float | None = None
    stream_multiple: float | None = None
    #: Σ TTFT ÷ Σ end-to-end latency of the completed requests.
    ttft_share: float | None = None
    #: An upper bound on prefill (and queueing): the union of the [send, first token]
    #: windows, or Σ TTFT, in seconds and as a share of the wall; how it was taken.
    prefill_window_s: float | None = None
    prefill_window_share: float | None = None
    prefill_window_how: str | None = None
    #: How the recorder made the prompts (workload.prompts: source, seed, salt, how their
    #: lengths were counted), as the run record states it; None for other tools' files.
    prompts: dict[str, Any] | None = None


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

    @property
    def left_out(self) -> list[str]:
        """The notes that name data of the file the audit did not read."""
        return [n for n in self.notes if n.startswith(LEFT_OUT)]


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
    """The audit: the headline, every run, claim and finding, and what the reports draw."""

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

    def reaches(self, severity: Severity | str) -> bool:
        """Whether a finding of `severity` ("error", "warning", "info") or worse fired: the
        `--fail-on` gate, for a CI job or a script (`sys.exit(verdict.reaches("error"))`)."""
        at = severity if isinstance(severity, Severity) else Severity[severity.strip().upper()]
        return any(f.fired and f.severity >= at for f in self.findings)

    def to_dict(self, *, include_series: bool = False) -> dict[str, Any]:
        """The machine verdict (DESIGN.md): stable keys, numbers rounded, strict JSON.

        Everything a report shows is here (schemas/verdict-2.schema.json); the per-run chart
        data (`series`, up to a few thousand points) only when `include_series`.

        A figure that is not finite is null: NaN stands for unknown throughout, so it is
        null without a word; an infinite one (an overflow, a division by a zero wall) is
        listed with its place under `null_reasons`, present only when there is one.
        """
        reasons: dict[str, str] = {}
        data = finite_only(self.raw_dict(include_series=include_series), "", reasons)
        if reasons:
            data["null_reasons"] = reasons
        return data  # type: ignore[no-any-return]

    def raw_dict(self, *, include_series: bool = False) -> dict[str, Any]:
        """`to_dict` before its figures that are not finite are made null (`finite_only`)."""
        raw = self._raw_dict()
        if include_series:
            raw["series"] = _series_dict(self.series)
        return raw

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


#: The types whose values finite_only keeps as they are, with a finite float (exact types:
#: a numpy scalar or a subclass goes the long way).
_KEPT = frozenset({str, int, bool, type(None)})


def finite_only(value: Any, path: str, reasons: dict[str, str]) -> Any:
    """`value` with every non-finite float (numpy's too) made None; the paths of the
    infinite ones go to `reasons`, as `runs[0].wall_s`."""
    # the leaves kept as they are (most of a verdict) cost no call and no path
    if isinstance(value, dict):
        return {
            k: v
            if type(v) in _KEPT or (type(v) is float and math.isfinite(v))
            else finite_only(v, f"{path}.{k}" if path else str(k), reasons)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [
            v
            if type(v) in _KEPT or (type(v) is float and math.isfinite(v))
            else finite_only(v, f"{path}[{i}]", reasons)
            for i, v in enumerate(value)
        ]
    return finite_leaf(value, path, reasons)


def finite_leaf(value: Any, path: str, reasons: dict[str, str]) -> Any:
    """A value that is no dict or list as `finite_only` leaves it: a numpy scalar as its
    Python value, a float that is not finite None (with its path in `reasons` if infinite)."""
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
        "latency_source": r.latency_source, "batch_ttft_s": _num(r.batch_ttft_s, 9),
        "stated_aggregate_tps": _num(r.stated_aggregate_tps),
        "stated_aggregate_field": r.stated_aggregate_field,
        "stated_aggregate_how": r.stated_aggregate_how,
        "stated_aggregate_note": r.stated_aggregate_note,
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
        "serial": r.serial, "serial_missing": r.serial_missing,
        "decode_bound_arithmetic": r.decode_bound_arithmetic,
        "stream_tps": _num(r.stream_tps), "stream_multiple": _num(r.stream_multiple),
        "ttft_share": _num(r.ttft_share), "prefill_window_s": _num(r.prefill_window_s),
        "prefill_window_share": _num(r.prefill_window_share),
        "prefill_window_how": r.prefill_window_how,
        "prompts": r.prompts,
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
