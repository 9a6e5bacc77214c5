"""llama-batched-bench's Markdown table: each row read as the JSON Lines point it prints."""

from __future__ import annotations

import json

import pytest

from reporter import api
from reporter.errors import TraceError
from tests.adapters.conftest import HERE, run, stats_of

SETTINGS = (
    "main: n_kv_max = 8192, n_batch = 2048, n_ubatch = 512, flash_attn = 1, is_pp_shared = 0, "
    "n_gpu_layers = 99, n_threads = 12, n_threads_batch = 12"
)
HEADER = (
    "|    PP |     TG |    B |   N_KV |   T_PP s | S_PP t/s |   T_TG s | S_TG t/s |      T s |"
    "    S t/s |\n"
    "|-------|--------|------|--------|----------|----------|----------|----------|----------|"
    "----------|\n"
)


def markdown_row(p: dict) -> str:
    """A point as llama-batched-bench prints it (its own printf format, kept as written)."""
    row = "|%6d | %6d | %4d | %6d | %8.3f | %8.2f | %8.3f | %8.2f | %8.3f | %8.2f |\n"
    return row % (
        p["pp"], p["tg"], p["pl"], p["n_kv"], p["t_pp"], p["speed_pp"], p["t_tg"],
        p["speed_tg"], p["t"], p["speed"],
    )  # fmt: skip


def jsonl_points() -> list[dict]:
    lines = (HERE / "llama-batched-bench.log").read_text().splitlines()
    return [json.loads(line) for line in lines if line.startswith("{")]


def test_the_markdown_of_a_sweep_is_read_as_its_json_lines(tmp_path):
    # the fixture's points printed as the tool prints them: times to 1 ms (exact here), rates
    # to 0.01 t/s; the runs, settings and figures are those of the JSON Lines
    trace = tmp_path / "batched.log"
    trace.write_text(
        "build: 6000 (4a1b2c3d)\n" + SETTINGS + "\n\n" + HEADER
        + "".join(markdown_row(p) for p in jsonl_points()) + "\nllama_perf_context_print: done\n"
    )  # fmt: skip
    markdown, jsonl = api.load([trace]), api.load([HERE / "llama-batched-bench.log"])
    assert list(markdown.runs["run"]) == list(jsonl.runs["run"])
    assert list(markdown.runs["source_line"]) == [6, 7, 8]
    assert list(markdown.runs["concurrency"]) == [1, 2, 4]
    assert list(markdown.runs["group"]) == list(jsonl.runs["group"])
    s, t = stats_of(markdown), stats_of(jsonl)
    for column in ("aggregate_tps", "median_decode_tps", "in_flight", "wall_s"):
        assert list(s[column]) == list(t[column])
    assert [round(x, 2) for x in s["aggregate_tps"]] == [47.18, 79.85, 127.30]  # pl·tg ÷ t
    # the stated figure as printed: 150.15, where the JSON Lines hold 150.146628
    assert run(markdown, "pp128+tg128:pl4")["summary"]["tool_aggregate_tps"] == 150.15
    assert markdown.inputs[0].notes == [
        "llama-batched-bench: 3 points; llama-batched-bench's Markdown table: times rounded to "
        "1 ms and rates to 0.01 t/s as printed; --output-format jsonl keeps them whole",
        "llama-batched-bench: 3 lines around the tables left aside (lines 1–2, 10: log "
        "output, the settings line read for the table's settings)",
    ]


def test_a_table_of_builds_before_the_total_columns_takes_its_wall_from_its_phases(tmp_path):
    # older builds printed eight columns, without T s and S t/s: the wall is t_pp + t_tg
    trace = tmp_path / "batched.md"
    trace.write_text(
        "main: n_kv_max = 16384, n_batch = 2048, n_ubatch = 512\n\n"
        "|    PP |     TG |    B |   N_KV |   T_PP s | S_PP t/s |   T_TG s | S_TG t/s |\n"
        "|-------|--------|------|--------|----------|----------|----------|----------|\n"
        "|   512 |    128 |    1 |    640 |    0.090 |  5683.51 |    0.983 |   130.21 |\n"
    )
    tables = api.load([trace])
    assert list(tables.runs["run"]) == ["pp512+tg128:pl1"]
    assert stats_of(tables).loc["pp512+tg128:pl1", "wall_s"] == pytest.approx(1.073)
    assert run(tables, "pp512+tg128:pl1")["group"] == (
        "batched pp512 tg128 n_kv_max=16384 n_batch=2048 n_ubatch=512"
    )


def test_a_row_that_cannot_be_read_is_named_at_its_line(tmp_path):
    trace = tmp_path / "batched.md"
    trace.write_text(
        SETTINGS + "\n\n" + HEADER
        + "|   512 |    128 |    1 |    640 |    0.300 |  1706.67 |    1.556 |\n"
        + "|   512 |    128 |    2 |   1280 |    n/a |  1735.59 |    2.411 |   106.18 |    3.001 |"
        "   426.52 |\n"
    )  # fmt: skip
    with pytest.raises(TraceError) as err:
        api.load([trace])
    first, second = str(err.value).splitlines()
    assert first == f"{trace}:5: the table row has 7 cells; expected 10, one per column"
    assert second.startswith(f"{trace}:6: ")
    assert "t_pp" in second
