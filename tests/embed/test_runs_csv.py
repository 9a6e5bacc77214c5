"""`--csv runs.csv`: the run table, read back with the csv module and with pandas."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
from embed_helpers import HOSTILE_ID

from reporter.render.runs_csv import COLUMNS, render_csv
from reporter.verdict import Verdict


def _rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text, newline="")))


def test_every_run_reads_back_with_its_figures(audited: Callable[[str], Verdict]) -> None:
    verdict = audited("pair")
    rows = _rows(render_csv(verdict))
    assert [r["run"] for r in rows] == [r.id for r in verdict.runs]
    by_id = {r["run"]: r for r in rows}
    n4 = by_id["a-retest-n4"]
    # case A: 4 × 512 tokens ÷ 22.50 s = 91.0 tok/s, served one at a time
    assert (n4["concurrency"], n4["requests"], n4["output_tokens"]) == ("4", "4", "2048")
    assert float(n4["wall_s"]) == pytest.approx(22.5)
    assert float(n4["aggregate_tps"]) == pytest.approx(91.02, abs=0.01)
    assert float(n4["sum_reported_tps"]) == pytest.approx(391.2)
    assert n4["verdict"] == "serial"
    assert (n4["source_file"], n4["source_line"]) == ("traces/case-a-ladder.jsonl", "6")
    queue = by_id["b-queue-n16"]  # case B: 3,493 tokens ÷ 8.70 s = 401.3 tok/s, overlapping
    assert (queue["concurrency"], queue["output_tokens"], queue["verdict"]) == (
        "16",
        "3493",
        "supported",
    )
    assert float(queue["aggregate_tps"]) == pytest.approx(401.3, abs=0.05)
    assert float(queue["sum_reported_tps"]) == pytest.approx(840.1, abs=0.05)


def test_pandas_reads_the_same_table(audited: Callable[[str], Verdict], tmp_path: Path) -> None:
    verdict = audited("pair")
    path = tmp_path / "runs.csv"
    path.write_text(render_csv(verdict), encoding="utf-8", newline="")
    frame = pd.read_csv(path)
    assert tuple(frame.columns) == COLUMNS
    assert len(frame) == len(verdict.runs)
    for run, (_, row) in zip(verdict.runs, frame.iterrows(), strict=True):
        assert row["run"] == run.id
        if run.aggregate_tps is None:
            assert pd.isna(row["aggregate_tps"])
        else:
            assert row["aggregate_tps"] == pytest.approx(run.aggregate_tps, abs=1e-6)
        assert row["source_line"] == int(run.source.rsplit(":", 1)[1])


def test_a_hostile_id_is_one_cell_and_no_formula(audited: Callable[[str], Verdict]) -> None:
    rows = _rows(render_csv(audited("hostile")))
    # the id that starts with = is kept whole (newlines and all) behind a quote
    assert [r["run"] for r in rows] == ["a-retest-n1", f"'{HOSTILE_ID}", "a-retest-n4"]
    assert (rows[1]["verdict"], rows[1]["source_line"]) == ("serial", "3")
    for row in rows:
        for column in ("run", "group", "stop", "format", "source_file"):
            assert not row[column].startswith(("=", "+", "-", "@")), row[column]


@pytest.mark.slow
def test_render_outputs_writes_the_three_files(
    audited: Callable[[str], Verdict], tmp_path: Path
) -> None:
    from reporter import api

    verdict = audited("ladder")
    paths = {k: str(tmp_path / f"out.{k}") for k in ("csv", "badge", "card")}
    written = api.render_outputs(verdict, **paths)
    assert written == list(paths.values())
    raw = (tmp_path / "out.csv").read_bytes()
    assert raw.count(b"\r\n") == len(verdict.runs) + 1 and b"\r\r" not in raw
    assert (tmp_path / "out.badge").read_text(encoding="utf-8").startswith("<svg ")
    assert 'class="benchreport-card' in (tmp_path / "out.card").read_text(encoding="utf-8")


def test_the_readme_lists_the_columns_in_order() -> None:
    from embed_helpers import ROOT

    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert f"`--csv runs.csv`: the run table ({', '.join(COLUMNS)})" in readme
