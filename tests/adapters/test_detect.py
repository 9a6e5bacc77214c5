"""Format detection: every real and fixture file to its adapter, 'could not tell' naming the
closest candidates and their missing keys, --format overriding, several tools in one audit."""

from __future__ import annotations

import pytest

from reporter import adapters, api
from reporter.errors import TraceError
from reporter.ingest.lines import Source
from tests.adapters.conftest import HERE

REAL_FILES = {
    "aiperf/akamaslabs-aiperf0.11-qwen3-4b-conc16-profile_export_aiperf.csv": "aiperf",
    "aiperf/akamaslabs-aiperf0.11-qwen3-4b-conc16-profile_export_aiperf.json": "aiperf",
    "aiperf/anud18-aiperf-qwen3vl-c2-profile_export-first2records-excerpt.jsonl": "aiperf",
    "aiperf/databloom-aiperf-llama32-3b-gguf-c1-dualhost-half-timeouts-profile_export.jsonl": (
        "aiperf"
    ),
    "aiperf/databloom-aiperf-qwen35-4b-gguf-c1-all-timeouts-profile_export.jsonl": "aiperf",
    "guidellm/danielkorat-guidellm050dev-qwen3-4b-concurrent4-sanity.json": "guidellm",
    "guidellm/guidellm-v02-test-asset-benchmarks_stripped.json": "guidellm",
    "guidellm/guidellm-v02-test-asset-benchmarks_stripped.yaml": "guidellm",
    "guidellm/llmd-guidellm080dev-report-v2-constant-2-4rps-mock-server.json": "guidellm",
    "guidellm/rsevilla87-guidellm-qwen3-06b-constant-10rps.json": "guidellm",
    "llama-bench/brayniac-rtx4090-b5606-pp8192-tg1280.json": "llama-bench",
    "llama-bench/orionzhen-7900xtx-vulkan-radv-gptoss20b-b7951-depth-sweep.json": "llama-bench",
    "llmperf/leaderboard-groq_70b_individual_responses.json": "llmperf",
    "llmperf/leaderboard-groq_70b_summary.json": "llmperf",
    "sglang/tonyli15-sglang055-agg-local-n200.jsonl": "sglang",
    "sglang/tonyli15-sglang055-qwen25-3b-agg-n50-c8.jsonl": "sglang",
    "vllm/er0080-v0.25.1-opt125m-conc2-summary-reformatted.json": "vllm",
    "vllm/er0080-v0.25.1-sweep-maxseqs4-conc2-run0.json": "vllm",
    "vllm/er0080-v0.25.1-sweep-maxseqs4-conc2-summary.json": "vllm",
    "vllm/lambdalabs-1xH100-llama31-8b-fp8-10prompts-detailed.json": "vllm",
    "vllm/nerdalert-h100-llama31-8b-rate-sweep.jsonl": "vllm",
    "vllm/nerdalert-automation-llama32-3b-l40s-mixed-deployments-rate-sweep.jsonl": "vllm",
    "vllm/diogoaav-llama33-70b-fp8-100k-prompt-single-request.json": "vllm",
    "vllm/yangligt2-llama4scout-fp8-2node-maxconc-sweep/c4-20251022-234422.json": "vllm",
    "vllm/yangligt2-llama4scout-fp8-2node-maxconc-sweep/c16-20251022-234745.json": "vllm",
    "vllm/yangligt2-llama4scout-fp8-2node-maxconc-sweep/c64-20251022-235048.json": "vllm",
    "vllm/yangligt2-llama4scout-fp8-2node-maxconc-sweep/c256-20251022-235601.json": "vllm",
    "vllm/yangligt2-llama4scout-fp8-2node-maxconc-sweep/c256-20251023-185002-other-config.json": (
        "vllm"
    ),
    "vllm/yangligt2-llama4scout-fp8-2node-maxconc-sweep/c1024-20251023-200539-other-config.json": (
        "vllm"
    ),
    "sglang/bowenwan6-benchserving-vllm-backend-c16-repeats/caseC_batched_vllm_rep1.json": "sglang",
    "sglang/bowenwan6-benchserving-vllm-backend-c16-repeats/caseC_batched_vllm_rep2.json": "sglang",
    "sglang/bowenwan6-benchserving-vllm-backend-c16-repeats/caseC_batched_vllm_rep3.json": "sglang",
    "sglang/bowenwan6-sglang-oai-c1-two-lines-same-settings.jsonl": "sglang",
    "llama-bench/lhl-8060s-rocm-llama32-1b-default-hip-depth-sweep.jsonl": "llama-bench",
    "llama-bench/lhl-8060s-rocm-llama32-1b-default-rocwmma-depth-sweep.jsonl": "llama-bench",
    "llama-bench/lhl-8060s-rocm-quick-test-jsonl-with-stderr-lines.jsonl": "llama-bench",
    "llama-bench/kyuz0-8060s-vulkan-radv-glm47flash-q8-markdown.log": "llama-bench",
    "llama-bench/kyuz0-8060s-vulkan-radv-glm47flash-q8-longctx32768-markdown.log": "llama-bench",
    "llmperf/leaderboard-bedrock_70b_summary.json": "llmperf",
    "llmperf/leaderboard-bedrock_70b_individual_responses.json": "llmperf",
}
FIXTURES = {
    "vllm-2026-save-detailed-c2.json": "vllm",
    "sglang-output-details.jsonl": "sglang",
    "llama-bench.csv": "llama-bench",
    "llama-bench.jsonl": "llama-bench",
    "llama-batched-bench.log": "llama-bench",
    "llama-bench.sql": "llama-bench",
    "llama-bench-markdown-cuda.log": "llama-bench",
    "llama-bench-markdown-old.md": "llama-bench",
    "llmperf-summaries-by-concurrency.json": "llmperf",
    "sglang-rate-sweep-range-ratio.jsonl": "sglang",
    "genai-perf-profile_export.json": "genai-perf",
}


def test_every_real_file_is_covered(real):
    root = real(".")
    found = {str(p.relative_to(root)) for p in root.glob("**/*.*") if p.suffix != ".md"}
    # the Prometheus scrape is server metrics, not a load-test result
    assert found - set(REAL_FILES) == {"vllm/er0080-v0.25.1-prometheus-metrics-loaded.txt"}


@pytest.mark.parametrize(("name", "fmt"), sorted(REAL_FILES.items()))
def test_real_files_are_detected(real, name, fmt):
    module = adapters.detect(Source.read(real(name)))
    assert fmt == module.NAME


@pytest.mark.parametrize(("name", "fmt"), sorted(FIXTURES.items()))
def test_fixture_files_are_detected(name, fmt):
    module = adapters.detect(Source.read(HERE / name))
    assert fmt == module.NAME


def test_custom_logs_are_never_guessed():
    with pytest.raises(TraceError) as err:
        api.load([HERE / "bench-log.csv"])
    assert str(err.value) == (
        f"{HERE / 'bench-log.csv'}: could not tell the format: none of the keys the supported "
        "tools write; expected a file written by one of benchreport, guidellm, aiperf, "
        "genai-perf, llmperf, sglang, vllm, llama-bench; pass --format NAME, or --format custom "
        "--mapping FILE for other logs"
    )


def test_could_not_tell_names_the_closest(tmp_path):
    path = tmp_path / "result.json"
    path.write_text('{"backend": "vllm", "duration": 12.5, "num_prompts": 100}\n')
    with pytest.raises(TraceError) as err:
        api.load([path])
    assert str(err.value) == (
        f'{path}: could not tell the format (closest: vllm lacks "completed", '
        '"total_output_tokens", "output_throughput", "date" or "mean_ttft_ms"; sglang lacks '
        '"completed", "total_output_tokens", "total_output_tokens_retokenized"); expected a '
        "file written by one of benchreport, guidellm, aiperf, genai-perf, llmperf, sglang, "
        "vllm, llama-bench; pass --format NAME, or --format custom --mapping FILE for other logs"
    )


def test_could_not_tell_a_csv_names_only_the_columns_it_lacks(tmp_path):
    # a llama-bench fork's CSV: per-phase rates in place of avg_ts, every other column there
    path = tmp_path / "bench.csv"
    path.write_text(
        "build_commit,build_number,model_type,n_prompt,n_gen,avg_prompt_ts,avg_gen_ts\n"
        '"fa6cb8ae","5100","llama 1B Q4_K - Medium","4096","32","15044.01","366.97"\n'
    )
    with pytest.raises(TraceError) as err:
        api.load([path])
    assert 'llama-bench lacks "avg_ts")' in str(err.value)
    assert '"build_commit"' not in str(err.value)


def test_not_json_nor_csv(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("a plain note\n")
    with pytest.raises(TraceError) as err:
        api.load([path])
    assert str(err.value).startswith(f"{path}: the file is neither JSON, JSON Lines nor CSV;")


def test_format_overrides_detection(real):
    path = real("vllm/er0080-v0.25.1-sweep-maxseqs4-conc2-run0.json")
    assert api.load([path], "vllm").inputs[0].format == "vllm"
    # read as SGLang's, it is checked by SGLang's rules (which never write the string "inf")
    with pytest.raises(TraceError) as err:
        api.load([path], "sglang")
    assert str(err.value) == (
        f'{path}:1: "request_rate" is "inf"; expected a number ≥ 0 (SGLang bench_serving result)'
    )


def test_several_tools_in_one_audit(real):
    paths = [
        real("vllm/er0080-v0.25.1-sweep-maxseqs4-conc2-run0.json"),
        real("sglang/tonyli15-sglang055-qwen25-3b-agg-n50-c8.jsonl"),
        real("aiperf/akamaslabs-aiperf0.11-qwen3-4b-conc16-profile_export_aiperf.json"),
        real("guidellm/danielkorat-guidellm050dev-qwen3-4b-concurrent4-sanity.json"),
        HERE / "bench-log.csv",
    ]
    with pytest.raises(TraceError):
        api.load(paths)  # the custom log needs its mapping, and --format applies to all files
    verdict = api.audit(paths[:4]).to_dict()
    assert [i["format"] for i in verdict["inputs"]] == ["vllm", "sglang", "aiperf", "guidellm"]
    assert [r["id"] for r in verdict["runs"]] == [
        "openai:infqps:c2:run0", "agg_n50_in128_out64_c8", "aiperf:c16", "concurrent-4",
    ]  # fmt: skip
    assert [r["format"] for r in verdict["runs"]] == ["vllm", "sglang", "aiperf", "guidellm"]


def test_broken_first_line_of_json_lines(tmp_path):
    path = tmp_path / "trace.jsonl"
    run = '{"kind":"run","schema":"benchreport/1","id":"a"}'
    path.write_text('{"kind":"request","run":"a",\n' + run + "\n")
    with pytest.raises(TraceError) as err:
        api.load([path])  # detected as native from its good line; the bad one is reported
    assert str(err.value) == (
        f"{path}:1:29: not valid JSON: Expecting property name enclosed in double quotes; "
        "expected one JSON object per line"
    )


def test_unparsable_json_lines_are_worded_per_line(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_text('{"a": 1,,}\n{"b": 2,,}\n')
    with pytest.raises(TraceError) as err:
        api.load([path])
    assert str(err.value).splitlines() == [
        f"{path}:1:9: not valid JSON: Expecting property name enclosed in double quotes; "
        "expected one JSON object per line",
        f"{path}:2:9: not valid JSON: Expecting property name enclosed in double quotes; "
        "expected one JSON object per line",
    ]


@pytest.mark.parametrize(
    ("text", "line", "what", "expected"),
    [
        (
            "============ Serving Benchmark Result ============\n"
            "Successful requests:                     100\n"
            "Benchmark duration (s):                  12.31\n",
            1,
            "this is the summary that vLLM's or SGLang's benchmark prints on the console, not "
            "its result file",
            "the JSON result: re-run with --save-result (vLLM bench serve) or --output-file "
            "(SGLang bench_serving)",
        ),
        (
            # a form feed and a U+2028 split no line: the summary's header is on line 3
            "benchmark log\x0c page 2\nstarted \u2028 at 12:00\n"
            "============ Serving Benchmark Result ============\n"
            "Successful requests:                     100\n",
            3,
            "this is the summary that vLLM's or SGLang's benchmark prints on the console, not "
            "its result file",
            "the JSON result: re-run with --save-result (vLLM bench serve) or --output-file "
            "(SGLang bench_serving)",
        ),
        (
            '"8cf427ff","5163","AMD Ryzen 7 7800X3D 8-Core Processor","NVIDIA GeForce RTX 4080",'
            '"CUDA","models/q.gguf","qwen2 7B Q4_K - Medium","4677120000","7615616512","2048",'
            '"512","8","0x0","0","50","f16","f16","-1","0","layer","0","0","-1","auto","0.00",'
            '"none","1","0","0","0","0","0","0","512","0","0","2025-04-24T11:57:09Z","70285660",'
            '"982040","7285.676949","100.064434"\n',
            1,
            "this looks like llama-bench's CSV without its header row",
            "re-run with -o json (or keep the header line of -o csv)",
        ),
        (
            "| model | backend | t/s |\n| llama 7B | CUDA | 120.5 |\n",
            1,
            "this looks like a llama-bench Markdown table, but not as llama-bench prints it (a "
            "header with test and t/s columns, then a | --- | line)",
            "llama-bench's own output: re-run with -o json",
        ),
        (
            "log line\n" * 25 + '{"a": 1}\n',
            26,
            "JSON Lines after 25 lines of log output (at most 20 are skipped)",
            "the tool's output alone: write it to a file (-o jsonl > FILE, --output-file), or "
            "delete the log lines",
        ),
    ],
)
def test_near_formats_say_what_they_look_like(tmp_path, text, line, what, expected):
    path = tmp_path / "result.txt"
    path.write_text(text)
    with pytest.raises(TraceError) as err:
        api.load([path])
    assert str(err.value) == f"{path}:{line}: {what}; expected {expected}"


#: vLLM's offline benchmarks, as --output-json writes them (indent 4), and why each is no
#: serving run: benchmark_throughput.py's five keys (its total_num_tokens counts the prompts
#: with the outputs), and benchmark_latency.py's / vllm bench latency's (a vllm-ascend CI
#: copy: seconds per whole batch generate call). Keys vLLM writes, so "none of the keys the
#: supported tools write" would be false.
OFFLINE = {
    "throughput": (
        '{\n    "elapsed_time": 72.381,\n    "num_requests": 200,\n'
        '    "total_num_tokens": 86204,\n    "requests_per_second": 2.763,\n'
        '    "tokens_per_second": 1190.974\n}',
        "vLLM's offline throughput benchmark (elapsed_time, total_num_tokens, "
        "tokens_per_second): no serving run to audit: one total over 200 requests, with no "
        "request's times, no concurrency, and a tokens_per_second that vLLM counts over prompt "
        "and output tokens together",
    ),
    "latency": (
        '{\n    "avg_latency": 7.1091228867570555,\n    "latencies": [\n'
        "        6.898985657840967,\n        6.853035559877753,\n        7.112779660150409\n"
        '    ],\n    "percentiles": {\n        "10": 6.809143266826868,\n'
        '        "50": 7.112779660150409,\n        "99": 7.868931790143251\n    }\n}',
        "vLLM's offline latency benchmark (avg_latency, latencies, percentiles): no serving "
        "run to audit: 3 timings of one whole batch each, whose size and lengths the file "
        "does not record, with no request's times and no token counts",
    ),
}


@pytest.mark.parametrize("kind", list(OFFLINE))
def test_vllms_offline_results_say_why_they_cannot_be_audited(tmp_path, kind):
    text, why = OFFLINE[kind]
    path = tmp_path / f"{kind}.json"
    path.write_text(text)
    with pytest.raises(TraceError) as err:
        api.load([path])
    assert str(err.value) == (
        f"{path}: {why}; expected a serving benchmark's result (vllm bench serve "
        "--save-result, with --save-detailed for per-request times)"
    )
    # named as vLLM's, it is refused for the same reason, not with the serving schema's
    with pytest.raises(TraceError) as named:
        api.load([path], "vllm")
    assert str(named.value) == str(err.value)
