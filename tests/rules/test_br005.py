"""BR005 on sweeps whose runs sent fewer requests than their concurrency: such a run never had
N requests in flight, so it stands at its request count, never as a flat point at N."""

from __future__ import annotations

import json
from pathlib import Path

from reporter import api
from tests.conftest import finding


def _sweep(tmp_path: Path, runs: list[tuple[str, int, list[tuple[float, float, float]]]]) -> Path:
    """A native trace: each run (id, N, requests as (send, first token, end)), 100 tokens."""
    lines = []
    for run_id, n, requests in runs:
        lines.append({"kind": "run", "schema": "benchreport/1", "id": run_id, "group": "sweep",
                      "engine": {"name": "e", "version": "1"},
                      "workload": {"concurrency": n, "output_tokens": 100, "stop": "forced",
                                   "ignore_eos": True, "prompt_tokens": 32, "content": "prose",
                                   "speculative": {"enabled": False}}})  # fmt: skip
        for i, (send, first, end) in enumerate(requests):
            lines.append({"kind": "request", "run": run_id, "id": f"{run_id}-{i}",
                          "t_send": send, "t_first": first, "t_end": end, "prompt_tokens": 32,
                          "output_tokens": 100, "finish_reason": "length"})  # fmt: skip
    path = tmp_path / "sweep.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def test_a_run_of_one_request_at_n4_is_not_a_flat_point_at_n4(tmp_path):
    # N=1: two requests one after another; "N=4": one request. Same aggregate, and no sweep:
    # the N=4 run never had more than one request in flight
    path = _sweep(tmp_path, [
        ("n1", 1, [(0.0, 0.1, 5.0), (5.0, 5.1, 10.0)]),
        ("n4", 4, [(0.0, 0.1, 5.0)]),
    ])  # fmt: skip
    verdict = api.audit([path])
    f = finding(verdict, "BR005", "sweep")
    assert f["outcome"] == "not-applicable"
    assert f["message"] == (
        "not a sweep over concurrency: every run had at most 1 request in flight (run n4: "
        "1 request at N=4, so at most 1 in flight)"
    )
    assert verdict.to_dict()["verdict"] != "serial"


def test_a_run_of_fewer_requests_than_n_stands_at_its_count(tmp_path):
    # N=1 (one request), N=8 with only two requests decoding together: the sweep spans 1..2
    # requests in flight, and the aggregate doubles
    path = _sweep(tmp_path, [
        ("n1", 1, [(0.0, 0.1, 5.0)]),
        ("n8", 8, [(0.0, 0.1, 5.0), (0.0, 0.1, 5.0)]),
    ])  # fmt: skip
    f = finding(api.audit([path]), "BR005", "sweep")
    assert f["outcome"] == "passed"
    assert f["message"] == "aggregate grows 2.00× from N=1 to N=2 (20.0 / 40.0 tok/s)"
    assert f["arithmetic"][0] == "run n8: 2 requests at N=8, so at most 2 in flight"
    assert f["numbers"]["concurrency"] == [1.0, 2.0]


def test_a_sweep_whose_runs_fill_their_n_is_read_at_n(tmp_path):
    # the usual case is unchanged: every run sent at least N requests
    path = _sweep(tmp_path, [
        ("n1", 1, [(0.0, 0.1, 5.0), (5.0, 5.1, 10.0)]),
        ("n2", 2, [(0.0, 0.1, 5.0), (0.0, 0.1, 5.0)]),
    ])  # fmt: skip
    f = finding(api.audit([path]), "BR005", "sweep")
    assert f["message"] == "aggregate grows 2.00× from N=1 to N=2 (20.0 / 40.0 tok/s)"
    assert not any("in flight" in line for line in f["arithmetic"])


def test_a_summary_of_fewer_prompts_than_its_max_concurrency_stands_at_its_prompts(tmp_path):
    # vLLM's `bench serve --max-concurrency 256 --num-prompts 100` (a common pairing) never has
    # more than 100 requests in flight: a sweep 64 / 256 whose aggregate barely moves is two
    # points at 64 and 100 requests, less than a factor of two apart, not a flat sweep to 256
    paths = []
    for n, duration in ((64, 10.0), (256, 9.5)):
        point = {
            "date": "20250601-120000", "backend": "vllm", "model_id": "m", "num_prompts": 100,
            "request_rate": "inf", "max_concurrency": n, "duration": duration, "completed": 100,
            "total_input_tokens": 100 * 512, "total_output_tokens": 100 * 128,
            "output_throughput": 100 * 128 / duration, "mean_ttft_ms": 50.0,
            "median_ttft_ms": 50.0, "mean_tpot_ms": 10.0, "median_tpot_ms": 10.0,
        }  # fmt: skip
        path = tmp_path / f"c{n}.json"
        path.write_text(json.dumps(point))
        paths.append(path)
    verdict = api.audit(paths)
    [f] = [x for x in verdict.to_dict()["findings"] if x["code"] == "BR005"]
    assert f["outcome"] == "undecidable"
    assert f["message"] == (
        "the sweep spans N=64..100, less than a factor of two (run vllm:infqps:c256: 100 requests "
        "at N=256, so at most 100 in flight)"
    )
    assert verdict.to_dict()["verdict"] != "serial"
