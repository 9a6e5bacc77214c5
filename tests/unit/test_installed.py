"""The built wheel carries schemas/ and templates/ and audits from any working directory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT, TRACES

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
            str(ROOT),
        ],
        check=True,
    )
    (found,) = out.glob("benchreport-*.whl")
    return found


def test_wheel_ships_the_schema_and_the_templates(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "reporter/_data/schemas/benchreport-1.schema.json" in names
    assert "reporter/_data/templates/report.html.j2" in names
    assert "reporter/cli/__init__.py" in names
    assert "reporter/cli/audit.py" in names
    assert "reporter/py.typed" in names  # type checkers read the annotations (PEP 561)


def test_wheel_version_is_the_one_in_the_source(wheel: Path) -> None:
    from reporter.version import __version__

    assert wheel.name.startswith(f"benchreport-{__version__}-")


def test_installed_package_audits_from_another_directory(wheel: Path, tmp_path: Path) -> None:
    target = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "-q",
            "--target",
            str(target),
            str(wheel),
        ],
        check=True,
    )
    work = tmp_path / "elsewhere"
    work.mkdir()
    trace = work / "ladder.jsonl"
    trace.write_bytes((TRACES / "case-a-ladder.jsonl").read_bytes())
    env = {**os.environ, "PYTHONPATH": str(target)}
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import reporter, sys; print(reporter.__file__); "
            "from reporter.cli import main; sys.argv = ['benchreport', 'audit', 'ladder.jsonl', "
            "'--json', 'v.json', '-o', 'r.html', '--fail-on', 'never']; main()",
        ],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0].startswith(str(target))
    verdict = json.loads((work / "v.json").read_text(encoding="utf-8"))
    assert verdict["verdict"] == "inflated"
    assert verdict["inputs"][0]["path"] == "ladder.jsonl"
    assert "<svg" in (work / "r.html").read_text(encoding="utf-8")
