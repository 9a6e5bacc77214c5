"""The command line's options for a pull request and a blog post: --output-format github
and concise, --csv, --badge, --card."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from embed_helpers import ROOT

from reporter.cli import main

LADDER = str(ROOT / "traces" / "case-a-ladder.jsonl")


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_github_format_prints_only_workflow_commands(in_tmp: Path) -> None:
    code, out, _ = invoke("audit", LADDER, "--no-html", "--output-format", "github")
    assert code == 1
    lines = out.splitlines()
    assert lines and all(line.startswith(("::error ", "::warning ", "::notice ")) for line in lines)
    assert f"::error file={LADDER},line=4,title=BR003 serial-completion-ladder::" in out
    assert not (in_tmp / "report.html").exists()


def test_concise_format_and_fail_on(in_tmp: Path) -> None:
    code, out, _ = invoke("audit", LADDER, "--no-html", "--output-format", "concise",
                          "--fail-on", "never")  # fmt: skip
    assert code == 0
    assert f"{LADDER}:4: BR003 a-retest-n2: requests decoded one at a time" in out
    assert "verdict:" not in out


def test_json_on_stdout_and_a_line_format_are_refused(in_tmp: Path) -> None:
    code, out, err = invoke("audit", LADDER, "--json", "-", "--output-format", "github")
    assert code == 2 and out == ""
    assert "--json - and --output-format github both print to stdout" in err


def test_csv_badge_and_card_are_written_instead_of_the_report(in_tmp: Path) -> None:
    code, out, err = invoke(
        "audit", LADDER, "--csv", "runs.csv", "--badge", "badge.svg", "--card", "card.html"
    )
    assert code == 1
    assert out.startswith("verdict: inflated")
    assert err.splitlines() == ["wrote runs.csv", "wrote badge.svg", "wrote card.html"]
    assert (in_tmp / "runs.csv").read_text(encoding="utf-8").startswith("run,group,load,")
    assert "inflated 3.85×" in (in_tmp / "badge.svg").read_text(encoding="utf-8")
    assert "benchreport-card" in (in_tmp / "card.html").read_text(encoding="utf-8")
    assert not (in_tmp / "report.html").exists()


def test_a_folder_of_parquet_parts_audits_and_validates(in_tmp: Path) -> None:
    from reporter import api

    (in_tmp / "parts" / "day1").mkdir(parents=True)
    api.convert_file(LADDER, str(in_tmp / "parts" / "day1" / "ladder.parquet"))
    code, out, err = invoke("audit", "parts", "--no-html", "--output-format", "concise")
    assert code == 1, err
    assert "BR003 a-retest-n2" in out
    code, out, _ = invoke("validate", "parts")
    assert code == 0 and "ok" in out
    # a folder without Parquet parts is refused with a reason, like any unreadable input
    (in_tmp / "empty").mkdir()
    code, _, err = invoke("audit", "empty", "--no-html")
    assert code == 2 and err.startswith("empty: ")
