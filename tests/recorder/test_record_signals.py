"""Nothing lost: ``benchreport record`` killed with SIGKILL, or stopped with Ctrl-C (SIGINT),
keeps every request that finished, and every line it wrote parses."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reporter import api
from tests.recorder.conftest import ROOT, read_trace

pytestmark = pytest.mark.slow


def _recorder(url: str, out: Path, *args: str) -> subprocess.Popen[bytes]:
    cmd = [sys.executable, "-m", "reporter", "record", url, "-m", "ref", "--out", str(out),
           "--pause", "0", "-q", *args]  # fmt: skip
    return subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _wait_for_requests(out: Path, count: int, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if out.exists() and out.read_bytes().count(b'"kind":"request"') >= count:
            return
        if proc.poll() is not None:
            pytest.fail(f"the recorder ended early: {proc.communicate()[1].decode()[-2000:]}")
        time.sleep(0.02)
    pytest.fail(f"fewer than {count} requests recorded in 60 s")


def test_sigkill_mid_run_keeps_every_finished_request(engine, tmp_path):
    out = tmp_path / "killed.jsonl"
    with engine("--slots", "4", "--step-ms", "2") as eng:
        proc = _recorder(eng.url, out, "-c", "4", "--requests", "2000", "--output-tokens", "16")
        _wait_for_requests(out, 30, proc)
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=10)
        time.sleep(0.3)  # the engine notices the closed connections
        finished = eng.finished()
    assert proc.returncode == -signal.SIGKILL
    records = read_trace(out)  # every line parses
    assert records[0]["kind"] == "run"
    assert records[0]["workload"]["concurrency"] == 4
    requests = [r for r in records if r["kind"] == "request"]
    assert not [r for r in records if r["kind"] == "run_end"]
    # the engine finished every recorded request; at most the 4 in flight were finished by
    # the engine (to the last byte) and not yet written by the recorder when it died
    assert 0 <= finished - 1 - len(requests) <= 4  # 1: the recorder's preflight request
    assert len({r["id"] for r in requests}) == len(requests)
    assert {(r["output_tokens"], r["finish_reason"]) for r in requests} == {(16, "length")}
    verdict = api.audit([out]).to_dict()
    assert verdict["runs"][0]["requests"] == len(requests)
    assert verdict["runs"][0]["output_tokens"] == 16 * len(requests)


def test_ctrl_c_stops_sending_and_lets_in_flight_requests_finish(engine, tmp_path):
    out = tmp_path / "interrupted.jsonl"
    with engine("--slots", "2", "--step-ms", "5") as eng:
        proc = _recorder(eng.url, out, "-c", "2", "--requests", "200", "--output-tokens", "32",
                         "--grace", "10")  # fmt: skip
        _wait_for_requests(out, 4, proc)
        proc.send_signal(signal.SIGINT)
        stdout, _ = proc.communicate(timeout=30)
    assert proc.returncode == 130
    records = read_trace(out)
    assert [r["kind"] for r in records if r["kind"] in ("run", "run_end")] == ["run", "run_end"]
    end = records[-1]
    assert end["kind"] == "run_end"
    assert (end["interrupted"], end["reason"]) == (True, "interrupted (SIGINT)")
    requests = [r for r in records if r["kind"] == "request"]
    # nothing cut: the two in flight at the signal finished within the grace period
    assert end["requests_sent"] == end["requests_finished"] == len(requests) < 200
    assert {(r["output_tokens"], r["finish_reason"]) for r in requests} == {(32, "length")}
    assert b"interrupted" in stdout
    verdict = api.audit([out]).to_dict()
    assert verdict["runs"][0]["requests"] == len(requests)


def test_ctrl_c_after_the_grace_period_records_the_cut_requests(engine, tmp_path):
    out = tmp_path / "cut.jsonl"
    with engine("--slots", "2", "--step-ms", "40") as eng:  # 32 tokens take 1.3 s
        proc = _recorder(eng.url, out, "-c", "2", "--requests", "20", "--output-tokens", "32",
                         "--grace", "0.2")  # fmt: skip
        _wait_for_requests(out, 2, proc)
        time.sleep(0.3)  # the next two are in flight, partway
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)
    assert proc.returncode == 130
    records = read_trace(out)
    requests = [r for r in records if r["kind"] == "request"]
    cut = [r for r in requests if r["finish_reason"] == "abort"]
    assert len(cut) == 2
    for r in cut:
        assert r["error"].startswith("cancelled by the recorder (interrupted (SIGINT)) after ")
        assert 0 < r["output_tokens"] < 32
        assert r["output_tokens_source"] == "chunks"
    end = records[-1]
    assert end["interrupted"] is True
    assert end["requests_finished"] == len(requests) == 4


def test_ctrl_c_before_the_first_run_writes_nothing(engine, tmp_path):
    out = tmp_path / "none.jsonl"
    with engine("--slots", "1", "--step-ms", "3000") as eng:  # the first request takes 24 s
        proc = _recorder(eng.url, out, "-c", "1")
        deadline = time.monotonic() + 30
        while not any(" received: " in line for line in eng.log_lines()):
            if time.monotonic() > deadline:
                pytest.fail("the recorder never reached the server")
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=20)
    assert proc.returncode == 2
    assert stderr.decode() == "interrupted (SIGINT) before the first run; no trace written\n"
    assert not out.exists()
