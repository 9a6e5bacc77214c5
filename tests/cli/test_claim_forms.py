"""Every `--claim` form the help text and the README show parses, and the CLI judges it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from reporter.claims import parse_claim_option
from reporter.cli import main
from reporter.cli.audit import audit
from reporter.errors import UsageError
from tests.conftest import TRACES

README = Path(__file__).resolve().parents[2] / "README.md"

#: What each documented form parses to (metric, value, N, method, run, group, runs, id).
PARSED: dict[str, tuple[Any, ...]] = {
    "aggregate=350 tok/s N=4 method=sum": ("aggregate_tps", 350, 4, "sum", None, None, None, None),
    "aggregate=377 tok/s N=4 method=sum": ("aggregate_tps", 377, 4, "sum", None, None, None, None),
    "aggregate=4703.28 tok/s N=1 run=pp512": (
        "aggregate_tps", 4703.28, 1, "unknown", "pp512", None, None, None,
    ),
    "aggregate=2163.3 tok/s group=c16": (
        "aggregate_tps", 2163.3, None, "unknown", None, "c16", None, None,
    ),
    "stream=45 tok/s run=n1": ("stream_tps", 45, None, "unknown", "n1", None, None, None),
    "scaling=3.5x N=8 group=sweep": ("scaling", 3.5, 8, "unknown", None, "sweep", None, None),
    "speedup=2.65 runs=A,B id=fig3": (
        "speedup", 2.65, None, "unknown", None, None, ["A", "B"], "fig3",
    ),
}  # fmt: skip


def _help_forms() -> list[str]:
    option = next(p for p in audit.params if p.name == "claim_texts")
    assert isinstance(option, click.Option) and option.help
    return re.findall(r'"([a-z_]+=[^"]*)"', option.help)


def _readme_forms() -> list[str]:
    return re.findall(r'--claim "([^"]+)"', README.read_text(encoding="utf-8"))


def _parsed(text: str) -> tuple[Any, ...]:
    row = parse_claim_option(text, 1)
    return (
        row["metric"], row["value"], row["concurrency"], row["method"], row["run"],
        row["group"], row["runs"], None if row["claim"] == "cli-1" else row["claim"],
    )  # fmt: skip


def test_the_documented_forms_are_the_tested_ones() -> None:
    shown = set(_help_forms()) | set(_readme_forms())
    assert shown - set(PARSED) == set(), "a documented --claim form has no expected parse here"
    assert set(_help_forms()) >= {"speedup=2.65 runs=A,B id=fig3", "scaling=3.5x N=8 group=sweep"}
    assert {PARSED[f][0] for f in shown} == {"aggregate_tps", "stream_tps", "scaling", "speedup"}


@pytest.mark.parametrize("text", sorted(set(_help_forms()) | set(_readme_forms())))
def test_every_documented_form_parses(text: str) -> None:
    assert _parsed(text) == PARSED[text]


@pytest.mark.parametrize(
    "text, runs",
    [
        ("speedup=2.65 runs=A,B", ["A", "B"]),
        ("speedup=2.65 runs=A, B", ["A", "B"]),
        ("runs=n8,n1 speedup=2.65x", ["n8", "n1"]),
    ],
)
def test_runs_keep_their_comma(text: str, runs: list[str]) -> None:
    assert parse_claim_option(text, 1)["runs"] == runs


def test_a_comma_before_another_key_separates() -> None:
    row = parse_claim_option("aggregate=350 tok/s, N=4,method=sum", 1)
    assert (row["value"], row["concurrency"], row["method"]) == (350, 4, "sum")


@pytest.mark.parametrize(
    "text", ["speedup=2.65 runs=A", "speedup=2.65 runs=A,", "speedup=2 runs=A,B,C"]
)
def test_runs_must_name_two(text: str) -> None:
    with pytest.raises(UsageError, match=r"does not name two runs; expected two run ids: runs=A,B"):
        parse_claim_option(text, 1)


def _claims(*args: str) -> dict[str, dict[str, Any]]:
    result = CliRunner().invoke(main, ["audit", "--json", "-", "--fail-on", "never", *args])
    assert result.exit_code == 0, result.output
    return {c["id"]: c for c in json.loads(result.stdout)["claims"]}


def test_a_speedup_claim_with_runs_is_judged_end_to_end() -> None:
    trace = str(TRACES / "case-b-natural-stop.jsonl")
    claims = _claims("--claim", "speedup=2.65 runs=b-natural-n8,b-natural-n1 id=fig3", trace)
    fig = claims["fig3"]
    assert fig["runs"] == ["b-natural-n8", "b-natural-n1"]
    assert fig["recomputed"] == pytest.approx(171.2 / 60.3, rel=0.01)  # METHOD §4: 2.84×
    assert fig["verdict"] == "supported"


@pytest.mark.parametrize(
    "text", ["aggregate=195.65t/s", "aggregate=195.65 t/s", "aggregate=195.65tokens/s"]
)
def test_the_units_llama_bench_and_others_print_are_read(text: str) -> None:
    assert parse_claim_option(text, 1)["value"] == 195.65


@pytest.mark.slow
def test_a_claim_with_a_byte_that_is_not_utf8_is_refused() -> None:
    # a non-UTF-8 byte of argv reaches Python as a lone surrogate (\udcff for 0xff); it used to
    # end in an internal error when the claims table was built
    with pytest.raises(
        UsageError, match=r"holds a byte that is not UTF-8 \(\\xff at character 16\)"
    ):
        parse_claim_option("aggregate=1 id=\udcff", 1)
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "reporter", "audit", str(TRACES / "case-a-ladder.jsonl"),
         "--no-html", "--claim", "aggregate=1 id=\udcff".encode("utf-8", "surrogateescape")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr
    assert "expected UTF-8 text" in done.stderr
