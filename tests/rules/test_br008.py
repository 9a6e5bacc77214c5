"""BR008 prefill-dominates-wall: how its sentences print the prefill time against the wall, and
the prefill rate a llama-bench pp test gives the pp+tg test of the same settings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from reporter import api


def _br008(tmp_path: Path, prompt: int, ttft: float, wall: float) -> dict[str, Any]:
    """One request of `prompt` tokens, prefilled at a probed 1,000 tok/s, over `wall` s."""
    lines = [
        {"kind": "probe", "what": "prefill_rate", "value": 1000, "unit": "tok/s"},
        {"kind": "run", "schema": "benchreport/1", "id": "r",
         "workload": {"concurrency": 1, "output_tokens": 2, "stop": "forced"}},
        {"kind": "request", "run": "r", "id": 0, "t_send": 0, "t_first": ttft, "t_end": wall,
         "output_tokens": 2, "prompt_tokens": prompt, "finish_reason": "length"},
    ]  # fmt: skip
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    (finding,) = [f for f in api.audit([str(path)]).to_dict()["findings"] if f["code"] == "BR008"]
    return finding


def test_a_sub_second_prefill_prints_below_its_wall_clock(tmp_path: Path) -> None:
    # 51 tokens ÷ 1,000 tok/s = 0.051 s of a 0.054 s wall: one decimal made it "0.1 s"
    finding = _br008(tmp_path, 51, 0.052, 0.054)
    assert finding["outcome"] == "fired"
    assert finding["message"].startswith(
        "prompt processing ≈ 0.051 s of the 0.054 s wall clock (94% > 30%)"
    )
    assert "prefill ≈ 51 ÷ 1,000 tok/s = 0.051 s" in finding["arithmetic"][1]
    assert finding["arithmetic"][2] == "share = 0.051 ÷ 0.054 s wall = 94%"


def test_prefill_and_wall_print_with_the_same_decimals(tmp_path: Path) -> None:
    finding = _br008(tmp_path, 2_000, 2.1, 2.5)
    assert finding["message"].startswith("prompt processing ≈ 2.00 s of the 2.50 s wall clock")
    assert finding["arithmetic"][2] == "share = 2.00 ÷ 2.50 s wall = 80%"


# A llama-bench table of a 671B MoE spread over several machines: the pp512+tg128 test spends
# half of its time reading the prompt, as its pp512 neighbour measures (512 ÷ 26.86 t/s).
TABLE = """\
| model                          |       size |     params | backend    | ngl | threads | fa | mmap |            test |                  t/s |
| ------------------------------ | ---------: | ---------: | ---------- | --: | ------: | -: | ---: | --------------: | -------------------: |
| deepseek2 671B Q2_K - Medium   | 211.03 GiB |   671.03 B | Vulkan,RPC | 125 |      32 |  1 |    0 |           pp512 |         26.86 ± 0.35 |
| deepseek2 671B Q2_K - Medium   | 211.03 GiB |   671.03 B | Vulkan,RPC | 125 |      32 |  1 |    0 |           tg128 |          8.25 ± 0.04 |
| deepseek2 671B Q2_K - Medium   | 211.03 GiB |   671.03 B | Vulkan,RPC | 125 |      32 |  1 |    0 |     pp512+tg128 |         17.22 ± 0.04 |
"""  # noqa: E501


def _br008_of_table(path: Path) -> dict[str, object]:
    verdict = api.audit([path], select=["BR008"])
    return {str(f.subject): f for f in verdict.findings}


def test_a_prompt_test_gives_the_combined_test_its_prefill_rate(tmp_path: Path) -> None:
    path = tmp_path / "bench.md"
    path.write_text(TABLE)
    f = _br008_of_table(path)["pp512+tg128"]
    assert str(f.outcome) == "fired"  # type: ignore[attr-defined]
    # 640 tokens ÷ 17.22 t/s = 37.17 s, of which 512 ÷ 26.86 = 19.06 s read the prompt
    assert f.message == (  # type: ignore[attr-defined]
        "prompt processing ≈ 19.06 s of the 37.17 s wall clock (51% > 30%): the 3.4 tok/s "
        "measures prefill"
    )
    assert (
        "rate from the prompt-processing test pp512 of the same prompt, context and "
        in (
            f.arithmetic[1]  # type: ignore[attr-defined]
        )
    )


def test_a_prompt_test_of_other_settings_gives_no_rate(tmp_path: Path) -> None:
    path = tmp_path / "bench.md"
    # the pp512 row ran with flash attention off: not the combined test's settings
    path.write_text(TABLE.replace("|  1 |    0 |   ", "|  0 |    0 |   ", 1))
    f = _br008_of_table(path)["pp512+tg128:flash_attn=1"]
    assert str(f.outcome) == "undecidable"  # type: ignore[attr-defined]


def _one_request_file(path: Path, run: str, probe: float | None) -> Path:
    lines: list[dict[str, Any]] = []
    if probe is not None:
        lines.append({"kind": "probe", "what": "prefill_rate", "value": probe, "unit": "tok/s"})
    lines += [
        {"kind": "run", "schema": "benchreport/1", "id": run,
         "workload": {"concurrency": 1, "output_tokens": 2, "stop": "forced"}},
        {"kind": "request", "run": run, "id": 0, "t_send": 0, "t_first": 0.5, "t_end": 1.0,
         "output_tokens": 2, "prompt_tokens": 400, "finish_reason": "length"},
    ]  # fmt: skip
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def test_a_files_probe_is_the_prefill_rate_of_its_own_runs_only(tmp_path: Path) -> None:
    # each file names the prefill rate of its own machine: audited together, the first
    # file's probe must not become the second file's rate, nor a rate of a file with none
    a = _one_request_file(tmp_path / "a.jsonl", "a", 1000)
    b = _one_request_file(tmp_path / "b.jsonl", "b", 8000)
    c = _one_request_file(tmp_path / "c.jsonl", "c", None)
    runs = {r["id"]: r for r in api.audit([a, b, c]).to_dict()["runs"]}
    assert runs["a"]["prefill_rate"] == 1000
    assert runs["b"]["prefill_rate"] == 8000
    assert runs["b"]["prefill_rate_source"].endswith("b.jsonl:1")
    assert "probe" not in (runs["c"]["prefill_rate_source"] or "")


def test_a_file_of_probes_alone_gives_its_rate_to_every_run(tmp_path: Path) -> None:
    probes = tmp_path / "probes.jsonl"
    probes.write_text(
        json.dumps({"kind": "probe", "what": "prefill_rate", "value": 2000, "unit": "tok/s"}) + "\n"
    )
    c = _one_request_file(tmp_path / "c.jsonl", "c", None)
    (run,) = api.audit([probes, c]).to_dict()["runs"]
    assert run["prefill_rate"] == 2000


def test_a_run_where_nothing_completed_is_not_said_to_hold_no_prefill(tmp_path: Path) -> None:
    # vLLM bench serve with every request failed: total_input_tokens 0 counts the prompts of
    # completed requests only, not the prompts sent
    from tests.rules.test_br003 import ALL_FAILED

    path = tmp_path / "failed.json"
    path.write_text(json.dumps(ALL_FAILED))
    (finding,) = [f for f in api.audit([str(path)]).to_dict()["findings"] if f["code"] == "BR008"]
    assert finding["outcome"] == "undecidable"
    assert finding["message"] == (
        "no request completed: how much of the wall clock went to prompts is unknown"
    )
