"""Claims published next to the real files (SOURCES.md, round 2), judged through the CLI."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner

from reporter.cli import main
from tests.adapters.conftest import REAL

LHL_HIP = "llama-bench/lhl-8060s-rocm-llama32-1b-default-hip-depth-sweep.jsonl"


@pytest.fixture
def real() -> Any:
    """`real("vllm/x.json")` → the path of a real file; skips when the folder is absent."""
    if not REAL.is_dir():
        pytest.skip("../shared/real-traces is absent")
    return lambda name: REAL / name


def claims_of(*args: Any) -> dict[str, dict[str, Any]]:
    result = CliRunner().invoke(
        main, ["audit", "--json", "-", "--fail-on", "never", *map(str, args)]
    )
    assert result.exit_code == 0, result.output
    return {c["id"]: c for c in json.loads(result.stdout)["claims"]}


def test_a_prompt_processing_claim_is_checked_against_prompt_tokens(real: Any) -> None:
    # README line 52: pp512 4703.28 t/s; the file: 512 prompt tokens in 108,860,084 ns.
    claim = claims_of(real(LHL_HIP), "--claim", "aggregate=4703.28 tok/s N=1 run=pp512")["cli-1"]
    assert claim["verdict"] == "supported"
    assert claim["recomputed"] == pytest.approx(4703.28, abs=0.01)
    assert claim["arithmetic"][0].startswith("run pp512 (prompt processing): 512 prompt tokens ÷")


def test_a_generation_claim_on_the_same_file(real: Any) -> None:
    # README line 62: tg128 195.65 t/s.
    claim = claims_of(real(LHL_HIP), "--claim", "aggregate=195.65 tok/s N=1 run=tg128")["cli-1"]
    assert claim["verdict"] == "supported"
    assert claim["recomputed"] == pytest.approx(195.65, abs=0.01)


def test_a_speedup_across_prompt_and_generation_tests_is_not_computed(real: Any) -> None:
    claim = claims_of(real(LHL_HIP), "--claim", "speedup=24 runs=pp512,tg128")["cli-1"]
    assert claim["verdict"] == "insufficient-data"
    assert claim["recomputed"] is None
    assert "prompt-processing test and the other a generation test" in claim["reason"]
