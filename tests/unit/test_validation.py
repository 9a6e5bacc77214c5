# ruff: noqa: E501  (expected messages are kept whole, one line each)
"""Bad input: every problem of a file, worded `path:line: what is wrong; expected what`, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from reporter import api
from reporter.cli import main
from reporter.errors import TraceError

GOOD_RUN = '{"kind":"run","schema":"benchreport/1","id":"r","workload":{"concurrency":2}}'


def good(i: int) -> str:
    return json.dumps(
        {
            "kind": "request",
            "run": "r",
            "id": i,
            "t_send": 0,
            "t_first": 0.1,
            "t_end": 1 + i,
            "output_tokens": 10,
        }
    )


def write(tmp_path: Path, lines: list[str], name: str = "t.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def audit_cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["audit", "--no-html", *args])
    return result.exit_code, result.stdout, result.stderr


def test_every_problem_of_a_file_at_once(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        [
            '{"kind":"run","schema":"benchreport/1","id":"r","workload":{"stop":"sometimes"}}',
            '{"kind":"request","run":"r","id":1,"t_send":0,"t_end":"12.3s","output_tokens":10}',
            '{"kind":"request","run":"r","id":2,"t_send":5,"t_first":5.1,"t_end":3.1}',
            '{"kind":"request","run":"r","id":3,"t_send":0,"t_end":1,',
            '{"kind":"bogus"}',
            '{"kind":"request","run":"r","id":4,"t_send":NaN,"t_end":1}',
            '{"kind":"request","id":5,"output_tokens":10.5,"finish_reason":"done"}',
            "[1,2]",
            good(6),
        ],
    )
    code, out, err = audit_cli(str(path))
    assert code == 2
    assert out == ""
    p = str(path)
    assert (
        err
        == "\n".join(
            [
                f'{p}:1: "workload.stop" is "sometimes"; expected one of "forced", "natural", '
                '"unknown", null (schema benchreport/1, $.workload.stop)',
                f'{p}:2: "t_end" is "12.3s"; expected a number or null (schema benchreport/1, $.t_end)',
                f'{p}:3: "t_end" 3.1 is before "t_first" 5.1; expected t_end ≥ t_first',
                f"{p}:4:57: not valid JSON: Expecting property name enclosed in double quotes; expected one JSON object per line",
                f'{p}:5: "kind" is "bogus"; expected one of "run", "request", "claim", "probe", "log", '
                '"run_end"',
                f"{p}:6:45: not valid JSON: NaN is not a JSON number; expected a finite number or null",
                f'{p}:7: "run" is missing; expected a "run" field (schema benchreport/1, $)',
                f'{p}:7: "finish_reason" is "done"; expected one of "length", "stop", "error", '
                '"abort", "cancelled", "time_limit", "too_short", null (schema benchreport/1, '
                "$.finish_reason)",
                f'{p}:7: "output_tokens" is 10.5; expected a whole number or null (schema '
                "benchreport/1, $.output_tokens)",
                f'{p}:8: the line holds a JSON list; expected a JSON object with a "kind"',
            ]
        )
        + "\n"
    )
    assert "Traceback" not in err


def test_fast_and_line_by_line_paths_word_problems_alike(tmp_path: Path) -> None:
    # all-string t_end lets pyarrow read the file whole (column-wise path); one syntax error
    # forces the line-by-line path; both must name the same problem the same way
    bad = '{"kind":"request","run":"r","id":1,"t_send":0,"t_end":"1s","output_tokens":10}'
    fast = write(tmp_path, [GOOD_RUN, bad], "fast.jsonl")
    slow = write(tmp_path, [GOOD_RUN, bad, "{"], "slow.jsonl")
    with pytest.raises(TraceError) as fast_err:
        api.load([fast])
    with pytest.raises(TraceError) as slow_err:
        api.load([slow])
    expected = '"t_end" is "1s"; expected a number or null (schema benchreport/1, $.t_end)'
    assert str(fast_err.value.problems[0]) == f"{fast}:2: {expected}"
    assert str(slow_err.value.problems[0]) == f"{slow}:2: {expected}"


def test_problems_are_capped_with_a_count(tmp_path: Path) -> None:
    bad = [
        json.dumps({"kind": "request", "run": "r", "id": i, "output_tokens": -1}) for i in range(35)
    ]
    path = write(tmp_path, [GOOD_RUN, *bad])
    code, _, err = audit_cli(str(path))
    assert code == 2
    lines = err.splitlines()
    assert len(lines) == 21
    assert lines[0] == (
        f'{path}:2: "output_tokens" is -1; expected a number ≥ 0 (schema '
        "benchreport/1, $.output_tokens)"
    )
    assert lines[-1] == "… and 15 more"


def test_a_million_bad_lines_are_counted_not_worded(tmp_path: Path) -> None:
    bad = [
        json.dumps({"kind": "request", "run": "r", "id": i, "t_send": 2, "t_end": 1})
        for i in range(3000)
    ]
    path = write(tmp_path, [GOOD_RUN, *bad])
    with pytest.raises(TraceError) as err:
        api.load([path])
    assert err.value.count == 3000
    assert err.value.render().splitlines()[-1] == "… and 2980 more"


def test_lenient_audits_the_good_lines_and_says_what_it_skipped(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        [
            GOOD_RUN,
            good(1),
            '{"kind":"request"',
            good(2),
            '{"kind":"request","run":"r","id":3,"output_tokens":-2}',
        ],
    )
    code, _out, err = audit_cli("--lenient", str(path))
    assert code == 0
    assert err == (f'{path}: skipped 2 bad lines ("output_tokens": 1; not valid JSON: 1)\n')
    verdict = api.audit([path], lenient=True).to_dict()
    assert verdict["runs"][0]["requests"] == 2
    assert verdict["inputs"][0]["skipped"] == 2


def test_unreadable_and_empty_inputs(tmp_path: Path) -> None:
    code, _, err = audit_cli(str(tmp_path / "missing.jsonl"))
    assert (code, err) == (
        2,
        f"{tmp_path / 'missing.jsonl'}: cannot read the file: No such file or directory\n",
    )


def test_valid_file_passes_validate_command(tmp_path: Path) -> None:
    path = write(tmp_path, [GOOD_RUN, good(1), "", good(2)])
    result = CliRunner().invoke(main, ["validate", str(path)])
    assert result.exit_code == 0
    assert result.stdout == f"{path}: ok (3 records, format benchreport)\n"


def test_blank_lines_keep_line_numbers(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        [GOOD_RUN, "", "", good(1), "", '{"kind":"request","run":"r","id":2,"output_tokens":-3}'],
    )
    with pytest.raises(TraceError) as err:
        api.load([path])
    assert err.value.problems[0].line == 6
    tables = api.load([write(tmp_path, [GOOD_RUN, "", good(1)], "ok.jsonl")])
    assert tables.requests["source_line"].tolist() == [3]


def test_arrow_chunk_times_are_checked_as_lists_are() -> None:
    """The vectorised check of Arrow lists (the native reader's) marks the rows the
    row-by-row check of Python lists marks: times not finite, going back, before the send."""
    import random

    import numpy as np
    import pandas as pd
    import pyarrow as pa

    from reporter.ingest.validate import _bad_token_times

    rng = random.Random(3)
    kind = pa.list_(pa.float64())
    marked = 0
    for _ in range(200):
        rows: list[list[float | None] | None] = []
        for _ in range(rng.randint(0, 12)):
            if rng.random() < 0.15:
                rows.append(None)
                continue
            times: list[float | None] = sorted(rng.uniform(0, 5) for _ in range(rng.randint(0, 5)))
            if times and rng.random() < 0.2:
                rng.shuffle(times)
            if times and rng.random() < 0.1:
                times[rng.randrange(len(times))] = rng.choice([None, float("inf")])
            rows.append(times)
        send = np.array([rng.choice([np.nan, 0.0, 1.0, 2.0]) for _ in rows])
        as_lists = pd.Series(
            [None if r is None else [np.nan if t is None else t for t in r] for r in rows],
            dtype=object,
        )
        want = _bad_token_times(as_lists, send).tolist()
        marked += sum(want)
        half = len(rows) // 2
        layouts = (
            pa.chunked_array([pa.array(rows[:half], kind), pa.array(rows[half:], kind)], kind),
            # a slice inside a longer array: offsets that do not start at 0
            pa.chunked_array([pa.array([[7.0], *rows, [9.0]], kind).slice(1, len(rows))], kind),
        )
        for lists in layouts:
            column = pd.Series(pd.arrays.ArrowExtensionArray(lists))
            assert _bad_token_times(column, send).tolist() == want
    assert marked > 50


def test_whole_chunk_token_counts_below_one_are_refused(tmp_path: Path) -> None:
    # a column of whole numbers skipped its check (only floats and mixed columns were checked)
    run = {"kind": "run", "schema": "benchreport/1", "id": "r", "workload": {"concurrency": 2}}
    rows = [
        {"kind": "request", "run": "r", "id": i, "t_send": 0, "t_first": 0.1, "t_end": 1,
         "chunk_tokens": value, "token_times": [0.1, 0.5, 1.0]}
        for i, value in enumerate((2, -5, 0))
    ]  # fmt: skip
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [run, *rows]), encoding="utf-8")
    with pytest.raises(TraceError) as caught:
        api.audit([str(path)])
    text = str(caught.value)
    assert f'{path}:3: "chunk_tokens" is -5; expected a number ≥ 1' in text
    assert f'{path}:4: "chunk_tokens" is 0; expected a number ≥ 1' in text
    assert ":2:" not in text


def test_column_checks_mark_the_same_rows_whatever_the_dtypes() -> None:
    """bad_request_rows marks the same rows whether counts are numpy integers or Python
    objects, and finish reasons categorical or objects (the shortcuts of the typed columns)."""
    import numpy as np
    import pandas as pd

    from reporter.ingest.validate import bad_request_rows

    tokens = [0, 5, -1, 2**53, 2**53 + 1, 2**53 + 2, 2**62, -(2**63)]
    reasons = ["stop", "length", None, "done", "error", "stop", None, "too_short"]
    n = len(tokens)
    typed = pd.DataFrame(
        {
            "run": pd.Categorical(["r"] * n),
            "id": pd.Series([str(i) for i in range(n)], dtype="str"),
            "t_send": np.zeros(n),
            "output_tokens": np.asarray(tokens, dtype=np.int64),
            "prompt_tokens": np.asarray(tokens, dtype=np.int64),
            "n_chunks": np.asarray(tokens, dtype=np.int64),
            "reported_tps": np.asarray(tokens, dtype=np.int64),
            "finish_reason": pd.Categorical(reasons),
        }
    )
    objects = typed.astype(object)
    objects["finish_reason"] = pd.Series(reasons, dtype=object)
    want = bad_request_rows(objects).tolist()
    assert bad_request_rows(typed).tolist() == want
    # below 0, above 2^53 once a double (2^53 + 1 is not), not a finish reason
    assert want == [False, False, True, True, False, True, True, True]
