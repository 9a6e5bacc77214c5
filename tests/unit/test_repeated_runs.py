"""A run given twice is read once: a file passed again, and vLLM's sweep, which writes each run
to `run=N.json` and again in `summary.json` (a folder passed whole holds both)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from reporter import api
from tests.adapters.conftest import REAL

TRACES = Path(__file__).resolve().parents[2] / "traces"


def _sweep_run(number: int, date: str, duration: float) -> dict[str, Any]:
    """One run of `vllm bench sweep serve` at N=256: 2,560 requests over about 180 s."""
    return {
        "date": date, "backend": "openai-chat", "model_id": "m", "num_prompts": 2560,
        "request_rate": 256, "max_concurrency": 256, "duration": duration, "completed": 2560,
        "failed": 0, "total_input_tokens": 271231, "total_output_tokens": 655360,
        "mean_ttft_ms": 1500.0, "median_ttft_ms": 1400.0, "mean_tpot_ms": 50.0,
        "median_tpot_ms": 49.0, "output_throughput": 655360 / duration, "run_number": number,
    }  # fmt: skip


def _br016(verdict: Any) -> Any:
    (finding,) = [f for f in verdict.findings if f.code == "BR016"]
    return finding


def _as_if_read_once(verdict: Any, trace: Path) -> None:
    """The audit of `trace` given twice says what the audit of it once says: its runs, its
    claims judged once, and no run a repeat of itself."""
    once = api.audit([trace])
    assert [r.id for r in verdict.runs] == [r.id for r in once.runs]
    assert len(verdict.claims) == len(once.claims)
    assert _br016(verdict).message == _br016(once).message


def test_a_sweep_run_and_its_summary_are_one_run(tmp_path: Path) -> None:
    # the run of run=0.json is the first entry of summary.json, to the byte: with both, three
    # runs read as four, and the one given twice "ran at the same time" as itself (the same
    # end date, 0 s apart, in runs of 180 s): a false statement that the repeats overlapped
    runs = [
        _sweep_run(0, "20260211-143656", 180.26),
        _sweep_run(1, "20260211-144330", 177.89),
        _sweep_run(2, "20260211-145001", 171.03),
    ]
    (tmp_path / "run=0.json").write_text(json.dumps(runs[0], indent=4))
    (tmp_path / "summary.json").write_text(json.dumps(runs, indent=4))
    verdict = api.audit([tmp_path / "run=0.json", tmp_path / "summary.json"])
    assert len(verdict.runs) == 3
    f = _br016(verdict)
    assert f.outcome == "passed"
    assert f.message == (
        "repeated, as far as the files record (they record no engine or hardware): the "
        "largest spread between repeats is 5.4%"
    )
    assert f.arithmetic == [
        "N=256, 256 req/s, 2560 prompts: 3 repeats, 3,635.6–3,831.8 tok/s, spread 5.4%"
    ]
    summary = next(i for i in verdict.inputs if i.path.endswith("summary.json"))
    assert summary.notes[-1] == (
        "run openai-chat:256qps:c256:run0 (line 2) is the run of "
        f"{tmp_path / 'run=0.json'}:1 given again (every setting and figure the same): "
        "read once, there"
    )


def test_two_runs_alike_but_for_one_figure_are_both_read(tmp_path: Path) -> None:
    first = _sweep_run(0, "20260211-143656", 180.26)
    (tmp_path / "a.json").write_text(json.dumps(first))
    (tmp_path / "b.json").write_text(json.dumps(first | {"mean_tpot_ms": 50.5}))
    verdict = api.audit([tmp_path / "a.json", tmp_path / "b.json"])
    assert len(verdict.runs) == 2
    assert all(len(i.notes) == 1 for i in verdict.inputs)


def test_the_real_sweep_run_and_summary_are_two_runs_not_three() -> None:
    # er0080's vllm bench sweep folder: run=0.json and summary.json (run 0 again, then run 1)
    folder = REAL / "vllm"
    if not folder.is_dir():
        pytest.skip("../shared/real-traces is absent")
    verdict = api.audit(
        [
            folder / "er0080-v0.25.1-sweep-maxseqs4-conc2-run0.json",
            folder / "er0080-v0.25.1-sweep-maxseqs4-conc2-summary.json",
        ]
    )
    assert sorted(r.id for r in verdict.runs) == ["openai:infqps:c2:run0", "openai:infqps:c2:run1"]
    assert _br016(verdict).arithmetic == [
        "N=2, rate inf, 8 prompts: 2 repeats, 93.7–199.4 tok/s, spread 112.7%"
    ]


def test_a_file_given_twice_is_read_once(tmp_path: Path) -> None:
    # the same trace under two names: its claim and runs once, not twice (its runs are no
    # repeats of themselves)
    copy = tmp_path / "copy.jsonl"
    shutil.copy(TRACES / "case-b-queue.jsonl", copy)
    verdict = api.audit([TRACES / "case-b-queue.jsonl", copy])
    once = api.audit([TRACES / "case-b-queue.jsonl"])
    assert [r.id for r in verdict.runs] == [r.id for r in once.runs] == ["b-queue-n16"]
    assert [c.check.claim for c in verdict.claims] == ["b-840"]
    assert verdict.inputs[1].notes[-1].startswith("the same bytes as ")
    assert verdict.inputs[1].notes[-1].endswith("case-b-queue.jsonl: read once, there")


_MD_HEADER = (
    "| model                          |       size |     params | backend    | ngl | fa |"
    "            test |                  t/s |\n"
    "| ------------------------------ | ---------: | ---------: | ---------- | --: | -: |"
    " --------------: | -------------------: |\n"
)


def _md_row(test: str, rate: str) -> str:
    return (
        f"| llama 7B Q4_0                  |   3.56 GiB |     6.74 B | Vulkan     | 100 |  1 |"
        f" {test:>15} | {rate:>20} |\n"
    )


def test_two_printed_tables_alike_in_one_row_keep_both_runs(tmp_path: Path) -> None:
    # two llama-bench logs of one machine, two hours apart: their tg128 rows print the same
    # "57.69 ± 0.01" (a printed rate and spread, no time), their pp512 rows 758 and 2,530 t/s.
    # The tg128 row of the second log is a run of its own, not the first one given again
    for name, pp in (("a.log", "758.22 ± 1.75"), ("b.log", "2529.75 ± 34.13")):
        text = _MD_HEADER + _md_row("pp512", pp) + _md_row("tg128", "57.69 ± 0.01")
        (tmp_path / name).write_text(text + "\nbuild: 34ce48d97 (7356)\n", encoding="utf-8")
    verdict = api.audit([tmp_path / "a.log", tmp_path / "b.log"])
    assert sorted(r.id for r in verdict.runs) == [
        "a.log:pp512",
        "a.log:tg128",
        "b.log:pp512",
        "b.log:tg128",
    ]
    assert not any("given again" in n for i in verdict.inputs for n in i.notes)


def test_a_file_given_twice_under_one_name_is_read_once() -> None:
    # the same path twice (a shell glob and a name, a folder and a file in it): the runs
    # were read twice, the claim judged twice, and BR016 passed the run as "repeated: the
    # largest spread between repeats is 0.0%", a repeat of itself
    trace = TRACES / "case-a-ladder.jsonl"
    verdict = api.audit([trace, trace])
    _as_if_read_once(verdict, trace)
    assert verdict.inputs[1].notes[-1].endswith("read once, there")


@pytest.mark.parametrize("how", ["crlf", "sorted keys"])
def test_a_copy_with_other_line_ends_or_key_order_is_read_once(tmp_path: Path, how: str) -> None:
    # the same records written with CRLF line ends (or keys in another order) are other
    # bytes, and the run its claim names was kept twice: "repeated: 0.0%"
    trace = TRACES / "case-a-ladder.jsonl"
    lines = trace.read_text().splitlines()
    copy = tmp_path / "copy.jsonl"
    if how == "crlf":
        copy.write_bytes("".join(f"{line}\r\n" for line in lines).encode())
    else:
        copy.write_text("".join(json.dumps(json.loads(x), sort_keys=True) + "\n" for x in lines))
    verdict = api.audit([trace, copy])
    _as_if_read_once(verdict, trace)
    assert verdict.inputs[1].notes[-1].startswith("the same records as ")


def test_a_copy_with_one_request_changed_is_read(tmp_path: Path) -> None:
    trace = TRACES / "case-a-ladder.jsonl"
    lines = trace.read_text().splitlines()
    records = [json.loads(x) for x in lines]
    first = next(r for r in records if r.get("kind") == "request")
    first["output_tokens"] += 1
    copy = tmp_path / "copy.jsonl"
    copy.write_text("".join(json.dumps(r) + "\n" for r in records))
    verdict = api.audit([trace, copy])
    assert len(verdict.runs) > len(api.audit([trace]).runs)


def test_a_guidellm_report_and_its_yaml_twin_are_one_run() -> None:
    # GuideLLM wrote the same benchmark as JSON and as YAML (its measurement window dates it,
    # 1749157168.18–1749157198.18): one run, not a repeat of itself ("repeated: 0.0%")
    folder = REAL / "guidellm"
    if not folder.is_dir():
        pytest.skip("../shared/real-traces is absent")
    twins = [folder / f"guidellm-v02-test-asset-benchmarks_stripped.{x}" for x in ("json", "yaml")]
    verdict = api.audit(twins)
    assert [r.id for r in verdict.runs] == ["synchronous"]
    assert _br016(verdict).message == "1 run, none repeated: the error of each figure is unknown"
    assert verdict.inputs[1].notes[-1] == (f"the same records as {twins[0]}: read once, there")


def test_files_that_repeat_nothing_have_no_rows_compared(monkeypatch: pytest.MonkeyPatch) -> None:
    # a row filter per run costs seconds on a million-request trace: the rows of a run are
    # looked at only when its file, or the run, repeats an earlier one
    from reporter import adapters

    looked: list[str] = []
    real_rows_of = adapters._rows_of
    monkeypatch.setattr(
        adapters, "_rows_of", lambda p, run_id: looked.append(run_id) or real_rows_of(p, run_id)
    )
    api.audit([TRACES / "case-a-ladder.jsonl", TRACES / "case-b-queue.jsonl"])
    assert looked == []
