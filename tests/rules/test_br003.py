"""BR003 on a summary: the decode bound that holds whatever each request's output length."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from reporter import api
from tests.conftest import finding

# er0080's vLLM 0.25.1 run (speculative decoding, max_concurrency 2), as the tool wrote it:
# 8 requests of unequal length, no per-request lists
SUMMARY = {
    "date": "20260823-012450", "endpoint_type": "vllm", "backend": "vllm", "label": None,
    "model_id": "Qwen/Qwen3.8-27B-FP8", "num_prompts": 8, "request_rate": "inf",
    "burstiness": 1.0, "max_concurrency": 2, "duration": 32.5748378210119, "completed": 8,
    "failed": 0, "total_input_tokens": 2502, "total_output_tokens": 3983,
    "request_throughput": 0.24558832937119715, "output_throughput": 122.27228948568478,
    "mean_ttft_ms": 620.0381202470453, "median_ttft_ms": 425.2609429968288,
    "std_ttft_ms": 366.4402488641594, "p99_ttft_ms": 1469.555396421929,
    "mean_tpot_ms": 14.466563369200312, "median_tpot_ms": 14.416801156354207,
    "std_tpot_ms": 1.0333685474589036, "p99_tpot_ms": 16.367859358147722,
    "mean_itl_ms": 45.7047650738137, "median_itl_ms": 44.10335549619049,
    "std_itl_ms": 23.44601707351302, "p99_itl_ms": 50.72569683106849,
}  # fmt: skip
#: SUMMARY with every request failed: vLLM then writes 0 for every time statistic, and
#: total_input_tokens 0 (it counts the prompts of completed requests only).
ALL_FAILED = SUMMARY | {k: 0.0 for k in SUMMARY if k.endswith("_ms")} | {
    "completed": 0, "failed": 8, "total_input_tokens": 0, "total_output_tokens": 0,
    "output_throughput": 0.0, "duration": 0.005, "max_concurrent_requests": 0,
}  # fmt: skip


def _audit(tmp_path: Path, **changes: object) -> dict[str, object]:
    path = tmp_path / "result.json"
    path.write_text(json.dumps(SUMMARY | changes))
    return finding(api.audit([path]).to_dict(), "BR003", "vllm:infqps:c2")


def test_the_spread_of_tpot_bounds_the_decode_time_whatever_the_lengths(tmp_path):
    # every TPOT ≥ 14.4666 − 1.0334 × √7 = 11.7325 ms; 8 × (497.875 − 1) × 11.7325 ms =
    # 46.64 s of decode in a 32.57 s wall: 1.43 at once at the least, so not serial
    f = _audit(tmp_path)
    assert f["outcome"] == "passed"
    assert f["numbers"]["decode_concurrency_exact"] is True
    assert f["numbers"]["decode_concurrency"] == pytest.approx(1.432, abs=0.001)
    assert f["message"] == (
        "not serial: at least 2 requests decoding at once (Σ decode ÷ wall = 1.43, from "
        "completed × (len − 1) × the lowest TPOT possible; a lower bound, the file has no "
        "per-request times)"
    )
    floor = 14.466563369200312 - 1.0333685474589036 * math.sqrt(7)
    assert f["arithmetic"][0] == (
        f"every TPOT ≥ mean − std × √(completed − 1) = 0.01447 − 0.00103 × √7 = "
        f"{floor / 1000:.5f} s (no one of 8 values lies further from their mean)"
    )


def test_without_the_spread_the_estimate_decides_nothing(tmp_path):
    # no std_tpot: only the approximation (1.77), which unequal lengths could make wrong
    f = _audit(tmp_path, std_tpot_ms=None)
    assert f["outcome"] == "undecidable"
    assert f["numbers"]["decode_concurrency_exact"] is False
    assert f["arithmetic"][0].endswith("(output lengths not known to be equal: an approximation)")
    assert (
        "1.77 (completed × (len − 1) × mean TPOT) is an approximation (output lengths may "
        "differ) too near one at a time to prove either"
    ) in f["message"]


def test_a_negative_spread_is_refused_not_made_a_bound(tmp_path):
    # a standard deviation below zero would lift the TPOT floor above the mean (2.09 at once
    # instead of 1.43): impossible data, refused like any other summary figure below zero.
    # vLLM's own reader refuses "std_tpot_ms" -1; a native trace carries the figure as it is
    from click.testing import CliRunner

    from reporter.cli import main
    from reporter.errors import TraceError

    source = tmp_path / "result.json"
    source.write_text(json.dumps(SUMMARY))
    native = tmp_path / "native.jsonl"
    assert CliRunner().invoke(main, ["convert", str(source), "--to", str(native)]).exit_code == 0
    record = json.loads(native.read_text())
    record["summary"]["std_tpot_s"] = -0.001
    native.write_text(json.dumps(record) + "\n")
    with pytest.raises(TraceError) as err:
        api.audit([native])
    assert str(err.value) == (
        f"{native}:1: run 'vllm:infqps:c2': summary figure std_tpot_s is -0.001; expected a "
        "number ≥ 0"
    )
