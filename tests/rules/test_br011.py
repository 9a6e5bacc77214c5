"""BR011 speculation-unknown: cannot tell whether speculative decoding was on."""

from __future__ import annotations

from reporter import api
from tests.conftest import FIXTURES, TRACES, finding


def test_unstated_fires_as_information():
    v = api.audit([FIXTURES / "BR011" / "fires_unstated.jsonl"], select=["BR011"])
    f = finding(v, "BR011", "plain-n1")
    assert f["outcome"] == "fired"
    assert f["severity"] == "info"
    assert f["message"] == (
        "whether speculative decoding was on is not stated (workload.speculative.enabled "
        "absent) and no flag, method, acceptance rate or draft counter shows it"
    )


def test_stated_off_contradicted_by_a_flag_is_a_warning():
    v = api.audit([FIXTURES / "BR011" / "fires_stated_off_flag_on.jsonl"], select=["BR011"])
    f = finding(v, "BR011", "off-n1")
    assert f["outcome"] == "fired"
    assert f["severity"] == "warning"
    assert f["message"].startswith(
        "the run says speculative decoding was off, but engine flag --speculative-config"
    )


def test_rising_draft_counter_shows_it_on():
    v = api.audit([FIXTURES / "BR011" / "passes_inferred_from_counters.jsonl"], select=["BR011"])
    f = finding(v, "BR011", "ctr-n1")
    assert f["outcome"] == "passed"
    assert f["message"] == (
        "speculative decoding on (inferred: draft counter "
        "vllm:spec_decode_num_drafts_total rose by 85)"
    )


def test_stated_passes():
    v = api.audit([FIXTURES / "BR011" / "passes_stated_off.jsonl"], select=["BR011"])
    f = finding(v, "BR011", "off-n1")
    assert f["outcome"] == "passed"
    assert f["message"] == "speculative decoding off (stated: workload.speculative.enabled)"


def test_method_case_b_states_it_everywhere():
    v = api.audit([TRACES / "case-b-forced.jsonl"], select=["BR011"]).to_dict()
    assert {f["outcome"] for f in v["findings"]} == {"passed"}
    assert len(v["findings"]) == len(v["runs"]) == 8
