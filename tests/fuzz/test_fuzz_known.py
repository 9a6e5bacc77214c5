"""Reproducers of the failure classes the fuzz suite found, one small input each.

A class still open is a strict xfail naming its cause (harness.KNOWN): the fix that closes it
turns the test into an unexpected pass, and then both the mark and the KNOWN entry go, the
test staying as a regression test (the properties then hold the fix too).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.fuzz.harness import KNOWN, audit, check, invoke

ROOT = Path(__file__).resolve().parents[2]
LADDER = ROOT / "traces" / "case-a-ladder.jsonl"
ADAPTERS = ROOT / "tests" / "fixtures" / "adapters"


def lines(*records: dict[str, Any] | str) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records)


RUN = {"kind": "run", "schema": "benchreport/1", "id": "r", "workload": {"concurrency": 2}}


def req(
    i: int, send: float = 0.0, first: float = 0.5, end: float = 5.0, **kw: Any
) -> dict[str, Any]:
    return {"kind": "request", "run": "r", "id": i, "t_send": send, "t_first": first,
            "t_end": end, "output_tokens": 100, "finish_reason": "length", **kw}  # fmt: skip


def known(name: str) -> Any:
    """The strict xfail of an open class, with its cause as the reason."""
    found = [k for k in KNOWN if k.name == name]
    assert found, f"{name} is not in harness.KNOWN"
    return pytest.mark.xfail(strict=True, reason=f"{name}: {found[0].cause}")


def write(tmp: Path, name: str, text: str | bytes) -> Path:
    path = tmp / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return path


def test_two_run_records_with_one_id(tmp_path: Path) -> None:
    audit([write(tmp_path, "t.jsonl", lines(RUN, RUN, req(1), req(2)))], "--lenient")


def test_a_run_with_no_requests(tmp_path: Path) -> None:
    audit([write(tmp_path, "t.jsonl", lines(RUN))])


def test_an_integer_of_5000_digits(tmp_path: Path) -> None:
    huge = json.dumps(req(2)).replace('"output_tokens": 100', '"output_tokens": 1' + "0" * 5000)
    audit([write(tmp_path, "t.jsonl", lines(RUN, req(1), huge))])


def test_invalid_utf8_inside_a_request_line(tmp_path: Path) -> None:
    text = lines(RUN, req(1), req(2)).encode().replace(b'"length"}\n', b'"len\xffgth"}\n', 1)
    audit([write(tmp_path, "t.jsonl", text)])


def test_config_whose_thresholds_is_not_a_table(tmp_path: Path) -> None:
    audit([LADDER], "--config", str(write(tmp_path, "c.toml", "thresholds = 1\n")))


@pytest.mark.parametrize("value", ["inf", "nan", "-1"])
def test_a_threshold_that_is_not_a_finite_positive_number(tmp_path: Path, value: str) -> None:
    config = write(tmp_path, "c.toml", f"[thresholds]\nsum_match = {value}\n")
    outcome = invoke(["audit", str(LADDER), "--no-html", "--config", str(config)])
    check(outcome)
    assert outcome.code == 2, f"sum_match = {value} was accepted (exit {outcome.code})"


def test_a_claim_of_1e309() -> None:
    outcome = invoke(["audit", str(LADDER), "--no-html", "--claim", "aggregate=1e309 N=4"])
    check(outcome)
    assert outcome.code == 2, f"a claim of 1e309 was audited (exit {outcome.code})"


def test_vllm_summary_with_an_integer_above_float_range(tmp_path: Path) -> None:
    doc = json.loads((ADAPTERS / "vllm-2026-save-detailed-c2.json").read_text())
    text = json.dumps(doc).replace('"completed": 4', '"completed": 1' + "0" * 400, 1)
    assert text != json.dumps(doc)
    audit([write(tmp_path, "v.json", text)], "--lenient")


@pytest.mark.parametrize("rate", ["fast", [1, 2], {"a": 1}, 10**400])
def test_vllm_request_rate_not_a_number(tmp_path: Path, rate: Any) -> None:
    doc = json.loads((ADAPTERS / "vllm-2026-save-detailed-c2.json").read_text())
    doc["request_rate"] = rate
    audit([write(tmp_path, "v.json", json.dumps(doc))], "--lenient")


@pytest.mark.parametrize("digits", [400, 5000])
def test_a_huge_first_token_time_in_the_eighth_line(tmp_path: Path, digits: int) -> None:
    huge = json.dumps(req(7)).replace('"t_first": 0.5', '"t_first": 1' + "0" * digits)
    records = [RUN, *(req(i) for i in range(1, 7)), huge]
    for command in (["audit"], ["convert", "--to", str(tmp_path / "out.jsonl")]):
        outcome = invoke(
            [command[0], str(write(tmp_path, "t.jsonl", lines(*records))), *command[1:]]
        )
        check(outcome)


def test_custom_mapping_with_a_list_for_a_unit(tmp_path: Path) -> None:
    mapping = (ADAPTERS / "bench-log.yaml").read_text().replace("t_first: ms", "t_first: [ms]")
    audit(
        [ADAPTERS / "bench-log.csv"],
        "--format", "custom", "--mapping", str(write(tmp_path, "m.yaml", mapping)),
    )  # fmt: skip


def test_custom_log_with_the_end_before_the_send(tmp_path: Path) -> None:
    csv = (ADAPTERS / "bench-log.csv").read_text()
    broken = csv.replace("1767225622500", "1767225222500")
    assert broken != csv
    mapping = str(ADAPTERS / "bench-log.yaml")
    audit([write(tmp_path, "bench-log.csv", broken)], "--format", "custom", "--mapping", mapping)


def test_genai_perf_response_before_its_request(tmp_path: Path) -> None:
    doc = json.loads((ADAPTERS / "genai-perf-profile_export.json").read_text())
    request = doc["experiments"][0]["requests"][0]
    request["timestamp"] = max(request["response_timestamps"]) + 10**13
    audit([write(tmp_path, "profile_export.json", json.dumps(doc))])


def test_convert_of_a_custom_log_sent_after_its_end(tmp_path: Path) -> None:
    csv = (ADAPTERS / "bench-log.csv").read_text()
    broken = csv.replace("r1,1767225600000,", "r1,1E20,")
    assert broken != csv
    mapping = str(ADAPTERS / "bench-log.yaml")
    source, out = write(tmp_path, "bench-log.csv", broken), tmp_path / "converted.jsonl"
    args = ["--format", "custom", "--mapping", mapping, "--to", str(out)]
    converted = invoke(["convert", str(source), *args])
    check(converted)
    if converted.code == 0:
        assert audit([out]) is not None, "convert wrote a trace that the audit refuses"


@pytest.mark.parametrize("command", ["audit", "convert"])
def test_vllm_model_id_with_a_lone_surrogate(tmp_path: Path, command: str) -> None:
    doc = json.loads((ADAPTERS / "vllm-2026-save-detailed-c2.json").read_text())
    doc["model_id"] = "x\ud800"
    source = write(tmp_path, "v.json", json.dumps(doc))
    if command == "audit":
        audit([source])
    else:
        check(invoke(["convert", str(source), "--to", str(tmp_path / "out.jsonl")]))


def test_convert_of_a_prompt_length_of_2_to_the_64(tmp_path: Path) -> None:
    run = {**RUN, "workload": {"concurrency": 2, "prompt_tokens": 2**64}}
    source, out = write(tmp_path, "t.jsonl", lines(run, req(1), req(2))), tmp_path / "out.jsonl"
    converted = invoke(["convert", str(source), "--to", str(out)])
    check(converted)
    if converted.code == 0:
        written = json.loads(out.read_text().splitlines()[0])
        assert written["workload"]["prompt_tokens"] == 2**64, written
        assert audit([out]) is not None, "convert wrote a trace that the audit refuses"


def test_one_request_line_written_twice(tmp_path: Path) -> None:
    trace = write(tmp_path, "t.jsonl", lines(RUN, req(1), req(1), req(2)))
    outcome = invoke(["audit", str(trace), "--no-html", "--json", "-"])
    check(outcome, json_stdout=True)
    assert outcome.code == 2, "a request line written twice was audited as two requests"


@pytest.mark.slow
def test_recorder_with_a_server_reporting_minus_five_tokens() -> None:
    from tests.fuzz.test_fuzz_recorder import Answer, Script, record_against, serving

    usage = {"prompt_tokens": 12, "completion_tokens": -5}
    events = [
        b'data: {"choices": [{"index": 0, "text": " w", "finish_reason": null}]}\n\n',
        b'data: {"choices": [{"index": 0, "text": "", "finish_reason": "length"}]}\n\n',
        b"data: " + json.dumps({"choices": [], "usage": usage}).encode() + b"\n\n",
        b"data: [DONE]\n\n",
    ]
    with serving() as server:
        record_against(server, Script({}, Answer(200, "text/event-stream", b"", events)))


@pytest.mark.slow
def test_an_array_nested_20000_deep_in_the_sixth_line(tmp_path: Path) -> None:
    from tests.fuzz.test_fuzz_subprocess import audit_in_child

    deep = '{"kind":"request","run":"r","id":9,"x":' + "[" * 20_000 + "]" * 20_000 + "}"
    records = [RUN, req(1), req(2), req(3), req(4), deep]
    audit_in_child(write(tmp_path, "t.jsonl", lines(*records)))


@pytest.mark.slow
def test_recorder_with_a_server_whose_props_nest_65_deep() -> None:
    """The recorder copied a probe answer whole into the run record, deeper than the audit
    reads; answers nested more than a few levels are now treated as no answer."""
    from tests.fuzz.test_fuzz_recorder import Answer, Script, record_against, serving

    props = b'{"build_info": ' + b"[" * 65 + b"1" + b"]" * 65 + b', "total_slots": 2}'
    events = [
        b'data: {"choices": [{"index": 0, "text": " w", "finish_reason": "length"}]}\n\n',
        b'data: {"choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 1}}\n\n',
    ]
    script = Script(
        {"/props": Answer(200, body=props)}, Answer(200, "text/event-stream", b"", events)
    )
    with serving() as server:
        record_against(server, script)


@pytest.mark.parametrize("mean", [-706093, 0])
def test_convert_of_llmperf_whose_summary_has_a_negative_mean_output(
    tmp_path: Path, mean: int
) -> None:
    """A summary's mean output length went into the workload unchecked: convert wrote a
    trace with output_tokens -706093, which the audit refuses."""
    real = ROOT / ".." / "shared" / "real-traces" / "llmperf"
    individual = real / "leaderboard-groq_70b_individual_responses.json"
    if not individual.is_file():
        pytest.skip("../shared/real-traces is absent")
    summary = json.loads((real / "leaderboard-groq_70b_summary.json").read_text())
    summary["mean_output_tokens"] = mean
    write(tmp_path, "leaderboard-groq_70b_summary.json", json.dumps(summary))
    source = write(tmp_path, individual.name, individual.read_bytes())
    out = tmp_path / "out.jsonl"
    converted = invoke(["convert", str(source), "--to", str(out)])
    check(converted)
    if converted.code == 0:
        assert audit([out]) is not None, "convert wrote a trace that the audit refuses"


def test_aiperf_record_with_a_negative_inter_chunk_latency(tmp_path: Path) -> None:
    """A negative gap between chunks was read as is: the audit built chunk times that go
    backwards, and convert wrote a trace that the audit refuses."""
    real = ROOT / ".." / "shared" / "real-traces" / "aiperf"
    source = real / "anud18-aiperf-qwen3vl-c2-profile_export-first2records-excerpt.jsonl"
    if not source.is_file():
        pytest.skip("../shared/real-traces is absent")
    records = [json.loads(line) for line in source.read_text().splitlines() if line.strip()]
    records[1]["metrics"]["inter_chunk_latency"]["value"][3] = -1e308
    path = write(tmp_path, source.name, lines(*records))
    audit([path], "--lenient")
    out = tmp_path / "out.jsonl"
    converted = invoke(["convert", str(path), "--to", str(out), "--lenient"])
    check(converted)
    if converted.code == 0:
        assert audit([out]) is not None, "convert wrote a trace that the audit refuses"


@pytest.mark.parametrize("duration", [-1, 0])
def test_aiperf_summary_with_a_benchmark_duration_not_above_zero(
    tmp_path: Path, duration: int
) -> None:
    """With --lenient, the refused duration still became the run's wall clock (-1.0 s)."""
    real = ROOT / ".." / "shared" / "real-traces" / "aiperf"
    source = real / "akamaslabs-aiperf0.11-qwen3-4b-conc16-profile_export_aiperf.json"
    if not source.is_file():
        pytest.skip("../shared/real-traces is absent")
    doc = json.loads(source.read_text())
    doc["benchmark_duration"]["avg"] = duration
    audit([write(tmp_path, source.name, json.dumps(doc))], "--lenient")
