"""Invariants of the audit over synthetic schedules (hypothesis)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reporter import api
from reporter.errors import TraceError

SETTINGS = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def run_record(run_id: str, n: int, out: int, group: str = "g") -> dict[str, Any]:
    return {
        "kind": "run",
        "schema": "benchreport/1",
        "id": run_id,
        "group": group,
        "workload": {"concurrency": n, "output_tokens": out, "stop": "forced", "ignore_eos": True},
    }


def req(run_id: str, i: int, send: float, first: float, end: float, out: int) -> dict[str, Any]:
    return {
        "kind": "request",
        "run": run_id,
        "id": i,
        "t_send": send,
        "t_first": first,
        "t_end": end,
        "output_tokens": out,
        "finish_reason": "length",
    }


def serial(run_id: str, n: int, out: int, rate: float, prefill: float) -> list[dict[str, Any]]:
    recs, t = [], 0.0
    for i in range(n):
        first = t + prefill
        end = first + out / rate
        recs.append(req(run_id, i, 0.0, first, end, out))
        t = end
    return recs


def overlapped(
    run_id: str, n: int, out: int, rate: float, prefill: float, jitter: list[float]
) -> list[dict[str, Any]]:
    return [
        req(run_id, i, 0.0, prefill + jitter[i], prefill + jitter[i] + out / rate, out)
        for i in range(n)
    ]


def audit_records(tmp_path: Path, records: list[dict[str, Any]], name: str = "t") -> dict[str, Any]:
    path = tmp_path / f"{name}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return api.audit([path]).to_dict()


def fired(verdict: dict[str, Any]) -> set[tuple[str, str]]:
    return {(f["code"], f["subject"]) for f in verdict["findings"] if f["outcome"] == "fired"}


sizes = st.integers(min_value=2, max_value=12)
outs = st.integers(min_value=16, max_value=1024)
rates = st.floats(min_value=5.0, max_value=500.0)
prefills = st.floats(min_value=0.001, max_value=2.0)


@pytest.mark.slow
@SETTINGS
@given(n=sizes, out=outs, rate=rates, prefill=prefills)
def test_a_strictly_serial_schedule_always_fires_br003(tmp_path, n, out, rate, prefill):
    v = audit_records(tmp_path, [run_record("s", n, out), *serial("s", n, out, rate, prefill)])
    assert ("BR003", "s") in fired(v)
    assert v["runs"][0]["verdict"] == "serial"


@pytest.mark.slow
@SETTINGS
@given(
    n=sizes,
    out=outs,
    rate=rates,
    prefill=prefills,
    jitter=st.lists(st.floats(min_value=0, max_value=0.05), min_size=12, max_size=12),
)
def test_fully_overlapped_equal_requests_never_fire_br003_or_br005(
    tmp_path, n, out, rate, prefill, jitter
):
    records = []
    for k in (1, n):
        # batching: each stream slows a little as the batch grows, the aggregate still rises;
        # starts differ by at most 5% of a request's decode time (fully overlapped)
        slowed = rate / (1 + 0.05 * (k - 1))
        shifts = [j * out / slowed for j in jitter]
        records += [
            run_record(f"b{k}", k, out),
            *overlapped(f"b{k}", k, out, slowed, prefill, shifts),
        ]
    codes = {code for code, _ in fired(audit_records(tmp_path, records))}
    assert "BR003" not in codes
    assert "BR005" not in codes


@pytest.mark.slow
@SETTINGS
@given(out=outs, rate=rates, prefill=prefills, repeats=st.integers(min_value=1, max_value=5))
def test_a_single_n1_run_raises_no_concurrency_alarm(tmp_path, out, rate, prefill, repeats):
    recs = [run_record("one", 1, out)]
    for r in serial("one", repeats, out, rate, prefill):
        r["t_send"] = r["t_first"] - prefill  # closed loop at N=1: each sent when the last ended
        recs.append(r)
    codes = {code for code, _ in fired(audit_records(tmp_path, recs))}
    assert not codes & {"BR001", "BR003", "BR004", "BR005", "BR009"}


def _schedule(kind: str, n: int, out: int, rate: float, prefill: float) -> list[dict[str, Any]]:
    if kind == "serial":
        return serial("x", n, out, rate, prefill)
    if kind == "overlapped":
        return overlapped("x", n, out, rate, prefill, [0.01 * i for i in range(n)])
    k = max(2, n // 2)  # admission queue: k slots
    first = overlapped("x", k, out, rate, prefill, [0.001 * i for i in range(k)])
    rest = []
    for j in range(n - k):
        start = first[j % k]["t_end"] + prefill * 0.01
        rest.append(req("x", k + j, 0.0, start, start + out / rate, out))
    return first + rest


@pytest.mark.slow
@SETTINGS
@given(
    kind=st.sampled_from(["serial", "overlapped", "queue"]),
    n=st.integers(3, 10),
    out=outs,
    rate=rates,
    prefill=prefills,
    shift=st.floats(-1e5, 1e5),
    scale=st.floats(min_value=0.01, max_value=100.0),
    seed=st.integers(0, 2**32 - 1),
)
def test_shuffling_shifting_and_scaling_keep_the_fired_codes(
    tmp_path, kind, n, out, rate, prefill, shift, scale, seed
):
    base = [run_record("x", n, out), *_schedule(kind, n, out, rate, prefill)]
    moved = [dict(r) for r in base]
    for r in moved:
        for key in ("t_send", "t_first", "t_end"):
            if key in r:
                r[key] = r[key] * scale + shift
    random.Random(seed).shuffle(moved)
    assert fired(audit_records(tmp_path, base, "a")) == fired(audit_records(tmp_path, moved, "b"))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                ["kind", "run", "id", "t_send", "t_end", "output_tokens", "finish_reason", "x"]
            ),
            children,
            max_size=6,
        )
    ),
    max_leaves=12,
)


@pytest.mark.slow
@SETTINGS
@given(records=st.lists(json_values, min_size=1, max_size=6))
def test_the_reader_on_arbitrary_json_only_raises_trace_errors(tmp_path, records):
    path = tmp_path / "any.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    try:
        api.audit([path], fmt="benchreport")
    except TraceError as exc:
        assert exc.problems
        for p in exc.problems:
            assert str(p).startswith(f"{path}:")


@pytest.mark.slow
@SETTINGS
@given(n=sizes, out=outs, rate=rates, prefill=prefills)
def test_total_over_wall_never_exceeds_the_sum_of_decode_rates(tmp_path, n, out, rate, prefill):
    recs = [run_record("s", n, out)]
    for r in serial("s", n, out, rate, prefill):
        r["reported_tps"] = out / (r["t_end"] - r["t_first"])
        recs.append(r)
    run = audit_records(tmp_path, recs)["runs"][0]
    assert run["aggregate_tps"] <= run["sum_reported_tps"] * (1 + 1e-9)


@pytest.mark.parametrize("n", [2, 4, 8])
def test_overlap_is_n_for_full_overlap_and_one_for_serial(tmp_path, n):
    v = audit_records(
        tmp_path, [run_record("o", n, 100), *overlapped("o", n, 100, 50.0, 0.1, [0.0] * n)], "o"
    )
    assert v["runs"][0]["overlap"] == pytest.approx(n)
    v = audit_records(tmp_path, [run_record("s", n, 100), *serial("s", n, 100, 50.0, 0.1)], "s")
    assert v["runs"][0]["overlap"] == pytest.approx(1.0)
