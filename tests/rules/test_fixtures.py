"""Every fixture under tests/fixtures/BRnnn/ is a case: its name says the expected outcome.

`fires_*.jsonl` must fire the rule for at least one subject; `passes_*.jsonl` must pass it
for at least one subject and fire it for none; `undecidable_*.jsonl` must say it cannot
decide for at least one subject and fire it for none. A new file is a new case.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from reporter import api
from tests.conftest import FIXTURES

CASES = sorted(FIXTURES.glob("BR[0-9][0-9][0-9]/*.jsonl"))
EXPECTED = {"fires": "fired", "passes": "passed", "undecidable": "undecidable"}


@pytest.mark.parametrize("path", CASES, ids=[f"{p.parent.name}/{p.stem}" for p in CASES])
def test_fixture_outcome(path: Path) -> None:
    code = path.parent.name
    kind = path.stem.split("_", 1)[0]
    verdict = api.audit([path], select=[code]).to_dict()
    outcomes = [f["outcome"] for f in verdict["findings"] if f["code"] == code]
    assert EXPECTED[kind] in outcomes, outcomes
    if kind != "fires":
        assert "fired" not in outcomes, outcomes
    for f in verdict["findings"]:
        if f["outcome"] == "fired":
            assert f["message"] and f["help"], f
            assert f["refs"], f


def test_every_rule_has_a_firing_and_a_passing_fixture() -> None:
    from reporter.rules import REGISTRY

    have = {(p.parent.name, p.stem.split("_", 1)[0]) for p in CASES}
    lead_rules = {
        "BR001",
        "BR002",
        "BR003",
        "BR004",
        "BR005",
        "BR006",
        "BR007",
        "BR008",
        "BR009",
        "BR016",
        "BR019",
        "BR020",
    }
    for code in REGISTRY:
        if code not in lead_rules and not (FIXTURES / code).is_dir():
            continue
        assert (code, "fires") in have, f"{code} has no fires_*.jsonl fixture"
        assert (code, "passes") in have, f"{code} has no passes_*.jsonl fixture"
