"""The rule catalogue: stable codes, complete docs, every module registered."""

from __future__ import annotations

import pkgutil
import re

import pytest

import reporter.rules as rules_pkg
from reporter.errors import UsageError
from reporter.rules import REGISTRY, lookup, select
from reporter.rules.base import DOC_HEADINGS

DESIGN_NAMES = {
    "BR001": "summed-self-reported-rates",
    "BR002": "claim-above-measured",
    "BR003": "serial-completion-ladder",
    "BR004": "admission-queue",
    "BR005": "flat-throughput-in-concurrency",
    "BR006": "natural-stop",
    "BR007": "forced-length-not-honoured",
    "BR008": "prefill-dominates-wall",
    "BR009": "wall-unexplained",
    "BR010": "speculation-content-undisclosed",
    "BR011": "speculation-unknown",
    "BR012": "incomparable-runs",
    "BR013": "feature-refused-in-log",
    "BR014": "feature-not-observed",
    "BR015": "bandwidth-ceiling",
    "BR016": "single-run",
    "BR017": "context-undisclosed",
    "BR018": "client-bound",
    "BR019": "failed-requests",
    "BR020": "reported-rate-inconsistent",
}


def test_codes_are_well_formed_and_named_as_designed() -> None:
    for code, rule in REGISTRY.items():
        assert re.fullmatch(r"BR\d{3}", code)
        assert rule.code == code
        assert rule.name == DESIGN_NAMES[code]


def test_every_rule_module_is_registered() -> None:
    modules = [
        m.name for m in pkgutil.iter_modules(rules_pkg.__path__) if re.match(r"br\d{3}_", m.name)
    ]
    assert len(modules) == len(REGISTRY)
    assert sorted(m[:5].upper() for m in modules) == sorted(REGISTRY)


@pytest.mark.parametrize("code", sorted(REGISTRY))
def test_docs_have_every_heading_in_order(code: str) -> None:
    doc = REGISTRY[code].doc
    positions = [doc.find(f"## {h}\n") for h in DOC_HEADINGS]
    missing = [h for h, p in zip(DOC_HEADINGS, positions, strict=True) if p < 0]
    assert not missing, missing
    assert positions == sorted(positions)
    assert doc.find("## References") > positions[-1]


def test_select_and_ignore_by_prefix() -> None:
    assert [r.code for r in select(["BR00"], ["BR006"])] == [
        c for c in sorted(REGISTRY) if c.startswith("BR00") and c != "BR006"
    ]
    assert [r.code for r in select(["br003"])] == ["BR003"]
    assert [r.code for r in select([], ["BR0"])] == []
    with pytest.raises(UsageError, match="--select 'XX' matches no rule"):
        select(["XX"])
    # comma-separated as in ruff and flake8, and repeated
    assert [r.code for r in select(["BR020,br006", "BR007"])] == ["BR006", "BR007", "BR020"]
    assert [r.code for r in select(["BR00"], ["BR006,BR007"])] == [
        c for c in sorted(REGISTRY) if c.startswith("BR00") and c not in ("BR006", "BR007")
    ]
    with pytest.raises(UsageError, match="--select 'XX' matches no rule"):
        select(["BR003,XX"])


def test_lookup_unknown_code() -> None:
    assert lookup("br003").code == "BR003"
    with pytest.raises(UsageError, match="unknown rule 'BR999'"):
        lookup("BR999")
