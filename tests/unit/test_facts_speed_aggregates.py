"""request_aggregates' shortcuts for the usual trace, to the last bit of pandas' group-by:
columns without NaN (told from their minimum), a sum that serves its mean, the standard
deviation of runs whose outputs are all one length, and each run's medians read from the
stretches already found."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from reporter.medians import medians_by_code
from tests.conftest import assert_aggregates_as_group_by, float_bits

RUNS = ["r0", "r1", "r2", "r3"]

#: one output length a run: zeros of both signs, huge, infinite and NaN lengths among them
LENGTHS = st.sampled_from([128.0, 1.0, 0.0, -0.0, 1e308, -1e308, 5e-324, np.inf, np.nan, 0.1])
VALUES = st.one_of(
    st.sampled_from([0.0, -0.0, 1.0, 2.5, np.inf, -np.inf, 1e308, -1e308]),
    st.floats(allow_nan=False, allow_infinity=True),
    st.floats(-10, 10).map(lambda x: round(x, 1)),
)
TIMES = st.floats(1, 20).map(lambda x: round(x, 1))


def _frame(
    codes: np.ndarray, lengths: np.ndarray, times: np.ndarray, values: np.ndarray
) -> pd.DataFrame:
    send = times[0]
    first = send + times[1]
    end = first + times[2]
    frame = pd.DataFrame(
        {
            "run": pd.Categorical.from_codes(codes, categories=RUNS),
            "t_send": send,
            "t_first": first,
            "t_end": end,
            "output_tokens": lengths[codes],
            "reported_tps": values[0],
            "prompt_tokens": values[1],
            "ttft": first - send,
            "decode_tps": values[2],
            "e2e": end - send,
            "decode_s": end - first,
            "ok": np.ones(len(codes), dtype=bool),
        }
    )
    return frame


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    st.integers(1, 40).flatmap(
        lambda n: st.tuples(
            hnp.arrays(np.int8, n, elements=st.integers(0, 3)),
            hnp.arrays(np.float64, 4, elements=LENGTHS),
            hnp.arrays(np.float64, (3, n), elements=TIMES),
            hnp.arrays(np.float64, (3, n), elements=VALUES),
            st.booleans(),
        )
    )
)
def test_runs_of_one_output_length(
    case: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, bool],
) -> None:
    codes, lengths, times, values, vary = case
    codes = np.sort(codes)
    frame = _frame(codes, lengths, times, values)
    if vary:  # one run's lengths not all one
        rows = np.flatnonzero(codes == codes[-1])
        frame.loc[rows[-1], "output_tokens"] = 7.0
    assert_aggregates_as_group_by(frame)


def test_a_large_sweep_of_one_output_length() -> None:
    rng = np.random.default_rng(5)
    n = 20_000
    codes = np.repeat(np.arange(4, dtype=np.int8), n // 4)
    times = np.vstack([np.cumsum(rng.exponential(0.01, n)), *rng.exponential(0.5, (2, n))])
    values = rng.lognormal(3, 1, (3, n))
    for lengths in ([128.0] * 4, [128.0, 64.0, 1.0, 1e6]):
        assert_aggregates_as_group_by(_frame(codes, np.array(lengths), times, values))


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    st.integers(1, 40).flatmap(
        lambda n: st.tuples(
            hnp.arrays(np.int8, n, elements=st.integers(0, 4)),
            hnp.arrays(
                np.float64,
                n,
                elements=st.one_of(VALUES, st.just(np.nan), st.sampled_from([0.0, -0.0])),
            ),
        )
    )
)
def test_medians_from_the_stretches_found(case: tuple[np.ndarray, np.ndarray]) -> None:
    codes, values = case
    codes = np.sort(codes)
    starts = np.flatnonzero(np.concatenate(([True], codes[1:] != codes[:-1])))
    with np.errstate(all="ignore"):  # two huge middle values overflow their sum, as ever
        expected = medians_by_code(values.copy(), codes.copy())
        found = medians_by_code(values, codes, starts)
    assert float_bits(found) == float_bits(expected)
