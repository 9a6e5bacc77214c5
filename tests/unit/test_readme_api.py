"""The README's Python API example runs as written (from the repository root)."""

from __future__ import annotations

import contextlib
import io
import re

import pytest

from tests.conftest import ROOT


def _example() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Python API", 1)[1].split("\n## ", 1)[0]
    (code,) = re.findall(r"```python\n(.*?)```", section, re.DOTALL)
    return code


def test_the_readme_api_example_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(_example(), "README.md", "exec"), {})  # its asserts check the verdict
    lines = out.getvalue().splitlines()
    assert lines[0] == "inflated"
    assert "a-retest-n4 4.0 91.0 tok/s serial" in lines
    assert lines[-2] == "benchreport 12 records; 7 requests"
    assert lines[-1] == "['a-retest-n1', 'a-retest-n2', 'a-retest-n4']"
