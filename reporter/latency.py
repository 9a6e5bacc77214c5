"""Latency percentiles per run, as every load-testing tool reports them: TTFT, ITL, TPOT, e2e.

- TTFT: ``t_first − t_send``, the wait for the first token (queue + prefill).
- ITL: the gaps between consecutive streamed chunks of a request (``token_times``). Where a
  chunk carries several tokens this is an inter-*chunk* latency, as in vLLM's and AIPerf's
  files; TPOT is the per-token figure.
- TPOT: ``(t_end − t_first) ÷ (output_tokens − 1)``, the mean time per output token after the
  first (vLLM's convention).
- e2e: ``t_end − t_send``.

Only successful requests count. Percentiles are p50, p90 and p99 (linear interpolation),
computed for all runs at once: the chunk times read in place a chunk of rows at a time, and
each run's values of each metric partitioned around the positions read.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from reporter.values import finite_number

PERCENTILES = (50, 90, 99)
METRICS = ("ttft_s", "itl_s", "tpot_s", "e2e_s")


def _chunk_lists(times: pd.Series) -> list[tuple[np.ndarray, np.ndarray]]:
    """The chunk times column as (offsets, values) pieces covering its rows in order: row i of
    a piece has the times values[offsets[i]:offsets[i + 1]] (a missing row may have any; the
    caller leaves it out). Arrow lists are read in place, a chunk at a time, not copied."""
    if isinstance(times.dtype, pd.ArrowDtype):
        chunked = pa.chunked_array(times.array._pa_array)
        if pa.types.is_list(chunked.type) or pa.types.is_large_list(chunked.type):
            # offsets index the whole child array (`values`), whatever the chunk's own slice
            return [
                (np.asarray(c.offsets), np.asarray(c.values, dtype="float64"))
                for c in chunked.chunks
            ]
    present = times.notna().to_numpy()
    # lists or numpy arrays per row: one concatenation (100× faster than via lists)
    arrays = [
        np.asarray(t, dtype="float64").ravel() if here else np.zeros(0)
        for t, here in zip(times, present, strict=True)
    ]
    sizes = np.fromiter((len(a) for a in arrays), dtype=np.int64, count=len(arrays))
    offsets = np.concatenate(([0], np.cumsum(sizes)))
    return [(offsets, np.concatenate(arrays) if arrays else np.zeros(0))]


def _gaps(requests: pd.DataFrame, kept: np.ndarray, codes: np.ndarray) -> dict[int, np.ndarray]:
    """Every gap between consecutive chunk times of one request, for the `kept` rows with chunk
    times, per run code: the run's gaps in row order, with a NaN in place of each gap that
    spans two requests or is a left-out request's (the percentiles leave NaN out anyway:
    marking a few costs less than copying all the others).

    A chunk of rows at a time: the gaps of all its times at once, written where they go in
    their run's array (a run's gaps may be a hundred megabytes: a copy per chunk and then a
    joined one cost their page faults twice); a chunk of one run's rows (the usual case)
    has no label per gap."""
    times = requests["token_times"]
    if _all_none(times):  # a trace without chunk times: no gap (pandas' check is 7× slower)
        return {}
    kept = kept & times.notna().to_numpy()
    if not kept.any():
        return {}
    # first the size of each run's gaps, then the gaps in place
    chunks = []
    sizes: dict[int, int] = {}
    row = 0
    for offsets, values in _chunk_lists(times):
        rows = slice(row, row + len(offsets) - 1)
        row = rows.stop
        first, last = int(offsets[0]), int(offsets[-1])
        if last - first < 2 or not kept[rows].any():
            continue
        lengths = np.maximum(np.diff(offsets), 0)
        labels = codes[rows]
        each = None if (labels == labels[0]).all() else np.repeat(labels, lengths)[:-1]
        if each is None:
            sizes[int(labels[0])] = sizes.get(int(labels[0]), 0) + last - first - 1
        else:
            for label, count in zip(*np.unique(each, return_counts=True), strict=True):
                sizes[int(label)] = sizes.get(int(label), 0) + int(count)
        chunks.append((rows, offsets, values, lengths, each))
    gaps = {label: np.empty(size) for label, size in sizes.items()}
    filled = dict.fromkeys(sizes, 0)
    for rows, offsets, values, lengths, each in chunks:
        first, last = int(offsets[0]), int(offsets[-1])
        if each is None:
            label = int(codes[rows.start])
            at = filled[label]
            filled[label] += last - first - 1
            # np.diff's own subtraction, into the run's array
            out = np.subtract(
                values[first + 1 : last],
                values[first : last - 1],
                out=gaps[label][at : filled[label]],
            )
        else:
            out = np.diff(values[first:last])
        if not kept[rows].all():
            out[~np.repeat(kept[rows], lengths)[:-1]] = np.nan
        # the gap from each request's last time to the next request's first
        ends = offsets[1:][lengths > 0] - 1 - first
        out[ends[ends < len(out)]] = np.nan
        if each is None:
            continue
        order = np.argsort(each, kind="stable")
        each, out = each[order], out[order]
        bounds = [0, *(np.flatnonzero(np.diff(each)) + 1).tolist(), len(each)]
        for a, b in itertools.pairwise(bounds):
            label = int(each[a])
            gaps[label][filled[label] : filled[label] + b - a] = out[a:b]
            filled[label] += b - a
    return gaps


def _all_none(column: pd.Series) -> bool:
    """Whether every row of the column is None. An array of Python objects holds a pointer
    per row, and None is one object: its rows all are when every pointer is None's (read as
    whole numbers at once, where a test of each row takes a call per row)."""
    if column.dtype != object or not isinstance(column.array, pd.arrays.NumpyExtensionArray):
        return False
    return bool((_pointers(column.to_numpy()) == id(None)).all())


class _PointerView:
    """The memory of an array of Python objects described as whole numbers, one a pointer
    (numpy will not view an object array as another type, and a copy costs its page faults:
    eight bytes a row)."""

    def __init__(self, objects: np.ndarray) -> None:
        self.objects = objects  # kept alive while the view is read
        interface = {**objects.__array_interface__, "typestr": np.dtype(np.uintp).str}
        del interface["descr"]
        interface["data"] = (interface["data"][0], True)  # read only
        self.__array_interface__ = interface


def _pointers(objects: np.ndarray) -> np.ndarray:
    """The pointer each element of an object array holds, read in place (as
    `np.frombuffer(objects.tobytes(), dtype=np.uintp)` holds them, without the copy)."""
    return np.asarray(_PointerView(objects))


def percentiles(values: np.ndarray, percents: Sequence[float]) -> np.ndarray:
    """``np.percentile(values, percents)`` of float values, bit for bit, read from one
    partition per position read (`_select`). A NaN makes every percentile NaN, as in numpy
    (the one a sort puts last)."""
    if not len(values) or _both_zeros(values):
        return np.asarray(np.percentile(values, percents))
    if np.isnan(values).any():
        return np.full(len(percents), np.sort(values)[-1])
    return _selected_percentiles(values.copy(), len(values), percents)


def _selected_percentiles(values: np.ndarray, count: int, percents: Sequence[float]) -> np.ndarray:
    """np.percentile's figures of the `count` smallest values (the others NaN, which a
    partition puts last), the values partitioned in place at the positions read."""
    below, above, weight = _percentile_points(count, percents)
    _select(values, np.union1d(below, above))
    return _interpolate(values[below], values[above], weight)


def _select(values: np.ndarray, positions: np.ndarray, nan_free: bool = False) -> None:
    """Put the value of each sorted position (ascending, unique) where a sort would, in place
    (`nan_free`: the values hold no NaN).

    np.percentile partitions the values around all its positions at once, which costs more
    than a sort (for p50, p90 and p99: six positions); one partition around a single
    position costs a fifth of a sort, and the ones after it only part the values above it,
    so the whole costs about half a sort."""
    done = 0
    for position in positions.tolist():
        rest = values[done:]
        if nan_free and position == done and len(rest) > 1:
            # the least of the rest (the position after a percentile's lower one): a partition
            # around the first value compares them one by one, argmin 10× faster (a NaN,
            # which argmin would take for the least, goes last in a partition)
            least = int(rest.argmin())
            rest[0], rest[least] = rest[least], rest[0]
        else:
            rest.partition(position - done)
        done = position + 1


def _both_zeros(values: np.ndarray) -> bool:
    """Whether 0.0 and -0.0 are both among the values. Equal values are the same bits but
    for these two; with both, which of them np.percentile's partition lands on depends on
    the values' order, and only np.percentile itself gives its answer."""
    zeros = values == 0
    if not zeros.any():  # the usual case: no zero to take out
        return False
    signs = np.signbit(values[zeros])
    return bool(signs.any() and not signs.all())


def _percentile_points(
    count: int, percents: Sequence[float]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Where np.percentile (linear) reads each percentile of `count` sorted values: the index
    below and above its virtual index (n - 1) * q (both the last one from the last value on)
    and the weight between them, in numpy's own arithmetic (the weight from the last value
    on is measured from index -1, as numpy measures it)."""
    virtual = (count - 1) * np.true_divide(percents, 100)
    at_end = virtual >= count - 1
    floor = np.floor(virtual)
    following = floor + 1
    floor[at_end] = -1
    following[at_end] = -1
    weight = np.asarray(virtual - floor.astype(np.intp), dtype=virtual.dtype)
    floor[at_end] = following[at_end] = count - 1
    return floor.astype(np.intp), following.astype(np.intp), weight


def _interpolate(low: np.ndarray, high: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """numpy's linear interpolation between the values below and above each percentile: from
    the lower one below a weight of 1/2, from the upper one above (numpy's _lerp)."""
    step = high - low
    result: np.ndarray = np.add(low, step * weight)
    np.subtract(high, step * (1 - weight), out=result, where=weight >= 0.5)
    return result


#: Where the percentiles of so many values are read: below, above, weight and the positions
#: partitioned around (`_percentile_points`, and their union).
Points = dict[int, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]


def _percentiles(
    values: np.ndarray,
    labels: np.ndarray,
    percents: list[float],
    in_order: bool,
    points: Points | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """np.percentile's figures (linear, as pandas' quantile) of ``values`` (this call's own,
    without NaN, partitioned in place) per label: the labels in ascending order and a row of
    figures each. One stable sort by label unless `in_order` says the labels ascend already,
    then each label's slice read as `percentiles` reads it (5× faster than a group-by
    quantile). `points`: the points read for each count of values so far, of these
    `percents` (filled in as it goes)."""
    if not in_order:
        order = np.argsort(labels, kind="stable")
        values, labels = values[order], labels[order]
    # each label's rows: where it starts among the sorted labels (a search per label in the
    # labels' range, not a pass over every row), kept when it has any; the labels searched
    # for in the labels' own type, which numpy would otherwise convert every row to
    every_label = np.arange(int(labels[0]), int(labels[-1]) + 1, dtype=labels.dtype)
    edges = np.append(np.searchsorted(labels, every_label), len(labels))
    present = edges[1:] > edges[:-1]
    starts, stops = edges[:-1][present].tolist(), edges[1:][present].tolist()
    # with no run holding both zeros, none needs the check (a pass over each run's values)
    any_both_zeros = _both_zeros(values)
    points = {} if points is None else points
    rows = []
    for start, stop in zip(starts, stops, strict=True):
        part = values[start:stop]
        if any_both_zeros and _both_zeros(part):
            rows.append(np.asarray(np.percentile(part, percents)))
            continue
        count = stop - start
        if count not in points:  # runs of one size read the same positions
            below, above, weight = _percentile_points(count, percents)
            points[count] = (below, above, weight, np.union1d(below, above))
        below, above, weight, positions = points[count]
        _select(part, positions, nan_free=True)
        rows.append(_interpolate(part[below], part[above], weight))
    return every_label[present], np.asarray(rows, dtype=np.float64)


def _percentiles_of(parts: dict[int, np.ndarray], qs: list[float]) -> pd.DataFrame:
    """`_gap_percentiles` as a table: a row per label, a column per quantile."""
    labels, rows = _gap_percentiles(parts, [q * 100 for q in qs])
    return pd.DataFrame(list(rows), index=labels, columns=qs)


def _gap_percentiles(
    parts: dict[int, np.ndarray], percents: list[float]
) -> tuple[np.ndarray, np.ndarray]:
    """Percentiles (as `_percentiles`) of each label's values (this call's own arrays, taken
    as it goes), without the NaN ones: the labels with any in ascending order, and a row of
    figures each.

    A run's gaps are many and mostly near one value: partitioned in place at the points
    read (NaN goes last), not sorted, they cost least."""
    rows, labels = [], []
    for label in sorted(parts):
        values = parts.pop(label)
        count = len(values) - int(np.count_nonzero(np.isnan(values)))
        if not count:
            continue
        if _both_zeros(values):
            rows.append(np.percentile(values[~np.isnan(values)], percents))
        else:
            rows.append(_selected_percentiles(values, count, percents))
        labels.append(label)
    return np.asarray(labels, dtype=np.int64), np.asarray(rows, dtype=np.float64)


#: The latency table's columns, `<metric>_p<q>`, in order.
COLUMNS = [f"{m.removesuffix('_s')}_p{p}" for m in METRICS for p in PERCENTILES]


def latency_table(requests: pd.DataFrame) -> pd.DataFrame:
    """One row per run; columns ``<metric>_p<q>`` in seconds (NaN where unknown)."""
    if not isinstance(requests["run"].dtype, pd.CategoricalDtype):
        requests = requests.assign(run=requests["run"].astype(str).astype("category"))
    # the successful rows' columns, not the frame (whose chunk times filtered cost a copy)
    ok = requests["ok"].to_numpy(dtype=bool) if "ok" in requests else np.ones(len(requests), bool)
    every = bool(ok.all())

    def successful(column: np.ndarray) -> np.ndarray:
        """The successful rows' values (the column itself when all are: only read)."""
        return column if every else column[ok]

    all_codes = requests["run"].cat.codes.to_numpy()
    codes = successful(all_codes)
    names = np.asarray(requests["run"].cat.categories.astype(str))
    send, first, end = (successful(requests[c].to_numpy()) for c in ("t_send", "t_first", "t_end"))
    tokens = successful(requests["output_tokens"].to_numpy())
    # a run's rows together, as a trace lists them, need no sort; nor do any of them
    in_order = len(codes) < 2 or not bool((codes[1:] < codes[:-1]).any())
    floats = all(c.dtype == np.float64 for c in (send, first, end, tokens))
    # the float columns of runs in order: each metric a block of whole runs at a time
    # (_run_blocks), in one array that holds each block in turn; else one array of the
    # successful rows holds each metric in turn (the percentiles partition it in place, or
    # take the rows they keep): one per metric would cost its page faults
    blocks = _run_blocks(codes) if floats and in_order else [(0, len(codes))]
    buffer = np.empty(max(stop - start for start, stop in blocks)) if floats else None

    def metric(name: str, rows: slice) -> np.ndarray:
        """The metric of the successful rows `rows` (in `buffer`, when the columns are
        floats)."""
        out = None if buffer is None else buffer[: rows.stop - rows.start]
        if name == "ttft_s":
            return np.asarray(np.subtract(first[rows], send[rows], out=out))
        if name == "e2e_s":
            return np.asarray(np.subtract(end[rows], send[rows], out=out))
        with np.errstate(invalid="ignore", divide="ignore"):
            steps = tokens[rows] - 1.0
            if out is None:
                return np.where(steps >= 1, (end[rows] - first[rows]) / steps, np.nan)
            # the decode time ÷ the steps after the first token, NaN where there is none
            np.subtract(end[rows], first[rows], out=out)
            np.divide(out, steps, out=out)
            out[~(steps >= 1)] = np.nan
        return out

    percents = [p / 100 * 100 for p in PERCENTILES]  # the quantiles' figures, as pandas has them
    points: Points = {}  # runs of one size read the same positions, whatever the metric
    found: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # metric → labels, figures
    for name in METRICS:
        if name == "itl_s":
            labels, rows = _gap_percentiles(_gaps(requests, ok, all_codes), percents)
            if not len(labels):
                continue
            found[name] = labels, rows
            continue
        # each block's runs: the values they have in one array of every row, in its order
        labels_found, rows_found = [], []
        for start, stop in blocks:
            values, labels = metric(name, slice(start, stop)), codes[start:stop]
            unknown = np.isnan(values)
            missing = int(np.count_nonzero(unknown))
            if missing == len(values):
                continue
            if missing:
                values, labels = values[~unknown], labels[~unknown]
            labels, rows = _percentiles(values, labels, percents, in_order, points)
            labels_found.append(labels)
            rows_found.append(rows)
        if len(labels_found) == 1:
            found[name] = labels_found[0], rows_found[0]
        elif labels_found:
            found[name] = np.concatenate(labels_found), np.concatenate(rows_found)
    return _table(found, names)


#: The most rows whose metric is computed at once (a block of whole runs; a larger run is a
#: block alone): their values stay in the processor's cache from the subtraction to the
#: percentiles, where the values of every row would go to memory and back for each pass.
BLOCK_ROWS = 1 << 16


def _run_blocks(codes: np.ndarray) -> list[tuple[int, int]]:
    """Row ranges (start, stop) covering ascending `codes` in order, each of whole runs (rows
    of one code): the runs that start within one stretch of BLOCK_ROWS rows. One block when
    there are no rows."""
    if not len(codes):
        return [(0, 0)]
    starts = np.concatenate(([0], np.flatnonzero(codes[1:] != codes[:-1]) + 1))
    stretch = starts // BLOCK_ROWS
    firsts = starts[np.concatenate(([True], stretch[1:] != stretch[:-1]))].tolist()
    return list(itertools.pairwise([*firsts, len(codes)]))


def _table(found: dict[str, tuple[np.ndarray, np.ndarray]], names: np.ndarray) -> pd.DataFrame:
    """The latency table of the figures `found` per metric (labels: positions in `names`): a
    row per name in its order, NaN where a metric has no figure for it."""
    if found and all(labels.min() >= 0 for labels, _ in found.values()):
        # figures written where they go at once: what the table of each metric, joined and
        # reindexed, holds (its columns float, NaN where unknown), without pandas aligning
        # a dozen columns; names of two runs alike (that alignment refuses) take that path
        index = pd.Index(names)
        if index.is_unique:
            figures = np.full((len(names), len(COLUMNS)), np.nan)
            for name, (labels, rows) in found.items():
                at = METRICS.index(name) * len(PERCENTILES)
                figures[labels, at : at + len(PERCENTILES)] = rows
            return pd.DataFrame(figures, index=index, columns=COLUMNS)
    columns = {}
    qs = [p / 100 for p in PERCENTILES]
    for name, (labels, rows) in found.items():
        table = pd.DataFrame(list(rows), index=names[labels], columns=qs)
        for p, q in zip(PERCENTILES, qs, strict=True):
            columns[f"{name.removesuffix('_s')}_p{p}"] = table[q]
    frame = pd.DataFrame(columns)
    runs = names  # every run with a request, successful or not
    return frame.reindex(index=runs, columns=COLUMNS)


def run_latency(table: pd.DataFrame, run_id: str) -> dict[str, dict[str, Any]]:
    """``{"ttft_s": {"p50": …, "p90": …, "p99": …}, "itl_s": …}`` for one run (None = unknown)."""
    out: dict[str, dict[str, Any]] = {}
    has = run_id in table.index
    for metric in METRICS:
        short = metric.removesuffix("_s")
        out[metric] = {}
        for p in PERCENTILES:
            value = float(table.at[run_id, f"{short}_p{p}"]) if has else np.nan  # type: ignore[arg-type]
            out[metric][f"p{p}"] = None if np.isnan(value) else value
    return out


def with_summary(
    latency: dict[str, dict[str, Any]], summary: dict[str, Any]
) -> tuple[dict[str, dict[str, Any]], str | None]:
    """A run's percentiles and where they come from: its request rows' ("requests") when any
    is known, else the ones its tool states in the summary (`<metric>_p<q>_s`: "summary"),
    else none (None). The two are never mixed in one run: they are not the same sample."""
    if any(v is not None for q in latency.values() for v in q.values()):
        return latency, "requests"
    stated = {
        metric: {
            f"p{p}": finite_number(summary.get(f"{metric.removesuffix('_s')}_p{p}_s"))
            for p in PERCENTILES
        }
        for metric in METRICS
    }
    if any(v is not None for q in stated.values() for v in q.values()):
        return stated, "summary"
    return latency, None


def batch_ttft(source: str | None, summary: dict[str, Any]) -> float | None:
    """The one time to first token of a run prefilled as one batch (summary `batch_ttft_s`),
    when its requests' own TTFTs are unknown (`source` is not "requests"); else None. It is a
    timing of the whole batch, not a percentile: shown beside the percentiles, never as one."""
    return None if source == "requests" else finite_number(summary.get("batch_ttft_s"))


def run_latencies(table: pd.DataFrame) -> dict[str, dict[str, dict[str, Any]]]:
    """`run_latency` of every run of the table, read at once (a pandas look-up per figure
    cost more than the verdict's own work per run on a sweep of thousands of runs); a run
    not in the table is not in the answer."""
    names = [f"{m.removesuffix('_s')}_p{p}" for m in METRICS for p in PERCENTILES]
    if not all(name in table.columns for name in names):
        return {}  # a table with no figures (a streamed audit's, no request rows): no run
    rows = table[names].to_numpy(dtype="float64").tolist()
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for run_id, row in zip(table.index, rows, strict=True):
        values = iter(row)
        out[run_id] = {
            metric: {f"p{p}": None if math.isnan(v := next(values)) else v for p in PERCENTILES}
            for metric in METRICS
        }
    return out
