"""SGLang bench_serving lines: the real files' figures (FORMATS.md §11b), --output-details,
the Infinity token, and malformed lines."""

from __future__ import annotations

import math

import pytest

from reporter import api
from reporter.errors import TraceError
from tests.adapters.conftest import HERE, load, run, stats_of

C8 = "sglang/tonyli15-sglang055-qwen25-3b-agg-n50-c8.jsonl"
N200 = "sglang/tonyli15-sglang055-agg-local-n200.jsonl"


def test_concurrency_is_little_law_at_max_concurrency_8(real):
    assert b'"request_rate": Infinity' in real(C8).read_bytes()
    tables = load(real(C8))
    assert tables.inputs[0].format == "sglang"
    r = run(tables)
    assert (r["run"], r["concurrency"], r["request_rate"]) == (
        "agg_n50_in128_out64_c8",
        8,
        math.inf,
    )
    assert r["extra"]["request_rate"] == "inf"
    s = stats_of(tables).iloc[0]
    # 50 × 0.3069 s ÷ 1.971 s, which SGLang itself wrote as `concurrency`
    assert round(s["in_flight"], 2) == 7.78 == round(r["summary"]["tool_concurrency"], 2)
    assert round(s["aggregate_tps"], 1) == 710.8  # 1401 tokens ÷ 1.971 s
    assert math.isnan(s["failed"])  # SGLang does not write a failure count
    assert (r["engine_name"], r["engine_version"], r["spec_enabled"]) == (
        "sglang", "0.5.5.post3", False,
    )  # fmt: skip
    assert r["model_name"] == "Qwen/Qwen2.5-3B-Instruct"
    assert (
        "output tokens as the server counted them (1401); re-tokenized by the client: 1400"
        in (r["derived"])
    )


def test_two_hundred_at_once(real):
    tables = load(real(N200))
    s = stats_of(tables).iloc[0]
    assert run(tables)["concurrency"] == 200
    assert round(s["in_flight"], 1) == 168.1
    assert round(s["aggregate_tps"], 1) == 7420.1


def test_output_details_give_request_rows():
    tables = load(HERE / "sglang-output-details.jsonl")
    req = tables.requests
    assert list(req["output_tokens"]) == [16, 16, 16, 0]
    assert list(req["n_chunks"][:3]) == [16.0] * 3
    assert list(req["ok"]) == [True, True, True, False]
    assert req["error"][3].endswith("ServerDisconnectedError: Server disconnected\n")
    r = run(tables)
    assert (r["output_tokens_requested"], r["prompt_tokens"]) == (16, 128)  # range ratio 1.0
    s = stats_of(tables).iloc[0]
    assert (s["requests"], s["failed"], s["aggregate_tps"]) == (4, 1, 96.0)


def test_bad_line(tmp_path):
    good = (HERE / "sglang-output-details.jsonl").read_text()
    path = tmp_path / "bench.jsonl"
    path.write_text(good + '{"backend": "sglang", "duration": NaN, "completed": 3}\n')
    with pytest.raises(TraceError) as err:
        api.load([path], "sglang")
    assert str(err.value).splitlines() == [
        f'{path}:2: "duration" is NaN; expected a number of seconds ≥ 0 (SGLang bench_serving '
        "result)",
        f'{path}:2: "total_output_tokens" is missing; expected a whole number ≥ 0 (SGLang '
        "bench_serving result)",
    ]
