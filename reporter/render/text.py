"""The terminal summary: the verdict, the claims against the recomputed figures, the findings.

Every string that came from a trace passes through `v()` (reporter.safetext.visible): cut,
one line, its control, C1 and bidi characters shown as escapes. The run and latency tables
are drawn by rich (reporter.terminal), their cells passed as text, never as markup.

`summary()` gives the lines and tables to print (styled on a terminal, reporter.terminal.show);
`render_text()` the same as plain text at the fixed width used off a terminal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reporter import terminal
from reporter.findings import Finding
from reporter.model import EMPTY_RUN, GroupSummary, RunSummary, Verdict
from reporter.numbers import counted, fmt, pct
from reporter.render.common import overlap_cell, rate_cell
from reporter.safetext import visible as v
from reporter.terminal import Column
from reporter.types import Outcome, Severity

if TYPE_CHECKING:
    from rich.console import RenderableType
    from rich.text import Text

#: How a verdict is coloured on a terminal (no colour with NO_COLOR or off a terminal).
VERDICT_STYLE = {
    "supported": "green",
    "understated": "yellow",
    "insufficient-data": "yellow",
    "incomparable": "yellow",
    "serial": "bold red",
    "inflated": "bold red",
}
SEVERITY_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "bold"}
RUN_COLUMNS = (
    Column("run", max_width=32),
    Column("N", "right"),
    Column("req", "right"),
    Column("tokens", "right"),
    Column("wall s", "right"),
    Column("tok/s", "right"),
    Column("Σ rep", "right"),
    Column("overlap", "right"),
    Column("stop", "right", max_width=16),
    Column("prefill", "right"),
    Column("verdict"),
)
#: The column of the aggregate each run's file states, after tok/s (only when one states one).
STATED_COLUMN = Column("stated", "right")


def render_text(verdict: Verdict, *, verbose: bool = False) -> str:
    """The summary as plain text (no ANSI escape), at the width used off a terminal."""
    return terminal.plain(summary(verdict, verbose=verbose))


def summary(verdict: Verdict, *, verbose: bool = False) -> list[RenderableType]:
    """The summary as lines of text (every trace string escaped) and rich tables."""
    out: list[RenderableType] = [terminal.line("verdict: ", styled(verdict.verdict)), ""]
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
        stated = any(r.stated_aggregate_tps is not None for r in verdict.runs)
        rows: list[list[str | Text | None]] = [
            [
                v(r.id),
                _load(r),
                "?" if r.requests is None else str(r.requests),
                fmt(r.output_tokens, 0),
                fmt(r.wall_s, 2),
                fmt(r.aggregate_tps),
                *([fmt(r.stated_aggregate_tps)] if stated else []),
                fmt(r.sum_reported_tps),
                _overlap(r),
                v(r.stop),
                pct(r.prefill_share),
                styled(r.verdict),
            ]
            for r in verdict.runs
        ]
        columns: tuple[Column, ...] = RUN_COLUMNS
        if stated:
            at = [c.header for c in RUN_COLUMNS].index("tok/s") + 1
            columns = (*RUN_COLUMNS[:at], STATED_COLUMN, *RUN_COLUMNS[at:])
        out.append(terminal.indented(terminal.table(columns, rows)))
        # where it is not total ÷ wall: the figure a reader of the file would quote
        out.extend(
            f"  {v(r.id)}: {v(r.stated_aggregate_note)}"
            for r in verdict.runs
            if r.stated_aggregate_note
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
        concurrency = {r.id: r.concurrency for r in verdict.runs}
        for g in sweeps:
            out.append(f"  {v(g.name)} [{v(_axis_label(g, concurrency))}]: {v(g.why)}")
        out.append("")
    out.extend(_latency_table(verdict))
    fired = [f for f in verdict.findings if f.fired]
    for severity in (Severity.ERROR, Severity.WARNING, Severity.INFO):
        group = [f for f in fired if f.severity is severity]
        if not group:
            continue
        out.append(terminal.text(f"{severity}s ({len(group)})", SEVERITY_STYLE[severity]))
        for f in group:
            out.extend(_finding_lines(f))
        out.append("")
    undecided = [f for f in verdict.findings if f.outcome is Outcome.UNDECIDABLE]
    if undecided:
        out.append(f"could not decide ({len(undecided)})")
        for f in undecided[: None if verbose else 12]:
            out.append(f"  {f.code} {f.name} [{v(f.subject)}]: {v(f.message)}")
            # an undecided check often holds a bound or figures to check: its steps too
            out.extend(f"      {v(a)}" for a in f.arithmetic)
        if not verbose and len(undecided) > 12:
            out.append(f"  … and {len(undecided) - 12} more (--verbose lists them)")
        out.append("")
    if verdict.undisclosed:
        out.append("not disclosed: " + "; ".join(v(u) for u in verdict.undisclosed))
    counts = {o: sum(1 for f in verdict.findings if f.outcome is o) for o in Outcome}
    out.append(
        f"{counts[Outcome.FIRED]} fired, {counts[Outcome.PASSED]} passed, "
        f"{counts[Outcome.UNDECIDABLE]} undecidable, {counts[Outcome.NOT_APPLICABLE]} not "
        f"applicable, from {len(verdict.rules)} rules on {counted(len(verdict.inputs), 'file')}"
    )
    return out


def styled(verdict: object) -> Text:
    """A verdict, coloured by what it says (on a terminal without NO_COLOR only)."""
    return terminal.text(verdict, VERDICT_STYLE.get(str(verdict), ""))


def _overlap(r: RunSummary) -> str:
    """The measured overlap, or the summary's lower bound of it (≥; ~ when approximate)."""
    return overlap_cell(r.overlap, r.decode_bound, r.decode_bound_exact)


def _axis_label(g: GroupSummary, concurrency: dict[str, float | None]) -> str:
    """The group's load axis, or "all at N=…" when every run of it ran at one N (repeats, or
    runs that differ in what the files do not record: BR016 tells)."""
    levels = {concurrency.get(r) for r in g.runs}
    if g.axis == "concurrency" and len(levels) == 1 and None not in levels:
        (n,) = levels
        return f"all at N={fmt(n, 0)}"
    return g.axis


def _latency_table(verdict: Verdict) -> list[RenderableType]:
    """Per run, TTFT / TPOT / ITL / e2e at p50 / p90 / p99 in ms, where measured."""
    from reporter.render.context import BATCH_MARK, BATCH_TTFT, LATENCY_METRICS, latency_cells

    rows = [
        # the mark first: a long run id is cut at the column's width, the mark is not
        (
            ("* " if r.latency_source == "summary" else "") + v(r.id),
            latency_cells(r.latency, r.batch_ttft_s),
        )
        for r in verdict.runs
    ]
    rows = [(run_id, cells) for run_id, cells in rows if any(cells.values())]
    if not rows:
        return []
    shown = [(key, name) for key, name in LATENCY_METRICS if any(c[key] for _, c in rows)]
    columns = [Column("run", max_width=32), *(Column(name, "right") for _, name in shown)]
    table = terminal.table(
        columns, [[run_id, *(cells[k] or "-" for k, _ in shown)] for run_id, cells in rows]
    )
    out: list[RenderableType] = ["latency, ms (p50 / p90 / p99)", terminal.indented(table)]
    if any(r.latency_source == "summary" for r in verdict.runs):
        out.append("  * the tool's own percentiles, from its summary (n/a where it gives none)")
    if any(cells["ttft_s"].endswith(BATCH_MARK) for _, cells in rows):
        out.append(f"  {BATCH_TTFT}")
    return [*out, ""]


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
    return rate_cell(r) or ("?" if r.concurrency is None else f"{r.concurrency:g}")
