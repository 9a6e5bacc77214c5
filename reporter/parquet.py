"""The native trace as Parquet: one table a trace, for engines that read columns.

`benchreport convert FILE --to trace.parquet` writes the records of the native trace
(schema benchreport/1) as one table:

- `kind` says what each row is (run, request, claim, probe, log);
- a request's fields are typed columns: `run`, `id`, `finish_reason`, `prompt_sha256`,
  `error` (text), `t_send`, `t_first`, `t_end`, `reported_tps`, `prompt_tokens`,
  `output_tokens`, `n_chunks`, `chunk_tokens` (float64, null when absent) and `token_times`
  (a list of float64);
- every other record is kept whole as native JSON in `record` (run records are nested and
  few);
- `source_path` and `source_line` are where the row was read from before conversion, so a
  finding or a refusal on the Parquet names the line of the file it came from.

`audit` reads such a file, or a folder of them (the output of a distributed job: every
`*.parquet` under it is one dataset), through the same checks as the JSON Lines: a request
row that the native reader would refuse is refused with its original `path:line`.
A Parquet without `source_path`/`source_line` columns is cited by row number in the table.
"""

from __future__ import annotations

import hashlib
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from reporter.errors import MAX_SHOWN_PROBLEMS, Problem, RenderError, TraceError
from reporter.ingest.validate import record_problems
from reporter.numbers import listed
from reporter.table import InputFile, Partial, Tables, normalize_requests
from reporter.types import PathLike

if TYPE_CHECKING:
    import pyarrow.dataset as ds

NAME = "parquet"
#: The file format name given to the rows read (what the audit reports as the file's format).
FORMAT = "benchreport"
TEXT_COLUMNS = ("run", "id", "finish_reason", "prompt_sha256", "error")
NUMBER_COLUMNS = (
    "t_send", "t_first", "t_end", "reported_tps", "prompt_tokens", "output_tokens",
    "n_chunks", "chunk_tokens", "ttft", "e2e",
)  # fmt: skip
#: Durations a tool measured without absolute times (LLMPerf): written, as the native writer
#: does, only for rows without a send time (elsewhere the table derives them from the times).
DURATION_COLUMNS = ("ttft", "e2e")
#: Rows written at a time, and rows a row group of the file holds (readers take a group
#: at a time: a bounded batch).
ROW_GROUP = 1 << 17

SCHEMA = pa.schema(
    [
        pa.field("kind", pa.dictionary(pa.int8(), pa.string())),
        pa.field("record", pa.string()),
        *(pa.field(c, pa.string()) for c in TEXT_COLUMNS),
        *(pa.field(c, pa.float64()) for c in NUMBER_COLUMNS),
        pa.field("token_times", pa.list_(pa.float64())),
        pa.field("source_path", pa.dictionary(pa.int32(), pa.string())),
        pa.field("source_line", pa.int64()),
    ]
)


def is_parquet(path: PathLike) -> bool:
    """A Parquet file (by its magic bytes), or a folder holding Parquet files."""
    if not str(path):
        # Path("") is the current directory: an empty argument is refused by the reader, never
        # taken for a folder (a checkout's virtualenv holds Parquet test files)
        return False
    p = Path(path)
    if p.is_dir():
        return any(p.rglob("*.parquet"))
    if not p.is_file():
        # a FIFO or a device: opening it to sniff would block or never end; the reader
        # refuses it with a reason
        return False
    try:
        with p.open("rb") as f:
            return f.read(4) == b"PAR1"
    except OSError:
        return False


# --- writing -------------------------------------------------------------------------------


def _text(values: pd.Series) -> pa.Array:
    if isinstance(values.dtype, pd.CategoricalDtype):
        codes = values.cat.codes.to_numpy()
        names = pa.array([str(c) for c in values.cat.categories], pa.string())
        return pa.DictionaryArray.from_arrays(
            pa.array(codes, mask=codes < 0), names
        ).dictionary_decode()
    return pa.array(
        [
            None if v is None or v is pd.NA or v != v else str(v)
            for v in values.to_numpy(dtype=object)
        ],
        pa.string(),
    )


def _numbers(values: pd.Series) -> pa.Array:
    arr = values.to_numpy(dtype="float64", na_value=np.nan)
    # null where the native writer writes nothing (NaN, and ±inf which no JSON number holds)
    return pa.array(arr, pa.float64(), mask=~np.isfinite(arr))


def _token_times(values: pd.Series) -> pa.Array:
    if isinstance(values.dtype, pd.ArrowDtype) and pa.types.is_list(values.dtype.pyarrow_dtype):
        # the native reader's Arrow lists: cast whole, no Python list a row
        lists = pa.chunked_array(values.array._pa_array).combine_chunks()
        return lists.cast(pa.list_(pa.float64()))
    out: list[list[float] | None] = []
    for times in values.to_numpy(dtype=object):
        if times is None or (isinstance(times, float) and math.isnan(times)):
            out.append(None)
        else:
            out.append([float(t) for t in times])
    return pa.array(out, pa.list_(pa.float64()))


def _request_batch(requests: pd.DataFrame) -> pa.RecordBatch:
    """Request rows as the native writer would write them (reporter.convert.request_records),
    column-wise."""
    n = len(requests)
    columns: dict[str, pa.Array] = {
        "kind": pa.DictionaryArray.from_arrays(
            pa.array(np.zeros(n, dtype=np.int8)), pa.array(["request"])
        ),
        "record": pa.nulls(n, pa.string()),
    }
    for c in TEXT_COLUMNS:
        columns[c] = _text(requests[c])
    for c in NUMBER_COLUMNS:
        columns[c] = _numbers(requests[c])
    # the table keeps a mean of chunk sizes; only a whole one of at least 1 is a native value
    chunk = requests["chunk_tokens"].to_numpy(dtype="float64", na_value=np.nan)
    whole = np.isfinite(chunk) & (chunk >= 1) & (np.mod(chunk, 1) == 0)
    columns["chunk_tokens"] = pa.array(chunk, pa.float64(), mask=~whole)
    timed = ~np.isnan(requests["t_send"].to_numpy(dtype="float64", na_value=np.nan))
    for c in DURATION_COLUMNS:
        values = requests[c].to_numpy(dtype="float64", na_value=np.nan)
        columns[c] = pa.array(values, pa.float64(), mask=timed | ~np.isfinite(values))
    columns["token_times"] = _token_times(requests["token_times"])
    columns["source_path"] = pa.array(
        requests["source_path"].astype(str).to_numpy(dtype=object), pa.string()
    ).dictionary_encode()
    columns["source_line"] = pa.array(requests["source_line"].to_numpy(dtype="int64"), pa.int64())
    return pa.RecordBatch.from_pydict(columns, schema=SCHEMA)


def _record_batch(rows: list[tuple[dict[str, Any], str, int]]) -> pa.RecordBatch:
    """Non-request records kept whole as JSON, with where each came from."""
    n = len(rows)
    columns: dict[str, Any] = {name: [None] * n for name in SCHEMA.names}
    columns["kind"] = [str(r["kind"]) for r, _, _ in rows]
    columns["record"] = [orjson.dumps(r).decode("utf-8") for r, _, _ in rows]
    columns["source_path"] = [path for _, path, _ in rows]
    columns["source_line"] = [line for _, _, line in rows]
    return pa.RecordBatch.from_pydict(columns, schema=SCHEMA)


def _line(value: Any) -> int:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return 0
    return int(number) if math.isfinite(number) else 0


def write(tables: Tables, path: str) -> int:
    """Write the native trace of these tables as Parquet; returns the number of rows."""
    import pyarrow.parquet as pq  # here: only writing needs it (see api._streams_by_itself)

    from reporter.convert import records, run_record

    others: list[tuple[dict[str, Any], str, int]] = []
    for row in tables.runs.to_dict("records"):
        record = run_record({str(k): v for k, v in row.items()})
        others.append((record, str(row.get("source_path") or ""), _line(row.get("source_line"))))
    # claims, probes and logs: the native writer's records, in its order, with their rows'
    # provenance (the run records and requests come first in its output)
    no_rows = Tables(
        requests=tables.requests.iloc[0:0],
        runs=tables.runs.iloc[0:0],
        claims=tables.claims,
        probes=tables.probes,
        logs=tables.logs,
        inputs=tables.inputs,
    )
    frames = [tables.claims, tables.probes, tables.logs]
    origins = [
        (str(row.get("source_path") or ""), _line(row.get("source_line")))
        for frame in frames
        for row in frame.to_dict("records")
    ]
    for record, (origin, line) in zip(records(no_rows), origins, strict=True):
        others.append((record, origin, line))
    written = 0
    try:
        with pq.ParquetWriter(path, SCHEMA, compression="zstd") as writer:
            if others:
                writer.write_batch(_record_batch(others), row_group_size=ROW_GROUP)
                written += len(others)
            requests = tables.requests
            for start in range(0, len(requests), ROW_GROUP):
                batch = _request_batch(requests.iloc[start : start + ROW_GROUP])
                writer.write_batch(batch, row_group_size=ROW_GROUP)
                written += batch.num_rows
    except OSError as exc:
        raise RenderError(f"{path}: cannot write: {exc.strerror or exc}") from None
    return written


# --- reading -------------------------------------------------------------------------------


def files_of(path: PathLike) -> list[Path]:
    """The Parquet files of a path: the file itself, or every `*.parquet` under a folder in
    name order."""
    p = Path(path)
    return sorted(p.rglob("*.parquet")) if p.is_dir() else [p]


def dataset(path: PathLike, *, pre_buffer: bool = True) -> ds.Dataset:
    """The Parquet file or folder as one pyarrow dataset (read a row group at a time);
    without `pre_buffer`, column chunks are read as they are decoded (less memory held)."""
    import pyarrow.dataset as ds  # here: only Parquet input needs it (see api._streams_by_itself)

    options = ds.ParquetFragmentScanOptions(pre_buffer=pre_buffer)
    file_format = ds.ParquetFileFormat(default_fragment_scan_options=options)
    try:
        return ds.dataset([str(f) for f in files_of(path)], format=file_format)
    except (OSError, pa.ArrowInvalid) as exc:
        raise TraceError([Problem(str(path), None, f"cannot read the Parquet: {exc}")]) from None


def digest(path: PathLike) -> str:
    """sha256 over the bytes of every file of the input, in name order."""
    h = hashlib.sha256()
    for f in files_of(path):
        with f.open("rb") as handle:
            while chunk := handle.read(1 << 20):
                h.update(chunk)
    return h.hexdigest()


def check_schema(path: str, schema: pa.Schema) -> None:
    """The columns a native Parquet needs, with types the audit can read."""
    problems = []
    if "kind" not in schema.names:
        problems.append(Problem(path, None, 'no "kind" column', "a native trace as Parquet"))
    for name in (*NUMBER_COLUMNS, "source_line"):
        if name in schema.names:
            kind = schema.field(name).type
            if not (pa.types.is_integer(kind) or pa.types.is_floating(kind)):
                problems.append(Problem(path, None, f'column "{name}" holds {kind}', "numbers"))
    if problems:
        raise TraceError(problems)


def _plain_text(column: pa.ChunkedArray) -> pa.ChunkedArray:
    if pa.types.is_dictionary(column.type):
        column = column.cast(column.type.value_type)
    return column if pa.types.is_string(column.type) else pc.cast(column, pa.string())


def _provenance(table: pa.Table, path: str, offset: int) -> tuple[np.ndarray, np.ndarray]:
    """Each row's original path and line; without those columns, the Parquet and the row's
    number in it (1-based)."""
    n = table.num_rows
    if "source_line" in table.column_names:
        lines = table.column("source_line").to_numpy(zero_copy_only=False)
        lines = np.nan_to_num(lines.astype("float64"), nan=0).astype("int64")
    else:
        lines = np.arange(offset + 1, offset + n + 1, dtype="int64")
    if "source_path" in table.column_names:
        paths = _plain_text(table.column("source_path")).to_numpy(zero_copy_only=False)
        paths = np.where(pd.isna(paths), path, paths)
    else:
        paths = np.full(n, path, dtype=object)
    return paths.astype(object), lines


def request_frame(table: pa.Table, path: str, offset: int = 0) -> pd.DataFrame:
    """Request rows of a Parquet table as the native reader's frame (before its checks)."""
    out: dict[str, Any] = {}
    for name in TEXT_COLUMNS:
        if name in table.column_names:
            column = _plain_text(table.column(name))
            if name in ("run", "finish_reason"):  # few distinct values: categorical, as native
                column = pc.dictionary_encode(column)
            out[name] = column.to_pandas()
    for name in NUMBER_COLUMNS:
        if name in table.column_names:
            out[name] = (
                pc.cast(table.column(name), pa.float64())
                .to_numpy(zero_copy_only=False)
                .astype("float64")
            )
    if "token_times" in table.column_names:
        out["token_times"] = table.column("token_times").to_pandas()
    paths, lines = _provenance(table, path, offset)
    frame = pd.DataFrame(out, index=pd.RangeIndex(table.num_rows))
    frame["source_path"] = paths
    frame["source_line"] = lines
    return frame


def _request_record(row: dict[str, Any]) -> dict[str, Any]:
    """One request row as the record the native reader would have parsed (to word it)."""
    record: dict[str, Any] = {"kind": "request"}
    for key, value in row.items():
        if key in ("source_path", "source_line") or value is None:
            continue
        if isinstance(value, float) and math.isnan(value):
            continue
        if isinstance(value, float) and value.is_integer() and key.endswith(("tokens", "chunks")):
            value = int(value)
        if isinstance(value, np.ndarray):
            value = value.tolist()
        record[key] = value
    return record


def kept_requests(
    frame: pd.DataFrame, where: str, problems: list[Problem]
) -> tuple[pd.DataFrame, int]:
    """The request rows without those the native reader refuses (the first ones worded into
    `problems`), and how many were refused."""
    from reporter.ingest.validate import bad_request_rows

    bad = bad_request_rows(frame)
    if not bad.any():
        return frame, 0
    for row in frame.loc[bad].head(2 * MAX_SHOWN_PROBLEMS).to_dict("records"):
        record = _request_record({str(k): v for k, v in row.items()})
        found = record_problems(record) or [("the record is not valid", "a valid request")]
        origin, line = str(row["source_path"]), int(row["source_line"])
        problems.extend(Problem(origin, line, f"{m} ({where})", e) for m, e in found)
    return frame.loc[~bad].reset_index(drop=True), int(bad.sum())


def split_kinds(table: pa.Table) -> tuple[pa.Table, pa.Table]:
    """The request rows and the other rows of a table."""
    kinds = _plain_text(table.column("kind"))
    is_request = pc.fill_null(pc.equal(kinds, "request"), False)
    return table.filter(is_request), table.filter(pc.invert(is_request))


def parse_others(
    table: pa.Table, where: str, problems: list[Problem]
) -> tuple[list[tuple[str, int, dict[str, Any]]], int]:
    """The records of the non-request rows that are valid (with their original path and
    line), and how many were not (each worded into `problems`)."""
    bad_records = 0
    others: list[tuple[str, int, dict[str, Any]]] = []
    other_kinds = _plain_text(table.column("kind")).to_pylist()
    texts = (
        table.column("record").to_pylist()
        if "record" in table.column_names
        else [None] * table.num_rows
    )
    paths, lines = _provenance(table, where, 0)
    for kind, text, origin, line in zip(other_kinds, texts, paths, lines, strict=True):
        if text is None:
            bad_records += 1
            problems.append(
                Problem(
                    str(origin),
                    int(line),
                    f'a "{kind}" row without its record ({where})',
                    'the record as JSON in the "record" column',
                )
            )
            continue
        try:
            record = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            bad_records += 1
            problems.append(
                Problem(str(origin), int(line), f"the record is not JSON: {exc} ({where})")
            )
            continue
        found = record_problems(record)
        problems.extend(Problem(str(origin), int(line), f"{m} ({where})", e) for m, e in found)
        if found:
            bad_records += 1
        else:
            others.append((str(origin), int(line), record))
    return others, bad_records


def normalized(frame: pd.DataFrame) -> pd.DataFrame:
    """Valid request rows as the canonical table (chunk counts from the chunk times)."""
    if "token_times" in frame:
        counted = frame["token_times"].map(
            lambda t: np.nan if t is None or not hasattr(t, "__len__") else float(len(t))
        )
        if "n_chunks" in frame:
            counted = counted.fillna(pd.Series(frame["n_chunks"]))
        frame["n_chunks"] = counted
    return normalize_requests(frame)


def tabulate_others(partial: Partial, others: list[tuple[str, int, dict[str, Any]]]) -> None:
    """Run, claim, probe, log and run_end records into the partial's rows."""
    from reporter.runrecord import claim_row, run_row

    for origin, line, record in others:
        kind = record["kind"]
        here = {"source_path": origin, "source_line": line}
        if kind == "run":
            partial.runs.append(run_row(record, origin, line, FORMAT))
        elif kind == "claim":
            partial.claims.append(claim_row(record) | here)
        elif kind == "probe":
            keys = ("what", "value", "unit", "buffer_bytes", "run")
            partial.probes.append({k: record.get(k) for k in keys} | here)
        elif kind == "log":
            partial.logs.append({k: record.get(k) for k in ("run", "level", "text", "t")} | here)
        elif kind == "run_end":
            partial.run_ends.append(record | here)


def read(path: PathLike, *, lenient: bool = False) -> Partial:
    """Parse, validate and tabulate a native Parquet file or folder (whole, in memory)."""
    where = str(path)
    dataset_ = dataset(path)
    check_schema(where, dataset_.schema)
    table = dataset_.to_table()
    if "source_line" not in table.column_names:  # cited by row number in the whole table
        table = table.append_column("source_line", pa.array(np.arange(1, table.num_rows + 1)))
    requests_table, others_table = split_kinds(table)
    del table
    problems: list[Problem] = []
    others, bad_records = parse_others(others_table, where, problems)
    frame = request_frame(requests_table, where)
    del requests_table
    frame, bad_requests = kept_requests(frame, where, problems)
    skipped = bad_records + bad_requests
    if skipped and not lenient:
        raise TraceError(sorted(problems, key=lambda p: p.line or 0), total=skipped)
    partial = Partial()
    partial.requests = normalized(frame)
    tabulate_others(partial, others)
    origins = origins_of(others, frame)
    partial.input = InputFile(
        path=where,
        digest=digest(path),
        format=FORMAT,
        records=len(frame) + len(others),
        skipped=skipped,
        skipped_reasons=[f"invalid record: {skipped}"] if skipped else [],
        notes=notes(where, origins),
    )
    return partial


def origins_of(others: list[tuple[str, int, dict[str, Any]]], frame: pd.DataFrame) -> set[str]:
    """The files the rows were converted from."""
    return {o for o, _, _ in others} | {str(p) for p in pd.unique(frame["source_path"])}


def notes(where: str, origins: set[str]) -> list[str]:
    """What the input notes say of the rows' provenance."""
    elsewhere = [o for o in sorted(origins) if o and o != where]
    if not elsewhere:
        return []
    shown = listed(elsewhere, 3)
    return [f"Parquet rows keep the lines of the file(s) they were converted from: {shown}"]
