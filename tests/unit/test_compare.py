"""reporter.compare: factor differences, judgement, chains whose ratios multiply to the whole."""

from __future__ import annotations

import math

import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from reporter import compare
from reporter.compare import Point


def values(**kw):
    base = {f.key: None for f in compare.FACTORS}
    base.update(kw)
    return base


def test_judge_conditions_always_block():
    a = values(stop="forced", content="code", engine="x")
    b = values(stop="natural", content="code", engine="x")
    j = compare.judge(compare.diff(a, b))
    assert j.comparable is False
    assert j.reason == "conditions differ (stop mode)"


def test_judge_one_setup_category_is_what_is_compared():
    a = values(stop="forced", engine="vLLM", engine_version="0.11", quant="fp8")
    b = values(stop="forced", engine="llama.cpp", engine_version="b5606", quant="Q4_K_M")
    assert compare.judge(compare.diff(a, b)).comparable is True


def test_judge_two_setup_categories_block():
    a = values(stop="forced", engine_version="0.11", concurrency=8.0)
    b = values(stop="forced", engine_version="0.10", concurrency=1.0)
    j = compare.judge(compare.diff(a, b))
    assert j.comparable is False
    assert j.reason == "2 setups differ at once (N; engine version)"
    # a scaling factor compares N: then nothing else may differ
    c = values(stop="forced", engine_version="0.11", concurrency=1.0)
    assert compare.judge(compare.diff(a, c), frozenset({"concurrency"})).comparable is True


def test_lengths_within_tolerance_are_the_same():
    a, b = values(prompt_tokens=352.0), values(prompt_tokens=360.0)
    assert compare.diff(a, b)[1].state == compare.SAME
    c = values(prompt_tokens=5634.0)
    assert compare.diff(a, c)[1].state == compare.DIFFERS


def test_chain_takes_the_finest_path():
    start = Point(["qa"], 171.2, values(stop="natural", content="prose", speculation="on"))
    mid = Point(["prose"], 359.3, values(stop="forced", content="prose", speculation="on"))
    other = Point(["off"], 200.0, values(stop="forced", content="code", speculation="off"))
    end = Point(["code"], 606.1, values(stop="forced", content="code", speculation="on"))
    steps = compare.chain([start, mid, other, end], start, end)
    assert [(s.src, s.dst, s.factors) for s in steps] == [
        ("qa", "prose", ["stop mode"]),
        ("prose", "code", ["content"]),
    ]
    assert [round(s.ratio, 2) for s in steps] == [2.10, 1.69]
    assert round(math.prod(s.ratio for s in steps), 2) == 3.54


def test_no_chain_without_an_intermediate_run():
    start = Point(["a"], 100.0, values(stop="natural", content="prose"))
    end = Point(["b"], 300.0, values(stop="forced", content="code"))
    assert compare.chain([start, end], start, end) == []


FACTORS3 = ("stop", "content", "speculation")


@given(
    rates=st.lists(st.floats(min_value=1.0, max_value=1e4), min_size=8, max_size=8),
    present=st.lists(st.booleans(), min_size=8, max_size=8),
)
def test_chain_ratios_multiply_to_the_whole(rates, present):
    """Over the cube of three binary factors, any chain found telescopes to end ÷ start."""
    pts = []
    for i in range(8):
        bits = [(i >> k) & 1 for k in range(3)]
        vals = values(**{f: f"v{b}" for f, b in zip(FACTORS3, bits, strict=True)})
        pts.append(Point([f"r{i}"], rates[i], vals))
    start, end = pts[0], pts[7]
    mids = [p for p, keep in zip(pts[1:7], present[1:7], strict=True) if keep]
    steps = compare.chain([start, *mids, end], start, end)
    if steps:
        assert math.isclose(
            math.prod(s.ratio for s in steps), end.value / start.value, rel_tol=1e-9
        )
        moved = [f for s in steps for f in s.factors]
        assert sorted(moved) == sorted(["stop mode", "content", "speculation"])
        assert len(steps) >= 2


def test_bandwidth_split_with_the_seed_figures_as_printed():
    """2.80 ÷ 1.849 is 1.51, not the seed's 1.52; the exact product is the headline 2.36."""
    split = compare.BandwidthSplit(
        rate_a=97.83,
        rate_b=116 / 2.80,
        bytes_a=1.849e9,
        bytes_b=2.80e9,
        source_a="given",
        source_b="given",
    )
    assert round(split.bytes_ratio, 2) == 1.51
    assert round(split.bandwidth_ratio, 2) == 1.56
    assert round(split.ratio, 2) == 2.36
    assert math.isclose(split.bytes_ratio * split.bandwidth_ratio, split.ratio)


@given(ra=st.floats(1, 1e3), rb=st.floats(1, 1e3), ba=st.floats(1e8, 1e11), bb=st.floats(1e8, 1e11))
def test_bandwidth_split_is_exact(ra, rb, ba, bb):
    split = compare.BandwidthSplit(ra, rb, ba, bb, "", "")
    assert math.isclose(split.bytes_ratio * split.bandwidth_ratio, split.ratio, rel_tol=1e-9)


def test_resolve_accepts_file_qualified_names():
    runs = pd.DataFrame(
        {"run": ["n1", "b.jsonl:n8"], "source_path": ["traces/a.jsonl", "traces/b.jsonl"]}
    )
    assert compare.resolve(runs, "n1") == "n1"
    assert compare.resolve(runs, "traces/a.jsonl:n1") == "n1"
    assert compare.resolve(runs, "elsewhere/b.jsonl:n8") == "b.jsonl:n8"
