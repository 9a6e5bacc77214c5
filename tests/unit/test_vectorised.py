"""Whole-column shortcuts give the answers of the plain computations they replace."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from reporter import metrics
from reporter.rules.br004_admission_queue import held_level
from reporter.series import _drawing_order


def _held_level_by_scan(starts: np.ndarray, ends: np.ndarray, share: float) -> int:
    """The definition: from the highest level down, the first held long enough."""
    if len(starts) == 0:
        return 0
    times = np.concatenate((ends, starts))
    deltas = np.concatenate((-np.ones(len(ends)), np.ones(len(starts))))
    order = np.argsort(times, kind="stable")
    level = np.cumsum(deltas[order])[:-1]
    spans = np.diff(times[order])
    busy = spans[level > 0].sum()
    if busy <= 0:
        return int(level.max(initial=0))
    for k in range(int(level.max(initial=0)), 0, -1):
        if spans[level >= k].sum() >= share * busy:
            return k
    return 0


@pytest.mark.parametrize("share", [0.0, 0.1, 0.25, 0.5, 1.0])
def test_held_level_is_the_scan_from_the_top(share: float) -> None:
    rng = np.random.default_rng(11)
    for _ in range(300):
        n = int(rng.integers(0, 60))
        # coarse times: many ties and levels held for exactly the threshold
        starts = np.round(rng.random(n) * 10, int(rng.integers(0, 3)))
        ends = starts + np.round(rng.random(n) * 4, int(rng.integers(0, 3)))
        expected = _held_level_by_scan(starts, ends, share)
        assert held_level(starts, ends, share) == expected
        # the same from times each in order already (as the admission-queue rule passes them)
        assert held_level(np.sort(starts), np.sort(ends), share, ordered=True) == expected


def test_union_length_is_the_same_by_loop_and_by_group_by(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = np.random.default_rng(5)
    for trial in range(200):
        n = int(rng.integers(1, 300))
        runs = rng.integers(0, int(rng.integers(1, 8)), n).astype(float)
        start = np.round(rng.random(n) * 10, 1)
        end = start + np.round(rng.random(n) * 3, 1)
        if trial % 5 == 0:
            start[rng.integers(0, n)] = np.nan
        looped = metrics.union_length(runs, start, end)
        monkeypatch.setattr(metrics, "_MANY_GROUPS", 0)
        grouped = metrics.union_length(runs, start, end)
        monkeypatch.undo()
        pd.testing.assert_series_equal(looped, grouped, check_exact=True)


@pytest.mark.slow
def test_drawing_order_is_the_sort_by_send_first_end_line() -> None:
    rng = np.random.default_rng(3)
    for _ in range(300):
        n = int(rng.integers(1, 80))
        # coarse times: many equal send times (requests sent together), some missing
        frame = pd.DataFrame(
            {
                c: np.round(rng.random(n) * 4, int(rng.integers(0, 2)))
                for c in ("t_send", "t_first", "t_end")
            }
        )
        for c in ("t_send", "t_first"):
            frame.loc[rng.random(n) < 0.1, c] = np.nan
        frame["source_line"] = rng.integers(1, 5, n)
        expected = frame.sort_values(
            ["t_send", "t_first", "t_end", "source_line"], kind="stable"
        ).index.to_numpy()
        order = _drawing_order(*(frame[c].to_numpy() for c in frame.columns))
        assert order.tolist() == expected.tolist()


def test_take_rows_is_iloc_for_arrow_columns_in_chunks() -> None:
    """Rows taken chunk by chunk from an Arrow column in several chunks (some empty) are the
    rows iloc takes, with the same dtypes."""
    import pyarrow as pa

    from reporter.table import take_rows

    kind = pa.list_(pa.float64())
    rows = [[float(i)] * (i % 3) if i % 5 else None for i in range(40)]
    chunks = [pa.array(rows[a:b], kind) for a, b in ((0, 7), (7, 7), (7, 30), (30, 40))]
    frame = pd.DataFrame(
        {
            "run": pd.Categorical([f"r{i // 10}" for i in range(40)]),
            "times": pd.Series(pd.arrays.ArrowExtensionArray(pa.chunked_array(chunks, kind))),
            "t": np.arange(40, dtype="float64"),
        }
    )
    rng = np.random.default_rng(5)
    for size in (0, 1, 4, 17, 40):
        picked = np.sort(rng.choice(40, size, replace=False))
        pd.testing.assert_frame_equal(take_rows(frame, picked), frame.iloc[picked])


@pytest.mark.slow
def test_union_length_sums_blocks_as_the_pandas_group_by() -> None:
    """Each run's merged blocks summed by np.add.reduceat give pandas' group-by sum, bit for
    bit (what union_length returned before it skipped the group-by)."""
    rng = np.random.default_rng(9)
    for _ in range(300):
        n = int(rng.integers(2, 300))
        runs = rng.integers(0, int(rng.integers(1, 9)), n).astype(np.int8)
        start = rng.random(n) * 10.0 ** int(rng.integers(0, 10))
        end = start + rng.random(n) * 10.0 ** int(rng.integers(-3, 3))
        order = np.lexsort((start, runs))
        r, s, e = runs[order], start[order], end[order]
        group_start = np.concatenate(([True], r[1:] != r[:-1]))
        reach = metrics._running_max(e, np.flatnonzero(group_start))
        new_block = group_start.copy()
        new_block[1:] |= s[1:] > reach[:-1]
        firsts = np.flatnonzero(new_block)
        lengths = np.maximum.reduceat(e, firsts) - s[firsts]
        if len(firsts) < 2:
            continue
        expected = pd.Series(lengths).groupby(r[firsts], sort=False).sum()
        got = metrics.union_length(runs, start, end)
        assert got.to_numpy().tobytes() == expected.to_numpy().tobytes()
        assert got.index.tolist() == expected.index.tolist()
