"""The command line: options map onto the API, exit codes 0 / 1 / 2, whole outputs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from reporter.cli import main
from reporter.rules import REGISTRY
from tests.conftest import FIXTURES, TRACES

LADDER = str(TRACES / "case-a-ladder.jsonl")
HONEST = str(TRACES / "honest-batched.jsonl")


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.slow
def test_fail_on_picks_the_exit_code() -> None:
    assert invoke("audit", "--no-html", LADDER)[0] == 1  # errors fired, default --fail-on error
    assert invoke("audit", "--no-html", "--fail-on", "never", LADDER)[0] == 0
    assert invoke("audit", "--no-html", HONEST)[0] == 0
    assert invoke("audit", "--no-html", "--fail-on", "info", HONEST)[0] == 0
    assert (
        invoke(
            "audit", "--no-html", "--fail-on", "warning", str(TRACES / "case-b-long-prompt.jsonl")
        )[0]
        == 1
    )


def test_json_to_stdout_is_the_machine_verdict() -> None:
    code, out, _ = invoke("audit", "--json", "-", "--fail-on", "never", LADDER)
    assert code == 0
    verdict = json.loads(out)
    assert verdict["format_version"] == 2
    assert verdict["verdict"] == "inflated"
    for key in (
        "id",
        "concurrency",
        "requests",
        "output_tokens",
        "wall_s",
        "aggregate_tps",
        "sum_reported_tps",
        "overlap",
        "stop",
        "prefill_share",
        "verdict",
    ):
        assert key in verdict["runs"][0]
    for key in ("id", "value", "recomputed", "factor", "verdict"):
        assert key in verdict["claims"][0]
    for key in ("code", "name", "severity", "outcome", "message", "numbers", "refs"):
        assert key in verdict["findings"][0]


@pytest.mark.slow
def test_json_file_is_byte_identical_across_runs(tmp_path: Path) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert invoke("audit", "--json", str(a), "--fail-on", "never", LADDER)[0] == 0
    assert invoke("audit", "--json", str(b), "--fail-on", "never", LADDER)[0] == 0
    assert a.read_bytes() == b.read_bytes()


def test_select_and_ignore_map_onto_the_rules() -> None:
    code, out, _ = invoke("audit", "--json", "-", "--select", "BR003", LADDER)
    assert code == 1
    assert json.loads(out)["rules"] == ["BR003"]
    code, out, _ = invoke(
        "audit", "--json", "-", "--select", "BR00", "--ignore", "BR003", "--ignore", "BR001", LADDER
    )
    assert "BR003" not in json.loads(out)["rules"]
    assert json.loads(out)["rules"] == [
        "BR002",
        "BR004",
        "BR005",
        "BR006",
        "BR007",
        "BR008",
        "BR009",
    ]


def test_unknown_rule_prefix_is_a_usage_error() -> None:
    code, out, err = invoke("audit", "--no-html", "--select", "XX9", LADDER)
    assert (code, out) == (2, "")
    assert err.startswith("--select 'XX9' matches no rule; expected a prefix of BR001, ")


def test_claim_on_the_command_line() -> None:
    code, out, _ = invoke(
        "audit",
        "--json",
        "-",
        "--fail-on",
        "never",
        "--claim",
        "aggregate=100 tok/s N=4 run=a-retest-n4",
        LADDER,
    )
    claims = {c["id"]: c for c in json.loads(out)["claims"]}
    assert claims["cli-1"]["verdict"] == "serial"
    assert claims["cli-1"]["recomputed"] == pytest.approx(91.022, abs=1e-3)
    code, _, err = invoke("audit", "--no-html", "--claim", "aggregate=fast", LADDER)
    assert code == 2
    assert err == (
        "--claim 'aggregate=fast': aggregate='fast' is not a number; expected "
        '"aggregate=350 tok/s N=4 method=sum" (metric aggregate|stream|speedup|'
        "scaling; optional N=, method=sum|wall|unknown, run=, group=, runs=A,B, "
        "id=)\n"
    )


def test_rules_lists_every_rule() -> None:
    code, out, _ = invoke("rules")
    assert code == 0
    header, rule, *rows = out.splitlines()
    assert header.split() == ["code", "name", "severity", "status", "checks"]
    assert set(rule) == {"-", " "}
    assert [line.split()[0] for line in rows] == list(REGISTRY)
    assert rows[2].startswith("BR003  serial-completion-ladder")


def test_explain_prints_the_page() -> None:
    code, out, _ = invoke("explain", "br003")
    assert code == 0
    assert out.startswith("BR003 serial-completion-ladder (error, stable since 0.1.0)\n")
    assert "## Worked example" in out and "22.5" in out
    code, _, err = invoke("explain", "BR999")
    assert code == 2
    assert err.startswith("unknown rule 'BR999'; expected one of BR001, ")


def test_config_overrides_a_threshold(tmp_path: Path) -> None:
    config = tmp_path / "t.toml"
    config.write_text("[thresholds]\nflat_growth = 0.5\n", encoding="utf-8")
    _, out, _ = invoke("audit", "--json", "-", "--select", "BR005", "--config", str(config), LADDER)
    assert json.loads(out)["findings"][0]["outcome"] == "passed"
    config.write_text("[thresholds]\nflat_groth = 0.5\n", encoding="utf-8")
    code, _, err = invoke("audit", "--no-html", "--config", str(config), LADDER)
    assert code == 2
    assert err.startswith(f"{config}: unknown threshold 'flat_groth'; expected one of ")


def test_expected_errors_never_print_a_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{nope\n", encoding="utf-8")
    code, out, err = invoke("audit", "--no-html", str(bad))
    assert (code, out) == (2, "")
    # the parser's own words for the syntax error vary with its version; the frame does not
    assert err.startswith(f"{bad}:1:2: not valid JSON: ")
    assert err.endswith("; expected one JSON object per line\n")
    assert err.count("\n") == 1
    assert "Traceback" not in err


def test_fixture_audits_through_the_console_entry(tmp_path: Path) -> None:
    code, out, _ = invoke(
        "audit",
        "--no-html",
        "--fail-on",
        "never",
        str(FIXTURES / "BR003" / "fires_serial_decode.jsonl"),
    )
    assert code == 0
    assert out.startswith("verdict: serial\n")
