"""Fixtures of the report tests: audits of the report fixtures, golden-file comparison."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from pathlib import Path

import pytest
from report_helpers import CASES, outline_charts

from reporter import api
from reporter.verdict import Verdict

ROOT = Path(__file__).resolve().parents[2]
REPORT_FIXTURES = ROOT / "tests" / "fixtures" / "report"
GOLDEN = ROOT / "tests" / "golden"
ACTUAL = ROOT / "tests" / "actual"
#: Lines of a golden diff shown on failure (the whole actual file is in tests/actual/).
DIFF_LINES = 120


def audit_relative(path: Path) -> Verdict:
    """Audit one file by its path relative to the repository root, as a user in it would."""
    return api.audit([str(path.relative_to(ROOT))])


@pytest.fixture
def at_root(monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run the test with the repository root as the working directory (relative paths)."""
    monkeypatch.chdir(ROOT)
    return ROOT


@pytest.fixture(scope="session")
def fixture_verdicts() -> Callable[[str], Verdict]:
    """Audit a report fixture by name (cached), with a path relative to the repository."""
    cache: dict[str, Verdict] = {}

    def get(name: str) -> Verdict:
        if name not in cache:
            with pytest.MonkeyPatch.context() as mp:
                mp.chdir(ROOT)
                cache[name] = audit_relative(REPORT_FIXTURES / name)
        return cache[name]

    return get


@pytest.fixture(scope="session")
def golden_verdicts() -> Callable[[str], Verdict]:
    """The audit of a golden case (report_helpers.CASES), once per session, run from the
    repository root with the case's relative path as its goldens were. The golden test and
    the contract test read the same verdict; no test changes one."""
    cache: dict[str, Verdict] = {}

    def get(case: str) -> Verdict:
        if case not in cache:
            with pytest.MonkeyPatch.context() as mp:
                mp.chdir(ROOT)
                cache[case] = api.audit([CASES[case]])
        return cache[case]

    return get


def _cut(line: str, width: int = 240) -> str:
    return line if len(line) <= width else line[:width] + f"… ({len(line)} chars)\n"


def _compared(name: str, text: str, exact: bool) -> str:
    """What of a golden file must match: all of it, but an HTML report's charts by outline
    (`outline_charts`: a new vl-convert may move a label a pixel, that is not our change)."""
    return text if exact or not name.endswith(".html") else outline_charts(text)


@pytest.fixture
def golden(request: pytest.FixtureRequest) -> Callable[[str, str, str], None]:
    """Compare `actual` with tests/golden/<case>/<name>; --update-golden rewrites it.

    HTML charts are compared by their outline, the rest of each file byte for byte;
    --golden-exact compares the charts' bytes too.
    """
    update = bool(request.config.getoption("--update-golden"))
    exact = bool(request.config.getoption("--golden-exact"))

    def check(case: str, name: str, actual: str) -> None:
        __tracebackhide__ = True
        expected_path = GOLDEN / case / name
        if update:
            expected_path.parent.mkdir(parents=True, exist_ok=True)
            expected_path.write_text(actual, encoding="utf-8")
            return
        actual_path = ACTUAL / case / name
        if expected_path.exists():
            expected = expected_path.read_text(encoding="utf-8")
            if expected == actual:
                return
            expected = _compared(name, expected, exact)
            if expected == _compared(name, actual, exact):
                return
        else:
            expected = ""
        actual_path.parent.mkdir(parents=True, exist_ok=True)
        actual_path.write_text(actual, encoding="utf-8")
        diff = list(
            difflib.unified_diff(
                expected.splitlines(keepends=True),
                _compared(name, actual, exact).splitlines(keepends=True),
                fromfile=str(expected_path.relative_to(ROOT)),
                tofile=str(actual_path.relative_to(ROOT)),
            )
        )
        shown = "".join(_cut(line) for line in diff[:DIFF_LINES])
        more = f"\n… {len(diff) - DIFF_LINES} more diff lines" if len(diff) > DIFF_LINES else ""
        what = "differs from" if expected_path.exists() else "has no"
        pytest.fail(
            f"{case}/{name}: the output {what} the golden file; actual output written to "
            f"{actual_path.relative_to(ROOT)}. If the change is intended, accept it with "
            f"`pytest tests/report --update-golden` and review the diff.\n{shown}{more}",
            pytrace=False,
        )

    return check
