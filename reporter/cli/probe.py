"""`benchreport probe bandwidth`: read-stream memory bandwidth at several buffer sizes."""

from __future__ import annotations

import click

from reporter import probe, terminal
from reporter.errors import UsageError
from reporter.numbers import counted, fmt
from reporter.safetext import echo
from reporter.terminal import Column


@click.group(name="probe", short_help="Measure the machine's memory bandwidth (for BR015).")
def probe_cmd() -> None:
    """Measure the machine (memory bandwidth) for the bandwidth-ceiling rule, BR015."""


def _size(text: str | None, option: str) -> int | None:
    if text is None:
        return None
    try:
        return probe.parse_size(text)
    except UsageError as exc:
        raise UsageError(f"{option}: {exc}") from None


@probe_cmd.command(name="bandwidth", short_help="Print the read bandwidth at growing buffer sizes.")
@click.option(
    "--max-bytes",
    "max_text",
    metavar="SIZE",
    help="Largest buffer (e.g. 8GiB). Default: --fraction of the memory available.",
)
@click.option(
    "--min-bytes",
    "min_text",
    metavar="SIZE",
    default="64MiB",
    show_default=True,
    help="Smallest buffer; sizes double from it.",
)
@click.option(
    "--fraction",
    type=float,
    default=probe.DEFAULT_FRACTION,
    show_default=True,
    help="Share of the available memory (MemAvailable) the largest buffer may take.",
)
@click.option(
    "--passes",
    type=int,
    default=5,
    show_default=True,
    help="Passes over each buffer; the best one counts.",
)
@click.option("--threads", type=int, default=None, help="Reader threads (default: one per CPU).")
@click.option(
    "-o",
    "--output",
    "--out",
    "out",
    type=click.Path(dir_okay=False),
    help="Write the results as probe records (JSON Lines) to this file.",
)
@click.option(
    "--append", is_flag=True, help="Append to --out (e.g. a trace) instead of replacing it."
)
@click.option("--run", "run_id", help="Attach the probe records to this run id.")
def bandwidth_cmd(
    max_text: str | None,
    min_text: str,
    fraction: float,
    passes: int,
    threads: int | None,
    out: str | None,
    append: bool,
    run_id: str | None,
) -> None:
    """Stream through buffers of growing size and print the read bandwidth of each.

    The model's working set decides which row bounds decode: compare a decode rate ×
    bytes per token with the row at (or above) the model's size, not the first row and not
    the data sheet. With --out, the rows become `probe` records that `benchreport audit`
    reads (add `model.working_set_bytes` to the run records).
    """
    # errors: exit 2 with their message (reporter.cli.errors)
    results = _measure(max_text, min_text, fraction, passes, threads)
    if out:
        probe.write_records(out, results, run_id=run_id, append=append)
        echo(f"wrote {counted(len(results), 'probe record')} to {out}", err=True, layout=False)


#: The columns of the bandwidth table, of fixed widths (rows are printed as they come).
BUFFER_COLUMNS = (
    Column("buffer", "right", width=10),
    Column("GB/s", "right", width=8),
    Column("vs smallest", "right", width=11),
)


def _measure(
    max_text: str | None, min_text: str, fraction: float, passes: int, threads: int | None
) -> list[probe.ProbeResult]:
    max_bytes = _size(max_text, "--max-bytes")
    min_bytes = _size(min_text, "--min-bytes") or probe.MIN_BYTES
    if threads is not None and threads < 1:
        raise UsageError(f"--threads {threads}: expected at least 1")
    results: list[probe.ProbeResult] = []
    first: float | None = None
    for result in probe.run_probe(
        max_bytes, min_bytes=min_bytes, fraction=fraction, passes=passes, threads=threads
    ):
        if first is None:
            echo(
                f"read-stream bandwidth ({probe.METHOD}; {counted(result.threads, 'thread')}, "
                f"best of {result.passes})"
            )
            first = result.gbps
        change = result.gbps / first - 1
        row = [
            probe.size_text(result.buffer_bytes),
            fmt(result.gbps),
            f"{change:+.0%}" if results else "",
        ]
        # one row at a time, as each buffer is measured: fixed widths keep the rows aligned
        terminal.show([terminal.table(BUFFER_COLUMNS, [row], header=not results)])
        results.append(result)
    return results
