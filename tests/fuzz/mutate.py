"""Hypothesis strategies that break a valid file the ways real files and attackers break.

Each strategy starts from the bytes of a valid record file and applies one to three mutations:
at the byte level (flips, truncation, duplicated or swapped lines, odd encodings, NUL and
invalid UTF-8), at the value level for JSON, JSON Lines, YAML and CSV (wrong types, huge,
negative and non-finite numbers, missing and renamed keys, bounded deep nesting, hostile
strings), or both.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import yaml
from hypothesis import strategies as st

#: Deepest nesting generated in-process: well inside what every JSON reader survives.
MAX_DEPTH = 300

finite_numbers = st.one_of(
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0, -1, -0.0, 1e-300, 1e308, -1e308, 2**63, 2**64, -(2**63) - 1, 1e15]),
)
#: Numbers that only the text of a file can hold: 5,000-digit integers, 1e309, NaN tokens.
number_tokens = st.sampled_from(
    [
        "NaN", "Infinity", "-Infinity", "1e309", "-1e309", "1" + "0" * 400,
        "9" * 5000, "-" + "9" * 4400, "1e-400", "0.0000000000000000000001", "-0",
        '"inf"', '"-inf"', '"nan"', '"1e309"', "1E+2", "00012",
    ]
)  # fmt: skip
hostile_text = st.one_of(
    st.text(max_size=40),
    st.sampled_from(
        [
            "", " ", "\x00", "\x1b[2J\x1b]0;title\x07", "\x1b]52;c;aGk=\x07", "\u202e\u2066evil",
            "a@b.example", "url(javascript:x)", "<script>x</script>", "\ud800", "\udfff",
            "\r\n", "x" * 5000, "|", "--", "${x}", "{{x}}", "%s%n", "\\", '"', "\ufeff", "ǅ" * 50,
        ]
    ),
)  # fmt: skip


def _leaves(doc: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path into a JSON-like document, containers included (the root is ())."""
    out = [path]
    if isinstance(doc, dict):
        for key, value in doc.items():
            out += _leaves(value, (*path, key))
    elif isinstance(doc, list):
        for i, value in enumerate(doc):
            out += _leaves(value, (*path, i))
    return out


def _get(doc: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        doc = doc[key]
    return doc


def _nested(depth: int, kind: str) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value] if kind == "list" else {"a": value}
    return value


class Token:
    """A number written into the file as raw text (NaN, 1e309, 5,000 digits)."""

    def __init__(self, text: str) -> None:
        self.text = text


@st.composite
def replacement(draw: st.DrawFn, old: Any) -> Any:
    """A value to put where `old` was: a wrong type, an extreme number, a hostile string."""
    choices: list[st.SearchStrategy[Any]] = [
        finite_numbers,
        number_tokens.map(Token),
        hostile_text,
        st.sampled_from([None, True, False, [], {}, [None], {"": None}]),
        st.integers(1, MAX_DEPTH).flatmap(
            lambda d: st.sampled_from(["list", "dict"]).map(lambda k: _nested(d, k))
        ),
    ]
    if isinstance(old, int | float) and not isinstance(old, bool):
        # near the old value: negative, scaled, swapped sign, tiny or huge
        choices.append(
            st.sampled_from([-1.0, -1e9, 1e9, 0.0, 1e-9, -1e-9, 1e300]).map(lambda k: old * k)
        )
        choices.append(st.just(str(old)))
    if isinstance(old, str):
        choices.append(st.just(old * 2))
        choices.append(st.just(old.upper()))
    return draw(st.one_of(choices))


@st.composite
def mutate_tree(draw: st.DrawFn, doc: Any) -> Any:
    """One value-level change to a parsed document (mutated in place and returned)."""
    paths = _leaves(doc)
    path = draw(st.sampled_from(paths))
    if not path:
        op = draw(st.sampled_from(["replace", "wrap"]))
        return [doc] if op == "wrap" else draw(replacement(doc))
    parent = _get(doc, path[:-1])
    key = path[-1]
    op = draw(st.sampled_from(["replace", "replace", "replace", "delete", "duplicate", "rename"]))
    if op == "replace":
        parent[key] = draw(replacement(parent[key]))
    elif op == "delete":
        del parent[key]
    elif op == "duplicate":
        if isinstance(parent, list):
            parent.insert(key, parent[key])
        else:
            parent[f"{key}_copy"] = parent[key]
    elif isinstance(parent, dict):
        new = draw(hostile_text)
        parent[new] = parent.pop(key)
    return doc


def dumps_raw(doc: Any) -> str:
    """JSON text of a document holding Token values (written raw)."""
    tokens: dict[str, str] = {}

    def default(value: Any) -> Any:
        if isinstance(value, Token):
            marker = f"__token_{len(tokens)}__"
            tokens[marker] = value.text
            return marker
        raise TypeError(type(value).__name__)

    text = json.dumps(doc, default=default, ensure_ascii=False, allow_nan=True)
    for marker, raw in tokens.items():
        text = text.replace(f'"{marker}"', raw)
    return text


def _plain(doc: Any) -> Any:
    """A document with Token values turned into what YAML or CSV would hold (their text)."""
    if isinstance(doc, Token):
        return doc.text.strip('"')
    if isinstance(doc, dict):
        return {str(k): _plain(v) for k, v in doc.items()}
    if isinstance(doc, list):
        return [_plain(v) for v in doc]
    return doc


def _encode(text: str) -> bytes:
    return text.encode("utf-8", errors="surrogatepass")


@st.composite
def json_mutation(draw: st.DrawFn, data: bytes) -> bytes:
    doc = json.loads(data)
    for _ in range(draw(st.integers(1, 3))):
        doc = draw(mutate_tree(doc))
    return _encode(dumps_raw(doc))


@st.composite
def jsonl_mutation(draw: st.DrawFn, data: bytes) -> bytes:
    lines = data.decode("utf-8").splitlines()
    parsed = [i for i, line in enumerate(lines) if line.strip().startswith(("{", "["))]
    if not parsed:
        return data
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.sampled_from(parsed))
        try:
            doc = json.loads(lines[i])
        except ValueError:
            continue
        lines[i] = dumps_raw(draw(mutate_tree(doc)))
    return _encode("\n".join(lines) + "\n")


@st.composite
def table_mutation(draw: st.DrawFn, data: bytes) -> bytes:
    """A cell of a Markdown table (llama-bench's default output) replaced or dropped."""
    lines = data.decode("utf-8").split("\n")
    rows = [i for i, line in enumerate(lines) if line.count("|") > 2]
    if not rows:
        return data
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.sampled_from(rows))
        cells = lines[i].split("|")
        c = draw(st.integers(1, len(cells) - 2))
        if draw(st.booleans()):
            new = draw(st.one_of(number_tokens, hostile_text, finite_numbers.map(str)))
            cells[c] = f" {new.replace('|', '')} "
        else:
            del cells[c]
        lines[i] = "|".join(cells)
    return _encode("\n".join(lines))


@st.composite
def yaml_mutation(draw: st.DrawFn, data: bytes) -> bytes:
    doc = yaml.safe_load(data)
    for _ in range(draw(st.integers(1, 3))):
        doc = draw(mutate_tree(doc))
    try:
        return _encode(yaml.safe_dump(_plain(doc), allow_unicode=True))
    except (yaml.YAMLError, RecursionError):
        return data


@st.composite
def csv_mutation(draw: st.DrawFn, data: bytes) -> bytes:
    rows = list(csv.reader(io.StringIO(data.decode("utf-8"))))
    if not rows:
        return data
    for _ in range(draw(st.integers(1, 3))):
        r = draw(st.integers(0, len(rows) - 1))
        op = draw(st.sampled_from(["cell", "cell", "cell", "drop-cell", "add-cell", "dup-row"]))
        row = rows[r]
        if op == "dup-row":
            rows.insert(r, list(row))
            continue
        if not row:
            continue
        c = draw(st.integers(0, len(row) - 1))
        if op == "cell":
            new = draw(st.one_of(number_tokens, hostile_text, finite_numbers.map(str)))
            row[c] = new.strip('"') if new.startswith('"') else new
        elif op == "drop-cell":
            del row[c]
        else:
            row.insert(c, draw(hostile_text))
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return _encode(out.getvalue())


@st.composite
def byte_mutation(draw: st.DrawFn, data: bytes) -> bytes:
    """One change that ignores the format: the file as a careless copy or a disk leaves it."""
    if not data:
        return data
    op = draw(
        st.sampled_from(
            [
                "flip", "insert", "delete", "truncate", "dup-line", "swap-lines", "drop-line",
                "crlf", "bom", "utf16", "latin1", "nul", "invalid-utf8", "empty", "repeat-all",
            ]
        )
    )  # fmt: skip
    n = len(data)
    at = draw(st.integers(0, n - 1))
    lines = data.splitlines(keepends=True)
    li = draw(st.integers(0, len(lines) - 1)) if lines else 0
    if op == "flip":
        return data[:at] + bytes([data[at] ^ (1 << draw(st.integers(0, 7)))]) + data[at + 1 :]
    if op == "insert":
        return data[:at] + draw(st.binary(min_size=1, max_size=8)) + data[at:]
    if op == "delete":
        return data[:at] + data[at + draw(st.integers(1, 64)) :]
    if op == "truncate":
        return data[:at]
    if op == "dup-line" and lines:
        return b"".join([*lines[: li + 1], lines[li], *lines[li + 1 :]])
    if op == "swap-lines" and len(lines) > 1:
        lj = draw(st.integers(0, len(lines) - 1))
        lines[li], lines[lj] = lines[lj], lines[li]
        return b"".join(lines)
    if op == "drop-line" and lines:
        return b"".join(lines[:li] + lines[li + 1 :])
    if op == "crlf":
        return data.replace(b"\n", b"\r\n")
    if op == "bom":
        return b"\xef\xbb\xbf" + data
    if op == "utf16":
        return data.decode("utf-8", errors="replace").encode("utf-16")
    if op == "latin1":
        return data.decode("utf-8", errors="replace").encode("latin-1", errors="replace")
    if op == "nul":
        return data[:at] + b"\x00" + data[at:]
    if op == "invalid-utf8":
        return (
            data[:at]
            + draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x80"]))
            + data[at:]
        )
    if op == "empty":
        return b""
    if op == "repeat-all":
        return data + data
    return data


def mutated(data: bytes, kind: str) -> st.SearchStrategy[bytes]:
    """A broken copy of `data`, a file of `kind` (json, jsonl, yaml, csv or text)."""
    structured = {
        "json": json_mutation,
        "jsonl": jsonl_mutation,
        "yaml": yaml_mutation,
        "csv": csv_mutation,
        "table": table_mutation,
    }.get(kind)
    if structured is None:
        return byte_mutation(data)
    return st.one_of(
        structured(data),
        structured(data),
        byte_mutation(data),
        structured(data).flatmap(byte_mutation),
    )
