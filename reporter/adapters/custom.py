"""Custom CSV or JSON Lines logs, read through a small YAML mapping file.

The mapping says which column holds which canonical field, in which unit, on which clock, and
what the log does not say about its run (concurrency, stop mode, model...). Example:

    format: csv            # csv or jsonl (default: from the data file's first character)
    clock: epoch           # epoch (Unix time) or relative (any zero, e.g. perf_counter)
    columns:
      id: req
      t_send: start_ms
      t_end: end_ms
      output_tokens: n_out
      reported_tps: tok_s
    units:
      t_send: ms
      t_end: ms
    run:
      id: laptop-n4
      concurrency: 4
      stop: forced
      output_tokens: 512

`ttft` and `latency` (seconds after the send) may stand in for `t_first` and `t_end`. JSON Lines
keys may be dotted paths (`timings.start`). Epoch nanoseconds are made relative to the run's
first send as integers, so nothing is lost; so are times written as ISO 8601 text (unit `iso`:
`2026-03-01T12:00:00.123456789Z`), to the nanosecond. A `concurrency` column gives each run its
concurrency (a sweep logged in one file: without a `run` column, each value is a run).
"""

from __future__ import annotations

import json
import math
import re
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from reporter.adapters._common import (
    Problems,
    csv_rows,
    finish,
    get,
    json_lines,
    new_run,
)
from reporter.errors import Problem, TraceError, UsageError
from reporter.ingest.limits import check_yaml, read_bytes
from reporter.ingest.lines import Source
from reporter.numbers import counted
from reporter.table import COUNT_COLUMNS, Partial
from reporter.values import loose_number

NAME = "custom"
TIME_FIELDS = ("t_send", "t_first", "t_end", "ttft", "latency")
NUMBER_FIELDS = ("prompt_tokens", "output_tokens", "reported_tps", "n_chunks")
TEXT_FIELDS = ("run", "id", "finish_reason", "error", "prompt_sha256")
#: Fields of a run that a column may hold (the same value on every row of the run).
RUN_FIELDS = ("concurrency",)
FIELDS = TIME_FIELDS + NUMBER_FIELDS + TEXT_FIELDS + RUN_FIELDS
#: Times on a clock (not durations after the send): the only fields that may be ISO 8601 text.
CLOCK_FIELDS = ("t_send", "t_first", "t_end")
UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}
NS_PER = {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}
UNIT_WORDS = {"s": "seconds", "ms": "milliseconds", "us": "microseconds", "ns": "nanoseconds"}
#: The unit of a clock time written as ISO 8601 text.
ISO = "iso"
ISO_EXAMPLE = "2026-03-01T12:00:00.5Z"
#: ISO 8601 date and time: calendar date, T or a space, hh:mm:ss, a fraction of up to nine
#: digits (nanoseconds), and a zone (Z or ±hh:mm, ±hhmm, ±hh) or none.
ISO_TIME = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:[.,](\d+))?"
    r"([Zz]|[+-]\d{2}(?::?\d{2})?)?"
)
RUN_KEYS = (
    "id",
    "concurrency",
    "stop",
    "output_tokens",
    "prompt_tokens",
    "context_tokens",
    "ignore_eos",
    "temperature",
    "content",
    "model",
    "engine",
    "engine_version",
    "hardware",
    "tool",
    "tool_version",
    "group",
    "repeat",
    "duration_s",
    "speculative",
)
TOP_KEYS = ("format", "clock", "columns", "units", "run")
FINISH_SYNONYMS = {
    "length": "length",
    "max_tokens": "length",
    "limit": "length",
    "max_length": "length",
    "stop": "stop",
    "eos": "stop",
    "stop_word": "stop",
    "word": "stop",
    "end_turn": "stop",
    "error": "error",
    "failed": "error",
    "abort": "abort",
    "cancelled": "abort",
    "canceled": "abort",
    "timeout": "abort",
}


def detect(source: Source, records: list[Any]) -> tuple[bool, list[str]]:
    """Never guessed: a custom log needs --format custom and its --mapping file."""
    return False, ["--mapping (custom logs are never guessed)"]


class Mapping:
    """A validated mapping file."""

    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.problems: list[Problem] = []
        try:
            check_yaml(text, path)  # depth and alias budget, before anything is built
            node = yaml.compose(text, Loader=yaml.SafeLoader)
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line = mark.line + 1 if mark is not None else None
            reason = getattr(exc, "problem", None) or str(exc)
            raise TraceError(
                [Problem(path, line, f"not valid YAML: {reason}", "a YAML mapping file")]
            ) from None
        except (ValueError, OverflowError) as exc:  # a tagged value that cannot be built
            reason = "a number too long to read" if "digits" in str(exc) else str(exc)
            raise TraceError(
                [Problem(path, None, f"a value cannot be read: {reason}", "a YAML mapping file")]
            ) from None
        surrogate = _lone_surrogate(data)
        if surrogate is not None:
            raise TraceError(
                [
                    Problem(
                        path, None, f"a string holds {surrogate}", "UTF-8 text (no lone surrogate)"
                    )
                ]
            )
        self._lines = _key_lines(node)
        if not isinstance(data, dict):
            raise TraceError(
                [
                    Problem(
                        path,
                        1,
                        "the mapping is not a YAML object",
                        "keys format, clock, columns, units, run",
                    )
                ]
            )
        self.format = data.get("format")
        self.clock = data.get("clock", "relative")
        self.columns: dict[str, str] = {}
        self.units: dict[str, float] = {}
        self.unit_names: dict[str, str] = {}
        self.run: dict[str, Any] = {}
        for key in data:
            if key not in TOP_KEYS:
                self._bad((key,), f'"{key}" is not a mapping key', "one of " + ", ".join(TOP_KEYS))
        if self.format not in (None, "csv", "jsonl"):
            self._bad(("format",), f'"format" is {self.format!r}', "csv or jsonl")
        if self.clock not in ("epoch", "relative"):
            self._bad(
                ("clock",), f'"clock" is {self.clock!r}', "epoch (Unix time) or relative (any zero)"
            )
        columns = data.get("columns")
        if not isinstance(columns, dict) or not columns:
            self._bad(
                ("columns",),
                '"columns" is missing or empty',
                "an object: canonical field → column name",
            )
            columns = {}
        for field, column in columns.items():
            if field not in FIELDS:
                self._bad(
                    ("columns", field),
                    f'"columns.{field}" is not a field',
                    "one of " + ", ".join(FIELDS),
                )
            elif not isinstance(column, str | int) or isinstance(column, bool):
                self._bad(("columns", field), f'"columns.{field}" is {column!r}', "a column name")
            else:
                self.columns[field] = str(column)
        if "t_first" in self.columns and "ttft" in self.columns:
            self._bad(("columns", "ttft"), '"columns" maps both t_first and ttft', "one of them")
        if "t_end" in self.columns and "latency" in self.columns:
            self._bad(
                ("columns", "latency"), '"columns" maps both t_end and latency', "one of them"
            )
        relative = "ttft" in self.columns or "latency" in self.columns
        if (
            relative
            and "t_send" not in self.columns
            and "duration_s" not in (data.get("run") or {})
        ):
            self._bad(
                ("columns",),
                '"columns" maps ttft or latency without t_send',
                "t_send too, or run.duration_s (the wall clock) for Little's law",
            )
        units = data.get("units") or {}
        if not isinstance(units, dict):
            self._bad(("units",), '"units" is not an object', "field: s, ms, us, ns or iso")
            units = {}
        for field, unit in units.items():
            if field not in TIME_FIELDS:
                self._bad(
                    ("units", field),
                    f'"units.{field}" is not a time field',
                    "one of " + ", ".join(TIME_FIELDS),
                )
            elif unit == ISO and field not in CLOCK_FIELDS:
                self._bad(
                    ("units", field),
                    f'"units.{field}" is {unit!r}',
                    "s, ms, us or ns (a duration after the send, not a time of day)",
                )
            elif not isinstance(unit, str) or (unit not in UNITS and unit != ISO):
                self._bad(("units", field), f'"units.{field}" is {unit!r}', "s, ms, us, ns or iso")
            elif unit == ISO:
                self.unit_names[field] = ISO
            else:
                self.units[field] = UNITS[unit]
                self.unit_names[field] = str(unit)
        # one clock for every time of day: ISO text and numbers cannot be told apart in zone
        clock_times = [f for f in CLOCK_FIELDS if f in self.columns]
        iso_times = [f for f in clock_times if self.unit_names.get(f) == ISO]
        if iso_times and len(iso_times) < len(clock_times):
            other = next(f for f in clock_times if f not in iso_times)
            self._bad(
                ("units", iso_times[0]),
                f'"units.{iso_times[0]}" is iso but "units.{other}" is not',
                "iso for every time of day mapped (t_send, t_first, t_end), or for none",
            )
        self.iso = bool(iso_times)
        run = data.get("run") or {}
        if not isinstance(run, dict):
            self._bad(("run",), '"run" is not an object', "keys " + ", ".join(RUN_KEYS))
            run = {}
        for key, value in run.items():
            if key not in RUN_KEYS:
                self._bad(
                    ("run", key), f'"run.{key}" is not a run field', "one of " + ", ".join(RUN_KEYS)
                )
            else:
                self.run[key] = value
        if run.get("stop") not in (None, "forced", "natural", "unknown"):
            self._bad(
                ("run", "stop"), f'"run.stop" is {run.get("stop")!r}', "forced, natural or unknown"
            )
        if "concurrency" in self.columns and "concurrency" in run:
            self._bad(
                ("run", "concurrency"),
                '"run.concurrency" is given and "columns" maps concurrency',
                "one of them",
            )
        for key in ("concurrency", "output_tokens", "prompt_tokens", "context_tokens", "repeat"):
            value = run.get(key)
            if value is not None and (
                not isinstance(value, int)
                or isinstance(value, bool)
                or not (1 if key == "concurrency" else 0) <= value <= MAX_RUN_NUMBER
            ):
                shown = (
                    repr(value) if len(str(value)) <= 40 else f"a {len(str(value))}-digit number"
                )
                self._bad(
                    ("run", key), f'"run.{key}" is {shown}', f"a whole number ≤ {MAX_RUN_NUMBER:,}"
                )
        duration = run.get("duration_s")
        if duration is not None and not (
            isinstance(duration, int | float)
            and not isinstance(duration, bool)
            and 0 < duration < math.inf
        ):
            self._bad(
                ("run", "duration_s"),
                f'"run.duration_s" is {run["duration_s"]!r}',
                "a number of seconds > 0",
            )
        if self.problems:
            raise TraceError(self.problems)

    def _bad(self, path: tuple[Any, ...], message: str, expected: str) -> None:
        line = self._lines.get(path)
        while line is None and path:
            path = path[:-1]
            line = self._lines.get(path)
        self.problems.append(Problem(self.path, line, message, expected))

    def unit(self, field: str) -> float:
        return self.units.get(field, 1.0)

    def unit_word(self, field: str) -> str:
        return UNIT_WORDS[self.unit_names.get(field, "s")]

    @property
    def clock_name(self) -> str:
        """The clock as the notes name it."""
        return "ISO 8601 times" if self.iso else str(self.clock)


#: The largest count a mapping's `run` may state (tokens, concurrency, repeats).
MAX_RUN_NUMBER = 10**12
CONCURRENCY_EXPECTED = (
    f"a whole number from 1 to {MAX_RUN_NUMBER:,}, the run's concurrency "
    "(custom mapping: concurrency)"
)


def _lone_surrogate(value: Any) -> str | None:
    """The first lone surrogate (a YAML "\\ud800" escape) in the strings of `value`, shown."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str):
            for ch in item:
                if "\ud800" <= ch <= "\udfff":
                    return f"a lone surrogate \\u{ord(ch):04x}"
    return None


def _key_lines(node: Any, prefix: tuple[Any, ...] = ()) -> dict[tuple[Any, ...], int]:
    out: dict[tuple[Any, ...], int] = {}
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            path = (*prefix, key.value)
            out[path] = key.start_mark.line + 1
            out.update(_key_lines(value, path))
    return out


def load_mapping(path: str) -> Mapping:
    try:
        text = read_bytes(path, "mapping").decode("utf-8")
    except OSError as exc:
        raise TraceError(
            [Problem(path, None, f"cannot read the mapping file: {exc.strerror}")]
        ) from None
    except UnicodeDecodeError:
        raise TraceError([Problem(path, None, "the mapping file is not UTF-8 text")]) from None
    return Mapping(path, text)


def read(source: Source, *, lenient: bool = False, **options: Any) -> Partial:
    """Rows of a custom log, by the mapping given as `mapping=` (the --mapping option)."""
    path = options.get("mapping")
    if not path:
        raise UsageError(
            "--format custom needs --mapping FILE: which column is which field "
            "(see README, Custom logs)"
        )
    mapping = load_mapping(str(path))
    problems = Problems(source.path)
    fmt = mapping.format or (
        "jsonl" if source.data.lstrip(b"\xef\xbb\xbf").lstrip()[:1] == b"{" else "csv"
    )
    records: list[tuple[int, Any]]
    if fmt == "csv":
        header, cells = csv_rows(source, problems)
        missing = [c for c in mapping.columns.values() if c not in header]
        if missing:
            raise TraceError(
                [
                    Problem(
                        mapping.path,
                        mapping._lines.get(("columns",)),
                        f"column {c!r} ({_field_of(mapping, c)}) is not in {source.path}",
                        "one of " + ", ".join(header[:30]),
                    )
                    for c in missing
                ]
            )
        index = {name: i for i, name in enumerate(header)}
        records = []
        for line, texts in cells:
            if len(texts) != len(header):
                problems.add(
                    line, f"the row has {len(texts)} cells", f"{len(header)}, one per header column"
                )
                continue
            records.append((line, {c: texts[index[c]] for c in mapping.columns.values()}))
    else:
        parsed = json_lines(source, problems)
        records = []
        for line, value in parsed:
            if not isinstance(value, dict):
                problems.add(
                    line, f"the line holds a JSON {type(value).__name__}", "a JSON object per line"
                )
                continue
            records.append((line, {c: _dotted(value, c) for c in mapping.columns.values()}))
    rows: list[dict[str, Any]] = []
    raw_ns: list[dict[str, int]] = []
    zones = _Zones()
    for line, values in records:
        row, ints = _row(values, line, mapping, problems, zones)
        if row is not None:
            rows.append(row)
            raw_ns.append(ints)
    if "concurrency" in mapping.columns:
        rows, raw_ns = _one_concurrency_a_run(rows, raw_ns, mapping, problems)
    problems.raise_unless(lenient)
    run_ids = _assign_runs(rows, mapping)
    _apply_clock(rows, raw_ns, mapping)
    runs = [_run(run_id, rows, mapping, source.path, zones) for run_id in run_ids]
    notes = [
        f"custom: {counted(len(rows), 'request')} in {counted(len(runs), 'run')}, read through "
        f"{Path(mapping.path).name} ({fmt}, clock {mapping.clock_name})"
    ]
    return finish(source, NAME, runs, rows, records=len(records), notes=notes, problems=problems)


def _field_of(mapping: Mapping, column: str) -> str:
    return next((f for f, c in mapping.columns.items() if c == column), "?")


def _dotted(record: dict[str, Any], key: str) -> Any:
    if key in record:
        return record[key]
    return get(record, *key.split("."))


class _Zones:
    """Whether a file's ISO 8601 times carry a zone: all of them or none (a time without one
    cannot be placed on the clock of a time with one), and the first line that said which."""

    def __init__(self) -> None:
        self.zoned: bool | None = None
        self.line = 0


def _row(
    values: dict[str, Any], line: int, mapping: Mapping, problems: Problems, zones: _Zones
) -> tuple[dict[str, Any] | None, dict[str, int]]:
    row: dict[str, Any] = {"source_line": line}
    ints: dict[str, int] = {}
    ok = True
    for field, column in mapping.columns.items():
        value = values.get(column)
        if isinstance(value, str):
            value = value.strip()
            if value == "":
                value = None
        if value is None:
            if field == "concurrency":
                problems.add(
                    line,
                    f'"{column}" has no value',
                    CONCURRENCY_EXPECTED,
                )
                ok = False
            continue
        if mapping.unit_names.get(field) == ISO:
            shown = repr(value) if isinstance(value, str) else json.dumps(value)
            parsed = _iso_nanoseconds(value) if isinstance(value, str) else None
            if not isinstance(parsed, tuple):
                expected = parsed or f"an ISO 8601 date and time such as {ISO_EXAMPLE}"
                problems.add(
                    line, f'"{column}" is {shown}', f"{expected} (custom mapping: {field})"
                )
                ok = False
                continue
            ns, zoned = parsed
            if zones.zoned is None:
                zones.zoned, zones.line = zoned, line
            elif zoned != zones.zoned:
                said = "has no zone" if zones.zoned is False else "has a zone"
                problems.add(
                    line,
                    f'"{column}" is {shown}, while line {zones.line}\'s time {said}',
                    f"every time with a zone (Z or ±hh:mm) or every time without "
                    f"(custom mapping: {field})",
                )
                ok = False
                continue
            ints[field] = ns
            row[field] = ns / 1e9
            continue
        if field == "concurrency":
            number = loose_number(value)
            if (
                number is None
                or not float(number).is_integer()
                or not 1 <= number <= MAX_RUN_NUMBER
            ):
                text = repr(value) if isinstance(value, str) else json.dumps(value)
                problems.add(
                    line,
                    f'"{column}" is {text}',
                    CONCURRENCY_EXPECTED,
                )
                ok = False
                continue
            row["_concurrency"] = int(number)
            continue
        if field in TEXT_FIELDS:
            text = str(value)
            if field == "finish_reason":
                reason = FINISH_SYNONYMS.get(text.lower())
                if reason is None:
                    problems.add(
                        line,
                        f'"{column}" is {text!r}',
                        f"a finish reason: length, stop, error or abort (custom mapping: {field})",
                    )
                    ok = False
                    continue
                text = reason
            row[field] = text
            continue
        number = loose_number(value)
        if number is None:
            what = f"a number of {mapping.unit_word(field)}" if field in TIME_FIELDS else "a number"
            text = repr(value) if isinstance(value, str) else json.dumps(value)
            problems.add(line, f'"{column}" is {text}', f"{what} (custom mapping: {field})")
            ok = False
            continue
        if field in TIME_FIELDS:
            if (
                isinstance(number, int)
                and mapping.clock == "epoch"
                and field in ("t_send", "t_first", "t_end")
            ):
                ints[field] = number * NS_PER[mapping.unit_names.get(field, "s")]
            row[field] = float(number) * mapping.unit(field)
        else:
            if number < 0:
                problems.add(
                    line, f'"{column}" is {number!r}', f"a number ≥ 0 (custom mapping: {field})"
                )
                ok = False
                continue
            if field in COUNT_COLUMNS and not float(number).is_integer():
                # a fraction of a token (or an infinite count) no request wrote
                problems.add(
                    line,
                    f'"{column}" is {number!r}',
                    f"a whole number ≥ 0 (custom mapping: {field})",
                )
                ok = False
                continue
            row[field] = float(number)
    if not ok:
        return None, {}
    return row, ints


#: 1970-01-01, naive: ISO times are counted from it after their zone's offset is taken away.
_EPOCH = datetime(1970, 1, 1)


def _iso_nanoseconds(text: str) -> tuple[int, bool] | str:
    """An ISO 8601 date and time as integer nanoseconds since 1970-01-01 (UTC when the text
    has a zone, as written when not) and whether it had a zone; or what was expected instead.

    Integers all the way, so that a time written to the nanosecond stays exact (datetime
    itself keeps microseconds)."""
    match = ISO_TIME.fullmatch(text)
    if match is None:
        return f"an ISO 8601 date and time such as {ISO_EXAMPLE}"
    year, month, day, hour, minute, second = (int(g) for g in match.groups()[:6])
    fraction, zone = match.group(7) or "", match.group(8)
    if len(fraction) > 9:
        return f"at most nine decimals of a second (nanoseconds), as in {ISO_EXAMPLE}"
    try:
        since = datetime(year, month, day, hour, minute, second) - _EPOCH
    except ValueError:
        return (
            "a date and time that exist (month 1-12, a day of that month, hh ≤ 23, mm and ss ≤ 59)"
        )
    offset = 0
    if zone is not None and zone not in "Zz":
        hours, minutes = int(zone[1:3]), int(zone[3:].lstrip(":") or 0)
        if hours > 23 or minutes > 59:
            return "a zone of Z or ±hh:mm (hh ≤ 23, mm ≤ 59)"
        offset = (1 if zone[0] == "+" else -1) * (hours * 3600 + minutes * 60)
    seconds = since // timedelta(seconds=1) - offset
    return seconds * 10**9 + int(fraction.ljust(9, "0")), zone is not None


def _one_concurrency_a_run(
    rows: list[dict[str, Any]], raw_ns: list[dict[str, int]], mapping: Mapping, problems: Problems
) -> tuple[list[dict[str, Any]], list[dict[str, int]]]:
    """The rows whose concurrency column agrees with their run's; the others refused.

    With a run column, a run's rows must all state its first row's concurrency. Without one,
    each concurrency is a run, so its rows must come together: a value that comes back after
    others may be a repeat or a file sorted some other way, and nothing in it tells which."""
    column = mapping.columns["concurrency"]
    kept: list[int] = []
    if "run" in mapping.columns:
        first: dict[str, tuple[int, int]] = {}  # run → its concurrency, and the line saying it
        for i, row in enumerate(rows):
            run = _run_of(row, mapping)
            value, line = first.setdefault(run, (row["_concurrency"], row["source_line"]))
            if row["_concurrency"] != value:
                problems.add(
                    row["source_line"],
                    f'"{column}" is {row["_concurrency"]} in run {run!r}',
                    f"{value}, as on line {line}: one concurrency a run (custom mapping: "
                    "concurrency)",
                )
                continue
            kept.append(i)
    else:
        ended: dict[int, int] = {}  # a value whose rows have ended → the last line of them
        current, last_line = None, 0
        for i, row in enumerate(rows):
            value = row["_concurrency"]
            if value != current:
                if current is not None:
                    ended.setdefault(current, last_line)
                current = value
            last_line = row["source_line"]
            if value in ended:
                problems.add(
                    row["source_line"],
                    f'"{column}" is {value} again, after other values (its run ended on line '
                    f"{ended[value]})",
                    "each concurrency's rows together (one run a value), or a run column that "
                    "tells repeats apart (custom mapping: concurrency)",
                )
                continue
            kept.append(i)
    if len(kept) == len(rows):
        return rows, raw_ns
    return [rows[i] for i in kept], [raw_ns[i] for i in kept]


def _run_of(row: dict[str, Any], mapping: Mapping) -> str:
    """The run a row belongs to: its run column's; else, with a concurrency column, its
    concurrency's (a sweep in one file: `n4`, or `ID-n4` with run.id); else run.id (default
    `custom`)."""
    if row.get("run"):
        return str(row["run"])
    if "concurrency" in mapping.columns and "run" not in mapping.columns:
        prefix = f"{mapping.run['id']}-" if mapping.run.get("id") else ""
        return f"{prefix}n{row['_concurrency']}"
    return str(mapping.run.get("id") or "custom")


def _assign_runs(rows: list[dict[str, Any]], mapping: Mapping) -> list[str]:
    order: list[str] = []
    for i, row in enumerate(rows):
        row["run"] = _run_of(row, mapping)
        row.setdefault("id", str(i))
        if row["run"] not in order:
            order.append(row["run"])
    return order


def _apply_clock(
    rows: list[dict[str, Any]], raw_ns: list[dict[str, int]], mapping: Mapping
) -> None:
    """Epoch clocks rebased on each run's first send (integers, exact); t_first and t_end
    from t_send + ttft / latency."""
    bases: dict[str, int] = {}
    for row, ints in zip(rows, raw_ns, strict=True):
        if "t_send" in ints:
            run = row["run"]
            bases[run] = min(bases.get(run, ints["t_send"]), ints["t_send"])
    for row, ints in zip(rows, raw_ns, strict=True):
        base = bases.get(row["run"])
        if base is not None:
            for field in ("t_send", "t_first", "t_end"):
                if field in ints:
                    row[field] = (ints[field] - base) / 1e9
                elif row.get(field) is not None:
                    row[field] = row[field] - base / 1e9
        send = row.get("t_send")
        ttft = row.pop("ttft", None)
        latency = row.pop("latency", None)
        if send is not None:
            if ttft is not None:
                row["t_first"] = send + ttft
            if latency is not None:
                row["t_end"] = send + latency
        else:
            if latency is not None:
                row["_latency"] = latency
            if ttft is not None:
                row["_ttft"] = ttft
        if row.get("error") and row.get("finish_reason") is None:
            row["finish_reason"] = "error"


def _run(
    run_id: str, rows: list[dict[str, Any]], mapping: Mapping, path: str, zones: _Zones
) -> dict[str, Any]:
    mine = [r for r in rows if r["run"] == run_id]
    cfg = dict(mapping.run)
    derived = [f"read through the mapping {Path(mapping.path).name}; clock: {mapping.clock_name}"]
    if mapping.iso and zones.zoned is False:
        derived.append(
            "ISO 8601 times without a zone, read as written: a clock change (daylight saving) "
            "inside the run would move them"
        )
    if "concurrency" in mapping.columns:
        stated = {r.pop("_concurrency") for r in mine}
        cfg["concurrency"] = stated.pop() if len(stated) == 1 else None
    summary: dict[str, Any] | None = None
    latencies = [r.pop("_latency") for r in mine if "_latency" in r]
    ttfts = [r.pop("_ttft") for r in mine if "_ttft" in r]
    if latencies:
        summary = {"sum_latency_s": sum(latencies), "requests": len(mine)}
        derived.append(
            "no send times: Σ latency from the latency column; no completion times to order "
            "into a ladder"
        )
        failed = any(r.get("finish_reason") in ("error", "abort") for r in mine)
        if len(ttfts) == len(latencies) == len(mine) and not failed:
            # every request's time to first token and latency: Σ (latency − TTFT) is the
            # time the requests spent decoding, whatever the order they were sent in
            summary["mean_ttft_s"] = sum(ttfts) / len(ttfts)
            derived.append("mean time to first token from the ttft column")
        if cfg.get("duration_s"):
            summary["wall_s"] = float(cfg["duration_s"])
            derived.append("wall clock from the mapping (run.duration_s)")
    if "concurrency" in mapping.columns:
        derived.append(
            f"concurrency from the column {mapping.columns['concurrency']!r}, not measured"
        )
    elif cfg.get("concurrency") is not None:
        derived.append("concurrency from the mapping, not measured")
    spec = cfg.get("speculative")
    return new_run(
        run_id,
        path,
        mine[0]["source_line"] if mine else None,
        NAME,
        tool=(
            str(cfg["tool"]) if cfg.get("tool") else "custom log",
            str(cfg["tool_version"]) if cfg.get("tool_version") else None,
        ),
        engine={"name": cfg.get("engine"), "version": cfg.get("engine_version")},
        model={"name": cfg.get("model")},
        hardware={"name": cfg.get("hardware")},
        workload={
            "concurrency": cfg.get("concurrency"),
            "stop": cfg.get("stop") or "unknown",
            "output_tokens": cfg.get("output_tokens"),
            "prompt_tokens": cfg.get("prompt_tokens"),
            "context_tokens": cfg.get("context_tokens"),
            "ignore_eos": cfg.get("ignore_eos"),
            "temperature": cfg.get("temperature"),
            "content": cfg.get("content"),
            "speculative": {"enabled": spec} if isinstance(spec, bool) else None,
        },
        repeat=cfg.get("repeat"),
        group=str(cfg["group"]) if cfg.get("group") else None,
        summary=summary,
        derived=derived,
    )
