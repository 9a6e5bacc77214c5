"""The recorder's parts on their own: Prometheus text, the trace writer, the CLI's options."""

from __future__ import annotations

import os

import pytest
from click.testing import CliRunner

from reporter.cli import main
from reporter.errors import UsageError
from reporter.recorder.client import RequestState, forced_params, refused_params
from reporter.recorder.prompts import PROMPT_SETS, load_prompts
from reporter.recorder.schedule import poisson_offsets
from reporter.recorder.server import metrics_delta, parse_prometheus
from reporter.recorder.writer import TraceWriter
from tests.recorder.conftest import read_trace

LLAMA_METRICS = """\
# HELP llamacpp:prompt_tokens_total Number of prompt tokens processed
# TYPE llamacpp:prompt_tokens_total counter
llamacpp:prompt_tokens_total 120
llamacpp:prompt_tokens_cached_total 11
llamacpp:tokens_predicted_total 384
llamacpp:spec_decode_num_draft_tokens_total 0
llamacpp:requests_processing 0
llamacpp:requests_deferred 2
process_cpu_seconds_total 9.5
"""

VLLM_BEFORE = """\
vllm:generation_tokens_total{engine="0",model_name="m"} 1000.0
vllm:prefix_cache_queries_total{engine="0",model_name="m"} 5000.0
vllm:prefix_cache_hits_total{engine="0",model_name="m"} 1000.0
vllm:spec_decode_num_draft_tokens_total{engine="0",model_name="m"} 300.0
vllm:spec_decode_num_accepted_tokens_total{engine="0",model_name="m"} 100.0
vllm:request_success_total{engine="0",finished_reason="length",model_name="m"} 10.0
vllm:request_success_total{engine="0",finished_reason="stop",model_name="m"} 2.0
vllm:time_to_first_token_seconds_bucket{le="0.1",model_name="m"} 3.0
vllm:num_requests_waiting{model_name="m"} 0.0
"""
VLLM_AFTER = """\
vllm:generation_tokens_total{engine="0",model_name="m"} 5096.0
vllm:prefix_cache_queries_total{engine="0",model_name="m"} 6000.0
vllm:prefix_cache_hits_total{engine="0",model_name="m"} 1250.0
vllm:spec_decode_num_draft_tokens_total{engine="0",model_name="m"} 1300.0
vllm:spec_decode_num_accepted_tokens_total{engine="0",model_name="m"} 789.0
vllm:request_success_total{engine="0",finished_reason="length",model_name="m"} 18.0
vllm:request_success_total{engine="0",finished_reason="stop",model_name="m"} 2.0
"""


def test_prometheus_keeps_the_audit_families_only():
    parsed = parse_prometheus(LLAMA_METRICS)
    assert parsed == {
        "llamacpp:prompt_tokens_total": 120.0,
        "llamacpp:prompt_tokens_cached_total": 11.0,
        "llamacpp:tokens_predicted_total": 384.0,
        "llamacpp:spec_decode_num_draft_tokens_total": 0.0,
        "llamacpp:requests_processing": 0.0,
        "llamacpp:requests_deferred": 2.0,
    }
    vllm = parse_prometheus(VLLM_BEFORE)
    assert vllm['vllm:generation_tokens_total{engine="0",model_name="m"}'] == 1000.0
    assert not any("_bucket" in k for k in vllm)


def test_metrics_delta_gives_tokens_cache_and_acceptance():
    delta = metrics_delta(parse_prometheus(VLLM_BEFORE), parse_prometheus(VLLM_AFTER))
    assert delta == {
        "generation_tokens": 4096.0,
        "prefix_cache_queries": 1000.0,
        "prefix_cache_hits": 250.0,
        "spec_draft_tokens": 1000.0,
        "spec_accepted_tokens": 689.0,
        "finished_reasons": {"length": 8.0, "stop": 0.0},
        "prefix_cache_hit_rate": 0.25,
        "spec_acceptance": 0.689,
    }
    assert metrics_delta(None, parse_prometheus(VLLM_AFTER)) is None


def test_writer_refuses_to_overwrite_and_repairs_a_torn_line(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"kind":"run","id":"a"}\n{"kind":"requ')  # a line torn by a kill
    with pytest.raises(UsageError, match="the file exists; expected a new path, or --append"):
        TraceWriter(path)
    with TraceWriter(path, append=True) as w:
        w.write({"kind": "request", "run": "a", "id": 1, "t": float("nan")})
    lines = path.read_bytes().splitlines()
    assert lines == [b'{"kind":"run","id":"a"}', b'{"kind":"requ',
                     b'{"kind":"request","run":"a","id":1,"t":null}']  # fmt: skip


def test_forced_length_dialects():
    assert forced_params("llama.cpp", 64, True) == {
        "stream_options": {"include_usage": True}, "ignore_eos": True, "min_tokens": 64,
        "n_predict": 64}  # fmt: skip
    assert forced_params("vllm", 64, True) == {
        "stream_options": {"include_usage": True},
        "ignore_eos": True,
        "min_tokens": 64,
    }
    assert forced_params(None, 64, False) == {"stream_options": {"include_usage": True}}
    text = '{"detail":[{"loc":["body","ignore_eos"],"msg":"Extra inputs are not permitted"}]}'
    assert refused_params(422, text, {"ignore_eos": True, "min_tokens": 5}) == ["ignore_eos"]
    assert refused_params(500, text, {"ignore_eos": True}) == []


def test_request_state_counts_and_finish():
    s = RequestState(0, "h")
    s.http_status = 200
    for t in (0.1, 0.2):
        s.on_event(b'{"choices":[{"text":"ab","finish_reason":null}]}', t)
    s.on_event(
        b'{"choices":[{"text":"","finish_reason":"eos"}],'
        b'"timings":{"predicted_n":6,"predicted_per_second":50.0,"prompt_n":3}}',
        0.3,
    )
    assert s.on_event(b"[DONE]", 0.3)
    rec = s.to_record("r")
    assert (rec["output_tokens"], rec["output_tokens_source"], rec["n_chunks"]) == (6, "timings", 2)
    assert (rec["finish_reason"], rec["finish_reason_raw"], rec["reported_tps"]) == (
        "stop", "eos", 50.0)  # fmt: skip
    assert (rec["prompt_tokens"], rec["t_first"], rec["token_times"]) == (3, 0.1, [0.1, 0.2])


def test_prompt_sources(tmp_path):
    f = tmp_path / "p.txt"
    f.write_text("first prompt\nstill first\n\nsecond prompt\n", encoding="utf-8")
    assert load_prompts(None, str(f), None) == (("first prompt\nstill first", "second prompt"),
                                                 "unknown")  # fmt: skip
    assert load_prompts(None, None, "code") == (PROMPT_SETS["code"], "code")
    assert load_prompts("hi", None, None) == (("hi",), "unknown")
    with pytest.raises(UsageError, match="exclude each other"):
        load_prompts("hi", None, "code")


def test_poisson_offsets_are_seeded():
    a = poisson_offsets(10.0, 1000, 3)
    assert a[0] == 0.0
    assert list(a) == list(poisson_offsets(10.0, 1000, 3))
    assert a[-1] / 999 == pytest.approx(0.1, rel=0.1)  # mean gap 1 ÷ rate


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-c", "1,x"], "--concurrency '1,x'; expected whole numbers separated by commas, "
                        "e.g. 1,2,4,8\n"),
        (["-c", "0,2"], "--concurrency '0,2'; expected numbers of at least 1, e.g. 1,2,4,8\n"),
        (["--request-rate", "0"], "--request-rate '0'; expected rates above 0\n"),
        (["--param", "top_k"], "--param 'top_k'; expected KEY=VALUE, e.g. top_k=1\n"),
        (["--json", "v.json"], "--json writes the audit's verdict; expected --audit with it\n"),
    ],
)  # fmt: skip
def test_cli_usage_errors(args, message, tmp_path):
    result = CliRunner().invoke(
        main, ["record", "http://127.0.0.1:9", "-m", "m", "--out", str(tmp_path / "t.jsonl"),
               *args])  # fmt: skip
    assert (result.exit_code, result.output) == (2, message)


def test_cli_bad_url():
    result = CliRunner().invoke(main, ["record", "127.0.0.1:8000", "-m", "m"])
    assert (result.exit_code, result.output) == (
        2, "BASE_URL '127.0.0.1:8000'; expected http://host:port\n")  # fmt: skip


@pytest.mark.slow
def test_cli_records_summarises_and_audits(engine, tmp_path):
    out = tmp_path / "cli.jsonl"
    verdict = tmp_path / "verdict.json"
    with engine("--slots", "1", "--step-ms", "3") as eng:
        result = CliRunner().invoke(main, [
            "record", eng.url + "/v1", "-m", "ref", "-c", "1,2", "--output-tokens", "16",
            "--out", str(out), "--pause", "0", "--group", "cli", "--prompt-set", "code",
            "--speculative", "off", "--hardware", "loopback test", "--engine-flag", "--slots 1",
            "--param", "top_k=1", "--audit", "--json", str(verdict), "-q",
        ])  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split() == ["run", "N", "ok/sent", "tokens", "wall", "s", "tok/s", "TTFT",
                                "p50", "forced", "lag", "p99", "CPU", "%"]  # fmt: skip
    assert set(lines[1]) == {"-", " "}  # the rule under the header
    assert lines[2].split()[:4] == ["cli-c1-r0", "1", "1/1", "16"]
    assert lines[3].split()[:4] == ["cli-c2-r0", "2", "2/2", "32"]
    assert lines[4] == "tok/s is total output tokens ÷ wall clock (first send to last end)."
    assert lines[5] == f"wrote {out}"
    assert "verdict: serial" in result.output
    assert verdict.exists()
    header = read_trace(out)[0]
    assert header["workload"]["content"] == "code"
    assert header["workload"]["speculative"]["enabled"] is False
    assert header["hardware"]["name"] == "loopback test"
    assert header["engine"]["flags"] == ["--slots 1"]
    assert header["params_sent"]["top_k"] == 1
    assert header["endpoint"] == eng.url + "/v1/completions"


def test_api_key_comes_from_the_named_variable(monkeypatch, tmp_path):
    from reporter.recorder import run as recorder_run

    seen = {}

    def fake_record(cfg, observer):
        seen["key"] = cfg.api_key
        raise UsageError("stop here")

    monkeypatch.setattr(recorder_run, "record", fake_record)
    monkeypatch.setenv("MY_KEY", "k-123")
    result = CliRunner().invoke(main, ["record", "http://127.0.0.1:9", "-m", "m", "--out",
                                       os.fspath(tmp_path / "x.jsonl"), "--api-key-env",
                                       "MY_KEY"])  # fmt: skip
    assert (result.exit_code, seen) == (2, {"key": "k-123"})


def test_cli_unreachable_server_is_a_usage_error(tmp_path):
    port = _closed_port()
    out = tmp_path / "never.jsonl"
    result = CliRunner().invoke(main, ["record", f"http://127.0.0.1:{port}", "-m", "m",
                                       "--out", str(out), "-q"])  # fmt: skip
    assert result.exit_code == 2
    assert result.output.startswith(
        f"http://127.0.0.1:{port}/v1/completions: cannot reach the server: ConnectError"
    )
    assert not out.exists()


def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.slow
def test_natural_stop_and_append(engine, tmp_path):
    out = tmp_path / "two.jsonl"
    with engine("--slots", "2", "--step-ms", "3", "--eos-after", "12") as eng:
        args = ["record", eng.url, "-m", "ref", "-c", "2", "--output-tokens", "32", "--out",
                str(out), "--pause", "0", "-q"]  # fmt: skip
        first = CliRunner().invoke(main, [*args, "--natural-stop", "--group", "natural"])
        again = CliRunner().invoke(main, [*args, "--group", "forced"])
        assert again.exit_code == 2  # the file exists
        forced = CliRunner().invoke(main, [*args, "--group", "forced", "--append"])
    assert (first.exit_code, forced.exit_code) == (0, 0)
    records = read_trace(out)
    runs = {r["id"]: r for r in records if r["kind"] == "run"}
    assert list(runs) == ["natural-c2-r0", "forced-c2-r0"]
    natural = runs["natural-c2-r0"]
    assert natural["workload"]["stop"] == "natural"
    assert natural["workload"]["ignore_eos"] is False
    assert natural["params_sent"] == {"stream_options": {"include_usage": True}}
    ends = {r["run"]: r for r in records if r["kind"] == "run_end"}
    assert ends["natural-c2-r0"]["forced_length"] == {"requested": None, "checked": 2,
                                                      "not_honoured": 0}  # fmt: skip
    lengths = {r["run"]: {x["output_tokens"] for x in records
                          if x["kind"] == "request" and x["run"] == r["run"]}
               for r in ends.values()}  # fmt: skip
    assert lengths == {"natural-c2-r0": {12}, "forced-c2-r0": {32}}


def test_cli_refuses_an_existing_trace_before_asking_the_server(tmp_path):
    out = tmp_path / "old.jsonl"
    out.write_text('{"kind":"run","id":"a"}\n', encoding="utf-8")
    port = _closed_port()  # nothing listens: the file is checked first
    result = CliRunner().invoke(main, ["record", f"http://127.0.0.1:{port}", "-m", "m",
                                       "--out", str(out), "-q"])  # fmt: skip
    assert (result.exit_code, result.output) == (
        2, f"{out}: the file exists; expected a new path, or --append to add to it\n")  # fmt: skip
