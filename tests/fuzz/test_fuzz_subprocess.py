"""Inputs that can kill the process that reads them, run in a child process.

Nesting tens of thousands deep overflowed the C stack of the JSON reader (SIGSEGV) in a
request line past the first few; in-process tests keep their nesting far below that
(mutate.MAX_DEPTH), so here a real ``python -m reporter`` gets it, with a deadline.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from tests.fuzz.harness import run_property, strict_json, violated

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "traces" / "case-a-ladder.jsonl"
DEADLINE_S = 120


def audit_in_child(trace: Path, *extra: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    args = [sys.executable, "-m", "reporter", "audit", str(trace), "--no-html", "--json", "-"]
    try:
        proc = subprocess.run(
            [*args, *extra], capture_output=True, text=True, timeout=DEADLINE_S, env=env, cwd=ROOT
        )
    except subprocess.TimeoutExpired:
        violated(f"hang: no answer after {DEADLINE_S} s")
        return
    said = f"exit {proc.returncode}\nstderr: {proc.stderr[-2000:]}"
    if proc.returncode < 0:
        violated(f"killed by signal {-proc.returncode}\n{said}")
    elif proc.returncode not in (0, 1, 2):
        violated(f"exit code {proc.returncode} is none of 0, 1, 2\n{said}")
    elif "Traceback (most recent call last)" in proc.stderr + proc.stdout:
        violated(f"a traceback was printed\n{said}")
    elif proc.returncode != 2:
        try:
            strict_json(proc.stdout)
        except ValueError as err:
            violated(f"--json - is not strict JSON: {err}\n{said}")


@pytest.mark.slow
def test_deep_nesting_anywhere_ends_cleanly() -> None:
    lines = SEED.read_bytes().splitlines(keepends=True)

    @settings(max_examples=4, phases=[Phase.generate])
    @given(
        depth=st.sampled_from([2_000, 20_000, 100_000]),
        opener=st.sampled_from([b"[", b'{"a":']),
        line=st.integers(0, len(lines)),
        lenient=st.booleans(),
    )
    def prop(depth: int, opener: bytes, line: int, lenient: bool) -> None:
        closer = b"]" if opener == b"[" else b"}"
        deep = b'{"kind":"request","run":"a-retest-n1","id":"deep","x":'
        deep += opener * depth + b"1" + closer * depth + b"}\n"
        with tempfile.TemporaryDirectory(prefix="fuzz-") as tmp:
            trace = Path(tmp) / "deep.jsonl"
            trace.write_bytes(b"".join([*lines[:line], deep, *lines[line:]]))
            audit_in_child(trace, *(["--lenient"] if lenient else []))

    run_property(prop)
