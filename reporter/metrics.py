"""Per-run figures recomputed the honest way: total output tokens ÷ wall clock, and friends.

Everything here is vectorised over all runs at once, so a million-request trace costs a few
group-bys, not a Python loop per request.
"""

from __future__ import annotations

import itertools
import math
from typing import Any, Literal

import numpy as np
import pandas as pd

from reporter.medians import medians_by_code
from reporter.table import Tables
from reporter.values import finite, number_or_nan

STAT_COLUMNS = (
    "requests", "ok", "failed", "output_tokens", "wall_s", "aggregate_tps", "sum_reported_tps",
    "overlap", "in_flight", "median_ttft_s", "median_decode_tps", "median_e2e_s",
    "out_min", "out_max", "out_mean", "out_cv", "send_spread_s", "prompt_tokens_total",
    "prompt_tokens_mean", "prefill_rate", "prefill_rate_source", "prefill_s", "prefill_share",
    "has_send", "has_first", "has_end", "has_reported", "from_summary", "t0", "t1",
    "prefill_rate_bound", "prompt_tps",
)  # fmt: skip
FLAG_COLUMNS = (
    "has_send", "has_first", "has_end", "has_reported", "from_summary", "prefill_rate_bound",
)  # fmt: skip


def union_length(
    run: np.ndarray, start: np.ndarray, end: np.ndarray, order: np.ndarray | None = None
) -> pd.Series:
    """Length of the union of [start, end) intervals, per run (rows may be in any order).

    `order`: the stable sort of the rows by run then start, when the caller has it (used
    when no row is left out for a missing value).

    Vectorised: intervals sorted by (run, start) are merged wherever one starts before the
    furthest end so far of its run reaches; each merged block counts once. The reach is a
    running maximum per run (a group-by), so runs far apart on one clock never add up to an
    overflow.
    """
    run = np.asarray(run)
    if not _none_missing(run, start, end):
        keep = ~(pd.isna(run) | np.isnan(start) | np.isnan(end))
        if not keep.all():
            run, start, end = run[keep], start[keep], end[keep]
            order = None
    if len(run) == 0:
        return pd.Series(dtype="float64")
    blocks = _blocks_by_sorted_ends(run, start, end) if order is None else None
    block_runs, lengths = blocks if blocks is not None else _blocks_by_reach(run, start, end, order)
    if len(lengths) == 1:  # one block (a lone request): its length, without a group-by
        return pd.Series(lengths, index=pd.Index(block_runs))
    if np.isnan(lengths).any():  # (an overflow) pandas sums around a NaN its own way
        return pd.Series(lengths).groupby(block_runs, sort=False).sum()
    # each run's blocks together: the sum pandas' group-by takes of them (np.add.reduceat
    # over each run's stretch, as pandas does for ordered groups without NaN), without the
    # group-by's own cost, which was most of a one-run call
    runs_at = np.flatnonzero(np.concatenate(([True], block_runs[1:] != block_runs[:-1])))
    return pd.Series(np.add.reduceat(lengths, runs_at), index=pd.Index(block_runs[runs_at]))


def _none_missing(run: np.ndarray, start: np.ndarray, end: np.ndarray) -> bool:
    """Whether no row lacks its run, start or end, where that is told without a mask a row:
    integer runs, and float times whose minimum is not NaN (a NaN anywhere makes it NaN)."""
    if not len(run) or run.dtype.kind not in "iu":
        return False
    if start.dtype.kind != "f" or end.dtype.kind != "f":
        return False
    return not (np.isnan(start.min()) or np.isnan(end.min()))


def _blocks_by_reach(
    run: np.ndarray, start: np.ndarray, end: np.ndarray, order: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """The run and the length of each merged block of intervals (none missing), in the order
    of the stable sort by run then start: a block ends where the next start is beyond the
    running maximum of its run's ends so far."""
    if order is None:
        order = _by_run_then_start(run, start)
    run, start, end = run[order], start[order], end[order]
    group_start = np.concatenate(([True], run[1:] != run[:-1]))
    reach = _running_max(end, np.flatnonzero(group_start))
    new_block = group_start.copy()
    new_block[1:] |= start[1:] > reach[:-1]
    firsts = np.flatnonzero(new_block)
    return run[firsts], _block_lengths(start, end, reach, firsts)


def _block_lengths(
    start: np.ndarray, end: np.ndarray, reach: np.ndarray, firsts: np.ndarray
) -> np.ndarray:
    """Each merged block's length, from intervals in order of start, the running maximum of
    their ends (`reach`) and the row where each block begins (`firsts`)."""
    if (end >= start).all() and (end != 0).all():
        # each block's ends are beyond the earlier blocks' reach (they end after the block's
        # first start), so its furthest end is the reach at its last row: the same value
        # (and bits, no end being a zero of either sign) as a maximum over the block
        lasts = np.append(firsts[1:] - 1, len(start) - 1)
        return np.asarray(reach[lasts] - start[firsts])
    return np.asarray(np.maximum.reduceat(end, firsts) - start[firsts])


def union_of_one_run(start: np.ndarray, end: np.ndarray, order: np.ndarray) -> float:
    """The length of the union of one run's [start, end) intervals (none NaN), `order` the
    stable sort of the starts: `union_length` of them as one run, summed (`.sum()` of its
    Series), to the last bit, without its grouping by run and its Series (most of its cost
    on one run)."""
    if not len(start):
        return 0.0
    start, end = start[order], end[order]
    reach = np.maximum.accumulate(end)  # `_running_max` of one group
    new_block = np.empty(len(start), dtype=bool)
    new_block[0] = True
    np.greater(start[1:], reach[:-1], out=new_block[1:])
    lengths = _block_lengths(start, end, reach, np.flatnonzero(new_block))
    if len(lengths) > 1 and np.isnan(lengths).any():  # (an overflow) as union_length sums it
        total = pd.Series(lengths).groupby(np.zeros(len(lengths)), sort=False).sum().iloc[0]
    else:  # union_length's one block, or its np.add.reduceat over the run's blocks
        total = lengths[0] if len(lengths) == 1 else np.add.reduceat(lengths, [0])[0]
    # the Series' sum leaves a NaN out: a sum of none is 0
    return 0.0 if math.isnan(total) else float(total)


def _blocks_by_sorted_ends(
    run: np.ndarray, start: np.ndarray, end: np.ndarray
) -> tuple[np.ndarray, np.ndarray] | None:
    """`_blocks_by_reach` without its argsort, gathers and running maximum, where it gives the
    same bits (else None): integer runs, fewer than `_MANY_GROUPS`, no interval ending
    before it starts and no time of zero.

    Each run's starts and ends are sorted on their own. When no interval ends before it
    starts, the first k intervals by start are a block's last ones exactly when the k-th
    smallest end is below the next start (those k intervals end, so start, before it), and
    then the block's furthest end is that k-th smallest end: the same value the running
    maximum reaches. Equal values are the same bits, but for 0.0 and -0.0, which the sorts
    may place either way: a zero anywhere leaves it to the sort by start."""
    if run.dtype.kind not in "iu":
        return None
    grouped = len(run) < 2 or not (run[1:] < run[:-1]).any()
    if not grouped:  # rows of a run apart: grouped first
        by_run = np.argsort(run, kind="stable")
        run, start, end = run[by_run], start[by_run], end[by_run]
    group_start = np.concatenate(([True], run[1:] != run[:-1]))
    firsts_of_runs = np.flatnonzero(group_start)
    if len(firsts_of_runs) >= _MANY_GROUPS:
        return None
    bounds = list(itertools.pairwise([*firsts_of_runs.tolist(), len(run)]))
    if len(run) >= _RUN_AT_A_TIME_ROWS * len(bounds):
        # large runs: one at a time, each run's copies and masks small enough to stay in
        # cache (and to be reused, not new memory) rather than a pass over every row each
        lengths = []
        for a, b in bounds:
            blocks = _blocks_of_one_run(start[a:b], end[a:b])
            if blocks is None:
                return None
            lengths.append(blocks)
        counts = [len(blocks) for blocks in lengths]
        return np.repeat(run[firsts_of_runs], counts), np.concatenate(lengths)
    if not _sorted_ends_hold(start, end):
        return None
    if grouped:
        start, end = start.copy(), end.copy()  # sorted in place below
    for a, b in bounds:
        for values in (start[a:b], end[a:b]):
            if (values[1:] < values[:-1]).any():  # a run in time order already: no sort
                values.sort(kind=_sort_kind(values))
    new_block = group_start
    new_block[1:] |= start[1:] > end[:-1]
    firsts = np.flatnonzero(new_block)
    lasts = np.append(firsts[1:] - 1, len(run) - 1)
    return run[firsts], end[lasts] - start[firsts]


def _sorted_ends_hold(start: np.ndarray, end: np.ndarray) -> bool:
    """Whether the blocks of intervals may be read from their starts and ends sorted apart:
    no interval ends before it starts, and no time is a zero (of either sign)."""
    return bool((end >= start).all() and (start != 0).all() and (end != 0).all())


def _blocks_of_one_run(start: np.ndarray, end: np.ndarray) -> np.ndarray | None:
    """`_blocks_by_sorted_ends`' block lengths of one run's intervals (none NaN), in order of
    start; None where `_sorted_ends_hold` does not."""
    if not _sorted_ends_hold(start, end):
        return None
    # a run in time order already is read as it is (not written): no copy, no sort
    if (start[1:] < start[:-1]).any():
        start = np.sort(start, kind=_sort_kind(start))
    if (end[1:] < end[:-1]).any():
        end = np.sort(end, kind=_sort_kind(end))
    new_block = np.empty(len(start), dtype=bool)
    new_block[0] = True
    np.greater(start[1:], end[:-1], out=new_block[1:])
    firsts = np.flatnonzero(new_block)
    lasts = np.append(firsts[1:] - 1, len(start) - 1)
    return np.asarray(end[lasts] - start[firsts])


#: Runs of this many rows on average have their blocks found one run at a time.
_RUN_AT_A_TIME_ROWS = 4096


def _sort_kind(values: np.ndarray) -> Literal["stable", "quicksort"]:
    """numpy's stable sort for a run nearly in order (it merges ordered stretches), else its
    quicksort: sorted values are the same whichever sort made them."""
    return "stable" if _nearly_in_order(values) else "quicksort"


#: A run where no time is above the one this many rows after it is nearly in order (a few
#: requests in flight): numpy's stable sort, which merges ordered stretches, takes a third of
#: the time of its quicksort there; with more in flight, the quicksort is faster.
_NEARLY_IN_ORDER_ROWS = 8


def _nearly_in_order(values: np.ndarray) -> bool:
    """Whether no value is above the one `_NEARLY_IN_ORDER_ROWS` rows after it."""
    lag = _NEARLY_IN_ORDER_ROWS
    return not (values[lag:] < values[:-lag]).any()


#: Above this many runs in one call, union_length's running maximum is one group-by
#: instead of a loop over the runs.
_MANY_GROUPS = 4096


def _by_run_then_start(run: np.ndarray, start: np.ndarray) -> np.ndarray:
    """The order of `np.lexsort((start, run))`: by run, then by start, then as given.

    Taken as a stable sort by run (cheap on small integer codes, none when the rows come
    grouped), then a stable sort of each run's starts: a trace lists a run's requests nearly
    in time order, and a stable sort merges the ordered stretches (about 3× faster than the
    lexsort, whose sort by start mixes the runs)."""
    by_run = np.argsort(run, kind="stable")
    grouped = run[by_run]
    bounds = np.flatnonzero(grouped[1:] != grouped[:-1]) + 1
    if len(bounds) >= _MANY_GROUPS:
        return np.lexsort((start, run))
    starts = start[by_run]
    for a, b in itertools.pairwise([0, *bounds.tolist(), len(run)]):
        by_run[a:b] = by_run[a:b][np.argsort(starts[a:b], kind="stable")]
    return by_run


def _running_max(values: np.ndarray, group_starts: np.ndarray) -> np.ndarray:
    """The running maximum of `values` within each group of consecutive rows (each group
    begins at an index of `group_starts`); a maximum is exact however it is taken."""
    if len(group_starts) > _MANY_GROUPS:
        groups = np.zeros(len(values), dtype=np.int64)
        groups[group_starts[1:]] = 1
        return pd.Series(values).groupby(np.cumsum(groups)).cummax().to_numpy(dtype="float64")
    out = np.empty(len(values), dtype="float64")
    bounds = [*group_starts.tolist(), len(values)]
    for a, b in itertools.pairwise(bounds):
        np.maximum.accumulate(values[a:b], out=out[a:b])
    return out


#: A lone request's prompt must be this long for prompt tokens ÷ TTFT to measure prefill; a
#: shorter one's TTFT is mostly fixed overhead, so the rate is only a lower bound.
LONG_PROMPT_TOKENS = 1024


def _prefill_rates(
    tables: Tables, stats: pd.DataFrame
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The prefill rate each run's prefill share is computed with, where it came from, and
    whether it is only a lower bound (so the share only an upper bound); one value a row of
    `stats`, whose run ids are unique."""
    ids = [str(r) for r in stats.index]
    position = {run_id: i for i, run_id in enumerate(ids)}
    rate = np.full(len(ids), np.nan)
    source = np.full(len(ids), None, dtype=object)
    bound = np.zeros(len(ids), dtype=bool)
    probes = tables.probes
    if len(probes):
        prefill = probes[probes["what"] == "prefill_rate"]
        # a probe of no run measured the machine of its own file's runs (Tables.run_files)
        file_of = dict(zip(tables.runs["run"].astype(str), tables.runs["source_path"], strict=True))
        in_file = np.array([str(file_of.get(run_id)) for run_id in ids], dtype=object)
        for _, row in prefill.iterrows():
            where = row["origin"] or f"probe at {row['source_path']}:{row['source_line']}"
            if row["run"] is not None and str(row["run"]) in position:
                rate[position[str(row["run"])]] = float(row["value"])
                source[position[str(row["run"])]] = where
            elif row["run"] is None:
                unset = np.isnan(rate)
                path = str(row["source_path"])
                if path in tables.run_files:  # Tables.speaks_for, over every run at once
                    unset &= in_file == path
                rate[unset] = float(row["value"])
                source[unset] = where
    # else: a lone request of the same group measures it (prompt tokens ÷ time to first token),
    # from its row, or from the summary of a run of one request (its TTFT and prompt tokens)
    summarised = stats["from_summary"].to_numpy(dtype=bool)
    if (tables.request_count() or summarised.any()) and np.isnan(rate).any():
        # each run's group, looked up as the run table's index would be
        group_of = dict(zip(tables.runs["run"], tables.runs["group"], strict=True))
        requests = stats["requests"].to_numpy()
        alone = np.flatnonzero(
            (requests == 1) & (stats["has_first"].to_numpy(dtype=bool) | summarised)
        )
        by_group: dict[str, tuple[float, float]] = {}
        # each run's first request, found once: searching the whole table per run made
        # thousands of one-request runs quadratic
        firsts: dict[str, tuple[float, float]] = {}
        if tables.request_count() and len(alone):
            first = tables.first_requests()
            firsts = dict(
                zip(
                    first["run"].astype(str),
                    zip(
                        first["prompt_tokens"].to_numpy(dtype="float64", na_value=np.nan),
                        first["ttft"].to_numpy(dtype="float64", na_value=np.nan),
                        strict=True,
                    ),
                    strict=True,
                )
            )
        summary_prompt = stats["prompt_tokens_total"].to_numpy(dtype="float64")
        summary_ttft = stats["median_ttft_s"].to_numpy(dtype="float64")
        for i in alone.tolist():
            prompt, ttft = firsts.get(ids[i], (np.nan, np.nan))
            if summarised[i] and not (prompt > 0 and ttft > 0):
                prompt, ttft = summary_prompt[i], summary_ttft[i]
            if prompt > 0 and ttft > 0:
                group = str(group_of[ids[i]]) if ids[i] in group_of else ""
                by_group.setdefault(group, (prompt / ttft, prompt))
        for i in np.flatnonzero(np.isnan(rate)).tolist():
            group = str(group_of[ids[i]]) if ids[i] in group_of else ""
            if group in by_group:
                value, prompt = by_group[group]
                rate[i] = value
                short = prompt < LONG_PROMPT_TOKENS
                bound[i] = short
                source[i] = (
                    f"a lone request of the same group, prompt tokens ÷ TTFT ({prompt:,.0f} "
                    + ("tokens: mostly fixed overhead, so a lower bound)" if short else "tokens)")
                )
    if np.isnan(rate).any():
        _rates_of_prompt_tests(tables, stats, rate, source)
    return rate, source, bound


#: What a prompt-processing test must share with a run for its rate to be that run's prefill
#: rate: the file, the model and hardware, the settings, the prompt and the context.
_PROMPT_TEST_KEY = (
    "source_path", "model_name", "quant", "hardware_name", "engine_flags", "prompt_tokens",
    "context_tokens",
)  # fmt: skip


def _rates_of_prompt_tests(
    tables: Tables, stats: pd.DataFrame, rate: np.ndarray, source: np.ndarray
) -> None:
    """A prompt-processing test (llama-bench's pp512) measures the prefill rate of the runs
    that read the same prompt at the same context with the same settings (pp512+tg128): its
    prompt tokens ÷ its time. Fills `rate` and `source` where they are still unset."""
    runs = tables.runs
    if "phase" not in runs or not (runs["phase"] == "prompt").any():
        return
    columns = [c for c in _PROMPT_TEST_KEY if c in runs]

    def key(row: pd.Series) -> tuple[str, ...]:
        return tuple(
            repr(tuple(v) if isinstance(v := row[c], list | tuple) else v) for c in columns
        )

    measured: dict[tuple[str, ...], tuple[float, str]] = {}
    prompt = stats["prompt_tokens_total"]
    wall = stats["wall_s"]
    for _, row in runs[runs["phase"] == "prompt"].iterrows():
        run_id = str(row["run"])
        if run_id not in stats.index:
            continue
        tokens, seconds = number_or_nan(prompt.at[run_id]), number_or_nan(wall.at[run_id])
        if tokens > 0 and seconds > 0:
            measured.setdefault(key(row), (tokens / seconds, run_id))
    position = {str(r): i for i, r in enumerate(stats.index)}
    for _, row in runs[runs["phase"] != "prompt"].iterrows():
        i = position.get(str(row["run"]))
        if i is None or not np.isnan(rate[i]) or not number_or_nan(row["prompt_tokens"]) > 0:
            continue
        found = measured.get(key(row))
        if found is not None:
            rate[i] = found[0]
            source[i] = (
                f"the prompt-processing test {found[1]} of the same prompt, context and settings"
            )


#: The request columns `request_aggregates` reads as numbers.
_AGGREGATED_FLOATS = (
    "t_send", "t_first", "t_end", "output_tokens", "reported_tps", "e2e", "prompt_tokens",
    "decode_s", "ttft", "decode_tps",
)  # fmt: skip


def request_aggregates(req: pd.DataFrame) -> pd.DataFrame:
    """The request rows' sums, counts, extremes and medians, one row per run present (index:
    run id), with each run's total decode time and the length of the union of its decode
    windows (their ratio is the overlap). `run_stats` turns them into the run's figures.

    Where each run's rows come together (as a trace lists them), the figures are taken over
    each run's stretch of rows, as pandas' group-by takes them there, without its grouping
    (most of the cost); other rows go through the group-by itself."""
    codes = req["run"].cat.codes.to_numpy()
    if (
        not len(codes)
        or codes[0] < 0
        or (codes[1:] < codes[:-1]).any()
        or req["ok"].dtype != bool
        or any(req[c].dtype != np.float64 for c in _AGGREGATED_FLOATS)
    ):
        return _request_aggregates_by_group_by(req)
    ok_rows = req["ok"].to_numpy()
    every_ok = bool(ok_rows.all())
    rows = _RunStretches(req, codes)
    ok = rows if every_ok else _RunStretches(req, codes, ok_rows)

    def over_runs(values: np.ndarray, of: _RunStretches = ok) -> np.ndarray:
        # figures of some runs on every run's row, NaN for the others (as pandas aligns them)
        if len(of.codes) == len(rows.codes):  # the runs of a subset of rows: the same runs
            return values
        out = np.full(len(rows.codes), np.nan)
        out[np.searchsorted(rows.codes, of.codes)] = values
        return out

    t0, send_max = rows.reduce("t_send", "min"), rows.reduce("t_send", "max")
    columns = {
        "requests": rows.sizes,
        "ok": over_runs(ok.sizes),
        "output_tokens": over_runs(ok.reduce("output_tokens", "sum", min_count=1)),
        "t0": t0,
        "t1": rows.reduce("t_end", "max"),
        "sum_reported_tps": over_runs(ok.reduce("reported_tps", "sum", min_count=1)),
        "median_ttft_s": over_runs(ok.medians("ttft")),
        "median_decode_tps": over_runs(ok.medians("decode_tps")),
        "median_e2e_s": over_runs(ok.medians("e2e")),
        "sum_e2e": rows.reduce("e2e", "sum", min_count=1),
        "out_min": over_runs(ok.reduce("output_tokens", "min")),
        "out_max": over_runs(ok.reduce("output_tokens", "max")),
        "out_mean": over_runs(ok.reduce("output_tokens", "mean")),
        "out_std": over_runs(ok.std("output_tokens")),
        "send_spread_s": send_max - t0,
        "prompt_tokens_total": rows.reduce("prompt_tokens", "sum", min_count=1),
        "prompt_tokens_mean": rows.reduce("prompt_tokens", "mean"),
        "n_send": rows.count("t_send"),
        "n_first": rows.count("t_first"),
        "n_end": over_runs(ok.count("t_end")),
        "n_reported": over_runs(ok.count("reported_tps")),
    }
    first, end = ok.values("t_first"), ok.values("t_end")
    if ok.missing("t_first") is None and ok.missing("t_end") is None:
        columns["decode_total_s"] = over_runs(ok.reduce("decode_s", "sum"))
    else:
        decoding_rows = ok_rows & ~(
            np.isnan(rows.values("t_first")) | np.isnan(rows.values("t_end"))
        )
        decoded = _RunStretches(req, codes, decoding_rows)
        columns["decode_total_s"] = over_runs(decoded.reduce("decode_s", "sum"), decoded)
    # (union_length leaves out the rows without both times itself)
    union = union_length(ok.row_codes, first, end)
    columns["decode_union_s"] = np.full(len(rows.codes), np.nan)
    columns["decode_union_s"][np.searchsorted(rows.codes, union.index.to_numpy())] = union
    names = req["run"].cat.categories.take(rows.codes).astype(str)
    return pd.DataFrame(columns, index=pd.Index(names, name="run"))


class _RunStretches:
    """Request rows whose run codes never decrease (a run's rows together, each with a run),
    all of them or those where `taken` is True: each run's stretch of rows, and the figures
    of a column pandas' group-by by run gives, to the bit.

    For groups in order and values without NaN, pandas' sums, means and extremes are ufunc
    reductions over each group's stretch (np.add.reduceat and friends): the same calls here.
    With NaN (pandas' Kahan sums), and for the standard deviation (its Welford loop) but where
    each run's values are one number, pandas itself computes them, grouped by the codes as
    they are (every category kept), which spares recoding the categories to the runs present."""

    def __init__(self, req: pd.DataFrame, codes: np.ndarray, taken: np.ndarray | None = None):
        self._req, self._taken = req, taken
        self._values: dict[str, np.ndarray] = {}
        self._missing: dict[str, np.ndarray | None] = {}
        self._reduced: dict[tuple[str, np.ufunc], np.ndarray] = {}
        self.row_codes = codes if taken is None else codes[taken]
        n = len(self.row_codes)
        self.starts = np.flatnonzero(
            np.concatenate(([n > 0], self.row_codes[1:] != self.row_codes[:-1]))
        )
        #: the runs' codes, in order; each run's count of rows
        self.codes = self.row_codes[self.starts]
        self.sizes = np.diff(self.starts, append=n).astype(np.int64)

    def values(self, column: str) -> np.ndarray:
        """The column's values of the rows taken."""
        if column not in self._values:
            values = self._req[column].to_numpy()
            self._values[column] = values if self._taken is None else values[self._taken]
        return self._values[column]

    def missing(self, column: str) -> np.ndarray | None:
        """Where the column's values (of the rows taken) are NaN; None where none is."""
        if column not in self._missing:
            values = self.values(column)
            # a NaN anywhere makes the minimum NaN: the mask (an array a row) only then
            missing = np.isnan(values) if len(values) and np.isnan(values.min()) else None
            self._missing[column] = missing if missing is not None and missing.any() else None
        return self._missing[column]

    def _by_pandas(self, column: str) -> Any:
        categories = pd.RangeIndex(len(self._req["run"].cat.categories))
        run = pd.Categorical.from_codes(self.row_codes, categories=categories, validate=False)
        values = pd.Series(self.values(column), copy=False)
        return values.groupby(pd.CategoricalIndex(run), observed=False)

    def reduce(self, column: str, how: str, min_count: int = 0) -> np.ndarray:
        """pandas' group-by `how` ("sum", "mean", "min" or "max") of the column, a value a run."""
        values = self.values(column)
        if not len(self.codes):
            return np.zeros(0)
        if self.missing(column) is not None:
            grouped = self._by_pandas(column)
            figures = grouped.sum(min_count=min_count) if how == "sum" else getattr(grouped, how)()
            return np.asarray(figures.to_numpy(dtype=np.float64)[self.codes])
        ufunc = {"sum": np.add, "mean": np.add, "min": np.minimum, "max": np.maximum}[how]
        key = (column, ufunc)
        if key not in self._reduced:  # a column's sum serves its mean too (read only)
            self._reduced[key] = ufunc.reduceat(values, self.starts)
        out = self._reduced[key]
        return out / self.sizes.astype(np.float64) if how == "mean" else out

    def std(self, column: str) -> np.ndarray:
        """pandas' group-by standard deviation (ddof 0) of the column, a value a run."""
        if not len(self.codes):
            return np.zeros(0)
        if self.missing(column) is None:
            low, high = self.reduce(column, "min"), self.reduce(column, "max")
            if (low == high).all() and np.isfinite(low).all():
                # each run's values one finite number (outputs of one forced length): pandas'
                # Welford loop adds (value − mean) × (value − mean before) = 0 × finite, a
                # zero, to a sum that starts at +0.0, and takes √(+0.0 ÷ count) = +0.0
                return np.zeros(len(self.codes))
        figures = self._by_pandas(column).std(ddof=0)
        return np.asarray(figures.to_numpy(dtype=np.float64)[self.codes])

    def count(self, column: str) -> np.ndarray:
        """How many of the column's values are not NaN, a count a run."""
        missing = self.missing(column)
        if missing is None:
            return self.sizes
        categories = len(self._req["run"].cat.categories)
        counts = np.bincount(self.row_codes[~missing], minlength=categories)
        return np.asarray(counts[self.codes], dtype=np.int64)

    def medians(self, column: str) -> np.ndarray:
        """pandas' group-by median of the column, a value a run."""
        return medians_by_code(self.values(column), self.row_codes, self.starts)


def _request_aggregates_by_group_by(req: pd.DataFrame) -> pd.DataFrame:
    """`request_aggregates` of any request rows, by pandas' group-by."""
    every_ok = bool(req["ok"].all())
    # the same rows in the same order give the same figures: one group-by where all succeeded
    ok = req if every_ok else req[req["ok"]]
    g = req.groupby("run", observed=True)
    gok = g if every_ok else ok.groupby("run", observed=True)
    ok_counts = gok.size()
    ok_codes = ok["run"].cat.codes.to_numpy()

    def median(column: str) -> pd.Series:
        return pd.Series(medians_by_code(ok[column].to_numpy(), ok_codes), index=ok_counts.index)

    agg = pd.DataFrame(
        {
            "requests": g.size(),
            "ok": ok_counts,
            "output_tokens": gok["output_tokens"].sum(min_count=1),
            "t0": g["t_send"].min(),
            "t1": g["t_end"].max(),
            "sum_reported_tps": gok["reported_tps"].sum(min_count=1),
            "median_ttft_s": median("ttft"),
            "median_decode_tps": median("decode_tps"),
            "median_e2e_s": median("e2e"),
            "sum_e2e": g["e2e"].sum(min_count=1),
            "out_min": gok["output_tokens"].min(),
            "out_max": gok["output_tokens"].max(),
            "out_mean": gok["output_tokens"].mean(),
            "out_std": gok["output_tokens"].std(ddof=0),
            "send_spread_s": g["t_send"].max() - g["t_send"].min(),
            "prompt_tokens_total": g["prompt_tokens"].sum(min_count=1),
            "prompt_tokens_mean": g["prompt_tokens"].mean(),
            "n_send": g["t_send"].count(),
            "n_first": g["t_first"].count(),
            "n_end": gok["t_end"].count(),
            "n_reported": gok["reported_tps"].count(),
        }
    )
    agg.index = agg.index.astype(str)
    decoding = ok.dropna(subset=["t_first", "t_end"])
    codes = decoding["run"].cat.codes.to_numpy()
    names = decoding["run"].cat.categories.astype(str)
    union = union_length(codes, decoding["t_first"].to_numpy(), decoding["t_end"].to_numpy())
    union.index = names[union.index.to_numpy()]
    every_decoding = len(decoding) == len(ok)
    total = (gok if every_decoding else decoding.groupby("run", observed=True))["decode_s"].sum()
    total.index = total.index.astype(str)
    agg["decode_total_s"] = total.reindex(agg.index)
    agg["decode_union_s"] = union.reindex(agg.index)
    return agg


def _values(column: pd.Series) -> Any:
    """A column's values as a numpy array where pandas holds them as one (numbers, flags),
    else the column itself: the arithmetic below gives the same values and types on both."""
    return column.to_numpy() if column.dtype.kind in "fiub" else column


def run_stats(tables: Tables) -> pd.DataFrame:
    """One row per run: the recomputed figures every rule and report reads.

    The columns are computed as arrays and the frame is made once: building it column by
    column cost more than the figures themselves on a small trace (and the test suite audits
    hundreds)."""
    req = tables.requests
    index = pd.Index([str(r) for r in tables.runs["run"]], name="run")
    n = len(index)
    cols: dict[str, Any] = {c: np.full(n, np.nan) for c in STAT_COLUMNS}
    cols["prefill_rate_source"] = np.full(n, None, dtype=object)
    for flag in FLAG_COLUMNS:
        cols[flag] = np.zeros(n, dtype=bool)
    # a run without request rows (a recording killed before its first answer) has none: 0
    cols["requests"] = np.zeros(n)
    cols["ok"] = np.zeros(n)
    cols["failed"] = np.zeros(n)
    # the rows' figures per run: from the whole table, or computed a run at a time by a
    # streamed audit (reporter.stream.audit) whose rows are not in memory together
    agg = (
        tables.store.request_aggregates
        if tables.store is not None and tables.request_count()
        else request_aggregates(req)
        if len(req)
        else None
    )
    if agg is not None:
        agg = agg.reindex(index)
        a = {str(c): _values(agg[c]) for c in agg.columns}
        for col in (
            "requests",
            "ok",
            "output_tokens",
            "t0",
            "t1",
            "sum_reported_tps",
            "median_ttft_s",
            "median_decode_tps",
            "median_e2e_s",
            "out_min",
            "out_max",
            "out_mean",
            "send_spread_s",
            "prompt_tokens_total",
            "prompt_tokens_mean",
        ):
            cols[col] = a[col]
        requests, ok = (pd.Series(a[c]).fillna(0) for c in ("requests", "ok"))
        cols["requests"], cols["ok"] = _values(requests), _values(ok)
        cols["failed"] = cols["requests"] - cols["ok"]
        n_first, n_end = a["n_first"], a["n_end"]
        cols["has_send"] = np.asarray(a["n_send"] == a["requests"], dtype=bool)
        cols["has_first"] = np.asarray((n_first > 0) & (n_first >= a["ok"]), dtype=bool)
        # failed requests may end without a time; the successful ones must all have one
        cols["has_end"] = np.asarray((n_end > 0) & (n_end == a["ok"]), dtype=bool)
        cols["has_reported"] = np.asarray(a["n_reported"] > 0, dtype=bool)
        with np.errstate(all="ignore"):  # as pandas: inf and NaN, no warning
            cols["out_cv"] = a["out_std"] / a["out_mean"]
            cols["wall_s"] = cols["t1"] - cols["t0"]
            cols["aggregate_tps"] = cols["output_tokens"] / cols["wall_s"]
            cols["in_flight"] = a["sum_e2e"] / cols["wall_s"]
            overlap = a["decode_total_s"] / a["decode_union_s"]
        cols["overlap"] = np.where(a["decode_union_s"] > 0, overlap, np.nan)
    stats = pd.DataFrame(cols, index=index, columns=list(STAT_COLUMNS))
    _apply_summaries(tables, stats)
    rate, source, bound = _prefill_rates(tables, stats)
    prompt = stats["prompt_tokens_total"].to_numpy(dtype="float64")
    wall = stats["wall_s"].to_numpy(dtype="float64")
    with np.errstate(all="ignore"):  # as pandas: inf and NaN, no warning
        # no prompt tokens (llama-bench's tg tests): no prefill, whatever the rate
        prefill_s = np.where(prompt == 0, 0.0, prompt / rate)
        prefill_share = prefill_s / wall
        # prompt tokens ÷ wall: a prompt-processing test's own figure (llama-bench pp512)
        prompt_tps = np.where(prompt > 0, prompt / wall, np.nan)
    no_wall = wall <= 0
    prefill_share[no_wall] = np.nan
    # nothing completed: the prompt tokens counted (of completed requests, as vLLM and
    # SGLang count them) say nothing of the time spent on the failed requests' prompts
    none_done = stats["ok"].to_numpy(dtype="float64") == 0
    prefill_s[none_done] = np.nan
    prefill_share[none_done] = np.nan
    prompt_tps[no_wall] = np.nan
    stats["prefill_rate"] = rate
    stats["prefill_rate_source"] = pd.Series(source, index=stats.index, dtype=object)
    stats["prefill_rate_bound"] = bound
    stats["prefill_s"] = prefill_s
    stats["prefill_share"] = prefill_share
    stats["prompt_tps"] = prompt_tps
    _prompt_only_runs_have_no_output_rate(tables, stats)
    if no_wall.any():
        stats.loc[no_wall, ["aggregate_tps", "in_flight"]] = np.nan
    return stats


def _prompt_only_runs_have_no_output_rate(tables: Tables, stats: pd.DataFrame) -> None:
    """A prompt-processing test generates nothing: its output rate is not 0 tok/s but not
    measured; its figure is `prompt_tps`."""
    if "phase" not in tables.runs:
        return
    prompt_only = [str(r) for r in tables.runs.loc[tables.runs["phase"] == "prompt", "run"]]
    if prompt_only:
        stats.loc[prompt_only, "aggregate_tps"] = np.nan


def _at(stats: pd.DataFrame, run_id: str, column: str) -> float:
    return number_or_nan(stats.at[run_id, column])


def _apply_summaries(tables: Tables, stats: pd.DataFrame) -> None:
    """Fill figures from a tool's summary: all of them for a run without request rows, and
    only the missing ones (wall clock, Σ latency, TTFT, decode) for a run whose request rows
    carry no times (vLLM without start_times, LLMPerf); never over per-request figures."""
    if "summary" not in tables.runs:
        return
    for raw_id, summary in zip(tables.runs["run"], tables.runs["summary"], strict=True):
        run_id = str(raw_id)
        if not summary:
            continue
        only = not _at(stats, run_id, "requests") > 0
        if only:
            stats.at[run_id, "from_summary"] = True

        def put(
            col: str,
            key: str,
            summary: dict[str, Any] = summary,
            run_id: str = run_id,
            only: bool = only,
        ) -> None:
            value = finite(summary.get(key))
            if value is None:
                return
            if only or np.isnan(_at(stats, run_id, col)):
                stats.at[run_id, col] = value

        put("requests", "requests")
        put("output_tokens", "output_tokens")
        put("wall_s", "wall_s")
        put("sum_reported_tps", "sum_reported_tps")
        put("median_ttft_s", "median_ttft_s")
        put("out_mean", "mean_output_tokens")
        put("out_min", "min_output_tokens")
        put("out_max", "max_output_tokens")
        put("prompt_tokens_total", "prompt_tokens")
        put("prompt_tokens_mean", "mean_prompt_tokens")
        if only:
            failed = summary.get("failed")
            # an unknown failure count stays unknown (NaN), not zero
            stats.at[run_id, "failed"] = np.nan if failed is None else float(failed)
            stats.at[run_id, "ok"] = _at(stats, run_id, "requests") - float(failed or 0)
        wall = _at(stats, run_id, "wall_s")
        if wall > 0:
            if only or np.isnan(_at(stats, run_id, "aggregate_tps")):
                stats.at[run_id, "aggregate_tps"] = _at(stats, run_id, "output_tokens") / wall
            if summary.get("sum_latency_s") is not None and (
                only or np.isnan(_at(stats, run_id, "in_flight"))
            ):
                stats.at[run_id, "in_flight"] = float(summary["sum_latency_s"]) / wall
        # the median request's decode rate is 1 ÷ the median TPOT; the mean TPOT stands in
        # only where the tool gives no median (llama-bench: one sequence, or B in lockstep,
        # whose mean and median are one)
        tpot = summary.get("median_tpot_s") or summary.get("mean_tpot_s")
        if tpot and (only or np.isnan(_at(stats, run_id, "median_decode_tps"))):
            stats.at[run_id, "median_decode_tps"] = 1.0 / float(tpot)
