"""llama-bench JSON / JSONL / CSV and llama-batched-bench: repetitions, depth sweeps, points."""

from __future__ import annotations

import hashlib
import json
import statistics

import pytest

from reporter import api
from reporter.errors import TraceError
from tests.adapters.conftest import HERE, load, run, stats_of

BRAYNIAC = "llama-bench/brayniac-rtx4090-b5606-pp8192-tg1280.json"
ORION = "llama-bench/orionzhen-7900xtx-vulkan-radv-gptoss20b-b7951-depth-sweep.json"


def test_repetitions_and_avg_ts(real):
    raw = json.loads(real(BRAYNIAC).read_text())
    # avg_ts is the mean of the repetitions' rates, as llama-bench computes it
    for test in raw:
        assert round(statistics.fmean(test["samples_ts"]), 2) == round(test["avg_ts"], 2)
    tables = load(real(BRAYNIAC))
    assert list(tables.runs["run"]) == ["pp8192", "tg1280"]
    tg = run(tables, "tg1280")
    assert (tg["concurrency"], tg["stop"], bool(tg["spec_enabled"])) == (1, "forced", False)
    assert (tg["tool_name"], tg["tool_version"], tg["engine_version"]) == (
        "llama-bench", "b5606", "b5606 (247e5c6e)",
    )  # fmt: skip
    assert tg["working_set_bytes"] == 7982305280  # model_size, bytes
    assert tg["hardware_name"] == "NVIDIA GeForce RTX 4090"
    s = stats_of(tables)
    # 5 repetitions × 1280 tokens ÷ Σ of their times
    assert s.loc["tg1280", "requests"] == 5
    assert round(s.loc["tg1280", "wall_s"], 4) == 74.8549
    assert round(s.loc["tg1280", "aggregate_tps"], 2) == 85.50
    assert s.loc["pp8192", "output_tokens"] == 0
    assert round(s.loc["pp8192", "prompt_tokens_total"]) == 5 * 8192
    assert list(tables.requests["output_tokens"]) == [1280.0] * 5  # one row per repetition
    assert tables.requests["reported_tps"].isna().all()  # sequential: never to be summed


def test_depth_sweep_decode_falls_with_context(real):
    tables = load(real(ORION))
    assert len(tables.runs) == 84
    s = stats_of(tables)
    tg = ["tg128", "tg128@d512", "tg128@d1024", "tg128@d2048", "tg128@d4096", "tg128@d8192"]
    rates = [round(s.loc[r, "aggregate_tps"], 2) for r in tg]
    assert rates == [208.62, 202.62, 201.56, 197.63, 195.04, 190.63]
    assert rates == sorted(rates, reverse=True)
    r = run(tables, "tg128@d4096")
    assert (r["context_tokens"], r["output_tokens_requested"]) == (4096, 128)
    assert (r["model_name"], r["quant"]) == ("gpt-oss 20B MXFP4 MoE", "MXFP4 MoE")
    # the line where the test's object starts in the pretty-printed array
    lines = real(ORION).read_text().splitlines()
    assert lines[int(r["source_line"]) - 1] == "  {"
    start = int(r["source_line"])
    assert '    "n_depth": 4096,' in lines[start : start + 50]


def test_csv_has_no_samples():
    tables = load(HERE / "llama-bench.csv")
    assert list(tables.runs["run"]) == ["pp512", "tg128"]
    assert list(tables.runs["source_line"]) == [2, 3]
    s = stats_of(tables)
    assert (s.loc["tg128", "requests"], s.loc["tg128", "aggregate_tps"]) == (1, 50.0)
    assert (
        "one average repetition: the CSV holds neither the repetitions' times nor their count"
    ) in run(tables, "tg128")["derived"]
    assert not run(tables, "tg128")["spec_enabled"]


def test_jsonl_depths():
    tables = load(HERE / "llama-bench.jsonl")
    s = stats_of(tables)
    assert round(s.loc["tg128", "aggregate_tps"], 3) == 50.996  # 384 tokens ÷ 7.53 s
    assert s.loc["tg128@d4096", "aggregate_tps"] == 40.0  # 384 ÷ 9.60 s
    assert run(tables, "tg128@d4096")["context_tokens"] == 4096


def test_batched_bench_points_among_log_lines():
    tables = load(HERE / "llama-batched-bench.log")
    assert tables.inputs[0].format == "llama-bench"
    assert tables.inputs[0].notes == [
        "llama-batched-bench: 3 points; 5 log lines that are not JSON were left aside"
    ]
    assert list(tables.runs["run"]) == ["pp128+tg128:pl1", "pp128+tg128:pl2", "pp128+tg128:pl4"]
    assert list(tables.runs["concurrency"]) == [1, 2, 4]
    assert tables.runs["group"].nunique() == 1  # a sweep over N
    s = stats_of(tables)
    assert [round(x, 2) for x in s["aggregate_tps"]] == [47.18, 79.85, 127.30]  # pl·tg ÷ t
    assert [round(x, 2) for x in s["median_decode_tps"]] == [50.0, 44.14, 37.54]  # tg ÷ t_tg
    assert list(s["in_flight"]) == [1.0, 2.0, 4.0]
    assert run(tables, "pp128+tg128:pl4")["summary"]["tool_aggregate_tps"] == 150.146628


def _batched_point(**point):
    """A llama-batched-bench -jsonl point, its times and rates as the tool derives them."""
    pp, tg, pl, t_pp, t_tg = (point[k] for k in ("pp", "tg", "pl", "t_pp", "t_tg"))
    return {
        "n_kv_max": 8192, "n_batch": 2048, "n_ubatch": 512, "flash_attn": 1,
        "is_pp_shared": 0, "n_gpu_layers": 99, "n_threads": 12, "n_threads_batch": 12,
        "pp": pp, "tg": tg, "pl": pl, "n_kv": pl * (pp + tg), "t_pp": t_pp,
        "speed_pp": pl * pp / t_pp, "t_tg": t_tg, "speed_tg": pl * tg / t_tg,
        "t": t_pp + t_tg, "speed": pl * (pp + tg) / (t_pp + t_tg),
    }  # fmt: skip


def _batched_walls(tmp_path, *points):
    path = tmp_path / "batched.log"
    path.write_text("".join(json.dumps(_batched_point(**p)) + "\n" for p in points))
    return {f.subject: f for f in api.audit([str(path)], select=["BR009"]).findings}


def test_batched_bench_wall_is_its_prefill_and_tg_steps():
    # batched-bench puts the prompts of its pl sequences in one batch and times it (t_pp)
    # before any generation step: nothing waits for a slot, so BR009 decides. Its prefill
    # samples no token (logits of the batch's last position only) and t_tg times tg steps,
    # one per output token: t_pp + tg steps is the wall, not t_pp + (tg − 1) steps. BR009
    # called pl 2 and 4 undecidable, their TTFT "may include waiting for a slot"
    walls = {
        f.subject: f
        for f in api.audit([HERE / "llama-batched-bench.log"], select=["BR009"]).findings
    }
    assert [str(f.outcome) for f in walls.values()] == ["passed"] * 3
    assert all("slot" not in f.message for f in walls.values())
    pl4 = walls["pp128+tg128:pl4"]
    assert pl4.message == (
        "TTFT + decode explain the wall: predicted 4.02 s, measured 4.02 s (0.0% apart)"
    )
    assert pl4.arithmetic[0] == (
        "predicted wall = the batch's one TTFT (4 requests prefilled together) 0.61 + 128 "
        "decode steps (one per output token: the prefill sampled none) ÷ median decode 37.54 "
        "= 4.02 s"
    )
    assert pl4.numbers["predicted_wall_s"] == pytest.approx(0.612 + 3.41)  # t_pp + t_tg


def test_batched_bench_of_one_output_token_has_one_step(tmp_path):
    # tg 1: the one token is a timed step of its own (unlike bench_one_batch's output_len 1,
    # whose token is the prefill's), so the wall is t_pp + t_tg and needs the decode rate
    walls = _batched_walls(tmp_path, {"pp": 512, "tg": 1, "pl": 8, "t_pp": 2.0, "t_tg": 0.5})
    wall = walls["pp512+tg1:pl8"]
    assert str(wall.outcome) == "passed"
    assert wall.numbers["predicted_wall_s"] == pytest.approx(2.5)
    assert "1 decode steps (one per output token: the prefill sampled none)" in (wall.arithmetic[0])


def test_batched_bench_prefill_is_its_own_not_a_lone_sequences_rate(tmp_path):
    # a batch prefills faster per token than one sequence (1,280 against 1,000 tok/s here):
    # Σ prompt ÷ the lone rate (0.51 s) is not the batch's prefill, its timed 0.40 s is
    walls = _batched_walls(
        tmp_path,
        {"pp": 128, "tg": 64, "pl": 1, "t_pp": 0.128, "t_tg": 1.28},
        {"pp": 128, "tg": 64, "pl": 4, "t_pp": 0.4, "t_tg": 1.6},
    )
    wall = walls["pp128+tg64:pl4"]
    assert wall.arithmetic[0].startswith(
        "predicted wall = the batch's one TTFT (4 requests prefilled together) 0.40 + 64 "
    )
    assert wall.numbers["predicted_wall_s"] == pytest.approx(2.0)
    assert wall.numbers["off"] == pytest.approx(0.0, abs=1e-9)


def test_batched_bench_ttft_is_shown_as_the_batchs_one():
    from reporter.render.text import render_text

    text = render_text(api.audit([HERE / "llama-batched-bench.log"]))
    assert "  pp128+tg128:pl4  612.0 (whole batch)" in text
    assert "prefilled together, in one pass), not a percentile" in text


def test_truncated_array(tmp_path):
    text = (HERE / "llama-bench.jsonl").read_text().splitlines()[0]
    path = tmp_path / "bench.json"
    path.write_text("[\n  " + text + ',\n  {"build_commit": "4a1b", "n_prompt": 0,')
    with pytest.raises(TraceError) as err:
        api.load([path], "llama-bench")
    assert str(err.value) == (
        f"{path}:3:42: the JSON document ends early (the file is truncated); expected a "
        "complete JSON document"
    )


def test_bad_csv_cell(tmp_path):
    lines = (HERE / "llama-bench.csv").read_text().splitlines()
    path = tmp_path / "bench.csv"
    path.write_text("\n".join([lines[0], lines[1].replace('"0","2025', '"oops","2025')]) + "\n")
    with pytest.raises(TraceError) as err:
        api.load([path], "llama-bench")
    assert str(err.value) == (
        f'{path}:2: "n_depth" is "oops"; expected a whole number ≥ 0 (llama-bench test)'
    )


LHL_HIP = "llama-bench/lhl-8060s-rocm-llama32-1b-default-hip-depth-sweep.jsonl"
LHL_WMMA = "llama-bench/lhl-8060s-rocm-llama32-1b-default-rocwmma-depth-sweep.jsonl"


@pytest.mark.parametrize(
    ("name", "pp", "tg"),
    [
        # SOURCES.md: pp512 4,703.28 → 424.76 and tg128 195.65 → 64.62 from depth 0 to 65,536
        (LHL_HIP, (4703.28, 424.76), (195.65, 64.62)),
        (LHL_WMMA, (4884.42, 360.24), (193.01, 27.35)),
    ],
)
def test_lhl_prompt_tests_are_prompt_processing_runs(real, name, pp, tg):
    tables = load(real(name))
    s = stats_of(tables)
    runs = tables.runs.set_index("run")
    assert list(runs["concurrency"]) == [1] * 10  # single stream, every test
    assert set(runs["stop"]) == {"forced"}  # llama-bench always generates n_gen tokens
    prompt_runs = [r for r in runs.index if r.startswith("pp")]
    assert set(runs.loc[prompt_runs, "phase"]) == {"prompt"}
    assert set(runs.loc[[r for r in runs.index if r.startswith("tg")], "phase"]) == {"generation"}
    # a pp test generates nothing: no 0 tok/s output rate, its figure is prompt tokens ÷ time
    assert s.loc[prompt_runs, "aggregate_tps"].isna().all()
    assert round(s.loc["pp512", "prompt_tps"], 2) == pp[0]
    assert round(s.loc["pp512@d65536", "prompt_tps"], 2) == pp[1]
    assert round(s.loc["tg128", "aggregate_tps"], 2) == tg[0]
    assert round(s.loc["tg128@d65536", "aggregate_tps"], 2) == tg[1]


def test_a_claim_naming_a_prompt_test_does_not_crash(real):
    verdict = api.audit([real(LHL_HIP)], claim_texts=["aggregate=4703.28 tok/s N=1 run=pp512"])
    (claim,) = verdict.claims
    assert claim.check.runs == ["pp512"]
    pp = next(r for r in verdict.runs if r.id == "pp512")
    assert (pp.phase, str(pp.verdict), round(pp.prompt_tps or 0, 2)) == (
        "prompt", "supported", 4703.28,
    )  # fmt: skip
    assert pp.aggregate_tps is None


KYUZ0 = "llama-bench/kyuz0-8060s-vulkan-radv-glm47flash-q8-markdown.log"
KYUZ0_LONG = "llama-bench/kyuz0-8060s-vulkan-radv-glm47flash-q8-longctx32768-markdown.log"
QUICK = "llama-bench/lhl-8060s-rocm-quick-test-jsonl-with-stderr-lines.jsonl"


@pytest.mark.parametrize(
    ("name", "pp", "tg"),
    [
        # SOURCES.md: pp512 1,092.07 ± 1.21, tg128 41.17 ± 0.01; pp2048 @ d32768 136.78 ± 0.02,
        # tg32 @ d32768 22.55 ± 0.01 t/s (single stream)
        (KYUZ0, ("pp512", 1092.07, 0), ("tg128", 41.17, 0)),
        (KYUZ0_LONG, ("pp2048@d32768", 136.78, 32768), ("tg32@d32768", 22.55, 32768)),
    ],
)
def test_default_markdown_output_inside_a_log(real, name, pp, tg):
    tables = load(real(name))
    assert tables.inputs[0].format == "llama-bench"
    assert list(tables.runs["run"]) == [pp[0], tg[0]]
    # the two ggml_vulkan lines (the second holds " | ") and the build trailer are not rows
    assert tables.inputs[0].notes[0] == (
        "llama-bench: 3 lines around the table left aside (lines 1–2, 8: log output, device "
        "lines, the build trailer)"
    )
    assert list(tables.runs["source_line"]) == [5, 6]
    s = stats_of(tables)
    assert round(s.loc[pp[0], "prompt_tps"], 2) == pp[1]
    assert round(s.loc[tg[0], "aggregate_tps"], 2) == tg[1]
    r = run(tables, tg[0])
    assert (r["concurrency"], r["phase"], r["extra"]["n_depth"]) == (1, "generation", tg[2])
    assert (r["engine_version"], r["hardware_name"]) == (
        "b9187 (0253fb21f)",
        "AMD Radeon 8060S Graphics",
    )
    assert (r["model_name"], r["quant"]) == ("deepseek2 30B.A3B Q8_0", "Q8_0")
    # a mixture of experts: 3 B of 30 B parameters are read per token, not the 32.70 GiB
    assert (r["params_active"], r["params_total"]) == (3e9, 29.94e9)
    assert r["working_set_bytes"] == round(32.70 * 2**30)
    assert run(tables, pp[0])["phase"] == "prompt"


def test_markdown_with_cuda_device_lines_and_varying_batch():
    tables = load(HERE / "llama-bench-markdown-cuda.log")
    assert list(tables.runs["run"]) == [
        "pp512:n_batch=512", "tg128:n_batch=512", "pp512+tg128:n_batch=512",
        "pp512:n_batch=2048", "tg128:n_batch=2048", "pp512+tg128:n_batch=2048",
    ]  # fmt: skip
    assert set(tables.runs["hardware_name"]) == {"NVIDIA GeForce RTX 3090"}
    assert list(tables.runs["phase"])[:3] == ["prompt", "generation", "prompt+generation"]
    s = stats_of(tables)
    # no times in the table: each test's time is its tokens ÷ its printed rate
    assert round(s.loc["pp512+tg128:n_batch=512", "wall_s"], 4) == round(640 / 565.14, 4)
    assert round(s.loc["tg128:n_batch=2048", "aggregate_tps"], 2) == 133.02


def test_markdown_of_older_builds_spaced_test_names():
    tables = load(HERE / "llama-bench-markdown-old.md")
    assert list(tables.runs["run"]) == ["pp64", "tg16"]
    r = run(tables, "tg16")
    assert r["engine_version"] == "b1055 (8e4b0db)"
    assert "n_threads=8" in r["engine_flags"]
    assert (
        tables.inputs[0]
        .notes[0]
        .startswith("llama-bench: 1 line around the table left aside (line 6:")
    )


def test_sql_output():
    tables = load(HERE / "llama-bench.sql")
    assert tables.inputs[0].format == "llama-bench"
    assert list(tables.runs["run"]) == ["pp512", "tg128"]
    assert list(tables.runs["source_line"]) == [45, 46]  # the INSERT lines
    r = run(tables, "tg128")
    assert (r["engine_version"], r["hardware_name"], r["working_set_bytes"]) == (
        "b5163 (8cf427ff)", "NVIDIA GeForce RTX 4080", 4677120000,
    )  # fmt: skip
    s = stats_of(tables)
    assert round(s.loc["tg128", "aggregate_tps"], 2) == round(128 / 1.0674316, 2)
    assert round(s.loc["pp512", "prompt_tps"], 1) == round(512 / 0.07028566, 1)


def test_sql_output_of_builds_before_the_table_rename(tmp_path):
    # llama-bench named its SQL table `test` until it became `llama_bench` in August 2025:
    # the files of older builds are the same statements under the older name.
    old = tmp_path / "old.sql"
    old.write_text(
        (HERE / "llama-bench.sql")
        .read_text()
        .replace("EXISTS llama_bench (", "EXISTS test (")
        .replace("INSERT INTO llama_bench (", "INSERT INTO test (")
    )
    assert "llama_bench" not in old.read_text()
    tables = load(old)
    assert tables.inputs[0].format == "llama-bench"
    assert list(tables.runs["run"]) == ["pp512", "tg128"]
    s = stats_of(tables)
    assert round(s.loc["tg128", "aggregate_tps"], 2) == round(128 / 1.0674316, 2)


def test_json_lines_after_stderr_lines(real):
    tables = load(real(QUICK))
    assert tables.inputs[0].notes[0] == (
        "4 lines of log output before the JSON Lines skipped (lines 1–4); the records start "
        "at line 5"
    )
    assert list(tables.runs["source_line"]) == [5, 6, 7, 8, 9, 10]
    s = stats_of(tables)
    # SOURCES.md: pp512 5,007.64, tg128 192.59, pp512@d1024 4,558.86, tg128@d1024 182.12,
    # pp512@d4096 3,794.01, tg128@d4096 142.84 t/s
    assert [round(s.loc[r, "prompt_tps"], 2) for r in ("pp512", "pp512@d1024", "pp512@d4096")] == [
        5007.64, 4558.86, 3794.01,
    ]  # fmt: skip
    assert [
        round(s.loc[r, "aggregate_tps"], 2) for r in ("tg128", "tg128@d1024", "tg128@d4096")
    ] == [192.59, 182.12, 142.84]
    assert set(tables.runs["concurrency"]) == {1}
    # the digest is the file's, not the one with its log lines blanked
    assert tables.inputs[0].sha256 == hashlib.sha256(real(QUICK).read_bytes()).hexdigest()


def test_a_json_array_after_stderr_lines(tmp_path):
    # llama-bench -o json on a phone, captured with its stderr: backend lines, then the array.
    # JSON Lines after such lines were read; the array was refused as "neither JSON, JSON
    # Lines nor CSV"
    test = {
        "build_commit": "a1b2c3d", "build_number": 11469, "cpu_info": "", "gpu_info": "HTP0",
        "backends": "HTP", "model_type": "qwen3 0.6B Q4_0", "n_prompt": 0, "n_gen": 256,
        "n_depth": 0, "avg_ns": 3316000000, "stddev_ns": 14000000, "avg_ts": 77.2,
        "stddev_ts": 0.36,
    }  # fmt: skip
    log = "ggml-hex: Loading driver libcdsprpc.so\n\nggml-hex: device 0: HTP0\n"
    path = tmp_path / "bench.log"
    path.write_text(log + json.dumps([test], indent=2) + "\n")
    tables = load(path)
    assert tables.inputs[0].notes[0] == (
        "2 lines of log output before the JSON array skipped (lines 1–3); the records start "
        "at line 4"
    )
    assert list(tables.runs["source_line"]) == [5]
    assert round(stats_of(tables).iloc[0]["aggregate_tps"], 1) == 77.2
    # anything after the array: not one JSON document, refused as before
    path.write_text(log + json.dumps([test]) + "\nllama_perf: done\n")
    with pytest.raises(TraceError):
        load(path)


def test_run_ids_with_varying_settings_can_be_named_in_a_claim():
    verdict = api.audit(
        [HERE / "llama-bench-markdown-cuda.log"],
        claim_texts=["aggregate=133.02 tok/s N=1 run=tg128:n_batch=2048"],
    )
    (claim,) = verdict.claims
    assert claim.check.runs == ["tg128:n_batch=2048"]
    assert str(claim.verdict) == "supported"


def test_a_claim_of_a_pp_tg_rate_is_incomparable_not_inflated():
    # llama-bench prints (512 + 128) tokens ÷ time for pp512+tg128: not an output rate
    verdict = api.audit(
        [HERE / "llama-bench-markdown-cuda.log"],
        claim_texts=["aggregate=565.14 tok/s N=1 run=pp512+tg128:n_batch=512"],
    )
    (claim,) = verdict.claims
    assert str(claim.verdict) == "incomparable"
    assert claim.reason == (
        "565.14 tok/s is llama-bench's rate for a prompt+generation test, which counts prompt "
        "and generated tokens together: (512 prompt + 128 generated tokens) ÷ 1.13 s = 565.14 "
        "tok/s; the generated tokens alone come at 113.0 tok/s"
    )
    # nor is it "above what the trace measures": BR002 does not fire an error on it
    (br002,) = [f for f in verdict.findings if f.code == "BR002"]
    assert br002.outcome.value == "passed"
    assert br002.message == (
        "claimed 565.1 tok/s reproduces llama-bench's rate for a prompt+generation test, "
        "which counts prompt and generated tokens together; the generated tokens alone come "
        "at 113.0 tok/s (the claim is 5.00× that), so it is no generation rate"
    )


def test_a_pp_tg_tests_rate_is_said_to_count_its_prompt_tokens():
    # the t/s a reader of the table quotes, beside the generated tokens ÷ the test's time
    runs = {r.id: r for r in api.audit([HERE / "llama-bench-markdown-cuda.log"]).runs}
    pg = runs["pp512+tg128:n_batch=512"]
    assert (pg.stated_aggregate_tps, pg.stated_aggregate_field) == (565.14, "avg_ts")
    assert pg.stated_aggregate_note == (
        "the file states 565.14 tok/s (avg_ts), 5.00× total ÷ wall (113.0): (n_prompt + n_gen) "
        "÷ a repetition's time, averaged over the repetitions: it counts the prompt tokens too"
    )
    # a tg test's rate is its tokens ÷ its time (the table gives no other time): no note
    assert runs["tg128:n_batch=2048"].stated_aggregate_note is None
    # a pp test's rate is compared with its own figure, prompt tokens ÷ time
    assert runs["pp512:n_batch=512"].stated_aggregate_note is None


_RUNNER_LOG = """=== SYSTEM ===
OS: Linux
{sections}"""
_SECTION = """
### {title} ###
ggml_vulkan: Found {n} Vulkan devices:
{devices}
| model                          |       size |     params | backend    | ngl |            test |                  t/s |
| ------------------------------ | ---------: | ---------: | ---------- | --: | --------------: | -------------------: |
| llama 7B Q4_0                  |   3.56 GiB |     6.74 B | Vulkan     | 100 |           tg128 |        {rate} ± 0.05 |

build: {commit} ({build})
"""  # noqa: E501
_DEVICE_LINE = "ggml_vulkan: {i} = AMD Radeon RX 7900 XTX (RADV NAVI31) (radv) | uma: 0 | fp16: 1"


def _runner_log(path, sections):
    text = _RUNNER_LOG.format(
        sections="".join(
            _SECTION.format(
                title=title, n=n, rate=rate, commit=commit, build=build,
                devices="\n".join(_DEVICE_LINE.format(i=i) for i in range(n)),
            )
            for title, n, rate, commit, build in sections
        )
    )  # fmt: skip
    path.write_text(text)
    return path


def test_tables_of_a_log_on_other_devices_are_no_repeats(tmp_path):
    # one GPU, the other GPU (the same model: its device line reads alike), then both: three
    # setups the log tells apart by its headings and device lines, never repeats of one
    trace = _runner_log(
        tmp_path / "vulkan.log",
        [
            ("GPU 0 ONLY", 1, "150.97", "a81a569", 7361),
            ("GPU 1 ONLY", 1, "172.86", "a81a569", 7361),
            ("DUAL GPU", 2, "129.80", "b22b670", 7400),
        ],
    )
    tables = api.load([trace])
    runs = tables.runs.set_index("run")
    assert list(runs["hardware_name"]) == [
        "AMD Radeon RX 7900 XTX", "AMD Radeon RX 7900 XTX", "2× AMD Radeon RX 7900 XTX",
    ]  # fmt: skip
    assert [e["label"] for e in runs["extra"]] == ["GPU 0 ONLY", "GPU 1 ONLY", "DUAL GPU"]
    # each table's own build trailer, printed after it
    assert list(runs["engine_version"]) == ["b7361 (a81a569)", "b7361 (a81a569)", "b7400 (b22b670)"]
    verdict = api.audit([trace])
    assert len(verdict.groups) == 3
    # each setup alone: no spread between repeats of one setting is taken across them
    repeats = [f for f in verdict.findings if f.code == "BR016"]
    assert len(repeats) == 3
    assert all("between repeats" not in f.message for f in repeats), [f.message for f in repeats]


def test_tables_of_a_log_alike_in_every_line_are_repeats(tmp_path):
    # the same run twice, headed alike: two repeats of one setting, as before
    trace = _runner_log(
        tmp_path / "twice.log",
        [("RUN", 1, "150.97", "a81a569", 7361), ("RUN", 1, "151.20", "a81a569", 7361)],
    )
    runs = api.load([trace]).runs
    assert all("label" not in e for e in runs["extra"])
    verdict = api.audit([trace])
    assert len(verdict.groups) == 1
    (repeated,) = [f for f in verdict.findings if f.code == "BR016"]
    assert "none repeated" not in repeated.message


def test_repeated_prompt_tests_compare_their_prompt_rates(tmp_path):
    # two pp512 tables alike: repeats with a wall clock each and no output tokens; they are
    # compared by their prompt rates (BR016 had said there was no rate to compare, hiding
    # pp512 repeats 43% apart in a real log)
    table = (
        "| model | backend | ngl | test | t/s |\n| --- | --- | --: | --: | --: |\n"
        "| llama 7B Q4_0 | Vulkan | 100 | pp512 | {rate} ± 12.0 |\n\nbuild: a81a569 (7361)\n"
    )
    path = tmp_path / "pp.log"
    path.write_text(table.format(rate="3229.07") + "\n" + table.format(rate="3290.92"))
    verdict = api.audit([path], select=["BR016"])
    (repeats,) = verdict.findings
    assert str(repeats.outcome) == "passed"
    assert repeats.message == (
        "repeated, as far as the files record (they record no hardware): the largest spread "
        "between repeats is 1.9%"
    )
    assert repeats.arithmetic == ["N=1: 2 repeats, 3,229.1–3,290.9 prompt tok/s, spread 1.9%"]
    assert all(r.wall_s and r.wall_s > 0 for r in verdict.runs)


def test_repetitions_with_their_spread_are_repeats(real):
    # llama-bench -r 5: each test is the mean of 5 repetitions with their standard deviation;
    # "none repeated: the error of each figure is unknown" would be false of the file
    verdict = api.audit([real("llama-bench/brayniac-rtx4090-b5606-pp8192-tg1280.json")])
    found = sorted(f.message for f in verdict.findings if f.code == "BR016")
    assert found == [
        "1 run, each the mean of its tool's repetitions with their spread stated: at most "
        "±0.06% (tg1280: 5 repetitions, 85.5 ± 0.05 tok/s)",
        "1 run, each the mean of its tool's repetitions with their spread stated: at most "
        "±0.09% (pp8192: 5 repetitions, 3,024.4 ± 2.63 tok/s)",
    ]
    # one repetition each: no spread, the finding stands
    single = api.audit(
        [real("llama-bench/lhl-8060s-rocm-quick-test-jsonl-with-stderr-lines.jsonl")]
    )
    assert {str(f.outcome) for f in single.findings if f.code == "BR016"} == {"fired"}


def test_speculation_is_off_because_the_tool_loads_no_draft(real):
    verdict = api.audit([real(BRAYNIAC)], select=["BR011"])
    assert {f.message for f in verdict.findings} == {
        "speculative decoding off (inferred: llama-bench and llama-batched-bench load no draft "
        "model)"
    }


def test_columns_beyond_the_known_settings_and_tests_after_a_prompt_are_told_apart(tmp_path):
    # ik_llama.cpp (a fork) adds an mla column and -gp tests "tg64@pp128" (64 tokens generated
    # after a 128-token prompt). Read as "tg64" with mla ignored, these six points were called
    # repeats of one setting with a 130% spread; they are three mla values at two contexts
    head = (
        "| model                   |     params | threads | mla |          test |"
        "              t/s |\n"
        "| ----------------------- | ---------: | ------: | --: | ------------: |"
        " ---------------: |\n"
    )
    rows = [
        (1, 128, "34.04 ± 0.03"), (1, 8192, "25.58 ± 0.01"), (2, 128, "33.64 ± 0.02"),
        (2, 8192, "14.65 ± 0.05"), (3, 128, "33.67 ± 0.04"), (3, 8192, "14.70 ± 0.00"),
    ]  # fmt: skip
    body = "".join(
        f"| deepseek2 16B IQ4_NL_R4 |    15.76 B |      32 |   {mla} |   tg64@pp{pp} |"
        f"     {rate} |\n"
        for mla, pp, rate in rows
    )
    trace = tmp_path / "gp.md"
    trace.write_text(head + body + "\nbuild: 4bb3b7f (3610)\n")
    tables = api.load([trace])
    runs = tables.runs
    assert list(runs["run"]) == [f"tg64@d{pp}:mla={mla}" for mla, pp, _ in rows]
    assert list(runs["context_tokens"]) == [pp for _, pp, _ in rows]
    assert all("mla=" in " ".join(flags) for flags in runs["engine_flags"])
    assert (
        "test tg64@pp128: 64 tokens generated after a 128-token prompt (ik_llama.cpp -gp), "
        "read as tg64 at depth 128"
    ) in runs["derived"][0]
    verdict = api.audit([trace])
    assert not any("between repeats" in f.message for f in verdict.findings if f.code == "BR016")


def test_a_test_name_with_a_part_that_cannot_be_read_is_refused(tmp_path):
    trace = tmp_path / "odd.md"
    trace.write_text(
        "| model | params | test | t/s |\n| --- | ---: | ---: | ---: |\n"
        "| llama 7B Q4_0 | 6.74 B | tg128@x5 | 90.00 ± 0.10 |\n"
    )
    with pytest.raises(TraceError) as err:
        api.load([trace])
    assert 'test "tg128@x5" cannot be read' in str(err.value)


def test_a_batched_bench_table_in_a_llama_bench_log_is_said_to_be_left_out(tmp_path):
    # a runner's log with a llama-bench table, then llama-batched-bench's Markdown (read only
    # in a file of its own):
    # its points are named as left out, in the input's notes and on stderr, never dropped mute
    from click.testing import CliRunner

    from reporter.cli import main

    trace = tmp_path / "mixed.log"
    trace.write_text(
        "| model | params | test | t/s |\n| --- | ---: | ---: | ---: |\n"
        "| qwen35moe 35B Q4_K | 34.66 B | tg256 | 82.20 ± 0.20 |\n\n"
        "build: 0893f50f2 (8746)\n\n"
        "|    PP |     TG |    B |   N_KV |   T_PP s | S_PP t/s |   T_TG s | S_TG t/s |      T s |"
        "    S t/s |\n"
        "|-------|--------|------|--------|----------|----------|----------|----------|----------|"
        "----------|\n"
        "|   512 |    128 |    1 |    640 |    0.300 |  1706.67 |    1.556 |    82.26 |    1.856 |"
        "   344.83 |\n"
        "|   512 |    128 |    2 |   1280 |    0.590 |  1735.59 |    2.411 |   106.18 |    3.001 |"
        "   426.52 |\n"
    )
    verdict = api.audit([trace])
    (inp,) = verdict.inputs
    note = (
        "left out: 1 llama-batched-bench table (line 7; 2 points): not read with the "
        "llama-bench tables; give them as a file of their own, or re-run llama-batched-bench "
        "with --output-format jsonl, to audit them"
    )
    assert inp.left_out == [note]
    result = CliRunner().invoke(main, ["audit", "--no-html", str(trace)])
    assert f"{trace}: {note}" in result.stderr


def test_csv_rows_beside_a_markdown_table_are_named_as_left_out(tmp_path):
    # a public write-up: llama-bench Markdown tables, then a ```csv block of -o csv output
    # (other tests, and the build and hardware the tables leave out): its rows are results,
    # not "log output, device lines, the build trailer", and are named as not read
    header = (
        "build_commit,build_number,cpu_info,gpu_info,backends,model_filename,model_type,"
        "model_size,model_n_params,n_batch,n_ubatch,n_threads,n_gpu_layers,n_prompt,n_gen,"
        "n_depth,test_time,avg_ns,stddev_ns,avg_ts,stddev_ts"
    )
    row = (
        '"d05fe1d7d","9010","Accelerate, Apple M4 Pro","Apple M4 Pro","BLAS,MTL","q.gguf",'
        '"qwen35 27B Q4_K - Small","15845165056","26895998464","2048","2048","8","99",'
        '"{pp}","0","0","2026-05-20T18:44:36Z","{ns}","601071207","{ts}","1.375385"'
    )
    trace = tmp_path / "write-up.md"
    trace.write_text(
        "## qwen35 27B Q4_K\n"
        "| model | size | params | backend | threads | test | t/s |\n"
        "| --- | ---: | ---: | --- | ---: | ---: | ---: |\n"
        "| qwen35 27B Q4_K - Small | 14.76 GiB | 26.90 B | BLAS,MTL | 8 | tg1024 | 11.56 ± 0.07 |\n"
        "\n```csv\n"
        + header
        + "\n"
        + row.format(pp=4096, ns=42102228666, ts=97.302719)
        + "\n"
        + row.format(pp=8192, ns=87789513341, ts=93.327482)
        + "\n```\n"
    )
    verdict = api.audit([trace])
    (inp,) = verdict.inputs
    assert inp.left_out == [
        "left out: 1 llama-bench CSV table (line 7; 2 tests): not read with the Markdown "
        "tables; give the CSV as a file of its own to audit it"
    ]
    (aside,) = [n for n in inp.notes if "left aside" in n]
    assert aside.startswith("llama-bench: 3 lines around the table left aside (lines 1, 6, 10:")
    assert len(verdict.runs) == 1


def test_a_stated_spread_is_relative_to_the_mean_rate_and_a_test_label_is_no_setting(tmp_path):
    # ik_llama.cpp's JSON (a public issue's, abridged): pp512 at 9.949408 ± 0.608194 t/s over
    # 5 repetitions: ±6.11% of the mean rate (not 6.13% of total tokens ÷ total time); its
    # "test" field names the test, which n_prompt and n_gen already say
    base = {
        "build_commit": "ddc8eee1", "build_number": 3599,
        "model_type": "deepseek2 671B IQ4_K_R4 - 4.5 bpw", "n_threads": 48, "n_gen": 0,
    }  # fmt: skip
    records = [
        base | {
            "test": "pp512", "n_prompt": 512, "avg_ns": 51626433358, "stddev_ns": 1523685588,
            "avg_ts": 9.949408, "stddev_ts": 0.608194,
            "samples_ns": [57560377324, 49541849406, 50790455805, 49287972241, 50951512017],
            "samples_ts": [8.89501, 10.3347, 10.0806, 10.3879, 10.0488],
        },
        base | {
            "test": "pp128", "n_prompt": 128, "avg_ns": 12800000000, "stddev_ns": 10000000,
            "avg_ts": 10.0, "stddev_ts": 0.008, "samples_ns": [12800000000] * 2,
            "samples_ts": [10.0, 10.0],
        },
    ]  # fmt: skip
    path = tmp_path / "ik.json"
    path.write_text(json.dumps(records))
    verdict = api.audit([path], select=["BR016"])
    assert [r.id for r in verdict.runs] == ["pp512", "pp128"]
    messages = {f.message for f in verdict.findings}
    assert (
        "1 run, each the mean of its tool's repetitions with their spread stated: at most "
        "±6.11% (pp512: 5 repetitions, 9.9 ± 0.61 tok/s)"
    ) in messages


def test_csv_tables_inside_a_runners_log_are_read(tmp_path):
    # a log of several `llama-bench -o csv` invocations, each printing its command, a header
    # and rows: it was refused as "none of the keys the supported tools write"
    import csv
    import io

    fields = {
        "build_commit": "e107984bc", "build_number": "10788", "gpu_info": "Intel(R) Arc(TM) B580",
        "backends": "SYCL", "model_type": "olmoe A1.7B Q4_K - Medium", "n_threads": "19",
        "n_prompt": "0", "n_gen": "64", "n_depth": "60", "avg_ns": "228365836",
        "stddev_ns": "276314", "avg_ts": "280.252349", "stddev_ts": "0.338305",
    }  # fmt: skip

    def table(rate: str) -> str:
        out = io.StringIO()
        csv.writer(out, lineterminator="\n").writerow(fields)
        csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n").writerow(
            (fields | {"avg_ts": rate}).values()
        )
        return out.getvalue()

    command = "$ llama-bench -m olmoe.gguf -p 0 -n 64 -r 3 -o csv -d 60\n"
    trace = tmp_path / "runner.log"
    trace.write_text(
        command + "[invocation 1/2]\n" + table("280.252349") + "\n"
        + command + "[invocation 2/2]\n" + table("279.9") + "\n"
    )  # fmt: skip
    tables = api.load([trace])
    assert list(tables.runs["run"]) == ["tg64@d60", "tg64@d60#2"]
    assert list(tables.runs["source_line"]) == [4, 9]
    assert any(
        n.startswith("llama-bench: 4 lines around the CSV tables left aside (lines 1–2, 6–7")
        for n in tables.inputs[0].notes
    )


def test_the_devices_chosen_are_hardware_not_an_engine_flag(tmp_path):
    # the same GPUs, two of four chosen with -dev, then all four: BR012 named the difference
    # "engine flags"; it is the hardware the test ran on
    head = (
        "| model | params | backend | dev | test | t/s |\n"
        "| --- | ---: | --- | --- | ---: | ---: |\n"
    )
    rows = (
        "| qwen35moe 35B.A3B Q8_0 | 34.66 B | ROCm | ROCm0/ROCm1 | tg256 | 82.19 ± 1.16 |\n"
        "| qwen35moe 35B.A3B Q8_0 | 34.66 B | ROCm | ROCm0/ROCm1/ROCm2/ROCm3 | tg256 | "
        "87.51 ± 3.16 |\n"
    )
    path = tmp_path / "dev.md"
    path.write_text(head + rows + "\nbuild: 0893f50f2 (8746)\n")
    runs = api.load([path]).runs
    assert list(runs["hardware_name"]) == [
        "devices ROCm0/ROCm1",
        "devices ROCm0/ROCm1/ROCm2/ROCm3",
    ]
    assert not any("devices=" in f for flags in runs["engine_flags"] for f in flags)
    f = next(x for x in api.audit([path], select=["BR012"]).findings if x.subject == "audit")
    assert "hardware" in f.message and "engine flags" not in f.message


def test_the_sections_above_a_log_s_tables_tell_them_apart(tmp_path):
    # a NUMA study's Markdown log: each command's table under "### Raw Output", in sections
    # "## Command 1 - Generic CPU", "## NUMA Node 0", …, with every column alike. Only the
    # last heading was read ("Raw Output" for all), and BR016 called the placements repeats
    # 92.5% apart. The headings shared by every table are left out of the label
    table = (
        "| model | size | params | backend | threads | test | t/s |\n"
        "| --- | ---: | ---: | --- | ---: | ---: | ---: |\n"
        "| qwen2 7B Q4_K - Medium | 4.36 GiB | 7.62 B | CPU | 8 | tg128 | {rate} ± 0.00 |\n\n"
        "build: b4c0549a4 (9352)\n"
    )
    sections = [("Baseline Tests", "Command 1 - Generic CPU", "1.71")]
    sections += [
        ("NUMA Node Sweep", f"NUMA Node {n}", rate) for n, rate in ((0, "1.21"), (3, "0.93"))
    ]
    text = "# Llama.cpp Benchmark Results\n\n"
    for part, title, rate in sections:
        text += f"# {part}\n\n## {title}\n\n### Raw Output\n\n```\n{table.format(rate=rate)}```\n\n"
    path = tmp_path / "numa.md"
    path.write_text(text)
    labels = [e["label"] for e in api.load([path]).runs["extra"]]
    assert labels == [
        "Baseline Tests / Command 1 - Generic CPU",
        "NUMA Node Sweep / NUMA Node 0",
        "NUMA Node Sweep / NUMA Node 3",
    ]
    verdict = api.audit([path])
    assert len(verdict.groups) == 3
    assert not any("between repeats" in f.message for f in verdict.findings if f.code == "BR016")


def test_two_files_of_one_model_type_are_told_apart_by_their_size(tmp_path):
    # a gemma 4 E2B and its re-conversion, both "gemma4 E2B Q4_0", 2.44 and 2.43 GiB, in one
    # log: two models, not repeats of one (BR016 had passed them as 4 repeats 1.4% apart)
    row = "| gemma4 E2B Q4_0 | {size} GiB | 4.65 B | CPU | 8 | tg128 | {rate} ± 0.10 |\n"
    text = (
        "| model | size | params | backend | threads | test | t/s |\n"
        "| --- | ---: | ---: | --- | ---: | ---: | ---: |\n"
        + row.format(size="2.44", rate="24.15")
        + row.format(size="2.43", rate="24.10")
        + row.format(size="2.44", rate="24.20")
        + "\nbuild: fc07d781e (11243)\n"
    )
    path = tmp_path / "two-passes.md"
    path.write_text(text)
    assert list(api.load([path]).runs["model_name"]) == [
        "gemma4 E2B Q4_0, 2.44 GiB", "gemma4 E2B Q4_0, 2.43 GiB", "gemma4 E2B Q4_0, 2.44 GiB",
    ]  # fmt: skip
    assert sorted(len(g.runs) for g in api.audit([path]).groups) == [1, 2]


def test_a_forks_measurement_columns_are_no_settings_and_flash_attn_reads_alike(tmp_path):
    # a llama-bench fork (b6321) adds avg_ttft_ms, avg_e2e_ms, stddev_itl_ms, … columns: they
    # were "engine flags" (avg_e2e_ms=6313.008195), so no two runs shared a setting. Its JSON
    # writes flash_attn false where its CSV writes 0: one setting
    test = {
        "build_commit": "69f7e7116", "build_number": 6321, "cpu_info": "OpenBLAS, CPU",
        "gpu_info": "", "backends": "BLAS", "model_type": "granite 3B IQ4_XS - 4.25 bpw",
        "model_size": 1395281392, "model_n_params": 2533539840, "n_batch": 2048,
        "n_threads": 8, "flash_attn": False, "n_prompt": 0, "n_gen": 128, "n_depth": 0,
        "avg_ns": 5510000000, "stddev_ns": 30000000, "avg_ts": 23.23, "stddev_ts": 0.1,
        "avg_ttft_ms": 43.1, "stddev_ttft_ms": 1.2, "avg_e2e_ms": 5510.0, "avg_itl_ms": 43.0,
    }  # fmt: skip
    (tmp_path / "a.json").write_text(json.dumps([test]))
    other = test | {"flash_attn": 0, "avg_ts": 22.80, "avg_ttft_ms": 44.0, "avg_e2e_ms": 5614.0}
    header = list(other)
    (tmp_path / "b.csv").write_text(
        ",".join(header) + "\n" + ",".join(f'"{other[k]}"' for k in header) + "\n"
    )
    verdict = api.audit([tmp_path / "a.json", tmp_path / "b.csv"])
    (group,) = verdict.groups
    assert len(group.runs) == 2
    assert "avg_" not in group.why and "flash_attn=0" in group.why


def test_a_prompt_processing_claims_equation_counts_prompt_tokens(real):
    # lhl's pp512 test writes no output tokens: the Markdown, the HTML and the JSON printed
    # "0 tokens ÷ 0.11 s = 4,703.3 tok/s" where the terminal said 512 prompt tokens
    path = real(QUICK)
    verdict = api.audit([path], claim_texts=["aggregate=5007.64 tok/s N=1 run=pp512"])
    (claim,) = verdict.claims
    assert claim.equation == (
        "run pp512 (prompt processing): 512 prompt tokens ÷ 0.1022 s = 5,007.6 tok/s; "
        "claimed 5,007.64 = 1.00×"
    )


def test_two_vulkan_drivers_of_one_gpu_are_two_settings(tmp_path):
    # kyuz0's Strix Halo logs: one GPU under AMDVLK ("(AMD open-source driver)") and under
    # RADV ("(RADV GFX1151) (radv)"), as their device lines say; every column alike. They
    # were "sharing every setting" and BR016 read the 35% gap as a repeat's spread
    line = "ggml_vulkan: 0 = Radeon 8060S Graphics {driver} | uma: 1 | fp16: 1 | warp size: 64\n"
    table = (
        "| model | size | params | backend | ngl | test | t/s |\n"
        "| --- | ---: | ---: | --- | --: | ---: | ---: |\n"
        "| gemma3 12B Q8_0 | 13.40 GiB | 11.77 B | Vulkan | 99 | pp512 | {rate} ± 1.33 |\n"
        "\nbuild: 0253fb21f (9187)\n"
    )
    paths = []
    for name, driver, rate in (
        ("amdvlk.log", "(AMD open-source driver)", "679.86"),
        ("radv.log", "(RADV GFX1151) (radv)", "504.31"),
    ):
        path = tmp_path / name
        path.write_text(
            "ggml_vulkan: Found 1 Vulkan devices:\n"
            + line.format(driver=driver)
            + table.format(rate=rate)
        )
        paths.append(path)
    runs = api.load(paths).runs
    assert [f[-1] for f in runs["engine_flags"]] == [
        "driver=(AMD open-source driver)", "driver=(RADV GFX1151) (radv)",
    ]  # fmt: skip
    assert list(runs["hardware_name"]) == ["Radeon 8060S Graphics"] * 2
    assert len(api.audit(paths).groups) == 2


MARKDOWN_TABLE = (
    "| model | size | params | backend | threads | test | t/s |\n"
    "| --- | ---: | ---: | --- | ---: | ---: | ---: |\n"
    "| qwen35 27B Q4_K - Small | 14.76 GiB | 26.90 B | BLAS,MTL | 8 | tg1024 | 11.56 ± 0.07 |\n"
)
CSV_HEADER = (
    "build_commit,build_number,cpu_info,gpu_info,backends,model_filename,model_type,"
    "model_size,model_n_params,n_batch,n_ubatch,n_threads,n_gpu_layers,n_prompt,n_gen,"
    "n_depth,test_time,avg_ns,stddev_ns,avg_ts,stddev_ts"
)


def test_a_csv_row_beside_markdown_with_a_huge_field_is_no_internal_error(tmp_path):
    # a quoted field above the csv module's field limit (128 KiB) in a row under the CSV
    # header: "internal error ... field larger than field limit"
    trace = tmp_path / "write-up.md"
    trace.write_text(MARKDOWN_TABLE + "\n" + CSV_HEADER + '\n"' + "a" * 200_000 + '",b\n')
    verdict = api.audit([trace])
    (inp,) = verdict.inputs
    assert inp.left_out[0].startswith("left out: 1 llama-bench CSV table (line 5; 1 test)")


def test_many_csv_tables_beside_markdown_are_counted_not_all_listed(tmp_path):
    # 3,000 CSV headers: the note listed every line number
    trace = tmp_path / "write-up.md"
    trace.write_text(MARKDOWN_TABLE + ("\n" + CSV_HEADER) * 3000 + "\n")
    (inp,) = api.audit([trace]).inputs
    (note,) = inp.left_out
    assert note.startswith("left out: 3,000 llama-bench CSV tables (lines 5, 6, 7,")
    assert "and 2990 more; 0 tests)" in note
    assert len(note) < 300


#: Characters that end a line for Python's str.splitlines() but not in a file's numbering.
NOT_NEWLINES = "\u2028\u2029\x85\x0c\x0b\x1c\x1d\x1e\r"


def test_a_line_after_a_unicode_line_separator_keeps_its_number(tmp_path):
    # U+2028, NEL, form feed … split lines too: every later path:line was off
    log = f"llama-bench log{NOT_NEWLINES}the same line\n"
    bad_row = "| qwen35 27B Q4_K - Small | 14.76 GiB | 26.90 B | BLAS | tg64 | 9.5 ± 0.1 |\n"
    trace = tmp_path / "run.md"
    trace.write_text(log + MARKDOWN_TABLE + bad_row, newline="")
    with pytest.raises(TraceError) as err:
        api.load([trace])
    assert str(err.value) == (f"{trace}:5: the table row has 6 cells; expected 7, one per column")


def test_a_csv_row_of_a_log_holding_a_line_separator_is_one_row_at_its_line(tmp_path):
    fields = {
        "build_commit": "e107984bc", "build_number": "10788",
        "gpu_info": f"Arc{NOT_NEWLINES}B580", "backends": "SYCL", "n_threads": "19",
        "n_prompt": "0", "n_gen": "64", "avg_ns": "228365836", "stddev_ns": "276314",
        "avg_ts": "280.252349", "stddev_ts": "0.338305",
    }  # fmt: skip
    trace = tmp_path / "runner.log"
    trace.write_text(
        f"$ llama-bench -o csv{NOT_NEWLINES}\r\n"
        + ",".join(fields) + "\r\n"
        + ",".join(f'"{v}"' for v in fields.values()) + "\r\n",
        newline="",
    )  # fmt: skip
    tables = api.load([trace])
    assert list(tables.runs["source_line"]) == [3]
    assert list(tables.runs["hardware_name"]) == [f"Arc{NOT_NEWLINES}B580"]
