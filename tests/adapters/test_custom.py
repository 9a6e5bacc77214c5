"""Custom CSV / JSON Lines logs through a YAML mapping: the README's worked example, clocks and
units, and the wording of every mapping and data error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reporter import api
from reporter.errors import TraceError, UsageError
from tests.adapters.conftest import HERE, run, stats_of
from tests.conftest import finding

LOG = HERE / "bench-log.csv"
MAPPING = HERE / "bench-log.yaml"


def load(path: Path, mapping: Path):  # type: ignore[no-untyped-def]
    return api.load([path], "custom", options={"mapping": str(mapping)})


def test_readme_example_is_a_ladder():
    tables = load(LOG, MAPPING)
    req = tables.requests
    # epoch milliseconds rebased on the first send, exactly
    assert list(req["t_send"]) == [0.0, 0.001, 0.002, 0.003]
    assert list(req["t_end"]) == [5.5, 11.1, 16.8, 22.5]
    r = run(tables)
    assert (r["run"], r["concurrency"], r["stop"], r["output_tokens_requested"]) == (
        "laptop-n4", 4, "forced", 512,
    )  # fmt: skip
    s = stats_of(tables).iloc[0]
    assert round(s["aggregate_tps"], 1) == 91.0  # 4 × 512 ÷ 22.5 s
    assert round(s["sum_reported_tps"], 1) == 377.7
    assert round(s["overlap"], 2) == 1.0
    verdict = api.audit([LOG], fmt="custom", options={"mapping": str(MAPPING)},
                        claim_texts=["aggregate=377 tok/s N=4 method=sum"])  # fmt: skip
    assert verdict.to_dict()["verdict"] == "inflated"
    assert finding(verdict, "BR003", "laptop-n4")["outcome"] == "fired"
    claim = verdict.to_dict()["claims"][0]
    assert (round(claim["recomputed"], 2), round(claim["factor"], 2)) == (91.02, 4.14)


def test_jsonl_relative_clock_latency_columns_and_run_column(tmp_path):
    log = tmp_path / "log.jsonl"
    log.write_text("\n".join(json.dumps(x) for x in [
        {"bench": "n1", "t": {"sent": 10.0}, "ttft": 100, "e2e": 2100, "usage": {"out": 64}},
        {"bench": "n2", "t": {"sent": 20.0}, "ttft": 120, "e2e": 2400, "usage": {"out": 64}},
        {"bench": "n2", "t": {"sent": 20.5}, "ttft": 150, "e2e": 2500, "usage": {"out": 64},
         "err": "timeout"},
    ]) + "\n")  # fmt: skip
    mapping = tmp_path / "map.yaml"
    mapping.write_text(
        "clock: relative\ncolumns:\n  run: bench\n  t_send: t.sent\n  ttft: ttft\n"
        "  latency: e2e\n  output_tokens: usage.out\n  error: err\nunits:\n  ttft: ms\n"
        "  latency: ms\n"
    )
    tables = load(log, mapping)
    assert list(tables.runs["run"]) == ["n1", "n2"]
    req = tables.requests
    assert list(req["t_first"]) == [10.1, 20.12, 20.65]
    assert list(req["t_end"]) == [12.1, 22.4, 23.0]
    assert [x if isinstance(x, str) else "-" for x in req["finish_reason"]] == ["-", "-", "error"]
    assert list(req["source_line"]) == [1, 2, 3]


def test_epoch_nanoseconds_stay_exact(tmp_path):
    log = tmp_path / "log.csv"
    log.write_text("id,start,end,n\na,1785304801663707003,1785304802663707004,10\n"
                   "b,1785304801663707005,1785304802663707009,10\n")  # fmt: skip
    mapping = tmp_path / "map.yaml"
    mapping.write_text("clock: epoch\ncolumns: {id: id, t_send: start, t_end: end, "
                       "output_tokens: n}\nunits: {t_send: ns, t_end: ns}\n")  # fmt: skip
    req = load(log, mapping).requests
    assert list(req["t_send"]) == [0.0, 2e-09]
    assert list(req["t_end"]) == [1.000000001, 1.000000006]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "columns:\n  t_sendd: start_ms\n",
            '{m}:2: "columns.t_sendd" is not a field; expected one of t_send, t_first, t_end, '
            "ttft, latency, prompt_tokens, output_tokens, reported_tps, n_chunks, run, id, "
            "finish_reason, error, prompt_sha256",
        ),
        (
            "columns:\n  t_send: start_ms\nunits:\n  t_send: msec\n",
            "{m}:4: \"units.t_send\" is 'msec'; expected s, ms, us or ns",
        ),
        (
            "columns:\n  t_send: start_ms\nrun:\n  stop: eos\n",
            "{m}:4: \"run.stop\" is 'eos'; expected forced, natural or unknown",
        ),
        (
            "colums:\n  t_send: start_ms\n",
            '{m}:1: "colums" is not a mapping key; expected one of format, clock, columns, '
            "units, run\n"
            '{m}: "columns" is missing or empty; expected an object: canonical field → column '
            "name",
        ),
        (
            "columns: [a, b\n",
            "{m}:2: not valid YAML: expected ',' or ']', but got '<stream end>'; "
            "expected a YAML mapping file",
        ),
    ],
)
def test_mapping_errors(tmp_path, text, message):
    mapping = tmp_path / "map.yaml"
    mapping.write_text(text)
    with pytest.raises(TraceError) as err:
        load(LOG, mapping)
    assert str(err.value) == message.format(m=mapping)


def test_column_not_in_the_file(tmp_path):
    mapping = tmp_path / "map.yaml"
    mapping.write_text("columns:\n  t_send: start\n  t_end: end_ms\n")
    with pytest.raises(TraceError) as err:
        load(LOG, mapping)
    assert str(err.value) == (
        f"{mapping}:1: column 'start' (t_send) is not in {LOG}; expected one of req, start_ms, "
        "first_ms, end_ms, n_out, tok_s"
    )


def test_bad_values_are_named_with_their_line(tmp_path):
    log = tmp_path / "log.csv"
    log.write_text(LOG.read_text().replace("1767225611100,512", "soon,512").replace(
        ",512,93.4", ",-3,93.4"))  # fmt: skip
    with pytest.raises(TraceError) as err:
        load(log, MAPPING)
    assert str(err.value).splitlines() == [
        f"{log}:3: \"end_ms\" is 'soon'; expected a number of milliseconds (custom mapping: t_end)",
        f'{log}:5: "n_out" is -3; expected a number ≥ 0 (custom mapping: output_tokens)',
    ]


def test_needs_a_mapping():
    with pytest.raises(UsageError) as err:
        api.load([LOG], "custom")
    assert str(err.value) == (
        "--format custom needs --mapping FILE: which column is which field (see README, Custom "
        "logs)"
    )


def test_readme_shows_the_fixture_files_and_their_audit(monkeypatch):
    readme = (HERE.parents[2] / "README.md").read_text()
    section = readme.split("## Custom logs\n", 1)[1].split("\n## ", 1)[0]
    assert "```\n" + LOG.read_text() + "```" in section
    assert "```yaml\n" + MAPPING.read_text() + "```" in section
    from reporter.render.text import render_text

    monkeypatch.chdir(HERE)
    verdict = api.audit(["bench-log.csv"], fmt="custom", options={"mapping": "bench-log.yaml"},
                        claim_texts=["aggregate=377 tok/s N=4 method=sum"],
                        select=["BR001", "BR003"])  # fmt: skip
    shown = [line for line in section.split("```\n$ benchreport audit", 1)[1].split("```")[0]
             .splitlines()[2:] if line and line != "..."]  # fmt: skip
    printed = render_text(verdict).splitlines()
    assert len(shown) == 5
    assert all(line in printed for line in shown), [x for x in shown if x not in printed]


@pytest.mark.parametrize(
    ("cell", "shown", "expected"),
    [
        ("0.0000000000000000000001", "1e-22", "a whole number ≥ 0"),
        ("511.5", "511.5", "a whole number ≥ 0"),
        ("-3", "-3", "a number ≥ 0"),
    ],
)
def test_a_token_count_no_request_can_have_is_refused(tmp_path, cell, shown, expected):
    # a CSV cell is whatever its writer put there: a fraction of a token, or fewer than none,
    # is refused as the native reader refuses it (convert never writes what the audit refuses)
    lines = LOG.read_text().splitlines()
    cells = lines[1].split(",")
    cells[4] = cell
    lines[1] = ",".join(cells)
    path = tmp_path / "bench-log.csv"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(TraceError) as err:
        load(path, MAPPING)
    [problem] = err.value.problems
    assert (problem.line, problem.message) == (2, f'"n_out" is {shown}')
    assert problem.expected == f"{expected} (custom mapping: output_tokens)"
    tables = api.load([path], "custom", options={"mapping": str(MAPPING)}, lenient=True)
    assert len(tables.requests) == 3
    assert len(tables.inputs[0].skipped_reasons) == 1


def test_ttft_without_send_times_bounds_the_decoding(tmp_path):
    # a per-worker load script's log: each request's TTFT and latency after its own send, no
    # send times; two workers against a server that serves one request at a time, so the
    # second waits a whole request before its first token
    log = tmp_path / "runs.csv"
    log.write_text(
        "worker,run_idx,ttft_s,e2e_s,output_tokens\n"
        "0,1,0.1,3.6,120\n1,1,3.7,7.2,120\n0,2,3.6,7.1,120\n1,2,3.6,7.1,120\n"
    )
    mapping = tmp_path / "map.yaml"
    mapping.write_text(
        "columns:\n  ttft: ttft_s\n  latency: e2e_s\n  output_tokens: output_tokens\n"
        "run:\n  id: n2\n  concurrency: 2\n  duration_s: 14.3\n"
    )
    tables = load(log, mapping)
    summary = tables.runs.set_index("run").loc["n2", "summary"]
    assert summary["mean_ttft_s"] == pytest.approx((0.1 + 3.7 + 3.6 + 3.6) / 4)
    verdict = api.audit([log], fmt="custom", options={"mapping": str(mapping)})
    run_ = verdict.to_dict()["runs"][0]
    # Σ (e2e − TTFT) = 25.0 − 11.0 = 14.0 s of decoding in a 14.3 s wall: one at a time
    assert round(run_["decode_bound"], 2) == 0.98
    ladder = finding(verdict, "BR003", "n2")
    assert ladder["outcome"] == "undecidable"
    assert "consistent with one at a time but does not prove it" in ladder["message"]
