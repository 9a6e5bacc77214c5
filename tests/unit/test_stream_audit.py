"""The streamed audit (reporter.stream.audit) gives the in-memory audit's verdict and figures
on the same Parquet, and refuses the same bad rows with the same path:line."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from reporter import api
from reporter.cli import main
from reporter.errors import TraceError, UsageError
from reporter.stream import audit as streamed
from tests.adapters.conftest import HERE, REAL
from tests.adapters.test_detect import FIXTURES, REAL_FILES

ROOT = Path(__file__).resolve().parents[2]
TRACES = ROOT / "traces"
QUICK = ("case-a-ladder.jsonl", "case-b-forced.jsonl")
SHIPPED = [
    pytest.param(p.name, marks=() if p.name in QUICK else pytest.mark.slow)
    for p in sorted(TRACES.glob("*.jsonl"))
]


@pytest.fixture
def real() -> Any:
    """`real("vllm/x.json")`: a real file, read in place (skipped when the folder is absent)."""
    if not REAL.is_dir():
        pytest.skip("../shared/real-traces is absent")
    return lambda name: REAL / name


def without_notes(verdict: dict[str, Any]) -> dict[str, Any]:
    """A verdict without the inputs' notes (where the streamed audit says it streamed)."""
    out = dict(verdict)
    out["inputs"] = [{k: v for k, v in i.items() if k != "notes"} for i in out["inputs"]]
    return out


def both_ways(trace: Path, **options: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    whole = api.audit([trace], stream=False, **options).to_dict()
    streaming = api.audit([trace], stream=True, **options).to_dict()
    return whole, streaming


def assert_same_audit(source: Path, tmp_path: Path) -> None:
    __tracebackhide__ = True
    trace = tmp_path / "trace.parquet"
    api.convert_file(source, str(trace))
    whole, streaming = both_ways(trace)
    assert without_notes(streaming) == without_notes(whole)
    (note,) = [n for n in streaming["inputs"][0]["notes"] if n.startswith("streamed")]
    assert "every figure exact, none sketched" in note


@pytest.mark.slow
@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_traces(tmp_path, name):
    assert_same_audit(TRACES / name, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(REAL_FILES))
def test_real_files(real, tmp_path, name):
    assert_same_audit(real(name), tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_fixtures(tmp_path, name):
    assert_same_audit(HERE / name, tmp_path)


@pytest.fixture
def ladder(tmp_path: Path) -> Path:
    trace = tmp_path / "trace.parquet"
    api.convert_file(TRACES / "case-a-ladder.jsonl", str(trace))
    return trace


def _rewrite(path: Path, change: Any) -> None:
    table = pq.read_table(path)
    pq.write_table(pa.Table.from_pylist(change(table.to_pylist()), table.schema), path)


def _refusals(trace: Path) -> tuple[str, str]:
    messages = []
    for stream in (False, True):
        with pytest.raises(TraceError) as caught:
            api.audit([trace], stream=stream)
        messages.append(str(caught.value))
    return messages[0], messages[1]


def test_bad_row_refused_at_its_line_as_in_memory(ladder):
    def end_before_send(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        next(r for r in rows if r["source_line"] == 4)["t_end"] = -1.0
        return rows

    _rewrite(ladder, end_before_send)
    whole, streaming = _refusals(ladder)
    assert streaming == whole
    assert "case-a-ladder.jsonl:4: " in streaming


@pytest.mark.slow
def test_duplicate_refused_as_in_memory_and_dropped_with_lenient(ladder):
    def twice(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        again = dict(next(r for r in rows if r["source_line"] == 4))
        again["source_line"] = 99
        return [*rows, again]

    _rewrite(ladder, twice)
    whole, streaming = _refusals(ladder)
    assert streaming == whole
    assert "case-a-ladder.jsonl:99: request id a-retest-n2-0 of run a-retest-n2 already" in whole
    whole_v, streaming_v = both_ways(ladder, lenient=True)
    assert streaming_v["inputs"][0]["skipped"] == 1
    assert without_notes(streaming_v) == without_notes(whole_v)


@pytest.mark.slow
def test_folder_of_parquet_streams(ladder, tmp_path):
    table = pq.read_table(ladder)
    folder = tmp_path / "parts"
    folder.mkdir()
    pq.write_table(table.slice(0, 5), folder / "a.parquet")
    pq.write_table(table.slice(5), folder / "b.parquet")
    whole, streaming = both_ways(folder)
    assert without_notes(streaming) == without_notes(whole)


@pytest.mark.slow
def test_chosen_by_itself_above_the_threshold(ladder, monkeypatch):
    assert "streamed" not in " ".join(api.audit([ladder]).to_dict()["inputs"][0]["notes"])
    monkeypatch.setattr(streamed, "STREAM_ABOVE_ROWS", 5)
    assert "streamed" in " ".join(api.audit([ladder]).to_dict()["inputs"][0]["notes"])


def test_only_parquet_streams():
    with pytest.raises(UsageError, match="one Parquet file or folder"):
        api.audit([TRACES / "case-a-ladder.jsonl"], stream=True)


def test_without_line_numbers_is_refused(ladder, tmp_path):
    bare = tmp_path / "bare.parquet"
    pq.write_table(pq.read_table(ladder).drop_columns(["source_line"]), bare)
    with pytest.raises(TraceError, match="no source_line column"):
        api.audit([bare], stream=True)


@pytest.mark.slow
def test_cli_streams_a_folder(ladder, tmp_path):
    folder = tmp_path / "parts"
    folder.mkdir()
    ladder.rename(folder / "trace.parquet")
    result = CliRunner().invoke(main, ["audit", str(folder), "--stream", "--json", "-"])
    assert result.exit_code in (0, 1), result.output
    verdict = json.loads(result.output)
    assert verdict["inputs"][0]["path"] == str(folder)
    assert any(n.startswith("streamed") for n in verdict["inputs"][0]["notes"])


def _benchmark() -> Any:
    spec = importlib.util.spec_from_file_location(
        "stream_audit", ROOT / "benchmarks" / "stream_audit.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_audited_under_a_memory_cap(tmp_path):
    """300,000 requests under a 1 GiB address-space cap (the benchmark does 10^7): the
    streamed audit finishes and equals the in-memory audit of the same file."""
    bench = _benchmark()
    trace = tmp_path / "trace.parquet"
    bench.write_trace(trace, 300_000)
    _, peak, requests = bench.run_audit(trace, tmp_path / "s.json", 1.0, "stream")
    assert requests == 300_000
    assert peak < 1024
    bench.run_audit(trace, tmp_path / "m.json", 0, "memory")
    assert bench.comparable(tmp_path / "s.json") == bench.comparable(tmp_path / "m.json")
