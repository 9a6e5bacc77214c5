"""The library API: each command of the CLI is one call here."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reporter import adapters, claims, metrics, rules
from reporter.auditdata import AuditData
from reporter.config import Config
from reporter.errors import MAX_SHOWN_PROBLEMS, TraceError, UsageError
from reporter.facts import audit_data
from reporter.ingest.integrity import check_partial
from reporter.ingest.lines import Source
from reporter.table import Partial, Tables, build
from reporter.types import PathLike
from reporter.verdict import Verdict, build_verdict

if TYPE_CHECKING:
    from reporter import compare as compare_


def read_file(
    path: PathLike,
    fmt: str = "auto",
    *,
    lenient: bool = False,
    options: dict[str, Any] | None = None,
) -> Partial:
    """One file through its adapter (detected, or named by `fmt`); a Parquet file or folder
    through reporter.parquet."""
    from reporter import parquet

    if fmt in ("auto", parquet.FORMAT, parquet.NAME) and parquet.is_parquet(path):
        partial_: Partial = parquet.read(path, lenient=lenient)
        check_partial(partial_, lenient=lenient)
        return partial_
    source, skipped = adapters.without_leading_log(Source.read(os.fspath(path)))
    module = adapters.detect(source) if fmt == "auto" else adapters.get(fmt)
    if not getattr(module, "HASHES_AFTER_PARSE", False):
        source.hash_in_background()
    partial: Partial = module.read(source, lenient=lenient, **(options or {}))
    if skipped is not None and partial.input is not None:
        partial.input.notes.insert(0, skipped)
    # what no adapter can see alone: repeated runs and requests, impossible times
    check_partial(partial, lenient=lenient)
    return partial


def read_files(
    paths: Sequence[PathLike],
    fmt: str = "auto",
    *,
    lenient: bool = False,
    options: dict[str, Any] | None = None,
) -> list[Partial]:
    """Read every file; all files' problems are gathered before raising."""
    if not paths:
        raise UsageError("no input files; expected one or more trace files")
    partials: list[Partial] = []
    problems = []
    total = 0
    for path in paths:
        try:
            partials.append(read_file(path, fmt, lenient=lenient, options=options))
        except TraceError as exc:
            problems.extend(exc.problems[:MAX_SHOWN_PROBLEMS])
            total += exc.count
    if problems:
        raise TraceError(problems, total=total)
    adapters.join(partials)
    return partials


def load(
    paths: Sequence[PathLike],
    fmt: str = "auto",
    *,
    lenient: bool = False,
    options: dict[str, Any] | None = None,
    group_by: str = "settings",
) -> Tables:
    """The canonical tables of every file (see `read_files`); runs grouped into sweeps by
    `group_by` (reporter.grouping: settings, file or run)."""
    return build(read_files(paths, fmt, lenient=lenient, options=options), group_by)


def validate(
    paths: Sequence[PathLike], fmt: str = "auto", *, options: dict[str, Any] | None = None
) -> list[Partial]:
    """Schema check only: raises TraceError with every problem of every file."""
    return read_files(paths, fmt, options=options)


def audit(
    paths: Sequence[PathLike],
    *,
    fmt: str = "auto",
    select: Sequence[str] = (),
    ignore: Sequence[str] = (),
    claim_texts: Sequence[str] = (),
    lenient: bool = False,
    config: Config | None = None,
    server_logs: Sequence[PathLike] = (),
    options: dict[str, Any] | None = None,
    group_by: str = "settings",
    stream: bool | None = None,
) -> Verdict:
    """Read, recompute, run the rules, and return the verdict.

    `stream`: read one Parquet trace in batches and a run at a time (reporter.stream.audit),
    for traces larger than memory; None streams by itself above its size threshold."""
    from reporter.grouping import GROUP_BY

    if group_by not in GROUP_BY:
        raise UsageError(f"group_by {group_by!r}; expected one of {', '.join(GROUP_BY)}")
    chosen = rules.select(select, ignore)
    extra_claims = [claims.parse_claim_option(t, i + 1) for i, t in enumerate(claim_texts)]
    from reporter import parquet

    one_parquet = len(paths) == 1 and parquet.is_parquet(paths[0])
    if stream is None:
        stream = fmt == "auto" and one_parquet and _streams_by_itself(paths[0])
    if stream:
        from reporter.stream import audit as streamed

        if not one_parquet:
            raise UsageError(
                "a streamed audit reads one Parquet file or folder; expected "
                "`benchreport convert FILE --to trace.parquet` first"
            )
        tables = streamed.load_streamed(paths[0], lenient=lenient, group_by=group_by)
    else:
        tables = load(paths, fmt, lenient=lenient, options=options, group_by=group_by)
    if extra_claims:
        import pandas as pd

        tables.claims = pd.concat([tables.claims, pd.DataFrame(extra_claims)], ignore_index=True)
    for log in server_logs:
        from reporter.serverlog import read_server_log

        tables.logs = read_server_log(Path(log), tables)
    return audit_tables(tables, rules_chosen=chosen, config=config)


def _streams_by_itself(path: PathLike) -> bool:
    """Whether a Parquet input is large enough to stream (the streaming reader is imported
    only for Parquet input: pyarrow.dataset and pyarrow.parquet take 25–30 ms to import)."""
    from reporter.stream import audit as streamed

    return streamed.should_stream([path])


def analyse(tables: Tables, config: Config | None = None) -> AuditData:
    """What the rules read: each run's figures, the claims recomputed and the facts of every
    run and sweep (reporter.facts), computed once from the tables."""
    stats = metrics.run_stats(tables)
    config = config or Config()
    checks = claims.evaluate(tables, stats, config[claims.CLAIM_TOLERANCE])
    return audit_data(tables, stats, config, checks)


def audit_tables(
    tables: Tables, *, rules_chosen: list[rules.Rule] | None = None, config: Config | None = None
) -> Verdict:
    """The audit of tables already built (adapters and tests start here)."""
    chosen = rules_chosen if rules_chosen is not None else rules.select()
    data = analyse(tables, config)
    findings = rules.run_rules(data, chosen)
    return build_verdict(data, data.claim_checks, findings, [r.page() for r in chosen])


def compare(
    run_a: str,
    run_b: str,
    traces: Sequence[PathLike] = (),
    *,
    fmt: str = "auto",
    config: Config | None = None,
) -> compare_.Comparison:
    """Why the aggregates of two runs differ, factor by factor (`benchreport compare`).

    A and B are run ids in `traces`, or `FILE:RUN` (the file is then read too). `config` is
    the audit's: its `comparable_length_tolerance` is the one BR012 decides by.
    """
    from reporter import compare as compare_

    files = [os.fspath(t) for t in traces]
    for name in (run_a, run_b):
        path, _ = compare_.split_name(name)
        if path is not None and path not in files:
            files.append(path)
    if not files:
        raise UsageError("no trace file: name the runs as FILE:RUN, or pass --trace FILE")
    tables = load(files, fmt)
    a = compare_.resolve(tables.runs, run_a)
    b = compare_.resolve(tables.runs, run_b)
    if a == b:
        raise UsageError(f"A and B are the same run ({a}); expected two runs")
    tolerance = (config or Config())[compare_.LENGTH_TOLERANCE]
    return compare_.compare(tables.runs, metrics.run_stats(tables), a, b, tolerance=tolerance)


#: Where the HTML report goes when no output is named (the current directory).
DEFAULT_HTML = "report.html"


def prepare_outputs(
    *, html: str | None = None, pdf: str | None = None, default_html: bool = False
) -> None:
    """Before `audit`: when the report will be drawn, start the processes that draw its
    charts, so that their JavaScript engines start while the audit runs
    (reporter.render.drawing). Without it, `render_outputs` draws the charts in process."""
    from reporter.render import drawing

    drawing.prepare(html=html, pdf=pdf, default_html=default_html)


def begin_outputs(verdict: Verdict) -> None:
    """After `audit`, before `render_outputs`: hand the verdict to the chart helpers started
    by `prepare_outputs`, so that they make the charts while the caller prints its summary.
    Nothing when no helper runs."""
    from reporter.render import drawing

    drawing.send(verdict)


def render_outputs(
    verdict: Verdict,
    *,
    html: str | None = None,
    pdf: str | None = None,
    md: str | None = None,
    json: str | None = None,
    default_html: bool = False,
    command: str | None = None,
    csv: str | None = None,
    badge: str | None = None,
    card: str | None = None,
    json_series: bool = False,
) -> list[str]:
    """Write the requested documents; returns the paths written. `json_series` puts the
    per-run chart data in the JSON verdict too (schemas/verdict-2.schema.json, `series`).

    `csv` is the run table (reporter.render.runs_csv); `badge` an SVG of the verdict and
    `card` an HTML fragment for a blog post (reporter.render.badge, reporter.render.card).
    """
    from reporter.render.json import render_json

    written = []
    if json:
        _write(json, render_json(verdict, include_series=json_series))
        written.append(json)
    if default_html and not html:
        html = DEFAULT_HTML
    if html or pdf:
        from reporter.render.html import render_html

        page = render_html(verdict, command)
        from reporter.render import drawing

        drawing.stop()  # the charts are drawn: free the helpers' cores for the PDF
        if html:
            _write(html, page)
            written.append(html)
        if pdf:
            from reporter.render.pdf import html_to_pdf

            _write(pdf, html_to_pdf(page))
            written.append(pdf)
    if md:
        from reporter.render.markdown import render_markdown

        _write(md, render_markdown(verdict, command))
        written.append(md)
    if csv:
        from reporter.render.runs_csv import render_csv

        _write(csv, render_csv(verdict), newline="")
        written.append(csv)
    if badge:
        from reporter.render.badge import render_badge

        _write(badge, render_badge(verdict))
        written.append(badge)
    if card:
        from reporter.render.card import render_card

        _write(card, render_card(verdict))
        written.append(card)
    return written


def _write(path: str, text: str | bytes, *, newline: str | None = None) -> None:
    """Write a document; `newline=""` keeps the text's own line ends (CSV's CRLF)."""
    from reporter.errors import RenderError

    try:
        if isinstance(text, bytes):
            Path(path).write_bytes(text)
        else:
            Path(path).write_text(text, encoding="utf-8", newline=newline)
    except OSError as exc:
        raise RenderError(f"{path}: cannot write: {exc.strerror}") from None


def convert_file(
    path: PathLike,
    out: str,
    fmt: str = "auto",
    *,
    lenient: bool = False,
    options: dict[str, Any] | None = None,
) -> tuple[Tables, int]:
    """Read one file through its adapter and write it as a native trace to `out`: JSON Lines
    (reporter.convert), or Parquet when `out` ends in `.parquet` (reporter.parquet).
    Returns the tables and the number of records written."""
    tables = load([path], fmt, lenient=lenient, options=options)
    if out.lower().endswith(".parquet"):
        from reporter import parquet

        return tables, parquet.write(tables, out)
    from reporter import convert

    return tables, convert.write(tables, out)
