"""Sweeps across files, the load axis (concurrency or request rate), repeats and saturation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reporter import api
from tests.conftest import finding

ROOT = Path(__file__).resolve().parents[2]
REAL = ROOT / ".." / "shared" / "real-traces"
YANG = "vllm/yangligt2-llama4scout-fp8-2node-maxconc-sweep"
NERD_AUTO = "vllm/nerdalert-automation-llama32-3b-l40s-mixed-deployments-rate-sweep.jsonl"
NERD_H100 = "vllm/nerdalert-h100-llama31-8b-rate-sweep.jsonl"
BOWEN = "sglang/bowenwan6-benchserving-vllm-backend-c16-repeats"


@pytest.fixture
def real() -> Any:
    if not REAL.is_dir():
        pytest.skip("../shared/real-traces is absent")
    return lambda name: REAL / name


def _groups(verdict: Any) -> dict[str, Any]:
    return {g.name: g for g in verdict.groups}


def _file_of(verdict: Any, run_id: str) -> str:
    run = next(r for r in verdict.runs if r.id == run_id)
    return str(run.source).rsplit("/", 1)[-1].split(":")[0]


def test_yangligt2_forms_two_series_across_files(real: Any) -> None:
    verdict = api.audit([str(p) for p in sorted(real(YANG).glob("*.json"))])
    series = {frozenset(_file_of(verdict, r) for r in g.runs): g for g in verdict.groups if g.runs}
    first = frozenset(
        f"c{n}-{d}.json"
        for n, d in (
            (4, "20251022-234422"),
            (16, "20251022-234745"),
            (64, "20251022-235048"),
            (256, "20251022-235601"),
        )
    )
    second = frozenset(
        {"c256-20251023-185002-other-config.json", "c1024-20251023-200539-other-config.json"}
    )
    assert set(series) == {first, second}
    sweep = series[first]
    assert sweep.axis == "concurrency"
    assert "4 files" in sweep.why and "model nvidia/Llama-4-Scout-17B-16E-Instruct-FP8" in sweep.why
    assert "6 h apart" in sweep.why
    slope = finding(verdict, "BR005", sweep.name)
    assert slope["outcome"] == "passed"
    assert slope["numbers"]["growth"] == pytest.approx(11.64, rel=0.01)
    # the two c256 runs are in different series: never repeats of one point
    for g in verdict.groups:
        assert finding(verdict, "BR016", g.name)["outcome"] != "passed"
    assert {str(r.verdict) for r in verdict.runs} == {"supported"}


@pytest.mark.parametrize(("n", "claimed"), [(16, 3.42), (64, 6.91), (256, 11.64)])
def test_yangligt2_scaling_claims_across_files(real: Any, n: int, claimed: float) -> None:
    files = sorted(real(YANG).glob("*-20251022-*.json"))
    verdict = api.audit([str(p) for p in files], claim_texts=[f"scaling={claimed} N={n}"])
    (claim,) = verdict.claims
    assert str(claim.verdict) == "supported", claim.reason
    assert claim.check.recomputed == pytest.approx(claimed, rel=0.01)


def test_a_scaling_claim_is_never_a_run_divided_by_itself(real: Any) -> None:
    files = sorted(real(YANG).glob("*-20251022-*.json"))
    verdict = api.audit([str(p) for p in files], claim_texts=["scaling=6.91 N=64"], group_by="file")
    (claim,) = verdict.claims
    assert str(claim.verdict) == "insufficient-data"
    assert "no lower-N run to scale from" in claim.reason
    assert len(verdict.groups) == 4
    assert all("--group-by file" in g.why for g in verdict.groups)


def test_group_by_run_keeps_every_run_alone(real: Any) -> None:
    verdict = api.audit([str(p) for p in sorted(real(BOWEN).glob("*.json"))], group_by="run")
    assert [len(g.runs) for g in verdict.groups] == [1, 1, 1]


def test_bowenwan6_three_files_are_three_repeats(real: Any) -> None:
    verdict = api.audit([str(p) for p in sorted(real(BOWEN).glob("*.json"))])
    (group,) = verdict.groups
    assert len(group.runs) == 3
    repeats = finding(verdict, "BR016", group.name)
    assert repeats["outcome"] == "passed"
    assert repeats["numbers"]["max_spread"] == pytest.approx(2181.7 / 2161.6 - 1, rel=0.05)


def test_nerdalert_automation_is_three_rate_sweeps(real: Any) -> None:
    verdict = api.audit([str(real(NERD_AUTO))])
    assert len(verdict.groups) == 3
    for g in verdict.groups:
        assert g.axis == "rate" and len(g.runs) == 3
        # three rates of one deployment: points of a sweep, not repeats
        assert finding(verdict, "BR016", g.name)["message"].endswith(
            "none repeated: the error of each figure is unknown"
        )
        assert "serial" not in finding(verdict, "BR005", g.name)["message"].replace(
            "not serial", ""
        )
    audit = finding(verdict, "BR012", "audit")
    assert audit["outcome"] == "fired"
    assert "request rate" in audit["numbers"]["factors"]
    assert "deployment settings" in audit["numbers"]["factors"]
    assert {str(r.verdict) for r in verdict.runs} == {"supported"}
    little = sorted(r.in_flight for r in verdict.runs if r.in_flight is not None)
    assert len(little) == len(verdict.runs)
    assert little[0] == pytest.approx(31, rel=0.03) and 515 <= little[-1] <= 655


def test_nerdalert_h100_rate_sweeps_saturate_and_are_not_serial(real: Any) -> None:
    verdict = api.audit([str(real(NERD_H100))])
    assert len(verdict.groups) == 2  # the vllm and the sgl framework
    for g in verdict.groups:
        slope = finding(verdict, "BR005", g.name)
        assert slope["outcome"] == "fired" and slope["severity"] == "info"
        assert "saturates: from 30 to 35 req/s" in slope["message"]
        assert "not serial service" in slope["message"]
        assert "decoding at once" in slope["message"]
    assert "serial" not in {str(r.verdict) for r in verdict.runs}


def test_sglang_lines_at_several_rates_and_datasets_are_not_repeats(
    real: Any, tmp_path: Path
) -> None:
    import json
    import re

    line = real("sglang/tonyli15-sglang055-qwen25-3b-agg-n50-c8.jsonl").read_text().splitlines()[0]
    lines = []
    for dataset in ("random", "sharegpt"):
        for rate in (1, 2, 4, 8):
            text = re.sub(r'"request_rate": *[^,]+', f'"request_rate": {rate}', line)
            text = re.sub(r'"dataset_name": *"[^"]*"', f'"dataset_name": "{dataset}"', text)
            text = re.sub(r'"max_concurrency": *[^,]+', '"max_concurrency": null', text)
            lines.append(text)
    path = tmp_path / "rates.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert json.loads(lines[-1])["dataset_name"] == "sharegpt"
    verdict = api.audit([str(path)])
    assert sorted(len(g.runs) for g in verdict.groups) == [4, 4]
    for g in verdict.groups:
        assert g.axis == "rate"
        repeats = finding(verdict, "BR016", g.name)
        assert repeats["outcome"] == "fired" and "none repeated" in repeats["message"]
    factors = finding(verdict, "BR012", "audit")["numbers"]["factors"]
    assert "request rate" in factors and "dataset" in factors
    assert "serial" not in {str(r.verdict) for r in verdict.runs}


def test_the_html_report_says_how_runs_were_grouped_and_shows_bounds(real: Any) -> None:
    from reporter.render.context import build_context
    from reporter.render.html import render_html_context

    files = sorted(real(YANG).glob("*-20251022-*.json"))
    # the page without its charts: the group sections and the bound are text
    page = render_html_context(build_context(api.audit([str(p) for p in files]), charts=False))
    assert '<section class="group" id="group-1">' in page  # one section per group, saying why
    assert "4 runs from 4 files sharing every setting" in page
    assert "≥53.5" in page  # the bound of 53.58, rounded down


def test_two_series_are_never_said_to_share_one_setting(real: Any) -> None:
    verdict = api.audit([str(p) for p in sorted(real(YANG).glob("*.json"))])
    audit = finding(verdict, "BR012", "audit")
    assert audit["outcome"] == "undecidable"
    assert "share one setting" not in audit["message"]
    assert "form 2 series" in audit["message"]


def test_a_rate_sweep_that_serves_half_its_offered_load_saturates(
    real: Any, tmp_path: Path
) -> None:
    # an SGLang rate sweep, its figures shaped on a published 70B one: up to 8 req/s the
    # server keeps up (87% of the offered load at 8); at 16 req/s the offered load doubles,
    # the aggregate grows 1.22× (52% served) and the requests in flight 3.5×. That is
    # saturation: "no saturation seen" would be false of the file
    import json

    line = real("sglang/tonyli15-sglang055-qwen25-3b-agg-n50-c8.jsonl").read_text().splitlines()[0]
    base = json.loads(line.replace("Infinity", "1e999"))
    points = [  # rate, duration, completed, output tokens, mean e2e (s)
        (4, 300.0, 1200, 608_000, 13.0),
        (8, 346.8, 2400, 1_219_000, 52.1),
        (16, 383.1, 3200, 1_642_637, 149.0),
    ]
    lines = []
    for rate, duration, completed, tokens, e2e in points:
        record = base | {
            "request_rate": rate, "max_concurrency": None, "duration": duration,
            "completed": completed, "total_output_tokens": tokens,
            "output_throughput": tokens / duration, "mean_e2e_latency_ms": e2e * 1000,
            "concurrency": completed * e2e / duration,
            # one prompt set: its prompt tokens grow with the requests completed
            "total_input_tokens": completed * base["total_input_tokens"] // base["completed"],
        }  # fmt: skip
        lines.append(json.dumps(record))
    path = tmp_path / "rates.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    verdict = api.audit([str(path)])
    (group,) = verdict.groups
    slope = finding(verdict, "BR005", group.name)
    assert slope["outcome"] == "fired" and slope["severity"] == "info"
    assert slope["message"].startswith(
        "open-loop rate sweep saturates: from 8 to 16 req/s the offered load grows 2.02× "
        "(4,063.3 → 8,213.2 tok/s) but the aggregate only 1.22× (3,515.0 → 4,287.7 tok/s): "
        "87% → 52% of it served, while the requests in flight grow 360.6 → 1,244.6"
    )
    assert slope["numbers"]["saturated_at"] == "8"
    assert "serial" not in {str(r.verdict) for r in verdict.runs}


def _vllm_point(
    concurrency: int, prompt_mean: int, output_mean: int, completed: int = 64
) -> dict[str, Any]:
    duration = 20.0 / concurrency**0.5
    return {
        "output_throughput": completed * output_mean / duration,
        "date": "20250601-120000", "backend": "vllm", "model_id": "m", "num_prompts": completed,
        "request_rate": "inf", "max_concurrency": concurrency, "duration": duration,
        "completed": completed, "total_input_tokens": completed * prompt_mean,
        "total_output_tokens": completed * output_mean, "mean_ttft_ms": 50.0,
        "median_ttft_ms": 50.0, "mean_tpot_ms": 10.0, "median_tpot_ms": 10.0,
    }  # fmt: skip


def test_runs_that_read_different_prompt_sets_do_not_share_one_setting(tmp_path: Path) -> None:
    # two files of one tool and settings, N=1 and N=16, that state no prompt length: one read
    # 2,155-token prompts, the other 539. Not one setting, and no scaling between them
    import json

    for name, point in (("long.json", (1, 2155, 128)), ("short.json", (16, 539, 512))):
        (tmp_path / name).write_text(json.dumps(_vllm_point(*point)))
    verdict = api.audit([tmp_path / "long.json", tmp_path / "short.json"])
    assert len(verdict.groups) == 2
    assert [g.why.split("; measured mean ", 1)[1] for g in verdict.groups] == [
        "prompt 2,155 tokens; measured mean output 128 tokens)",
        "prompt 539 tokens; measured mean output 512 tokens)",
    ]
    audit = finding(verdict, "BR012", "audit")
    assert audit["outcome"] == "fired"
    assert audit["numbers"]["factors"] == ["prompt length"]
    assert not any(f.code == "BR005" and f.outcome == "fired" for f in verdict.findings)


def test_one_prompt_set_at_several_n_stays_one_sweep(tmp_path: Path) -> None:
    # a sample of one dataset: mean prompts 530-560 at N = 1, 4, 16 (within 1.5x): one sweep,
    # its reason naming the measured range
    import json

    paths = []
    for n, prompt in ((1, 530), (4, 560), (16, 545)):
        path = tmp_path / f"c{n}.json"
        path.write_text(json.dumps(_vllm_point(n, prompt, 256)))
        paths.append(path)
    verdict = api.audit(paths)
    (group,) = verdict.groups
    assert len(group.runs) == 3
    assert "measured mean prompt 530–560 tokens" in group.why


def test_an_aggregate_that_falls_is_not_called_flat(tmp_path: Path) -> None:
    # llama.cpp's README llama-batched-bench JSONL: 34.2 tok/s at 1 sequence, 22.2 at 2 decoded
    # together (0.65×). Overlapping, so not serial; but falling, not "flat", and no server
    lines = [
        {"n_kv_max": 2048, "n_batch": 2048, "n_ubatch": 512, "flash_attn": 0,
         "is_pp_shared": 0, "n_gpu_layers": 99, "n_threads": 8, "n_threads_batch": 8,
         "pp": 128, "tg": 128, "pl": 1, "n_kv": 256, "t_pp": 0.233810,
         "speed_pp": 547.453064, "t_tg": 3.503684, "speed_tg": 36.532974, "t": 3.737494,
         "speed": 68.495094},
        {"n_kv_max": 2048, "n_batch": 2048, "n_ubatch": 512, "flash_attn": 0,
         "is_pp_shared": 0, "n_gpu_layers": 99, "n_threads": 8, "n_threads_batch": 8,
         "pp": 128, "tg": 128, "pl": 2, "n_kv": 512, "t_pp": 0.422602,
         "speed_pp": 605.770935, "t_tg": 11.106112, "speed_tg": 23.050371, "t": 11.528713,
         "speed": 44.410854},
    ]  # fmt: skip
    import json

    path = tmp_path / "batched.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    verdict = api.audit([path], select=["BR005"])
    (slope,) = verdict.findings
    assert slope.message.startswith(
        "aggregate falls with N: 34.2 / 22.2 tok/s at N=1/2 (0.65× from N=1 to N=2), but the "
        "requests overlap"
    )
    assert slope.message.endswith("decoding more at once made it slower, not serial")


def test_runs_that_wrote_different_output_lengths_do_not_share_one_setting(tmp_path: Path) -> None:
    # bowenwan6's caseC and caseD at N=16: the same prompts, 128 and 512 output tokens a
    # request (neither stated): not repeats of one setting
    import json

    for name, point in (("c.json", (16, 539, 128)), ("d.json", (16, 539, 512))):
        (tmp_path / name).write_text(json.dumps(_vllm_point(*point)))
    verdict = api.audit([tmp_path / "c.json", tmp_path / "d.json"])
    assert len(verdict.groups) == 2
    assert not any("between repeats" in f.message for f in verdict.findings if f.code == "BR016")


def test_a_streamed_and_an_unstreamed_run_are_not_one_setting(tmp_path: Path) -> None:
    # GenAI-Perf issue 298's two runs: streaming false (TTFT 4.4 s, the whole answer) and true
    import json

    def summary(streaming: bool, ttft_ms: float) -> dict[str, Any]:
        return {
            "request_throughput": {"unit": "requests/sec", "avg": 17.2},
            "request_latency": {"unit": "ms", "avg": 5767.4, "p50": 5778.7},
            "time_to_first_token": {"unit": "ms", "avg": ttft_ms, "p50": ttft_ms},
            "output_token_throughput": {"unit": "tokens/sec", "avg": 9800.0},
            "output_sequence_length": {"unit": "tokens", "avg": 567.8, "min": 531, "max": 622},
            "input_config": {"model": ["m"], "concurrency": 100, "streaming": streaming},
        }

    paths = []
    for name, streaming, ttft in (("off.json", False, 4356.0), ("on.json", True, 173.0)):
        path = tmp_path / name
        path.write_text(json.dumps(summary(streaming, ttft)))
        paths.append(path)
    assert len(api.audit(paths, fmt="genai-perf").groups) == 2


def test_a_closed_loop_run_and_a_paced_run_are_not_one_sweep(tmp_path: Path) -> None:
    # anud18's AIPerf runs: one model and prompt set, closed loops at N=2 and N=32 and Poisson
    # sends at 1 req/s. The paced run is its own series, with tsho's last point of a vLLM rate
    # sweep (rate inf, no max_concurrency: every request sent at once); the concurrency sweep
    # keeps its slope
    import json

    points = {"c2.json": _vllm_point(2, 575, 216), "c32.json": _vllm_point(32, 575, 216)}
    for name, rate in (("r1.json", 1.0), ("rinf.json", "inf")):
        paced = _vllm_point(2, 575, 216) | {"request_rate": rate}
        del paced["max_concurrency"]
        points[name] = paced
    for name, point in points.items():
        (tmp_path / name).write_text(json.dumps(point))
    verdict = api.audit([tmp_path / name for name in points])
    members = sorted(sorted(_file_of(verdict, r) for r in g.runs) for g in verdict.groups)
    assert members == [["c2.json", "c32.json"], ["r1.json", "rinf.json"]]
    by_axis = {g.axis: g for g in verdict.groups}
    assert set(by_axis) == {"concurrency", "rate"}
    assert "open loop" in by_axis["rate"].why
    assert "open loop" not in by_axis["concurrency"].why
    assert by_axis["concurrency"].slope.startswith("aggregate")


def test_a_sweep_that_rises_then_falls_names_its_peak(tmp_path: Path) -> None:
    # akamaslabs' AIPerf sweep: 1,792.2 / 4,826.8 / 4,520.1 tok/s at N=16/128/768. It grows
    # 2.52× end to end, but the aggregate is highest at N=128
    import json

    paths = []
    # 2,044 requests at every N, as in akamaslabs' runs: at N=768 a run of fewer requests
    # would stand at its count (never more in flight than were sent)
    for n, aggregate in ((16, 1792.2), (128, 4826.8), (768, 4520.1)):
        point = _vllm_point(n, 575, 216, completed=2044)
        point["duration"] = point["total_output_tokens"] / aggregate
        path = tmp_path / f"c{n}.json"
        path.write_text(json.dumps(point))
        paths.append(path)
    (slope,) = [f for f in api.audit(paths, select=["BR005"]).findings if f.code == "BR005"]
    assert slope.outcome == "passed"
    assert slope.message == (
        "aggregate grows 2.52× from N=16 to N=768 (1,792.2 / 4,826.8 / 4,520.1 tok/s); highest "
        "at N=128 (4,826.8 tok/s), and lower beyond it (94% of it at N=768)"
    )
    assert slope.numbers["peak_concurrency"] == 128
    # each run's answer is the sweep's, so it names the peak: N=768 did not grow
    answers = {r.concurrency: r.questions["slope"] for r in api.audit(paths).runs}
    assert set(answers.values()) == {
        "grows with N up to N=128 (4,826.8 tok/s), and is lower beyond it"
    }
    # a last point within half a percent of the highest: no fall to name
    total = 2044 * 216
    paths[-1].write_text(paths[-1].read_text().replace(str(total / 4520.1), str(total / 4810.0)))
    (flat,) = [f for f in api.audit(paths, select=["BR005"]).findings if f.code == "BR005"]
    assert flat.message.startswith("aggregate grows 2.68× from N=16 to N=768")
    assert "highest" not in flat.message
    assert {r.questions["slope"] for r in api.audit(paths).runs} == {"grows with N"}


def test_runs_whose_files_record_no_model_say_so_beside_every_setting(real: Any) -> None:
    # databloom's two AIPerf records files (a Llama 3.2 3B and a Qwen3.5 4B, named only by
    # their folders) record no model, engine or hardware: "sharing every setting" is every
    # setting they record, and the reason says which they do not
    verdict = api.audit(
        [
            real(
                "aiperf/databloom-aiperf-llama32-3b-gguf-c1-dualhost-half-timeouts-profile_export.jsonl"
            ),
            real("aiperf/databloom-aiperf-qwen35-4b-gguf-c1-all-timeouts-profile_export.jsonl"),
        ]
    )
    (group,) = verdict.groups
    assert group.why.endswith("; the files record no model, engine or hardware")


def _paced_and_capped(
    n: int, duration: float, e2e_ms: float, ttft_ms: float, tpot_ms: float
) -> dict[str, Any]:
    completed = 10 * n
    return {
        "date": "20260211-140733", "endpoint_type": "openai-chat", "backend": "openai-chat",
        "model_id": "m", "num_prompts": completed, "request_rate": n, "burstiness": 1.0,
        "max_concurrency": n, "duration": duration, "completed": completed, "failed": 0,
        "total_input_tokens": completed * 110, "total_output_tokens": completed * 256,
        "output_throughput": completed * 256 / duration, "mean_ttft_ms": ttft_ms,
        "median_ttft_ms": ttft_ms, "mean_tpot_ms": tpot_ms, "median_tpot_ms": tpot_ms,
        "mean_e2el_ms": e2e_ms, "median_e2el_ms": e2e_ms, "run_number": 0,
    }  # fmt: skip


def test_a_rate_sweep_held_by_the_clients_limit_is_not_the_servers_capacity(
    tmp_path: Path,
) -> None:
    # a `vllm bench sweep` of gpt-oss-120b run at request_rate = max_concurrency = 1, 2, 4, 8:
    # each request takes 1.5-3.2 s, so at every point the client's limit of N requests in
    # flight is full (Little's law 0.96 / 1.91 / 3.88 / 7.79) and the other sends wait in the
    # client. The aggregate falls behind the offered rate because of that limit; the same
    # files reach 3,636 tok/s at 256. "this is the server's capacity" would be false
    import json

    points = {  # N: duration, mean e2e, mean TTFT, mean TPOT (ms)
        1: (16.139943942999707, 1546.9387414998891, 42.29354679991957, 5.900569390980272),
        2: (18.972531327999604, 1809.761947900006, 46.28864349988362, 6.915581585882834),
        4: (25.79442910800026, 2502.1956418999935, 52.19247865009038, 9.607855542156482),
        8: (33.296572138000556, 3243.3727380624873, 58.62975778742339, 12.489188157941427),
    }
    paths = []
    for n, (duration, e2e, ttft, tpot) in points.items():
        path = tmp_path / f"c{n}.json"
        path.write_text(json.dumps(_paced_and_capped(n, duration, e2e, ttft, tpot)))
        paths.append(path)
    verdict = api.audit(paths)
    (group,) = verdict.groups
    slope = finding(verdict, "BR005", group.name)
    assert slope["severity"] == "info"
    assert "server's capacity" not in slope["message"].replace("not the server's capacity", "")
    assert slope["message"].startswith(
        "open-loop rate sweep held back by the client: from 2 to 4 req/s the offered load "
        "grows 2.00× (512.0 → 1,024.0 tok/s) but the aggregate only 1.47× (269.9 → 397.0 "
        "tok/s): 53% → 39% of it served, while the requests in flight grow 1.9 → 3.9, at the "
        "client's limit of 4 (max_concurrency): the other requests waited in the client"
    )
    assert "serial" not in {str(r.verdict) for r in verdict.runs}


def test_a_rate_the_same_sweep_served_at_a_higher_rate_is_not_saturation(
    tmp_path: Path,
) -> None:
    # a vllm-ascend CI rate sweep (benchmark_serving.py, the same 200 ShareGPT prompts at 1, 4,
    # 16 req/s and all at once): from 1 to 4 req/s the share of the offered load served falls
    # 93% → 70% only because the last long requests drain after the sends end (TTFT stays
    # ~0.1 s); the run at inf serves 1,147 tok/s, more than the 894 offered at 4 req/s. So
    # "saturates from 1 to 4 req/s" and "this is the server's capacity" would be false there
    import json

    points = {  # rate: duration, mean TTFT, mean TPOT (ms)
        1.0: (215.82599276304245, 96.61540472880006, 35.496626342114716),
        4.0: (70.96309100091457, 101.90579270944, 46.31180488842981),
        16.0: (44.60220558568835, 115.18850827589631, 73.6009745600889),
        "inf": (38.96098167076707, 2456.657849922776, 77.36683361084226),
    }
    paths = []
    for rate, (duration, ttft, tpot) in points.items():
        record = {
            "date": "20250507-100754", "backend": "vllm", "model_id": "m", "tokenizer_id": "m",
            "num_prompts": 200, "request_rate": rate, "burstiness": 1.0,
            "max_concurrency": None, "duration": duration, "completed": 200,
            "total_input_tokens": 43560, "total_output_tokens": 44697,
            "request_throughput": 200 / duration, "request_goodput:": None,
            "output_throughput": 44697 / duration, "mean_ttft_ms": ttft,
            "median_ttft_ms": ttft, "mean_tpot_ms": tpot, "median_tpot_ms": tpot,
        }  # fmt: skip
        path = tmp_path / f"qps_{rate}.json"
        path.write_text(json.dumps(record))
        paths.append(path)
    verdict = api.audit(paths)
    (group,) = verdict.groups
    slope = finding(verdict, "BR005", group.name)
    assert "from 1 to 4 req/s" not in slope["message"]
    assert slope["numbers"].get("saturated_at") != "1"
    # at 16 req/s the 3,576 tok/s offered is more than any run served: that step may saturate,
    # but with as many in flight as decoding at once, none of them waited in a queue
    assert slope["message"].startswith("open-loop rate sweep saturates: from 4 to 16 req/s")
    assert "the extra requests queue" not in slope["message"]
    assert "73.4 decoding at once: nearly all of them decoding together" in slope["message"]


def test_an_approximation_above_the_requests_sent_is_not_shown(tmp_path: Path) -> None:
    # a vllm-ascend CI sweep of Qwen2.5-VL (200 requests at 1, 4, 16 req/s and inf): at 16
    # req/s mean TPOT is 310 ms with a std of 992 ms (short answers with long gaps), so
    # completed × (mean output − 1) × mean TPOT ÷ wall gives 205.6 decoding at once and Little's
    # law 252.9 in flight: more than the 200 requests there were. No average can exceed them
    import json

    points = {  # rate: duration, output tokens, mean TTFT, mean TPOT, std TPOT (ms)
        1.0: (201.29149930551648, 21950, 489.8455463722348, 43.50829879732405, 10.56),
        4.0: (54.508509397506714, 21944, 514.5062687247992, 94.99535775108038, 34.85),
        16.0: (32.948265716433525, 22023, 7792.839195020497, 310.44179861013487, 992.39),
        "inf": (37.969713147729635, 22016, 15603.768651261926, 298.8972822445702, 719.95),
    }
    paths = []
    for rate, (duration, tokens, ttft, tpot, std) in points.items():
        record = {
            "date": "20250507-095907", "backend": "openai-chat", "model_id": "m",
            "tokenizer_id": "m", "num_prompts": 200, "request_rate": rate, "burstiness": 1.0,
            "max_concurrency": None, "duration": duration, "completed": 200,
            "total_input_tokens": 20026, "total_output_tokens": tokens,
            "request_throughput": 200 / duration, "request_goodput:": None,
            "output_throughput": tokens / duration, "mean_ttft_ms": ttft,
            "median_ttft_ms": ttft, "mean_tpot_ms": tpot, "median_tpot_ms": tpot,
            "std_tpot_ms": std,
        }  # fmt: skip
        path = tmp_path / f"qps_{rate}.json"
        path.write_text(json.dumps(record))
        paths.append(path)
    verdict = api.audit(paths)
    for run in verdict.runs:
        assert run.in_flight is None or run.in_flight <= 200
        assert run.decode_bound is None or run.decode_bound <= 200
    (group,) = verdict.groups
    slope = finding(verdict, "BR005", group.name)
    # the server still falls far behind 16 req/s (38% of the offered load served, more than
    # any run served): saturation, said without an in-flight figure it cannot know
    assert slope["outcome"] == "fired"
    assert slope["message"].startswith("open-loop rate sweep saturates: from 4 to 16 req/s")
    assert "252.9" not in slope["message"] and "205.6" not in slope["message"]


def _aiperf_summary_csv(duration: float, requests: int, tokens: int, e2e_ms: float) -> bytes:
    """An AIPerf profile_export_aiperf.csv of one closed-loop run, in the shape of the
    akamaslabs exports: no concurrency anywhere in it (the folder's name carries it)."""
    head = "Metric,avg,min,max,sum,p1,p5,p10,p25,p50,p75,p90,p95,p99,std"
    mean_out = tokens / requests

    def row(name: str, avg: float) -> str:
        return ",".join([name, *(f"{x:.2f}" for x in (avg, avg / 2, avg * 4, avg * requests))])

    lines = [
        head,
        row("Output Sequence Length (tokens)", mean_out),
        row("Request Latency (ms)", e2e_ms),
        row("Time to First Token (ms)", 50.0),
        "",
        "Metric,Value",
        f"Benchmark Duration (sec),{duration:.2f}",
        f"Output Token Throughput (tokens/sec),{tokens / duration:.2f}",
        f"Request Count,{requests:.2f}",
        f"Total Output Sequence Length (tokens),{tokens:.2f}",
        "",
    ]
    return "\r\n".join(lines).encode()


def test_runs_whose_load_no_file_records_are_not_called_repeats(tmp_path: Path) -> None:
    # AIPerf summary CSVs of a concurrency sweep (16 and 128 in the folder names, shaped on
    # akamaslabs' exp7 exports): neither file says its concurrency, and the requests in
    # flight (Σ latency ÷ duration) are ≈15.7 and ≈126: two loads, not two repeats of one
    for n, (requests, tokens, e2e) in {
        16: (2044, 537_554, 2191.5),
        128: (5429, 1_447_861, 6964.9),
    }.items():
        folder = tmp_path / f"concurrency_{n}"
        folder.mkdir()
        (folder / "profile_export_aiperf.csv").write_bytes(
            _aiperf_summary_csv(300.0, requests, tokens, e2e)
        )
    verdict = api.audit(sorted(str(p) for p in tmp_path.glob("*/*.csv")))
    (group,) = verdict.groups
    assert len(group.runs) == 2
    f = finding(verdict, "BR016", group.name)
    assert f["outcome"] == "undecidable"
    assert "repeated" not in f["message"] and "repeats of one point" not in f["message"]
    assert f["message"].startswith("2 runs record no load (no concurrency or request rate)")
    assert "≈14.9 and ≈126.0 requests in flight" in f["message"]
