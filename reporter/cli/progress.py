"""What `benchreport record` shows while it records and when it is done."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from reporter import terminal
from reporter.numbers import fmt, num
from reporter.recorder.client import RequestState
from reporter.recorder.run import Observer, RecordResult, RunResult
from reporter.safetext import visible
from reporter.terminal import Column

if TYPE_CHECKING:
    from rich.console import RenderableType


class Progress(Observer):
    """A rich progress bar on stderr when it is a terminal, one line per run otherwise."""

    def __init__(self, quiet: bool) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        self.console = Console(stderr=True, highlight=False)
        self.quiet = quiet
        self.live = self.console.is_terminal and not quiet
        self.progress = Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[tokens]} tok"), TimeElapsedColumn(),
            console=self.console, transient=False, disable=not self.live, refresh_per_second=4,
        )  # fmt: skip
        self.tasks: dict[str, Any] = {}
        self.tokens: dict[str, int] = {}

    def __enter__(self) -> Progress:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def sweep_started(self, runs: list[tuple[str, int]]) -> None:
        from rich.markup import escape

        for run_id, total in runs:
            self.tasks[run_id] = self.progress.add_task(
                escape(visible(run_id)), total=total, tokens=0, start=False
            )

    def run_started(self, run_id: str, total: int) -> None:
        if run_id in self.tasks:
            self.progress.start_task(self.tasks[run_id])

    def request_done(self, run_id: str, state: RequestState) -> None:
        self.tokens[run_id] = self.tokens.get(run_id, 0) + (state.output_tokens()[0] or 0)
        if run_id in self.tasks:
            self.progress.update(self.tasks[run_id], advance=1, tokens=self.tokens[run_id])

    def run_finished(self, result: RunResult) -> None:
        if not self.live and not self.quiet:
            self.console.print(
                visible(
                    f"{result.id}: {result.finished}/{result.sent} requests, "
                    f"{result.output_tokens} tokens, {fmt(result.aggregate_tps)} tok/s"
                ),
                markup=False,
            )

    def note(self, text: str) -> None:
        if not self.quiet:
            # notes quote what the server said: no markup, controls shown as escapes
            self.console.print(f"note: {visible(text)}", markup=False)


#: The columns of the summary printed at the end of a recording.
SUMMARY_COLUMNS = (
    Column("run", max_width=40),
    Column("N", "right"),
    Column("ok/sent", "right"),
    Column("tokens", "right"),
    Column("wall s", "right"),
    Column("tok/s", "right"),
    Column("TTFT p50", "right"),
    Column("forced", "right"),
    Column("lag p99", "right"),
    Column("CPU %", "right"),
)


def summary(result: RecordResult) -> list[RenderableType]:
    """The table printed at the end: total ÷ wall per run, and the checks that matter."""
    rows: list[list[str]] = []
    for r in result.runs:
        n = str(r.concurrency) if r.concurrency is not None else f"{r.rate:g}/s"
        forced = (
            "-"
            if r.forced_requested is None
            else "ok"
            if not r.not_honoured
            else f"{r.not_honoured} short"
        )
        h = r.health
        lag = num(h.loop_lag_p99_ms if h else None, 2, " ms")
        cpu = fmt(h.cpu_percent, 0) if h else "n/a"
        rows.append([
            r.id, n, f"{r.ok}/{r.sent}", str(r.output_tokens), fmt(r.wall_s, 2),
            fmt(r.aggregate_tps), num(r.ttft_p50_s, 3, " s"), forced, lag, cpu,
        ])  # fmt: skip
    columns: tuple[Column, ...] = SUMMARY_COLUMNS
    if any(r.interrupted for r in result.runs):
        columns = (*columns, Column("stopped"))
        for row, r in zip(rows, result.runs, strict=True):
            row.append("interrupted" if r.interrupted else "")
    out: list[RenderableType] = [
        terminal.table(columns, rows),
        "tok/s is total output tokens ÷ wall clock (first send to last end).",
    ]
    if result.dropped_params:
        dropped = ", ".join(result.dropped_params)
        out.append(f"refused by the server and dropped: {visible(dropped)}")
    return out
