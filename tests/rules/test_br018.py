"""BR018 client-bound: the recorder's own loop lag and CPU."""

from __future__ import annotations

from reporter import api
from tests.conftest import FIXTURES, finding


def test_loop_lag_fires():
    v = api.audit([FIXTURES / "BR018" / "fires_loop_lag.jsonl"], select=["BR018"])
    f = finding(v, "BR018", "lag-n64")
    assert f["outcome"] == "fired"
    assert f["numbers"]["loop_lag_p99_ms"] == 38.0
    assert f["message"] == (
        "the recording client was a bottleneck: its event loop lagged 38.0 ms at the 99th "
        "percentile, 3.0× the 12.5 ms between tokens; its timestamps and send times are late "
        "by as much"
    )


def test_cpu_fires():
    v = api.audit([FIXTURES / "BR018" / "fires_client_cpu.jsonl"], select=["BR018"])
    f = finding(v, "BR018", "cpu-n8")
    assert f["outcome"] == "fired"
    assert "it used 97% of a core" in f["message"]


def test_healthy_client_passes():
    v = api.audit([FIXTURES / "BR018" / "passes_healthy_client.jsonl"], select=["BR018"])
    f = finding(v, "BR018", "ok-n8")
    assert f["outcome"] == "passed"
    assert f["message"] == (
        "the client kept up: event-loop lag p99 0.8 ms (limit 10 ms), max "
        "1.9 ms; client CPU 14% of one core (limit 90%)"
    )


def test_another_tools_trace_is_undecidable():
    v = api.audit([FIXTURES / "BR018" / "undecidable_other_tool.jsonl"], select=["BR018"])
    f = finding(v, "BR018", "vb-n8")
    assert f["outcome"] == "undecidable"
    assert f["message"] == (
        "the recording client's health was not recorded (trace from vllm "
        "bench serve; no run_end.client)"
    )


def test_lag_of_an_idle_client_is_not_called_its_bottleneck():
    # 14 ms of lag at 4% of a core: something outside the client held its loop (a loaded
    # machine). The timestamps are late all the same, so it fires, but it must not blame the
    # client's own work.
    v = api.audit([FIXTURES / "BR018" / "fires_late_idle_client.jsonl"], select=["BR018"])
    f = finding(v, "BR018", "late-n1")
    assert f["outcome"] == "fired"
    assert f["numbers"]["cpu_percent"] == 4.0
    assert f["message"] == (
        "the recording client ran late: its event loop lagged 14.0 ms at the 99th percentile, "
        "1.1× the 12.5 ms between tokens, while it used only 4% of a core, so the delay came "
        "from outside its own work (other processes on the machine, or a blocking call); its "
        "timestamps and send times are late by as much"
    )
    assert "bottleneck" not in f["message"]
    assert "pin the client" in f["help"]
