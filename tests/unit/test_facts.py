"""The facts layer: bounds from summaries with worked numbers, and verdicts taken from facts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reporter import api
from reporter.facts import CONCURRENCY, RATE, load_axis

ROOT = Path(__file__).resolve().parents[2]
REAL = ROOT / ".." / "shared" / "real-traces"
YANG = "vllm/yangligt2-llama4scout-fp8-2node-maxconc-sweep"


def _vllm(tmp_path: Path, name: str = "r.json", **fields: Any) -> Path:
    """A vLLM `--save-result` summary with the given fields (milliseconds as vLLM writes)."""
    record: dict[str, Any] = {
        "date": "20250101-000000",
        "backend": "vllm",
        "model_id": "m",
        "num_prompts": fields.get("completed", 10),
        "request_rate": "inf",
        "max_concurrency": 10,
        "duration": 10.0,
        "completed": 10,
        "total_input_tokens": 1000,
        "total_output_tokens": 1010,
        "mean_ttft_ms": 1000.0,
        "mean_tpot_ms": 20.0,
        "output_throughput": 101.0,
    }
    record.update(fields)
    path = tmp_path / name
    path.write_text(json.dumps(record), encoding="utf-8")
    return path


def _facts(*paths: Path, **kw: Any) -> Any:
    verdict = api.audit([str(p) for p in paths], **kw)
    data = api.analyse(api.load([str(p) for p in paths], **kw))
    return verdict, data.facts


def test_decode_bound_from_mean_e2e_and_ttft(tmp_path: Path) -> None:
    # 10 requests, mean e2e 5 s, mean TTFT 1 s: Σ decode = 10 × (5 − 1) = 40 s over a 10 s wall
    path = _vllm(tmp_path, mean_e2el_ms=5000.0)
    verdict, facts = _facts(path)
    (run,) = facts.runs.values()
    assert run.decode.value == pytest.approx(4.0)
    assert run.decode.exact and run.decode.at_least == 4
    assert "= 40.00 s" in run.decode.arithmetic[0]
    assert run.serial is False
    assert run.overlap.message.startswith("not serial: at least 4 requests decoding at once")
    assert verdict.runs[0].verdict == "supported"
    # Little's law from the mean e2e: 10 × 5 s ÷ 10 s
    assert run.in_flight.value == pytest.approx(5.0) and run.in_flight.exact


def test_decode_bound_from_itl_and_chunks(tmp_path: Path) -> None:
    # per-request lists without send times and no mean TTFT: Σ ITL = mean ITL × gaps
    lists = {
        "output_lens": [5, 5],
        "ttfts": [0.1, 0.1],
        "itls": [[0.5] * 4, [0.5] * 4],
        "input_lens": [10, 10],
    }
    path = _vllm(
        tmp_path,
        completed=2,
        total_output_tokens=10,
        duration=2.5,
        mean_itl_ms=500.0,
        mean_ttft_ms=None,
        **lists,
    )
    _, facts = _facts(path)
    (run,) = facts.runs.values()
    # 2 requests × 5 chunks: 8 gaps × 0.5 s = 4.0 s of decode over a 2.5 s wall
    assert run.decode.value == pytest.approx(4.0 / 2.5)
    assert run.decode.how == "Σ ITL"
    assert run.serial is False


def test_decode_bound_from_tpot_is_an_approximation(tmp_path: Path) -> None:
    # no e2e: Σ decode ≈ 10 × (101 − 1) × 0.02 s = 20 s over 10 s: 2.0, not above the
    # approximation's margin (2×), so it does not decide
    path = _vllm(tmp_path)
    verdict, facts = _facts(path)
    (run,) = facts.runs.values()
    assert run.decode.value == pytest.approx(2.0) and not run.decode.exact
    assert "≈" in run.decode.arithmetic[0]
    assert run.serial is None
    assert "would decide" in verdict.runs[0].reasons[0]
    assert "t_send, t_first, t_end" in run.missing
    # Little's law rebuilt: 10 × (1 + 100 × 0.02) s ÷ 10 s = 3.0, approximate
    assert run.in_flight.value == pytest.approx(3.0) and not run.in_flight.exact
    assert "TPOT excludes the first token" in run.in_flight.how


def test_decode_bound_decides_when_far_above_serial(tmp_path: Path) -> None:
    path = _vllm(tmp_path, mean_tpot_ms=60.0)  # ≈ 10 × 100 × 0.06 ÷ 10 = 6.0
    verdict, facts = _facts(path)
    (run,) = facts.runs.values()
    assert run.decode.value == pytest.approx(6.0)
    assert run.serial is False
    assert "about 6.00" in run.overlap.message
    assert verdict.runs[0].verdict == "supported"


def test_stream_multiple_is_aggregate_over_one_stream(tmp_path: Path) -> None:
    path = _vllm(tmp_path, mean_e2el_ms=5000.0)
    _, facts = _facts(path)
    (run,) = facts.runs.values()
    # aggregate 1010 ÷ 10 = 101 tok/s; one stream 1 ÷ 0.02 = 50 tok/s: 2.02 streams
    assert run.stream_tps == pytest.approx(50.0)
    assert run.stream_multiple == pytest.approx(2.02)


def test_load_axis() -> None:
    assert load_axis(4.0, float("inf")) == CONCURRENCY
    assert load_axis(float("nan"), 10.0) == RATE
    assert load_axis(8.0, 10.0) == RATE


def test_ignoring_the_ladder_rule_keeps_the_run_verdicts() -> None:
    trace = ROOT / "traces" / "case-a-ladder.jsonl"
    full = api.audit([str(trace)])
    without = api.audit([str(trace)], ignore=["BR003", "BR005"])
    assert [r.verdict for r in full.runs] == [r.verdict for r in without.runs]
    assert "serial" in {str(r.verdict) for r in without.runs}
    assert not any(f.code in ("BR003", "BR005") for f in without.findings)


@pytest.fixture
def real() -> Any:
    if not REAL.is_dir():
        pytest.skip("../shared/real-traces is absent")
    return lambda name: REAL / name


#: SOURCES.md: per file, aggregate / Little / Σ decode ÷ wall.
YANG_FIGURES = {
    "c4-20251022-234422.json": (331.6, 3.96, 3.3),
    "c16-20251022-234745.json": (1134.5, 15.31, 13.5),
    "c64-20251022-235048.json": (2291.6, 59.97, 53.6),
    "c256-20251022-235601.json": (3861.2, 234.5, 206.6),
    "c256-20251023-185002-other-config.json": (3009.0, 249.3, 222.9),
    "c1024-20251023-200539-other-config.json": (3660.1, 994.5, 729.7),
}


def _by_file(verdict: Any) -> dict[str, Any]:
    return {r.source.rsplit("/", 1)[-1].split(":")[0]: r for r in verdict.runs}


def test_yangligt2_bounds_and_verdicts(real: Any) -> None:
    paths = sorted(real(YANG).glob("*.json"))
    verdict, facts = _facts(*paths)
    runs = _by_file(verdict)
    for name, (agg, little, decode) in YANG_FIGURES.items():
        run = runs[name]
        f = facts.runs[run.id]
        assert run.aggregate_tps == pytest.approx(agg, rel=0.01)
        assert f.in_flight.value == pytest.approx(little, rel=0.03)
        assert f.decode.value == pytest.approx(decode, rel=0.03)
        assert f.serial is False, name
        assert run.verdict == "supported", (name, run.reasons)
        assert f.overlap.message.startswith(f"not serial: at least {f.decode.at_least} ")


def test_bowenwan6_repeats_and_the_serial_by_design_file(real: Any) -> None:
    folder = real("sglang/bowenwan6-benchserving-vllm-backend-c16-repeats")
    verdict, facts = _facts(*sorted(folder.glob("*.json")))
    for run, little in zip(verdict.runs, (15.91, 15.95, 15.96), strict=True):
        f = facts.runs[run.id]
        assert f.in_flight.value == pytest.approx(little, rel=0.03)
        assert 13.2 <= f.decode.value <= 13.7
        assert f.serial is False and run.verdict == "supported"
    verdict, facts = _facts(real("sglang/bowenwan6-sglang-oai-c1-two-lines-same-settings.jsonl"))
    for run in verdict.runs:
        f = facts.runs[run.id]
        assert f.in_flight.value == pytest.approx(1.00, rel=0.03)
        assert f.decode.value == pytest.approx(0.92, rel=0.03)
        # N = 1: one at a time by design, not an accusation
        assert f.serial is None and run.verdict == "supported"
        assert "by design" in f.overlap.message and "0.92" in f.overlap.message


def test_the_run_table_shows_the_bound_as_a_bound(real: Any) -> None:
    from reporter.render.text import render_text

    verdict = api.audit([str(real(f"{YANG}/c64-20251022-235048.json"))])
    (run,) = verdict.runs
    assert run.overlap is None  # nothing measured from timestamps
    assert run.decode_bound == pytest.approx(53.6, rel=0.03) and run.decode_bound_exact
    row = next(line for line in render_text(verdict).splitlines() if "c64" in line)
    assert "≥53.5" in row  # the bound is 53.58: shown rounded down, never as 53.6
    data = verdict.to_dict()["runs"][0]
    assert data["decode_bound"] == pytest.approx(53.6, rel=0.03)
    assert data["in_flight"] == pytest.approx(59.97, rel=0.03)


def test_a_rebuilt_little_figure_says_how(tmp_path: Path) -> None:
    verdict = api.audit([str(_vllm(tmp_path))])
    data = verdict.to_dict()["runs"][0]
    assert data["in_flight"] == pytest.approx(3.0)
    assert data["in_flight_how"].startswith("Σ e2e ≈ completed × (mean TTFT + (output − 1)")


def test_a_summary_run_keeps_its_verdict_whatever_rules_are_chosen(real: Any) -> None:
    paths = [str(p) for p in sorted(real(YANG).glob("*.json"))]
    full = api.audit(paths)
    only = api.audit(paths, select=["BR001"])
    assert [str(r.verdict) for r in full.runs] == [str(r.verdict) for r in only.runs]
    assert {str(r.verdict) for r in only.runs} == {"supported"}


def test_an_undecided_run_names_the_deciding_field_once(tmp_path: Path) -> None:
    verdict = api.audit([str(_vllm(tmp_path))])
    (reason,) = verdict.runs[0].reasons
    assert reason.count("would decide") == 1
    assert "(t_send, t_first, t_end) would decide" in reason
