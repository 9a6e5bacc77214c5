"""A streamed audit: a Parquet trace larger than memory, read a batch and then a run at a time.

`benchreport audit --stream trace.parquet` (chosen by itself above `STREAM_ABOVE_ROWS` request
rows) never holds the whole request table:

1. One pass over the rows in batches of `BATCH_ROWS` checks every request row as the
   in-memory reader does (reporter.parquet: the native schema's checks, each bad row named at
   its original `path:line`) and keeps the run, claim, probe and log records and each run's
   row count.
2. Then each run's rows are read alone (a filter on `run`, which the row groups' statistics
   prune when the file is grouped by run, as `convert` writes it) and go through the same
   integrity checks (a request id twice in its run, times out of order or not finite) and the
   same code that computes each run's figures, latency percentiles and first request.
3. The rules read a run's rows through `Tables.rows_of` / `AuditData.requests_of`, which read
   them again from the file (the last run read is kept).

So every figure and verdict is the in-memory audit's, exactly: no figure is sketched. Memory
grows with the largest run's rows, not with the trace (a trace of 10^8 requests in runs of
10^6 is audited in the memory of 10^6). A single run too large for memory is the limit of
this path; its per-run reductions (reporter.stream.aggregates, with medians sketched within
1%) and the SQL of reporter/sql run without it.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from reporter import parquet
from reporter.errors import MAX_SHOWN_PROBLEMS, Problem, TraceError
from reporter.ingest.integrity import duplicate_requests, time_order
from reporter.ingest.validate import bad_request_rows
from reporter.latency import latency_table
from reporter.metrics import request_aggregates
from reporter.table import InputFile, Partial, Tables, build, empty_requests
from reporter.types import PathLike

#: Rows read at a time in the first pass.
BATCH_ROWS = 1 << 16
#: Above this many rows, `audit` streams a Parquet input by itself (about 1 GB held in memory
#: by the in-memory audit of a trace without chunk times).
STREAM_ABOVE_ROWS = 2_000_000
#: Columns a rule never reads per run (reporter.auditdata.AuditData._HEAVY).
HEAVY = ("id", "error", "token_times")


def row_count(path: PathLike) -> int:
    """Rows of a Parquet file or folder, from the files' footers (nothing else is read)."""
    return int(parquet.dataset(path).count_rows())


class ParquetRowStore:
    """The request rows of a Parquet trace, read a run at a time (reporter.table.RowStore)."""

    def __init__(self, path: PathLike, lenient: bool) -> None:
        self.where = str(path)
        self.dataset = parquet.dataset(path, pre_buffer=False)
        parquet.check_schema(self.where, self.dataset.schema)
        self.lenient = lenient
        self.numbered = "source_line" in self.dataset.schema.names
        self.request_count = 0
        self.request_aggregates = pd.DataFrame()
        self.first_requests = empty_requests()
        self.latencies = pd.DataFrame()
        self.largest_run = 0
        #: runs whose rows the second pass kept whole (no row refused)
        self.clean: set[str] = set()
        #: the last run read, whole and slim: rules read one run's rows many times
        self._cache: dict[bool, tuple[str, pd.DataFrame]] = {}

    def _read(self, run: str) -> pd.DataFrame:
        """One run's valid rows, normalized, with the integrity masks of its rows."""
        table = self.dataset.to_table(filter=ds.field("run") == run, use_threads=False)
        if not self.numbered:
            raise TraceError(
                [Problem(self.where, None, "a streamed audit needs a source_line column")]
            )
        requests, _ = parquet.split_kinds(table)
        frame = parquet.request_frame(requests, self.where)
        del table, requests
        # rows the first pass refused (with --lenient, counted there) are left out again
        frame = frame.loc[~bad_request_rows(frame)].reset_index(drop=True)
        return parquet.normalized(frame)

    def checked(self, run: str) -> tuple[pd.DataFrame, list[Problem], dict[str, int]]:
        """One run's rows after the integrity checks: the rows kept, the problems worded and
        the count of rows refused per reason."""
        rows = self._read(run)
        duplicates = duplicate_requests(rows)
        found = [duplicates, *time_order(rows, duplicates.mask)]
        found = [f for f in found if f.mask.any()]
        reasons: dict[str, int] = {}
        bad = np.zeros(len(rows), dtype=bool)
        for f in found:
            reasons[f.reason] = reasons.get(f.reason, 0) + int(f.mask.sum())
            bad |= f.mask
        if bad.any():
            rows = rows.loc[~bad].reset_index(drop=True)
        return rows, [p for f in found for p in f.problems], reasons

    def _clean_rows(self, run: str, slim: bool) -> pd.DataFrame:
        """The rows of a run the second pass kept whole: read again without the checks, and
        for a rule (`slim`) without the ids and chunk times (their count kept)."""
        names = self.dataset.schema.names
        columns = [c for c in names if not (slim and c == "id")]
        table = self.dataset.to_table(
            columns=columns, filter=ds.field("run") == run, use_threads=False
        )
        if slim and "token_times" in names:
            counted = pc.cast(pc.list_value_length(table.column("token_times")), pa.float64())
            if "n_chunks" in names:
                counted = pc.coalesce(counted, pc.cast(table.column("n_chunks"), pa.float64()))
                table = table.drop_columns(["n_chunks"])
            table = table.drop_columns(["token_times"]).append_column("n_chunks", counted)
        requests, _ = parquet.split_kinds(table)
        del table
        rows = parquet.normalized(parquet.request_frame(requests, self.where))
        return rows.drop(columns=[c for c in HEAVY if c in rows.columns]) if slim else rows

    def _rows(self, run: str, slim: bool) -> pd.DataFrame:
        cached = self._cache.get(slim)
        if cached is not None and cached[0] == run:
            return cached[1]
        self._cache.pop(slim, None)  # the previous run's rows go before the next are read
        if run in self.clean:
            rows = self._clean_rows(run, slim)
        else:
            rows, _, _ = self.checked(run)
            if slim:
                rows = rows.drop(columns=[c for c in HEAVY if c in rows.columns])
        self._cache[slim] = (run, rows)
        return rows

    def rows_of(self, runs: Sequence[str]) -> pd.DataFrame:
        frames = [self._rows(str(r), slim=False) for r in runs]
        frames = [f for f in frames if len(f)]
        if not frames:
            return empty_requests()
        if len(frames) == 1:
            return frames[0]
        joined = pd.concat(frames, ignore_index=True)
        joined["run"] = joined["run"].astype(str).astype("category")
        return joined

    def slim_rows_of(self, run: str) -> pd.DataFrame:
        return self._rows(run, slim=True)


def _first_pass(
    store: ParquetRowStore, partial: Partial, lenient: bool
) -> tuple[list[str], int, set[str]]:
    """Every row checked a batch at a time: the run ids in order of first appearance, how many
    rows were refused (worded into a TraceError unless lenient), and where rows came from."""
    problems: list[Problem] = []
    refused = 0
    runs: dict[str, None] = {}
    origins: set[str] = set()
    others_all: list[tuple[str, int, dict[str, object]]] = []
    offset = 0
    for batch in store.dataset.to_batches(
        batch_size=BATCH_ROWS, use_threads=False, batch_readahead=1, fragment_readahead=1
    ):
        table = pa.Table.from_batches([batch])
        if not store.numbered:
            numbers = np.arange(offset + 1, offset + table.num_rows + 1)
            table = table.append_column("source_line", pa.array(numbers))
        offset += table.num_rows
        requests, others_table = parquet.split_kinds(table)
        worded: list[Problem] = []
        others, bad_others = parquet.parse_others(others_table, store.where, worded)
        others_all.extend(others)
        frame = parquet.request_frame(requests, store.where)
        kept, bad_requests = parquet.kept_requests(frame, store.where, worded)
        refused += bad_others + bad_requests
        if len(problems) < 5 * MAX_SHOWN_PROBLEMS:
            problems.extend(worded)
        for run in pd.unique(kept["run"].astype(str)):
            runs.setdefault(str(run), None)
        origins.update(str(p) for p in pd.unique(kept["source_path"]))
        store.request_count += len(kept)
    if refused and not lenient:
        raise TraceError(sorted(problems, key=lambda p: p.line or 0), total=refused)
    parquet.tabulate_others(partial, others_all)
    origins.update(o for o, _, _ in others_all)
    partial.input = InputFile(
        path=store.where,
        digest=parquet.digest(store.where),
        format=parquet.FORMAT,
        records=store.request_count + len(others_all),
        skipped=refused,
        skipped_reasons=[f"invalid record: {refused}"] if refused else [],
        notes=parquet.notes(store.where, origins),
    )
    return list(runs), refused, origins


def bounded_allocation() -> None:
    """Allocate so that the address space stays near the memory in use: pyarrow's default
    pool (mimalloc) and glibc's per-thread arenas reserve far more address space than they
    fill, which a memory cap (RLIMIT_AS, a container's limit on virtual memory) counts.
    The system allocator with two arenas costs a little speed, not memory."""
    pass
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.mallopt(M_ARENA_MAX, 2)
    except (OSError, AttributeError):  # not glibc: its arenas are not ours to bound
        pass


#: glibc's mallopt() parameter for the number of malloc arenas.
M_ARENA_MAX = -8


def load_streamed(path: PathLike, *, lenient: bool = False, group_by: str = "settings") -> Tables:
    """The canonical tables of a Parquet trace, its request rows left in the file (see the
    module's docstring); refuses bad rows as `api.load` does."""
    from reporter.ingest.integrity import check_partial

    bounded_allocation()
    store = ParquetRowStore(path, lenient)
    if not store.numbered:
        raise TraceError(
            [
                Problem(
                    str(path),
                    None,
                    "no source_line column: a streamed audit cites rows by their original line",
                    "a Parquet written by `benchreport convert`, or the in-memory audit",
                )
            ]
        )
    partial = Partial()
    run_ids, _, _ = _first_pass(store, partial, lenient)
    # second pass: a run at a time, the integrity checks and the run's figures
    problems: list[Problem] = []
    reasons: dict[str, int] = {}
    aggregates, latencies, firsts, earliest = [], [], [], []
    for run in run_ids:
        rows, worded, refused = store.checked(run)
        problems.extend(worded)
        for reason, n in refused.items():
            reasons[reason] = reasons.get(reason, 0) + n
        if not refused:
            store.clean.add(run)
        store.largest_run = max(store.largest_run, len(rows))
        if not len(rows):
            continue
        aggregates.append(request_aggregates(rows))
        latencies.append(latency_table(rows))
        # one row each, copied: a slice would keep the whole run's columns alive
        firsts.append(_one_row(rows, 0, FIRST_COLUMNS))
        earliest.append(_one_row(rows, int(np.argmin(rows["source_line"].to_numpy())), EARLIEST))
        del rows
    store.request_count -= sum(reasons.values())
    # the run records' own checks (a run defined twice, a summary figure below zero)
    try:
        check_partial(partial, lenient=lenient)
    except TraceError as exc:
        if not problems:
            raise
        problems = [*exc.problems, *problems]
        refused_runs = exc.count
    else:
        refused_runs = 0
    total = refused_runs + sum(reasons.values())
    if problems and not lenient:
        raise TraceError(sorted(problems, key=lambda p: p.line or 0), total=total)
    assert partial.input is not None
    if reasons:
        partial.input.skipped += sum(reasons.values())
        partial.input.skipped_reasons += [f"{k}: {v}" for k, v in reasons.items()]
    # each run's earliest row stands in for its rows where the tables are joined (a run
    # without a run record gets one, named from that row)
    partial.requests = _joined(earliest)
    tables = build([partial], group_by)
    store.request_aggregates = pd.concat(aggregates) if aggregates else pd.DataFrame()
    store.latencies = pd.concat(latencies) if latencies else pd.DataFrame()
    store.first_requests = _joined(firsts)
    store._cache.clear()
    tables.requests = empty_requests()
    tables.store = store
    partial.input.notes.append(
        f"streamed: {store.request_count:,} request rows read in batches of {BATCH_ROWS:,}, "
        f"then a run at a time (the largest run: {store.largest_run:,} rows); every figure "
        "exact, none sketched"
    )
    return tables


#: What is read of each run's first row (reporter.metrics: a lone request's prefill rate) and
#: of its earliest line (reporter.table: a run without a run record is named from it).
FIRST_COLUMNS = ("run", "prompt_tokens", "ttft")
EARLIEST = ("run", "source_path", "source_line")


def _one_row(rows: pd.DataFrame, position: int, columns: tuple[str, ...]) -> pd.DataFrame:
    return pd.DataFrame({c: [rows[c].iloc[position]] for c in columns})


def _joined(frames: list[pd.DataFrame]) -> pd.DataFrame:
    if not frames:
        return empty_requests()
    joined = pd.concat(frames, ignore_index=True)
    for column in ("run", "source_path"):
        if column in joined:
            joined[column] = joined[column].astype(str).astype("category")
    return joined


def should_stream(paths: Sequence[PathLike]) -> bool:
    """Whether `audit` streams by itself: one Parquet input above STREAM_ABOVE_ROWS rows."""
    if len(paths) != 1 or not parquet.is_parquet(paths[0]):
        return False
    return row_count(Path(paths[0])) > STREAM_ABOVE_ROWS
