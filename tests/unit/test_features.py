"""reporter.features: flags, levels and counters read the same whatever the spelling."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from reporter import features


def test_flag_spellings():
    for flags in (
        ["--parallel", "4"],
        ["--parallel 4"],
        ["--parallel=4"],
        ["-np", "4"],
        ["max_num_seqs=4"],
        ["--cont-batching"],
        ["-cb"],
    ):
        assert list(features.requested(features.parse_flags(flags))) == ["batching"], flags


@given(st.lists(st.text(max_size=30), max_size=8))
def test_parse_flags_takes_anything(items):
    parsed = features.parse_flags(items)
    features.requested(parsed)


def test_counter_families_first_match_wins():
    samples = {
        'vllm:prefix_cache_hits_total{model_name="m"}': 5.0,
        'vllm:prompt_tokens_by_source_total{source="local_cache_hit"}': 5.0,
        "vllm:prefix_cache_queries_total": 9.0,
        "vllm:mm_cache_hits_total": 7.0,
    }
    assert features.counter_value(samples, features.CACHE_HIT_COUNTERS) == (
        5.0,
        ['vllm:prefix_cache_hits_total{model_name="m"}'],
    )
    assert (
        features.counter_value({"vllm:mm_cache_hits_total": 7.0}, features.CACHE_HIT_COUNTERS)
        is None
    )


def test_metric_samples_from_text_and_delta():
    text = "# TYPE x counter\nvllm:spec_decode_num_drafts_total 12\n"
    assert features.metric_samples(text) == {"vllm:spec_decode_num_drafts_total": 12.0}
    extra = {
        "metrics_before": {"vllm:spec_decode_num_drafts_total": 2},
        "run_end": {"metrics_after": text},
    }
    d = features.counter_delta(extra, features.SPEC_DRAFT_COUNTERS)
    assert d is not None and (d.before, d.after, d.delta, d.where) == (
        2.0,
        12.0,
        10.0,
        "run_end.metrics_after",
    )


def test_recorder_delta_is_read():
    extra = {"run_end": {"metrics_delta": {"prefix_cache_hits": 0.0, "prefix_cache_queries": 9.0}}}
    d = features.counter_delta(extra, features.CACHE_HIT_COUNTERS)
    assert d is not None and d.delta == 0.0


def test_levels():
    assert features.normalise_level("WARN", "") == "warning"
    assert features.normalise_level(None, "0.00.012.101 W srv  load_model: x") == "warning"
    assert features.normalise_level("E", "") == "error"
    assert features.normalise_level(None, "plain text") is None


def test_runs_of_one_server_share_file_engine_flags_model_and_hardware():
    runs = pd.DataFrame(
        {
            "run": ["a", "b", "c", "d", "e"],
            "source_path": ["x.jsonl"] * 4 + ["y.jsonl"],
            "engine_name": ["vllm", "vllm", "vllm", "sglang", "vllm"],
            "engine_version": ["0.6"] * 5,
            "engine_flags": [["--max-num-seqs", "64"], ("--max-num-seqs", "64"), None, None, None],
            "model_name": ["m"] * 5,
            "hardware_name": ["h100", "h100", "h100", "h100", np.nan],
        }
    )
    assert features.servers(runs) == {
        "a": ["a", "b"], "b": ["a", "b"], "c": ["c"], "d": ["d"], "e": ["e"]
    }  # fmt: skip
    assert features.same_server(runs, "b") == ["a", "b"]
    # a run the table does not hold is its own server; the ids may be the index
    assert features.same_server(runs, "zzz") == ["zzz"]
    assert features.servers(runs.set_index("run")) == features.servers(runs)
    # a column the table lacks is the same unknown value for every run
    assert features.servers(runs[["run", "engine_name"]])["a"] == ["a", "b", "c", "e"]
