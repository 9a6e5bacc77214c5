"""The file's own aggregate beside total ÷ wall: the verdict carries it, the run tables show it
in a "stated" column when a file states one, and a line below the terminal and Markdown tables
names each run whose stated figure differs from total ÷ wall by more than 2%."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from reporter import api
from reporter.model import FORMAT_VERSION, verdict_from_dict
from reporter.render.html import render_html
from reporter.render.json import render_json
from reporter.render.markdown import render_markdown
from reporter.render.text import render_text

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "schemas" / f"verdict-{FORMAT_VERSION}.schema.json").read_text())

#: A bench_one_batch_server line of the shape SGLang writes (streamed: last_ttft and
#: last_gen_throughput present): output_throughput = 1016 × 8192 ÷ (2,688.91 − 250.20) s.
ONE_BATCH_SERVER = {
    "run_name": "default", "batch_size": 1016, "input_len": 1024, "output_len": 8192,
    "latency": 2688.9099, "input_throughput": 4158.13, "output_throughput": 3412.91,
    "overall_throughput": 3482.25, "last_ttft": 250.2049, "last_gen_throughput": 425.93,
    "acc_length": -1.0, "cache_hit_rate": None,
}  # fmt: skip
RUN = "default:b1016:in1024:out8192"
HOW = (
    "batch_size × output_len ÷ (latency − the batch's last first-token time): it leaves out "
    "the prefill and any wait"
)
LINE = (
    f"{RUN}: the file states 3,412.91 tok/s (output_throughput), 1.10× total ÷ wall "
    f"(3,095.3): {HOW}"
)


def _vllm_summary(duration: float, output_tokens: int) -> dict[str, object]:
    """A `vllm bench serve` result, summary only: output_throughput is total ÷ duration."""
    return {
        "date": "20251021-203116", "endpoint_type": "vllm", "backend": "vllm",
        "model_id": "Qwen/Qwen3-8B", "tokenizer_id": "Qwen/Qwen3-8B", "num_prompts": 64,
        "request_rate": "inf", "burstiness": 1.0, "max_concurrency": 8, "duration": duration,
        "completed": 64, "total_input_tokens": 65536, "total_output_tokens": output_tokens,
        "request_throughput": 64 / duration, "output_throughput": output_tokens / duration,
        "mean_ttft_ms": 80.0, "median_ttft_ms": 78.0, "mean_tpot_ms": 12.0,
        "median_tpot_ms": 12.0, "mean_e2el_ms": 3100.0,
    }  # fmt: skip


def _write(tmp_path: Path, name: str, *lines: dict[str, object]) -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def test_a_decode_only_figure_is_shown_beside_total_over_wall(tmp_path):
    path = _write(tmp_path, "result.jsonl", ONE_BATCH_SERVER)
    verdict = api.audit([path])
    (run,) = verdict.runs
    data = verdict.to_dict()["runs"][0]
    assert data["stated_aggregate_tps"] == 3412.91
    assert data["stated_aggregate_field"] == "output_throughput"
    assert data["stated_aggregate_how"] == HOW
    assert data["stated_aggregate_note"] == LINE[len(RUN) + 2 :]
    assert round(run.aggregate_tps or 0, 1) == 3095.3

    text = render_text(verdict)
    header = next(line for line in text.splitlines() if line.strip().startswith("run "))
    assert "stated" in header
    assert "3,412.9" in text
    assert f"  {LINE}" in text.splitlines()

    md = render_markdown(verdict)
    assert "| tokens ÷ wall (tok/s) | stated (tok/s) |" in md
    assert "| 3,095.3 | 3,412.9 |" in md
    # the line as Markdown: escaped ("(" and ")" are syntax), one list item
    assert (
        "- default:b1016:in1024:out8192: the file states 3,412.91 tok/s \\(output\\_throughput\\)"
        ", 1.10× total ÷ wall \\(3,095.3\\): batch\\_size × output\\_len ÷ \\(latency − the "
        "batch's last first-token time\\): it leaves out the prefill and any wait" in md
    )

    html = render_html(verdict)
    assert "<th>stated</th>" in html
    assert '<td class="num">3,412.9</td>' in html


def test_a_figure_that_is_total_over_wall_gets_the_column_and_no_line(tmp_path):
    path = tmp_path / "vllm.json"
    path.write_text(json.dumps(_vllm_summary(20.0, 31000)))
    verdict = api.audit([path])
    (run,) = verdict.runs
    assert run.stated_aggregate_tps == 1550.0
    assert run.stated_aggregate_field == "output_throughput"
    assert run.stated_aggregate_how is None  # vLLM's output_throughput is total ÷ duration
    assert run.stated_aggregate_note is None
    text = render_text(verdict)
    assert "stated" in text
    assert "the file states" not in text
    md = render_markdown(verdict)
    assert "stated (tok/s)" in md
    assert "the file states" not in md


def test_a_native_trace_has_no_stated_column():
    verdict = api.audit([ROOT / "traces" / "case-a-ladder.jsonl"])
    assert all(r.stated_aggregate_tps is None for r in verdict.runs)
    assert all(r["stated_aggregate_tps"] is None for r in verdict.to_dict()["runs"])
    text = render_text(verdict)
    header = next(line for line in text.splitlines() if line.strip().startswith("run "))
    assert "stated" not in header
    assert "the file states" not in text
    md = render_markdown(verdict)
    assert "| tokens ÷ wall (tok/s) | Σ reported |" in md
    assert "stated (tok/s)" not in md
    assert "<th>stated</th>" not in render_html(verdict)


def test_a_difference_without_a_definition_gives_only_the_numbers(tmp_path):
    # a vLLM file whose output_throughput is not its total ÷ duration (edited, or a tool bug):
    # the adapter knows no other definition, so the line says the numbers and the ratio only
    doc = _vllm_summary(20.0, 31000) | {"output_throughput": 1800.0}
    path = tmp_path / "vllm.json"
    path.write_text(json.dumps(doc))
    (run,) = api.audit([path]).runs
    assert run.stated_aggregate_note == (
        "the file states 1,800.00 tok/s (output_throughput), 1.16× total ÷ wall (1,550.0)"
    )


def test_a_difference_within_two_percent_is_no_line(tmp_path):
    doc = _vllm_summary(20.0, 31000) | {"output_throughput": 1550.0 * 1.019}
    path = tmp_path / "vllm.json"
    path.write_text(json.dumps(doc))
    (run,) = api.audit([path]).runs
    assert run.stated_aggregate_note is None


def test_the_lines_are_capped_in_markdown(tmp_path):
    lines = [ONE_BATCH_SERVER | {"run_name": f"r{i:02d}"} for i in range(9)]
    verdict = api.audit([_write(tmp_path, "result.jsonl", *lines)])
    md = render_markdown(verdict)
    assert md.count("the file states") == 5
    assert "- … and 4 more in the HTML report" in md
    # the terminal lists them all, as it lists every run
    assert render_text(verdict).count("the file states") == 9


def test_a_batched_bench_points_speed_tg_is_the_generation_phase(tmp_path):
    # llama-batched-bench: speed_tg = pl × tg ÷ t_tg, without t_pp
    point = {
        "n_kv_max": 4096, "n_batch": 2048, "n_ubatch": 512, "flash_attn": 0,
        "is_pp_shared": 0, "n_gpu_layers": 99, "n_threads": 8, "n_threads_batch": 8,
        "pp": 128, "tg": 128, "pl": 1, "n_kv": 256, "t_pp": 0.233, "speed_pp": 549.36,
        "t_tg": 3.503, "speed_tg": 36.54, "t": 3.736, "speed": 68.52,
    }  # fmt: skip
    (run,) = api.audit([_write(tmp_path, "batched.jsonl", point)]).runs
    assert run.stated_aggregate_field == "speed_tg"
    assert run.stated_aggregate_how == (
        "pl × tg ÷ t_tg: the generation phase alone, without the prompt processing (t_pp)"
    )
    assert run.stated_aggregate_note is not None
    assert run.stated_aggregate_note.startswith(
        "the file states 36.54 tok/s (speed_tg), 1.07× total ÷ wall (34.3)"
    )


def test_the_reports_are_built_from_the_json_alone(tmp_path):
    # the column and the line come from the verdict's keys, which a verdict read back keeps
    verdict = api.audit([_write(tmp_path, "result.jsonl", ONE_BATCH_SERVER)])
    back = verdict_from_dict(json.loads(render_json(verdict)))
    assert render_text(back) == render_text(verdict)
    assert render_markdown(back) == render_markdown(verdict)
    # a verdict written before the keys were added reads back without them
    data = json.loads(render_json(verdict))
    for run in data["runs"]:
        for key in [k for k in run if k.startswith("stated_aggregate_")]:
            del run[key]
    (old,) = verdict_from_dict(data).runs
    assert old.stated_aggregate_tps is None and old.stated_aggregate_note is None
    validator = jsonschema.Draft202012Validator(SCHEMA)
    assert not list(validator.iter_errors(data))
