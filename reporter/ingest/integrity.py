"""Integrity of the rows every adapter makes, checked in one place for all formats.

An adapter checks the fields of its own records; what it cannot see alone is checked here,
on the canonical rows, column-wise (a million rows cost a few numpy passes, no loop per row):

- each run is defined once in a file, and each request id appears once in its run (a record
  written three times must not count three times);
- the times are in order: first token and end not before the send, end not before the first
  token, every time finite, and the differences the figures are made of finite too (two
  finite times far apart overflow to an infinite wall clock);
- no whole number in a run's record (its settings and what the tool stated beside them)
  lies beyond ±(2^63 − 1), which the native reader refuses: a file another tool wrote must
  not audit while the same run written natively by `convert` is refused;
- for the same reason, what an adapter read into a run is what a native run record may hold
  (a concurrency of 0 is no setting any run had).

A violation is a `path:line` problem: the file is refused, or with `--lenient` the row is
dropped and counted in the file's skipped rows. It never reaches a verdict.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from reporter.adapters.native import NAME as NATIVE
from reporter.convert import run_record
from reporter.errors import MAX_SHOWN_PROBLEMS, Problem, TraceError
from reporter.ingest.limits import MAX_JSON_DEPTH
from reporter.ingest.validate import validator, word_error
from reporter.runfields import RUN_FIELDS
from reporter.table import COUNT_COLUMNS, SUMMARY_KEYS, Partial
from reporter.values import MAX_INT64

#: Problems worded per check (all are counted); the CLI shows the first MAX_SHOWN_PROBLEMS.
WORDED_PER_CHECK = 5 * MAX_SHOWN_PROBLEMS
TIME_COLUMNS = ("t_send", "t_first", "t_end")
#: Durations a tool measured for requests without absolute times (LLMPerf lists).
DURATION_COLUMNS = ("ttft", "e2e")


@dataclass
class Found:
    """Rows failing one check: a mask over the rows, and the wording of the first ones."""

    reason: str
    mask: np.ndarray
    problems: list[Problem] = field(default_factory=list)


def _time(value: float) -> str:
    return f"{value:.6g} s" if np.isfinite(value) else str(value)


def _where(requests: pd.DataFrame, mask: np.ndarray) -> pd.DataFrame:
    """The first worded rows of a mask."""
    return requests.loc[mask].head(WORDED_PER_CHECK)


def _word(
    requests: pd.DataFrame, mask: np.ndarray, reason: str, message: str, expected: str
) -> Found:
    """One problem per failing row (the first ones), its message formatted with the row's
    times (`{t_send}`, `{t_first}`, `{t_end}`, `{run}`)."""
    problems = []
    for _, row in _where(requests, mask).iterrows():
        values = {c: _time(float(row[c])) for c in TIME_COLUMNS + DURATION_COLUMNS if c in row}
        problems.append(
            Problem(
                str(row["source_path"]),
                int(row["source_line"]),
                message.format(run=row["run"], **values),
                expected,
            )
        )
    return Found(reason, mask, problems)


#: Rows hashed at a time by _string_hashes (its temporary arrays are ~40 bytes a byte of text).
HASH_BLOCK = 1 << 15
_HASH_MULTIPLIER = np.uint64(0x100000001B3)  # FNV-1's 64-bit prime
_HASH_MIX = np.uint64(0x9E3779B97F4A7C15)


def _string_hashes(values: pa.Array) -> np.ndarray:
    """A 64-bit polynomial hash of each string of an Arrow string array (nulls hash as "")."""
    if not pa.types.is_large_string(values.type):
        values = values.cast(pa.large_string())
    n = len(values)
    out = np.zeros(n, dtype=np.uint64)
    if n == 0:
        return out
    offsets = np.frombuffer(values.buffers()[1], np.int64)[values.offset : values.offset + n + 1]
    data_buffer = values.buffers()[2]
    text = (
        np.frombuffer(data_buffer, np.uint8) if data_buffer is not None else np.zeros(0, np.uint8)
    )
    longest = int(np.diff(offsets).max())
    powers = np.cumprod(np.full(max(longest, 1), _HASH_MULTIPLIER, dtype=np.uint64))
    for begin in range(0, n, HASH_BLOCK):
        starts = offsets[begin : begin + HASH_BLOCK + 1]
        lengths = np.diff(starts)
        first, last = int(starts[0]), int(starts[-1])
        body = text[first:last].astype(np.uint64)
        # each byte's place in its own string
        place = np.arange(last - first, dtype=np.int64) - np.repeat(starts[:-1] - first, lengths)
        filled = lengths > 0
        hashes = np.zeros(len(lengths), dtype=np.uint64)
        if filled.any():
            hashes[filled] = np.add.reduceat(body * powers[place], (starts[:-1] - first)[filled])
        out[begin : begin + len(lengths)] = hashes ^ (lengths.astype(np.uint64) * _HASH_MIX)
    return out


def _arrow_ids(requests: pd.DataFrame) -> pa.ChunkedArray | None:
    """The id column as Arrow strings, without a copy; None where it is not Arrow strings."""
    ids = requests["id"]
    if not (pd.api.types.is_string_dtype(ids.dtype) and ids.dtype != object):
        return None
    try:
        chunked = pa.chunked_array(pa.array(ids.array))
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
        return None
    if not (pa.types.is_string(chunked.type) or pa.types.is_large_string(chunked.type)):
        return None
    return chunked


def _ordered_ids(requests: pd.DataFrame) -> bool:
    """Whether no (run, id) can repeat, told without hashing: each run's rows are together,
    and within a run every id is present and strictly after the one before it, ordered by
    length then bytes (as a recorder numbers them: "r-9", "r-10"). A strict order has no
    two equal ids; other files are told apart by _maybe_duplicates."""
    n = len(requests)
    ids = _arrow_ids(requests)
    if ids is None or ids.null_count:
        return False
    if n < 2:
        return True
    codes = requests["run"].astype("category").cat.codes.to_numpy()
    same_run = codes[1:] == codes[:-1]
    # each run's rows in one stretch: as many runs where the stretches begin as stretches
    begins = np.flatnonzero(np.concatenate(([True], ~same_run)))
    if len(np.unique(codes[begins])) != len(begins):
        return False  # a run's rows in more than one stretch
    lengths = pc.binary_length(ids).to_numpy(zero_copy_only=False)
    after = pc.greater(ids.slice(1), ids.slice(0, n - 1)).to_numpy(zero_copy_only=False)
    longer, as_long = lengths[1:] > lengths[:-1], lengths[1:] == lengths[:-1]
    return bool((~same_run | longer | (as_long & np.asarray(after, dtype=bool))).all())


def _maybe_duplicates(requests: pd.DataFrame) -> np.ndarray | None:
    """Rows whose (run, id) hash is another row's too: a superset of the duplicates, found
    without a hash table of a million strings. None where the ids are not Arrow strings."""
    chunked = _arrow_ids(requests)
    if chunked is None:
        return None
    ids = requests["id"]
    hashes = np.concatenate([_string_hashes(c) for c in chunked.chunks] or [np.zeros(0, np.uint64)])
    run_codes = requests["run"].astype("category").cat.codes.to_numpy().astype(np.uint64)
    with np.errstate(over="ignore"):
        key = hashes ^ ((run_codes + np.uint64(1)) * _HASH_MIX)
    has_id = ids.notna().to_numpy(dtype=bool)
    maybe: np.ndarray = has_id & _repeated(key)
    return maybe


def _repeated(values: np.ndarray) -> np.ndarray:
    """Whether each value occurs more than once: one sort and a comparison of neighbours
    (cheaper than a hash table of a million keys), then a lookup of the few repeated ones."""
    ordered = np.sort(values)
    repeated = ordered[1:][ordered[1:] == ordered[:-1]]
    if not len(repeated):
        return np.zeros(len(values), dtype=bool)
    found: np.ndarray = np.isin(values, np.unique(repeated))
    return found


def duplicate_requests(requests: pd.DataFrame) -> Found:
    """Requests whose (run, id) an earlier row of the file already has; the first is kept."""
    n = len(requests)
    if n == 0 or "id" not in requests:
        return Found("duplicate request id", np.zeros(n, dtype=bool))
    if _ordered_ids(requests):
        return Found("duplicate request id", np.zeros(n, dtype=bool))
    maybe = _maybe_duplicates(requests)
    if maybe is None or maybe.all():
        return _exact_duplicates(requests)
    mask = np.zeros(n, dtype=bool)
    if not maybe.any():
        return Found("duplicate request id", mask)
    # every duplicate and its first occurrence are among the rows that share a hash
    within = _exact_duplicates(requests[maybe])
    mask[maybe] = within.mask
    return Found(within.reason, mask, within.problems)


def _exact_duplicates(requests: pd.DataFrame) -> Found:
    """duplicate_requests by a hash table of the ids themselves."""
    # (run, id) as one integer a row: hashing integers is far cheaper than pairs of strings
    id_codes, id_values = pd.factorize(requests["id"], use_na_sentinel=True)
    run_codes = requests["run"].astype("category").cat.codes.to_numpy().astype(np.int64)
    key = run_codes * (len(id_values) + 1) + id_codes
    has_id = id_codes >= 0
    mask = has_id & pd.Series(key).duplicated(keep="first").to_numpy(dtype=bool)
    found = Found("duplicate request id", mask)
    if not mask.any():
        return found
    worded = _where(requests, mask)
    worded_keys = key[mask][: len(worded)]
    # the first occurrence of each worded key only: a small lookup whatever the file's size
    first = np.flatnonzero(has_id & ~mask & np.isin(key, worded_keys))
    lines = requests["source_line"].to_numpy()
    first_line = dict(zip(key[first].tolist(), lines[first].tolist(), strict=True))
    for (_, row), k in zip(worded.iterrows(), worded_keys.tolist(), strict=True):
        found.problems.append(
            Problem(
                str(row["source_path"]),
                int(row["source_line"]),
                f"request id {row['id']} of run {row['run']} already seen at line {first_line[k]}",
                "each request once",
            )
        )
    return found


def time_order(requests: pd.DataFrame, already: np.ndarray | None = None) -> list[Found]:
    """Rows whose times are impossible; each row is counted under its first failed check
    (rows in `already` were counted by another check)."""
    n = len(requests)
    send, first, end = (requests[c].to_numpy(dtype="float64") for c in TIME_COLUMNS)
    taken = np.zeros(n, dtype=bool) if already is None else already.copy()
    out: list[Found] = []

    def check(mask: np.ndarray, reason: str, message: str, expected: str) -> None:
        nonlocal taken
        if not mask.any():  # the usual answer: no row to word, nothing to take
            return
        mask = mask & ~taken
        if mask.any():
            out.append(_word(requests, mask, reason, message, expected))
            taken |= mask

    with np.errstate(invalid="ignore", over="ignore"):
        # a column's smallest and largest time tell whether any is infinite (the usual
        # answer is no: no mask is made)
        spans = [_span(values) for values in (send, first, end)]
        infinite = [
            np.isinf(values) if np.isinf(span).any() else None
            for values, span in zip((send, first, end), spans, strict=True)
        ]
        for name, mask in zip(TIME_COLUMNS, infinite, strict=True):
            if mask is not None:
                check(
                    mask, "time not finite", f'"{name}" is {{{name}}}', "a finite time in seconds"
                )
        # an infinite time is reported once, above, not again as a span that overflows
        send, first, end = (
            values if mask is None else np.where(mask, np.nan, values)
            for mask, values in zip(infinite, (send, first, end), strict=True)
        )
        spans = [
            span if mask is None else _span(values)
            for mask, span, values in zip(infinite, spans, (send, first, end), strict=True)
        ]
        # a run's wall clock is its last time minus its first: finite for every row; no
        # run's spread can exceed the whole file's: finite there, finite in every run
        latest = np.fmax.reduce([high for _, high in spans]) if n else np.nan
        earliest = np.fmin.reduce([low for low, _ in spans]) if n else np.nan
        check(
            first < send,
            "first token before the send",
            'the first token ("t_first" {t_first}) is before the send ("t_send" {t_send})',
            "the first token at or after the send",
        )
        check(
            end < send,
            "end before the send",
            'the end ("t_end" {t_end}) is before the send ("t_send" {t_send})',
            "the end at or after the send",
        )
        check(
            end < first,
            "end before the first token",
            'the end ("t_end" {t_end}) is before the first token ("t_first" {t_first})',
            "the end at or after the first token",
        )
        # two times differ by at most the file's spread: when it is finite, no difference
        # overflows
        pairs = (
            (("t_first", first), ("t_send", send)),
            (("t_end", end), ("t_send", send)),
            (("t_end", end), ("t_first", first)),
        )
        for (a, x), (b, y) in pairs if not np.isfinite(latest - earliest) else ():
            check(
                np.isinf(x - y),
                "times too far apart",
                f'"{a}" − "{b}" ({{{a}}} − {{{b}}}) overflows to infinity',
                "times whose differences are finite",
            )
        if "ttft" in requests and "e2e" in requests:
            # durations a tool measured without absolute times (LLMPerf lists)
            ttft, e2e = (requests[c].to_numpy(dtype="float64") for c in ("ttft", "e2e"))
            durations = np.concatenate([_span(ttft), _span(e2e)])
            if (durations < 0).any() or np.isinf(durations).any():
                check(
                    np.isinf(ttft) | np.isinf(e2e) | (ttft < 0) | (e2e < 0),
                    "duration not finite",
                    'the durations ("ttft" {ttft}, "e2e" {e2e}) are not finite and at least zero',
                    "finite durations in seconds, at least zero",
                )
            check(
                ttft > e2e,
                "first token after the end",
                'the time to first token ("ttft" {ttft}) is longer than the end-to-end latency '
                '("e2e" {e2e})',
                "a time to first token at most the end-to-end latency",
            )
        if np.isinf(latest - earliest):
            low = np.fmin(np.fmin(send, first), end)
            high = np.fmax(np.fmax(send, first), end)
            codes = requests["run"].astype("category").cat.codes.to_numpy()
            run_low = pd.Series(low).groupby(codes).transform("min").to_numpy(dtype="float64")
            run_high = pd.Series(high).groupby(codes).transform("max").to_numpy(dtype="float64")
            check(
                np.isinf(high - run_low) | np.isinf(run_high - low),
                "times too far apart",
                "the times of run {run} are too far apart: the wall clock overflows to infinity",
                "times whose differences are finite",
            )
    return out


def _span(values: np.ndarray) -> np.ndarray:
    """The smallest and the largest of the values that are not NaN (NaN if none is)."""
    if not len(values):
        return np.array([np.nan, np.nan])
    return np.array([np.fmin.reduce(values), np.fmax.reduce(values)])


def token_counts(requests: pd.DataFrame, already: np.ndarray | None = None) -> list[Found]:
    """Rows whose token or chunk counts no request can have (a fraction, a negative or an
    infinite count), as the native reader refuses them: another format's rows are checked
    here, so that whatever `convert` writes the audit reads. Rows in `already` were counted
    by another check."""
    taken = np.zeros(len(requests), dtype=bool) if already is None else already.copy()
    out: list[Found] = []
    for name in COUNT_COLUMNS:
        if name not in requests:
            continue
        values = pd.to_numeric(requests[name], errors="coerce").to_numpy(
            dtype="float64", na_value=np.nan
        )
        with np.errstate(invalid="ignore"):
            mask = (np.isinf(values) | (values < 0) | (values % 1 != 0)) & ~np.isnan(values)
        mask &= ~taken
        if not mask.any():
            continue
        problems = [
            Problem(
                str(row["source_path"]),
                int(row["source_line"]),
                f'"{name}" is {float(row[name]):g}',
                "a whole number of tokens, at least 0",
            )
            for _, row in _where(requests, mask).iterrows()
        ]
        out.append(Found("count not a whole number at least 0", mask, problems))
        taken |= mask
    return out


def _duplicate_runs(partial: Partial, path: str) -> tuple[list[Problem], list[int]]:
    """Run records that reuse an id already defined in the same file (the later ones)."""
    seen: dict[str, int | None] = {}
    problems: list[Problem] = []
    dropped: list[int] = []
    for i, row in enumerate(partial.runs):
        run_id = str(row["run"])
        raw_line = row.get("source_line")
        line = None if raw_line is None or pd.isna(raw_line) else int(raw_line)
        if run_id not in seen:
            seen[run_id] = line
            continue
        dropped.append(i)
        before = seen[run_id]
        where = f" at line {before}" if before is not None else ""
        problems.append(
            Problem(
                path,
                line,
                f"run id {run_id!r} is defined again (already defined{where})",
                "each run defined once in a file",
            )
        )
    return problems, dropped


#: Summary figures that are counts, durations or rates: never below zero. A wall clock must
#: also be above zero to divide by.
_NON_NEGATIVE_SUMMARY = tuple(k for k in SUMMARY_KEYS if k != "tool_peak_concurrency_trusted")


def _impossible_summaries(partial: Partial, path: str) -> tuple[list[Problem], int]:
    """Summary figures below zero (or a wall of zero): refused, or with lenient made unknown.

    The summary is cleaned in place (the bad figure becomes None), so with `lenient` the run
    keeps its other figures; the problems are returned for the strict refusal."""
    problems: list[Problem] = []
    for row in partial.runs:
        summary = row.get("summary")
        if not isinstance(summary, dict):
            continue
        raw_line = row.get("source_line")
        line = None if raw_line is None or pd.isna(raw_line) else int(raw_line)
        for key in _NON_NEGATIVE_SUMMARY:
            value = summary.get(key)
            if isinstance(value, bool) or not isinstance(value, int | float):
                continue
            if not math.isfinite(value):
                continue  # unknown: metrics reads non-finite summary figures as missing
            if value < 0 or (key == "wall_s" and value == 0):
                expected = "a duration above 0 s" if key == "wall_s" else "a number ≥ 0"
                problems.append(
                    Problem(
                        path,
                        line,
                        f"run {str(row['run'])!r}: summary figure {key} is {value:g}",
                        expected,
                    )
                )
                summary[key] = None
    return problems, len(problems)


def _oversized_integers(partial: Partial, path: str) -> tuple[list[Problem], int]:
    """Whole numbers beyond ±(2^63 − 1) anywhere in a run's record: refused, or with lenient
    made unknown (None) in place. Run records are few: walking them costs nothing."""
    problems: list[Problem] = []

    def walk(
        container: dict[str, Any] | list[Any], prefix: str, run: str, line: int | None
    ) -> None:
        items = list(container.items()) if isinstance(container, dict) else enumerate(container)
        for key, value in items:
            name = f"{prefix}.{key}" if prefix else str(key)
            if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_INT64:
                problems.append(
                    Problem(
                        path,
                        line,
                        f"run {run!r}: {name} is {float(value):g}",
                        "a whole number within ±(2^63 − 1)",
                    )
                )
                container[key] = None  # type: ignore[index]
            elif isinstance(value, dict | list):
                walk(value, name, run, line)

    for row in partial.runs:
        raw_line = row.get("source_line")
        line = None if raw_line is None or pd.isna(raw_line) else int(raw_line)
        walk(row, "", str(row.get("run")), line)
    return problems, len(problems)


#: Run table columns by where the native run record holds them.
_COLUMN_AT = {f.path: f.column for f in RUN_FIELDS if f.path is not None}


def _invalid_settings(partial: Partial, path: str) -> tuple[list[Problem], int]:
    """What an adapter read into a run that no native run record may hold (a concurrency of
    0, say): refused, or with lenient made unknown in place.

    Native runs were checked against the schema as they were read; another format's runs are
    checked here as `convert` writes them, so that whatever convert writes, the audit reads.
    """
    if partial.input is not None and partial.input.format == NATIVE:
        return [], 0
    problems: list[Problem] = []
    for row in partial.runs:
        raw_line = row.get("source_line")
        line = None if raw_line is None or pd.isna(raw_line) else int(raw_line)
        record = run_record(row)
        if _nesting(record) > MAX_JSON_DEPTH:
            problems.extend(_too_deep_values(row, path, line))
            record = run_record(row)
        errors = list(validator().iter_errors(record))
        if not errors:
            continue
        for error in errors:
            message, expected = word_error(error)
            problems.append(
                Problem(
                    path,
                    line,
                    f"run {str(row['run'])!r}: {message} as read from the file",
                    expected,
                )
            )
            column = _COLUMN_AT.get(tuple(str(p) for p in error.absolute_path))
            if column is not None:
                row[column] = None
    return problems, len(problems)


def _nesting(value: Any) -> int:
    """How many objects and arrays nest in a value (0 for a scalar), walked without recursion
    (an adapter's document may nest up to orjson's 1,024 levels)."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        current, depth = stack.pop()
        if isinstance(current, dict):
            children: Any = current.values()
        elif isinstance(current, list | tuple):
            children = current
        else:
            continue
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in children)
    return deepest


#: Where each run column sits in the native run record: how many objects hold it.
_LEVELS_ABOVE = {f.column: len(f.path) for f in RUN_FIELDS if f.path is not None}


def _too_deep_values(row: dict[str, Any], path: str, line: int | None) -> list[Problem]:
    """The values of a run that nest its record deeper than the native reader reads (a
    document's own limit is orjson's 1,024 levels), named and made unknown in place."""
    problems = []
    extra = row.get("extra") or {}
    # extras sit at the record's top level, the other columns where RUN_FIELDS puts them
    places = [(key, value, 1, extra) for key, value in extra.items()]
    places += [(c, row.get(c), _LEVELS_ABOVE.get(c, 1), row) for c in list(row) if c != "extra"]
    for key, value, above, holder in places:
        if not isinstance(value, dict | list):
            continue
        nested = above + _nesting(value)
        if nested > MAX_JSON_DEPTH:
            problems.append(
                Problem(
                    path,
                    line,
                    f"run {str(row['run'])!r}: {key!r} is nested {nested} deep",
                    f"at most {MAX_JSON_DEPTH} levels of [ and {{",
                )
            )
            if holder is extra:
                del extra[key]
            else:
                holder[key] = None
    return problems


def check_partial(partial: Partial, *, lenient: bool) -> None:
    """Refuse the file (TraceError with every problem, capped), or with `lenient` drop the
    failing rows and count them in the file's skipped rows and reasons."""
    path = partial.input.path if partial.input is not None else ""
    run_problems, dropped_runs = _duplicate_runs(partial, path)
    summary_problems, bad_figures = _impossible_summaries(partial, path)
    run_problems += summary_problems
    oversized_problems, oversized = _oversized_integers(partial, path)
    run_problems += oversized_problems
    setting_problems, bad_settings = _invalid_settings(partial, path)
    run_problems += setting_problems
    requests = partial.requests
    found: list[Found] = []
    if requests is not None and len(requests):
        duplicates = duplicate_requests(requests)
        found.append(duplicates)
        found.extend(time_order(requests, duplicates.mask))
        if partial.input is None or partial.input.format != NATIVE:
            # the native reader checked its counts line by line
            taken = np.logical_or.reduce([f.mask for f in found])
            found.extend(token_counts(requests, taken))
    found = [f for f in found if f.mask.any()]
    if not run_problems and not found:
        return
    total = len(run_problems) + sum(int(f.mask.sum()) for f in found)
    if not lenient:
        problems = run_problems + [p for f in found for p in f.problems]
        problems.sort(key=lambda p: p.line or 0)
        raise TraceError(problems, total=total)
    reasons: dict[str, int] = {}
    if bad_figures:
        reasons["summary figure below zero"] = bad_figures
    if oversized:
        reasons["whole number beyond ±(2^63 − 1)"] = oversized
    if bad_settings:
        reasons["run value a native record cannot hold"] = bad_settings
    if dropped_runs:
        reasons["run id defined again"] = len(dropped_runs)
        drop = set(dropped_runs)
        partial.runs = [r for i, r in enumerate(partial.runs) if i not in drop]
    if requests is not None and found:
        bad = np.zeros(len(requests), dtype=bool)
        for f in found:
            reasons[f.reason] = reasons.get(f.reason, 0) + int(f.mask.sum())
            bad |= f.mask
        partial.requests = requests.loc[~bad].reset_index(drop=True)
    if partial.input is not None:
        partial.input.skipped += total
        partial.input.skipped_reasons = [
            *partial.input.skipped_reasons,
            *(f"{k}: {v}" for k, v in reasons.items()),
        ]
