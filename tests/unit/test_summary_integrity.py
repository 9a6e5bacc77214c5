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


VLLM_DETAILED = (
    Path(__file__).resolve().parents[1]
    / "fixtures"
    / "adapters"
    / "vllm-2026-save-detailed-c2.json"
)


@pytest.fixture
def oversized_setting(tmp_path: Path) -> Path:
    """A vLLM result whose endpoint_type is a whole number one past 2^63 − 1."""
    record = json.loads(VLLM_DETAILED.read_text())
    record["endpoint_type"] = 2**63
    path = tmp_path / "oversized.json"
    path.write_text(json.dumps(record))
    return path


def test_a_whole_number_beyond_int64_in_another_tools_run_is_refused(
    oversized_setting: Path, tmp_path: Path
) -> None:
    # the native reader refuses it; a vLLM file must not audit while its conversion is refused
    result = CliRunner().invoke(main, ["audit", str(oversized_setting), "--no-html"])
    assert result.exit_code == 2
    assert (
        f"{oversized_setting}:1: run 'openai:infqps:c2': extra.endpoint_type is 9.22337e+18; "
        "expected a whole number within ±(2^63 − 1)"
    ) in result.output
    converted = tmp_path / "converted.jsonl"
    result = CliRunner().invoke(main, ["convert", str(oversized_setting), "--to", str(converted)])
    assert result.exit_code == 2
    assert not converted.exists()


@pytest.mark.slow
def test_lenient_makes_the_oversized_number_unknown_and_the_conversion_audits(
    oversized_setting: Path, tmp_path: Path
) -> None:
    args = ["audit", str(oversized_setting), "--no-html", "--lenient", "--json", "-"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code in (0, 1), result.output
    verdict = json.loads(result.stdout[result.stdout.index("{") :])
    assert "whole number beyond ±(2^63 − 1): 1" in verdict["inputs"][0]["skipped_reasons"]
    converted = tmp_path / "converted.jsonl"
    args = ["convert", str(oversized_setting), "--lenient", "--to", str(converted)]
    assert CliRunner().invoke(main, args).exit_code == 0
    again = CliRunner().invoke(main, ["audit", str(converted), "--no-html"])
    assert again.exit_code in (0, 1), again.output
