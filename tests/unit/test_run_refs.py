"""AuditData reads a run's evidence pointers and finish reasons from whole-column arrays taken
once: the same as reading them from the run's own rows, whatever the order of the rows."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reporter import api
from reporter.auditdata import AuditData, finish_reason_is, finish_reason_known, request_refs

REASONS = st.sampled_from([None, "stop", "length", "abort", "error"])
RUNS = ("a", "b", "c")


def _write(path: Path, rows: list[tuple[int, str | None]]) -> None:
    lines = [
        {"kind": "run", "schema": "benchreport/1", "id": run, "workload": {"concurrency": 2}}
        for run in RUNS
    ]
    for i, (run, reason) in enumerate(rows):
        request = {
            "kind": "request",
            "run": RUNS[run],
            "id": f"r{i}",
            "t_send": float(i),
            "t_first": i + 0.5,
            "t_end": i + 2.0,
            "output_tokens": 10,
        }
        if reason is not None:
            request["finish_reason"] = reason
        lines.append(request)
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")


def _data(paths: list[Path]) -> AuditData:
    return api.analyse(api.load(paths))


@settings(max_examples=15, deadline=None)
@pytest.mark.slow
@given(
    rows=st.lists(st.tuples(st.integers(0, 2), REASONS), min_size=0, max_size=30),
    more=st.lists(st.tuples(st.integers(0, 2), REASONS), min_size=0, max_size=5),
    picks=st.lists(st.integers(0, 40), max_size=12),
    limit=st.integers(1, 9),
)
def test_refs_and_finish_reasons_match_the_rows(
    tmp_path_factory: object,
    rows: list[tuple[int, str | None]],
    more: list[tuple[int, str | None]],
    picks: list[int],
    limit: int,
) -> None:
    folder = tmp_path_factory.mktemp("refs")  # type: ignore[attr-defined]
    paths = [folder / "one.jsonl"]
    _write(paths[0], rows)  # runs interleaved: their rows are taken apart
    if more:
        paths.append(folder / "two.jsonl")
        _write(paths[1], more)
    data = _data(paths)
    if rows or more:  # the refs come from the arrays, not the frames
        assert data._ref_columns is not None
    for run in data.stats.index.astype(str):
        frame = data.requests_of(run)
        assert data.refs_of(run) == request_refs(frame)
        assert data.refs_of(run, limit=limit) == request_refs(frame, limit)
        at = np.asarray(sorted({p for p in picks if p < len(frame)}), dtype=np.intp)
        at = at[::-1] if len(at) % 2 else at  # positions in any order
        assert data.refs_of(run, at, limit) == request_refs(frame.iloc[at], limit)
        for reason in ("stop", "length", "abort", "none of these"):
            assert np.array_equal(
                data.finish_reason_is(run, reason), finish_reason_is(frame, reason)
            )
        assert np.array_equal(data.finish_reason_known(run), finish_reason_known(frame))


def test_interleaved_runs_are_read_from_the_arrays(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    _write(path, [(i % 3, ["stop", "length", None][i % 2]) for i in range(20)])
    data = _data([path])
    assert data._ref_columns is not None and data._finish_reason_codes is not None
    for run in RUNS:
        frame = data.requests_of(run)
        assert data.refs_of(run, np.array([5, 0, 2])) == request_refs(frame.iloc[[5, 0, 2]])
        assert np.array_equal(data.finish_reason_is(run, "stop"), finish_reason_is(frame, "stop"))
        assert np.array_equal(data.finish_reason_known(run), finish_reason_known(frame))
