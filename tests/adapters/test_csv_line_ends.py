"""CSV rows are numbered by the file's lines as every path:line numbers them: a lone "\r"
inside an LF file does not end a row; a file with no "\n" at all ends its rows at "\r"."""

from __future__ import annotations

import pytest

from reporter import api
from reporter.errors import TraceError

FIELDS = {
    "build_commit": "e107984bc", "build_number": "10788", "gpu_info": "Arc B580",
    "backends": "SYCL", "n_threads": "19", "n_prompt": "0", "n_gen": "64",
    "avg_ns": "228365836", "stddev_ns": "276314", "avg_ts": "280.252349",
    "stddev_ts": "0.338305",
}  # fmt: skip
HEADER = ",".join(FIELDS)
CR = "\r"


def row(**changed: str) -> str:
    return ",".join({**FIELDS, **changed}.values())


def test_an_unquoted_carriage_return_is_a_problem_of_its_own_line(tmp_path):
    # the csv module ended the row at the "\r": "line 2: 3 cells", then "line 3: 9 cells"
    # (the rest of line 2, numbered as the line after it)
    trace = tmp_path / "bench.csv"
    trace.write_text(HEADER + "\n" + row(gpu_info="Arc\rB580") + "\n" + row() + "\n", newline="")
    with pytest.raises(TraceError) as err:
        api.load([trace])
    assert str(err.value) == (
        f"{trace}:2: a carriage return (\\r) inside a cell that is not quoted; expected each "
        "row on one line, or the cell in double quotes"
    )


def test_the_rows_after_an_unquoted_carriage_return_are_read_at_their_lines(tmp_path):
    trace = tmp_path / "bench.csv"
    rows = [row(gpu_info="Arc\rB580"), row(), row(gpu_info="x\ry"), row(n_gen="128")]
    trace.write_text(HEADER + "\n" + "\n".join(rows) + "\n", newline="")
    with pytest.raises(TraceError) as err:
        api.load([trace])
    assert [p.line for p in err.value.problems] == [2, 4]
    tables = api.load([trace], lenient=True)
    assert list(tables.runs["source_line"]) == [3, 5]


def test_a_quoted_carriage_return_is_part_of_its_cell(tmp_path):
    trace = tmp_path / "bench.csv"
    trace.write_text(HEADER + "\n" + row(gpu_info='"Arc\rB580"') + "\n" + row() + "\n", newline="")
    tables = api.load([trace])
    assert list(tables.runs["source_line"]) == [2, 3]
    assert list(tables.runs["hardware_name"]) == ["Arc\rB580", "Arc B580"]


def test_a_file_of_carriage_returns_only_ends_its_rows_there(tmp_path):
    trace = tmp_path / "bench.csv"
    trace.write_text(CR.join([HEADER, row(), "", row(n_gen="128"), ""]), newline="")
    tables = api.load([trace])
    assert list(tables.runs["source_line"]) == [2, 4]


def test_crlf_rows_keep_their_lines(tmp_path):
    trace = tmp_path / "bench.csv"
    trace.write_text("\r\n".join([HEADER, row(), "", row(n_gen="128"), ""]), newline="")
    tables = api.load([trace])
    assert list(tables.runs["source_line"]) == [2, 4]
