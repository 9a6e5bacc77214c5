"""Shared fixtures: the repository's folders and a one-call audit of trace files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reporter import api
from reporter.verdict import Verdict

ROOT = Path(__file__).resolve().parents[1]
TRACES = ROOT / "traces"
FIXTURES = ROOT / "tests" / "fixtures"
SHARED = ROOT.parent / "shared"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="rewrite the files in tests/golden/ from the current output (accept intended changes)",
    )


def finding(verdict: Verdict | dict[str, Any], code: str, subject: str) -> dict[str, Any]:
    """The one finding of `code` about `subject`, from a verdict or its JSON dict."""
    __tracebackhide__ = True
    data = verdict.to_dict() if isinstance(verdict, Verdict) else verdict
    found = [f for f in data["findings"] if f["code"] == code and f["subject"] == subject]
    if len(found) != 1:
        subjects = sorted({f["subject"] for f in data["findings"] if f["code"] == code})
        pytest.fail(f"{len(found)} findings of {code} about {subject!r}; subjects: {subjects}")
    return found[0]


def run_of(verdict: Verdict | dict[str, Any], run_id: str) -> dict[str, Any]:
    __tracebackhide__ = True
    data = verdict.to_dict() if isinstance(verdict, Verdict) else verdict
    found = [r for r in data["runs"] if r["id"] == run_id]
    if len(found) != 1:
        pytest.fail(f"no run {run_id!r}; runs: {[r['id'] for r in data['runs']]}")
    return found[0]


@pytest.fixture(scope="session")
def traces_verdict() -> dict[str, Any]:
    """The audit of every shipped trace at once, as the README's command runs it."""
    return api.audit(sorted(TRACES.glob("*.jsonl"))).to_dict()


@pytest.fixture(scope="session")
def trace_audit() -> Any:
    """Audit one shipped trace by name (cached), as a JSON dict."""
    cache: dict[str, dict[str, Any]] = {}

    def audit(name: str) -> dict[str, Any]:
        if name not in cache:
            cache[name] = api.audit([TRACES / name]).to_dict()
        return cache[name]

    return audit
