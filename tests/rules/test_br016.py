"""BR016 single-run: runs whose load the files do not state are not called repeats."""

from __future__ import annotations

from pathlib import Path

from reporter import api


def _aiperf_csv(duration: float, tokens: int = 24723, requests: int = 100) -> str:
    """An AIPerf summary CSV (profile_export_aiperf.csv), which records no concurrency: the
    shape of a c1 and a c2 run written to folders named c1/ and c2/."""
    return (
        "Metric,avg,min,max,sum,p1,p5,p10,p25,p50,p75,p90,p95,p99,std\n"
        f"Request Latency (ms),27572.77,3386.96,65396.94,{27572.77 * requests:.2f},"
        "1,1,1,1,27561.93,1,1,1,1,1\n"
        f"Time to First Token (ms),10970.88,538.55,32093.94,{10970.88 * requests:.2f},"
        "1,1,1,1,10847.18,1,1,1,1,1\n"
        f"Output Sequence Length (tokens),{tokens / requests:.2f},10.00,740.00,{tokens:.2f},"
        "1,1,1,1,238.50,1,1,1,1,1\n"
        "\nMetric,Value\n"
        f"Benchmark Duration (sec),{duration}\n"
        f"Output Token Throughput (tokens/sec),{tokens / duration:.2f}\n"
        f"Request Count,{requests:.2f}\n"
        f"Total Output Tokens (tokens),{tokens:.2f}\n"
    )


def _two_runs_of_unstated_load(tmp_path: Path) -> list[Path]:
    paths = []
    for folder, duration in (("c1", 2757.64), ("c2", 3132.16)):
        (tmp_path / folder).mkdir()
        path = tmp_path / folder / "profile_export_aiperf.csv"
        path.write_text(_aiperf_csv(duration))
        paths.append(path)
    return paths


def test_runs_whose_load_is_not_stated_are_not_called_repeats(tmp_path: Path) -> None:
    # the same 100 requests at one and at two concurrent (8.97 and 7.89 tok/s): the files
    # state no concurrency, so nothing in them says the two runs repeat one point
    verdict = api.audit(_two_runs_of_unstated_load(tmp_path), select=["BR016"])
    (f,) = [f for f in verdict.findings if f.code == "BR016"]
    assert f.outcome == "undecidable"
    assert f.message.startswith(
        "2 runs record no load (no concurrency or request rate): whether they repeat one point "
        "or are points of a sweep the files do not say"
    )


def test_a_claim_at_an_unstated_load_does_not_call_the_runs_repeats(tmp_path: Path) -> None:
    verdict = api.audit(
        _two_runs_of_unstated_load(tmp_path), claim_texts=["aggregate=7.89 tok/s N=2"]
    )
    (claim,) = verdict.claims
    assert claim.check.arithmetic[0] == (
        "the trace does not state N; the claim's N=2 is taken as said"
    )
    assert claim.check.arithmetic[-1] == "median of 2 runs the files record alike = 8.43 tok/s"


def _vllm_result(date: str, duration: float) -> dict[str, object]:
    """A `benchmark_serving.py --save-result` summary of 50 prompts of 1,000 → 2,000 tokens
    at 10 req/s. The client writes its own request function as `backend` ("vllm" for any
    OpenAI-style server): the file names no serving engine and no hardware."""
    return {
        "date": date, "backend": "vllm", "model_id": "m", "tokenizer_id": "m",
        "num_prompts": 50, "request_rate": 10.0, "burstiness": 1.0, "max_concurrency": None,
        "duration": duration, "completed": 50, "total_input_tokens": 50000,
        "total_output_tokens": 100000, "output_throughput": 100000 / duration,
        "mean_ttft_ms": 40.9, "median_ttft_ms": 37.3, "mean_tpot_ms": 8.98,
        "median_tpot_ms": 9.02,
    }  # fmt: skip


def test_runs_of_files_that_name_no_engine_are_repeats_only_as_far_as_the_files_record(
    tmp_path: Path,
) -> None:
    # one engine's server and then another's, measured by one client with one command
    # (4,528.5 and 4,031.5 tok/s): the files name neither engine, so they cannot tell these
    # runs from repeats of one setting, and must not say more than that
    import json

    (tmp_path / "vllm-1000-2000.json").write_text(
        json.dumps(_vllm_result("20250330-032458", 22.08213796513155))
    )
    (tmp_path / "sgl-1000-2000.json").write_text(
        json.dumps(_vllm_result("20250330-050240", 24.80478795710951))
    )
    verdict = api.audit(
        [tmp_path / "vllm-1000-2000.json", tmp_path / "sgl-1000-2000.json"],
        select=["BR012", "BR016"],
    )
    by_code = {f.code: f for f in verdict.findings}
    assert by_code["BR012"].outcome == "passed"
    assert by_code["BR012"].message == (
        "both runs share every setting the files record (they record no engine or "
        "hardware): they differ only in N or repeat"
    )
    assert by_code["BR016"].outcome == "passed"
    assert by_code["BR016"].message == (
        "repeated, as far as the files record (they record no engine or hardware): the "
        "largest spread between repeats is 12.3%"
    )


def test_a_claim_over_runs_of_files_that_name_no_engine_does_not_call_them_repeats(
    tmp_path: Path,
) -> None:
    import json

    paths = []
    for name, date, duration in (
        ("vllm-1000-2000.json", "20250330-032458", 22.08213796513155),
        ("sgl-1000-2000.json", "20250330-050240", 24.80478795710951),
    ):
        (tmp_path / name).write_text(json.dumps(_vllm_result(date, duration)))
        paths.append(tmp_path / name)
    verdict = api.audit(paths, claim_texts=["aggregate=4528.55 tok/s"])
    (claim,) = verdict.claims
    assert claim.check.arithmetic[-1] == "median of 2 runs the files record alike = 4,280.0 tok/s"
