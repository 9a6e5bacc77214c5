"""Streams spread over worker processes record what one loop records, on the recorder's clock."""

from __future__ import annotations

import asyncio
import signal
import time

import pytest

from reporter.recorder.health import HealthMonitor
from reporter.recorder.workers import WorkerPool, one_clock
from tests.conftest import finding, run_of
from tests.recorder.test_record_refengine import only, requests_of
from tests.recorder.test_record_signals import _recorder, _wait_for_requests

SAME = ("id", "output_tokens", "output_tokens_source", "finish_reason", "n_chunks", "error",
        "prompt_tokens", "prompt_sha256")  # fmt: skip


def test_with_workers_each_lag_figure_is_the_worst_loops():
    # an idle loop's samples must not dilute a busy one's: p50, p99 and max are the worst loop's
    monitor = HealthMonitor()
    monitor.lags = [0.0001] * 1000  # the recorder's own loop: 0.1 ms
    monitor._t0, monitor._t1, monitor._cpu0, monitor._cpu1 = 0.0, 10.0, 0.0, 0.5
    busy = [0.002] * 900 + [0.02] * 100  # a worker: 2 ms, its top 10% 20 ms
    quiet = [0.0003] * 1000
    health = monitor.result([(busy, 3.0), (quiet, 1.0)])
    assert health.loop_lag_p50_ms == pytest.approx(2.0)
    assert health.loop_lag_p99_ms == pytest.approx(20.0)
    assert health.loop_lag_max_ms == pytest.approx(20.0)
    assert health.cpu_percent == pytest.approx(30.0)  # the busiest process: 3 s of 10
    assert health.cpu_percent_total == pytest.approx(45.0)
    record = health.to_record()
    assert (record["processes"], record["lag_samples"]) == (3, 3000)
    alone = monitor.result()
    assert alone.loop_lag_p99_ms == pytest.approx(0.1) and "processes" not in alone.to_record()


@pytest.mark.slow
def test_a_workers_clock_is_the_recorders():
    # perf_counter is CLOCK_MONOTONIC here: a worker's reading falls between two of ours
    assert one_clock()

    async def read() -> tuple[float, list[float], float]:
        pool = WorkerPool(2, connect_timeout_s=5, idle_timeout_s=5)
        await pool.start()
        try:
            before = time.perf_counter()
            theirs = await pool.clocks()
            return before, theirs, time.perf_counter()
        finally:
            await pool.aclose()

    before, theirs, after = asyncio.run(read())
    assert len(theirs) == 2
    assert all(before <= t <= after for t in theirs), (before, theirs, after)


@pytest.mark.slow
def test_workers_record_what_one_loop_records(engine, rec):
    with engine("--slots", "8", "--step-ms", "3") as eng:
        _, one, _ = rec(eng.url, concurrency=(8,), requests=16, salt="s")
        _, three, v = rec(eng.url, concurrency=(8,), requests=16, salt="s", workers=3)
    run = "g-c8-r0"
    a = sorted(requests_of(one, run), key=lambda r: r["id"])
    b = sorted(requests_of(three, run), key=lambda r: r["id"])
    assert [{k: r[k] for k in SAME} for r in a] == [{k: r[k] for k in SAME} for r in b]
    assert {(r["output_tokens"], r["finish_reason"]) for r in b} == {(32, "length")}
    for r in b:  # every time on the run's clock: sent, then first chunk, then the end
        assert 0 <= r["t_send"] < r["t_first"] <= r["token_times"][-1] <= r["t_end"]
        assert r["token_times"] == sorted(r["token_times"])
    end = only(three, "run_end", run)
    assert end["metrics_delta"]["generation_tokens"] == 16 * 32
    client = end["client"]
    assert client["processes"] == 4  # the recorder's loop and three workers'
    assert client["cpu_percent_total"] >= client["cpu_percent"] >= 0
    assert client["lag_samples"] > 0
    assert "processes" not in only(one, "run_end", run)["client"]
    br018 = finding(v, "BR018", run)
    assert br018["numbers"]["loop_lag_p99_ms"] == pytest.approx(client["loop_lag_p99_ms"])
    assert run_of(v, run)["output_tokens"] == 16 * 32


@pytest.mark.slow
def test_workers_record_mid_stream_errors_and_cut_streams(engine, rec):
    with engine("--slots", "4", "--step-ms", "3", "--error-every", "2") as eng:
        _, trace, v = rec(eng.url, concurrency=(4,), workers=2)
    failed = [r for r in requests_of(trace, "g-c4-r0") if r["finish_reason"] == "error"]
    assert len(failed) == 2
    assert all(r["error"].startswith("error event after 16 chunks") for r in failed)
    assert finding(v, "BR019", "g-c4-r0")["outcome"] == "fired"


@pytest.mark.slow
def test_ctrl_c_cancels_the_workers_requests_and_keeps_what_arrived(engine, tmp_path):
    out = tmp_path / "cut.jsonl"
    with engine("--slots", "2", "--step-ms", "40") as eng:  # 32 tokens take 1.3 s
        proc = _recorder(eng.url, out, "-c", "2", "--requests", "20", "--output-tokens", "32",
                         "--grace", "0.2", "--workers", "2")  # fmt: skip
        _wait_for_requests(out, 2, proc)
        time.sleep(0.3)  # the next two are in flight, partway
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)
    assert proc.returncode == 130
    from tests.recorder.conftest import read_trace

    records = read_trace(out)
    cut = [r for r in records if r["kind"] == "request" and r["finish_reason"] == "abort"]
    assert len(cut) == 2
    for r in cut:
        assert r["error"].startswith("cancelled by the recorder (interrupted (SIGINT)) after ")
        assert 0 < r["output_tokens"] < 32 and r["output_tokens"] == len(r["token_times"])
    assert records[-1]["kind"] == "run_end" and records[-1]["requests_finished"] == 4


def test_workers_need_the_lean_client(tmp_path):
    from reporter.errors import UsageError
    from reporter.recorder import record
    from tests.recorder.conftest import base_config

    cfg = base_config("http://127.0.0.1:9", tmp_path / "t.jsonl", client="httpx", workers=2)
    with pytest.raises(UsageError, match="lean client only"):
        record(cfg)
    assert not (tmp_path / "t.jsonl").exists()
