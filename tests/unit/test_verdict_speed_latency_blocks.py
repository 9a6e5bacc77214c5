"""The latency table computed a block of whole runs at a time (latency._run_blocks) is the
table of one array of every row, bit for bit, whatever the blocks' size."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reporter import latency
from reporter.latency import latency_table
from tests.unit.test_latency_table_reference import _outcome, _reference, request_frames


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(request_frames(), st.integers(1, 6))
def test_blocks_of_any_size_give_the_joined_tables(requests: pd.DataFrame, block_rows: int) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(latency, "BLOCK_ROWS", block_rows)
        found = _outcome(requests, latency_table)
    assert found == _outcome(requests, _reference)


@pytest.mark.parametrize("block_rows", [1, 2, 3, 7, 1000, 1 << 16])
def test_large_runs_in_blocks_give_the_joined_tables(
    block_rows: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Runs of many sizes in row order, some with NaN, signed zeros and failed requests, cut
    into blocks of every kind: several runs, one run, a run larger than a block."""
    monkeypatch.setattr(latency, "BLOCK_ROWS", block_rows)
    rng = np.random.default_rng(block_rows)
    for trial in range(6):
        sizes = rng.integers(1, 400, int(rng.integers(1, 12)))
        codes = np.repeat(np.arange(len(sizes)), sizes)
        n = len(codes)
        send = rng.random(n) * 100
        first = send + rng.lognormal(-2, 1, n)
        end = first + rng.lognormal(1, 1, n)
        tokens = rng.integers(0, 300, n).astype("float64")
        if trial % 2:
            first[rng.random(n) < 0.1] = np.nan
            end[codes == 0] = np.nan  # a run without an end time
        if trial % 3 == 0:
            # TTFTs of 0.0 and -0.0 (-0.0 - 0.0), where which one a partition picks shows
            zeros = rng.random(n) < 0.6
            send[zeros] = 0.0
            first[zeros] = np.where(rng.random(int(zeros.sum())) < 0.5, -0.0, 0.0)
        requests = pd.DataFrame(
            {
                "run": pd.Categorical.from_codes(codes, [f"r{i}" for i in range(len(sizes))]),
                "t_send": send,
                "t_first": first,
                "t_end": end,
                "output_tokens": tokens,
                "ok": rng.random(n) < (0.9 if trial % 2 else 1.0),
                "token_times": pd.Series([None] * n, dtype=object),
            }
        )
        assert _outcome(requests, latency_table) == _outcome(requests, _reference)


def test_blocks_are_whole_runs_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    codes = np.repeat(np.arange(5), [3, 1, 6, 2, 2])
    for block_rows in (1, 2, 4, 5, 100):
        monkeypatch.setattr(latency, "BLOCK_ROWS", block_rows)
        blocks = latency._run_blocks(codes)
        assert blocks[0][0] == 0 and blocks[-1][1] == len(codes)
        for (_, stop), (start, _) in itertools.pairwise(blocks):
            assert stop == start
        for start, stop in blocks:
            assert stop > start
            assert start == 0 or codes[start] != codes[start - 1]
    assert latency._run_blocks(np.zeros(0, dtype=np.int8)) == [(0, 0)]
