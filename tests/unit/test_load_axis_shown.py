"""An open-loop run shows its request rate where a closed-loop run shows N, in text and JSON."""

from __future__ import annotations

from pathlib import Path

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
