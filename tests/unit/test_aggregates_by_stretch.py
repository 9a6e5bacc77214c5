"""reporter.metrics.request_aggregates over each run's stretch of rows: the frame pandas'
group-by gives (the general path), to the last bit, whatever the rows hold."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tests.conftest import assert_aggregates_as_group_by

#: ties, signed zeros, infinities, NaN, extremes and ordinary figures
VALUES = st.one_of(
    st.sampled_from([0.0, -0.0, 1.0, -1.0, 2.5, np.inf, -np.inf, np.nan, 1e308, -1e308]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(-10, 10).map(lambda x: round(x, 1)),
)
#: times as a trace has them: positive, coarse (ties), some missing
TIMES = st.one_of(st.floats(1, 20).map(lambda x: round(x, 1)), st.just(np.nan))

RUNS = ["r0", "r1", "r2", "r3", "r4"]


def _frame(
    codes: np.ndarray, ok: np.ndarray, times: np.ndarray, values: np.ndarray
) -> pd.DataFrame:
    """Request rows as normalize_requests leaves them (the columns request_aggregates reads)."""
    send, first, end = times
    frame = pd.DataFrame(
        {
            "run": pd.Categorical.from_codes(codes, categories=RUNS),
            "t_send": send,
            "t_first": first,
            "t_end": end,
            "output_tokens": values[0],
            "reported_tps": values[1],
            "prompt_tokens": values[2],
            "ttft": values[3],
            "decode_tps": values[4],
        }
    )
    with np.errstate(all="ignore"):
        frame["e2e"] = np.where(np.isnan(values[5]), end - send, values[5])
        frame["decode_s"] = end - first
    frame["ok"] = ok
    return frame


@settings(max_examples=250, deadline=None)
@given(
    st.integers(1, 40).flatmap(
        lambda n: st.tuples(
            hnp.arrays(np.int8, n, elements=st.integers(0, 4)),
            st.one_of(
                hnp.arrays(np.bool_, n),
                st.just(np.ones(n, dtype=bool)),  # every request succeeded
            ),
            hnp.arrays(np.float64, (3, n), elements=TIMES),
            hnp.arrays(np.float64, (6, n), elements=VALUES),
            st.booleans(),
        )
    )
)
@pytest.mark.slow
def test_request_aggregates_are_the_group_by(
    case: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, bool],
) -> None:
    codes, ok, times, values, grouped = case
    if grouped:  # the usual trace: each run's rows together
        codes = np.sort(codes)
    assert_aggregates_as_group_by(_frame(codes, ok, times, values))


def test_large_runs_with_failures_and_gaps() -> None:
    """Thousands of rows a run, some failed, some without times, some runs with no success."""
    rng = np.random.default_rng(11)
    n = 12_000
    for draw in range(4):
        codes = np.sort(rng.integers(0, 5, n)).astype(np.int8)
        send = np.cumsum(rng.exponential(0.01, n)) + 1.0
        first = send + rng.exponential(0.3, n)
        end = first + rng.exponential(2.0, n)
        values = np.vstack(
            [np.round(rng.lognormal(5, 1, n))] + [rng.lognormal(0, 1, n) for _ in range(5)]
        )
        values[5] = np.nan  # e2e from the times
        ok = rng.random(n) > (0.1 if draw else 0.0)
        if draw >= 2:
            first[rng.random(n) < 0.05] = np.nan
            values[:, rng.random(n) < 0.05] = np.nan
            ok[codes == 3] = False
        assert_aggregates_as_group_by(_frame(codes, ok, np.vstack([send, first, end]), values))
