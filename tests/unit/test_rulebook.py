"""The rulebook (read from the rules' source) equals the rules and thresholds as imported."""

from __future__ import annotations

import math
import sys

from reporter import rulebook, rules
from reporter.config import THRESHOLDS, Threshold


def test_every_rule_page_matches_the_imported_rule() -> None:
    pages = rulebook.pages()
    assert list(pages) == sorted(rules.REGISTRY)
    for code, rule in rules.REGISTRY.items():
        page = pages[code]
        assert (page.code, page.name, page.severity, page.summary, page.status, page.since) == (
            rule.code, rule.name, rule.severity, rule.summary, rule.status, rule.since,
        )  # fmt: skip
        assert page.doc == rule.doc


def test_every_threshold_is_read_with_its_declaration() -> None:
    read = {e.name: e for e in rulebook.thresholds()}
    assert set(read) == set(THRESHOLDS)
    for name, t in THRESHOLDS.items():
        e = read[name]
        assert (e.default, e.reason, e.low, e.high) == (t.default, t.reason, t.low, t.high)


def test_each_rule_lists_the_thresholds_its_module_holds() -> None:
    # what the rule module has at hand once imported (declared or imported) is what it uses
    for code, rule in rules.REGISTRY.items():
        module = sys.modules[rule.check.__module__]
        held = {v.name for v in vars(module).values() if isinstance(v, Threshold)}
        assert set(rulebook.pages()[code].thresholds) == held, code


def test_a_threshold_names_its_rules_and_its_range() -> None:
    by_name = {e.name: e for e in rulebook.thresholds()}
    overlap = by_name["serial_overlap"]
    assert overlap.rules == ("BR003", "BR014")
    assert overlap.module == "reporter.decision"
    assert overlap.range_text() == "> 0"
    share = by_name["prefill_share"]
    assert (share.rules, share.high, share.range_text()) == (("BR008",), 1.0, "> 0, ≤ 1")
    assert math.isinf(by_name["flat_growth"].high)
