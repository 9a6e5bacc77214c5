"""Trace strings and file names reach the terminal with their escape sequences made visible.

The hostile trace's ids hold CSI (clear screen, colour), OSC 0 (title), OSC 52 (clipboard),
OSC 8 (hyperlink), a C1 CSI, BEL, backspace, carriage return and a bidi override.
"""

from __future__ import annotations

import json
import os
import pty
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from reporter.cli import main
from tests.conftest import ROOT, SHARED

HOSTILE = SHARED / "hostile" / "inject02-terminal-escapes.jsonl"
# What a terminal acts on: C0 but newline and tab, DEL, C1, bidi embeddings, overrides,
# isolates and marks.
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")

pytestmark = pytest.mark.skipif(not HOSTILE.exists(), reason="hostile inputs not present")


def invoke(*args: str) -> tuple[int, str, str]:
    # color=True: click would otherwise strip CSI sequences itself, hiding what a TTY gets
    result = CliRunner().invoke(main, list(args), color=True)
    return result.exit_code, result.stdout, result.stderr


def test_audit_prints_escape_sequences_as_text() -> None:
    code, out, err = invoke("audit", "--no-html", str(HOSTILE))
    assert code == 1
    assert RAW.findall(out) == [] and RAW.findall(err) == []
    assert "\\x1b]52;c;cHduZWQ=\\x07" in out  # shown, not obeyed
    assert "\\u202e" in out


def test_json_on_stdout_escapes_them_and_keeps_the_values(tmp_path: Path) -> None:
    code, out, _ = invoke("audit", "--json", "-", "--fail-on", "never", str(HOSTILE))
    assert code == 0
    assert RAW.findall(out) == []
    assert "\u202e" in json.loads(out)["runs"][0]["id"]


def test_compare_prints_run_names_as_text(tmp_path: Path) -> None:
    trace = tmp_path / "two.jsonl"
    text = HOSTILE.read_text()
    trace.write_text(text + text.replace('"r\\u001b', '"s\\u001b'))  # a second run, "s…"
    run_a = json.loads(text.splitlines()[0])["id"]
    code, out, err = invoke("compare", "-t", str(trace), run_a, "s" + run_a[1:])
    assert code == 0, err
    assert "\\u202e" in out
    assert RAW.findall(out) == [] and RAW.findall(err) == []


def test_file_names_in_messages_are_shown_as_text(tmp_path: Path) -> None:
    name = tmp_path / "evil\x1b]0;PWNED\x07\u202e.jsonl"
    name.write_text('{"kind": "run", "id": "a"\n')  # not JSON: refused with its path
    code, out, err = invoke("audit", "--no-html", str(name))
    assert code == 2
    assert "\\x1b]0;PWNED\\x07\\u202e" in err
    assert RAW.findall(out) == [] and RAW.findall(err) == []
    code, out, err = invoke("validate", str(name))
    assert code == 2
    assert RAW.findall(err) == []


#: The colours and bold of the program's own tables (SGR), on a terminal without NO_COLOR.
OWN_STYLE = re.compile(r"\x1b\[[0-9;]*m")


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("true") is None, reason="needs a POSIX system")
@pytest.mark.parametrize("no_color", [True, False], ids=["NO_COLOR", "colour"])
def test_a_real_terminal_gets_no_raw_escape(no_color: bool) -> None:
    """The command in a pseudo-terminal, as a user runs it: no raw ESC, C1 or bidi at all
    with NO_COLOR; without it, none but the colour and bold (SGR) of the program's tables."""
    leader, follower = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200", "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    if no_color:
        env["NO_COLOR"] = "1"
    proc = subprocess.Popen(
        [sys.executable, "-m", "reporter", "audit", "--no-html", str(HOSTILE)],
        stdin=subprocess.DEVNULL, stdout=follower, stderr=follower, cwd=ROOT, env=env,
    )  # fmt: skip
    os.close(follower)
    chunks = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            data = os.read(leader, 65536)
        except OSError:  # the follower side closed: the process is done
            break
        if not data:
            break
        chunks.append(data)
    os.close(leader)
    assert proc.wait(timeout=10) == 1
    text = b"".join(chunks).decode("utf-8")
    if no_color:
        assert OWN_STYLE.findall(text) == []
    else:
        assert OWN_STYLE.findall(text) != []  # the check below sees what the styles leave
        text = OWN_STYLE.sub("", text)
    assert "verdict: inflated" in text
    # the terminal driver turns "\n" into "\r\n"; nothing else may be a control
    assert RAW.findall(text.replace("\r\n", "\n")) == []


def test_a_newline_in_a_trace_string_cannot_forge_a_line(tmp_path: Path) -> None:
    forged = "r\nverdict: supported\n"
    run = {"kind": "run", "schema": "benchreport/1", "id": forged, "group": forged,
           "workload": {"concurrency": 2, "output_tokens": 4, "stop": "forced"}}  # fmt: skip
    request = {"kind": "request", "run": forged, "t_send": 0, "t_first": 0.1, "t_end": 1,
               "output_tokens": 4}  # fmt: skip
    trace = tmp_path / "forged.jsonl"
    lines = [run, {**request, "id": 1}, {**request, "id": 2}]
    trace.write_text("".join(json.dumps(x) + "\n" for x in lines))
    _, out, _ = invoke("audit", "--no-html", "-v", str(trace))
    assert [line for line in out.splitlines() if line.startswith("verdict")] == [
        "verdict: supported"
    ]
    assert "r\\nverdict: supported\\n" in out
