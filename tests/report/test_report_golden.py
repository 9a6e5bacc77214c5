"""Golden files: the JSON verdict, Markdown summary and HTML report of every shipped trace.

Accept intended changes with `pytest tests/report --update-golden` (README, "Report golden
files"); a mismatch prints a diff and writes the actual file to tests/actual/.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from report_helpers import CASES, case_params

from reporter import api
from reporter.verdict import Verdict


@pytest.mark.parametrize("case", case_params())
def test_golden_outputs(
    case: str,
    at_root: Path,
    tmp_path: Path,
    golden: Callable[[str, str, str], None],
    golden_verdicts: Callable[[str], Verdict],
) -> None:
    trace = CASES[case]
    verdict = golden_verdicts(case)
    out = {name: tmp_path / name for name in ("report.html", "summary.md", "verdict.json")}
    written = api.render_outputs(
        verdict,
        html=str(out["report.html"]),
        md=str(out["summary.md"]),
        json=str(out["verdict.json"]),
        command=f"benchreport audit {trace} --md summary.md --json verdict.json",
    )
    assert written == [str(out["verdict.json"]), str(out["report.html"]), str(out["summary.md"])]
    for name, path in out.items():
        golden(case, name, path.read_text(encoding="utf-8"))
    lines = out["summary.md"].read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 60, "the Markdown summary is meant for a pull-request comment"
