"""Adapters: each turns one tool's files into the canonical tables, with no judgement.

An adapter is a module with:
- `NAME`: the `--format` name;
- `detect(source, records) -> (bool, missing_keys)`: whether the file looks like its format
  (`records` are the first parsed JSON values of the file, or [] when it is not JSON);
- `read(source, *, lenient=False, **options) -> Partial`: the rows, each with source_path
  and source_line, raising TraceError with every problem found.

Detection tries the most specific formats first: the native format, then the tools whose
files carry a distinctive key, then the look-alike summaries of vLLM and SGLang, llama.cpp,
and never the custom format (it needs a mapping file).
"""

from __future__ import annotations

import csv
import json
import re
from concurrent.futures import Future
from types import ModuleType
from typing import Any

import pandas as pd

from reporter.adapters import (
    aiperf,
    custom,
    genai_perf,
    guidellm,
    llama_bench,
    llmperf,
    native,
    sglang,
    vllm,
)
from reporter.adapters._common import Problems, csv_head, document, json_lines, parse_value
from reporter.errors import Problem, TraceError, UnknownFormat
from reporter.ingest.lines import Source, iter_lines, text_lines
from reporter.numbers import counted
from reporter.table import InputFile, Partial

ADAPTERS: dict[str, ModuleType] = {native.NAME: native}
for _module in (guidellm, aiperf, genai_perf, llmperf, sglang, vllm, llama_bench, custom):
    ADAPTERS[_module.NAME] = _module


def register(module: ModuleType) -> None:
    ADAPTERS[module.NAME] = module


def first_records(source: Source, limit: int = 5) -> list[Any]:
    """The first JSON values of a file: a whole JSON document, or its first JSON lines.

    Lines with Python's non-standard tokens (Infinity, NaN: SGLang writes them) count as JSON.
    """
    head = source.data.lstrip(b"\xef\xbb\xbf").lstrip()
    if head[:1] not in (b"{", b"["):
        return []
    records: list[Any] = []
    for number, line in iter_lines(head):
        record, problem = parse_value(source.path, number, line)
        if problem is not None:
            break
        records.append(record)
        if len(records) >= limit:
            return records
    if len(records) == 1 and isinstance(records[0], list):
        return records[0][:limit]
    if records:
        return records
    try:
        doc = document(source)
    except TraceError:
        # JSON Lines whose first line is broken: the objects of the lines that parse
        return _objects_of_lines(source, limit)
    if isinstance(doc, list):
        return doc[:limit]
    return [doc]


def _objects_of_lines(source: Source, limit: int, scan: int = 200) -> list[Any]:
    records: list[Any] = []
    for number, line in iter_lines(source.data):
        if number > scan or len(records) >= limit:
            break
        if line.startswith(b"{"):
            record, problem = parse_value(source.path, number, line)
            if problem is None and isinstance(record, dict):
                records.append(record)
    return records


def _unreadable_json(source: Source) -> TraceError:
    """The problems of a JSON file that nothing parses: per line for JSON Lines (by name, or
    several lines that each open an object), else the document's first problem, with its line
    and column (a truncated document says so)."""
    lines = [line for _, line in iter_lines(source.data)]
    several_objects = len(lines) > 1 and all(line.startswith(b"{") for line in lines[:20])
    if several_objects or source.path.lower().endswith((".jsonl", ".ndjson")):
        problems = Problems(source.path)
        json_lines(source, problems)
        return TraceError(problems.problems, total=problems.count)
    try:
        document(source)
    except TraceError as exc:
        return exc
    return TraceError([Problem(source.path, 1, "no JSON object in the file", "JSON objects")])


#: At most this many lines of log output before JSON Lines are skipped (a tool's stderr
#: captured with its output: llama-bench's device lines before `-o jsonl`); more is not a
#: JSON Lines file with a preamble.
MAX_LEADING_LOG_LINES = 20


def without_leading_log(source: Source) -> tuple[Source, str | None]:
    """JSON Lines, or one JSON array, preceded by a few non-JSON lines (a tool's output
    captured with its stderr): the same file with those lines blanked (line numbers stay
    true, the digest stays the file's), and a note saying which lines were skipped; the file
    itself, and None, otherwise."""
    data = source.data
    if data.lstrip(b"\xef\xbb\xbf").lstrip()[:1] in (b"{", b"[", b""):
        return source, None
    skipped: list[int] = []
    first_json = None
    array = False
    for number, line in iter_lines(data):
        if line.startswith(b"{"):
            record, problem = parse_value(source.path, number, line)
            if problem is None and isinstance(record, dict):
                first_json = number
            break
        if line == b"[" or line.startswith((b"[{", b"[ {")):
            first_json, array = number, True
            break
        skipped.append(number)
        if len(skipped) > MAX_LEADING_LOG_LINES:
            return source, None
    if first_json is None or not skipped:
        return source, None
    cut = 0
    for _ in range(first_json - 1):
        cut = data.index(b"\n", cut) + 1
    if array:
        # the rest of the file must be that one array (it is read as a whole document)
        value, problem = parse_value(source.path, first_json, data[cut:].strip())
        if problem is not None or not isinstance(value, list):
            return source, None
    else:
        # the lines after the first JSON one must be JSON too (a log with JSON interleaved,
        # as llama-batched-bench writes, is its adapter's business)
        for number, line in iter_lines(data):
            if number > first_json + 50:
                break
            if number > first_json and not line.startswith(b"{"):
                return source, None
    blanked = b"\n" * (first_json - 1) + data[cut:]
    digest: Future[str] = Future()
    digest.set_result(source.sha256)
    lines = f"line {skipped[0]}" if len(skipped) == 1 else f"lines {skipped[0]}–{skipped[-1]}"
    what = "the JSON array" if array else "the JSON Lines"
    note = (
        f"{counted(len(skipped), 'line')} of log output before {what} skipped ({lines}); "
        f"the records start at line {first_json}"
    )
    return Source(source.path, blanked, digest), note


def detect(source: Source) -> ModuleType:
    """Pick the adapter whose format the file has; 'could not tell' names the candidates."""
    source = without_leading_log(source)[0]
    records = first_records(source)
    if not records and source.data.lstrip(b"\xef\xbb\xbf").lstrip()[:1] in (b"{", b"["):
        raise _unreadable_json(source)  # say where the JSON breaks, not "unknown format"
    missing: dict[str, list[str]] = {}
    for name, module in ADAPTERS.items():
        ok, lacks = module.detect(source, records)
        if ok:
            return module
        missing[name] = lacks
    offline = vllm.offline_result(records)
    if offline is not None:
        raise UnknownFormat([Problem(source.path, None, offline[0], offline[1])])
    hint = _looks_like(source)
    if hint is not None:
        raise UnknownFormat([Problem(source.path, hint[0], hint[1], hint[2])])
    scores = {n: _score(m, records, source) for n, m in ADAPTERS.items() if n != custom.NAME}
    ranked = sorted((n for n in scores if scores[n] > 0), key=lambda n: (-scores[n], n))
    if not records and not _looks_like_csv(source):
        what = "the file is neither JSON, JSON Lines nor CSV"
    elif not ranked:
        what = "could not tell the format: none of the keys the supported tools write"
    else:
        closest = "; ".join(f"{n} lacks {', '.join(missing[n])}" for n in ranked[:3])
        what = f"could not tell the format (closest: {closest})"
    known = ", ".join(n for n in ADAPTERS if n != custom.NAME)
    raise UnknownFormat(
        [
            Problem(
                source.path,
                None,
                what,
                f"a file written by one of {known}; pass --format NAME, or --format custom "
                "--mapping FILE for other logs",
            )
        ]
    )


def _looks_like(source: Source) -> tuple[int | None, str, str] | None:
    """(line, what the file looks like, how to get a readable one) for files close to a
    known tool's output that no adapter reads; None when it looks like nothing known."""
    text = source.head(1 << 16).decode("utf-8", "replace")
    lines = text_lines(text)
    for number, line in enumerate(lines[:400], 1):
        if "Serving Benchmark Result" in line:
            return (
                number,
                "this is the summary that vLLM's or SGLang's benchmark prints on the console, "
                "not its result file",
                "the JSON result: re-run with --save-result (vLLM bench serve) or "
                "--output-file (SGLang bench_serving)",
            )
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.lstrip().startswith("|") and "t/s" in cells:
            return (
                number,
                "this looks like a llama-bench Markdown table, but not as llama-bench prints "
                "it (a header with test and t/s columns, then a | --- | line)",
                "llama-bench's own output: re-run with -o json",
            )
    first = next((line for line in lines if line.strip()), "")
    cells = next(csv.reader([first]), []) if first else []
    if (
        len(cells) >= 20
        and re.fullmatch(r"[0-9a-f]{7,12}", cells[0].strip())
        and cells[1].strip().isdigit()
    ):
        return (
            1,
            "this looks like llama-bench's CSV without its header row",
            "re-run with -o json (or keep the header line of -o csv)",
        )
    json_at = next(
        (
            n
            for n, line in enumerate(lines, 1)
            if line.startswith("{") and line.rstrip().endswith("}")
        ),
        None,
    )
    if json_at is not None and json_at - 1 > MAX_LEADING_LOG_LINES:
        return (
            json_at,
            f"JSON Lines after {json_at - 1} lines of log output (at most "
            f"{MAX_LEADING_LOG_LINES} are skipped)",
            "the tool's output alone: write it to a file (-o jsonl > FILE, --output-file), "
            "or delete the log lines",
        )
    return None


def _score(module: ModuleType, records: list[Any], source: Source) -> int:
    """How many of the format's characteristic keys the file has (its first record, or its
    CSV header)."""
    keys: tuple[str, ...] = getattr(module, "DETECT_KEYS", ())
    sample = next((r for r in records if isinstance(r, dict)), None)
    present = set(sample) if sample is not None else set(csv_head(source)) if not records else set()
    return sum(1 for k in keys if k in present)


def _looks_like_csv(source: Source) -> bool:
    head = source.head(4096).lstrip(b"\xef\xbb\xbf")
    first = head.split(b"\n", 1)[0]
    return b"," in first and b"\x00" not in head


def join(partials: list[Partial]) -> None:
    """Files a tool writes beside each other for one run (a summary and its per-request
    list), passed together, become one run: each adapter's `join`, when it has one. A run
    given again is read once (`fold_repeated`)."""
    for module in ADAPTERS.values():
        joiner = getattr(module, "join", None)
        if joiner is not None:
            joiner(partials)
    fold_repeated(partials)


#: A run row's keys that say where it was read, not what it is.
_WHERE = ("source_path", "source_line")


def _fingerprint(run: dict[str, Any]) -> str:
    """Everything a run row states but where it was read (NaN written as NaN, so equal)."""
    return json.dumps(
        {k: v for k, v in run.items() if k not in _WHERE}, sort_keys=True, default=repr
    )


def _rows_of(partial: Partial, run_id: str) -> pd.DataFrame:
    requests = partial.requests
    if requests is None or "run" not in requests:
        return pd.DataFrame()
    return _comparable(requests[requests["run"].astype(str) == run_id])


def _named_elsewhere(partial: Partial, run_id: str) -> bool:
    """Whether another record of the file (a claim, probe, log line or run end) names the run."""
    others = [*partial.claims, *partial.probes, *partial.logs, *partial.run_ends]
    return any(str(r.get("run")) == run_id for r in others)


def _strip(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k not in _WHERE} for r in records]


def _content(partial: Partial) -> str:
    """Every record of a file but its requests, without where each was read: equal for the
    same records in other bytes (CRLF line ends, keys in another order, other spacing)."""
    records = (partial.runs, partial.claims, partial.probes, partial.logs, partial.run_ends)
    return json.dumps([_strip(r) for r in records], sort_keys=True, default=repr)


def _same_rows(one: Partial, other: Partial) -> bool:
    """Whether two files hold the same request rows (where each was read aside)."""
    if one.requests is None or other.requests is None:
        return one.requests is None and other.requests is None
    return _comparable(one.requests).equals(_comparable(other.requests))


def _comparable(rows: pd.DataFrame) -> pd.DataFrame:
    """Request rows as two reads of the same records compare equal: where each was read left
    out, columns in name order, text as Python strings (one reader gives pandas' string type,
    another objects)."""
    rows = rows.drop(columns=[c for c in _WHERE if c in rows]).sort_index(axis=1)
    text = {c: object for c in rows.columns if pd.api.types.is_string_dtype(rows[c].dtype)}
    return rows.astype(text).reset_index(drop=True)


def _empty(partial: Partial, note: str) -> None:
    """Leave out every record of a file read already, saying whose they are."""
    partial.requests = None
    partial.runs, partial.claims, partial.probes = [], [], []
    partial.logs, partial.run_ends = [], []
    if partial.input is not None:
        partial.input.notes.append(note)


#: Run settings that date a run: vLLM's `date`, GuideLLM's measurement window, llama-bench's
#: `test_time`, LLMPerf's `timestamp`.
_DATES = ("date", "window", "test_time", "timestamp")


def _identified(run: dict[str, Any], rows: pd.DataFrame) -> bool:
    """Whether a run is told from any other by what its file holds: its requests' times, or
    a date of the run. Printed figures alone (a llama-bench table row, "57.69 ± 0.01") may
    repeat by chance in two files of two runs."""
    extra = run.get("extra")
    dated = isinstance(extra, dict) and any(extra.get(k) not in (None, "") for k in _DATES)
    return dated or not rows.empty


def fold_repeated(partials: list[Partial]) -> None:
    """The same run given twice, read once.

    A file given again (the same bytes, under the same name or another, or the same records
    in other bytes: CRLF line ends, keys in another order) adds nothing: its records are left
    out, and its note says whose they are. A run of one file stated again, every setting and
    figure the same (and its requests, when it has any), in a later file is left out of the
    later file: vLLM's sweep writes each run to `run=N.json` and again in `summary.json`, and
    a folder passed whole holds both. Left in, it would count as a repeat of itself, or as a
    run at the same time as itself (the same end date).

    Kept: a run that another record of its file names (a claim, a probe, a log line speaks of
    it), and runs their files tell from no other (no request times, no date: `_identified`),
    whose equal figures may be two runs printing alike; a file of other bytes is read once
    only when each of its runs is told apart so.
    """
    files: dict[str, InputFile] = {}
    contents: list[tuple[str, Partial]] = []
    runs: dict[str, tuple[Partial, dict[str, Any]]] = {}
    # one file cannot repeat another: its digest, maybe still worked out, is not waited for
    several = sum(p.input is not None for p in partials) > 1
    for partial in partials:
        if partial.input is None:
            continue
        first = files.setdefault(partial.input.sha256, partial.input) if several else None
        if first is not None and partial.input.sha256 and first is not partial.input:
            _empty(partial, f"the same bytes as {first.path}: read once, there")
            continue
        content = _content(partial)
        same = next((p for c, p in contents if c == content and _same_rows(p, partial)), None)
        # each run's rows are looked at only in a file that repeats another (a row filter per
        # run of a million-request trace costs seconds)
        if (
            same is not None
            and same.input is not None
            and all(_identified(r, _rows_of(partial, str(r["run"]))) for r in partial.runs)
        ):
            _empty(partial, f"the same records as {same.input.path}: read once, there")
            continue
        if partial.runs:
            contents.append((content, partial))
        for run in list(partial.runs):
            run_id = str(run["run"])
            key = _fingerprint(run)
            earlier = runs.get(key)
            if earlier is None:
                runs[key] = (partial, run)
                continue
            other, kept = earlier
            if other is partial or _named_elsewhere(partial, run_id):
                continue
            rows = _rows_of(partial, run_id)
            if not rows.equals(_rows_of(other, str(kept["run"]))):
                continue
            if not _identified(run, rows):
                continue
            partial.runs.remove(run)
            if partial.requests is not None and "run" in partial.requests:
                partial.requests = partial.requests[
                    partial.requests["run"].astype(str) != run_id
                ].reset_index(drop=True)
            line = f" (line {run['source_line']})" if run.get("source_line") is not None else ""
            partial.input.notes.append(
                f"run {run_id}{line} is the run of {kept['source_path']}:{kept['source_line']} "
                "given again (every setting and figure the same): read once, there"
            )


def get(name: str) -> ModuleType:
    if name not in ADAPTERS:
        raise UnknownFormat([Problem(name, None, "unknown format", ", ".join(ADAPTERS))])
    return ADAPTERS[name]
