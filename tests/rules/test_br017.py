"""BR017 context-undisclosed, and decode speed against context where a sweep exists."""

from __future__ import annotations

from reporter import api
from tests.conftest import FIXTURES, finding


def test_no_context_fires():
    v = api.audit([FIXTURES / "BR017" / "fires_no_context.jsonl"], select=["BR017"])
    f = finding(v, "BR017", "nc-n1")
    assert f["outcome"] == "fired"
    assert f["severity"] == "info"
    assert f["message"] == (
        "the decode rate 98.0 tok/s comes without a context length: no workload.context_tokens, no "
        "workload.prompt_tokens and no prompt_tokens on the requests"
    )


def test_method_6_decode_falls_with_context():
    """~98 tok/s at short context, 34 tok/s with a 43k-token prompt."""
    v = api.audit([FIXTURES / "BR017" / "fires_context_sweep.jsonl"], select=["BR017"])
    f = finding(v, "BR017", "audit")
    assert f["outcome"] == "fired"
    assert f["numbers"]["context_tokens"] == [536, 43512]
    assert [round(x, 2) for x in f["numbers"]["decode_tps"]] == [97.83, 34.0]
    assert round(f["numbers"]["drop"], 2) == 0.65
    assert finding(v, "BR017", "long-n1")["outcome"] == "passed"


def test_context_stated_passes():
    v = api.audit([FIXTURES / "BR017" / "passes_context_stated.jsonl"], select=["BR017"])
    f = finding(v, "BR017", "c-n1")
    assert f["outcome"] == "passed"
    assert f["message"] == "context 272 tokens (workload.context_tokens)"
