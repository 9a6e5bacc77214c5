"""`benchreport audit FILE...` and `benchreport validate FILE...`."""

from __future__ import annotations

import shlex
import sys

import click

from reporter.cli.errors import ExitCode
from reporter.cli.options import OUTPUT_FORMATS, config_option, input_options, json_option
from reporter.errors import UsageError
from reporter.numbers import counted
from reporter.safetext import echo, echo_json


@click.command(short_help="Audit trace files and print the verdict.")
@click.argument("files", nargs=-1, required=True, type=click.Path())  # a folder: Parquet parts
@click.option(
    "-o",
    "--output",
    "html_out",
    type=click.Path(dir_okay=False),
    help="Write the HTML report here (the default when no other output is named).",
)
@click.option("--pdf", "pdf_out", type=click.Path(dir_okay=False), help="Write a PDF report.")
@click.option("--md", "md_out", type=click.Path(dir_okay=False), help="Write a Markdown summary.")
@json_option("the verdict")
@click.option(
    "--json-series",
    is_flag=True,
    help="Put the per-run chart data (request timelines, completions) in the JSON verdict.",
)
@click.option(
    "--csv", "csv_out", type=click.Path(dir_okay=False), help="Write the run table as CSV."
)
@click.option(
    "--badge",
    "badge_out",
    type=click.Path(dir_okay=False),
    help='Write an SVG badge of the verdict ("audit | inflated 3.85×").',
)
@click.option(
    "--card",
    "card_out",
    type=click.Path(dir_okay=False),
    help="Write an HTML fragment for a blog post: the verdict, the claims, the three "
    "questions and a scaling chart.",
)
@click.option(
    "--output-format",
    type=click.Choice(OUTPUT_FORMATS),
    default="text",
    show_default=True,
    help="What is printed: the summary (text), each fired finding as a GitHub annotation on "
    "the trace line it cites (github), or as path:line: CODE message (concise).",
)
@input_options
@click.option(
    "--claim",
    "claim_texts",
    multiple=True,
    help='A published figure to check (repeatable): "aggregate=350 tok/s N=4 method=sum", '
    '"aggregate=4703.28 tok/s N=1 run=pp512", "stream=45 tok/s run=n1", '
    '"scaling=3.5x N=8 group=sweep", "speedup=2.65 runs=A,B id=fig3".',
)
@click.option(
    "--server-log",
    "server_logs",
    multiple=True,
    type=click.Path(dir_okay=False),
    help="An engine's log, searched for refused features.",
)
@click.option(
    "--group-by",
    type=click.Choice(["settings", "file", "run"]),
    default="settings",
    show_default=True,
    help="How runs form sweeps: runs of any file sharing every setting (model, engine, "
    "hardware, workload) and differing only in concurrency or request rate; only runs "
    "of one file; or every run alone.",
)
@click.option("--select", "select_", multiple=True, help="Only rules with these code prefixes.")
@click.option("--ignore", multiple=True, help="Skip rules with these code prefixes.")
@click.option(
    "--fail-on",
    type=click.Choice(["error", "warning", "info", "never"]),
    default="error",
    show_default=True,
    help="Exit 1 when a finding of this severity or worse fired.",
)
@click.option("--lenient", is_flag=True, help="Audit the good lines; count and skip the bad ones.")
@config_option
@click.option("--no-html", is_flag=True, help="Write no HTML report unless -o is given.")
@click.option(
    "--stream/--no-stream",
    default=None,
    help="Read one Parquet trace (file or folder) in batches and a run at a time, in memory "
    "that grows with the largest run, not the trace; chosen by itself above 2,000,000 rows.",
)
@click.option("-v", "--verbose", is_flag=True, help="List every undecidable check.")
def audit(
    files: tuple[str, ...],
    html_out: str | None,
    pdf_out: str | None,
    md_out: str | None,
    json_out: str | None,
    json_series: bool,
    csv_out: str | None,
    badge_out: str | None,
    card_out: str | None,
    output_format: str,
    fmt: str,
    mapping: str | None,
    claim_texts: tuple[str, ...],
    server_logs: tuple[str, ...],
    group_by: str,
    select_: tuple[str, ...],
    ignore: tuple[str, ...],
    fail_on: str,
    lenient: bool,
    config_path: str | None,
    no_html: bool,
    stream: bool | None,
    verbose: bool,
) -> None:
    """Audit FILE... and print the verdict (an HTML report is written by default).

    \b
    Examples:
      benchreport audit results.jsonl                      # report.html and the summary
      benchreport audit bench.json --claim "aggregate=350 tok/s N=4 method=sum"
      benchreport audit results.jsonl --no-html --json verdict.json --fail-on error   # CI
      benchreport audit results.jsonl --json - --fail-on never | jq .verdict

    \b
    Exit codes:
      0  audited; no finding at or above --fail-on fired
      1  audited; a finding at or above --fail-on fired
      2  could not audit: bad input or options, or an internal error
         (one line naming the file; --debug prints the traceback)
    130  interrupted
    """
    if json_out == "-" and output_format != "text":
        raise UsageError(
            f"--json - and --output-format {output_format} both print to stdout; "
            "expected one of them, or --json FILE"
        )
    default_html = not (
        no_html or pdf_out or md_out or json_out or csv_out or badge_out or card_out
    )
    # api.prepare_outputs, before pandas and pyarrow are imported here: the chart helpers
    # start on the core the import leaves idle
    from reporter.render import drawing

    drawing.prepare(html=html_out, pdf=pdf_out, default_html=default_html)
    from reporter import api, rules, terminal
    from reporter.render.text import summary

    options = {"mapping": mapping} if mapping else None
    verdict = api.audit(
        list(files),
        fmt=fmt,
        select=select_,
        ignore=ignore,
        claim_texts=claim_texts,
        lenient=lenient,
        config=rules.load_config(config_path),
        server_logs=server_logs,
        options=options,
        group_by=group_by,
        stream=stream,
    )
    api.begin_outputs(verdict)  # the charts are made while the summary is printed
    for inp in verdict.inputs:
        if inp.skipped:
            echo(
                f"{inp.path}: skipped {counted(inp.skipped, 'bad line')} "
                f"({'; '.join(inp.skipped_reasons)})",
                err=True,
                layout=False,
            )
        for note in inp.left_out:
            echo(f"{inp.path}: {note}", err=True, layout=False)
    if json_out == "-":
        from reporter.render.json import render_json

        echo_json(render_json(verdict, include_series=json_series), nl=False)
    elif output_format != "text":
        from reporter.render.annotations import render_findings

        echo(render_findings(verdict, output_format), nl=False)
    else:
        terminal.show(summary(verdict, verbose=verbose))
    command = "benchreport audit " + shlex.join(sys.argv[2:]) if len(sys.argv) > 2 else None
    written = api.render_outputs(
        verdict,
        html=html_out,
        pdf=pdf_out,
        md=md_out,
        json=None if json_out == "-" else json_out,
        default_html=default_html,
        command=command,
        csv=csv_out,
        badge=badge_out,
        card=card_out,
        json_series=json_series,
    )
    for path in written:
        echo(f"wrote {path}", err=True, layout=False)
    if fail_on != "never" and verdict.reaches(fail_on):
        sys.exit(ExitCode.FINDINGS)


@click.command(short_help="Check files against the schema, each problem with its line.")
@click.argument("files", nargs=-1, required=True, type=click.Path())  # a folder: Parquet parts
@input_options
def validate(files: tuple[str, ...], fmt: str, mapping: str | None) -> None:
    """Check FILE... against the schema; every problem with its file:line."""
    from reporter import api

    partials = api.validate(list(files), fmt, options={"mapping": mapping} if mapping else None)
    for p in partials:
        assert p.input is not None
        echo(
            f"{p.input.path}: ok ({p.input.records} records, format {p.input.format})",
            layout=False,
        )
