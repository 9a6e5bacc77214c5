"""Adapters: each turns one tool's files into the canonical tables, with no judgement.

An adapter is a module with:
- `NAME`: the `--format` name;
- `detect(source, records) -> (bool, missing_keys)`: whether the file looks like its format
  (`records` are the first parsed JSON values of the file, or [] when it is not JSON);
- `read(source, *, lenient=False, **options) -> Partial`: the rows, each with source_path
  and source_line, raising TraceError with every problem found.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from reporter.adapters import native
from reporter.errors import Problem, UnknownFormat
from reporter.ingest.lines import Source, iter_lines, parse_line

ADAPTERS: dict[str, ModuleType] = {native.NAME: native}


def register(module: ModuleType) -> None:
    ADAPTERS[module.NAME] = module


def first_records(source: Source, limit: int = 5) -> list[Any]:
    """The first JSON values of a file: a whole JSON document, or its first JSON lines."""
    head = source.data.lstrip(b"\xef\xbb\xbf").lstrip()
    if head[:1] in (b"{", b"["):
        records: list[Any] = []
        for number, line in iter_lines(head):
            record, problem = parse_line(source.path, number, line)
            if problem is not None:
                break
            records.append(record)
            if len(records) >= limit:
                return records
        if records:
            return records
        import orjson

        try:
            doc = orjson.loads(head)
        except orjson.JSONDecodeError:
            return []
        if isinstance(doc, list):
            return doc[:limit]
        return [doc]
    return []


def detect(source: Source) -> ModuleType:
    """Pick the adapter whose format the file has; 'could not tell' names the candidates."""
    records = first_records(source)
    missing: dict[str, list[str]] = {}
    for name, module in ADAPTERS.items():
        ok, lacks = module.detect(source, records)
        if ok:
            return module
        missing[name] = lacks
    said = "; ".join(f"{n}: no {', '.join(m)}" for n, m in missing.items() if m)
    raise UnknownFormat(
        [Problem(source.path, None, f"could not tell the format ({said})",
                 f"one of {', '.join(ADAPTERS)}; pass --format")]
    )


def get(name: str) -> ModuleType:
    if name not in ADAPTERS:
        raise UnknownFormat([Problem(name, None, "unknown format", ", ".join(ADAPTERS))])
    return ADAPTERS[name]
