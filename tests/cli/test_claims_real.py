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


BOWENWAN6_C16 = "sglang/bowenwan6-benchserving-vllm-backend-c16-repeats"
DATABLOOM = "aiperf/databloom-aiperf-llama32-3b-gguf-c1-dualhost-half-timeouts-profile_export.jsonl"
BEDROCK = "llmperf/leaderboard-bedrock_70b_individual_responses.json"
BEDROCK_SUMMARY = "llmperf/leaderboard-bedrock_70b_summary.json"
RSEVILLA = "guidellm/rsevilla87-guidellm-qwen3-06b-constant-10rps.json"
YANGLIGT2 = "vllm/yangligt2-llama4scout-fp8-2node-maxconc-sweep"


def test_the_median_of_three_repeats_in_three_files_supports_2163(real: Any) -> None:
    # summary.md line 47: vLLM 2163.3 = median of 2,163.3 / 2,181.7 / 2,161.6.
    files = sorted(real(BOWENWAN6_C16).glob("*.json"))
    claim = claims_of(*files, "--claim", "aggregate=2163.3 tok/s N=16")["cli-1"]
    assert claim["verdict"] == "supported"
    assert claim["recomputed"] == pytest.approx(2163.3, abs=0.05)
    assert len(claim["runs"]) == 3
    # the three files share every setting they record: one group at N=16. They are three
    # repeats (rep1..rep3 in the repository), but the files name no server (server_info
    # null, `backend` is the client's request function): repeats as far as they record
    assert claim["arithmetic"][-1] == "median of 3 runs the files record alike = 2,163.3 tok/s"


def test_runs_in_several_files_whose_figures_differ_are_not_pooled(real: Any) -> None:
    # The two c256 files are two server configurations (3,861 vs 3,009 tok/s), not repeats.
    files = sorted(real(YANGLIGT2).glob("c256-*.json"))
    claim = claims_of(*files, "--claim", "aggregate=3861 tok/s N=256")["cli-1"]
    assert claim["verdict"] == "insufficient-data"
    assert "whose figures differ; name one with run= or group=" in claim["reason"]


def test_a_claim_reproducing_aiperfs_window_is_not_called_inflated(real: Any) -> None:
    # RESULTS.md line 11: 0.58 tok/s; 110 tokens ÷ 191.26 s to the last successful end = 0.575,
    # over the whole run (the last request timed out at 211.64 s) 0.52.
    claim = claims_of(real(DATABLOOM), "--claim", "aggregate=0.58 tok/s N=1")["cli-1"]
    assert claim["verdict"] == "supported"
    assert claim["recomputed"] == pytest.approx(110 / 211.64, abs=1e-3)
    assert claim["factor"] == pytest.approx(0.58 / 0.5198, abs=0.005)
    assert (
        "110 tokens ÷ 191.26 s (first start → last successful end) = 0.575 tok/s"
        in (claim["reason"])
    )
    assert "over the whole run (211.64 s) it is 0.52 tok/s" in claim["reason"]


def test_a_claim_above_both_windows_stays_inflated(real: Any) -> None:
    claim = claims_of(real(DATABLOOM), "--claim", "aggregate=0.8 tok/s")["cli-1"]
    assert claim["verdict"] == "inflated"


@pytest.mark.parametrize(
    "files, per_request",
    [
        ([BEDROCK], "median 21.4, mean 21.1 over 101 completed requests"),
        ([BEDROCK_SUMMARY], "mean 21.1 per request, from the file's summary"),
        ([BEDROCK, BEDROCK_SUMMARY], "median 21.4, mean 21.1 over 101 completed requests"),
    ],
)
def test_a_per_request_rate_is_not_supported_as_an_aggregate(
    real: Any, files: list[str], per_request: str
) -> None:
    # Leaderboard README line 57: 21 tok/s; the run's aggregate is 15,125 ÷ 240.59 s = 62.9.
    claim = claims_of(*map(real, files), "--claim", "aggregate=21 tok/s")["cli-1"]
    assert claim["verdict"] == "incomparable"
    assert claim["recomputed"] == pytest.approx(62.87, abs=0.01)
    assert claim["reason"].startswith(f"21 tok/s is a per-request rate ({per_request}")
    assert claim["reason"].endswith("the run's aggregate is 62.9 tok/s at 5 concurrent")


def test_a_claim_far_below_that_is_no_per_request_rate_is_understated(real: Any) -> None:
    result = CliRunner().invoke(
        main,
        [
            "audit",
            "--json",
            "-",
            "--fail-on",
            "never",
            str(real(BEDROCK)),
            "--claim",
            "aggregate=40",
        ],
    )
    verdict = json.loads(result.stdout)
    claim = verdict["claims"][0]
    assert claim["verdict"] == "understated"
    assert (
        claim["reason"]
        == "claimed 40.0 is 0.64× the recomputed 62.9: below what the trace measures"
    )
    # the run itself is supported: its summary bounds Σ decode ÷ wall at 2.79 (> 1), so
    # requests overlapped; the claim's verdict is the headline
    assert verdict["runs"][0]["verdict"] == "supported"
    assert verdict["verdict"] == "understated"


def test_guidellm_output_tokens_per_second_mean_is_supported(real: Any) -> None:
    # parsed_results.json line 27: 1251.54; 75,008 tokens ÷ 60.01 s = 1,249.9.
    claim = claims_of(real(RSEVILLA), "--claim", "aggregate=1251.54 tok/s")["cli-1"]
    assert claim["verdict"] == "supported"
    assert claim["recomputed"] == pytest.approx(1249.9, abs=0.05)


def test_a_scaling_claim_never_divides_a_run_by_itself(real: Any) -> None:
    # SOURCES.md: the four 2025-10-22 files are one sweep, scaling 6.91× (c64) over c4. At the
    # sweep's lowest N there is nothing to scale from (c4 ÷ c4 = 1.00× called 2× "inflated").
    files = sorted(real(YANGLIGT2).glob("c*-20251022-*.json"))
    claims = claims_of(
        *files,
        "--claim",
        "scaling=6.91x N=64",
        "--claim",
        "speedup=6.91 runs=vllm:infqps:c64,vllm:infqps:c4",
        "--claim",
        "scaling=2x N=4",
    )
    for claim in ("cli-1", "cli-2"):
        assert claims[claim]["verdict"] == "supported"
        assert claims[claim]["recomputed"] == pytest.approx(6.91, abs=0.005)
    assert claims["cli-3"]["verdict"] == "insufficient-data"
    assert "is the lowest N of its sweep" in claims["cli-3"]["reason"]
    assert "no lower-N run to scale from" in claims["cli-3"]["reason"]


def test_stream_claims_on_llama_bench_tests(real: Any) -> None:
    claims = claims_of(
        real(LHL_HIP),
        "--claim",
        "stream=195.65 tok/s run=tg128",
        "--claim",
        "stream=4703.28 tok/s run=pp512",
    )
    assert claims["cli-1"]["verdict"] == "supported"
    assert claims["cli-1"]["recomputed"] == pytest.approx(195.65, abs=0.01)
    assert claims["cli-2"]["verdict"] == "insufficient-data"
    assert claims["cli-2"]["reason"] == (
        "run pp512 is a prompt-processing test: it decodes nothing, so it has no stream rate "
        "(its prompt rate is checked with aggregate=)"
    )


def test_small_rates_keep_two_significant_figures_in_the_summary(real: Any, tmp_path: Any) -> None:
    md = tmp_path / "summary.md"
    result = CliRunner().invoke(
        main,
        [
            "audit",
            str(real(DATABLOOM)),
            "--claim",
            "aggregate=0.58",
            "--md",
            str(md),
            "--fail-on",
            "never",
        ],
    )
    assert result.exit_code == 0, result.output
    text = md.read_text(encoding="utf-8")
    assert "**110 tokens ÷ 211.64 s = 0.52 tok/s; claimed 0.58 = 1.12×**" in text
    assert "| cli-1 | aggregate tok/s | 0.58 | 0.52 | 1.12× | **supported** |" in text
