"""Custom CSV / JSON Lines logs through a YAML mapping: the README's worked example, clocks and
units, and the wording of every mapping and data error."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reporter import api
from reporter.adapters.custom import _iso_nanoseconds
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
            "finish_reason, error, prompt_sha256, concurrency",
        ),
        (
            "columns:\n  t_send: start_ms\nunits:\n  t_send: msec\n",
            "{m}:4: \"units.t_send\" is 'msec'; expected s, ms, us, ns or iso",
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


SWEEP = (
    "conc,req,start,end,n_out\n"
    "1,a,2026-03-01T12:00:00.000000001Z,2026-03-01T12:00:05.5Z,512\n"
    "1,b,2026-03-01T12:00:05.500000000Z,2026-03-01T12:00:11Z,512\n"
    "4,c,2026-03-01T12:01:00Z,2026-03-01T12:01:06Z,512\n"
    "4,d,2026-03-01T13:01:00.25+01:00,2026-03-01T12:01:06.5Z,512\n"
    "4,e,2026-03-01 12:01:00.5Z,2026-03-01T11:01:07-0100,512\n"
    "4,f,2026-03-01T12:01:00.75z,2026-03-01T12:01:07.5Z,512\n"
)
SWEEP_MAPPING = (
    "columns: {concurrency: conc, id: req, t_send: start, t_end: end, output_tokens: n_out}\n"
    "units: {t_send: iso, t_end: iso}\n"
    "run: {stop: forced, output_tokens: 512}\n"
)


def _sweep(tmp_path: Path, data: str = SWEEP, mapping: str = SWEEP_MAPPING) -> tuple[Path, Path]:
    log, yaml_file = tmp_path / "sweep.csv", tmp_path / "map.yaml"
    log.write_text(data)
    yaml_file.write_text(mapping)
    return log, yaml_file


def test_iso_times_and_a_concurrency_column_make_a_sweep(tmp_path):
    # one file of a sweep: each concurrency is a run; ISO times with zones, to the nanosecond
    log, mapping = _sweep(tmp_path)
    tables = load(log, mapping)
    req = tables.requests
    assert list(req["run"]) == ["n1", "n1", "n4", "n4", "n4", "n4"]
    # rebased on each run's first send as integers: 5.5 s less the first send's nanosecond
    assert list(req["t_send"]) == [0.0, 5.499999999, 0.0, 0.25, 0.5, 0.75]
    assert list(req["t_end"]) == [5.499999999, 10.999999999, 6.0, 6.5, 7.0, 7.5]
    runs = tables.runs.set_index("run")
    assert list(runs["concurrency"]) == [1, 4]
    derived = runs.loc["n4", "derived"]
    assert "concurrency from the column 'conc', not measured" in derived
    assert "read through the mapping map.yaml; clock: ISO 8601 times" in derived
    s = stats_of(tables)
    assert round(s.loc["n4", "aggregate_tps"], 1) == 273.1  # 4 × 512 ÷ 7.5 s
    assert round(s.loc["n1", "aggregate_tps"], 1) == 93.1  # 2 × 512 ÷ 11.0 s


def test_iso_times_without_a_zone_say_how_they_were_read(tmp_path):
    naive = (
        SWEEP.replace("13:01:00.25+01:00", "12:01:00.25").replace("11:01:07-0100", "12:01:07")
        .replace("Z", "").replace("z", "")
    )  # fmt: skip
    log, mapping = _sweep(tmp_path, naive)
    tables = load(log, mapping)
    assert list(tables.requests["t_send"]) == [0.0, 5.499999999, 0.0, 0.25, 0.5, 0.75]
    derived = tables.runs.set_index("run").loc["n1", "derived"]
    assert any("without a zone, read as written" in d for d in derived)


def test_bad_iso_times_and_concurrencies_are_named_with_their_line(tmp_path):
    data = (
        "conc,req,start,end,n_out\n"
        "1,a,2026-03-01T12:00:00Z,2026-03-01T12:00:05.5Z,512\n"
        "4,c,2026-03-01T12:01:00Z,2026-02-30T12:01:06Z,512\n"
        "1,b,2026-03-01T12:00:05.5Z,2026-03-01T12:00:11,512\n"
        "x,d,2026-03-01T12:01:00.1234567891Z,soon,512\n"
        ",e,1772366460,2026-03-01T12:01:07+25:00,512\n"
    )
    log, mapping = _sweep(tmp_path, data)
    with pytest.raises(TraceError) as err:
        load(log, mapping)
    m = "(custom mapping: {})"
    assert str(err.value).splitlines() == [
        f"{log}:3: \"end\" is '2026-02-30T12:01:06Z'; expected a date and time that exist "
        f"(month 1-12, a day of that month, hh ≤ 23, mm and ss ≤ 59) {m.format('t_end')}",
        f"{log}:4: \"end\" is '2026-03-01T12:00:11', while line 2's time has a zone; expected "
        f"every time with a zone (Z or ±hh:mm) or every time without {m.format('t_end')}",
        f"{log}:5: \"conc\" is 'x'; expected a whole number from 1 to 1,000,000,000,000, the "
        f"run's concurrency {m.format('concurrency')}",
        f"{log}:5: \"start\" is '2026-03-01T12:01:00.1234567891Z'; expected at most nine "
        f"decimals of a second (nanoseconds), as in 2026-03-01T12:00:00.5Z {m.format('t_send')}",
        f"{log}:5: \"end\" is 'soon'; expected an ISO 8601 date and time such as "
        f"2026-03-01T12:00:00.5Z {m.format('t_end')}",
        f'{log}:6: "conc" has no value; expected a whole number from 1 to 1,000,000,000,000, '
        f"the run's concurrency {m.format('concurrency')}",
        f"{log}:6: \"start\" is '1772366460'; expected an ISO 8601 date and time such as "
        f"2026-03-01T12:00:00.5Z {m.format('t_send')}",
        f"{log}:6: \"end\" is '2026-03-01T12:01:07+25:00'; expected a zone of Z or ±hh:mm "
        f"(hh ≤ 23, mm ≤ 59) {m.format('t_end')}",
    ]


def test_a_concurrency_that_comes_back_is_refused_not_merged(tmp_path):
    # 1, 4, 1: a repeat of N=1, or a file sorted some other way; nothing tells which, and
    # merging the two stretches would make one run of both
    data = SWEEP + (
        "1,g,2026-03-01T12:02:00Z,2026-03-01T12:02:05.5Z,512\n"
        "1,h,2026-03-01T12:02:05.5Z,2026-03-01T12:02:11Z,512\n"
    )
    log, mapping = _sweep(tmp_path, data)
    with pytest.raises(TraceError) as err:
        load(log, mapping)
    expected = (
        "each concurrency's rows together (one run a value), or a run column that tells repeats "
        "apart (custom mapping: concurrency)"
    )
    assert [(p.line, p.message, p.expected) for p in err.value.problems] == [
        (8, '"conc" is 1 again, after other values (its run ended on line 3)', expected),
        (9, '"conc" is 1 again, after other values (its run ended on line 3)', expected),
    ]
    tables = api.load([log], "custom", options={"mapping": str(mapping)}, lenient=True)
    assert list(tables.requests["id"]) == ["a", "b", "c", "d", "e", "f"]
    assert tables.inputs[0].skipped_reasons == ['"conc": 2']


def test_a_run_column_and_a_concurrency_column_must_agree(tmp_path):
    data = "bench,conc,start,end\nr1,4,0.0,1.0\nr1,4,0.1,1.1\nr1,8,0.2,1.2\nr2,8,5.0,6.0\n"
    mapping = "columns: {run: bench, concurrency: conc, t_send: start, t_end: end}\n"
    log, yaml_file = _sweep(tmp_path, data, mapping)
    with pytest.raises(TraceError) as err:
        load(log, yaml_file)
    assert str(err.value) == (
        f"{log}:4: \"conc\" is 8 in run 'r1'; expected 4, as on line 2: one concurrency a run "
        "(custom mapping: concurrency)"
    )
    tables = api.load([log], "custom", options={"mapping": str(yaml_file)}, lenient=True)
    assert list(tables.runs["concurrency"]) == [4, 8]
    assert list(tables.runs["run"]) == ["r1", "r2"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "columns: {t_send: s, ttft: t}\nunits: {ttft: iso}\n",
            "{m}:2: \"units.ttft\" is 'iso'; expected s, ms, us or ns (a duration after the "
            "send, not a time of day)",
        ),
        (
            "columns: {t_send: s, t_end: e}\nunits: {t_send: iso}\n",
            '{m}:2: "units.t_send" is iso but "units.t_end" is not; expected iso for every '
            "time of day mapped (t_send, t_first, t_end), or for none",
        ),
        (
            "columns: {t_send: s, concurrency: c}\nrun: {concurrency: 3}\n",
            '{m}:2: "run.concurrency" is given and "columns" maps concurrency; expected one of '
            "them",
        ),
        (
            "columns: {t_send: s}\nunits: {t_send: hours}\n",
            "{m}:2: \"units.t_send\" is 'hours'; expected s, ms, us, ns or iso",
        ),
    ],
)
def test_iso_and_concurrency_mapping_errors(tmp_path, text, message):
    mapping = tmp_path / "map.yaml"
    mapping.write_text(text)
    with pytest.raises(TraceError) as err:
        load(LOG, mapping)
    assert str(err.value) == message.format(m=mapping)


def test_iso_times_in_json_lines_must_be_text(tmp_path):
    log = tmp_path / "log.jsonl"
    log.write_text(
        '{"at": "2026-03-01T12:00:00,25Z", "done": "2026-03-01T12:00:02Z"}\n'
        '{"at": 1772366400, "done": "2026-03-01T12:00:03Z"}\n'
    )
    mapping = tmp_path / "map.yaml"
    mapping.write_text("columns: {t_send: at, t_end: done}\nunits: {t_send: iso, t_end: iso}\n")
    with pytest.raises(TraceError) as err:
        load(log, mapping)
    assert str(err.value) == (
        f'{log}:2: "at" is 1772366400; expected an ISO 8601 date and time such as '
        "2026-03-01T12:00:00.5Z (custom mapping: t_send)"
    )


@settings(max_examples=300, deadline=None)
@given(
    moment=st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 30)),
    nanoseconds=st.integers(0, 999),
    digits=st.integers(0, 9),
    zone=st.one_of(
        st.none(),
        st.just("Z"),
        st.tuples(st.sampled_from("+-"), st.integers(0, 23), st.integers(0, 59)),
    ),
    separator=st.sampled_from("T "),
)
def test_iso_times_are_read_to_the_nanosecond_as_pandas_reads_them(
    moment, nanoseconds, digits, zone, separator
):
    # pandas' own ISO 8601 reader as the oracle (nanoseconds since 1970, UTC when zoned)
    fraction = f"{moment.microsecond:06d}{nanoseconds:03d}"[:digits]
    m = moment
    text = f"{m.year:04d}-{m.month:02d}-{m.day:02d}{separator}{m:%H:%M:%S}"
    text += f".{fraction}" if digits else ""
    if isinstance(zone, tuple):
        text += f"{zone[0]}{zone[1]:02d}:{zone[2]:02d}"
    elif zone:
        text += zone
    got = _iso_nanoseconds(text)
    assert isinstance(got, tuple), (text, got)
    assert got[1] is (zone is not None)
    whole = moment.replace(microsecond=0)
    expected = int((whole - datetime(1970, 1, 1)).total_seconds()) * 10**9 + int(
        fraction.ljust(9, "0")
    )
    if isinstance(zone, tuple):
        expected -= (1 if zone[0] == "+" else -1) * (zone[1] * 3600 + zone[2] * 60) * 10**9
    assert got[0] == expected
    if 1678 <= moment.year <= 2261:  # the years pandas' nanosecond timestamps reach
        assert got[0] == pd.Timestamp(text.replace(" ", "T")).value
