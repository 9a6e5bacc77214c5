"""llama-bench JSON / JSONL / CSV and llama-batched-bench: repetitions, depth sweeps, points."""

from __future__ import annotations

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
        "llama-batched-bench: 3 point(s); 5 log line(s) that are not JSON were left aside"
    ]
    assert list(tables.runs["run"]) == ["pp128+tg128:pl1", "pp128+tg128:pl2", "pp128+tg128:pl4"]
    assert list(tables.runs["concurrency"]) == [1, 2, 4]
    assert tables.runs["group"].nunique() == 1  # a sweep over N
    s = stats_of(tables)
    assert [round(x, 2) for x in s["aggregate_tps"]] == [47.18, 79.85, 127.30]  # pl·tg ÷ t
    assert [round(x, 2) for x in s["median_decode_tps"]] == [50.0, 44.14, 37.54]  # tg ÷ t_tg
    assert list(s["in_flight"]) == [1.0, 2.0, 4.0]
    assert run(tables, "pp128+tg128:pl4")["summary"]["tool_aggregate_tps"] == 150.146628


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
