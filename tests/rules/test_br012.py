"""BR012 incomparable-runs, and the decomposition of a ratio into factors (METHOD §5, §6)."""

from __future__ import annotations

import math

import pytest

from reporter import api
from tests.conftest import FIXTURES, SHARED, TRACES, finding


def test_method_5_stop_mode_times_content():
    """606 ÷ 171 = 3.54 = 2.10 (stop mode) × 1.69 (content), through the forced-prose run."""
    v = api.audit([FIXTURES / "BR012" / "fires_method_stop_and_content.jsonl"]).to_dict()
    f = finding(v, "BR012", "b-3.54x")
    assert f["outcome"] == "fired"
    assert f["numbers"]["differs"] == [
        "stop mode",
        "prompt length",
        "requested output length",
        "content",
    ]
    assert [round(r, 2) for r in f["numbers"]["chain_ratios"]] == [2.10, 1.69]
    assert round(math.prod(f["numbers"]["chain_ratios"]), 2) == 3.54
    assert [s["factors"] for s in f["numbers"]["chain"]] == [
        ["stop mode", "prompt length", "requested output length"],
        ["content"],
    ]
    assert f["message"].endswith(
        "it splits into 2.10× (stop mode, prompt length, requested output length) × 1.69× "
        "(content) = 3.54"
    )
    assert f["arithmetic"][-3:] == [
        "qa-n8 171.2 → prose-n8 359.3 tok/s: 2.10× (stop mode, prompt length, requested "
        "output length)",
        "prose-n8 359.3 → code-n8 606.1 tok/s: 1.69× (content)",
        "2.10 × 1.69 = 3.54 = 606.1 ÷ 171.2",
    ]
    claim = next(c for c in v["claims"] if c["id"] == "b-3.54x")
    assert claim["verdict"] == "incomparable"
    assert round(claim["recomputed"], 2) == 3.54


def test_method_5_from_the_shipped_case_b_traces():
    v = api.audit(
        [TRACES / "case-b-forced.jsonl", TRACES / "case-b-natural-stop.jsonl"], select=["BR012"]
    ).to_dict()
    f = finding(v, "BR012", "audit")
    assert f["outcome"] == "fired"
    assert f["severity"] == "info"
    assert f["arithmetic"][-1] == "2.10 × 1.69 = 3.54 = 606.1 ÷ 171.2"
    assert f["arithmetic"][-2] == (
        "b-prose-spec-on-n8 359.3 → b-code-spec-on-n8 606.1 tok/s: 1.69× (content)"
    )


def test_method_6_engine_speedup_is_bytes_times_bandwidth():
    """2.36× = bytes per token 1.52 × achieved bandwidth 1.56 → 2.37 (METHOD §6)."""
    v = api.audit([FIXTURES / "BR012" / "passes_engine_speedup_bandwidth.jsonl"]).to_dict()
    f = finding(v, "BR012", "2.36x")
    assert f["outcome"] == "passed"
    n = f["numbers"]
    assert round(n["bytes_ratio"], 2) == 1.52
    assert round(n["bandwidth_ratio"], 2) == 1.56
    assert round(n["decode_ratio"], 2) == 2.37
    assert math.isclose(n["bytes_ratio"] * n["bandwidth_ratio"], n["decode_ratio"], rel_tol=1e-4)
    assert f["arithmetic"][-1] == (
        "bytes per token 2.803 ÷ 1.849 = 1.52× × bandwidth 180.9 ÷ 115.6 GB/s = 1.56× → "
        "1.52 × 1.56 = 2.37 = 97.83 ÷ 41.24 tok/s"
    )
    assert f["message"].endswith(
        "the decode rates split into bytes per token 1.52× × achieved bandwidth 1.56× = 2.37"
    )
    claim = next(c for c in v["claims"] if c["id"] == "2.36x")
    assert claim["verdict"] == "supported"


def test_speedup_across_stop_modes_is_incomparable():
    v = api.audit([FIXTURES / "BR012" / "fires_speedup_across_stop_modes.jsonl"]).to_dict()
    f = finding(v, "BR012", "v2-faster")
    assert f["outcome"] == "fired"
    assert f["message"] == (
        "the 3.10× speed-up compares runs v2-forced and v1-natural, which differ in stop mode "
        "forced vs natural, engine version 0.11.0 vs 0.10.0: conditions differ (stop mode)"
    )
    assert f["help"]
    assert next(c for c in v["claims"] if c["id"] == "v2-faster")["verdict"] in (
        "incomparable",
        "inflated",
    )


def test_scaling_within_one_sweep_is_comparable():
    v = api.audit(
        [FIXTURES / "BR012" / "passes_scaling_one_sweep.jsonl"], select=["BR012"]
    ).to_dict()
    f = finding(v, "BR012", "b-4.31x")
    assert f["outcome"] == "passed"
    assert f["message"].startswith("runs code-n8 and code-n1 are comparable: they differ only in N")
    assert finding(v, "BR012", "audit")["outcome"] == "passed"


def test_content_disclosed_for_one_run_only_is_undecidable():
    v = api.audit(
        [FIXTURES / "BR012" / "undecidable_content_one_side.jsonl"], select=["BR012"]
    ).to_dict()
    f = finding(v, "BR012", "patch-1.1x")
    assert f["outcome"] == "undecidable"
    assert f["message"] == (
        "cannot tell whether runs u-code and u-other are comparable: known "
        "for one run only: content"
    )


def test_a_single_run_audit_is_not_applicable():
    v = api.audit([FIXTURES / "BR010" / "passes_spec_on_code.jsonl"], select=["BR012"])
    assert finding(v, "BR012", "audit")["outcome"] == "not-applicable"


def test_engine_versions_of_case_a_are_comparable():
    """Three versions and flag sets of one engine: one setup category, comparable."""
    v = api.audit([TRACES / "case-a-versions.jsonl"], select=["BR012"]).to_dict()
    f = finding(v, "BR012", "audit")
    assert f["outcome"] == "passed"
    assert "only the engine setup differs (engine version, engine flags)" in f["message"]


def test_deployment_settings_print_only_the_pairs_that_differ():
    """Nine vLLM points share ten --metadata pairs and differ in one (deployment=…): the line
    names that one, and the setups that differ are named by their factors."""
    name = "nerdalert-automation-llama32-3b-l40s-mixed-deployments-rate-sweep.jsonl"
    path = TRACES.parent / ".." / "shared" / "real-traces" / "vllm" / name
    if not path.exists():
        pytest.skip("../shared/real-traces is not here")
    v = api.audit([path]).to_dict()
    f = finding(v, "BR012", "audit")
    assert f["outcome"] == "fired"
    assert "2 setups differ at once (request rate; deployment settings)" in f["message"]
    (line,) = [a for a in f["arithmetic"] if a.startswith("deployment settings: ")]
    assert line.startswith(
        "deployment settings: deployment=no-features: vllm:10qps:deployment=no-features"
    )
    assert "gpu=" not in line and "tokenizer_id=" not in line


def test_differing_settings_marks_a_key_one_run_lacks():
    from reporter.compare import Settings, differing_settings

    a = Settings((("gpu", "L40S"), ("tp", "1")))
    b = Settings((("gpu", "L40S"), ("tp", "2"), ("dp", "2")))
    assert differing_settings([a, b, None]) == [
        "dp=(not set); tp=1",
        "dp=2; tp=2",
        "undisclosed",
    ]
    assert str(a) == "gpu=L40S; tp=1"


def test_a_random_datasets_lengths_are_no_setting_of_a_sharegpt_run(tmp_path):
    """SGLang writes random_input_len, random_output_len and random_range_ratio whatever the
    dataset: two sharegpt runs that differ only there differ in nothing that was sent."""
    import json

    def line(input_len: int, ratio: float) -> str:
        return json.dumps(
            {
                "backend": "sglang", "dataset_name": "sharegpt", "request_rate": 1.0,
                "max_concurrency": 4, "duration": 10.0, "completed": 40,
                "total_input_tokens": 8000, "total_output_tokens": 4000,
                "random_input_len": input_len, "random_output_len": 1024,
                "random_range_ratio": ratio,
            }
        )  # fmt: skip

    path = tmp_path / "sglang.jsonl"
    path.write_text(line(1024, 0.0) + "\n" + line(4096, 1.0) + "\n")
    v = api.audit([path], fmt="sglang")
    (group,) = v.groups
    assert len(group.runs) == 2
    assert "random_" not in group.why
    assert not any(
        "random_" in text or "range ratio" in text
        for f in v.findings
        for text in [f.message, *f.arithmetic]
    )


def test_values_counted_equal_print_as_their_range(tmp_path):
    # tg256 @ d32768 decodes at a context of 32,768; pp2048 @ d32768 ends at 34,816. Within
    # the length tolerance they are one value, printed as the range, not as the first's
    table = (
        "| model | params | test | t/s |\n| --- | ---: | ---: | ---: |\n"
        "| qwen35moe 35B Q4_K | 34.66 B | pp2048 @ d32768 | 812.30 ± 2.10 |\n"
        "| qwen35moe 35B Q4_K | 34.66 B | tg256 @ d32768 | 76.20 ± 0.10 |\n"
        "| qwen35moe 35B Q4_K | 34.66 B | tg256 | 82.20 ± 0.20 |\n"
        "\nbuild: 0893f50f2 (8746)\n"
    )
    path = tmp_path / "depth.md"
    path.write_text(table)
    f = finding(api.audit([path]).to_dict(), "BR012", "audit")
    (line,) = [a for a in f["arithmetic"] if a.startswith("context length: ")]
    assert "32,768–34,816: pp2048@d32768, tg256@d32768" in line


def test_a_random_datasets_ratio_is_not_used_by_sharegpt_and_is_no_deployment(tmp_path):
    # datacrunch's SGLang lines: random and sharegpt runs, all writing random_input_len 1024:
    # the ratio is "not used" by sharegpt (not "undisclosed"), the lengths no deployment
    import json

    def line(dataset: str, rate: float) -> str:
        return json.dumps({
            "backend": "sglang", "dataset_name": dataset, "request_rate": rate,
            "max_concurrency": None, "duration": 60.0, "completed": 240,
            "total_input_tokens": 240 * (512 if dataset == "random" else 224),
            "total_output_tokens": 240 * 200, "random_input_len": 1024,
            "random_output_len": 1024, "random_range_ratio": 0.0,
        })  # fmt: skip

    path = tmp_path / "online.jsonl"
    path.write_text(line("random", 4.0) + "\n" + line("sharegpt", 4.0) + "\n")
    f = finding(api.audit([path], fmt="sglang").to_dict(), "BR012", "audit")
    assert "deployment settings" not in f["message"]
    (ratio,) = [a for a in f["arithmetic"] if a.startswith("length range ratio: ")]
    assert "not used (sharegpt)" in ratio


def test_runs_of_other_conditions_say_why_without_nested_parentheses():
    # llama-bench's pp and tg tests of one file: prompt and context lengths differ
    path = SHARED / "real-traces" / "llama-bench"
    path /= "kyuz0-8060s-vulkan-radv-glm47flash-q8-markdown.log"
    f = finding(api.audit([path], select=["BR012"]).to_dict(), "BR012", "audit")
    assert f["message"] == (
        "the 2 runs differ in prompt length, requested output length, context length: their "
        "figures are not comparable with each other: conditions differ (prompt length, "
        "requested output length, context length)"
    )


def _llama_bench_line(n_prompt: int, n_gen: int, depth: int, avg_ts: float) -> str:
    import json

    ns = int((n_prompt + n_gen) / avg_ts * 1e9)
    return json.dumps({
        "build_commit": "1c1409e1", "build_number": 6865, "model_type": "llama 1B Q4_K",
        "model_size": 800000000, "model_n_params": 1235814432, "n_prompt": n_prompt,
        "n_gen": n_gen, "n_depth": depth, "avg_ns": ns, "avg_ts": avg_ts,
        "samples_ns": [ns], "samples_ts": [avg_ts],
    })  # fmt: skip


def test_a_prompt_processing_test_requests_no_output(tmp_path):
    # llama-bench -o jsonl depth sweep: a pp test writes "n_gen": 0, a tg test "n_prompt": 0;
    # the pp test asked for no output, which is a length, not an undisclosed one
    path = tmp_path / "sweep.jsonl"
    path.write_text(
        _llama_bench_line(512, 0, 0, 1472.0) + "\n" + _llama_bench_line(0, 128, 0, 49.9) + "\n"
    )
    f = finding(api.audit([path], select=["BR012"]).to_dict(), "BR012", "audit")
    assert "undisclosed" not in " ".join([f["message"], *f["arithmetic"]])
    assert "requested output length: 0: pp512; 128: tg128" in f["arithmetic"]
    assert f["message"] == (
        "the 2 runs differ in prompt length, requested output length, context length: their "
        "figures are not comparable with each other: conditions differ (prompt length, "
        "requested output length, context length)"
    )


def test_a_factor_known_for_some_runs_only_is_not_said_to_differ(tmp_path):
    # vLLM bench serve results: one names its max_tokens (forced), one file has no such key;
    # only the prompt length is known to differ, the stop mode is known for one run only
    import json

    def line(prompt: int, extra: dict[str, object]) -> str:
        return json.dumps({
            "backend": "vllm", "model_id": "m", "max_concurrency": 4, "duration": 10.0,
            "completed": 40, "num_prompts": 40, "total_input_tokens": 40 * prompt,
            "total_output_tokens": 40 * 128, **extra,
        })  # fmt: skip

    path = tmp_path / "two.jsonl"
    path.write_text(line(512, {"ignore_eos": True}) + "\n" + line(4096, {}) + "\n")
    f = finding(api.audit([path], fmt="vllm", select=["BR012"]).to_dict(), "BR012", "audit")
    assert f["message"] == (
        "the 2 runs differ in prompt length, deployment settings (stop mode disclosed for some "
        "runs only): their figures are not comparable with each other: conditions differ "
        "(prompt length)"
    )


def test_two_runs_of_one_setting_are_both_runs(tmp_path):
    # "all 2 runs share one setting" is not English: two are both
    path = SHARED / "real-traces" / "llama-bench"
    path /= "lhl-8060s-rocm-llama32-1b-default-hip-depth-sweep.jsonl"
    lines = path.read_text().splitlines()[:1]
    one = tmp_path / "one.jsonl"
    one.write_text(lines[0] + "\n" + lines[0] + "\n")
    f = finding(api.audit([one], select=["BR012"]).to_dict(), "BR012", "audit")
    assert f["message"].startswith("both runs share one setting")


def test_a_step_names_a_factor_known_for_one_run_only_as_such():
    # nerdalert's two published vLLM files: the automation file records no engine (its
    # groups line says so), the H100 file names its framework (vllm, sgl) and no hardware
    # nor requested output length. The audit's largest ratio runs through a step from an
    # H100 run to an automation run: model and deployment differ; engine, hardware and the
    # requested output length are each stated on one side only, which is no difference
    real = SHARED / "real-traces" / "vllm"
    if not real.is_dir():
        pytest.skip("../shared/real-traces is absent")
    files = [
        real / "nerdalert-automation-llama32-3b-l40s-mixed-deployments-rate-sweep.jsonl",
        real / "nerdalert-h100-llama31-8b-rate-sweep.jsonl",
    ]
    f = finding(api.audit(files, select=["BR012"]).to_dict(), "BR012", "audit")
    steps = f["numbers"]["chain"]
    last = steps[-1]
    assert last["factors"] == ["deployment settings", "model"]
    assert last["one_sided"] == ["requested output length", "hardware", "engine"]
    said = (
        "(deployment settings, model; known for one run only: requested output length, "
        "hardware, engine)"
    )
    assert said in f["message"]
    assert any(line.endswith(said) for line in f["arithmetic"])
    for step in steps:
        assert "engine" not in step["factors"]


def test_a_file_that_records_no_server_flags_is_not_said_to_have_none():
    # bowenwan6's SGLang bench_serving results: the two-line file carries server_info (the
    # sglang server's flags), the three caseC files were taken against a vLLM backend and
    # write "server_info": null. Their flags are not recorded, not empty: the engine flags
    # are known for some runs only, and no difference between the runs
    real = SHARED / "real-traces" / "sglang"
    if not real.is_dir():
        pytest.skip("../shared/real-traces is absent")
    files = [
        real / "bowenwan6-sglang-oai-c1-two-lines-same-settings.jsonl",
        *sorted((real / "bowenwan6-benchserving-vllm-backend-c16-repeats").glob("*.json")),
    ]
    f = finding(api.audit(files, select=["BR012"]).to_dict(), "BR012", "audit")
    assert "(none)" not in " ".join(f["arithmetic"])
    flags = next(x for x in f["arithmetic"] if x.startswith("engine flags: "))
    assert flags.endswith(
        "; undisclosed: caseC_batched_vllm_rep1.json:vllm:infqps:c16, "
        "caseC_batched_vllm_rep2.json:vllm:infqps:c16, "
        "caseC_batched_vllm_rep3.json:vllm:infqps:c16"
    )
    assert f["message"].startswith(
        "the 5 runs differ in prompt length, deployment settings (speculation, model, engine, "
        "engine version, engine flags disclosed for some runs only)"
    )
    assert "setups differ at once" not in f["message"]
