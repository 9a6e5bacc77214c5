"""The latency table, computed in one array per metric and written into its frame at once, is
the one each metric's own table joined and reindexed gave, bit for bit."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reporter import latency
from reporter.latency import METRICS, PERCENTILES, latency_table, percentiles


def _split_percentiles(values: np.ndarray, labels: np.ndarray, qs: list[float]) -> pd.DataFrame:
    """The former way: one stable sort by label, `percentiles` of each label's slice."""
    if len(labels) > 1 and (np.diff(labels) < 0).any():
        order = np.argsort(labels, kind="stable")
        values, labels = values[order], labels[order]
    cuts = np.flatnonzero(np.diff(labels)) + 1
    starts = np.concatenate(([0], cuts)).astype(np.int64)
    percents = [q * 100 for q in qs]
    rows = [percentiles(part, percents) for part in np.split(values, cuts)]
    return pd.DataFrame(rows, index=labels[starts], columns=qs)


def _reference(requests: pd.DataFrame) -> pd.DataFrame:
    """The latency table as it was computed: an array per metric, a table per metric, joined
    and reindexed."""
    if not isinstance(requests["run"].dtype, pd.CategoricalDtype):
        requests = requests.assign(run=requests["run"].astype(str).astype("category"))
    ok = requests["ok"].to_numpy(dtype=bool) if "ok" in requests else np.ones(len(requests), bool)
    every = bool(ok.all())

    def successful(column: np.ndarray) -> np.ndarray:
        return column if every else column[ok]

    all_codes = requests["run"].cat.codes.to_numpy()
    codes = successful(all_codes)
    names = np.asarray(requests["run"].cat.categories.astype(str))
    send, first, end = (successful(requests[c].to_numpy()) for c in ("t_send", "t_first", "t_end"))
    with np.errstate(invalid="ignore", divide="ignore"):
        steps = successful(requests["output_tokens"].to_numpy()) - 1.0
        decode = end - first
        tpot = np.where(steps >= 1, decode / steps, np.nan)
    series = {"ttft_s": first - send, "tpot_s": tpot, "e2e_s": end - send}
    columns = {}
    qs = [p / 100 for p in PERCENTILES]
    for name in METRICS:
        if name == "itl_s":
            table = latency._percentiles_of(latency._gaps(requests, ok, all_codes), qs)
            if table.empty:
                continue
        else:
            values, labels = series[name], codes
            keep = ~np.isnan(values)
            if not keep.any():
                continue
            if not keep.all():
                values, labels = values[keep], labels[keep]
            table = _split_percentiles(values, labels, qs)
        table.index = names[table.index.to_numpy()]
        for p, q in zip(PERCENTILES, qs, strict=True):
            columns[f"{name.removesuffix('_s')}_p{p}"] = table[q]
    frame = pd.DataFrame(columns)
    wanted = [f"{m.removesuffix('_s')}_p{p}" for m in METRICS for p in PERCENTILES]
    return frame.reindex(index=names, columns=wanted)


def _outcome(requests: pd.DataFrame, how: object) -> tuple[str, object]:
    """The table (its values' bits, labels and types) or the error, as `how` gives it."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            table = how(requests.copy(deep=True))  # type: ignore[operator]
    except Exception as error:
        return "error", (type(error), str(error))
    return "table", (
        table.to_numpy().tobytes(),
        list(table.index),
        list(table.columns),
        [str(t) for t in table.dtypes],
        str(table.index.dtype),
        str(table.columns.dtype),
        type(table.index),
    )


#: ties, signed zeros, infinities and NaN among ordinary times
TIMES = st.one_of(
    st.sampled_from([0.0, -0.0, 1.0, 2.0, 2.5, np.inf, -np.inf, np.nan]),
    st.floats(-10, 10).map(lambda x: round(x, 1)),
    st.floats(allow_nan=True, allow_infinity=True),
)
TOKENS = st.sampled_from([np.nan, 0.0, 1.0, 2.0, 3.0, 17.0, -1.0, np.inf])
CHUNKS = st.one_of(st.none(), st.lists(st.floats(-5, 5).map(lambda x: round(x, 1)), max_size=5))


@st.composite
def request_frames(draw: st.DrawFn) -> pd.DataFrame:
    n = draw(st.integers(0, 40))
    names = draw(
        st.lists(st.sampled_from(["a", "b", "c", "10", "9", None]), min_size=n, max_size=n)
    )
    if draw(st.booleans()):
        names = sorted(names, key=lambda x: (x is None, x or ""))  # a run's rows together
    frame = pd.DataFrame(
        {
            "run": pd.Categorical(names),
            "t_send": draw(st.lists(TIMES, min_size=n, max_size=n)),
            "t_first": draw(st.lists(TIMES, min_size=n, max_size=n)),
            "t_end": draw(st.lists(TIMES, min_size=n, max_size=n)),
            "output_tokens": draw(st.lists(TOKENS, min_size=n, max_size=n)),
        },
        columns=["run", "t_send", "t_first", "t_end", "output_tokens"],
    ).astype(dict.fromkeys(("t_send", "t_first", "t_end", "output_tokens"), "float64"))
    if draw(st.booleans()):
        frame["ok"] = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    times = draw(st.lists(CHUNKS, min_size=n, max_size=n))
    way = draw(st.sampled_from(["none", "objects", "arrow"]))
    if way == "none":
        frame["token_times"] = pd.Series([None] * n, dtype=object)
    elif way == "objects":
        frame["token_times"] = pd.Series(times, dtype=object)
    else:
        frame["token_times"] = pd.arrays.ArrowExtensionArray(
            pa.array(times, type=pa.list_(pa.float64()))
        )
    return frame


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(request_frames())
def test_latency_table_is_the_joined_tables(requests: pd.DataFrame) -> None:
    assert _outcome(requests, latency_table) == _outcome(requests, _reference)


def test_large_runs_are_the_joined_tables() -> None:
    """Runs large enough to be partitioned at separate points, some in and some out of order."""
    rng = np.random.default_rng(5)
    for trial in range(12):
        n = int(rng.integers(1000, 20_000))
        codes = rng.integers(0, 5, n)
        if trial % 2:
            codes = np.sort(codes)
        send = rng.random(n) * 100
        first = send + rng.lognormal(-2, 1, n)
        end = first + rng.lognormal(1, 1, n)
        if trial % 3 == 0:
            first = np.round(first, 1)  # ties
            end[rng.random(n) < 0.05] = np.nan
        requests = pd.DataFrame(
            {
                "run": pd.Categorical.from_codes(codes, ["r0", "r1", "r2", "r3", "r4"]),
                "t_send": send,
                "t_first": first,
                "t_end": end,
                "output_tokens": rng.integers(0, 300, n).astype("float64"),
                "ok": rng.random(n) < 0.97,
                "token_times": pd.Series([None] * n, dtype=object),
            }
        )
        assert _outcome(requests, latency_table) == _outcome(requests, _reference)


#: values mostly equal or signed zeros, where which of two equal values a partition picks
#: shows in the bits
SIGNED = st.one_of(
    st.sampled_from([0.0, -0.0, 0.0, -0.0, 1.0, -1.0, np.inf, -np.inf]),
    st.floats(allow_nan=False, allow_infinity=True),
)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), SIGNED), min_size=1, max_size=60), st.booleans())
def test_each_labels_percentiles_are_its_own(pairs: list[tuple[int, float]], order: bool) -> None:
    """Each label's figures are `percentiles` of its values in row order."""
    if order:
        pairs = sorted(pairs, key=lambda pair: pair[0])
    labels = np.asarray([label for label, _ in pairs], dtype=np.int8)
    values = np.asarray([value for _, value in pairs], dtype=np.float64)
    in_order = not (np.diff(labels) < 0).any()
    percents = [p / 100 * 100 for p in PERCENTILES]
    with np.errstate(all="ignore"):
        found_labels, found = latency._percentiles(values.copy(), labels, percents, in_order)
        expected = [percentiles(values[labels == label], percents) for label in found_labels]
    assert found_labels.tolist() == sorted(set(labels.tolist()))
    assert found.tobytes() == np.asarray(expected).tobytes()
