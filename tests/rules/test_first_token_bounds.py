"""The first-token windows bound prompt processing (BR008) and show where a long wall went (BR009).

Every prompt is read after its request is sent and before its first token, so prefill fits in
the union of the [send, first token] windows, or in Σ TTFT without send times.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reporter import api


def _trace(tmp_path: Path, requests: list[dict[str, Any]], **workload: Any) -> Path:
    run = {
        "kind": "run",
        "schema": "benchreport/1",
        "id": "r",
        "workload": {"concurrency": 4, "stop": "forced", "ignore_eos": True, **workload},
    }
    lines = [run] + [
        {"kind": "request", "run": "r", "id": i, "output_tokens": 128, **r}
        for i, r in enumerate(requests)
    ]
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _finding(path: Path, code: str) -> dict[str, Any]:
    (finding,) = [f for f in api.audit([str(path)]).to_dict()["findings"] if f["code"] == code]
    return finding


def test_union_of_windows_passes_a_run_without_prefill_rate(tmp_path: Path) -> None:
    # windows [0, 0.2] and [0.1, 0.3] overlap: union 0.3 s; [2, 2.1] adds 0.1 s → 0.4 s of 4 s
    path = _trace(
        tmp_path,
        [
            {"t_send": 0, "t_first": 0.2, "t_end": 2.0},
            {"t_send": 0.1, "t_first": 0.3, "t_end": 2.0},
            {"t_send": 2.0, "t_first": 2.1, "t_end": 4.0},
        ],
    )
    finding = _finding(path, "BR008")
    assert finding["outcome"] == "passed"
    assert finding["numbers"]["prefill_window_s"] == pytest.approx(0.4)
    assert finding["numbers"]["prefill_window_share"] == pytest.approx(0.1)
    assert finding["message"].startswith("prompt processing took at most 10% of the wall clock")
    assert "union of those windows is 0.40 s of the 4.00 s wall = 10%" in finding["arithmetic"][0]


def test_a_failed_request_without_first_token_holds_its_window_to_its_end(
    tmp_path: Path,
) -> None:
    # the failed request may have been prefilled any time before its end: [0, 3] of a 4 s wall
    path = _trace(
        tmp_path,
        [
            {"t_send": 0, "t_first": 0.1, "t_end": 4.0},
            {"t_send": 0, "t_end": 3.0, "output_tokens": 0, "error": "boom", "ok": False},
        ],
    )
    finding = _finding(path, "BR008")
    assert finding["outcome"] == "undecidable"
    assert finding["numbers"]["prefill_window_share"] == pytest.approx(0.75)
    assert "holds queueing as well as prefill" in finding["message"]


def test_bound_overrides_a_serial_estimate_that_would_fire(tmp_path: Path) -> None:
    # a probe says 100 tok/s: 4 × 100 prompt tokens ÷ 100 = 4 s "serial" prefill of a 5 s wall
    # (80%), but every first token came within 0.5 s: the server read them together
    path = _trace(
        tmp_path,
        [{"t_send": 0, "t_first": 0.5, "t_end": 5.0, "prompt_tokens": 100} for _ in range(4)],
    )
    text = path.read_text(encoding="utf-8")
    probe = {"kind": "probe", "run": "r", "what": "prefill_rate", "value": 100.0}
    path.write_text(text + json.dumps(probe) + "\n", encoding="utf-8")
    finding = _finding(path, "BR008")
    assert finding["numbers"]["prefill_share"] == pytest.approx(0.8)
    assert finding["outcome"] == "passed"
    assert "at most 10% of the wall clock" in finding["message"]
    assert "assumes prompts read one after another" in finding["message"]


def test_summary_bounds_prefill_by_sum_of_ttft(tmp_path: Path) -> None:
    # a vLLM summary: Σ TTFT = 10 completed × 50 ms = 0.5 s of a 10 s duration
    record = {
        "backend": "vllm",
        "model_id": "m",
        "num_prompts": 10,
        "request_rate": "inf",
        "max_concurrency": 10,
        "duration": 10.0,
        "completed": 10,
        "total_input_tokens": 1000,
        "total_output_tokens": 1010,
        "mean_ttft_ms": 50.0,
        "mean_tpot_ms": 20.0,
        "output_throughput": 101.0,
    }
    path = tmp_path / "r.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    finding = _finding(path, "BR008")
    assert finding["outcome"] == "passed", finding
    assert finding["numbers"]["prefill_window_s"] == pytest.approx(0.5)
    assert (
        "completed × mean TTFT = 10 × 0.0500 s = 0.50 s of the 10.00 s wall = 5%"
        in (finding["arithmetic"][0])
    )
    # a failed request's prefill is not in the mean TTFT: no bound, undecidable
    record.update(num_prompts=11, failed=1)
    path.write_text(json.dumps(record), encoding="utf-8")
    assert _finding(path, "BR008")["outcome"] == "undecidable"


def test_long_wall_says_when_the_last_first_token_came(tmp_path: Path) -> None:
    # served one after another: the last request waits 6 s for its first token
    path = _trace(
        tmp_path,
        [{"t_send": 0, "t_first": 0.1 + 2 * i, "t_end": 2.0 * (i + 1)} for i in range(4)],
    )
    finding = _finding(path, "BR009")
    assert finding["outcome"] == "fired"
    assert finding["numbers"]["last_first_token_s"] == pytest.approx(6.1)
    assert (
        "still waiting for its first token (queue or prefill) 6.10 s into the wall (76%"
        in (finding["message"])
    )
