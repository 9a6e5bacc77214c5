"""Hostile data files through the real CLI: a clean audit or a clean refusal, never a crash.

The files are read in place from ../shared/hostile (next to the repository), run as its
README says; each must end with exit 0/1 (audited) or 2 (refused, `path:line: what; expected
what`), without a traceback. Below them, unit tests of the integrity checks every adapter's
rows go through (reporter.ingest.integrity).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from click.testing import CliRunner

from reporter import api
from reporter.cli import main
from reporter.errors import TraceError
from reporter.ingest import integrity
from reporter.ingest.integrity import check_partial, duplicate_requests, time_order
from reporter.render.json import render_json
from reporter.table import InputFile, Partial, normalize_requests

ROOT = Path(__file__).resolve().parents[2]
#: Regression inputs, read in place (never copied into the repository).
HOSTILE = ROOT / ".." / "shared" / "hostile"
AUDITED = (0, 1)
REFUSED = (2,)


def hostile(pattern: str) -> Path:
    if not HOSTILE.is_dir():
        pytest.skip("../shared/hostile is absent")
    found = sorted(HOSTILE.glob(pattern))
    if not found:
        pytest.skip(f"no hostile file {pattern}")
    return found[0]


@dataclass
class Done:
    """What a command left: its exit code and what it printed on each stream."""

    returncode: int
    stdout: str
    stderr: str


def cli(*args: str | Path, cwd: Path = ROOT) -> Done:
    """`benchreport ARGS` from the repository root, run in this process (a fresh interpreter
    per command would cost a second each; `child` runs the audit cases in one, slow lane).

    An exception that escapes the command's guard is raised here, so it fails the test with
    its traceback rather than passing as an exit code.
    """
    with contextlib.chdir(cwd):
        result = CliRunner().invoke(main, [str(a) for a in args], prog_name="benchreport")
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Done(result.exit_code, result.stdout, result.stderr)


def child(*args: str | Path, cwd: Path = ROOT) -> Done:
    """`python -m reporter ARGS` in a fresh interpreter, as a user runs it."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-m", "reporter", *map(str, args)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return Done(done.returncode, done.stdout, done.stderr)


def relative(path: Path) -> str:
    """The path as the README runs it: ../shared/hostile/NAME from the repository root."""
    return os.path.relpath(path, ROOT)


# (file pattern, extra options, exit codes allowed)
AUDIT_CASES = [
    ("tb01-*.jsonl", ["--lenient"], AUDITED),
    ("tb-run-without-requests.jsonl", [], AUDITED),
    ("tb02-*.csv", [], AUDITED + REFUSED),
    ("tb03-*", [], REFUSED),
    ("tb05-*", [], REFUSED),
    ("tb19-*", [], REFUSED),
    ("tb-5000-digit-integer.jsonl", [], REFUSED),
    ("tb06-*", [], REFUSED),
    ("tb09-*", [], REFUSED),
    ("tb14-*", [], REFUSED),
    ("tb18-*", [], REFUSED),
    ("tb04-*.jsonl", ["--lenient"], AUDITED),
    ("tb07-*.csv", [], AUDITED),
    ("tb08-*.json", ["--lenient"], AUDITED),
    ("tb10-*.json", ["--lenient"], AUDITED),
    ("tb12-*.json", ["--lenient"], AUDITED),
    ("tb11-*.json", [], REFUSED),
    ("tb15-*", [], REFUSED),
    ("tb16-*.csv", [], REFUSED),
    ("wrong04-*.json", [], REFUSED),
]


def check_audit_ended_cleanly(done: Done, path: str, codes: tuple[int, ...]) -> None:
    __tracebackhide__ = True
    assert "Traceback" not in done.stdout + done.stderr
    assert done.returncode in codes, done.stderr
    if done.returncode == 2:
        assert done.stderr.startswith(path + ":"), done.stderr
        assert "; expected " in done.stderr


@pytest.mark.parametrize(("pattern", "options", "codes"), AUDIT_CASES)
def test_audit_ends_cleanly(pattern: str, options: list[str], codes: tuple[int, ...]) -> None:
    path = relative(hostile(pattern))
    check_audit_ended_cleanly(cli("audit", path, "--no-html", *options), path, codes)


@pytest.mark.slow
@pytest.mark.parametrize(("pattern", "options", "codes"), AUDIT_CASES)
def test_audit_ends_cleanly_in_a_fresh_interpreter(
    pattern: str, options: list[str], codes: tuple[int, ...]
) -> None:
    path = relative(hostile(pattern))
    check_audit_ended_cleanly(child("audit", path, "--no-html", *options), path, codes)


@pytest.mark.parametrize(
    ("pattern", "options"), [("tb13-*.jsonl", ["--lenient"]), ("tb17-*.jsonl", [])]
)
def test_convert_ends_cleanly(pattern: str, options: list[str], tmp_path: Path) -> None:
    path = relative(hostile(pattern))
    done = cli("convert", path, "--to", tmp_path / "out.jsonl", *options)
    assert "Traceback" not in done.stdout + done.stderr
    assert done.returncode in AUDITED + REFUSED, done.stderr
    if done.returncode == 2:
        assert re.match(re.escape(path) + r":\d+: ", done.stderr), done.stderr


def test_strict_refusals_name_their_lines() -> None:
    """The same files without --lenient: refused at the line of the repeated run."""
    path = relative(hostile("tb01-*.jsonl"))
    done = cli("audit", path, "--no-html")
    assert done.returncode == 2
    assert f"{path}:2: run id '' is defined again (already defined at line 1)" in done.stderr


def test_run_without_requests_says_so() -> None:
    path = relative(hostile("tb-run-without-requests.jsonl"))
    done = cli("audit", path, "--no-html")
    assert done.returncode in AUDITED
    assert "verdict: insufficient-data" in done.stdout
    assert "r: 0 requests: nothing to audit" in done.stdout


def test_summary_without_a_request_count_shows_it_unknown() -> None:
    # an AIPerf CSV with a duration and no request count: unknown, never "0 requests"
    verdict = api.audit([hostile("tb07-*.csv")]).to_dict()
    (run,) = verdict["runs"]
    assert run["requests"] is None
    done = cli("audit", relative(hostile("tb07-*.csv")), "--no-html")
    (row,) = [line for line in done.stdout.splitlines() if line.startswith("  aiperf:tb07")]
    assert row.split()[1:3] == ["?", "?"]


CLAIM = "aggregate=40 N=2 method=wall"


def test_duplicate_request_records_are_refused() -> None:
    path = relative(hostile("wrong01-*.jsonl"))
    done = cli("audit", path, "--no-html", "--claim", CLAIM)
    assert done.returncode == 2
    assert "supported" not in done.stdout
    lines = done.stderr.splitlines()
    assert lines == [
        f"{path}:4: request id 2 of run n2 already seen at line 3; expected each request once",
        f"{path}:5: request id 2 of run n2 already seen at line 3; expected each request once",
    ]


def test_duplicate_request_records_count_once_when_lenient(tmp_path: Path) -> None:
    path = relative(hostile("wrong01-*.jsonl"))
    out = tmp_path / "v.json"
    done = cli("audit", path, "--no-html", "--claim", CLAIM, "--lenient", "--json", out)
    assert done.returncode in AUDITED
    verdict = json.loads(out.read_text())
    (claim,) = verdict["claims"]
    # two requests of 100 tokens in 10 s: 20 tok/s, so 40 is twice the figure
    assert claim["verdict"] == "inflated"
    assert claim["recomputed"] == 20.0
    (run,) = verdict["runs"]
    assert run["requests"] == 2
    (read,) = verdict["inputs"]
    assert read["skipped"] == 2
    assert read["skipped_reasons"] == ["duplicate request id: 2"]
    assert "skipped 2 bad lines (duplicate request id: 2)" in done.stderr


@pytest.mark.parametrize(
    ("pattern", "line", "words"),
    [
        ("wrong02-*.csv", 2, "the first token"),
        ("wrong03-*.csv", 2, "the end"),
    ],
)
def test_custom_times_out_of_order_are_refused(pattern: str, line: int, words: str) -> None:
    path = relative(hostile(pattern))
    mapping = relative(hostile("wrong02-03-mapping.yaml"))
    done = cli("audit", path, "--format", "custom", "--mapping", mapping, "--no-html")
    assert "Traceback" not in done.stderr
    assert done.returncode == 2
    assert done.stderr.startswith(f"{path}:{line}: {words}")
    assert "is before the send" in done.stderr
    assert done.stdout == ""  # no verdict, so no negative latency printed


def test_genai_perf_response_before_request_is_refused() -> None:
    path = relative(hostile("wrong04-*.json"))
    done = cli("audit", path, "--no-html")
    assert done.returncode == 2
    # the last response is stamped 0: before the one before it, and before the request
    assert re.match(re.escape(path) + r':\d+: "response_timestamps" go backwards', done.stderr)
    assert "serial" not in done.stdout


def test_overflowing_wall_is_refused_and_no_json_written(tmp_path: Path) -> None:
    path = relative(hostile("wrong05-*.jsonl"))
    out = tmp_path / "v.json"
    done = cli("audit", path, "--json", out, cwd=ROOT)
    assert done.returncode == 2
    assert f"{path}:2: " in done.stderr and "overflows to infinity" in done.stderr
    assert not out.exists()


# --------------------------------------------------------------------------- strict JSON


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"not JSON: {name}")


def strict_json(text: str) -> Any:
    """JSON as RFC 8259 has it: NaN and Infinity are refused."""
    return json.loads(text, parse_constant=_refuse_constant)


def test_strict_parser_refuses_infinity() -> None:
    with pytest.raises(ValueError, match="Infinity"):
        strict_json('{"a": Infinity}')


def test_json_verdict_is_strict_after_lenient_overflow(tmp_path: Path) -> None:
    """With --lenient the overflowing request is dropped; what is left is strict JSON."""
    path = relative(hostile("wrong05-*.jsonl"))
    out = tmp_path / "v.json"
    done = cli("audit", path, "--json", out, "--lenient", "--no-html")
    assert done.returncode in AUDITED, done.stderr
    verdict = strict_json(out.read_text())
    assert verdict["inputs"][0]["skipped_reasons"] == ["times too far apart: 1"]


# --------------------------------------------------------------------------- unit: checks


def _requests(rows: list[dict[str, Any]]) -> pd.DataFrame:
    frame = pd.DataFrame(rows)
    frame["source_path"] = "t.jsonl"
    if "source_line" not in frame:
        frame["source_line"] = np.arange(1, len(frame) + 1)
    return normalize_requests(frame)


def _partial(rows: list[dict[str, Any]], runs: list[dict[str, Any]] | None = None) -> Partial:
    return Partial(
        requests=_requests(rows),
        runs=runs or [],
        input=InputFile(path="t.jsonl", digest="", format="test", records=len(rows)),
    )


ROW = {"run": "r", "t_send": 0.0, "t_first": 0.5, "t_end": 2.0, "output_tokens": 10}


def test_duplicates_keep_the_first_and_name_its_line() -> None:
    found = duplicate_requests(
        _requests([{**ROW, "id": "a"}, {**ROW, "id": "b"}, {**ROW, "id": "a"}, {**ROW, "id": "a"}])
    )
    assert found.mask.tolist() == [False, False, True, True]
    assert [str(p) for p in found.problems] == [
        "t.jsonl:3: request id a of run r already seen at line 1; expected each request once",
        "t.jsonl:4: request id a of run r already seen at line 1; expected each request once",
    ]


def test_same_id_in_two_runs_and_absent_ids_are_not_duplicates() -> None:
    rows = [{**ROW, "id": "a"}, {**ROW, "run": "s", "id": "a"}, {**ROW}, {**ROW}]
    assert not duplicate_requests(_requests(rows)).mask.any()


def test_ordered_ids_are_taken_as_distinct_only_where_none_can_repeat() -> None:
    """Ids that strictly increase (by length, then bytes) within runs whose rows are together
    cannot repeat; a run met again after another, or an id not after the one before it,
    goes through the exact check and its duplicates are found."""
    ordered = [{**ROW, "run": r, "id": f"{r}-{i}"} for r in ("a", "b") for i in (8, 9, 10)]
    assert integrity._ordered_ids(_requests(ordered))
    assert not duplicate_requests(_requests(ordered)).mask.any()
    again = [*ordered, {**ROW, "run": "a", "id": "a-8"}]  # run a again, after run b
    assert not integrity._ordered_ids(_requests(again))
    assert duplicate_requests(_requests(again)).mask.tolist() == [False] * 6 + [True]
    back = [{**ROW, "id": i} for i in ("r-9", "r-10", "r-9")]  # not after the one before
    assert not integrity._ordered_ids(_requests(back))
    assert duplicate_requests(_requests(back)).mask.tolist() == [False, False, True]
    missing = [{**ROW, "id": "r-1"}, {**ROW}, {**ROW}]  # absent ids are never duplicates
    assert not integrity._ordered_ids(_requests(missing))
    assert not duplicate_requests(_requests(missing)).mask.any()


def test_duplicates_by_hash_are_the_exact_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    """The hashed pre-selection finds the same rows and words the same lines as a hash table
    of the ids, also when hashes collide (a hash kept to 2 values forces it)."""
    rng = np.random.default_rng(7)
    rows = [
        {**ROW, "run": f"r{rng.integers(3)}", "id": f"id-{rng.integers(40)}"} for _ in range(200)
    ]
    rows += [{**ROW, "run": "r0"}, {**ROW, "run": "r0", "id": ""}, {**ROW, "run": "r0", "id": ""}]
    frame = _requests(rows)
    exact = integrity._exact_duplicates(frame)
    assert exact.mask.sum() > 50  # the check below compares something
    ab, _, ba, again = integrity._string_hashes(pa.array(["ab", None, "ba", "ab"])).tolist()
    assert ab == again != ba
    for hashes in (None, lambda values: np.arange(len(values), dtype=np.uint64) % 2):
        if hashes is not None:
            monkeypatch.setattr(integrity, "_string_hashes", hashes)
        found = duplicate_requests(frame)
        assert found.mask.tolist() == exact.mask.tolist()
        assert [str(p) for p in found.problems] == [str(p) for p in exact.problems]


@pytest.mark.parametrize(
    ("times", "reason"),
    [
        ((0.0, -3600.0, 2.0), "first token before the send"),
        ((0.0, None, -5.0), "end before the send"),
        ((0.0, 3.0, 2.0), "end before the first token"),
        ((0.0, float("inf"), None), "time not finite"),
        ((-1.7e308, None, 1.7e308), "times too far apart"),
    ],
)
def test_time_order(times: tuple[float | None, ...], reason: str) -> None:
    send, first, end = times
    rows = [ROW, {**ROW, "t_send": send, "t_first": first, "t_end": end}]
    (found,) = time_order(_requests(rows))
    assert found.reason == reason
    assert found.mask.tolist() == [False, True]
    assert str(found.problems[0]).startswith("t.jsonl:2: ")


@pytest.mark.parametrize(
    ("column", "value"),
    [("output_tokens", 0.5), ("prompt_tokens", -2.0), ("n_chunks", float("inf"))],
)
def test_token_counts_no_request_can_have(column: str, value: float) -> None:
    """Any adapter's rows: a fraction, a negative or an infinite count is refused as the
    native reader refuses it, and checked with the other rows of the file."""
    rows = [ROW, {**ROW, "id": "b", column: value}, {**ROW, "id": "c", column: 3.0}]
    (found,) = integrity.token_counts(_requests(rows))
    assert found.reason == "count not a whole number at least 0"
    assert found.mask.tolist() == [False, True, False]
    assert str(found.problems[0]) == (
        f't.jsonl:2: "{column}" is {value:g}; expected a whole number of tokens, at least 0'
    )
    partial = _partial(rows)
    partial.input.format = "custom"  # type: ignore[union-attr]
    with pytest.raises(TraceError):
        check_partial(partial, lenient=False)
    check_partial(partial, lenient=True)
    assert len(partial.requests) == 2  # type: ignore[arg-type]


def test_a_run_whose_wall_overflows_is_refused() -> None:
    """Each row is sane alone; together their span overflows."""
    rows = [
        {**ROW, "t_send": -1.7e308, "t_first": None, "t_end": -1.7e308 + 1e300},
        {**ROW, "t_send": 1.7e308, "t_first": None, "t_end": 1.7e308},
    ]
    (found,) = time_order(_requests(rows))
    assert found.reason == "times too far apart"
    assert found.mask.all()


def test_good_rows_pass_untouched() -> None:
    rows = [
        {**ROW, "id": str(i), "t_send": i, "t_first": i + 0.5, "t_end": i + 2} for i in range(5)
    ]
    partial = _partial(rows)
    check_partial(partial, lenient=False)
    assert partial.requests is not None and len(partial.requests) == 5


def test_strict_check_raises_every_problem_with_its_line() -> None:
    rows = [{**ROW, "id": "a"}, {**ROW, "id": "a"}, {**ROW, "id": "b", "t_end": -1.0}]
    with pytest.raises(TraceError) as caught:
        check_partial(_partial(rows), lenient=False)
    assert caught.value.count == 2
    assert [p.line for p in caught.value.problems] == [2, 3]


def test_lenient_check_drops_and_counts() -> None:
    rows = [{**ROW, "id": "a"}, {**ROW, "id": "a"}, {**ROW, "id": "b", "t_end": -1.0}]
    runs = [{"run": "r", "source_line": 1}, {"run": "r", "source_line": 9}]
    partial = _partial(rows, runs)
    check_partial(partial, lenient=True)
    assert partial.requests is not None
    assert partial.requests["id"].tolist() == ["a"]
    assert len(partial.runs) == 1
    assert partial.input is not None
    assert partial.input.skipped == 3
    assert sorted(partial.input.skipped_reasons) == [
        "duplicate request id: 1",
        "end before the send: 1",
        "run id defined again: 1",
    ]


def test_every_adapter_goes_through_the_checks(tmp_path: Path) -> None:
    """The check sits behind every adapter: a custom log with an end before its send."""
    log = tmp_path / "log.csv"
    log.write_text("id,start,end,tokens\n1,10,12,5\n2,10,9,5\n")
    mapping = tmp_path / "m.yaml"
    mapping.write_text(
        "format: csv\nclock: relative\ncolumns:\n  id: id\n  t_send: start\n  t_end: end\n"
        "  output_tokens: tokens\nrun:\n  id: r\n"
    )
    with pytest.raises(TraceError) as caught:
        api.load([log], "custom", options={"mapping": str(mapping)})
    assert str(caught.value).startswith(f"{log}:3: the end")


def test_json_verdict_of_a_zero_request_run_is_strict(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    trace.write_text('{"kind":"run","schema":"benchreport/1","id":"r"}\n')
    verdict = strict_json(render_json(api.audit([trace])))
    (run,) = verdict["runs"]
    assert run["requests"] == 0
    assert run["verdict"] == "insufficient-data"
    assert run["reasons"] == ["0 requests: nothing to audit"]


def test_an_infinite_figure_is_null_with_its_reason(tmp_path: Path) -> None:
    """Finite, ordered times whose wall is too short to divide by: the aggregate overflows."""
    trace = tmp_path / "t.jsonl"
    trace.write_text(
        '{"kind":"run","schema":"benchreport/1","id":"r","workload":{"concurrency":1}}\n'
        '{"kind":"request","run":"r","id":1,"t_send":0,"t_end":5e-324,"output_tokens":100}\n'
    )
    verdict = api.audit([trace])
    data = strict_json(render_json(verdict))
    (run,) = data["runs"]
    assert run["aggregate_tps"] is None
    assert data["null_reasons"] == {
        "runs[0].aggregate_tps": "infinite (an overflow, or a division by zero): not a figure"
    }
    assert run["verdict"] == "insufficient-data"  # never "supported" on an infinite figure
    assert "too short to divide by" in run["reasons"][0]


def test_tool_durations_that_cannot_be_are_refused(tmp_path: Path) -> None:
    # an LLMPerf list whose second response got its first token after it ended
    items = [
        {"end_to_end_latency_s": 2.0, "ttft_s": 0.5, "number_output_tokens": 10,
         "number_input_tokens": 5, "request_output_throughput_token_per_s": 5.0},
        {"end_to_end_latency_s": 1.0, "ttft_s": 1.5, "number_output_tokens": 10,
         "number_input_tokens": 5, "request_output_throughput_token_per_s": 10.0},
    ]  # fmt: skip
    path = tmp_path / "x_individual_responses.json"
    path.write_text(json.dumps(items, indent=1), encoding="utf-8")
    done = cli("audit", path, "--no-html")
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert re.search(
        r"x_individual_responses\.json:9: the time to first token \(\"ttft\" 1\.5 s\) is longer "
        r"than the end-to-end latency \(\"e2e\" 1 s\); expected a time to first token at most",
        done.stderr,
    ), done.stderr


def test_a_key_written_twice_is_refused_not_resolved_in_silence(tmp_path: Path) -> None:
    # pyarrow refuses the line, the line-by-line reader kept the last value unsaid: a request
    # whose t_end is 99999.0 and 1.3 at once is no request to audit
    from reporter import api
    from reporter.errors import TraceError
    from tests.conftest import TRACES

    lines = (TRACES / "case-b-forced.jsonl").read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith('{"kind":"request"'))
    lines[at] = lines[at].replace('"t_end":', '"t_end":99999.0,"t_end":', 1)
    path = tmp_path / "twice.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(TraceError) as err:
        api.load([path])
    assert str(err.value) == (
        f'{path}:{at + 1}: the key "t_end" appears twice in one object; expected each key once'
    )
    lenient = api.load([path], lenient=True)
    assert lenient.inputs[0].skipped == 1
    # the same in another tool's JSON Lines; a string that holds '":' is no second key
    sglang = tmp_path / "sglang.jsonl"
    line = (
        '{"backend": "sglang", "dataset_name": "random", "request_rate": 1.0, '
        '"max_concurrency": 1, "duration": 10.0, "completed": 10, "completed": 9, '
        '"total_input_tokens": 1000, "total_output_tokens": 640}'
    )
    sglang.write_text(line + "\n")
    with pytest.raises(TraceError) as err:
        api.load([sglang], "sglang")
    assert 'the key "completed" appears twice in one object' in str(err.value)
    sglang.write_text(line.replace('"completed": 9, ', '"tag": "a\\":b", ') + "\n")
    assert len(api.load([sglang], "sglang").runs) == 1


def test_a_key_twice_in_a_list_of_objects_is_found(tmp_path: Path) -> None:
    # a list's length counts items, not keys: ten empty objects must not hide the eleventh's
    # key written twice
    from reporter.ingest.lines import twice_keyed

    doc = b"[" + b",".join([b"{}"] * 10) + b',{"a":1,"a":2}]'
    problem = twice_keyed("doc.json", None, doc, json.loads(doc), into_lists=True)
    assert problem is not None
    assert problem.message == 'the key "a" appears twice in one object'
