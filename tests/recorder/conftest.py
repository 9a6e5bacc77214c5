"""Fixtures of the recorder tests: a reference engine in a subprocess on a free loopback
port, and a one-call "record it, then audit the trace"."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import orjson
import pytest

from reporter import api
from reporter.recorder import RecordConfig, RecordResult, record

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Engine:
    url: str
    log: Path
    proc: subprocess.Popen[str]

    def log_lines(self) -> list[str]:
        return self.log.read_text(encoding="utf-8").splitlines()

    def finished(self) -> int:
        """Requests the engine itself logged as done (written to the last byte)."""
        return sum(1 for line in self.log_lines() if " done: " in line)


@contextmanager
def refengine(tmp: Path, *args: str) -> Iterator[Engine]:
    """``python -m reporter.refengine --port 0 ARGS`` until the block ends."""
    log = tmp / f"refengine-{time.monotonic_ns()}.log"
    proc = subprocess.Popen(
        [sys.executable, "-m", "reporter.refengine", "--port", "0", "--log-file", str(log),
         *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if "listening on" not in line:
            proc.kill()
            _, err = proc.communicate(timeout=10)
            pytest.fail(f"the reference engine did not start: {line!r} {err[-2000:]}")
        yield Engine(line.split("listening on ")[1].strip(), log, proc)
    finally:
        if proc.poll() is None:
            proc.terminate()
        try:
            proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()


@pytest.fixture
def engine(tmp_path: Path) -> Callable[..., Any]:
    """``with engine("--slots", "2") as eng:`` a reference engine for this test."""

    def start(*args: str) -> Any:
        return refengine(tmp_path, *args)

    return start


def read_trace(path: Path | str) -> list[dict[str, Any]]:
    """Every line of a trace, parsed (fails the test on a line that does not parse)."""
    return [orjson.loads(line) for line in Path(path).read_bytes().splitlines() if line.strip()]


def base_config(url: str, out: Path, **kw: Any) -> RecordConfig:
    """Small, fast runs: 32 forced tokens, N = 1, 2, 4, no pause, a fixed group name."""
    cfg = RecordConfig(base_url=url, model="ref", out=str(out), concurrency=(1, 2, 4),
                       output_tokens=32, pause_s=0.0, group="g")  # fmt: skip
    return replace(cfg, **kw)


@pytest.fixture
def rec(tmp_path: Path) -> Callable[..., tuple[RecordResult, list[dict[str, Any]], dict[str, Any]]]:
    """Record against ``url`` → (result, trace records, audit verdict as a dict)."""
    counter = iter(range(1000))

    def run(url: str, **kw: Any) -> tuple[RecordResult, list[dict[str, Any]], dict[str, Any]]:
        out = tmp_path / f"trace-{next(counter)}.jsonl"
        result = record(base_config(url, out, **kw))
        return result, read_trace(out), api.audit([out]).to_dict()

    return run
