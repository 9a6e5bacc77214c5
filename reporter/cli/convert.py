"""`benchreport convert FILE --to out.jsonl` (or out.parquet): any supported format → the native
trace."""

from __future__ import annotations

import click

from reporter.cli.options import input_options
from reporter.numbers import counted
from reporter.safetext import echo


@click.command(short_help="Convert another tool's results to a native trace.")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option(
    "-o",
    "--output",
    "--to",
    "out",
    required=True,
    type=click.Path(dir_okay=False),
    help="Write the native trace (schema benchreport/1) here: JSON Lines, or Parquet for a "
    "path ending in .parquet (which `audit` reads, also streamed).",
)
@input_options
@click.option("--lenient", is_flag=True, help="Convert the good records; count and skip the bad.")
def convert(file: str, out: str, fmt: str, mapping: str | None, lenient: bool) -> None:
    """Convert FILE (vLLM, SGLang, llama-bench, GuideLLM, AIPerf, GenAI-Perf, LLMPerf or a
    custom log) to benchreport's own trace format."""
    from reporter.api import convert_file

    options = {"mapping": mapping} if mapping else None
    # errors: exit 2 with their message (reporter.cli.errors)
    tables, count = convert_file(file, out, fmt, lenient=lenient, options=options)
    for inp in tables.inputs:
        if inp.skipped:
            echo(
                f"{inp.path}: skipped {counted(inp.skipped, 'bad record')} "
                f"({'; '.join(inp.skipped_reasons)})",
                err=True,
                layout=False,
            )
        for note in inp.notes:
            echo(f"{inp.path}: {note}", err=True, layout=False)
    fmt_read = tables.inputs[0].format if tables.inputs else fmt
    echo(
        f"wrote {out}: {counted(count, 'record')} ({counted(len(tables.runs), 'run')}, "
        f"{counted(len(tables.requests), 'request')}) from {file} ({fmt_read})",
        layout=False,
    )
