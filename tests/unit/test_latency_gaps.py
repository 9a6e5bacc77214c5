"""A run's chunk gaps, written chunk by chunk into its own array, are the per-request gaps."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pyarrow as pa

from reporter import latency


def _gaps_by_request(
    lists: list[list[float] | None], codes: np.ndarray, kept: np.ndarray
) -> dict[int, list[float]]:
    """The definition: each kept request's consecutive differences, per run, in row order."""
    out: dict[int, list[float]] = {}
    for times, code, keep in zip(lists, codes.tolist(), kept.tolist(), strict=True):
        if keep and times is not None and len(times) > 1:
            out.setdefault(code, []).extend(np.diff(times).tolist())
    return out


def test_gaps_are_each_requests_own_in_row_order() -> None:
    rng = np.random.default_rng(2)
    for trial in range(400):
        n = int(rng.integers(1, 40))
        lists: list[list[float] | None] = [
            None
            if rng.random() < 0.1
            else np.round(np.cumsum(rng.random(int(rng.integers(0, 6)))), 2).tolist()
            for _ in range(n)
        ]
        whole = pa.array(lists, type=pa.list_(pa.float64()))
        # chunks as pyarrow reads them (block by block), some cut across runs
        cuts = sorted({0, n, *rng.integers(0, n + 1, 3).tolist()})
        chunked = pa.chunked_array(
            [whole.slice(a, b - a) for a, b in itertools.pairwise(cuts)],
            type=whole.type,
        )
        frame = pd.DataFrame({"token_times": pd.arrays.ArrowExtensionArray(chunked)})
        codes = rng.integers(0, 3, n).astype(np.int8)
        if trial % 2:  # the usual trace: each run's rows together
            codes = np.sort(codes)
        kept = rng.random(n) < 0.8
        found = {
            code: gaps[~np.isnan(gaps)].tolist()
            for code, gaps in latency._gaps(frame, kept, codes).items()
        }
        assert {c: g for c, g in found.items() if g} == _gaps_by_request(lists, codes, kept)
