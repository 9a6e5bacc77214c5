"""A summary figure below zero (tokens, seconds, rates) is impossible: refused, never a verdict."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from reporter.cli import main

REAL = Path(__file__).resolve().parents[2] / ".." / "shared" / "real-traces"
AIPERF_CSV = REAL / "aiperf" / "akamaslabs-aiperf0.11-qwen3-4b-conc16-profile_export_aiperf.csv"


@pytest.fixture
def negative_total(tmp_path: Path) -> Path:
    """The real AIPerf summary CSV with its output-token totals made negative."""
    if not AIPERF_CSV.is_file():
        pytest.skip("../shared/real-traces is absent")
    text = AIPERF_CSV.read_bytes().decode()
    for name in ("Total Output Tokens (tokens)", "Total Output Sequence Length (tokens)"):
        assert f"{name},537554.00" in text
        text = text.replace(f"{name},537554.00", f"{name},-5.00")
    path = tmp_path / "negative.csv"
    path.write_bytes(text.encode())
    return path


def test_a_negative_token_total_is_refused_with_its_line(negative_total: Path) -> None:
    result = CliRunner().invoke(main, ["audit", str(negative_total), "--no-html"])
    assert result.exit_code == 2
    assert f"{negative_total}:1: " in result.output
    assert "summary figure output_tokens is -5; expected a number ≥ 0" in result.output


def test_lenient_makes_the_figure_unknown_and_counts_it(negative_total: Path) -> None:
    args = ["audit", str(negative_total), "--no-html", "--lenient", "--json", "-"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code in (0, 1), result.output
    verdict = json.loads(result.stdout[result.stdout.index("{") :])
    (run,) = verdict["runs"]
    assert run["aggregate_tps"] is None
    assert run["output_tokens"] is None
    assert "summary figure below zero: 1" in verdict["inputs"][0]["skipped_reasons"]
