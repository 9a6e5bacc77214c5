"""What the adapters of other tools' files share: parsing with line numbers, checked fields,
clocks, and the construction of canonical rows.

Other tools write one JSON document (pretty-printed or not), JSON Lines, or CSV. Every row an
adapter makes keeps the line where its record starts, so a finding can point back to it, and
every problem is worded `path:line: what is wrong; expected what`, as for native traces.
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
import re
from collections.abc import Callable, Container, Iterable, Iterator
from typing import Any

import numpy as np
import orjson
import pandas as pd

from reporter.errors import MAX_SHOWN_PROBLEMS, Problem, TraceError
from reporter.ingest.limits import depth_problem, find_newlines, too_deep
from reporter.ingest.lines import Source, iter_lines, json_problem, loads_relaxed, twice_keyed
from reporter.runrecord import run_row
from reporter.table import InputFile, Partial, normalize_requests
from reporter.table import unique_ids as unique_ids  # the adapters' one name for it
from reporter.values import MAX_INT64, is_number, numeric_text

#: Files larger than this are not scanned for the line of each element of a JSON document;
#: their rows point at the line of the enclosing object instead.
LOCATE_LIMIT_BYTES = 256 << 20
#: Lines up to this long are checked for nesting depth before they are parsed.
DEPTH_CHECKED_BYTES = 1 << 20


# --------------------------------------------------------------------------- problems


class Problems:
    """The problems of one file: all counted, the first ones worded, raised together."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.problems: list[Problem] = []
        self.bad: set[int | None] = set()
        self.count = 0

    def add(
        self, line: int | None, message: str, expected: str | None = None, col: int | None = None
    ) -> None:
        self.count += 1
        self.bad.add(line)
        if len(self.problems) < 5 * MAX_SHOWN_PROBLEMS:
            self.problems.append(Problem(self.path, line, message, expected, col))

    def extend(self, problems: Iterable[Problem]) -> None:
        for p in problems:
            self.add(p.line, p.message, p.expected, p.col)

    def __bool__(self) -> bool:
        return self.count > 0

    def raise_unless(self, lenient: bool) -> None:
        """Raise every problem found, unless the caller audits the good records only."""
        if self.count and not lenient:
            raise TraceError(sorted(self.problems, key=lambda p: p.line or 0), total=self.count)

    def skipped_reasons(self) -> list[str]:
        reasons: dict[str, int] = {}
        for p in self.problems:
            key = p.message.split(" is ")[0]
            reasons[key] = reasons.get(key, 0) + 1
        return [f"{k}: {v}" for k, v in sorted(reasons.items())]


def fail(path: str, line: int | None, message: str, expected: str | None = None) -> TraceError:
    return TraceError([Problem(path, line, message, expected)])


# --------------------------------------------------------------------------- JSON


def _relaxed(raw: bytes) -> Any:
    """JSON with the non-standard tokens Python writes (Infinity, -Infinity, NaN)."""
    return loads_relaxed(raw)


def parse_value(path: str, number: int, raw: bytes) -> tuple[Any, Problem | None]:
    """One JSON value of a line; Infinity and NaN are accepted (SGLang writes them).

    A line nested deeper than the limit is refused before a parser sees it; a long line (a
    whole document) is left to orjson, whose own limit (1,024 levels) cannot overflow.
    """
    depth = too_deep(raw) if len(raw) <= DEPTH_CHECKED_BYTES else None
    if depth is not None:
        return None, depth_problem(path, number, depth)
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        try:
            value = _relaxed(raw)
        except (ValueError, RecursionError):
            return None, json_problem(path, number, raw, exc)
    twice = twice_keyed(path, number, raw, value)
    return (None, twice) if twice is not None else (value, None)


def lengths_drawn(mean: float, stddev: float, how: str = "") -> str:
    """The note for output lengths a tool asks of each request from a normal distribution:
    there is no one requested length (GenAI-Perf's and LLMPerf's stddev > 0)."""
    return (
        f"output lengths asked per request from a normal of mean {mean:g} and stddev "
        f"{stddev:g}{how}: no one requested length"
    )


def json_lines(
    source: Source, problems: Problems, *, keep: Callable[[bytes], bool] | None = None
) -> list[tuple[int, Any]]:
    """(line number, value) of every non-blank line; bad lines go to `problems`.

    `keep` selects the lines to parse (a tool that mixes log lines with JSON); the others are
    returned as None values so the caller can count them.
    """
    data = source.data[3:] if source.data.startswith(b"\xef\xbb\xbf") else source.data
    out: list[tuple[int, Any]] = []
    for number, line in iter_lines(data):
        if keep is not None and not keep(line):
            out.append((number, None))
            continue
        value, problem = parse_value(source.path, number, line)
        if problem is not None:
            problems.add(problem.line, problem.message, problem.expected, problem.col)
            continue
        out.append((number, value))
    return out


_DOC_CACHE: list[tuple[bytes, Any]] = []


def document(source: Source) -> Any:
    """The file as one JSON document (cached for the last file, which detection parsed)."""
    for data, value in _DOC_CACHE:
        if data is source.data:
            return value
    data = source.data[3:] if source.data.startswith(b"\xef\xbb\xbf") else source.data
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        try:
            value = _relaxed(data)
        except json.JSONDecodeError as exc:
            raise TraceError([_document_problem(source.path, data, exc)]) from None
        except UnicodeDecodeError as exc:
            line = data[: exc.start].count(b"\n") + 1
            raise fail(
                source.path, line, f"byte {data[exc.start]:#04x} is not UTF-8", "a UTF-8 text file"
            ) from None
        except (ValueError, RecursionError) as exc:
            raise fail(
                source.path, None, f"not valid JSON: {exc}", "a complete JSON document"
            ) from None
    twice = twice_keyed(source.path, None, data, value, into_lists=True)
    if twice is not None:
        raise TraceError([twice])
    _DOC_CACHE[:] = [(source.data, value)]
    return value


def _document_problem(path: str, data: bytes, exc: json.JSONDecodeError) -> Problem:
    if _truncated(data):
        body = data.rstrip()
        line = body.count(b"\n") + 1
        col = len(body[body.rfind(b"\n") + 1 :].decode("utf-8", "replace")) + 1
        return Problem(
            path,
            line,
            "the JSON document ends early (the file is truncated)",
            "a complete JSON document",
            col=col,
        )
    return Problem(
        path, exc.lineno, f"not valid JSON: {exc.msg}", "a complete JSON document", col=exc.colno
    )


_SCAN = re.compile(rb'"(?:[^"\\]|\\.)*(")?|[\[\]{}]')


def _truncated(data: bytes) -> bool:
    """Whether a document stops inside a string or with brackets still open."""
    depth = 0
    for match in _SCAN.finditer(data):
        tok = match.group()
        if tok[:1] == b'"':
            if match.group(1) is None:
                return True
        elif tok in (b"{", b"["):
            depth += 1
        else:
            depth -= 1
    return depth > 0


def looks_like_json_lines(source: Source) -> bool:
    """Several JSON values, one a line (not one pretty-printed document)."""
    head = source.data.lstrip(b"\xef\xbb\xbf").lstrip()
    first = head.split(b"\n", 1)[0].strip()
    if not first.startswith(b"{"):
        return False
    value, problem = parse_value(source.path, 1, first)
    if problem is not None or not isinstance(value, dict):
        return False
    rest = head[len(first) :].strip()
    return not rest or rest.startswith(b"{")


_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{},:]')


def container_lines(data: bytes, max_depth: int) -> dict[tuple[Any, ...], int]:
    """Line number where each object or array of a JSON document starts, by its path.

    Paths are tuples of keys and indices from the top (the document itself is `()`); only
    containers at most `max_depth` deep are kept. Values inside strings are skipped by a
    C-level regular expression, so a large file costs one pass over its punctuation.
    """
    out: dict[tuple[Any, ...], int] = {}
    if len(data) > LOCATE_LIMIT_BYTES:
        return out
    newlines = find_newlines(data)
    # one frame per open container: [is_object, current key or index, expecting a key]
    stack: list[list[Any]] = []
    for match in _TOKEN.finditer(data):
        c = data[match.start()]
        if c == 0x22:  # a string: a key when the enclosing object expects one
            top = stack[-1] if stack else None
            if top is not None and top[0] and top[2]:
                top[1] = match.group()[1:-1].decode("utf-8", "replace")
                top[2] = False
        elif c in (0x7B, 0x5B):  # { [
            if len(stack) <= max_depth:
                here = tuple(frame[1] for frame in stack)
                out[here] = int(np.searchsorted(newlines, match.start())) + 1
            stack.append([c == 0x7B, None if c == 0x7B else 0, c == 0x7B])
        elif c in (0x7D, 0x5D):  # } ]
            if stack:
                stack.pop()
        elif c == 0x2C and stack:  # ,
            if stack[-1][0]:
                stack[-1][2] = True
            else:
                stack[-1][1] += 1
    return out


def line_of(lines: dict[tuple[Any, ...], int], *path: Any) -> int:
    """The line of the container at `path`, else of its nearest enclosing container."""
    key = tuple(path)
    while key:
        if key in lines:
            return lines[key]
        key = key[:-1]
    return lines.get((), 1)


# --------------------------------------------------------------------------- CSV


def csv_rows(source: Source, problems: Problems) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """Header and (line, cells) of a CSV file; blank rows are skipped.

    Rows are read from the file's lines as every path:line numbers them (`text_lines`): a line
    ends at "\n" (a "\r" before it dropped), or at "\r" in a file holding no "\n" at all (as
    old Mac programs wrote them). The csv module left to split the text would also end a row
    at a lone "\r": the rest of the row became a row of its own, and every later line number
    was one off. A quoted cell may still span lines; an unquoted "\r" is a problem of its row.
    """
    text = source.text()
    end = "\n" if "\n" in text or "\r" not in text else "\r"
    pieces = text.split(end)
    if pieces[-1] == "":
        pieces.pop()
    read = 0  # lines handed to the csv reader so far: the number of the line it is on

    def lines() -> Iterator[str]:
        nonlocal read
        for piece in pieces:
            read += 1
            yield piece + end

    source_lines = lines()
    failed_at = -1
    header: list[str] | None = None
    rows: list[tuple[int, list[str]]] = []
    while True:
        reader = csv.reader(source_lines)
        start = read + 1  # the line the next row begins on (a quoted cell may span lines)
        try:
            for cells in reader:
                line, start = start, read + 1
                if not any(c.strip() for c in cells):
                    continue
                if header is None:
                    header = [c.strip() for c in cells]
                    continue
                rows.append((line, cells))
            break
        except csv.Error as exc:
            # the reader stops at its first error: a new one reads on from the next line
            failed_at, before = read, failed_at
            if str(exc).startswith("new-line character seen in unquoted field"):
                problems.add(
                    read,
                    "a carriage return (\\r) inside a cell that is not quoted",
                    "each row on one line, or the cell in double quotes",
                )
            else:
                problems.add(read, f"not valid CSV: {exc}", "comma-separated values")
            if failed_at == before:  # nothing read since the last error: no line left to try
                break
    return header or [], rows


def csv_head(source: Source) -> list[str]:
    """The cells of the first non-blank line (for detection)."""
    head = source.head(8192).lstrip(b"\xef\xbb\xbf").decode("utf-8", "replace")
    for line in head.splitlines():
        if line.strip():
            return next(csv.reader([line]), [])
    return []


def keys_present(source: Source, records: list[Any]) -> set[str]:
    """The keys of the first JSON object, or else the cells of a CSV header: what a 'lacks'
    list of detection must leave out."""
    for record in records:
        if isinstance(record, dict):
            return set(record)
    return {cell.strip() for cell in csv_head(source)}


# --------------------------------------------------------------------------- fields


def get(record: Any, *keys: Any) -> Any:
    value = record
    for key in keys:
        if isinstance(value, dict):
            value = value.get(key)
        elif isinstance(value, list) and isinstance(key, int) and -len(value) <= key < len(value):
            value = value[key]
        else:
            return None
    return value


def obj(value: Any) -> dict[str, Any]:
    """The value if it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


class Fields:
    """Checked access to one record's fields; problems are worded with the field and value."""

    def __init__(
        self,
        record: dict[str, Any],
        line: int | None,
        problems: Problems,
        what: str,
        *,
        text_numbers: Container[str] = (),
    ) -> None:
        self.record = record
        self.line = line
        self.problems = problems
        self.what = what
        self.ok = True
        # fields a tool may write as text (vLLM --metadata output_len=500 → "500"): a numeric
        # string there is read where a number is expected, and the field remembered
        self.text_numbers = text_numbers
        self.read_from_text: list[str] = []

    def _bad(self, name: str, value: Any, expected: str) -> None:
        self.ok = False
        if value is _MISSING:
            self.problems.add(self.line, f'"{name}" is missing', f"{expected} ({self.what})")
        else:
            self.problems.add(self.line, f'"{name}" is {shown(value)}', f"{expected} ({self.what})")

    def value(self, name: str) -> Any:
        value: Any = self.record
        for part in name.split("."):
            if not isinstance(value, dict) or part not in value:
                return _MISSING
            value = value[part]
        return value

    def _numeric(self, name: str) -> Any:
        """The field's value, a numeric string read as its number when that is allowed."""
        value = self.value(name)
        if isinstance(value, str) and name in self.text_numbers:
            number = numeric_text(value)
            if number is not None:
                if name not in self.read_from_text:
                    self.read_from_text.append(name)
                return number
        return value

    def number(
        self, name: str, *, required: bool = False, minimum: float | None = 0, unit: str = ""
    ) -> float | None:
        value = self._numeric(name)
        expected = f"a number{' of ' + unit if unit else ''}"
        if minimum is not None:
            expected += f" ≥ {minimum:g}"
        if value is _MISSING or value is None:
            if required:
                self._bad(name, value, expected)
            return None
        if (
            not is_number(value)
            or not math.isfinite(value)
            or (minimum is not None and value < minimum)
        ):
            self._bad(name, value, expected)
            return None
        return float(value)

    def integer(self, name: str, *, required: bool = False, minimum: int | None = 0) -> int | None:
        value = self._numeric(name)
        expected = "a whole number" + (f" ≥ {minimum}" if minimum is not None else "")
        if is_number(value) and math.isfinite(value) and abs(value) > MAX_INT64:
            self._bad(name, value, f"{expected} and ≤ 2^63 − 1")
            return None
        if value is _MISSING or value is None:
            if required:
                self._bad(name, value, expected)
            return None
        if (
            not is_number(value)
            or not math.isfinite(value)
            or value != int(value)
            or (minimum is not None and value < minimum)
        ):
            self._bad(name, value, expected)
            return None
        return int(value)

    def string(self, name: str, *, required: bool = False) -> str | None:
        value = self.value(name)
        if value is _MISSING or value is None:
            if required:
                self._bad(name, value, "a string")
            return None
        if not isinstance(value, str):
            self._bad(name, value, "a string")
            return None
        return value

    def boolean(self, name: str) -> bool | None:
        value = self.value(name)
        if value is _MISSING or value is None:
            return None
        if not isinstance(value, bool):
            self._bad(name, value, "true or false")
            return None
        return value

    def mapping(self, name: str, *, required: bool = False) -> dict[str, Any] | None:
        value = self.value(name)
        if value is _MISSING or value is None:
            if required:
                self._bad(name, value, "an object")
            return None
        if not isinstance(value, dict):
            self._bad(name, value, "an object")
            return None
        return value

    def numbers(
        self,
        name: str,
        *,
        length: int | None = None,
        minimum: float | None = 0,
        unit: str = "",
        allow_none: bool = False,
    ) -> list[float | None] | None:
        """A list of numbers (None where allowed), or None when absent."""
        value = self.value(name)
        if value is _MISSING or value is None:
            return None
        expected = f"a list of numbers{' of ' + unit if unit else ''}"
        if not isinstance(value, list):
            self._bad(name, value, expected)
            return None
        if length is not None and len(value) != length:
            self.ok = False
            self.problems.add(
                self.line,
                f'"{name}" has {len(value)} items',
                f"one per request, {length} ({self.what})",
            )
            return None
        # the common case in one pass: plain finite numbers (a NaN or ±inf makes the sum NaN
        # or infinite), then the slow loop only to word a problem
        if all(type(v) is float or type(v) is int for v in value):
            total = sum(value)
            if math.isfinite(total) and (minimum is None or not value or min(value) >= minimum):
                return [float(v) for v in value]
        out: list[float | None] = []
        for i, v in enumerate(value):
            if v is None and allow_none:
                out.append(None)
            elif not is_number(v) or not math.isfinite(v) or (minimum is not None and v < minimum):
                self._bad(f"{name}[{i}]", v, expected.replace("a list of numbers", "a number"))
                return None
            else:
                out.append(float(v))
        return out

    def items(self, name: str, *, length: int | None = None) -> list[Any] | None:
        """A list of anything (checked for length), or None when absent."""
        value = self.value(name)
        if value is _MISSING or value is None:
            return None
        if not isinstance(value, list):
            self._bad(name, value, "a list")
            return None
        if length is not None and len(value) != length:
            self.ok = False
            self.problems.add(
                self.line,
                f'"{name}" has {len(value)} items',
                f"one per request, {length} ({self.what})",
            )
            return None
        return value


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


_MISSING: Any = _Missing()


# --------------------------------------------------------------------------- clocks


def epoch_ns_seconds(values: list[int | None], base: int) -> list[float]:
    """Epoch nanoseconds → seconds since `base`: subtracted as integers, so nothing is lost."""
    return [math.nan if v is None else (v - base) / 1e9 for v in values]


def sha256_text(text: str | None) -> str | None:
    if text is None:
        return None
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# --------------------------------------------------------------------------- rows


RunBuilder = Callable[
    [dict[str, Any], int, str, str, "Problems"],
    tuple[dict[str, Any] | None, list[dict[str, Any]]],
]


def runs_of_records(
    records: list[tuple[int, Any]],
    name: Callable[[dict[str, Any]], str],
    build: RunBuilder,
    path: str,
    problems: Problems,
    what: str,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """One run per result object (ids unique within the file) and the request rows of all."""
    ids = unique_ids([name(r) if isinstance(r, dict) else "run" for _, r in records])
    runs: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    for (line, record), run_id in zip(records, ids, strict=True):
        if not isinstance(record, dict):
            problems.add(
                line, f"the record is a JSON {type(record).__name__}", f"a JSON object ({what})"
            )
            continue
        run, run_rows = build(record, line, run_id, path, problems)
        if run is not None:
            runs.append(run)
            rows.extend(run_rows)
    return runs, rows


def new_run(
    run_id: str,
    path: str,
    line: int | None,
    fmt: str,
    *,
    tool: tuple[str | None, str | None],
    engine: dict[str, Any] | None = None,
    model: dict[str, Any] | None = None,
    hardware: dict[str, Any] | None = None,
    workload: dict[str, Any] | None = None,
    repeat: int | None = None,
    group: str | None = None,
    summary: dict[str, Any] | None = None,
    derived: list[str] | None = None,
    extra: dict[str, Any] | None = None,
    concurrency_derived: bool = False,
) -> dict[str, Any]:
    """One canonical run row, flattened by the native reader's own `run_row`."""
    record: dict[str, Any] = {
        "id": run_id,
        "tool": {"name": tool[0], "version": tool[1]},
        "engine": engine or {},
        "model": model or {},
        "hardware": hardware or {},
        "workload": {k: v for k, v in (workload or {}).items() if v is not None},
        "repeat": repeat,
        "group": group,
    }
    row = run_row(record, path, line, fmt)
    row["summary"] = {k: v for k, v in (summary or {}).items() if v is not None} or None
    row["derived"] = list(derived or [])
    row["extra"] = {k: v for k, v in (extra or {}).items() if v is not None} or None
    row["concurrency_derived"] = concurrency_derived
    return row


def finish(
    source: Source,
    fmt: str,
    runs: list[dict[str, Any]],
    rows: list[dict[str, Any]],
    *,
    records: int,
    notes: list[str] | None = None,
    problems: Problems | None = None,
) -> Partial:
    """The Partial of one file: request rows normalized, runs, and what was read."""
    partial = Partial()
    if rows:
        frame = pd.DataFrame.from_records(rows)
        if "token_times" in frame:  # absent is None, as the native reader leaves it (not NaN)
            times = [t if isinstance(t, list) else None for t in frame["token_times"]]
            frame["token_times"] = pd.Series(times, index=frame.index, dtype=object)
        frame["source_path"] = source.path
        partial.requests = normalize_requests(frame)
    partial.runs = runs
    skipped = len(problems.bad) if problems is not None else 0
    partial.input = InputFile(
        path=source.path,
        digest=source.pending_sha256(),
        format=fmt,
        records=records,
        skipped=skipped,
        skipped_reasons=problems.skipped_reasons() if problems else [],
        notes=list(notes or []),
    )
    return partial


def stop_mode(ignore_eos: bool | None, lengths: Iterable[float] | None = None) -> str:
    """forced when the tool recorded ignore_eos true; natural when it recorded false and the
    output lengths vary; else unknown (the rules then look at the lengths themselves)."""
    if ignore_eos is True:
        return "forced"
    if ignore_eos is False:
        values = [v for v in (lengths or []) if v is not None and not math.isnan(v)]
        if len(set(values)) > 1:
            return "natural"
    return "unknown"
