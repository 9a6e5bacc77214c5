"""ik_llama.cpp's llama-sweep-bench Markdown table: each row read as the two phases it times."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from click.testing import CliRunner

from reporter import api
from reporter.adapters import llama_sweep
from reporter.cli import main
from reporter.errors import TraceError
from tests.adapters.conftest import HERE, run, stats_of

FIXTURE = HERE / "llama-sweep-bench.md"
SETTINGS = (
    "main: n_kv_max = 4096, n_batch = 2048, n_ubatch = 512, flash_attn = 1, n_gpu_layers = 99, "
    "n_threads = 16, n_threads_batch = 16"
)
HEADER = (
    "|    PP |     TG |   N_KV |   T_PP s | S_PP t/s |   T_TG s | S_TG t/s |\n"
    "|-------|--------|--------|----------|----------|----------|----------|\n"
)


def sweep_row(pp: int, tg: int, n_kv: int, t_pp_us: int, t_tg_us: int) -> str:
    """A row as llama-sweep-bench prints it: times in single precision from microseconds,
    rates from the unrounded times, then its own printf format."""
    t_pp = np.float32(t_pp_us) / np.float32(1e6)
    t_tg = np.float32(t_tg_us) / np.float32(1e6)
    speed_pp, speed_tg = np.float32(pp) / t_pp, np.float32(tg) / t_tg
    row = "|%6d | %6d | %6d | %8.3f | %8.2f | %8.3f | %8.2f |\n"
    return row % (pp, tg, n_kv, t_pp, speed_pp, t_tg, speed_tg)


def json_point(pp: int, tg: int, n_kv: int, t_pp_us: int, t_tg_us: int) -> dict:
    """A point as llama-sweep-bench --output-format jsonl prints it (%f of each float)."""
    t_pp = np.float32(t_pp_us) / np.float32(1e6)
    t_tg = np.float32(t_tg_us) / np.float32(1e6)
    printf = (
        '{"n_kv_max": 4096, "n_batch": 2048, "n_ubatch": 512, "flash_attn": 1, '
        '"n_gpu_layers": 0, "n_threads": 16, "n_threads_batch": 16, "pp": %d, "tg": %d, '
        '"n_kv": %d, "t_pp": %f, "speed_pp": %f, "t_tg": %f, "speed_tg": %f }'
    )
    line = printf % (pp, tg, n_kv, t_pp, np.float32(pp) / t_pp, t_tg, np.float32(tg) / t_tg)
    return json.loads(line)


def test_a_sweep_is_read_as_a_prompt_and_a_decode_run_per_row():
    tables = api.load([FIXTURE])
    depths = [0, 512, 1024, 1536, 2048, 2560, 3072, 3584]
    ids = [f"{t}@d{d}" if d else t for d in depths for t in ("pp512", "tg128")]
    assert list(tables.runs["run"]) == ids
    assert set(tables.runs["concurrency"]) == {1}
    assert list(tables.runs["phase"]) == ["prompt", "generation"] * 8
    # a decode run's context is N_KV; a prompt run's, as llama-bench's pp tests, adds its PP
    assert list(tables.runs["context_tokens"]) == [c for d in depths for c in (d + 512, d)]
    assert list(tables.runs["source_line"]) == [n for n in range(11, 19) for _ in range(2)]
    # every run a group of its own: the rows differ in context and are no repeats
    assert tables.runs["group"].nunique() == 16
    s = stats_of(tables)
    decode = s.loc[[i for i in ids if i.startswith("tg")]]
    # TG ÷ T_TG from the printed times, to the printed precision of S_TG
    assert [round(x, 2) for x in decode["aggregate_tps"]] == [
        39.80, 38.27, 36.92, 35.58, 34.40, 33.25, 32.23, 31.20,
    ]  # fmt: skip
    assert list(decode["wall_s"]) == [3.216, 3.345, 3.467, 3.598, 3.721, 3.85, 3.972, 4.102]
    prompt = s.loc[[i for i in ids if i.startswith("pp")]]
    assert [round(x, 1) for x in prompt["prompt_tps"]] == [
        593.3, 568.3, 540.1, 516.6, 493.3, 473.2, 453.1, 437.2,
    ]  # fmt: skip
    # the stated figures as printed, each beside its own phase
    assert run(tables, "tg128@d3584")["summary"]["tool_aggregate_tps"] == 31.21
    assert run(tables, "pp512@d3584")["summary"]["tool_aggregate_tps"] == 437.14
    assert run(tables, "tg128")["engine_flags"] == [
        "n_kv_max=4096", "n_batch=2048", "n_ubatch=512", "flash_attn=1", "n_gpu_layers=0",
        "n_threads=16", "n_threads_batch=16",
    ]  # fmt: skip
    assert tables.inputs[0].notes == [
        "llama-sweep-bench: 8 rows read as 16 runs, each row's prompt phase (PP ÷ T_PP) and "
        "generation phase (TG ÷ T_TG), which the tool times apart; one sequence at context "
        "depth N_KV (the runs' n_depth); times rounded to 1 ms and rates to 0.01 t/s as "
        "printed; a row is one measurement (newer builds' -nrep averages the first row's, "
        "which the table does not show)",
        "llama-sweep-bench: S_PP and S_TG of every row agree with PP ÷ T_PP and TG ÷ T_TG at "
        "the printed rounding",
        "llama-sweep-bench: 6 lines around the tables left aside (lines 1, 3–5, 7, 20: log "
        "output, the settings line read for the table's settings)",
    ]


def test_the_audit_speaks_of_single_streams_and_of_decode_against_context():
    verdict = api.audit([FIXTURE])
    found = {(f.code, f.subject, f.outcome.value): f for f in verdict.findings}
    codes = {(code, outcome) for code, _, outcome in found}
    # one sequence: no ladder, no admission queue, no slope over N is looked for
    assert ("BR003", "not-applicable") in codes and ("BR003", "passed") not in codes
    assert ("BR005", "not-applicable") in codes and ("BR005", "passed") not in codes
    # no time covers a whole row: the wall is not explained by default
    assert {o for c, _, o in found if c == "BR009"} == {"undecidable"}
    assert all(r.concurrency == 1 for r in verdict.runs)
    (sweep,) = [f for f in verdict.findings if f.code == "BR017" and f.fired]
    assert sweep.message == (
        "decode falls from 39.8 tok/s at 0 tokens of context to 31.2 at 3,584 (22% slower): "
        "a decode figure holds only at its context length"
    )


def test_rates_consistent_with_their_times_at_the_printed_rounding_are_never_flagged():
    # rows printed by the tool's own arithmetic, over the magnitudes tables show (1 ms to
    # minutes per phase, tens to thousands of tokens): none is said to disagree
    rng = random.Random(5)
    for _ in range(20000):
        tokens = rng.choice([1, 16, 64, 128, 256, 512, 1024, 2048, 4096])
        micros = rng.randint(600, 200_000_000)
        printed = sweep_row(tokens, tokens, 0, micros, micros).split("|")
        time, rate = float(printed[4]), float(printed[5])
        shape = llama_sweep.SWEEP_MARKDOWN
        assert llama_sweep._rate_check(1, shape, "pp", tokens, time, rate) is None
        point = json_point(tokens, tokens, 0, micros, micros)
        shape = llama_sweep.SWEEP_JSON_LINES
        assert (
            llama_sweep._rate_check(1, shape, "pp", tokens, point["t_pp"], point["speed_pp"])
            is None
        )


def test_a_rate_its_time_does_not_give_is_left_out_with_the_arithmetic(tmp_path):
    # the last row's S_TG edited from 52.94 to 60.00: named at its line with the arithmetic,
    # on stderr too, and not shown as the tool's figure; the audit itself goes on
    trace = tmp_path / "sweep.md"
    trace.write_text(
        SETTINGS + "\n\n" + HEADER + sweep_row(512, 128, 0, 1100412, 2311073)
        + "|   512 |    128 |    512 |    1.431 |   357.87 |    2.418 |    60.00 |\n"
    )  # fmt: skip
    note = (
        "left out: line 6: S_TG 60.00 is not TG ÷ T_TG at the printed rounding: 128 ÷ 2.418 "
        "s = 52.94 t/s, and a time printed as 2.418 s gives 52.92 to 52.96 t/s; the audit's "
        "figures use T_TG, not this S_TG"
    )
    tables = api.load([trace])
    assert note in tables.inputs[0].notes
    assert "summary" in run(tables, "tg128@d512")
    assert "tool_aggregate_tps" not in run(tables, "tg128@d512")["summary"]
    assert run(tables, "pp512@d512")["summary"]["tool_aggregate_tps"] == 357.87
    result = CliRunner().invoke(main, ["audit", "--no-html", str(trace)])
    assert result.exit_code == 0
    assert result.stderr == f"{trace}: {note}\n"


def test_a_malformed_row_is_named_at_its_line_and_the_audit_refused(tmp_path):
    trace = tmp_path / "sweep.md"
    trace.write_text(
        SETTINGS + "\n\n" + HEADER
        + "|   512 |    128 |      0 |    0.863 |   593.00 |    3.216 |\n"
        + "|   512 |    128 |    512 |    n/a |   568.02 |    3.345 |    38.27 |\n"
    )  # fmt: skip
    with pytest.raises(TraceError):
        api.load([trace])
    result = CliRunner().invoke(main, ["audit", "--no-html", str(trace)])
    assert result.exit_code == 2
    assert result.stderr == (
        f"{trace}:5: the table row has 6 cells; expected 7, one per column (PP, TG, N_KV, "
        "T_PP s, S_PP t/s, T_TG s, S_TG t/s)\n"
        f'{trace}:6: "T_PP s" is "n/a"; expected a number of seconds ≥ 0 (llama-sweep-bench '
        "row)\n"
    )


def test_the_header_is_recognised_exactly(tmp_path):
    # pasted with a leading space, between prose, without the settings line: read
    pasted = tmp_path / "pasted.md"
    pasted.write_text(
        "Here the sweep-bench results:\n\n "
        + HEADER.replace("\n|", "\n |")
        + sweep_row(2048, 64, 0, 263783, 247525)
        + "\nThanks!\n"
    )
    assert list(api.load([pasted]).runs["run"]) == ["pp2048", "tg64"]
    # another table with these columns and one more is no llama-sweep-bench table: the file
    # is refused as before
    other = tmp_path / "other.md"
    other.write_text(
        "|    PP |     TG |   N_KV |   T_PP s | S_PP t/s |   T_TG s | S_TG t/s |    X |\n"
        "|-------|--------|--------|----------|----------|----------|----------|------|\n"
        "|   512 |    128 |      0 |    0.863 |   593.00 |    3.216 |    39.80 |    1 |\n"
    )
    result = CliRunner().invoke(main, ["audit", "--no-html", str(other)])
    assert result.exit_code == 2
    assert result.stderr == (
        f"{other}: the file is neither JSON, JSON Lines nor CSV; expected a file written by one "
        "of benchreport, guidellm, aiperf, genai-perf, llmperf, sglang, vllm, llama-bench; pass "
        "--format NAME, or --format custom --mapping FILE for other logs\n"
    )


def test_the_memory_columns_are_named_as_not_read(tmp_path):
    trace = tmp_path / "sweep.md"
    trace.write_text(
        SETTINGS + "\n\n"
        "|    PP |     TG |   N_KV |   T_PP s | S_PP t/s |   T_TG s | S_TG t/s |    RSS HWM |"
        " VRAM delta |\n"
        "|-------|--------|--------|----------|----------|----------|----------|------------|"
        "------------|\n"
        + sweep_row(512, 128, 0, 863412, 3216040).rstrip("\n")
        + "    21874.3 |        n/a |\n"
    )  # fmt: skip
    tables = api.load([trace])
    assert list(tables.runs["run"]) == ["pp512", "tg128"]
    assert "llama-sweep-bench: the RSS HWM and VRAM delta columns are not read" in (
        tables.inputs[0].notes
    )


def test_two_tables_of_one_paste_are_not_taken_for_repeats(tmp_path):
    # a before/after comment: each table under its heading, the same depths in both
    trace = tmp_path / "sweep.md"
    trace.write_text(
        "### main branch\n\n" + HEADER + sweep_row(512, 128, 0, 1488000, 7112000)
        + "\n### this PR\n\n" + HEADER + sweep_row(512, 128, 0, 1388000, 6912000)
    )  # fmt: skip
    tables = api.load([trace])
    assert list(tables.runs["run"]) == [
        "pp512:label=main_branch", "tg128:label=main_branch",
        "pp512:label=this_PR", "tg128:label=this_PR",
    ]  # fmt: skip
    assert tables.runs["group"].nunique() == 4
    verdict = api.audit([trace])
    assert not [f for f in verdict.findings if f.code == "BR016" and f.outcome.value != "fired"]


def test_a_sweep_table_in_a_llama_bench_log_is_said_to_be_left_out(tmp_path):
    trace = tmp_path / "bench.log"
    trace.write_text(
        "| model                          |       size |     params | backend    | ngl |"
        "            test |                  t/s |\n"
        "| ------------------------------ | ---------: | ---------: | ---------- | --: |"
        " --------------: | -------------------: |\n"
        "| qwen2 7B Q4_K - Medium         |   4.36 GiB |     7.62 B | CUDA       |  99 |"
        "           tg128 |        130.21 ± 0.50 |\n"
        "\n" + HEADER + sweep_row(512, 128, 0, 863412, 3216040)
    )  # fmt: skip
    (inp,) = api.load([trace]).inputs
    assert [n for n in inp.notes if n.startswith("left out: ")] == [
        "left out: 1 llama-sweep-bench table (line 5; 1 row): not read with the llama-bench "
        "tables; give them as a file of their own to audit them"
    ]


def test_tables_without_headings_are_told_apart_by_their_place(tmp_path):
    trace = tmp_path / "sweep.md"
    trace.write_text(
        HEADER + sweep_row(512, 128, 0, 1488000, 7112000)
        + "\n" + HEADER + sweep_row(512, 128, 0, 1388000, 6912000)
    )  # fmt: skip
    assert list(api.load([trace]).runs["run"]) == [
        "pp512:label=table_1", "tg128:label=table_1", "pp512:label=table_2", "tg128:label=table_2",
    ]  # fmt: skip


def test_the_json_lines_of_a_sweep_give_the_runs_of_its_table(tmp_path):
    # the fixture's points as --output-format jsonl prints them, between log lines: the same
    # runs, settings and figures as the Markdown, to the Markdown's precision
    micros = [
        (863412, 3216040), (901377, 3344871), (948120, 3467312), (990506, 3598023),
        (1037781, 3721118), (1082344, 3850447), (1129902, 3972310), (1171256, 4101779),
    ]  # fmt: skip
    points = [json_point(512, 128, 512 * i, a, b) for i, (a, b) in enumerate(micros)]
    trace = tmp_path / "sweep.jsonl"
    trace.write_text(
        "llama_new_context_with_model: n_ctx = 4096\n"
        + "".join(json.dumps(p) + "\n" for p in points)
        + "llama_print_timings: load time = 1234.56 ms\n"
    )
    jsonl, markdown = api.load([trace]), api.load([FIXTURE])
    assert list(jsonl.runs["run"]) == list(markdown.runs["run"])
    assert list(jsonl.runs["engine_flags"]) == list(markdown.runs["engine_flags"])
    assert list(jsonl.runs["context_tokens"]) == list(markdown.runs["context_tokens"])
    # the JSON Lines keep the microseconds the table rounds to 1 ms (0.12% of 0.863 s)
    s, t = stats_of(jsonl), stats_of(markdown)
    for column in ("aggregate_tps", "prompt_tps"):
        assert list(s[column].dropna()) == pytest.approx(list(t[column].dropna()), rel=1.2e-3)
    assert jsonl.inputs[0].notes[1:] == [
        "llama-sweep-bench: speed_pp and speed_tg of every point agree with pp ÷ t_pp and tg ÷ "
        "t_tg at the printed rounding",
        "llama-sweep-bench: 2 log lines that are not JSON left aside",
    ]


def test_a_json_lines_point_that_cannot_be_read_is_named_at_its_line(tmp_path):
    trace = tmp_path / "sweep.jsonl"
    point = json_point(512, 128, 0, 863412, 3216040)
    trace.write_text(json.dumps(point) + "\n" + json.dumps({**point, "t_tg": "fast"}) + "\n")
    with pytest.raises(TraceError) as err:
        api.load([trace])
    assert str(err.value) == (
        f'{trace}:2: "t_tg" is "fast"; expected a number of seconds ≥ 0 (llama-sweep-bench point)'
    )
