"""BR014 feature-not-observed: a flag asks for batching or caching; the trace shows none."""

from __future__ import annotations

import pytest

from reporter import api
from tests.conftest import FIXTURES, TRACES, finding


def test_method_3_prefix_cache_no_effect():
    """One 6,000-token prompt sent three times: TTFT stays 6.8 s, the hit counter stays 0."""
    v = api.audit([FIXTURES / "BR014" / "fires_prefix_cache_method.jsonl"], select=["BR014"])
    f = finding(v, "BR014", "pc-n1")
    assert f["outcome"] == "fired"
    n = f["numbers"]
    assert n["prefix caching"] == "not observed"
    assert n["prompt_tokens"] == 6000
    assert n["sends"] == 3
    assert round(n["ttft_first_s"], 1) == 6.8
    assert [round(x, 1) for x in n["ttft_later_s"]] == [6.8, 6.8]
    assert round(n["ttft_drop"], 2) == 0.0
    assert n["cache_hits"] == 0
    assert f["message"] == (
        "prefix caching flagged on (--prefix-cache), but the same 6,000-token prompt sent 3 "
        "times kept its time to first token (6.80, 6.81, 6.79 s) and the cache-hit counter "
        "stayed at 0"
    )


def test_prefix_cache_judged_by_ttft_alone():
    v = api.audit([FIXTURES / "BR014" / "fires_prefix_cache_ttft_only.jsonl"], select=["BR014"])
    f = finding(v, "BR014", "pc-n1")
    assert f["outcome"] == "fired"
    assert "cache_hits" not in f["numbers"]


def test_prefix_cache_that_hits():
    v = api.audit([FIXTURES / "BR014" / "passes_prefix_cache_hit.jsonl"], select=["BR014"])
    f = finding(v, "BR014", "hit-n1")
    assert f["outcome"] == "passed"
    assert f["numbers"]["cache_hits"] == 11968
    assert round(f["numbers"]["ttft_drop"], 2) == 0.97


def test_batching_flag_with_a_ladder():
    v = api.audit([FIXTURES / "BR014" / "fires_batching_ladder.jsonl"], select=["BR014"])
    f = finding(v, "BR014", "a-n4")
    assert f["outcome"] == "fired"
    assert f["message"] == (
        "batching flagged on (--parallel 4), but its 4 requests decoded one "
        "at a time (overlap 1.00)"
    )


def test_method_3_batching_flag_with_a_flat_sweep():
    v = api.audit([TRACES / "case-a-versions.jsonl"], select=["BR014"]).to_dict()
    f = finding(v, "BR014", "a-new-cb8-c8")
    assert f["outcome"] == "fired"
    assert "the sweep is flat (86.7 / 87.2 / 86.8 / 86.3 tok/s at N=1/2/4/8)" in f["message"]
    assert finding(v, "BR014", "a-old-default-c8")["outcome"] == "not-applicable"


def test_batching_that_scales_passes():
    v = api.audit([FIXTURES / "BR014" / "passes_batching_sweep.jsonl"], select=["BR014"])
    f = finding(v, "BR014", "b-n4")
    assert f["outcome"] == "passed"
    assert round(f["numbers"]["growth"], 2) == 3.63


def test_cache_without_a_repeated_prompt_is_undecidable():
    v = api.audit([FIXTURES / "BR014" / "undecidable_cache_no_repeat.jsonl"], select=["BR014"])
    f = finding(v, "BR014", "nr-n1")
    assert f["outcome"] == "undecidable"
    assert "no prompt was sent twice (prompt_sha256)" in f["message"]


def test_cache_hits_across_repeated_runs_pass():
    """Three runs of one prompt, one after another: the 2nd and 3rd hit the cache."""
    v = api.audit(
        [FIXTURES / "BR014" / "passes_prefix_cache_across_repeats.jsonl"], select=["BR014"]
    ).to_dict()
    assert [f["outcome"] for f in v["findings"]] == ["passed"] * 3


def test_vllm_default_cache_from_cache_config_info():
    v = api.audit([FIXTURES / "BR014" / "fires_default_cache_no_drop.jsonl"], select=["BR014"])
    f = finding(v, "BR014", "vd-n1")
    assert f["outcome"] == "fired"
    assert f["message"].startswith(
        'prefix caching flagged on (vllm:cache_config_info{enable_prefix_caching="True"}), but'
    )


def test_batching_ladder_from_completions_alone():
    v = api.audit(
        [FIXTURES / "BR014" / "fires_batching_ladder_completions_only.jsonl"], select=["BR014"]
    )
    f = finding(v, "BR014", "a-n4")
    assert f["outcome"] == "fired"
    assert f["message"].startswith("batching flagged on (-np 4), but its completions form a ladder")


def test_drafts_the_benchmark_tool_counted_show_speculation_working(tmp_path):
    # vLLM writes the server's draft counters over the run (spec_decode_num_drafts, draft and
    # accepted tokens): not "no draft counter was scraped"
    import json

    from tests.rules.test_br003 import SUMMARY

    path = tmp_path / "result.json"
    path.write_text(json.dumps(SUMMARY | {
        "spec_decode_acceptance_rate": 72.03703703703704, "spec_decode_num_drafts": 1260,
        "spec_decode_draft_tokens": 3780, "spec_decode_accepted_tokens": 2723,
    }))  # fmt: skip
    (f,) = api.audit([path], select=["BR014"]).findings
    assert str(f.outcome) == "passed"
    assert f.message == (
        "speculative decoding (spec_decode_acceptance_rate 72.037): the tool counted 1,260 drafts"
    )
    assert f.arithmetic == ["the tool counted 1,260 drafts during the run, 2,723 of 3,780 "
                            "draft tokens accepted"]  # fmt: skip


@pytest.mark.slow
def test_an_accept_length_is_named_but_does_not_decide(tmp_path):
    # SGLang's accept_length is the server's over all its traffic: named, but this run's
    # drafts are still unknown
    import json

    from tests.adapters.test_sglang import SPECULATIVE

    line = SPECULATIVE | {"accept_length": 3.82}
    path = tmp_path / "sglang.jsonl"
    path.write_text(json.dumps(line) + "\n")
    (f,) = api.audit([path], fmt="sglang", select=["BR014"]).findings
    assert f.message.endswith(
        "no draft counter was scraped (metrics_before / metrics_after); the server's "
        "accept_length 3.82 shows drafts accepted, but over all its traffic, not this run's "
        "alone"
    )
