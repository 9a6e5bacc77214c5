"""Read a file's bytes and split JSON Lines, keeping every line's number."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from reporter.errors import Problem, TraceError
from reporter.ingest.limits import depth_problem, read_bytes, too_deep

_HASHER: ThreadPoolExecutor | None = None
#: Files over this size are hashed on a worker thread (Source.hash_in_background).
HASH_LATER_BYTES = 1 << 22


def _hash_later(data: bytes) -> Future[str]:
    """sha256 on a worker thread (hashlib releases the GIL) while the file is parsed."""
    global _HASHER
    if _HASHER is None:
        _HASHER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sha256")
    return _HASHER.submit(lambda: hashlib.sha256(data).hexdigest())


@dataclass(frozen=True)
class Source:
    """A file's bytes, read once, with its display path and digest."""

    path: str
    data: bytes
    digest: Future[str] | None = field(default=None, compare=False, repr=False)

    @classmethod
    def read(cls, path: str | Path) -> Source:
        try:
            data = read_bytes(str(path), "trace")
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
            raise TraceError(
                [Problem(str(path), None, f"cannot read the file: {reason}")]
            ) from None
        return cls(str(path), data)

    def hash_in_background(self) -> None:
        """Start the file's sha256 on a worker thread, if the file is large enough for that to
        pay; `sha256` then waits for it. The reader calls this when a core is free (the
        native reader after its parse, which keeps every core busy; the others at once)."""
        if self.digest is None and len(self.data) > HASH_LATER_BYTES:
            object.__setattr__(self, "digest", _hash_later(self.data))

    def pending_sha256(self) -> str | Future[str]:
        """The sha256, or the worker thread working it out (hash_in_background)."""
        return self.digest if self.digest is not None else self.sha256

    @property
    def sha256(self) -> str:
        if self.digest is not None:
            return self.digest.result()
        return hashlib.sha256(self.data).hexdigest()

    def text(self) -> str:
        try:
            return self.data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            line = self.data[: exc.start].count(b"\n") + 1
            raise TraceError(
                [
                    Problem(
                        self.path,
                        line,
                        f"byte {exc.object[exc.start]:#04x} is not UTF-8",
                        "a UTF-8 text file",
                    )
                ]
            ) from None

    def head(self, size: int = 65536) -> bytes:
        return self.data[:size]


def iter_lines(data: bytes) -> Iterator[tuple[int, bytes]]:
    """(line number, line) for every non-blank line, numbers from 1.

    Lazy: reading the first lines of a big file does not split all of it.
    """
    pos, number, size = 0, 0, len(data)
    while pos < size:
        end = data.find(b"\n", pos)
        if end < 0:
            end = size
        number += 1
        line = data[pos:end].strip()
        if line:
            yield number, line
        pos = end + 1


def text_lines(text: str) -> list[str]:
    """A decoded file's lines as every path:line numbers them (`iter_lines`): split at "\n"
    alone, a "\r" before it dropped. `str.splitlines()` also splits at U+2028, NEL, form feed
    and other characters, shifting every later line's number and cutting a line in two."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


#: Longer integers are read as floats (infinite beyond a double's range, which every field
#: check refuses): the standard library refuses to convert more than 4,300 digits, and no
#: count or time of a benchmark needs more than a double holds.
MAX_INT_DIGITS = 19


def _int_or_float(text: str) -> int | float:
    return int(text) if len(text.lstrip("-")) <= MAX_INT_DIGITS else float(text)


class LoneSurrogate(ValueError):
    """A `\\ud800`-style escape without its pair: not a character, so not text."""


def _check_text(value: Any) -> None:
    """Raise LoneSurrogate if a string (key or value) of the document holds one."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                raise LoneSurrogate("a string holds a lone surrogate escape") from None
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def loads_relaxed(raw: bytes | str) -> Any:
    """JSON by the standard library, which also takes the tokens Python writes (NaN,
    Infinity), made safe for what it would let through: bytes that are not UTF-8 and lone
    surrogates (ValueError), integers too long to convert (read as floats)."""
    text = raw.decode("utf-8") if isinstance(raw, bytes) else raw  # strict: not surrogatepass
    value = json.loads(text, parse_int=_int_or_float)
    _check_text(value)
    return value


def json_problem(path: str, number: int, line: bytes, exc: Exception) -> Problem:
    """Word a JSON syntax error the way a reader can find it: path:line:col.

    The words and the column come from the standard library's parser, whose messages
    ("Expecting ',' delimiter") do not change with the fast parser's version.
    """
    text = line.decode("utf-8", "replace")
    pos = getattr(exc, "pos", None)
    col = len(line[:pos].decode("utf-8", "replace")) + 1 if isinstance(pos, int) else None
    rest = line[pos:] if isinstance(pos, int) else b""
    for token in (b"NaN", b"Infinity", b"-Infinity"):
        if rest.startswith(token):
            return Problem(
                path,
                number,
                f"not valid JSON: {token.decode()} is not a JSON number",
                "a finite number or null",
                col=col,
            )
    try:
        line.decode("utf-8")
    except UnicodeDecodeError as bad:
        return Problem(
            path,
            number,
            f"byte {line[bad.start]:#04x} is not UTF-8",
            "a JSON object per line, in UTF-8",
            col=len(line[: bad.start].decode("utf-8", "replace")) + 1,
        )
    try:
        loads_relaxed(text)
    except json.JSONDecodeError as std:
        return Problem(
            path, number, f"not valid JSON: {std.msg}", "one JSON object per line", col=std.colno
        )
    except RecursionError:
        return Problem(
            path, number, "not valid JSON: nested too deeply", "one JSON object per line", col=col
        )
    except LoneSurrogate as lone:
        return Problem(path, number, f"not valid JSON: {lone}", "text in UTF-8", col=col)
    msg = exc.msg if isinstance(exc, orjson.JSONDecodeError) else str(exc)
    return Problem(path, number, f"not valid JSON: {msg}", "one JSON object per line", col=col)


def parse_line(path: str, number: int, line: bytes) -> tuple[Any, Problem | None]:
    depth = too_deep(line)
    if depth is not None:
        return None, depth_problem(path, number, depth)
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        return None, json_problem(path, number, line, exc)
    twice = twice_keyed(path, number, line, record)
    return (None, twice) if twice is not None else (record, None)


def twice_keyed(
    path: str, number: int | None, line: bytes, record: Any, *, into_lists: bool = False
) -> Problem | None:
    """The problem of a line whose object holds a key twice (a parser keeps one of the two
    values and drops the other unsaid), else None. Only a line with more `":` than the keys
    read is looked at closely: a string holding `":` costs that look, nothing more."""
    if not isinstance(record, dict | list):
        return None
    quoted = line.count(b'":')
    # a flat object (a request line) answers at the first comparison; a list's length
    # counts items, not keys, so a list is always counted through
    if isinstance(record, dict) and quoted <= len(record):
        return None
    if quoted <= _keys(record, into_lists):
        return None
    twice = duplicate_key(line)
    if twice is None:
        return None
    return Problem(path, number, f'the key "{twice}" appears twice in one object', "each key once")


def _keys(record: dict[str, Any] | list[Any], into_lists: bool = False) -> int:
    """The keys of a record and of the objects nested in it: through objects only, or
    through lists too (`into_lists`, for a whole document). A key left uncounted only makes
    the record looked at closely, never passed over."""
    count, stack = 0, [record]
    while stack:
        obj = stack.pop()
        if isinstance(obj, dict):
            count += len(obj)
            values: Any = obj.values()
        else:
            values = obj
        stack.extend(
            v for v in values if isinstance(v, dict) or (into_lists and isinstance(v, list))
        )
    return count


def duplicate_key(line: bytes) -> str | None:
    """The first key that one object of the JSON text holds twice, or None."""
    found: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: set[str] = set()
        for key, _ in items:
            if key in seen and not found:
                found.append(key)
            seen.add(key)
        return dict(items)

    try:
        json.loads(line, object_pairs_hook=pairs)
    except (ValueError, RecursionError):
        return None
    return found[0] if found else None
