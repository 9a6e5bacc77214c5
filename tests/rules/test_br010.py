"""BR010 speculation-content-undisclosed: speculation on, content type unknown."""

from __future__ import annotations

import pytest

from reporter import api
from tests.conftest import FIXTURES, finding

CASES = sorted((FIXTURES / "BR010").glob("*.jsonl"))


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_one_finding_per_run(path):
    v = api.audit([path], select=["BR010"]).to_dict()
    subjects = [f["subject"] for f in v["findings"]]
    assert sorted(subjects) == sorted(r["id"] for r in v["runs"])


def test_speculation_on_without_content_fires():
    v = api.audit([FIXTURES / "BR010" / "fires_spec_on_no_content.jsonl"], select=["BR010"])
    f = finding(v, "BR010", "spec-n1")
    assert f["outcome"] == "fired"
    assert f["severity"] == "warning"
    assert f["message"].startswith(
        "speculative decoding on (workload.speculative.enabled) but the content type is not "
        "stated (workload.content)"
    )
    assert f["numbers"] == {"spec_enabled": True, "content": None, "acceptance": None}
    assert f["refs"][0].endswith("fires_spec_on_no_content.jsonl:1")


def test_speculation_inferred_from_a_draft_flag():
    v = api.audit([FIXTURES / "BR010" / "fires_spec_flag_content_unknown.jsonl"], select=["BR010"])
    f = finding(v, "BR010", "draft-n1")
    assert f["outcome"] == "fired"
    assert "engine flag -md draft-0.5b.gguf" in f["message"]


def test_content_named_passes_with_acceptance():
    v = api.audit([FIXTURES / "BR010" / "passes_spec_on_code.jsonl"], select=["BR010"])
    f = finding(v, "BR010", "code-n1")
    assert f["outcome"] == "passed"
    assert f["message"] == (
        "speculative decoding on (workload.speculative.enabled, acceptance "
        "68.9%); content stated: code"
    )


def test_speculation_off_is_not_applicable():
    v = api.audit([FIXTURES / "BR011" / "passes_stated_off.jsonl"], select=["BR010"])
    f = finding(v, "BR010", "off-n1")
    assert f["outcome"] == "not-applicable"
    assert f["message"] == "speculative decoding off (workload.speculative.enabled)"


def test_nothing_stated_is_undecidable():
    v = api.audit([FIXTURES / "BR010" / "undecidable_nothing_stated.jsonl"], select=["BR010"])
    assert finding(v, "BR010", "plain-n1")["outcome"] == "undecidable"
