"""Hostile input through the real command line: exit 0/1/2, never a traceback, a signal,
a hang or unbounded memory; refusals say `path: what; expected what` (exit 2).

The regression files are read in place from ../shared/hostile (its README says how each is
run); the tests skip when the folder is absent.
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from reporter import api
from reporter.cli import main
from tests.conftest import TRACES

LADDER = str(TRACES / "case-a-ladder.jsonl")


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def _explode(*args: object, **kwargs: object) -> None:
    raise RuntimeError("unexpected\nstate \x1b[2J")


def test_an_unexpected_error_is_exit_2_on_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(api, "audit", _explode)
    code, out, err = invoke("audit", "--no-html", LADDER, "--claim", "aggregate=40 N=2")
    assert code == 2  # never 1, which means "audited, and a finding fired"
    assert "Traceback" not in out + err
    assert err.count("\n") == 1
    assert err.startswith(f"benchreport: internal error while auditing {LADDER}")
    assert "claim 'aggregate=40 N=2'" in err
    assert "RuntimeError: unexpected state \\x1b[2J" in err  # one line, no raw escape
    assert "--debug" in err


def test_debug_shows_the_traceback_and_keeps_exit_2(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(api, "audit", _explode)
    code, _, err = invoke("audit", "--no-html", LADDER, "--debug")
    assert code == 2
    assert "Traceback (most recent call last)" in err
    assert "in _explode" in err


def test_an_expected_error_with_debug_is_still_exit_2() -> None:
    code, _, err = invoke("audit", "--no-html", "missing.jsonl", "--debug")
    assert code == 2
    assert "Traceback" in err
    assert err.rstrip().endswith("missing.jsonl: cannot read the file: No such file or directory")


def test_every_command_shares_the_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(api, "load", _explode)
    code, _, err = invoke("compare", "-t", LADDER, "a", "b")
    assert code == 2
    assert "Traceback" not in err
    assert err.startswith(f"benchreport: internal error while comparing runs of {LADDER}")


def test_an_interrupt_is_exit_130(monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupt(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(api, "audit", interrupt)
    code, _, err = invoke("audit", "--no-html", LADDER)
    assert code == 130
    assert "interrupted" in err
    assert "Traceback" not in err
