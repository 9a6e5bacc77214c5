"""An open-loop run shows its request rate where a closed-loop run shows N, in text and JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reporter import api
from reporter.render.text import render_text

REAL = Path(__file__).resolve().parents[2] / ".." / "shared" / "real-traces"
GUIDELLM_10RPS = REAL / "guidellm" / "rsevilla87-guidellm-qwen3-06b-constant-10rps.json"


@pytest.fixture
def open_loop() -> Path:
    if not GUIDELLM_10RPS.is_file():
        pytest.skip("../shared/real-traces is absent")
    return GUIDELLM_10RPS


def test_an_open_loop_run_carries_its_rate_not_a_concurrency(open_loop: Path) -> None:
    verdict = api.audit([open_loop])
    (run,) = verdict.to_dict()["runs"]
    assert run["load"] == "rate"
    assert run["request_rate"] == 10
    assert run["concurrency"] is None
    row = next(line for line in render_text(verdict).splitlines() if "constant-10rps" in line)
    assert " 10/s " in row and " ? " not in row


def test_a_closed_loop_run_shows_n(tmp_path: Path) -> None:
    trace = Path(__file__).resolve().parents[2] / "traces" / "case-a-ladder.jsonl"
    verdict = api.audit([trace])
    runs = verdict.to_dict()["runs"]
    assert {r["load"] for r in runs} == {"concurrency"}
    assert all(r["request_rate"] is None for r in runs)


def test_an_open_loop_run_is_not_missing_a_concurrency(tmp_path: Path) -> None:
    # its load is the request rate it states; a run stating neither still lacks its load
    def undisclosed(workload: dict[str, Any]) -> list[str]:
        run = {"kind": "run", "schema": "benchreport/1", "id": "r", "workload": workload}
        reqs = [{"kind": "request", "run": "r", "id": i, "t_send": i * 0.5,
                 "t_first": i * 0.5 + 0.1, "t_end": i * 0.5 + 1, "output_tokens": 10}
                for i in range(4)]  # fmt: skip
        path = tmp_path / "t.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in [run, *reqs]), encoding="utf-8")
        listed: list[str] = api.audit([str(path)]).to_dict()["undisclosed"]
        return listed

    assert not any(u.startswith("concurrency") for u in undisclosed({"request_rate": 2.0}))
    assert "concurrency: all runs" in undisclosed({})


def test_the_markdown_and_html_tables_show_the_rate_as_the_terminal_does(tmp_path: Path) -> None:
    # the same open-loop run: its N cell reads "2/s" in every report, not "?" in some
    run = {
        "kind": "run",
        "schema": "benchreport/1",
        "id": "open",
        "workload": {"request_rate": 2.0},
    }
    reqs = [{"kind": "request", "run": "open", "id": i, "t_send": i * 0.5,
             "t_first": i * 0.5 + 0.1, "t_end": i * 0.5 + 1, "output_tokens": 10}
            for i in range(4)]  # fmt: skip
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [run, *reqs]), encoding="utf-8")
    verdict = api.audit([str(path)])
    md = tmp_path / "summary.md"
    html = tmp_path / "report.html"
    api.render_outputs(verdict, md=str(md), html=str(html))
    (row,) = [line for line in md.read_text(encoding="utf-8").splitlines() if "| open |" in line]
    assert row.startswith("| open | 2/s |")
    assert '<td class="num">2/s</td>' in html.read_text(encoding="utf-8")
    text_row = next(line for line in render_text(verdict).splitlines() if "open " in line)
    assert " 2/s " in text_row
