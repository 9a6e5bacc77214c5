"""Instant start: the commands that print help or the rules import neither pandas nor pyarrow,
and a JSON-only audit imports neither the chart stack nor WeasyPrint.

Each case runs the command line in a fresh interpreter and lists the heavy modules it
imported (an import already made in this test process would hide one).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from reporter.cli.options import FORMATS, OUTPUT_FORMATS
from tests.conftest import ROOT, TRACES

DATA_STACK = ("pandas", "pyarrow", "numpy")
REPORT_STACK = ("altair", "vl_convert", "weasyprint", "jinja2")
SCRIPT = """
import json, sys
from reporter.cli import main
try:
    main(sys.argv[1:], prog_name="benchreport")
except SystemExit:
    pass
heavy = {heavy!r}
print(json.dumps(sorted(m for m in heavy if m in sys.modules)), file=sys.stderr)
"""


def imported(
    args: list[str], heavy: tuple[str, ...], env: dict[str, str] | None = None
) -> list[str]:
    """The modules of `heavy` that `benchreport ARGS` imported."""
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(heavy=heavy), *args],
        capture_output=True, text=True, cwd=ROOT, timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}, check=False,
    )  # fmt: skip
    found: list[str] = json.loads(done.stderr.strip().splitlines()[-1])
    return found


#: Each case is a fresh interpreter: the quick lane starts three (the top-level help, the
#: catalogue and one rule's page); the full lane every command's help.
QUICK_STARTS = (["--help"], ["rules"], ["explain", "BR003"])


@pytest.mark.parametrize(
    "args",
    [
        args if args in QUICK_STARTS else pytest.param(args, marks=pytest.mark.slow)
        for args in (
            ["--version"],
            ["--help"],
            ["rules"],
            ["rules", "--thresholds", "--json", "-"],
            ["explain", "BR003"],
            ["explain", "BR003", "--json"],
            ["audit", "--help"],
            ["compare", "--help"],
            ["convert", "--help"],
            ["probe", "bandwidth", "--help"],
            ["record", "--help"],
            ["validate", "--help"],
        )
    ],
    ids=" ".join,
)
def test_help_and_the_rules_start_without_the_data_stack(args: list[str]) -> None:
    assert imported(args, DATA_STACK) == []


@pytest.mark.parametrize(
    "words", ["benchreport ", pytest.param("benchreport audit --", marks=pytest.mark.slow)]
)
def test_shell_completion_starts_without_the_data_stack(words: str) -> None:
    env = {
        "_BENCHREPORT_COMPLETE": "bash_complete",
        "COMP_WORDS": words,
        "COMP_CWORD": str(len(words.split(" ")) - 1),
    }
    assert imported([], DATA_STACK, env) == []


@pytest.mark.slow  # a real audit in a fresh interpreter: seconds of pandas import
def test_a_json_only_audit_skips_the_report_stack() -> None:
    args = ["audit", str(TRACES / "case-a-ladder.jsonl"), "--no-html", "--json", "-"]
    # pandas shows that the audit ran and that the check sees what it imported
    assert imported(args, ("pandas", *REPORT_STACK)) == ["pandas"]


def test_the_choices_written_out_are_the_library_s() -> None:
    from reporter.adapters import ADAPTERS
    from reporter.render import annotations

    assert ("auto", *ADAPTERS) == FORMATS
    assert annotations.OUTPUT_FORMATS == OUTPUT_FORMATS
