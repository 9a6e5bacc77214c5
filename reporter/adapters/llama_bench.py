"""llama.cpp `llama-bench` (`-o json`, `-o jsonl`, `-o csv`, `-o sql`, and the default `-o md`
Markdown table, also inside a log), `llama-batched-bench` (JSON Lines and Markdown) and
ik_llama.cpp's `llama-sweep-bench` (Markdown and JSON Lines).

llama-bench runs one sequence at a time: a test (`pp512`, `tg128`, `pp512+tg128`, optionally
`@ d4096` of context already in the cache) is repeated `-r` times after an untimed warm-up, and
`samples_ns` holds each repetition's time (JSON and JSONL only; CSV has the mean). Each test
becomes a run of concurrency 1 whose "requests" are its repetitions; the repetitions ran one
after another, but their start times are not written, so their wall clock is the sum of
their times (said in `derived`). `avg_ts` is the mean of the repetitions' rates, which mixes
prompt and generated tokens for `pp+tg` tests; it is kept as the tool's figure. A `pp` test
generates nothing: its run is a prompt-processing run (phase "prompt") whose figure is prompt
tokens ÷ time.

The Markdown table shows only the columns whose settings differ from the defaults, the test
name (`pp512`, `tg128`, `pp512+tg128`, `pp2048 @ d32768`) and `t/s` as "mean ± stddev"
rounded; it has no times and no repetition count, so each test's time is its tokens ÷ its
rate. Log lines around it (device lines, which contain ` | ` too, and the `build:` trailer)
are left aside, the trailer read for the build. The SQL output is one `INSERT INTO
llama_bench (fields) VALUES ('…', …);` per test, with the CSV's fields quoted as text (the
table was named `test` before August 2025).

llama-batched-bench's output is read by reporter.adapters.llama_batched, ik_llama.cpp's
llama-sweep-bench's by reporter.adapters.llama_sweep, and what the three tools print alike
(Markdown tables, the settings line, test names) by reporter.adapters.llama_cpp; this module
tells the three apart and reads llama-bench's own.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import PurePath
from typing import Any

from reporter.adapters._common import (
    Fields,
    Problems,
    container_lines,
    csv_head,
    csv_rows,
    document,
    finish,
    json_lines,
    keys_present,
    line_of,
    looks_like_json_lines,
    new_run,
    unique_ids,
)
from reporter.adapters.llama_batched import (
    BATCHED,
    _batched_line,
    _batched_tables,
    _has_batched,
    _read_batched,
    _read_batched_markdown,
    is_batched_markdown_header,
)
from reporter.adapters.llama_cpp import (
    _HEADING,
    NAME,
    NO_DRAFT,
    _cells,
    _head_text,
    _int,
    _is_separator,
    _spans,
    _test_name,
    _test_workload,
)
from reporter.adapters.llama_sweep import (
    _has_sweep_points,
    _is_sweep_point,
    _read_sweep_json_lines,
    _read_sweep_markdown,
    _sweep_tables,
    is_sweep_markdown_header,
)
from reporter.grouping import scalar
from reporter.ingest.lines import Source, iter_lines, text_lines
from reporter.numbers import counted, fmt, listed
from reporter.table import Partial
from reporter.types import LEFT_OUT
from reporter.values import finite_number

WHAT = "llama-bench test"
DECISIVE = ("build_commit", "n_prompt", "n_gen", "avg_ts")
#: Settings that may differ between the tests of one file; when they do, the run id names them.
SETTINGS = (
    "model_type",
    "model_filename",
    "backends",
    "n_batch",
    "n_ubatch",
    "n_threads",
    "type_k",
    "type_v",
    "n_gpu_layers",
    "n_cpu_moe",
    "flash_attn",
    "split_mode",
    "main_gpu",
    "tensor_split",
    "use_mmap",
    "no_kv_offload",
    "devices",
)
#: CSV cells are all strings; these fields are numbers or booleans in the JSON output.
_INT_FIELDS = {
    "build_number",
    "n_batch",
    "n_ubatch",
    "n_threads",
    "poll",
    "model_size",
    "model_n_params",
    "n_gpu_layers",
    "main_gpu",
    "n_prompt",
    "n_gen",
    "n_depth",
    "avg_ns",
    "stddev_ns",
    "no_op_offload",
    "n_cpu_moe",
    "fit_target",
    "fit_min_ctx",
    "flash_attn",
}
_BOOL_FIELDS = {
    "f16_kv",
    "no_kv_offload",
    "cpu_strict",
    "embeddings",
    "no_host",
    "use_mmap",
    "use_direct_io",
}
_FLOAT_FIELDS = {"avg_ts", "stddev_ts", "defrag_thold"}
#: A test's fields that are no setting of it: what it measured, and where and when it ran
#: (devices and build are the run's hardware and engine version).
_NOT_SETTINGS = {
    "build_commit", "build_number", "cpu_info", "gpu_info", "model_size", "model_n_params",
    "n_prompt", "n_gen", "n_depth", "test_time", "avg_ns", "stddev_ns", "avg_ts", "stddev_ts",
    "samples_ns", "samples_ts", "label", "test_label", "device_driver",
    "test",  # ik_llama.cpp's JSON names each test ("pp512"), which n_prompt and n_gen say
}  # fmt: skip
#: Keys that make a file look like this format (to rank the "could not tell" candidates).
DETECT_KEYS = (*DECISIVE, *BATCHED, "n_depth", "samples_ns", "model_type")
#: Column names of measurements (a statistic, or a time), never settings: a fork's
#: avg_ttft_ms and stddev_itl_ms beside llama-bench's own avg_ns and stddev_ts.
_MEASURED = re.compile(r"^(avg|stddev|mean|median|min|max|p\d+)_|_(ns|us|ms|ts)$")


def _is_test(r: Any) -> bool:
    return isinstance(r, dict) and all(k in r for k in DECISIVE)


def detect(source: Source, records: list[Any]) -> tuple[bool, list[str]]:
    """llama-bench tests (build_commit, n_prompt, n_gen, avg_ts), as JSON, CSV or SQL, its
    Markdown table (a `test` and a `t/s` column), or llama-batched-bench points (pl, speed_tg,
    n_kv_max) among log lines."""
    dicts = [r for r in records if isinstance(r, dict)]
    if dicts and all(_is_test(r) for r in dicts):
        return True, []
    if dicts and all(all(k in r for k in BATCHED) for r in dicts):
        return True, []
    if dicts and all(_is_sweep_point(r) for r in dicts):
        return True, []
    if not dicts:
        head = csv_head(source)
        if all(k in head for k in DECISIVE):
            return True, []
        if any(_batched_line(line) for line in source.head(65536).split(b"\n")[:200]):
            return True, []
        if _has_sweep_points(source):
            return True, []
        if _is_sql(source) or _markdown_header(source) is not None:
            return True, []
        head_lines = text_lines(_head_text(source))
        if any(is_batched_markdown_header(line) for line in head_lines):
            return True, []
        if any(is_sweep_markdown_header(line) for line in head_lines):
            return True, []
        if _csv_headers_in_log(source, limit=400):
            return True, []
    sample = keys_present(source, records)
    return False, [f'"{k}"' for k in DECISIVE if k not in sample]


def read(source: Source, *, lenient: bool = False, **options: Any) -> Partial:
    """One run per test (or per batched-bench point)."""
    problems = Problems(source.path)
    notes: list[str] = []
    head = source.data.lstrip(b"\xef\xbb\xbf").lstrip()
    records: list[tuple[int, Any]]
    if _has_batched(source):
        return _read_batched(source, problems, lenient)
    if _has_sweep_points(source):
        return _read_sweep_json_lines(source, problems, lenient)
    if _markdown_header(source) is None and _batched_tables(source):
        return _read_batched_markdown(source, problems, lenient)
    if _markdown_header(source) is None and _sweep_tables(source):
        return _read_sweep_markdown(source, problems, lenient)
    if looks_like_json_lines(source):
        records, shape = json_lines(source, problems), "JSON Lines (-o jsonl)"
    elif head[:1] in (b"{", b"["):
        doc = document(source)
        lines = container_lines(source.data, 1)
        if isinstance(doc, list):
            records = [(line_of(lines, i), r) for i, r in enumerate(doc)]
        else:
            records = [(1, doc)]
        shape = "a JSON array (-o json)"
    elif _is_sql(source):
        records = _sql_records(source, problems)
        shape = "SQL INSERT statements (-o sql: no per-repetition samples)"
    elif _markdown_header(source) is not None:
        records, others = _markdown_records(source, problems)
        batched = _batched_tables(source)
        csv_tables = _csv_blocks(source)
        if csv_tables:
            rows_at = {n for _, lines in csv_tables for n in lines}
            others = [n for n in others if n not in rows_at]
            tests_left = sum(len(lines) - 1 for _, lines in csv_tables)
            starts = [fmt(a, 0) for a, _ in csv_tables]
            notes.append(
                f"{LEFT_OUT}{counted(len(csv_tables), 'llama-bench CSV table')} (line"
                f"{'s' if len(csv_tables) > 1 else ''} "
                f"{listed(starts, 10)}; {counted(tests_left, 'test')}): "
                "not read with the Markdown tables; give the CSV as a file of its own to "
                "audit it"
            )
        sweeps = _sweep_tables(source)
        if sweeps:
            notes.append(
                f"{LEFT_OUT}{counted(len(sweeps), 'llama-sweep-bench table')} (line"
                f"{'s' if len(sweeps) > 1 else ''} {', '.join(str(a) for a, _ in sweeps)}; "
                f"{counted(sum(n for _, n in sweeps), 'row')}): not read with the llama-bench "
                "tables; give them as a file of their own to audit them"
            )
        if batched:
            points = sum(n for _, n in batched)
            notes.append(
                f"{LEFT_OUT}{counted(len(batched), 'llama-batched-bench table')} (line"
                f"{'s' if len(batched) > 1 else ''} {', '.join(str(a) for a, _ in batched)}; "
                f"{counted(points, 'point')}): not read with the llama-bench tables; give "
                "them as a file of their own, or re-run llama-batched-bench with "
                "--output-format jsonl, to audit them"
            )
        shape = (
            "llama-bench's Markdown table (the default -o md): rates rounded as printed, no "
            "times and no repetition count; -o json keeps them"
        )
        if others:
            notes.append(
                f"llama-bench: {counted(len(others), 'line')} around the table left aside "
                f"(line{'s' if len(others) > 1 else ''} {_spans(others)}: log output, "
                "device lines, the build trailer"
                + (", the tables left out" if batched or sweeps else "")
                + ")"
            )
    elif not all(k in csv_head(source) for k in DECISIVE) and _csv_headers_in_log(source):
        records, others = _csv_log_records(source, problems)
        shape = "CSV tables inside a log (-o csv: no per-repetition samples)"
        notes.append(
            f"llama-bench: {counted(len(others), 'line')} around the CSV tables left aside "
            f"(line{'s' if len(others) > 1 else ''} {_spans(others)}: the log's own lines)"
        )
    else:
        records, shape = _csv_records(source, problems), "CSV (-o csv: no per-repetition samples)"
    tests = [(line, r) for line, r in records if isinstance(r, dict)]
    for line, r in records:
        if not isinstance(r, dict):
            problems.add(line, f"the record is a JSON {type(r).__name__}", f"an object ({WHAT})")
    for _, r in tests:
        # flash_attn is a boolean in older JSON, 0 or 1 in CSV and newer JSON: one setting
        if isinstance(r.get("flash_attn"), bool):
            r["flash_attn"] = int(r["flash_attn"])
    # columns beyond the known settings (a fork's mla, a newer build's ot) are settings too,
    # unless their names say they are measurements (a fork's avg_ttft_ms, stddev_itl_ms)
    others_known = sorted(
        {
            k
            for _, r in tests
            for k, v in r.items()
            if k not in SETTINGS
            and k not in _NOT_SETTINGS
            and not _MEASURED.search(k)
            and scalar(v)
        }
    )
    varying = [k for k in (*SETTINGS, *others_known) if len({str(r.get(k)) for _, r in tests}) > 1]
    ids = unique_ids([_name(r, varying) for _, r in tests])
    extra_flags = [k for k in varying if k not in SETTINGS]
    sized = _sized_models(tests)
    runs: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    for (line, record), run_id in zip(tests, ids, strict=True):
        run, run_rows = _test_run(
            record, line, run_id, source.path, problems, extra_flags, sized=sized
        )
        if run is not None:
            runs.append(run)
            rows.extend(run_rows)
    problems.raise_unless(lenient)
    with_samples = any(isinstance(r.get("samples_ns"), list) for _, r in tests)
    notes.append(
        f"llama-bench: {counted(len(runs), 'test')} from {shape}; "
        + (
            "each repetition is one request of a single-sequence run"
            if with_samples
            else "each test is one single-sequence run"
        )
    )
    return finish(source, NAME, runs, rows, records=len(records), notes=notes, problems=problems)


def _csv_records(source: Source, problems: Problems) -> list[tuple[int, Any]]:
    header, cells = csv_rows(source, problems)
    out: list[tuple[int, Any]] = []
    for line, values in cells:
        if len(values) != len(header):
            problems.add(
                line, f"the row has {len(values)} cells", f"{len(header)}, one per header column"
            )
            continue
        record: dict[str, Any] = {}
        for key, text in zip(header, values, strict=True):
            record[key] = _typed(key, text.strip())
        out.append((line, record))
    return out


def _is_csv_header(line: str) -> bool:
    cells = next(csv.reader([line]), []) if line.strip() else []
    return all(k in [c.strip() for c in cells] for k in DECISIVE)


def _csv_headers_in_log(source: Source, limit: int | None = None) -> list[int]:
    """The lines (numbered from 1) of llama-bench CSV headers inside a log: a runner's log of
    several `-o csv` invocations, each printing its header and rows among other lines."""
    lines = text_lines(source.text())
    return [
        i + 1
        for i, line in enumerate(lines[:limit])
        if line.startswith("build_commit") and _is_csv_header(line)
    ]


def _csv_blocks(source: Source) -> list[tuple[int, list[int]]]:
    """(header line, the numbers of the header and its rows) of each llama-bench CSV table
    (-o csv output) beside Markdown tables, as a write-up pastes it in a ```csv block."""
    lines = text_lines(source.text())
    out: list[tuple[int, list[int]]] = []
    for start in _csv_headers_in_log(source):
        block = [start]
        for number in range(start + 1, len(lines) + 1):
            line = lines[number - 1]
            if not (line.startswith('"') and _cell_count(line) > 1):
                break
            block.append(number)
        out.append((start, block))
    return out


def _cell_count(line: str) -> int:
    """How many CSV cells one line holds; a field above the csv module's limit is one."""
    try:
        return len(next(csv.reader([line]), []))
    except csv.Error:
        return len(line.split(","))


def _csv_log_records(source: Source, problems: Problems) -> tuple[list[tuple[int, Any]], list[int]]:
    """The rows under every CSV header of a log (until a line that is not one of their rows),
    and the numbers of the log's other non-blank lines."""
    lines = text_lines(source.text())
    out: list[tuple[int, Any]] = []
    others: list[int] = []
    header: list[str] | None = None
    for number, line in enumerate(lines, start=1):
        if line.startswith("build_commit") and _is_csv_header(line):
            header = [c.strip() for c in next(csv.reader([line]))]
            continue
        cells = next(csv.reader([line]), []) if line.strip() else []
        if header is not None and line.startswith('"') and len(cells) > 1:
            if len(cells) != len(header):
                problems.add(
                    number, f"the row has {len(cells)} cells", f"{len(header)}, one per column"
                )
                continue
            out.append(
                (number, {k: _typed(k, v.strip()) for k, v in zip(header, cells, strict=True)})
            )
            continue
        header = None
        if line.strip():
            others.append(number)
    return out, others


#: The table is `llama_bench` since August 2025; older builds named it `test`.
_SQL_INSERT = re.compile(
    r"INSERT\s+INTO\s+(?:llama_bench|test)\s*\(([^)]*)\)\s*VALUES\s*\((.*)\)\s*;?\s*$", re.I
)
_SQL_VALUE = re.compile(r"'((?:[^']|'')*)'|([^,\s][^,]*)")
#: the older name is too common to go by alone: its statements must name llama-bench's fields
_SQL_OLD = re.compile(
    rb"(?:INSERT INTO test \(|CREATE TABLE IF NOT EXISTS test \(\s*)build_commit\b"
)


def _is_sql(source: Source) -> bool:
    head = source.head(65536)
    return (
        b"INSERT INTO llama_bench" in head
        or b"CREATE TABLE IF NOT EXISTS llama_bench" in head
        or _SQL_OLD.search(head) is not None
    )


def _sql_records(source: Source, problems: Problems) -> list[tuple[int, Any]]:
    """One record per `INSERT INTO llama_bench (fields) VALUES ('v', ...);` line; the CREATE
    TABLE statement and blank lines are skipped."""
    out: list[tuple[int, Any]] = []
    for number, raw in iter_lines(source.data):
        line = raw.decode("utf-8", "replace")
        if not line.upper().startswith("INSERT"):
            continue
        match = _SQL_INSERT.match(line)
        if match is None:
            problems.add(
                number,
                "the INSERT statement cannot be read",
                "INSERT INTO llama_bench (fields) VALUES ('value', ...); on one line",
            )
            continue
        keys = [k.strip() for k in match.group(1).split(",")]
        values = [
            quoted.replace("''", "'") if quoted is not None else bare.strip()
            for quoted, bare in _SQL_VALUE.findall(match.group(2))
        ]
        if len(values) != len(keys):
            problems.add(
                number,
                f"the INSERT has {len(values)} values for {len(keys)} fields",
                "one value per field",
            )
            continue
        out.append((number, {k: _typed(k, v) for k, v in zip(keys, values, strict=True)}))
    return out


#: Markdown column names → llama-bench field names (get_field_display_name, and "threads"
#: of older builds).
_MD_FIELDS = {
    "model": "model_type",
    "backend": "backends",
    "ngl": "n_gpu_layers",
    "sm": "split_mode",
    "th": "n_threads",
    "threads": "n_threads",
    "nkvo": "no_kv_offload",
    "fa": "flash_attn",
    "mmap": "use_mmap",
    "dio": "use_direct_io",
    "embd": "embeddings",
    "nopo": "no_op_offload",
    "noh": "no_host",
    "dev": "devices",
    "ts": "tensor_split",
    "ot": "tensor_buft_overrides",
}
_MD_TEST = re.compile(
    r"(?:pp\s*(?P<pp>\d+))?\s*\+?\s*(?:tg\s*(?P<tg>\d+))?\s*"
    r"(?:@\s*(?:d\s*(?P<depth>\d+)|pp\s*(?P<after>\d+)))?\s*"
)
_MD_RATE = re.compile(r"^([0-9]*\.?[0-9]+)\s*(?:±|\+/-)\s*([0-9]*\.?[0-9]+)")
_BYTES: dict[str, float] = {
    "": 1,
    "B": 1,
    "K": 1 << 10,
    "M": 1 << 20,
    "G": 1 << 30,
    "T": 1 << 40,
    "P": 1 << 50,
}
_COUNT: dict[str, float] = {"": 1, "K": 1e3, "M": 1e6, "B": 1e9, "G": 1e9, "T": 1e12}


def _markdown_header(source: Source) -> int | None:
    """Index (0-based) of the table's header line: a line that starts with `|`, names `test`
    and `t/s`, and is followed by a `| --- |` line. Device lines hold ` | ` but do not start
    with one."""
    lines = text_lines(source.head(1 << 20).decode("utf-8", "replace"))
    for i, line in enumerate(lines[:-1]):
        if line.lstrip().startswith("|") and _is_separator(lines[i + 1]):
            cells = _cells(line)
            if "test" in cells and "t/s" in cells:
                return i
    return None


#: A device line of a llama.cpp backend (`ggml_vulkan: 0 = AMD Radeon …`, `Device 0: …`).
_DEVICE = re.compile(r"^\s*(?:ggml_\w+:\s*\d+\s*=|Device\s+\d+:)\s*(.+?)(?:\s\(|,|$)")
#: The driver a Vulkan device line names after the device, before its properties:
#: `= Radeon 8060S Graphics (RADV GFX1151) (radv) | uma: 1` or `(AMD open-source driver) |`.
_DRIVER = re.compile(r"^\s*ggml_\w+:\s*\d+\s*=\s*[^(|]+?\s((?:\([^()|]*\)\s*)+)\|")
#: The trailer llama-bench prints after its table: `build: 0893f50f2 (8746)`.
_TRAILER = re.compile(r"^build:\s*(\S+)\s*\((\d+)\)")


def _driver(line: str) -> str | None:
    """The driver a Vulkan device line names, its spaces folded: `(RADV GFX1151) (radv)`."""
    match = _DRIVER.match(line)
    return " ".join(match.group(1).split()) if match else None


def _hardware(devices: list[str]) -> str | None:
    """The devices one llama-bench run listed, as one name: `2× AMD Radeon RX 7900 XTX`."""
    counts: dict[str, int] = {}
    for name in devices:
        counts[name] = counts.get(name, 0) + 1
    return ", ".join(name if n == 1 else f"{n}× {name}" for name, n in counts.items()) or None


def _markdown_records(
    source: Source, problems: Problems
) -> tuple[list[tuple[int, Any]], list[int]]:
    """The rows of every llama-bench table in the file, and the numbers of the other lines.

    A runner's log may hold several tables, one per llama-bench run. Each table takes the
    device lines printed before it (since the table before), the `build:` trailer printed
    after it, and the heading above it: runs on one GPU, on another and on two are told apart
    by their devices or, when the devices read alike, by the headings the log gives them.
    A table with no device line or trailer of its own takes the file's.
    """
    lines = text_lines(source.text())
    file_build: tuple[str, int] | None = None
    file_gpus: list[str] = []
    file_drivers: list[str] = []
    for line in lines:
        trailer = _TRAILER.match(line.strip())
        if trailer:
            file_build = (trailer.group(1), int(trailer.group(2)))
        device = _DEVICE.match(line)
        if device and device.group(1).strip() not in file_gpus:
            file_gpus.append(device.group(1).strip())
        driver = _driver(line)
        if driver and driver not in file_drivers:
            file_drivers.append(driver)
    tables: list[dict[str, Any]] = []  # per table: its devices, drivers, headings and build
    rows: list[tuple[int, dict[str, Any], dict[str, Any]]] = []
    others: list[int] = []
    devices: list[str] = []
    drivers: list[str] = []
    # the headings above the current line, one per level (`#` count; a `=== rule ===` is 1)
    headings: list[tuple[int, str]] = []
    header: list[str] | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        starts_table = (
            line.lstrip().startswith("|")
            and i + 1 < len(lines)
            and _is_separator(lines[i + 1])
            and {"test", "t/s"} <= set(_cells(line))
        )
        if starts_table:
            header = _cells(line)
            path = tuple(text for _, text in headings)
            tables.append({"devices": devices, "drivers": drivers, "headings": path, "build": None})
            devices, drivers = [], []
            i += 2
            continue
        if header is not None and line.lstrip().startswith("|"):
            record = _markdown_row(header, _cells(line), i + 1, problems)
            if record is not None:
                rows.append((i + 1, record, tables[-1]))
        else:
            header = None
            trailer = _TRAILER.match(line.strip())
            device = _DEVICE.match(line)
            titled = _HEADING.match(line)
            if trailer and tables and tables[-1]["build"] is None:
                tables[-1]["build"] = (trailer.group(1), int(trailer.group(2)))
            elif device:
                devices.append(device.group(1).strip())
                driver = _driver(line)
                if driver and driver not in drivers:
                    drivers.append(driver)
            elif titled and (titled.group("hash") or titled.group("rule")):
                level = len(line.lstrip()) - len(line.lstrip().lstrip("#")) or 1
                headings = [(lv, text) for lv, text in headings if lv < level]
                headings.append((level, titled.group("hash") or titled.group("rule")))
            if line.strip():
                others.append(i + 1)
        i += 1
    # headings name a run's setting only where they tell the tables apart: those above every
    # table (the log's title, a "Raw Output" under each section) are left out
    shared = set.intersection(*(set(t["headings"]) for t in tables)) if tables else set()
    for table in tables:
        table["heading"] = " / ".join(h for h in table["headings"] if h not in shared) or None
    labelled = len({t["heading"] for t in tables}) > 1
    out: list[tuple[int, Any]] = []
    for line_number, record, table in rows:
        commit, build = table["build"] or file_build or (None, None)
        record.update(
            {
                "build_commit": commit,
                "build_number": build,
                "gpu_info": _hardware(table["devices"]) or ", ".join(file_gpus) or None,
                # the driver the device line names (AMDVLK or RADV for one Vulkan GPU)
                "device_driver": ", ".join(table["drivers"] or file_drivers) or None,
            }
        )
        if labelled and table["heading"]:
            record["label"] = table["heading"]
        out.append((line_number, record))
    return out, others


def _markdown_row(
    header: list[str], cells: list[str], line: int, problems: Problems
) -> dict[str, Any] | None:
    if len(cells) != len(header):
        problems.add(
            line, f"the table row has {len(cells)} cells", f"{len(header)}, one per column"
        )
        return None
    record: dict[str, Any] = {}
    for name, text in zip(header, cells, strict=True):
        if name == "test":
            # the whole cell: a part left unread would merge tests that differ in it
            test = _MD_TEST.fullmatch(text)
            if test is None or not (test.group("pp") or test.group("tg")):
                problems.add(
                    line,
                    f'test "{text}" cannot be read',
                    "pp512, tg128, pp512+tg128, tg128 @ d4096 or tg64@pp128",
                )
                return None
            record["n_prompt"] = int(test.group("pp") or 0)
            record["n_gen"] = int(test.group("tg") or 0)
            record["n_depth"] = int(test.group("depth") or test.group("after") or 0)
            if test.group("after"):  # ik_llama.cpp -gp: generation after a prompt of that size
                record["test_label"] = text
        elif name == "t/s":
            rate = _MD_RATE.match(text)
            if rate is None:
                problems.add(line, f't/s "{text}" cannot be read', 'a rate "mean ± stddev"')
                return None
            record["avg_ts"], record["stddev_ts"] = float(rate.group(1)), float(rate.group(2))
        elif name == "size":
            record["model_size"] = _scaled(text, _BYTES, binary=True)
        elif name == "params":
            record["model_n_params"] = _scaled(text, _COUNT, binary=False)
        elif name not in ("cycles", "ipc"):
            key = _MD_FIELDS.get(name, name)
            record[key] = _typed(key, text)
    return record


def _scaled(text: str, units: dict[str, float], *, binary: bool) -> int | None:
    """'32.70 GiB' → bytes, '29.94 B' → a count (as rounded by the table)."""
    match = re.fullmatch(r"([0-9]*\.?[0-9]+)\s*([KMGTPB]?)(i?B)?", text.strip())
    if match is None:
        return None
    unit = match.group(2)
    if binary and unit == "B":
        unit = ""
    return round(float(match.group(1)) * units.get(unit, 1))


def _typed(key: str, text: str) -> Any:
    """A CSV cell as llama-bench's JSON output would type it (numbers, 0/1 booleans)."""
    try:
        if key in _INT_FIELDS:
            return int(text)
        if key in _FLOAT_FIELDS:
            return float(text)
        if key in _BOOL_FIELDS and text in ("0", "1"):
            return text == "1"
    except ValueError:
        return text
    return text


def _active_params(model_type: Any, derived: list[str]) -> float | None:
    """The active parameters a mixture-of-experts type names ("deepseek2 30B.A3B Q8_0": 3 B
    of 30 B), which bound the bytes read per generated token; None for other names."""
    if not isinstance(model_type, str):
        return None
    match = re.search(r"\b(\d+(?:\.\d+)?)B\.A(\d+(?:\.\d+)?)B\b", model_type)
    if match is None:
        return None
    derived.append(
        f"active parameters {match.group(2)} B of {match.group(1)} B, from the model type "
        f"{model_type!r} (a mixture of experts)"
    )
    return float(match.group(2)) * 1e9


def _name(record: dict[str, Any], varying: list[str]) -> str:
    base = _test_name(
        _int(record.get("n_prompt")), _int(record.get("n_gen")), _int(record.get("n_depth"))
    )
    for key in varying:
        value = record.get(key)
        if key == "model_filename" and isinstance(value, str):
            value = PurePath(value).name
        # no spaces: an id is written in --claim run=ID
        base += f":{key}={str(value).replace(' ', '_')}"
    return base


def _hardware_name(record: dict[str, Any]) -> str | None:
    """The devices the test ran on: the GPU (else the CPU) llama-bench names, and which of
    them `-dev` chose when not all ("ROCm0/ROCm1" against four): a hardware difference, not
    an engine flag."""
    gpu = record.get("gpu_info")
    name = gpu if isinstance(gpu, str) and gpu else record.get("cpu_info")
    devices = record.get("devices")
    if isinstance(devices, str) and devices.strip() not in ("", "auto", "none"):
        return f"{name} (devices {devices.strip()})" if name else f"devices {devices.strip()}"
    return name if isinstance(name, str) else None


def _sized_models(tests: list[tuple[int, dict[str, Any]]]) -> dict[str, dict[float, str]]:
    """{model type: {size: how it reads}} for the types that name files of more than one size
    in these tests (a model and its re-conversion, of one architecture and quantization):
    their size tells them apart, in GiB as llama-bench prints it, in bytes where that does
    not."""
    sizes: dict[str, set[float]] = {}
    for _, r in tests:
        size = finite_number(r.get("model_size"))
        if isinstance(r.get("model_type"), str) and size is not None:
            sizes.setdefault(r["model_type"], set()).add(size)
    out: dict[str, dict[float, str]] = {}
    for model_type, found in sizes.items():
        if len(found) < 2:
            continue
        texts = {size: f"{size / 2**30:.2f} GiB" for size in found}
        if len(set(texts.values())) < len(found):
            texts = {size: f"{size:,.0f} bytes" for size in found}
        out[model_type] = texts
    return out


def _model_name(model_type: Any, size: Any, sized: Mapping[str, Mapping[float, str]]) -> str | None:
    """The model's name: its type, with its size where the file holds other sizes of it."""
    if not isinstance(model_type, str):
        return None
    text = sized.get(model_type, {}).get(finite_number(size) or math.nan)
    return f"{model_type}, {text}" if text else model_type


def _test_run(
    record: dict[str, Any],
    line: int,
    run_id: str,
    path: str,
    problems: Problems,
    extra_flags: Sequence[str] = (),
    *,
    sized: Mapping[str, Mapping[float, str]] | None = None,
) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    f = Fields(record, line, problems, WHAT)
    n_prompt = f.integer("n_prompt", required=True)
    n_gen = f.integer("n_gen", required=True)
    depth = f.integer("n_depth") or 0
    avg_ts = f.number("avg_ts", required=True, unit="tokens per second")
    avg_ns = f.number("avg_ns", unit="nanoseconds")
    samples_ns = f.numbers("samples_ns", unit="nanoseconds")
    samples_ts = f.numbers(
        "samples_ts",
        unit="tokens per second",
        length=None if samples_ns is None else len(samples_ns),
    )
    build = f.integer("build_number")
    commit = f.string("build_commit")
    if not f.ok:
        return None, []
    assert n_prompt is not None and n_gen is not None and avg_ts is not None
    derived = [
        "concurrency 1: llama-bench runs a single sequence",
        "stop forced: llama-bench always generates n_gen tokens",
        "speculative decoding off: llama-bench never drafts",
    ]
    if record.get("test_label"):
        derived.append(
            f"test {record['test_label']}: {n_gen} tokens generated after a {depth}-token "
            f"prompt (ik_llama.cpp -gp), read as tg{n_gen} at depth {depth}"
        )
    rows: list[dict[str, Any]] = []
    if samples_ns:
        reps = len(samples_ns)
        wall = sum(s for s in samples_ns if s is not None) / 1e9
        derived.append(
            f"wall clock = Σ of the {reps} repetitions' times: they ran one after "
            "another, with an untimed warm-up before and gaps not recorded"
        )
        if n_gen:
            # the per-repetition rates stay in `extra`: the repetitions ran one after another,
            # so a sum of them would be the summed-rates error by construction
            for i in range(reps):
                rows.append(
                    {
                        "run": run_id,
                        "id": str(i),
                        "source_line": line,
                        "prompt_tokens": n_prompt,
                        "output_tokens": n_gen,
                    }
                )
    elif avg_ns is not None:
        reps = 1
        wall = avg_ns / 1e9
        derived.append(
            "one average repetition: the CSV holds neither the repetitions' times nor their count"
        )
    else:
        reps = 1
        wall = (n_prompt + n_gen) / avg_ts if avg_ts > 0 else 0.0
        derived.append("wall clock = (n_prompt + n_gen) ÷ avg_ts: the file has no times")
    if n_prompt and n_gen:
        derived.append("avg_ts mixes prompt and generated tokens ((n_prompt + n_gen) ÷ time)")
    summary: dict[str, Any] = {
        "requests": reps,
        "failed": 0,
        "output_tokens": n_gen * reps,
        "prompt_tokens": n_prompt * reps,
        "wall_s": wall,
        "sum_latency_s": wall,
        "mean_reported_tps": avg_ts,
        "tool_aggregate_tps": avg_ts,
        "tool_aggregate_field": "avg_ts",
        "mean_output_tokens": n_gen,
        "min_output_tokens": n_gen,
        "max_output_tokens": n_gen,
        "mean_tpot_s": wall / reps / n_gen if n_gen and not n_prompt and reps else None,
    }
    # llama-bench's t/s: (n_prompt + n_gen) ÷ each repetition's time, then the mean of those
    summary["tool_aggregate_how"] = (
        "(n_prompt + n_gen) ÷ a repetition's time, averaged over the repetitions: it counts "
        "the prompt tokens too"
        if n_prompt and n_gen
        else "the mean of the repetitions' rates (tokens ÷ each one's time), not their tokens "
        "÷ their summed time"
    )
    model_type = record.get("model_type")
    quant = None
    if isinstance(model_type, str) and len(model_type.split(" ", 2)) == 3:
        quant = model_type.split(" ", 2)[2]
    # the devices -dev chose are the run's hardware (_hardware_name), not an engine flag
    flags = [
        f"{k}={record[k]}"
        for k in (*SETTINGS[2:], *extra_flags)
        if record.get(k) is not None and k != "devices"
    ]
    if isinstance(record.get("device_driver"), str):
        flags.append(f"driver={record['device_driver']}")
    run = new_run(
        run_id,
        path,
        line,
        NAME,
        tool=("llama-bench", f"b{build}" if build is not None else None),
        engine={
            "name": "llama.cpp",
            "version": f"b{build}" + (f" ({commit})" if commit else "")
            if build is not None
            else commit,
            "flags": flags,
        },
        model={
            "name": _model_name(model_type, record.get("model_size"), sized or {}),
            "params_total": f.number("model_n_params"),
            "params_active": _active_params(model_type, derived),
            "quant": quant,
            "working_set_bytes": f.number("model_size"),
        },
        hardware={"name": _hardware_name(record)},
        workload=_test_workload(n_prompt, n_gen, depth, NO_DRAFT),
        summary=summary,
        derived=derived,
        extra={
            "test": _test_name(n_prompt, n_gen, depth),
            "n_depth": depth,
            "test_time": record.get("test_time"),
            "avg_ns": avg_ns,
            "stddev_ts": record.get("stddev_ts"),
            "samples_ts": samples_ts,
            "model_filename": record.get("model_filename"),
            "backends": record.get("backends"),
            "cpu_info": record.get("cpu_info"),
            # the heading a runner's log put above the run's table (_markdown_records)
            **({"label": record["label"]} if record.get("label") else {}),
        },
        concurrency_derived=True,
    )
    return run, rows
