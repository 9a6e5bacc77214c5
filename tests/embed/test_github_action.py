"""The Action's script (scripts/github-action.sh) run as a runner runs it: a workspace, a
job summary file, an output file, benchreport already installed (no network), and the
pre-commit hooks' entry commands on a good and a bad trace."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from embed_helpers import ROOT

SCRIPT = ROOT / "scripts" / "github-action.sh"
needs_bash = pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")


def _run(tmp_path: Path, **inputs: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    """The script with the runner's variables; the workspace is the repository itself."""
    runner = tmp_path / "runner"
    runner.mkdir(exist_ok=True)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path),
        "GITHUB_WORKSPACE": str(ROOT),
        "GITHUB_STEP_SUMMARY": str(runner / "step_summary.md"),
        "GITHUB_OUTPUT": str(runner / "output"),
        "BENCHREPORT_INSTALL": "skip",
        "BENCHREPORT_PYTHON": sys.executable,
        "PYTHONPATH": str(ROOT),
        "BR_OUTPUT_DIR": str(tmp_path / "out"),
        **inputs,
    }
    done = subprocess.run(
        ["bash", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    return done, runner


def _outputs(runner: Path) -> dict[str, str]:
    lines = (runner / "output").read_text(encoding="utf-8").splitlines()
    return dict(line.split("=", 1) for line in lines)


@needs_bash
@pytest.mark.slow  # a subprocess: Python's start and the imports take seconds
def test_an_inflated_trace_fails_the_step_with_annotations_and_files(tmp_path: Path) -> None:
    done, runner = _run(
        tmp_path,
        # blanks and newlines separate patterns; the ladder, matched twice, is read once
        # (twice would be two runs of one id: exit 2)
        BR_TRACES="traces/case-a-ladder.jsonl\n ./traces/case-?-queue.jsonl\ttraces/case-a-*.jsonl",
        BR_OUTPUTS="json, markdown,csv,badge",
    )
    assert done.returncode == 1, done.stderr
    out = _outputs(runner)
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    assert set(out) == set(action["outputs"])
    assert out["verdict"] == "inflated" and out["exit-code"] == "1"
    for name, file in (("json", "verdict.json"), ("markdown", "summary.md"),
                       ("csv", "runs.csv"), ("badge", "badge.svg")):  # fmt: skip
        assert out[name] == str(tmp_path / "out" / file)
        assert Path(out[name]).stat().st_size > 0
    assert out["html"] == "" and out["card"] == ""
    assert not (tmp_path / "out" / "report.html").exists()
    # the job summary is the Markdown summary
    summary = (runner / "step_summary.md").read_text(encoding="utf-8")
    assert summary == (tmp_path / "out" / "summary.md").read_text(encoding="utf-8")
    assert "**4 × 512 tokens ÷ 22.50 s = 91.0 tok/s; claimed 350 = 3.85×**" in summary
    # annotations on the cited lines: the claims, the serial runs' ladders
    lines = done.stdout.splitlines()
    assert all(line.startswith("::") for line in lines)
    assert any(
        line.startswith("::error file=traces/case-a-ladder.jsonl,line=11,title=BR001 ")
        and "a-350: aggregate 350.0 tok/s" in line
        for line in lines
    )
    assert any(line.startswith("::error file=traces/case-b-queue.jsonl,line=18,title=BR001 ")
               for line in lines)  # fmt: skip
    serial = [
        line
        for line in lines
        if "title=BR003 serial-completion-ladder::" in line and "case-a-ladder" in line
    ]
    assert [re.search(r"line=(\d+)", line).group(1) for line in serial] == ["4", "7"]  # type: ignore[union-attr]
    assert "traces/case-a-versions.jsonl" in done.stdout  # the third pattern's other file


@needs_bash
@pytest.mark.slow  # a subprocess: Python's start and the imports take seconds
def test_fail_on_never_passes_and_claims_come_one_a_line(tmp_path: Path) -> None:
    done, runner = _run(
        tmp_path,
        BR_TRACES="traces/honest-batched.jsonl",
        BR_FAIL_ON="never",
        BR_CLAIMS="\n  aggregate=2000 tok/s N=8 run=honest-n8-r0 id=mine\n\n",
        BR_OUTPUTS="json",
        BR_ANNOTATIONS="false",
    )
    assert done.returncode == 0, done.stderr
    out = _outputs(runner)
    assert out["verdict"] == "inflated" and out["exit-code"] == "0"
    assert out["markdown"] == "" and not (tmp_path / "out" / "summary.md").exists()
    assert "claimed 2,000.0 is" in (runner / "step_summary.md").read_text(encoding="utf-8")
    assert done.stdout.startswith("verdict: inflated")  # the terminal summary, no annotations


@needs_bash
@pytest.mark.slow  # a subprocess: Python's start and the imports take seconds
def test_a_bad_trace_is_exit_2_with_its_line_annotated(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    lines = (ROOT / "traces" / "case-a-ladder.jsonl").read_text(encoding="utf-8").splitlines()
    lines[3] = lines[3].replace('"t_end":5.4', '"t_end":"soon"')
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    done, runner = _run(tmp_path, BR_TRACES=str(bad), BR_OUTPUTS="html,json")
    assert done.returncode == 2
    out = _outputs(runner)
    assert out["verdict"] == "could-not-audit" and out["exit-code"] == "2"
    assert out["json"] == "" and out["html"] == ""
    annotations = [line for line in done.stdout.splitlines() if line.startswith("::error ")]
    assert annotations and annotations[0].startswith(
        f"::error file={str(bad).replace(':', '%3A').replace(',', '%2C')},line=4,"
    )
    assert "could not audit" in (runner / "step_summary.md").read_text(encoding="utf-8")


@needs_bash
@pytest.mark.parametrize(
    ("traces", "said"),
    [
        ("traces/no-such-*.jsonl", "no file matches 'traces/no-such-*.jsonl'"),
        ("traces/case-a-ladder.jsonl traces/gone.jsonl", "no file matches 'traces/gone.jsonl'"),
        ("traces", "no file matches 'traces'"),  # a folder without Parquet parts
        ("", "no traces"),
    ],
)
def test_a_pattern_matching_nothing_is_exit_2(tmp_path: Path, traces: str, said: str) -> None:
    done, _ = _run(tmp_path, BR_TRACES=traces)
    assert done.returncode == 2
    assert done.stdout.startswith("::error title=benchreport::") and said in done.stdout


@needs_bash
@pytest.mark.slow
def test_every_shipped_trace_with_every_document(tmp_path: Path) -> None:
    done, runner = _run(
        tmp_path, BR_TRACES="traces/**/*.jsonl", BR_OUTPUTS="html,json,markdown,csv,badge,card"
    )
    assert done.returncode == 1, done.stderr
    out = _outputs(runner)
    assert out["verdict"] == "inflated"
    for name in ("html", "json", "markdown", "csv", "badge", "card"):
        assert Path(out[name]).stat().st_size > 0, name
    assert "<!DOCTYPE html>" in Path(out["html"]).read_text(encoding="utf-8")
    summary = (runner / "step_summary.md").read_text(encoding="utf-8")
    assert summary == Path(out["markdown"]).read_text(encoding="utf-8")
    assert summary.startswith("### benchreport audit: **Inflated**")
    cited = set(re.findall(r"::\w+ file=([^,]+),line=\d+,", done.stdout))
    shipped = {f"traces/{p.name}" for p in (ROOT / "traces").glob("*.jsonl")}
    assert {"traces/case-a-ladder.jsonl", "traces/case-a-versions.jsonl"} < cited <= shipped


def test_the_action_maps_every_input_to_the_script() -> None:
    action: dict[str, Any] = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    assert action["runs"]["using"] == "composite"
    step = action["runs"]["steps"][-1]
    assert step["run"] == '"$GITHUB_ACTION_PATH/scripts/github-action.sh"'
    assert "${{" not in step["run"]  # inputs only through the environment
    env = step["env"]
    names = {"traces", "fail-on", "claims", "format", "mapping", "config", "outputs",
             "output-dir", "annotations", "install"}  # fmt: skip
    assert names | {"python-version"} == set(action["inputs"])
    for name in names - {"install"}:
        assert f"${{{{ inputs.{name} }}}}" in env.values(), name
    script = SCRIPT.read_text(encoding="utf-8")
    for variable in env:
        assert variable in script, variable
    for name, output in action["outputs"].items():
        assert output["value"] == f"${{{{ steps.audit.outputs.{name} }}}}"


def _hook(hook_id: str) -> dict[str, Any]:
    hooks: list[dict[str, Any]] = yaml.safe_load(
        (ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
    )
    return next(h for h in hooks if h["id"] == hook_id)


def _entry(hook_id: str, *files: str) -> subprocess.CompletedProcess[str]:
    """The hook's entry as pre-commit runs it: the command, then the staged file names."""
    command = shlex.split(_hook(hook_id)["entry"])
    assert command[0] == "benchreport"
    return subprocess.run(
        [sys.executable, "-m", "reporter", *command[1:], *files],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def test_the_hooks_take_traces_and_nothing_else() -> None:
    for hook_id in ("benchreport-validate", "benchreport-audit"):
        files = re.compile(_hook(hook_id)["files"])
        assert files.search("traces/case-a-ladder.jsonl")
        assert files.search("bench/benchmarks/run-3/profile_export.json")
        assert not files.search("package.json") and not files.search("src/traces.py")


@pytest.mark.slow  # a subprocess: Python's start and the imports take seconds
def test_the_validate_hook_on_a_good_and_a_bad_trace(tmp_path: Path) -> None:
    good = _entry("benchreport-validate", "traces/case-a-ladder.jsonl")
    assert good.returncode == 0 and "traces/case-a-ladder.jsonl: ok" in good.stdout
    bad = tmp_path / "traces" / "bad.jsonl"
    bad.parent.mkdir()
    lines = (ROOT / "traces" / "case-a-ladder.jsonl").read_text(encoding="utf-8").splitlines()
    bad.write_text("\n".join([*lines[:4], "{not json", *lines[4:]]) + "\n", encoding="utf-8")
    done = _entry("benchreport-validate", str(bad))
    assert done.returncode == 2
    assert f"{bad}:5:" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.slow  # a subprocess: Python's start and the imports take seconds
def test_the_audit_hook_fails_on_an_error_finding_only() -> None:
    serial = _entry("benchreport-audit", "traces/case-a-ladder.jsonl")
    assert serial.returncode == 1
    assert "traces/case-a-ladder.jsonl:4: BR003 a-retest-n2: requests decoded one at a time" in (
        serial.stdout
    )
    honest = _entry("benchreport-audit", "traces/honest-batched.jsonl")
    assert honest.returncode == 0, honest.stdout


@needs_bash
@pytest.mark.slow  # a subprocess: Python's start and the imports take seconds
def test_a_folder_of_parquet_parts_is_a_trace(tmp_path: Path) -> None:
    from reporter import api

    parts = tmp_path / "parts" / "day1"
    parts.mkdir(parents=True)
    api.convert_file(ROOT / "traces" / "case-a-ladder.jsonl", str(parts / "ladder.parquet"))
    done, runner = _run(tmp_path, BR_TRACES=str(tmp_path / "parts"), BR_OUTPUTS="json")
    assert done.returncode == 1, done.stdout + done.stderr
    assert _outputs(runner)["verdict"] == "inflated"
