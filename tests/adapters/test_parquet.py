"""The native trace as Parquet: `convert --to x.parquet` writes it, `audit` reads the file or a
folder of them, with the verdict of the original and each row's original path:line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from reporter import api
from reporter.api import convert_file
from reporter.cli import main
from reporter.errors import TraceError
from tests.adapters.conftest import HERE
from tests.adapters.test_detect import FIXTURES, REAL_FILES

TRACES = Path(__file__).resolve().parents[2] / "traces"
#: One shipped trace in the default lane; all of them, and every real file, in the slow one.
QUICK = ("case-b-queue.jsonl",)
SHIPPED = [
    pytest.param(p.name, marks=() if p.name in QUICK else pytest.mark.slow)
    for p in sorted(TRACES.glob("*.jsonl"))
]


def comparable(verdict: dict[str, Any]) -> dict[str, Any]:
    """A verdict without its inputs (the Parquet's own path and digest) and the groups' why
    (a converted file names its groups; the original's were matched by settings). Findings
    keep their refs: the rows keep their original path:line."""
    out = dict(verdict)
    out.pop("inputs")
    out["groups"] = [{k: v for k, v in g.items() if k != "why"} for g in out.get("groups", [])]
    return out


def round_trip(path: Path, tmp_path: Path) -> None:
    __tracebackhide__ = True
    out = tmp_path / "trace.parquet"
    before = api.audit([path]).to_dict()
    convert_file(path, str(out))
    after = api.audit([out]).to_dict()
    assert after["inputs"][0]["format"] == "benchreport"
    assert comparable(after) == comparable(before)


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_traces_round_trip(tmp_path, name):
    round_trip(TRACES / name, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(REAL_FILES))
def test_real_files_round_trip(real, tmp_path, name):
    round_trip(real(name), tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_fixtures_round_trip(tmp_path, name):
    round_trip(HERE / name, tmp_path)


def test_rows_keep_their_original_line(tmp_path):
    out = tmp_path / "trace.parquet"
    convert_file(TRACES / "case-a-ladder.jsonl", str(out))
    table = pq.read_table(out)
    requests = table.filter(pc.equal(table["kind"].cast(pa.string()), "request"))
    original = (TRACES / "case-a-ladder.jsonl").read_text().splitlines()
    for line, request_id in zip(
        requests["source_line"].to_pylist(), requests["id"].to_pylist(), strict=True
    ):
        assert f'"id":"{request_id}"' in original[line - 1].replace(" ", "")
    assert set(requests["source_path"].cast(pa.string()).to_pylist()) == {
        str(TRACES / "case-a-ladder.jsonl")
    }


def _split_into_folder(source: Path, folder: Path, parts: int) -> None:
    """A converted trace cut into `parts` files of a folder, as a distributed job writes."""
    table = pq.read_table(source)
    folder.mkdir()
    step = -(-table.num_rows // parts)
    for i in range(parts):
        pq.write_table(table.slice(i * step, step), folder / f"part-{i:03d}.parquet")


@pytest.mark.slow
def test_folder_of_parquet_files_is_one_trace(tmp_path):
    out = tmp_path / "trace.parquet"
    convert_file(TRACES / "case-b-forced.jsonl", str(out))
    _split_into_folder(out, tmp_path / "parts", 4)
    whole = api.audit([out]).to_dict()
    folder = api.audit([tmp_path / "parts"]).to_dict()
    assert folder["inputs"][0]["path"] == str(tmp_path / "parts")
    assert comparable(folder) == comparable(whole)


def _rewrite(path: Path, change: Any) -> None:
    table = pq.read_table(path)
    pq.write_table(pa.Table.from_pylist(change(table.to_pylist()), table.schema), path)


def _request_at(rows: list[dict[str, Any]], line: int) -> dict[str, Any]:
    return next(r for r in rows if r["kind"] == "request" and r["source_line"] == line)


def test_bad_request_row_is_refused_at_its_original_line(tmp_path):
    out = tmp_path / "trace.parquet"
    convert_file(TRACES / "case-a-ladder.jsonl", str(out))

    def end_before_send(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        _request_at(rows, 4)["t_end"] = -1.0
        return rows

    _rewrite(out, end_before_send)
    with pytest.raises(TraceError) as caught:
        api.audit([out])
    text = str(caught.value)
    assert f"{TRACES / 'case-a-ladder.jsonl'}:4: " in text
    assert str(out) in text  # and which file the row was read from


def test_duplicate_request_is_refused_at_its_line(tmp_path):
    out = tmp_path / "trace.parquet"
    convert_file(TRACES / "case-a-ladder.jsonl", str(out))

    def twice(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        again = dict(_request_at(rows, 4))
        again["source_line"] = 99
        return [*rows, again]

    _rewrite(out, twice)
    with pytest.raises(TraceError, match=r"case-a-ladder\.jsonl:99: .*already seen at line 4"):
        api.audit([out])
    # --lenient drops the copy and counts it
    verdict = api.audit([out], lenient=True).to_dict()
    assert verdict["inputs"][0]["skipped"] == 1


def test_parquet_without_provenance_is_cited_by_row(tmp_path):
    out = tmp_path / "trace.parquet"
    convert_file(TRACES / "case-a-ladder.jsonl", str(out))
    table = pq.read_table(out).drop_columns(["source_path", "source_line"])
    rows = table.to_pylist()
    rows[5]["output_tokens"] = -3.0
    bare = tmp_path / "bare.parquet"
    pq.write_table(pa.Table.from_pylist(rows, table.schema), bare)
    with pytest.raises(TraceError, match=r"bare\.parquet:6: .*output_tokens"):
        api.audit([bare])


def test_not_a_native_parquet_is_refused(tmp_path):
    other = tmp_path / "other.parquet"
    pq.write_table(pa.table({"x": [1, 2]}), other)
    with pytest.raises(TraceError, match='no "kind" column'):
        api.audit([other])


def test_cli_convert_to_parquet(tmp_path):
    out = tmp_path / "trace.parquet"
    result = CliRunner().invoke(
        main, ["convert", str(TRACES / "case-b-queue.jsonl"), "--to", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "(1 run, 16 requests)" in result.output
    assert pq.read_metadata(out).num_rows == 18
