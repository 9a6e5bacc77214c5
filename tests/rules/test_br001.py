"""BR001 summed-self-reported-rates: the sum a reader would publish for a run with no claim."""

from __future__ import annotations

import json
from pathlib import Path

from reporter import api
from tests.conftest import finding


def _closed_loop(path: Path, n: int, requests: int, prefill: float = 0.1) -> Path:
    """N streams, each sending its next request when its last ended: 1 s of decode for 100
    tokens (100 tok/s reported), `prefill` s before the first token."""
    lines: list[dict[str, object]] = [
        {"kind": "run", "schema": "benchreport/1", "id": f"c{n}", "group": "g",
         "workload": {"concurrency": n, "output_tokens": 100, "stop": "forced"}},
    ]  # fmt: skip
    for stream in range(n):
        t = 0.0
        for i in range(requests // n):
            lines.append({"kind": "request", "run": f"c{n}", "id": f"{stream}-{i}",
                          "t_send": t, "t_first": t + prefill, "t_end": t + prefill + 1.0,
                          "output_tokens": 100, "reported_tps": 100.0})  # fmt: skip
            t += prefill + 1.0
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def test_one_stream_is_its_mean_rate_not_the_sum_of_its_requests(tmp_path: Path) -> None:
    # 50 requests one after another: nobody publishes 50 × 100 tok/s for one stream; the
    # figure a reader quotes is the stream's own rate, 100 tok/s against 95.2 honest
    trace = _closed_loop(tmp_path / "c1.jsonl", 1, 50, prefill=0.05)
    verdict = api.audit([trace], select=["BR001"])
    f = finding(verdict, "BR001", "c1")
    assert f["outcome"] == "passed"
    assert f["message"] == (
        "one stream, one request at a time: its mean reported rate (100.0) agrees with total "
        "÷ wall (95.2 tok/s)"
    )
    assert "overlapped" not in f["message"]
    assert f["arithmetic"][0] == "N × mean reported_tps = 1 × 100.0 = 100.0 tok/s"


def test_one_stream_with_a_long_prefill_is_told_by_its_mean_rate(tmp_path: Path) -> None:
    # 1 s to the first token, 1 s of decode: the stream's rate (100) is twice total ÷ wall (50)
    trace = _closed_loop(tmp_path / "c1.jsonl", 1, 20, prefill=1.0)
    f = finding(api.audit([trace], select=["BR001"]), "BR001", "c1")
    assert f["outcome"] == "fired"
    assert f["severity"] == "info"
    assert f["message"] == (
        "quoting the mean per-request rate of its one stream would claim 100.0 tok/s, 2.00× "
        "the honest 50.0 tok/s"
    )


def test_n_streams_are_n_times_the_mean(tmp_path: Path) -> None:
    f = finding(
        api.audit([_closed_loop(tmp_path / "c4.jsonl", 4, 40)], select=["BR001"]), "BR001", "c4"
    )
    assert f["outcome"] == "passed"
    assert f["arithmetic"][0] == "N × mean reported_tps = 4 × 100.0 = 400.0 tok/s"
    assert f["message"].endswith("the requests overlapped")
