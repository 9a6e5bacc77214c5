"""The native format: benchreport's own JSON Lines (schema benchreport/1).

The bulk of a file (request records) is parsed by pyarrow's multi-threaded JSON reader and
checked column-wise; files that pyarrow cannot take whole (mixed types in a column, a syntax
error) are parsed line by line with orjson, through the same checks, so that every problem
is reported with its line.
"""

from __future__ import annotations

import codecs
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj

from reporter.errors import MAX_SHOWN_PROBLEMS, Problem, TraceError
from reporter.ingest.limits import (
    MAX_JSON_DEPTH,
    NEWLINE_BLOCK,
    PARALLEL_READ_BYTES,
    deep_lines,
    find_newlines,
    newline_blocks,
    shallow_line_bytes,
    type_depth,
)
from reporter.ingest.lines import Source, iter_lines, json_problem, loads_relaxed, parse_line
from reporter.ingest.validate import KINDS, bad_request_rows, record_problems
from reporter.runrecord import claim_row, run_row
from reporter.table import (
    PARALLEL_ROWS,
    InputFile,
    Partial,
    chunk_counts,
    normalize_requests,
)

NAME = "benchreport"
#: The file's sha256 is started once its request lines are parsed (Source.hash_in_background):
#: pyarrow's parse keeps every core busy, the rest of the read leaves one free.
HASHES_AFTER_PARSE = True
#: Keys that make a file look like this format (to rank the "could not tell" candidates).
DETECT_KEYS = ("kind", "schema")
REQUEST_FIELDS = (
    "run", "id", "t_send", "t_first", "t_end", "prompt_tokens", "output_tokens",
    "finish_reason", "reported_tps", "prompt_sha256", "token_times", "chunk_tokens", "error",
    "n_chunks", "ttft", "e2e",
)  # fmt: skip


def detect(source: Source, records: list[Any]) -> tuple[bool, list[str]]:
    """Native when the first records carry a known `kind`."""
    kinds = [r.get("kind") for r in records if isinstance(r, dict)]
    if kinds and all(k in KINDS for k in kinds):
        return True, []
    return False, ['"kind" (run, request, claim, probe, log)']


def _line_lengths(newlines: np.ndarray, size: int) -> np.ndarray:
    """The length of every line (blank ones too) of a file of `size` bytes with these
    newlines, without its newline: one array, no array of starts or stops beside it."""
    lengths = np.empty(len(newlines) + 1, dtype=np.int64)
    if not len(newlines):
        lengths[0] = size
        return lengths
    lengths[0] = newlines[0]
    np.subtract(newlines[1:], newlines[:-1], out=lengths[1:-1])
    lengths[1:-1] -= 1
    lengths[-1] = size - newlines[-1] - 1
    return lengths


def _line_start(newlines: np.ndarray, index: int) -> int:
    """Where the line at `index` (0 for the first, blank lines counted) begins."""
    return 0 if index == 0 else int(newlines[index - 1]) + 1


def _blank_lines(data: bytes, newlines: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The indices of the blank lines (empty, or a carriage return alone), which pyarrow does
    not count as rows; few lines are that short (often the last alone)."""
    short = np.flatnonzero(lengths < 2)
    single = short[lengths[short] == 1]
    # where each one-byte line begins: after the newline before it (the first line at 0)
    starts = np.zeros(len(single), dtype=np.int64)
    later = single > 0
    starts[later] = newlines[single[later] - 1] + 1
    returns = np.frombuffer(data, np.uint8)[starts] == 13
    return np.union1d(short[lengths[short] == 0], single[returns])


def _line_numbers(
    data: bytes, newlines: np.ndarray, lengths: np.ndarray, blank: np.ndarray | None = None
) -> np.ndarray:
    """Line number of each non-empty line, as pyarrow numbers its rows (`lengths`: every
    line's, blank ones too; `blank`: _blank_lines, if the caller has it)."""
    if blank is None:
        blank = _blank_lines(data, newlines, lengths)
    return np.delete(np.arange(1, len(lengths) + 1), blank)


#: Bytes of a line's head compared at once by _starts_with (as 8-byte words).
HEAD = 24


def _starts_with(data: bytes, starts: np.ndarray, prefixes: tuple[bytes, ...]) -> np.ndarray:
    """Whether the bytes at each of `starts` (increasing) begin with one of `prefixes` (each at
    most HEAD bytes).

    The HEAD bytes at each start are gathered as one value of a view of the file with a
    HEAD-byte value at every byte (no index array per byte), and compared as 8-byte words,
    the bytes past a prefix masked out.
    """
    found = np.zeros(len(starts), dtype=bool)
    # the starts from `tail` on are less than HEAD bytes before the end: compared one by one
    tail = int(np.searchsorted(starts, len(data) - HEAD, side="right"))
    for i in range(tail, len(starts)):
        found[i] = any(data.startswith(p, int(starts[i])) for p in prefixes)
    if not tail:
        return found
    heads = np.ndarray((len(data) - HEAD + 1,), dtype=f"V{HEAD}", buffer=data, strides=(1,))
    words = heads[starts[:tail]].view(np.uint64).reshape(-1, HEAD // 8)
    for prefix in prefixes:
        pattern = np.frombuffer(prefix.ljust(HEAD, b"\0"), np.uint64)
        mask = np.frombuffer((b"\xff" * len(prefix)).ljust(HEAD, b"\0"), np.uint64)
        match = np.ones(tail, dtype=bool)
        for j in range(HEAD // 8):
            if mask[j] == np.uint64(0):
                continue
            column = words[:, j] if mask[j] == ~np.uint64(0) else words[:, j] & mask[j]
            match &= column == pattern[j]
        found[:tail] |= match
    return found


def _scan_lines(
    data: bytes, prefixes: tuple[bytes, ...], block: int = NEWLINE_BLOCK
) -> tuple[np.ndarray, np.ndarray, bool]:
    """The offsets of the file's newlines, whether each line (blank ones too) begins with
    one of `prefixes` (_starts_with), and whether every byte is ASCII.

    A block's line heads are compared, and its bytes looked at for one over 0x7F, as soon as
    its newlines are found, while its bytes are in cache: afterwards, each of a million heads
    would be fetched from memory again. A large file's halves are scanned on two threads.
    """
    blocks = range(0, len(data), block)
    halves = [blocks]
    if len(data) >= PARALLEL_READ_BYTES and len(blocks) > 1:  # (numpy releases the GIL)
        halves = [blocks[: len(blocks) // 2], blocks[len(blocks) // 2 :]]
    if len(halves) == 1:
        found = [_scan_blocks(data, prefixes, block, blocks)]
    else:
        with ThreadPoolExecutor(max_workers=2, thread_name_prefix="scan") as pool:
            futures = [pool.submit(_scan_blocks, data, prefixes, block, h) for h in halves]
            found = [future.result() for future in futures]
    first = _starts_with(data, np.zeros(1, dtype=np.int64), prefixes)  # the first line
    newlines = [n for half, _, _ in found for n in half]
    offsets = np.concatenate(newlines) if newlines else np.zeros(0, dtype=np.int64)
    begins = np.concatenate([first, *(b for _, half, _ in found for b in half)])
    return offsets, begins, all(ascii_only for _, _, ascii_only in found)


def _scan_blocks(
    data: bytes, prefixes: tuple[bytes, ...], block: int, blocks: range
) -> tuple[list[np.ndarray], list[np.ndarray], bool]:
    """_scan_lines for some of the blocks: their newlines, whether the line after each
    begins with a prefix, and whether their bytes are ASCII."""
    newlines: list[np.ndarray] = []
    begins: list[np.ndarray] = []
    ascii_only = True
    for begin, found in zip(blocks, newline_blocks(data, block, blocks), strict=True):
        newlines.append(found)
        begins.append(_starts_with(data, found + 1, prefixes))
        if ascii_only:
            part = np.frombuffer(data, np.uint8, count=min(block, len(data) - begin), offset=begin)
            ascii_only = int(part.max()) < 0x80
    return newlines, begins, ascii_only


def _line_bytes(data: bytes, line: int, newlines: np.ndarray) -> bytes:
    start = _line_start(newlines, line - 1)
    stop = data.find(b"\n", start)
    return data[start : (None if stop < 0 else stop)]


class _Collector:
    """Gathers the problems of one file: all are counted, the first ones are worded."""

    def __init__(self, path: str, lenient: bool) -> None:
        self.path = path
        self.lenient = lenient
        self.problems: list[Problem] = []
        self.bad_lines: set[int] = set()
        self.reasons: dict[str, int] = {}

    def add(self, line: int, message: str, expected: str | None, col: int | None = None) -> None:
        if line not in self.bad_lines:  # a line's first problem names why it was skipped
            key = message.split(" is ")[0].split(": ")[0]
            self.reasons[key] = self.reasons.get(key, 0) + 1
        self.bad_lines.add(line)
        if len(self.problems) < 5 * MAX_SHOWN_PROBLEMS:
            self.problems.append(Problem(self.path, line, message, expected, col))

    def add_uncounted_line(self, line: int) -> None:
        self.bad_lines.add(line)
        self.reasons["invalid request record"] = self.reasons.get("invalid request record", 0) + 1


def read(source: Source, *, lenient: bool = False) -> Partial:
    """Parse, validate and tabulate one native file."""
    problems = _Collector(source.path, lenient)
    parsed = _read_fast(source, problems)
    if parsed is None:
        parsed = _read_slow(source, problems)
    requests, others = parsed
    if problems.bad_lines and not lenient:
        total = len(problems.bad_lines)
        extra = max(0, total - len({p.line for p in problems.problems}))
        raise TraceError(
            sorted(problems.problems, key=lambda p: p.line or 0),
            total=len(problems.problems) + extra,
        )
    partial = _tabulate(source, requests, others)
    assert partial.input is not None
    partial.input.skipped = len(problems.bad_lines)
    partial.input.skipped_reasons = [f"{k}: {v}" for k, v in sorted(problems.reasons.items())]
    return partial


#: Request records as writers write them: compact (orjson, JSON.stringify) or Python's default.
REQUEST_PREFIXES = (b'{"kind":"request"', b'{"kind": "request"')
#: Above this many lines that are not plainly request records, read the file whole instead.
MAX_OTHER_LINES = 4096


def _parse_segments(data: bytes, spans: list[tuple[int, int]]) -> pa.Table | None:
    """Parse byte ranges of request lines with pyarrow and join them; None if any fails.

    Request lines alone share one shape, so pyarrow can infer their types; the run records
    in between (whose string `id` would clash with integer request ids) are kept out. Two
    spans are parsed at once: each parse ends with its last blocks on fewer threads than
    cores, and the other span's blocks fill them.
    """
    buffer = pa.py_buffer(data)
    # blocks well under a segment's size, so that each segment is parsed on every core
    options = pj.ReadOptions(block_size=1 << 21)
    # The parsed columns live only until they are copied into pandas. From the C library's
    # heap, the memory they free is what numpy's columns are then made of; from pyarrow's
    # own pool (mimalloc), it stays there, and every column after is fresh memory, faulted
    # in page by page (about 0.15 s of a million-request audit).
    pool = pa.system_memory_pool()

    def parse(span: tuple[int, int]) -> pa.Table:
        a, b = span
        table = pj.read_json(
            pa.BufferReader(buffer.slice(a, b - a)), read_options=options, memory_pool=pool
        )
        for name in ("id", "run"):  # ids may be integers in one block, strings in another
            if name in table.column_names and not pa.types.is_string(table.schema.field(name).type):
                i = table.column_names.index(name)
                table = table.set_column(i, name, pc.cast(table.column(name), pa.string()))
        return table

    try:
        if len(spans) < 2:
            tables = [parse(span) for span in spans]
        else:
            threads = ThreadPoolExecutor(max_workers=2, thread_name_prefix="spans")
            try:
                tables = list(threads.map(parse, spans))  # (in the spans' order)
            finally:  # a span pyarrow cannot parse: the others are not parsed in vain
                threads.shutdown(cancel_futures=True)
        return pa.concat_tables(tables, promote_options="permissive") if tables else None
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        return None


#: Bytes looked at, and decoded if need be, at a time to check that a file is UTF-8.
UTF8_CHUNK = 1 << 20


def _is_utf8(data: bytes, chunk: int = UTF8_CHUNK) -> bool:
    """Whether the file is UTF-8, by chunks: a chunk of ASCII bytes only is valid as it is (and
    no character can continue across it), the others are decoded (the text is not kept)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    arr = np.frombuffer(data, np.uint8)
    view = memoryview(data)
    try:
        for start in range(0, len(data), chunk):
            if int(arr[start : start + chunk].max()) < 0x80:
                if decoder.getstate()[0]:
                    return False  # a character cut short by an ASCII byte
                continue
            decoder.decode(view[start : start + chunk])
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


def _read_fast(
    source: Source, problems: _Collector, *, count_brackets: bool = False
) -> tuple[pd.DataFrame, list[tuple[int, dict[str, Any]]]] | None:
    """The file through pyarrow, its request lines a span at a time; None when pyarrow cannot
    (the caller then reads it line by line).

    Lines nested too deep must not reach pyarrow's reader (deep enough, it overflows the C
    stack) and are refused. Their brackets are counted beforehand only when a request line is
    long enough to be dangerous (`count_brackets`, or one over `shallow_line_bytes`); otherwise
    pyarrow's table tells: a value nested N deep is inferred as a type N deep, and if any is
    too deep the file is read again with its brackets counted.
    """
    data = source.data
    if data.startswith(b"\xef\xbb\xbf") or not data:
        return None
    newlines, begins_request, ascii_only = _scan_lines(data, REQUEST_PREFIXES)
    if not ascii_only and not _is_utf8(data):
        return None  # pyarrow does not check; the line-by-line reader words each bad line
    # (no array of starts or stops: a million lines make each array a few milliseconds)
    lengths = _line_lengths(newlines, len(data))
    blank = _blank_lines(data, newlines, lengths)
    count = len(lengths) - len(blank)
    if count == 0:
        return None
    # no blank line before the last line: the lines are 1, 2, 3, ..., each one's number its
    # place plus one, and the lines' arrays are slices, not copies
    in_order = not len(blank) or bool(blank[0] == count)
    lines = None if in_order else _line_numbers(data, newlines, lengths, blank)
    kept: slice | np.ndarray = slice(0, count) if lines is None else lines - 1

    def numbers(places: np.ndarray) -> np.ndarray:
        found: np.ndarray = places + 1 if lines is None else lines[places]
        return found

    line_lengths = lengths[kept]
    # a line shorter than the longest prefix is parsed alone, as the other lines are
    width = max(len(p) for p in REQUEST_PREFIXES)
    is_request = begins_request[kept] & (line_lengths >= width)
    # pyarrow's reader overflows the C stack on deep nesting: the request lines it is to read
    # are looked at first if any is long enough to be dangerous, and those too deep go to
    # parse_line, which refuses them with their depth (as it does any other line)
    if not count_brackets and is_request.any():
        longest = int(np.max(line_lengths, where=is_request, initial=0))
        count_brackets = longest > shallow_line_bytes()
    if count_brackets:
        deep = deep_lines(data, newlines)
        if deep:
            is_request &= ~np.isin(numbers(np.arange(count)), np.fromiter(deep, dtype=np.int64))
    request_count = int(np.count_nonzero(is_request))
    if len(is_request) - request_count > MAX_OTHER_LINES:
        return None
    # consecutive request lines form one span of bytes for pyarrow
    edges = np.zeros(len(is_request) + 2, dtype=bool)
    edges[1:-1] = is_request
    breaks = np.flatnonzero(edges[1:] != edges[:-1])
    first_lines = numbers(breaks[::2]) - 1  # the indices of each span's first and last line
    last_lines = numbers(breaks[1::2] - 1) - 1
    spans = [
        (_line_start(newlines, a), int(newlines[b]) if b < len(newlines) else len(data))
        for a, b in zip(first_lines.tolist(), last_lines.tolist(), strict=True)
    ]
    table = _parse_segments(data, spans) if spans else None
    source.hash_in_background()
    if spans and (table is None or table.num_rows != request_count):
        return None
    if not count_brackets and table is not None and _record_depth(table) > MAX_JSON_DEPTH:
        del table
        return _read_fast(source, problems, count_brackets=True)
    others: list[tuple[int, dict[str, Any]]] = []
    stray: list[dict[str, Any]] = []  # request records written another way (key order, spaces)
    stray_lines: list[int] = []
    for line in numbers(np.flatnonzero(~is_request)):
        raw = _line_bytes(data, int(line), newlines)
        record, problem = parse_line(source.path, int(line), raw.strip())
        if problem is not None:
            problems.add(int(line), problem.message, problem.expected, problem.col)
        elif isinstance(record, dict) and record.get("kind") == "request":
            stray.append(record)
            stray_lines.append(int(line))
        else:
            for message, expected in record_problems(record):
                problems.add(int(line), message, expected)
            if int(line) not in problems.bad_lines:
                others.append((int(line), record))
    frames = []
    if table is not None:
        frame = _request_frame(table.select([c for c in REQUEST_FIELDS if c in table.column_names]))
        del table
        request_lines = np.flatnonzero(is_request)
        if lines is None:
            request_lines += 1  # (in place: numbers() would make a second array)
        else:
            request_lines = lines[request_lines]
        # a Series, not the array: pandas copies an array set as a column
        frame["source_line"] = pd.Series(request_lines, index=frame.index, copy=False)
        frames.append(_check_requests(frame, source, problems, newlines))
    if stray:
        frames.append(
            _check_requests(_records_frame(stray, stray_lines), source, problems, newlines)
        )
    if not frames:
        return pd.DataFrame({"source_line": np.zeros(0, dtype="int64")}), others
    if len(frames) == 1:
        return frames[0], others  # in file order already
    joined = pd.concat(frames, ignore_index=True)
    return joined.sort_values("source_line", kind="stable"), others


def _record_depth(table: pa.Table) -> int:
    """How deep the deepest of the table's records nests, from its inferred types."""
    return type_depth(pa.struct(list(table.schema)))


#: Request fields that hold numbers (a column pyarrow typed null holds no value: NaN).
_NUMBER_FIELDS = (
    "t_send", "t_first", "t_end", "prompt_tokens", "output_tokens", "reported_tps", "n_chunks",
    "chunk_tokens",
)  # fmt: skip


def _categorical(column: pa.ChunkedArray) -> pd.Series:
    """A string column as a pandas categorical, categories in order of first appearance.

    Runs of equal values (a run's requests are written together) are found by comparing each
    row with the one before: only the first row of each run is hashed.
    """
    n = len(column)
    if n == 0 or column.null_count:
        return pd.Series(pc.dictionary_encode(column).to_pandas())
    # the rows that differ from the one before, by their places (no mask of a million rows)
    later = pc.indices_nonzero(pc.not_equal(column.slice(1), column.slice(0, n - 1)))
    heads = np.concatenate(([0], np.asarray(later, dtype=np.int64) + 1))
    encoded = pc.dictionary_encode(_take_rows(column, heads))
    categories = pd.Index(encoded.dictionary.to_pylist())
    # codes of the width pandas keeps for these categories, checked by construction: each
    # is an index into the dictionary
    dtype = pd.CategoricalDtype(categories)
    width = pd.Categorical.from_codes(np.zeros(0, np.int8), dtype=dtype).codes.dtype
    indices = np.asarray(encoded.indices).astype(width)
    codes = np.repeat(indices, np.diff(np.append(heads, n)))
    return pd.Series(pd.Categorical.from_codes(codes, dtype=dtype, validate=False))


def _take_rows(column: pa.ChunkedArray, rows: np.ndarray) -> pa.Array:
    """The values at `rows` (increasing) as one array, taken chunk by chunk: pyarrow joins
    a chunked column's chunks before it takes from it (a copy of the column for a few rows)."""
    bounds = np.cumsum([0, *(len(c) for c in column.chunks)])
    cuts = np.searchsorted(rows, bounds).tolist()  # each chunk's rows: cuts[i] to cuts[i + 1]
    parts = [
        chunk.take(pa.array(rows[a:b] - bounds[i]))
        for i, (chunk, a, b) in enumerate(zip(column.chunks, cuts, cuts[1:], strict=False))
        if b > a
    ]
    return pa.concat_arrays(parts) if parts else pa.array([], type=column.type)


def _request_frame(table: pa.Table) -> pd.DataFrame:
    """The request columns of pyarrow's table as pandas, column by column, without a Python
    object per row where Arrow has the values: run and finish_reason are categorical, chunk
    times stay Arrow lists (reporter.latency and the checks read them whole), a column of
    nulls only is NaN where it holds numbers.

    pyarrow converts with the GIL released, so a large table's columns are converted on two
    threads: a million rows take ~0.1 s less (CPU time too, measured; on the main thread
    alone, fresh memory for each column costs more).
    """
    n = table.num_rows
    names = table.column_names
    if n < PARALLEL_ROWS:
        out = {name: _pandas_column(name, table.column(name), n) for name in names}
    else:
        with ThreadPoolExecutor(max_workers=2, thread_name_prefix="columns") as pool:
            futures = [pool.submit(_pandas_column, name, table.column(name), n) for name in names]
            out = {name: future.result() for name, future in zip(names, futures, strict=True)}
    return pd.DataFrame(out, index=pd.RangeIndex(n), copy=False)


def _pandas_column(name: str, column: pa.ChunkedArray, n: int) -> Any:
    """One column of _request_frame."""
    kind = column.type
    if name in ("run", "finish_reason") and pa.types.is_string(kind):
        return _categorical(column)
    if name == "token_times" and pa.types.is_list(kind) and _is_numeric(kind.value_type):
        lists = pc.cast(column, pa.list_(pa.float64()))
        return pd.Series(pd.arrays.ArrowExtensionArray(lists))
    if name in _NUMBER_FIELDS and pa.types.is_null(kind):
        return np.full(n, np.nan)
    return column.to_pandas()


def _is_numeric(kind: pa.DataType) -> bool:
    return bool(pa.types.is_floating(kind) or pa.types.is_integer(kind) or pa.types.is_null(kind))


def _records_frame(records: list[dict[str, Any]], lines: list[int]) -> pd.DataFrame:
    frame = pd.DataFrame.from_records(records, columns=list(REQUEST_FIELDS))
    frame = frame.astype(object).where(frame.notna(), None) if len(frame) else frame
    frame["source_line"] = np.asarray(lines, dtype="int64")
    return frame


def _read_slow(
    source: Source, problems: _Collector
) -> tuple[pd.DataFrame, list[tuple[int, dict[str, Any]]]]:
    source.hash_in_background()  # (the lines are parsed on this thread alone)
    problems.problems.clear()
    problems.bad_lines.clear()
    problems.reasons.clear()
    data = source.data[3:] if source.data.startswith(b"\xef\xbb\xbf") else source.data
    others: list[tuple[int, dict[str, Any]]] = []
    request_records: list[dict[str, Any]] = []
    request_lines: list[int] = []
    for number, line in iter_lines(data):
        record, problem = parse_line(source.path, number, line)
        if problem is not None:
            problems.add(number, problem.message, problem.expected, problem.col)
            continue
        if isinstance(record, dict) and record.get("kind") == "request":
            request_records.append(record)
            request_lines.append(number)
            continue
        for message, expected in record_problems(record):
            problems.add(number, message, expected)
        if number not in problems.bad_lines:
            others.append((number, record))
    frame = _records_frame(request_records, request_lines)
    return _check_requests(frame, Source(source.path, data), problems, find_newlines(data)), others


def _check_requests(
    frame: pd.DataFrame, source: Source, problems: _Collector, newlines: np.ndarray
) -> pd.DataFrame:
    """The frame without its failing rows; each failure is reported (worded or counted)."""
    bad = bad_request_rows(frame)
    if not bad.any():
        return frame
    bad_lines = frame["source_line"].to_numpy()[bad]
    worded = 0
    for line in bad_lines:
        line = int(line)
        if worded >= 2 * MAX_SHOWN_PROBLEMS:
            problems.add_uncounted_line(line)
            continue
        raw = _line_bytes(source.data, line, newlines).strip()
        try:
            record = loads_relaxed(raw)  # the stdlib keeps NaN, so it can be named
        except ValueError:
            problem = json_problem(source.path, line, raw, ValueError("not valid JSON"))
            problems.add(line, problem.message, problem.expected, problem.col)
            worded += 1
            continue
        found = record_problems(record) or [("the record is not valid", "a valid request")]
        for message, expected in found:
            problems.add(line, message, expected)
        worded += 1
    return frame[~bad]


def _tabulate(
    source: Source, requests: pd.DataFrame, others: list[tuple[int, dict[str, Any]]]
) -> Partial:
    partial = Partial()
    # one category, not a copy of the path a row
    requests["source_path"] = pd.Categorical.from_codes(
        np.zeros(len(requests), dtype=np.int8), pd.Index([source.path])
    )
    if "token_times" in requests:
        counted = pd.Series(chunk_counts(requests["token_times"]), index=requests.index)
        # a converted trace may state chunk counts without chunk times (no clock in the source)
        if "n_chunks" in requests:
            counted = counted.fillna(pd.to_numeric(requests["n_chunks"], errors="coerce"))
        requests["n_chunks"] = counted
    partial.requests = normalize_requests(requests)
    for line, record in others:
        kind = record["kind"]
        where = {"source_path": source.path, "source_line": line}
        if kind == "run":
            partial.runs.append(run_row(record, source.path, line, NAME))
        elif kind == "claim":
            partial.claims.append(claim_row(record) | where)
        elif kind == "probe":
            partial.probes.append(
                {k: record.get(k) for k in ("what", "value", "unit", "buffer_bytes", "run")} | where
            )
        elif kind == "log":
            partial.logs.append({k: record.get(k) for k in ("run", "level", "text", "t")} | where)
        elif kind == "run_end":
            partial.run_ends.append(record | where)
    partial.input = InputFile(
        path=source.path,
        digest=source.pending_sha256(),
        format=NAME,
        records=len(requests) + len(others),
    )
    return partial
