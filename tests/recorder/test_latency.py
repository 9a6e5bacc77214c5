"""Latency percentiles (reporter.latency): exact figures on a hand-made table."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from reporter.latency import latency_table, run_latencies, run_latency
from reporter.table import normalize_requests


def _requests() -> pd.DataFrame:
    rows = [
        # run a: two requests, chunk gaps 0.1 / 0.1 / 0.2 and 0.3
        {"run": "a", "id": "1", "t_send": 0.0, "t_first": 0.5, "t_end": 0.9,
         "output_tokens": 5, "token_times": [0.5, 0.6, 0.7, 0.9], "finish_reason": "length"},
        {"run": "a", "id": "2", "t_send": 0.0, "t_first": 1.0, "t_end": 1.3,
         "output_tokens": 4, "token_times": [1.0, 1.3], "finish_reason": "length"},
        # a failed request does not count
        {"run": "a", "id": "3", "t_send": 0.0, "t_first": 9.0, "t_end": 9.5,
         "output_tokens": 2, "token_times": [9.0, 9.5], "finish_reason": "error"},
        # run b: no chunk times at all
        {"run": "b", "id": "1", "t_send": 1.0, "t_first": 1.25, "t_end": 3.25,
         "output_tokens": 9, "token_times": None, "finish_reason": "length"},
    ]  # fmt: skip
    return normalize_requests(pd.DataFrame(rows))


def test_percentiles_per_run():
    table = latency_table(_requests())
    a = run_latency(table, "a")
    assert a["ttft_s"] == pytest.approx({"p50": 0.75, "p90": 0.95, "p99": 0.995})
    # gaps 0.1, 0.1, 0.2 (request 1) and 0.3 (request 2); never the 1.0 → 9.0 boundary
    assert a["itl_s"]["p50"] == pytest.approx(np.percentile([0.1, 0.1, 0.2, 0.3], 50))
    assert a["itl_s"]["p99"] == pytest.approx(np.percentile([0.1, 0.1, 0.2, 0.3], 99))
    # TPOT: 0.4 ÷ 4 = 0.1 and 0.3 ÷ 3 = 0.1
    assert a["tpot_s"] == pytest.approx({"p50": 0.1, "p90": 0.1, "p99": 0.1})
    assert a["e2e_s"]["p50"] == pytest.approx(1.1)
    b = run_latency(table, "b")
    assert b["ttft_s"] == pytest.approx({"p50": 0.25, "p90": 0.25, "p99": 0.25})
    assert b["tpot_s"]["p50"] == pytest.approx(0.25)
    assert b["itl_s"] == {"p50": None, "p90": None, "p99": None}
    assert run_latency(table, "absent")["e2e_s"] == {"p50": None, "p90": None, "p99": None}
    # every run's at once, as the verdict reads them: the same dicts
    assert run_latencies(table) == {r: run_latency(table, r) for r in ("a", "b")}


def test_empty_table():
    table = latency_table(normalize_requests(pd.DataFrame({"run": [], "id": []})))
    assert table.empty
    # a table without the figures' columns (a streamed audit's) holds no run
    assert run_latencies(pd.DataFrame()) == {}
    assert run_latency(pd.DataFrame(), "a")["ttft_s"] == {"p50": None, "p90": None, "p99": None}


def test_chunk_times_read_from_arrow_chunks_as_from_lists():
    """Chunk times held as Arrow lists in several chunks, runs interleaved within a chunk,
    give the table of the same times held as Python lists, and the gaps by hand."""
    import pyarrow as pa

    requests = _requests()
    # runs a and b interleaved, and a second request of b with chunk times
    extra = requests.iloc[[0]].assign(run="b", id="2", token_times=[[2.0, 2.5, 2.75]])
    requests = normalize_requests(
        pd.concat([requests.iloc[[0, 3]], extra, requests.iloc[[1, 2]]], ignore_index=True)
    )
    lists = [None if t is None else list(t) for t in requests["token_times"]]
    array = pa.array(lists, pa.list_(pa.float64()))
    chunked = pa.chunked_array([array.slice(0, 2), array.slice(2)])
    arrow = requests.assign(
        token_times=pd.Series(pd.arrays.ArrowExtensionArray(chunked), index=requests.index)
    )
    table = latency_table(arrow)
    pd.testing.assert_frame_equal(table, latency_table(requests), check_exact=True)
    a, b = run_latency(table, "a"), run_latency(table, "b")
    assert isinstance(arrow["token_times"].dtype, pd.ArrowDtype)
    assert a["itl_s"]["p50"] == pytest.approx(np.percentile([0.1, 0.1, 0.2, 0.3], 50))
    assert b["itl_s"]["p90"] == pytest.approx(np.percentile([0.5, 0.25], 90))
