"""A verdict as the report's content: plain dataclasses, every number already a string.

Templates only loop and print what is here; nothing is computed in them. Strings that came
from a trace pass through `shown()`, which makes invisible and direction-changing characters
visible and caps their length, so that a name cannot hide or reorder the text around it.
"""

from __future__ import annotations

import math
import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token

from reporter.findings import Finding, RuleDoc
from reporter.model import (
    FORMAT_VERSION,
    ClaimSummary,
    GroupSummary,
    RunSummary,
    Verdict,
    claim_digits,
)
from reporter.numbers import listed
from reporter.render.common import (
    MAX_MESSAGE,
    SPACES,
    Chart,
    all_prefill,
    num,
    overlap_cell,
    pct,
    prefill_lacks,
    rate_cell,
    shown,
    value_text,
)
from reporter.types import Outcome, Severity, VerdictKind
from reporter.values import finite
from reporter.version import __version__

#: Evidence rows shown per finding, and refs shown per finding.
MAX_EVIDENCE_ROWS = 20
#: Runs a report shows with every per-run table open; past it, the long per-run tables
#: (latency, contents, provenance, checks that passed) are collapsed under <details>.
HANDFUL = 6
MAX_REFS = 12

#: The mark of a TTFT cell that holds a batch's one time to first token, and what it means.
BATCH_MARK = "(whole batch)"
BATCH_TTFT = (
    # not "got their first tokens in that pass": llama-batched-bench's prefill samples none
    f"{BATCH_MARK}: the batch's one time to first token, timed once by the tool (its sequences "
    "were prefilled together, in one pass), not a percentile"
)

VERDICT_TEXT = {
    VerdictKind.SUPPORTED: "Supported",
    VerdictKind.UNDERSTATED: "Understated",
    VerdictKind.INSUFFICIENT_DATA: "Insufficient data",
    VerdictKind.INCOMPARABLE: "Incomparable",
    VerdictKind.SERIAL: "Serial",
    VerdictKind.INFLATED: "Inflated",
}
VERDICT_MEANING = {
    VerdictKind.SUPPORTED: "the figures hold when recomputed as total output tokens ÷ wall clock",
    VerdictKind.UNDERSTATED: "a published figure is well below what the trace measures",
    # the aggregate may be recomputed and still not decided (no sign the requests decoded
    # together, text the client never received): "recompute" would be untrue of those
    VerdictKind.INSUFFICIENT_DATA: "the trace does not hold enough to decide the figures",
    VerdictKind.INCOMPARABLE: "figures are compared that were measured under different conditions",
    VerdictKind.SERIAL: "the requests were served one at a time: the concurrency is not real",
    VerdictKind.INFLATED: "a published figure is higher than the trace supports",
}
SEVERITY_TITLE = {Severity.ERROR: "Errors", Severity.WARNING: "Warnings", Severity.INFO: "Notes"}
METRIC_TEXT = {
    "aggregate_tps": "aggregate tok/s",
    "stream_tps": "single-stream tok/s",
    "speedup": "speed-up",
    "scaling": "scaling",
}


# --------------------------------------------------------------------------- dataclasses


@dataclass(frozen=True)
class Span:
    """A piece of a line of documentation: plain text or `code`."""

    text: str
    code: bool = False


@dataclass(frozen=True)
class DocBlock:
    """A block of a rule page: a heading, a paragraph, a list or a code block."""

    kind: str
    spans: list[Span] = field(default_factory=list)
    items: list[list[Span]] = field(default_factory=list)
    text: str = ""


@dataclass(frozen=True)
class RulePage:
    code: str
    name: str
    #: The severities its findings fired at in this report, worst first (a rule's default
    #: severity is not the one every finding carries: BR001 is an error with a claim, an
    #: info without).
    severities: list[str]
    summary: str
    blocks: list[DocBlock]


@dataclass(frozen=True)
class ClaimView:
    id: str
    metric: str
    value: str
    concurrency: str
    method: str
    runs: str
    recomputed: str
    factor: str
    verdict: str
    verdict_class: str
    reason: str
    equation: str
    arithmetic: list[str]
    source: str
    ref: str
    anchor: str = ""
    findings: list[Link] = field(default_factory=list)


@dataclass(frozen=True)
class Link:
    """A link within the report: the element's id and what the link says."""

    anchor: str
    text: str
    #: error, warning or info for a link to a finding (its colour); "" otherwise.
    severity: str = ""
    #: What the link says on hover (a finding's rule name).
    title: str = ""


@dataclass(frozen=True)
class GroupSection:
    """One group of runs (a sweep, repeats, or a single run) with all that is about it."""

    anchor: str
    name: str
    why: str
    load: str
    slope: str
    runs: list[RunView]
    #: The group's chart against N, then its runs' timelines.
    charts: list[Chart]
    #: Findings about the group as a whole (BR005, BR016, ...).
    findings: list[Link]


@dataclass(frozen=True)
class RunView:
    id: str
    group: str
    concurrency: str
    requests: str
    failed: str
    output_tokens: str
    wall_s: str
    aggregate_tps: str
    sum_reported_tps: str
    overlap: str
    verdict: str
    verdict_class: str
    reasons: list[str]
    q_aggregate: str
    q_ladder: str
    q_slope: str
    stop: str
    lengths: str
    prompt_tokens: str
    prefill_share: str
    prefill_note: str
    content: str
    speculation: str
    context_tokens: str
    engine: str
    model: str
    hardware: str
    median_ttft_s: str
    median_decode_tps: str
    source: str
    derived: list[str]
    #: "p50 / p90 / p99" in milliseconds per latency metric, "" where unknown.
    latency: dict[str, str]
    #: Whether those are the tool's own percentiles, from its summary (not the requests').
    latency_from_summary: bool = False
    #: Whether its TTFT cell is a batch's one time to first token (BATCH_TTFT), not percentiles.
    batch_ttft: bool = False
    #: The aggregate the run's file states (tok/s; "—" when it states none), and where that
    #: is further from total ÷ wall than stated_aggregate_gap, the note saying so (reporter.stated).
    stated_tps: str = "—"
    stated_note: str = ""
    #: The run's element in its group's section, and the findings that concern it.
    anchor: str = ""
    findings: list[Link] = field(default_factory=list)


@dataclass(frozen=True)
class EvidenceTable:
    columns: list[str]
    rows: list[list[str]]
    more: int


@dataclass(frozen=True)
class FindingView:
    code: str
    name: str
    severity: str
    outcome: str
    subject: str
    message: str
    arithmetic: list[str]
    help: str
    numbers: list[tuple[str, str]]
    refs: list[str]
    refs_more: int
    evidence: EvidenceTable | None
    has_page: bool
    #: The finding's element, and the runs (or claims) it concerns, each a link back.
    anchor: str = ""
    concerns: list[Link] = field(default_factory=list)


@dataclass(frozen=True)
class SeverityGroup:
    severity: str
    title: str
    findings: list[FindingView]


@dataclass(frozen=True)
class InputView:
    path: str
    sha256: str
    format: str
    schema: str
    records: str
    skipped: str
    skipped_reasons: list[str]
    notes: list[str]
    tools: str


@dataclass(frozen=True)
class Counts:
    fired: int
    passed: int
    undecidable: int
    not_applicable: int
    rules: int
    inputs: int
    runs: int
    claims: int


@dataclass(frozen=True)
class ReportContext:
    """Everything the HTML and Markdown templates print."""

    title: str
    verdict: str
    verdict_text: str
    verdict_class: str
    verdict_meaning: str
    headline: str
    equation: str
    claims: list[ClaimView]
    runs: list[RunView]
    groups: list[SeverityGroup]
    undecided: list[FindingView]
    passed: list[FindingView]
    undisclosed: list[str]
    inputs: list[InputView]
    command: str
    command_fence: str
    version: str
    format_version: str
    counts: Counts
    rule_pages: list[RulePage]
    charts: list[Chart] = field(default_factory=list)
    #: Groups of several runs (sweeps or repeats) and why their runs are together.
    sweeps: list[SweepView] = field(default_factory=list)
    run_charts: list[Chart] = field(default_factory=list)
    chart_notes: list[str] = field(default_factory=list)
    #: Whether any run has latency percentiles to print.
    has_latency: bool = False
    #: Whether any run's file states an aggregate of its own (the run tables' "stated" column).
    has_stated: bool = False
    #: What a TTFT cell marked BATCH_MARK holds (the template prints it under the table).
    batch_ttft_note: str = BATCH_TTFT
    #: One section per group, in the verdict's order (reporter.render.context.sections).
    sections: list[GroupSection] = field(default_factory=list)
    #: Charts about no one group (the wall-clock split, bandwidth).
    overview_charts: list[Chart] = field(default_factory=list)
    #: More than a handful of runs: the long per-run tables are collapsed.
    collapse: bool = False


@dataclass
class SweepView:
    """A group of several runs: its name, why its runs are together, how many there are,
    the span of its load axis ("N=1–8", "1–16 req/s") and the slope's answer."""

    name: str
    why: str
    runs: int
    load: str
    slope: str


# --------------------------------------------------------------------------- builders


def sweep_view(verdict: Verdict, group: GroupSummary) -> SweepView:
    members = [r for r in verdict.runs if r.id in set(group.runs)]
    if group.axis == "rate":
        rates = sorted(r.request_rate for r in members if r.request_rate is not None)
        load = f"{_span(rates)} req/s" if rates else ""
        # a rate sweep's last point may send every request at once (rate inf): no rate
        if any(r.request_rate is None and r.load != "rate" for r in members):
            load += " and all at once" if load else "all at once"
    else:
        ns = sorted(n for r in members if (n := r.concurrency) is not None and not math.isnan(n))
        load = f"N={_span(ns)}" if ns else ""
    return SweepView(
        shown(group.name, MAX_MESSAGE),
        shown(group.why, MAX_MESSAGE),
        len(group.runs),
        load,
        shown(group.slope, MAX_MESSAGE),
    )


def _span(values: list[float]) -> str:
    low, high = f"{values[0]:g}", f"{values[-1]:g}"
    return low if low == high else f"{low}–{high}"


def rerun_command(verdict: Verdict, command: str | None) -> str:
    """The command line that reproduces this audit (the one given, else one from the inputs)."""
    if command:
        return SPACES.sub(" ", command)
    return shlex.join(["benchreport", "audit", *(i.path for i in verdict.inputs)])


def _fence(text: str) -> str:
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def _speculation(r: RunSummary) -> str:
    if r.speculation is None:
        return "unknown"
    if not r.speculation:
        return "off"
    parts = ["on"]
    if r.speculation_method:
        parts.append(shown(r.speculation_method))
    if r.speculation_acceptance is not None:
        parts.append(f"acceptance {pct(r.speculation_acceptance, 1)}")
    return ", ".join(parts)


def _named(name: str | None, version: str | None = None) -> str:
    if not name:
        return "unknown"
    return shown(name) + (f" {shown(version)}" if version else "")


def _lengths(r: RunSummary) -> str:
    parts = []
    if r.output_tokens_requested is not None:
        parts.append(f"requested {num(r.output_tokens_requested, 0)}")
    lo, hi = r.output_tokens_min, r.output_tokens_max
    if lo is not None and hi is not None:
        parts.append(f"got {num(lo, 0)}" if lo == hi else f"got {num(lo, 0)}–{num(hi, 0)}")
    return "; ".join(parts) or "unknown"


def _prefill_note(r: RunSummary, lone: Sequence[RunSummary] = ()) -> str:
    """How the run's prefill share was taken, or what it lacks (the lacks worded as the wall
    clock split words them); `lone` are the runs of one request in its group, whose prompt
    tokens ÷ time to first token would give the prefill rate without a probe."""
    if r.prompt_tokens_total == 0 and finite(r.prefill_share) is not None:
        return "no prompt tokens were processed: nothing of the wall clock is prefill"
    if finite(r.prefill_share) is not None:
        return (
            f"{num(r.prompt_tokens_total, 0)} prompt tokens ÷ {num(r.prefill_rate, 0)} tok/s "
            f"= {num(r.prefill_s, 2)} s of {num(r.wall_s, 2)} s; "
            f"rate from {shown(r.prefill_rate_source or 'unknown')}"
        )
    if all_prefill(r):
        return (
            # printed after "prefill: " (and as the share cell's title): not "all prefill" again
            f"the whole wall clock of a prompt-processing test, {num(r.prompt_tokens_total, 0)} "
            f"prompt tokens ÷ {num(r.wall_s, 2)} s = {num(r.prompt_tps)} tok/s, its own rate"
        )
    why = []
    if r.prompt_tokens_total is None and r.prompt_tokens is not None:
        why.append(
            f"the file gives a prompt length ({num(r.prompt_tokens, 0)} tokens), not a count "
            "of the prompt tokens sent"
        )
    if r.prefill_rate is None:
        why.append(_no_prefill_rate(r, lone))
    elif r.prompt_tokens_total is not None:
        prefill = finite(r.prefill_s)
        why.append(
            f"{num(r.prompt_tokens_total, 0)} prompt tokens ÷ {num(r.prefill_rate, 0)} tok/s"
            + ("" if prefill is None else f" = {num(prefill, 2)} s of prefill")
            + f"; rate from {shown(r.prefill_rate_source or 'unknown')}"
        )
    lacks = prefill_lacks(r)
    return f"{lacks}: {'; '.join(why)}" if why else lacks


def _no_prefill_rate(r: RunSummary, lone: Sequence[RunSummary]) -> str:
    """Why a run has no prefill rate: no probe, and no lone request of its group that gives
    one (its prompt tokens ÷ its time to first token)."""
    if r.median_ttft_s is None and r.requests == 1:
        return "no probe, and its one request has no first-token time"
    if r.median_ttft_s is None and (r.concurrency == 1 or r.serial):
        # a single-sequence test (llama-bench): every request alone, none timed to its first
        return "no probe, and its requests, each served alone, have no first-token time"
    if not lone:
        return "no probe, no lone request"
    if all(x.median_ttft_s is None for x in lone):
        return (
            "no probe, and the lone request of its group has no first-token time"
            if len(lone) == 1
            else "no probe, and the lone requests of its group have no first-token time"
        )
    return (
        "no probe, and no lone request of its group has both prompt tokens and a first-token time"
    )


def _prompt_length(r: RunSummary) -> tuple[float | None, bool]:
    """The prompt tokens of a request as the file gives them, and whether that is a summary's
    prompt tokens ÷ its completed requests (the mean BR017 takes; a tool's summary may count
    the prompts in all only); None when nothing in the file gives them."""
    if r.prompt_tokens is not None:
        return r.prompt_tokens, False
    done = None if r.requests is None else r.requests - (r.failed or 0)
    if r.prompt_tokens_total is not None and done is not None and done > 0:
        return r.prompt_tokens_total / done, True
    return None, False


def _prompt_cell(r: RunSummary) -> str:
    length, divided = _prompt_length(r)
    if length is None and r.requests and r.failed == r.requests:
        # a summary's prompt tokens count completed requests only: 0 here says nothing
        return "unknown (no request completed)"
    if length is None:
        # prompt tokens counted in all, with no request count to divide them by
        total = r.prompt_tokens_total
        return "unknown" if total is None else f"unknown ({num(total, 0)} in all)"
    return f"≈ {num(length, 0)} (total ÷ completed)" if divided else num(length, 0)


#: How the context cell words where BR017 took a run's context length from (its finding's
#: numbers["source"], by how that begins): a length the run record states as it is, one the
#: file measured as a mean with "≈". Without a context length the context at the first
#: decoded token is the prompt, which BR017 takes as disclosed.
CONTEXT_SOURCES = (
    ("workload.context_tokens", "{}"),
    ("workload.prompt_tokens", "{} (stated prompt, at first token)"),
    ("the requests' mean prompt_tokens", "≈ {} (mean prompt, at first token)"),
    ("the summary's mean prompt length", "≈ {} (summary's mean prompt, at first token)"),
    ("the summary's prompt tokens ÷ completed", "≈ {} (prompt total ÷ completed, at first token)"),
)


def _context_cell(r: RunSummary, context: Finding | None = None) -> str:
    """The run's context length from the same source BR017 names (`context`, its passed
    finding of the run: the stated context, else the stated prompt, else a measured mean);
    without that finding (the rule not run), from the run's record and means."""
    if context is not None and context.outcome is Outcome.PASSED:
        length = finite(context.numbers.get("context_tokens"))
        source = context.numbers.get("source")
        for start, cell in CONTEXT_SOURCES:
            if length is not None and isinstance(source, str) and source.startswith(start):
                return cell.format(num(length, 0))
    if r.context_tokens is not None:
        return num(r.context_tokens, 0)
    length, _ = _prompt_length(r)
    return "unknown" if length is None else f"≈ {num(length, 0)} (prompt, at first token)"


def run_view(
    r: RunSummary, context: Finding | None = None, lone: Sequence[RunSummary] = ()
) -> RunView:
    """The run's cells; `context` is BR017's finding of it, whose context length the context
    cell shows; `lone` are the runs of one request in its group (for its prefill note)."""
    latency = latency_cells(r.latency, r.batch_ttft_s)
    return RunView(
        id=shown(r.id),
        group=shown(r.group),
        concurrency=rate_cell(r) or ("?" if r.concurrency is None else num(r.concurrency, 0)),
        requests=num(r.requests, 0),
        failed=num(r.failed, 0) if r.failed else "0",
        output_tokens=num(r.output_tokens, 0),
        wall_s=num(r.wall_s, 2),
        aggregate_tps=num(r.aggregate_tps),
        sum_reported_tps=num(r.sum_reported_tps),
        overlap=overlap_cell(r.overlap, r.decode_bound, r.decode_bound_exact),
        verdict=str(r.verdict),
        verdict_class=str(r.verdict),
        reasons=[shown(x, MAX_MESSAGE) for x in r.reasons],
        q_aggregate=shown(r.questions.get("aggregate", "not checked"), MAX_MESSAGE),
        q_ladder=shown(r.questions.get("ladder", "not checked"), MAX_MESSAGE),
        q_slope=shown(r.questions.get("slope", "not checked"), MAX_MESSAGE),
        stop=shown(r.stop),
        lengths=_lengths(r),
        prompt_tokens=_prompt_cell(r),
        prefill_share=pct(r.prefill_share),
        prefill_note=_prefill_note(r, lone),
        content=shown(r.content or "unknown"),
        speculation=_speculation(r),
        context_tokens=_context_cell(r, context),
        engine=_named(r.engine, r.engine_version),
        model=_named(r.model),
        hardware=_named(r.hardware),
        median_ttft_s=num(r.median_ttft_s, 3),
        median_decode_tps=num(r.median_decode_tps),
        source=shown(r.source),
        derived=[shown(x) for x in r.derived],
        latency=latency,
        latency_from_summary=r.latency_source == "summary",
        batch_ttft=latency["ttft_s"].endswith(BATCH_MARK),
        stated_tps="—" if r.stated_aggregate_tps is None else num(r.stated_aggregate_tps),
        stated_note=shown(r.stated_aggregate_note or "", MAX_MESSAGE),
    )


LATENCY_METRICS = (("ttft_s", "TTFT"), ("itl_s", "ITL"), ("tpot_s", "TPOT"), ("e2e_s", "e2e"))


def latency_cells(
    latency: dict[str, dict[str, Any]], batch_ttft_s: float | None = None
) -> dict[str, str]:
    """Each latency metric as "p50 / p90 / p99" in milliseconds, `n/a` for a percentile the
    file does not give (a tool's summary may state p50 and p99 only); "" when none is known.
    A batch's one time to first token is its TTFT cell, once, marked (BATCH_MARK)."""
    cells = {}
    for key, _ in LATENCY_METRICS:
        q = latency.get(key) or {}
        values = [finite(q.get(p)) for p in ("p50", "p90", "p99")]
        known = any(v is not None for v in values)
        cells[key] = (
            " / ".join(num(None if v is None else v * 1000, 1) for v in values) if known else ""
        )
    batch = finite(batch_ttft_s)
    if batch is not None and not cells["ttft_s"]:
        cells["ttft_s"] = f"{num(batch * 1000, 1)} {BATCH_MARK}"
    return cells


def claim_view(c: ClaimSummary, verdict: Verdict) -> ClaimView:
    k = c.check
    digits = 2 if k.metric in ("speedup", "scaling") else claim_digits(k)
    return ClaimView(
        id=shown(k.claim),
        metric=METRIC_TEXT.get(k.metric, shown(k.metric)),
        value=f"{k.value:,.{digits}f}",
        concurrency="—" if k.concurrency is None else f"{k.concurrency:,}",
        method=shown(k.method),
        runs=", ".join(shown(r) for r in k.runs) or "—",
        recomputed=num(k.recomputed, digits),
        factor="n/a" if k.factor is None else f"{k.factor:.2f}×",
        verdict=str(c.verdict),
        verdict_class=str(c.verdict),
        reason=shown(c.reason, MAX_MESSAGE),
        equation=shown(c.equation, MAX_MESSAGE),
        arithmetic=[shown(x, MAX_MESSAGE) for x in k.arithmetic],
        source=shown(k.source or "", MAX_MESSAGE),
        ref=shown(k.ref or ""),
    )


def _evidence(rows: list[dict[str, Any]]) -> EvidenceTable | None:
    if not rows:
        return None
    columns: list[str] = []
    for row in rows:
        columns.extend(k for k in row if k not in columns)
    body = [[value_text(row.get(c)) for c in columns] for row in rows[:MAX_EVIDENCE_ROWS]]
    return EvidenceTable([shown(c) for c in columns], body, max(0, len(rows) - MAX_EVIDENCE_ROWS))


def finding_view(f: Finding, pages: set[str]) -> FindingView:
    return FindingView(
        code=f.code,
        name=f.name,
        severity=str(f.severity),
        outcome=str(f.outcome),
        subject=shown(f.subject),
        message=shown(f.message, MAX_MESSAGE),
        arithmetic=[shown(x, MAX_MESSAGE) for x in f.arithmetic],
        help=shown(f.help, MAX_MESSAGE),
        numbers=[(shown(k), value_text(v)) for k, v in f.numbers.items()],
        refs=[shown(r) for r in f.refs[:MAX_REFS]],
        refs_more=max(0, len(f.refs) - MAX_REFS),
        evidence=_evidence(f.evidence),
        has_page=f.code in pages,
    )


def input_views(verdict: Verdict) -> list[InputView]:
    out = []
    for i in verdict.inputs:
        names: list[str] = []
        for name, version in i.tools:
            tool = shown(name, 60) + (f" {shown(version, 40)}" if version else "")
            if tool not in names:
                names.append(tool)
        out.append(InputView(
            path=shown(i.path, 400), sha256=i.sha256, format=shown(i.format),
            schema=i.schema or "—", records=f"{i.records:,}", skipped=f"{i.skipped:,}",
            skipped_reasons=[shown(x) for x in i.skipped_reasons],
            notes=[shown(x, MAX_MESSAGE) for x in i.notes],
            tools=listed(names, 4) or "not recorded",
        ))  # fmt: skip
    return out


# --------------------------------------------------------------------------- rule pages

#: CommonMark without raw HTML: a tag in a docstring stays text, never markup.
_MARKDOWN = MarkdownIt("commonmark", {"html": False})
#: The report has no emphasis style: emphasis keeps its asterisks, as the page is written.
_MARKS = {"em_open": "*", "em_close": "*", "strong_open": "**", "strong_close": "**"}


def _spans(inline: Token) -> list[Span]:
    """An inline token as text and `code` spans; line breaks become spaces."""
    out: list[Span] = []
    text = ""
    for child in inline.children or []:
        if child.type == "code_inline":
            if text:
                out.append(Span(text))
                text = ""
            out.append(Span(child.content, code=True))
        elif child.type in ("softbreak", "hardbreak"):
            text += " "
        else:
            text += _MARKS.get(child.type, child.content)
    if text:
        out.append(Span(text))
    return out


def _list_items(tokens: list[Token], start: int) -> tuple[list[list[Span]], int]:
    """The items of the list opening at `start` (nested lists flattened into it, an ordered
    item keeping its number) and the index after the list."""
    items: list[list[Span]] = []
    depth = 0
    number = ""
    for i in range(start, len(tokens)):
        t = tokens[i]
        if t.type.endswith("_list_open"):
            depth += 1
        elif t.type.endswith("_list_close"):
            depth -= 1
            if depth == 0:
                return items, i + 1
        elif t.type == "list_item_open":
            number = f"{t.info}{t.markup} " if t.info else ""
        elif t.type == "inline":
            spans = _spans(t)
            if number:
                spans.insert(0, Span(number))
                number = ""
            items.append(spans)
    return items, len(tokens)


def doc_blocks(doc: str) -> tuple[str, list[DocBlock]]:
    """A rule's page (its module docstring) as a summary line and blocks to print: the first
    line, then the rest parsed as CommonMark (markdown-it-py)."""
    lines = doc.strip("\n").splitlines()
    summary = lines[0].strip() if lines else ""
    tokens = _MARKDOWN.parse("\n".join(lines[1:]))
    blocks: list[DocBlock] = []
    i = 0
    while i < len(tokens):
        t = tokens[i]
        if t.type in ("heading_open", "paragraph_open"):
            kind = "heading" if t.type == "heading_open" else "para"
            blocks.append(DocBlock(kind, spans=_spans(tokens[i + 1])))
            i += 3
        elif t.type in ("bullet_list_open", "ordered_list_open"):
            items, i = _list_items(tokens, i)
            blocks.append(DocBlock("list", items=items))
        elif t.type in ("fence", "code_block"):
            blocks.append(DocBlock("code", text=t.content.rstrip("\n")))
            i += 1
        else:  # blockquote and rule marks: their paragraphs are read inside them
            i += 1
    return summary, blocks


def rule_pages(fired: Iterable[Finding], docs: Iterable[RuleDoc]) -> list[RulePage]:
    """The pages of the rules of the `fired` findings, from the docs the verdict carries."""
    by_code = {d.code: d for d in docs}
    severities: dict[str, set[Severity]] = {}
    for f in fired:
        severities.setdefault(f.code, set()).add(f.severity)
    pages = []
    for code in sorted(severities):
        rule = by_code.get(code)
        if rule is None:
            continue
        summary, blocks = doc_blocks(rule.doc or rule.summary)
        worst_first = [str(s) for s in sorted(severities[code], key=int, reverse=True)]
        pages.append(RulePage(rule.code, rule.name, worst_first, summary, blocks))
    return pages


# --------------------------------------------------------------------------- the report


def _headline(verdict: Verdict) -> str:
    """The one sentence under the verdict: the worst claim's or run's reason ("" when none
    gives one)."""
    for c in verdict.claims:
        if c.verdict is verdict.verdict:
            return shown(f"Claim {c.check.claim}: {c.reason}", MAX_MESSAGE)
    for r in verdict.runs:
        if r.verdict is verdict.verdict and r.reasons:
            return shown(f"Run {r.id}: {r.reasons[0]}", MAX_MESSAGE)
    if not verdict.runs and not verdict.claims:
        return "The trace holds no run and no claim."
    return ""  # no claim or run says more than the verdict's own meaning, printed beside it


def _title(verdict: Verdict) -> str:
    names = [i.path.rsplit("/", 1)[-1] for i in verdict.inputs]
    shown_names = listed([shown(n, 60) for n in names], 3)
    return f"benchreport audit: {VERDICT_TEXT[verdict.verdict].lower()}" + (
        f" ({shown_names})" if shown_names else ""
    )


def _fired_sorted(findings: Sequence[Finding]) -> list[Finding]:
    return sorted(
        (f for f in findings if f.fired), key=lambda f: (-int(f.severity), f.code, f.subject)
    )


def build_context(
    verdict: Verdict, command: str | None = None, *, charts: bool = True
) -> ReportContext:
    """The report's content; `charts=False` skips drawing (the Markdown summary has none)."""
    fired = _fired_sorted(verdict.findings)
    pages = rule_pages(fired, verdict.rule_docs)
    page_codes = {p.code for p in pages}
    links = _Links(verdict)
    groups = []
    for severity in (Severity.ERROR, Severity.WARNING, Severity.INFO):
        views = [
            links.finding(finding_view(f, page_codes), f, f"finding-{severity}-{k}")
            for k, f in enumerate((f for f in fired if f.severity is severity), start=1)
        ]
        if views:
            groups.append(SeverityGroup(str(severity), SEVERITY_TITLE[severity], views))
    contexts = {f.subject: f for f in verdict.findings if f.code == "BR017"}
    lone: dict[str, list[RunSummary]] = {}
    for r in verdict.runs:
        if r.requests == 1:
            lone.setdefault(r.group, []).append(r)
    runs = [
        links.run(run_view(r, contexts.get(r.id), lone.get(r.group, [])), r.id)
        for r in verdict.runs
    ]
    order = {o: i for i, o in enumerate(Outcome)}
    rest = sorted(
        (f for f in verdict.findings if not f.fired),
        key=lambda f: (order[f.outcome], f.code, f.subject),
    )
    counts = Counts(
        fired=len(fired),
        passed=sum(1 for f in verdict.findings if f.outcome is Outcome.PASSED),
        undecidable=sum(1 for f in verdict.findings if f.outcome is Outcome.UNDECIDABLE),
        not_applicable=sum(1 for f in verdict.findings if f.outcome is Outcome.NOT_APPLICABLE),
        rules=len(verdict.rules), inputs=len(verdict.inputs), runs=len(verdict.runs),
        claims=len(verdict.claims),
    )  # fmt: skip
    cmd = rerun_command(verdict, command)
    claims = [links.claim(claim_view(c, verdict), c.check.claim) for c in verdict.claims]
    context = ReportContext(
        title=_title(verdict),
        verdict=str(verdict.verdict),
        verdict_text=VERDICT_TEXT[verdict.verdict],
        verdict_class=str(verdict.verdict),
        verdict_meaning=VERDICT_MEANING[verdict.verdict],
        headline=_headline(verdict),
        equation=next((c.equation for c in claims if c.verdict == str(verdict.verdict)), ""),
        claims=claims,
        runs=runs,
        has_latency=any(any(run.latency.values()) for run in runs),
        has_stated=any(r.stated_aggregate_tps is not None for r in verdict.runs),
        groups=groups,
        undecided=[finding_view(f, page_codes) for f in rest if f.outcome is Outcome.UNDECIDABLE],
        passed=[finding_view(f, page_codes) for f in rest if f.outcome is not Outcome.UNDECIDABLE],
        undisclosed=[shown(u, MAX_MESSAGE) for u in verdict.undisclosed],
        inputs=input_views(verdict),
        command=cmd,
        command_fence=_fence(cmd),
        version=__version__,
        format_version=str(FORMAT_VERSION),
        counts=counts,
        rule_pages=pages,
        sweeps=[sweep_view(verdict, g) for g in verdict.groups if len(g.runs) > 1],
        collapse=len(runs) > HANDFUL,
    )
    drawn_charts: list[Chart] = []
    if charts:
        from reporter.render.drawing import draw_charts

        drawn = draw_charts(verdict)
        context.charts.extend(drawn.overview)
        context.run_charts.extend(drawn.runs)
        context.chart_notes.extend(drawn.notes)
        drawn_charts = [*drawn.overview, *drawn.runs]
    context.sections.extend(sections(verdict, runs, drawn_charts, links))
    placed = {c.id for section in context.sections for c in section.charts}
    context.overview_charts.extend(c for c in context.charts if c.id not in placed)
    return context


def sections(
    verdict: Verdict, runs: list[RunView], drawn: list[Chart], links: _Links
) -> list[GroupSection]:
    """One section per group of the verdict: its runs, its chart against N, its timelines."""
    by_id = dict(zip((r.id for r in verdict.runs), runs, strict=True))
    out = []
    for k, group in enumerate(verdict.groups, start=1):
        members = set(group.runs)
        view = sweep_view(verdict, group)
        out.append(
            GroupSection(
                anchor=f"group-{k}",
                name=view.name,
                why=view.why,
                load=view.load,
                slope=view.slope,
                runs=[by_id[r.id] for r in verdict.runs if r.id in members],
                charts=[c for c in drawn if c.group == group.name or c.run in members],
                findings=links.about(group.name),
            )
        )
    grouped = {r for g in verdict.groups for r in g.runs}
    if rest := [r.id for r in verdict.runs if r.id not in grouped]:
        charts = [c for c in drawn if c.run in rest]
        views = [by_id[r] for r in rest]
        out.append(GroupSection("group-none", "Runs in no group", "", "", "", views, charts, []))
    return out


class _Links:
    """Anchors of runs, claims and findings, and which findings concern which run.

    A finding concerns the run it is about, every run of the group it is about, and the runs
    of the claim it is about; each of those runs links to it and it links back to each.
    Anchors are numbers, never the trace's own ids (which may hold anything).
    """

    def __init__(self, verdict: Verdict) -> None:
        self.run_anchor = {r.id: f"run-row-{k}" for k, r in enumerate(verdict.runs, start=1)}
        self.claim_anchor = {
            c.check.claim: f"claim-{k}" for k, c in enumerate(verdict.claims, start=1)
        }
        groups = {g.name: g.runs for g in verdict.groups}
        claims = {c.check.claim: c.check.runs for c in verdict.claims}
        self.runs_of: dict[str, list[str]] = {}
        for subject in {f.subject for f in verdict.findings}:
            if subject in self.run_anchor:
                self.runs_of[subject] = [subject]
            elif subject in groups:
                self.runs_of[subject] = list(groups[subject])
            elif subject in claims:
                self.runs_of[subject] = list(claims[subject])
        self.to_findings: dict[str, list[Link]] = {}

    def finding(self, view: FindingView, f: Finding, anchor: str) -> FindingView:
        link = Link(anchor, f.code, str(f.severity), f.name)
        concerns = []
        if f.subject in self.claim_anchor:
            concerns.append(Link(self.claim_anchor[f.subject], f"claim {shown(f.subject)}"))
            self.to_findings.setdefault(f"claim:{f.subject}", []).append(link)
        elif f.subject not in self.run_anchor:
            self.to_findings.setdefault(f"about:{f.subject}", []).append(link)
        for run in self.runs_of.get(f.subject, []):
            if run in self.run_anchor:
                concerns.append(Link(self.run_anchor[run], f"run {shown(run)}"))
                self.to_findings.setdefault(f"run:{run}", []).append(link)
        return replace(view, anchor=anchor, concerns=concerns)

    def run(self, view: RunView, run_id: str) -> RunView:
        return replace(
            view,
            anchor=self.run_anchor[run_id],
            findings=self.to_findings.get(f"run:{run_id}", []),
        )

    def claim(self, view: ClaimView, claim_id: str) -> ClaimView:
        return replace(
            view,
            anchor=self.claim_anchor[claim_id],
            findings=self.to_findings.get(f"claim:{claim_id}", []),
        )

    def about(self, subject: str) -> list[Link]:
        """Findings about a group or the audit itself, not one run or claim."""
        return self.to_findings.get(f"about:{subject}", [])
