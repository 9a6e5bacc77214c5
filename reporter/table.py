"""The canonical tables every adapter produces and every rule reads.

Units are fixed: seconds for times, tokens for lengths, tokens per second for rates.
Every row keeps `source_path` and `source_line`, so a finding can point back to its line.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from reporter import runfields
from reporter.values import finite_number

#: Request columns as adapters deliver them (any subset; the rest is filled with nulls).
REQUEST_FLOATS = (
    "t_send",
    "t_first",
    "t_end",
    "prompt_tokens",
    "output_tokens",
    "reported_tps",
    "n_chunks",
    "chunk_tokens",
)
#: Request columns that count tokens or chunks: whole numbers at least 0, or unknown.
COUNT_COLUMNS = ("prompt_tokens", "output_tokens", "chunk_tokens", "n_chunks")
REQUEST_STRINGS = ("run", "id", "finish_reason", "prompt_sha256", "error", "source_path")
REQUEST_OBJECTS = ("token_times",)
REQUEST_COLUMNS = (*REQUEST_STRINGS[:2], *REQUEST_FLOATS, *REQUEST_STRINGS[2:], "source_line")

#: Run columns: the run record flattened (workload.*, model.*, ...) plus provenance, with
#: their dtypes; each is declared, with its place in the record, in reporter.runfields.
RUN_COLUMNS: dict[str, str] = runfields.RUN_COLUMNS

CLAIM_COLUMNS = (
    "claim",
    "metric",
    "value",
    "concurrency",
    "method",
    "run",
    "group",
    "runs",
    "source",
    "source_path",
    "source_line",
)
#: A probe's `origin` says where its figure comes from when no probe record of the file holds
#: it (an adapter reading a tool's own timing as one); None for a probe record.
PROBE_COLUMNS = (
    "what", "value", "unit", "buffer_bytes", "run", "source_path", "source_line", "origin",
)  # fmt: skip
LOG_COLUMNS = ("run", "level", "text", "t", "source_path", "source_line")


@dataclass
class InputFile:
    """One file that was read: what a reader needs to rerun the audit.

    `digest` is the file's sha256, or the worker thread working it out (Source's): the audit
    goes on while it does, and waits for it only where `sha256` is read.
    """

    path: str
    digest: str | Future[str]
    format: str
    records: int
    skipped: int = 0
    skipped_reasons: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def sha256(self) -> str:
        if not isinstance(self.digest, str):
            self.digest = self.digest.result()
        return self.digest


@dataclass
class Partial:
    """What one adapter made of one file, before the tables are joined."""

    requests: pd.DataFrame | None = None
    runs: list[dict[str, Any]] = field(default_factory=list)
    claims: list[dict[str, Any]] = field(default_factory=list)
    probes: list[dict[str, Any]] = field(default_factory=list)
    logs: list[dict[str, Any]] = field(default_factory=list)
    run_ends: list[dict[str, Any]] = field(default_factory=list)
    input: InputFile | None = None
    #: what a file states for runs read from other files (AIPerf's request inputs), for
    #: reporter.adapters.join
    context: dict[str, Any] = field(default_factory=dict)


@dataclass
class Tables:
    """The canonical tables of one audit."""

    requests: pd.DataFrame
    runs: pd.DataFrame
    claims: pd.DataFrame
    probes: pd.DataFrame
    logs: pd.DataFrame
    inputs: list[InputFile]
    #: Group name → why its runs were put together (the fields they share).
    group_reasons: dict[str, str] = field(default_factory=dict)
    #: Where the request rows are when they are not in `requests` (a streamed audit of a
    #: trace larger than memory, reporter.stream.audit): `requests` is then empty, and the
    #: rows are read a run at a time through the methods below.
    store: RowStore | None = None

    @cached_property
    def run_files(self) -> frozenset[str]:
        """The files that hold runs (set once the tables are built). A claim, probe or log
        record that names no run speaks for the runs of its own file (files audited together
        may come from several machines), or for every run when its file holds none (probes or
        claims alone, a --server-log)."""
        return frozenset(self.runs["source_path"].astype(str))

    def speaks_for(self, record_path: str, run_path: str) -> bool:
        """Whether a record of no run read from `record_path` is about a run of `run_path`
        (run_files)."""
        return record_path == run_path or record_path not in self.run_files

    def request_count(self) -> int:
        """How many request rows the trace has (in memory or in the store)."""
        return self.store.request_count if self.store is not None else len(self.requests)

    def rows_of(self, runs: Sequence[str]) -> pd.DataFrame:
        """Every column of the request rows of these runs, in table order."""
        if self.store is not None:
            return self.store.rows_of(runs)
        req = self.requests
        return req[req["run"].astype(str).isin(list(runs)).to_numpy(dtype=bool)]

    def first_requests(self) -> pd.DataFrame:
        """Each run's first request row (in table order)."""
        if self.store is not None:
            return self.store.first_requests
        run = self.requests["run"]
        if isinstance(run.dtype, pd.CategoricalDtype):
            # the first row of each code (a missing id is a value too, as drop_duplicates
            # keeps it), taken alone: not a filter over every column of every row
            _, first = np.unique(run.cat.codes.to_numpy(), return_index=True)
            return take_rows(self.requests, np.sort(first))
        return self.requests.drop_duplicates(subset="run", keep="first")

    def latencies(self) -> pd.DataFrame:
        """The latency percentiles of each run (reporter.latency.latency_table)."""
        if self.store is not None:
            return self.store.latencies
        from reporter.latency import latency_table

        return latency_table(self.requests)


def take_rows(frame: pd.DataFrame, rows: np.ndarray) -> pd.DataFrame:
    """`frame.iloc[rows]` for increasing `rows`; an Arrow column in several chunks (the chunk
    times, as pyarrow parsed them block by block) is taken chunk by chunk, since a take from
    a chunked array joins all of its chunks first (100 MB of times for a few rows)."""
    chunked = [
        c
        for c in frame.columns
        if isinstance(frame[c].dtype, pd.ArrowDtype) and frame[c].array._pa_array.num_chunks > 1
    ]
    if not chunked:
        return frame.iloc[rows]
    out = frame.drop(columns=chunked).iloc[rows]
    for c in chunked:
        values = _take_chunked(frame[c].array._pa_array, rows)
        out[c] = pd.Series(pd.arrays.ArrowExtensionArray(values), index=out.index)
    return out[list(frame.columns)]


def _take_chunked(column: pa.ChunkedArray, rows: np.ndarray) -> pa.ChunkedArray:
    """`column.take(rows)` for increasing `rows`, one take per chunk that holds some."""
    bounds = np.cumsum([0, *(len(chunk) for chunk in column.chunks)])
    which = np.searchsorted(bounds, rows, side="right") - 1
    pieces = [
        column.chunk(int(k)).take(pa.array(rows[which == k] - bounds[k])) for k in np.unique(which)
    ]
    return pa.chunked_array(pieces, type=column.type)


class RowStore(Protocol):
    """Request rows kept out of memory, read one run at a time (reporter.stream.audit), with
    what the whole-table code would compute from them, computed run by run."""

    request_count: int
    #: reporter.metrics.request_aggregates of every run
    request_aggregates: pd.DataFrame
    first_requests: pd.DataFrame
    latencies: pd.DataFrame

    def rows_of(self, runs: Sequence[str]) -> pd.DataFrame: ...

    def slim_rows_of(self, run: str) -> pd.DataFrame:
        """One run's rows without the columns no rule reads per run (AuditData._HEAVY)."""
        ...


def _frame(rows: list[dict[str, Any]], columns: tuple[str, ...]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=list(columns))
    return frame.astype(object).where(frame.notna(), None) if len(frame) else frame


def empty_requests() -> pd.DataFrame:
    return normalize_requests(pd.DataFrame({c: [] for c in REQUEST_COLUMNS}))


def _mean_if_list(value: Any) -> float:
    if value is None:
        return float("nan")
    if isinstance(value, list | np.ndarray):
        return float(np.mean(value)) if len(value) else float("nan")
    return float(value)


#: finish_reason of a request that did not complete: a failure (error, abort) or ended by
#: the client on purpose (cancelled: a deliberate cancellation; time_limit: cut when the
#: benchmark's duration ran out; too_short: an answer that finished, flagged by the client as
#: shorter than asked for, LLMPerf's error -100). None of them counts toward the aggregate.
UNFINISHED = ("error", "abort", "cancelled", "time_limit", "too_short")

#: Keys an adapter may put in a run's `summary` when the file has no per-request rows, or
#: rows without times (all optional; seconds and tokens): requests, failed (absent: unknown),
#: output_tokens, prompt_tokens, wall_s, sum_latency_s, mean_ttft_s, median_ttft_s,
#: mean_tpot_s, median_tpot_s, mean_itl_s, mean_reported_tps, sum_reported_tps,
#: tool_aggregate_tps (the file's own aggregate tok/s) with tool_aggregate_field (the file's
#: key of it) and tool_aggregate_how (one sentence, where the adapter knows the tool's
#: definition differs from total output tokens ÷ wall clock: how it is computed and what it
#: leaves out), tool_peak_concurrency (+ tool_peak_concurrency_trusted: False where
#: the tool's method is known to over-count), tool_concurrency (the tool's own Little's-law
#: or time-weighted figure), mean_output_tokens, min_output_tokens, max_output_tokens, chunks
#: (stream chunks received, summed over requests), cancelled and time_limited (how many of
#: the failed were cancelled by the client on purpose, or cut by the benchmark's time
#: limit), too_short (how many were finished answers the client flagged as shorter than
#: asked for), mean_prompt_tokens, std_tpot_s (the standard deviation of the requests'
#: TPOTs), spec_drafts, spec_draft_tokens and spec_accepted_tokens (the server's draft
#: counters over the run, as the tool took them), length_mismatches (the tool's count of
#: requests whose output differs from the length asked of them by more than its threshold:
#: not all that differ), length_compared and length_{exact,short,over}_{min,max} (of the
#: requests compared with the length asked, how many wrote exactly it, fewer or more tokens:
#: bounds proved from the tool's statistics of the differences), batch_ttft_s (the one time
#: to first token of a run whose requests were all admitted at once and prefilled together
#: as one batch, timed once: every request's, none waited for a slot; a timing, not a percentile),
#: received_output_tokens (the tokens of the text the client received, as the tool
#: re-tokenized it, beside output_tokens as it counted them), batch_decode_steps (the decode
#: steps such a run timed after that prefill, where its tool says: llama-batched-bench's
#: prefill yields no token and it times one step per output token; absent, each sequence's
#: first token came from the prefill). Latency
#: percentiles the tool gives: `<metric>_p<q>_s` for TTFT, ITL, TPOT and e2e at p50, p90 and
#: p99 (LATENCY_SUMMARY_KEYS), each absent where the tool does not give it.
LATENCY_SUMMARY_KEYS = tuple(
    f"{metric}_p{q}_s" for metric in ("ttft", "itl", "tpot", "e2e") for q in (50, 90, 99)
)
SUMMARY_KEYS = (
    "requests", "failed", "output_tokens", "prompt_tokens", "wall_s", "sum_latency_s",
    "mean_ttft_s", "median_ttft_s", "mean_tpot_s", "median_tpot_s", "mean_itl_s",
    "mean_reported_tps", "sum_reported_tps", "tool_aggregate_tps", "tool_peak_concurrency",
    "tool_peak_concurrency_trusted", "tool_concurrency", "mean_output_tokens",
    "min_output_tokens", "max_output_tokens", "chunks", "cancelled", "time_limited", "too_short",
    "mean_prompt_tokens", "std_tpot_s", "spec_drafts", "spec_draft_tokens",
    "spec_accepted_tokens", "length_mismatches", "batch_ttft_s", "received_output_tokens",
    "batch_decode_steps", "length_compared", "length_exact_min", "length_exact_max",
    "length_short_min", "length_short_max", "length_over_min", "length_over_max",
    "tool_aggregate_field", "tool_aggregate_how", *LATENCY_SUMMARY_KEYS,
)  # fmt: skip


def _is_text(series: pd.Series) -> bool:
    """A string column that is not a Python-object one (arrow-backed or pandas' own)."""
    return bool(pd.api.types.is_string_dtype(series.dtype)) and series.dtype != object


def _category(series: pd.Series) -> pd.Series:
    """A categorical of strings (run ids, paths, finish reasons): cheap to group and to take."""
    if isinstance(series.dtype, pd.CategoricalDtype):
        categories = series.cat.categories
        if not all(isinstance(c, str) for c in categories):
            series = series.cat.rename_categories([str(c) for c in categories])
        return series
    if _is_text(series):
        return series.astype("category")
    values = series.to_numpy(dtype=object)
    return pd.Series(
        pd.Categorical([None if v is None else str(v) for v in values]), index=series.index
    )


def chunk_counts(token_times: pd.Series) -> np.ndarray:
    """How many chunk times each row holds (NaN where it holds none, not even an empty list).

    Arrow lists are counted from their offsets; other columns row by row.
    """
    if isinstance(token_times.dtype, pd.ArrowDtype) and pa.types.is_list(
        token_times.dtype.pyarrow_dtype
    ):
        lengths = pc.list_value_length(pa.chunked_array(token_times.array._pa_array))
        return np.asarray(lengths.to_numpy(zero_copy_only=False), dtype="float64")
    return token_times.map(
        lambda t: np.nan if t is None or not hasattr(t, "__len__") else float(len(t))
    ).to_numpy(dtype="float64")


class _Absent:
    """The values of a request table's absent columns (None in every row, or NaN where the
    column holds numbers), made once per table and shared by all its absent columns.

    Each array is read-only, so that sharing it cannot let a write to one column reach
    another (numpy refuses the write); a million-row array is fresh memory, which costs more
    than the work done with it.
    """

    def __init__(self, index: pd.RangeIndex) -> None:
        self.index = index
        self._nones: np.ndarray | None = None
        self._nans: np.ndarray | None = None

    def nones(self) -> pd.Series:
        """None in every row, as Python objects; the dtype is stated, so that pandas does not
        look at a million Nones to infer one."""
        if self._nones is None:
            self._nones = np.empty(len(self.index), dtype=object)  # numpy fills it with None
            self._nones.flags.writeable = False
        return pd.Series(self._nones, index=self.index, dtype=object, copy=False)

    def nans(self) -> np.ndarray:
        if self._nans is None:
            self._nans = np.full(len(self.index), np.nan)
            self._nans.flags.writeable = False
        return self._nans


def normalize_requests(frame: pd.DataFrame) -> pd.DataFrame:
    """Fix dtypes, fill absent columns and add the derived ones (ttft, e2e, decode time, rate).

    Strings stay arrow-backed or categorical: a million request ids never become Python
    objects unless a reader asks for one.
    """
    n = len(frame)
    index = pd.RangeIndex(n)
    absent = _Absent(index)
    out: dict[str, Any] = {}
    out["run"] = (
        _category(frame["run"].reset_index(drop=True))
        if "run" in frame
        else pd.Series(pd.Categorical([""] * n), index=index)
    )
    if "id" in frame and _is_text(frame["id"]):
        out["id"] = frame["id"].reset_index(drop=True)
    elif "id" in frame:
        out["id"] = pd.Series(
            [None if v is None else str(v) for v in frame["id"].to_numpy(dtype=object)],
            index=index,
            dtype=object,
        )
    else:
        out["id"] = absent.nones()
    for col in REQUEST_FLOATS:
        if col == "chunk_tokens" and col in frame and frame[col].dtype == object:
            out[col] = frame[col].map(_mean_if_list).to_numpy(dtype="float64")
        elif col in frame and frame[col].dtype == np.float64:
            out[col] = frame[col].to_numpy()  # NaN is already the missing value: no copy
        elif col in frame and frame[col].dtype.kind in "iu":
            out[col] = frame[col].to_numpy(dtype="float64")  # whole numbers: none missing
        elif col in frame:
            out[col] = pd.to_numeric(frame[col], errors="coerce").to_numpy(
                dtype="float64", na_value=np.nan
            )
        else:
            out[col] = absent.nans()
    # durations a tool measured without absolute times (LLMPerf: ttft_s and e2e latency per
    # request, no send time); derive_request_columns prefers the ones from the times
    for col in ("ttft", "e2e"):
        if col in frame:
            out[col] = pd.to_numeric(frame[col], errors="coerce").to_numpy(
                dtype="float64", na_value=np.nan
            )
    out["finish_reason"] = (
        _category(frame["finish_reason"].reset_index(drop=True))
        if "finish_reason" in frame
        else pd.Series(pd.Categorical([None] * n), index=index)
    )
    for col in ("prompt_sha256", "error"):
        if col in frame and _is_text(frame[col]):
            out[col] = frame[col].reset_index(drop=True)
        else:
            out[col] = (
                frame[col].reset_index(drop=True).astype(object) if col in frame else absent.nones()
            )
    out["token_times"] = (
        frame["token_times"].reset_index(drop=True) if "token_times" in frame else absent.nones()
    )
    out["source_path"] = (
        _category(frame["source_path"].reset_index(drop=True))
        if "source_path" in frame
        else pd.Series(pd.Categorical([""] * n), index=index)
    )
    if "source_line" not in frame:
        out["source_line"] = np.zeros(n, dtype="int64")
    elif frame["source_line"].dtype == np.int64:
        out["source_line"] = frame["source_line"].to_numpy()  # to_numeric would copy it
    else:
        out["source_line"] = pd.to_numeric(frame["source_line"]).to_numpy(dtype="int64")
    # columns kept as they are (no copy into one block per dtype): a million rows
    req = pd.DataFrame(out, index=index, copy=False)
    derive_request_columns(req, errors="error" in frame)
    return req


def derive_request_columns(req: pd.DataFrame, *, errors: bool = True) -> None:
    """Add ttft, e2e, decode_s, decode_tps and ok, in place (vectorised).

    From the absolute times where a row has them; else from the durations a tool measured
    (`ttft`, `e2e` columns already in the frame), decode time being e2e − TTFT. `errors`
    False says that the error column holds None in every row (it was absent): no row of it
    is looked at.
    """

    def column(values: np.ndarray) -> pd.Series:
        # a Series, not the array: pandas copies an array set as a column
        return pd.Series(values, index=req.index, copy=False)

    # numpy arrays: each pandas operation on a Series makes one more full column
    send, first, end = (req[c].to_numpy(dtype="float64") for c in ("t_send", "t_first", "t_end"))
    tokens = req["output_tokens"].to_numpy(dtype="float64")
    given_ttft = req.get("ttft")
    given_e2e = req.get("e2e")
    if given_ttft is None and given_e2e is None and len(req) >= PARALLEL_ROWS:
        # a large table's columns made on two threads: most of their cost is the fresh
        # memory's pages, faulted in on both cores at once (a million rows: ~45 → ~15 ms)
        with ThreadPoolExecutor(max_workers=2, thread_name_prefix="derive") as pool:
            latencies = pool.submit(lambda: (_difference(first, send), _difference(end, send)))
            decode = _difference(end, first)
            rate = _rate(tokens, decode)
            ttft, e2e = latencies.result()
        req["ttft"], req["e2e"], req["decode_s"] = column(ttft), column(e2e), column(decode)
        req["decode_tps"] = column(rate)
    else:
        req["ttft"], req["e2e"] = column(_difference(first, send)), column(_difference(end, send))
        req["decode_s"] = column(_difference(end, first))
        with np.errstate(all="ignore"):
            if given_ttft is not None:
                req["ttft"] = req["ttft"].fillna(given_ttft)
            if given_e2e is not None:
                req["e2e"] = req["e2e"].fillna(given_e2e)
            if given_ttft is not None and given_e2e is not None:
                req["decode_s"] = req["decode_s"].fillna(req["e2e"] - req["ttft"])
        req["decode_tps"] = column(_rate(tokens, req["decode_s"].to_numpy(dtype="float64")))
    failed = one_of(req["finish_reason"], UNFINISHED)
    if errors:  # (a million Nones take milliseconds to look at)
        failed = failed | req["error"].notna().to_numpy(dtype=bool)
    req["ok"] = column(~failed)


#: Rows from which a request table's columns are made on two threads (converted from Arrow
#: by the native reader, derived here); below, the threads cost more than they save.
PARALLEL_ROWS = 1 << 16


# (numpy's error state is each thread's own: each function below sets it)
def _difference(later: np.ndarray, earlier: np.ndarray) -> np.ndarray:
    """The time between two columns of times, row by row (times far apart overflow to
    infinity, as pandas lets them: integrity refuses those rows)."""
    with np.errstate(all="ignore"):
        found: np.ndarray = later - earlier
    return found


def _rate(tokens: np.ndarray, decode: np.ndarray) -> np.ndarray:
    """Tokens ÷ decode time, as engines report it (llama-server predicted_per_second) and as
    METHOD.md predicts walls with it (TTFT + tokens ÷ rate); one token has no decode time."""
    with np.errstate(all="ignore"):
        rate: np.ndarray = tokens / decode
        rate[~((tokens >= 2) & (decode > 0))] = np.nan
    return rate


def one_of(column: pd.Series, names: Collection[str]) -> np.ndarray:
    """Where each row of `column` holds one of `names` (False where it holds none), as an
    array; a categorical column by its codes, compared with the few codes of those names
    (isin hashes every row's text: five times the cost on a run's rows)."""
    values = column.array
    if not isinstance(values, pd.Categorical):
        return column.isin(list(names)).to_numpy(dtype=bool)
    found = np.zeros(len(values), dtype=bool)
    for code in np.flatnonzero(values.categories.isin(list(names))).tolist():
        found |= values.codes == code
    return found


def _run_ids(column: pd.Series) -> set[str]:
    """The run ids of a request column as text; a categorical one from its codes, not a
    string a row."""
    if not isinstance(column.dtype, pd.CategoricalDtype):
        return {str(x) for x in pd.unique(column.astype(str))}
    codes = column.cat.codes.to_numpy()
    present = np.unique(codes)
    ids = {str(column.cat.categories[c]) for c in present[present >= 0]}
    if len(present) and present[0] < 0:  # a missing run id, as astype(str) writes it
        ids |= {str(x) for x in pd.unique(column[codes < 0].astype(str))}
    return ids


def _qualify_duplicate_runs(partials: list[Partial]) -> None:
    """Run ids are per file; when two files reuse one, prefix it with the file name."""
    if len(partials) < 2:
        return  # a file's own ids are distinct (a run id twice in one file is the same run)
    seen: dict[str, int] = {}
    for p in partials:
        ids = {str(r["run"]) for r in p.runs}
        if p.requests is not None and len(p.requests):
            ids |= _run_ids(p.requests["run"])
        for i in ids:
            seen[i] = seen.get(i, 0) + 1
    clashes = {i for i, n in seen.items() if n > 1}
    if not clashes:
        return
    prefixes = _distinct_names([p.input.path if p.input is not None else "" for p in partials])
    for p, name in zip(partials, prefixes, strict=True):
        assert p.input is not None
        prefix = name + ":"
        rename = {i: prefix + i for i in clashes}
        for rows in (p.runs, p.claims, p.probes, p.logs, p.run_ends):
            for row in rows:
                if row.get("run") is not None and str(row["run"]) in rename:
                    row["run"] = rename[str(row["run"])]
        for claim in p.claims:
            if claim.get("runs"):
                claim["runs"] = [rename.get(r, r) for r in claim["runs"]]
        if p.requests is not None and len(p.requests):
            p.requests["run"] = p.requests["run"].astype(str).replace(rename)


def _distinct_names(paths: list[str]) -> list[str]:
    """The shortest trailing parts of each path that tell the files apart (the file name,
    else its folder too: every AIPerf run writes `profile_export.jsonl`); a path given twice
    gets '#2', '#3'."""
    parts = [[x for x in path.replace("\\", "/").split("/") if x] or [path] for path in paths]
    depth = 1
    while True:
        names = ["/".join(p[-depth:]) for p in parts]
        if len(set(names)) == len(names) or all(depth >= len(p) for p in parts):
            break
        depth += 1
    return unique_ids(names)


def _complete_runs(partials: list[Partial], requests: pd.DataFrame) -> list[dict[str, Any]]:
    from reporter.runrecord import run_row  # the one flattening of a run record

    runs = [r for p in partials for r in p.runs]
    by_id = {r["run"]: r for r in runs}
    ended = {str(end["run"]) for p in partials for end in p.run_ends}
    for row in runs:
        extra = row.get("extra") or {}
        # the recorder writes a run_end record last; a run without one was cut short
        recorded = row.get("tool_name") == "benchreport" and extra.get("tool_command") == "record"
        if recorded and str(row["run"]) not in ended:
            row["interrupted"] = True
            row["derived"] = [
                *(row.get("derived") or []),
                "interrupted: no run_end record (the recording was cut short)",
            ]
    for p in partials:
        for end in p.run_ends:
            target = by_id.get(str(end["run"]))
            if target is None:
                continue
            if end.get("interrupted"):
                target["interrupted"] = True
            extra = dict(target.get("extra") or {})
            extra["run_end"] = {k: v for k, v in end.items() if k not in ("kind", "run")}
            target["extra"] = extra
    if len(requests) and not _every_run_recorded(requests["run"], by_id):
        first = requests.groupby("run", observed=True, sort=False)["source_line"].idxmin()
        for run_id, idx in first.items():
            if str(run_id) in by_id:
                continue
            path = str(requests.at[idx, "source_path"])
            row = run_row({"id": str(run_id)}, path, None, "benchreport")
            row["derived"] = ["run record absent: every run field unknown"]
            runs.append(row)
            by_id[str(run_id)] = row
    return runs


def _every_run_recorded(run: pd.Series, by_id: dict[Any, dict[str, Any]]) -> bool:
    """Whether every run id a categorical request column can hold has a run record: then no
    run needs one made for it, and its rows need no group-by to find where it starts."""
    if not isinstance(run.dtype, pd.CategoricalDtype):
        return False
    return all(str(name) in by_id for name in run.cat.categories)


def _means_by_run(requests: pd.DataFrame, column: str, completed: bool) -> dict[str, float]:
    """A numeric column's mean per run over its request rows (only the completed ones when
    asked), by one bincount over the run codes: a million requests take milliseconds."""
    if not len(requests) or column not in requests:
        return {}
    run = requests["run"]
    run = run if isinstance(run.dtype, pd.CategoricalDtype) else run.astype("category")
    codes = run.cat.codes.to_numpy()
    given = requests[column]
    if given.dtype == np.float64:  # as normalize_requests leaves it: read as it is
        values = given.to_numpy()
    else:
        values = pd.to_numeric(given, errors="coerce").to_numpy(dtype="float64", na_value=np.nan)
    known = np.isfinite(values) & (codes >= 0)
    if completed and "ok" in requests:
        known &= requests["ok"].to_numpy(dtype=bool, na_value=False)
    if not known.all():  # (the same sums, in the same order, as of every row)
        codes, values = codes[known], values[known]
    size = len(run.cat.categories)
    sums, counts = group_sums(codes, values, size)
    return {
        str(name): float(sums[i] / counts[i])
        for i, name in enumerate(run.cat.categories)
        if counts[i]
    }


#: Most stretches of one code that group_sums sums one by one (each is a numpy call).
MAX_STRETCHES = 256


def group_sums(codes: np.ndarray, values: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """The sum of `values` and the number of rows for each code in range(size) (codes at
    least 0), bit for bit as np.bincount(codes, weights=values, minlength=size) and
    np.bincount(codes, minlength=size) give them.

    bincount adds each code's values one after the other, in row order, from 0.0. Where each
    code's rows are one stretch (a run's requests are written together), a running sum of
    the stretch adds them in that same order, a few times faster; its start from the first
    value instead of 0.0 can only leave -0.0 where bincount has 0.0, which adding 0.0 undoes.
    """
    n = len(codes)
    begins = np.flatnonzero(codes[1:] != codes[:-1]) + 1 if n else np.zeros(0, np.int64)
    starts = np.concatenate(([0], begins))
    stretch_codes = codes[starts].astype(np.int64) if n else np.zeros(0, np.int64)
    # no row, too many stretches to sum one by one, or a code in more than one stretch
    if n == 0 or len(begins) >= MAX_STRETCHES or len(np.unique(stretch_codes)) != len(starts):
        return np.bincount(codes, weights=values, minlength=size), np.bincount(
            codes, minlength=size
        )
    stops = np.append(begins, n)
    sums = np.zeros(size, dtype=np.float64)
    counts = np.zeros(size, dtype=np.int64)
    with np.errstate(over="ignore", invalid="ignore"):  # as bincount: silently inf or NaN
        for code, start, stop in zip(
            stretch_codes.tolist(), starts.tolist(), stops.tolist(), strict=True
        ):
            sums[code] = np.add.accumulate(values[start:stop])[-1] + 0.0
            counts[code] = stop - start
    return sums, counts


def _measured_lengths(
    runs: list[dict[str, Any]], requests: pd.DataFrame
) -> dict[str, dict[str, float]]:
    """Each run's mean prompt and output length as measured ("prompt", "output": run id →
    tokens): over its requests (outputs of completed ones), else from its tool's summary (a
    mean, or tokens over the completed requests)."""
    out = {
        "prompt": _means_by_run(requests, "prompt_tokens", completed=False),
        "output": _means_by_run(requests, "output_tokens", completed=True),
    }
    for row in runs:
        run_id, summary = str(row["run"]), row.get("summary")
        if not isinstance(summary, dict):
            continue
        done = finite_number(summary.get("requests"))
        completed = None if done is None else done - (finite_number(summary.get("failed")) or 0)
        for key, mean_key, total_key in (
            ("prompt", "mean_prompt_tokens", "prompt_tokens"),
            ("output", "mean_output_tokens", "output_tokens"),
        ):
            if run_id in out[key]:
                continue
            mean = finite_number(summary.get(mean_key))
            total = finite_number(summary.get(total_key))
            if mean is None and total is not None and completed:
                mean = total / completed
            if mean is not None and mean > 0:
                out[key][run_id] = mean
    return out


def build(partials: list[Partial], group_by: str = "settings") -> Tables:
    """Join the adapters' output into the canonical tables; runs are grouped into sweeps
    by `group_by` (reporter.grouping)."""
    from reporter.grouping import assign

    _qualify_duplicate_runs(partials)
    frames = [p.requests for p in partials if p.requests is not None and len(p.requests)]
    requests = pd.concat(frames, ignore_index=True) if frames else empty_requests()
    if len(frames) > 1 or (frames and requests["run"].dtype != "category"):
        requests["source_path"] = requests["source_path"].astype("category")
        requests["run"] = requests["run"].astype(str).astype("category")
    runs = _complete_runs(partials, requests)
    reasons = assign(runs, group_by, _measured_lengths(runs, requests))
    run_frame = pd.DataFrame(runs, columns=list(RUN_COLUMNS))
    return Tables(
        requests=requests,
        runs=run_frame,
        claims=_frame([c for p in partials for c in p.claims], CLAIM_COLUMNS),
        probes=_frame([c for p in partials for c in p.probes], PROBE_COLUMNS),
        logs=_frame([c for p in partials for c in p.logs], LOG_COLUMNS),
        inputs=[p.input for p in partials if p.input is not None],
        group_reasons=reasons,
    )


def unique_ids(names: list[str]) -> list[str]:
    """Names made unique in order: repeats of a name get '#2', '#3', ..."""
    seen: dict[str, int] = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name}#{seen[name]}")
    return out
