"""The report's chart specs, built without altair, are the dicts altair builds for them.

reporter.render.vegalite spells the altair calls the charts make; here every chart of the
shipped traces and of the report fixtures (sampled timelines, hostile labels) is built once
through it and once through altair itself, and the two specs must be equal key for key.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import altair
import pytest

from reporter import api
from reporter.render import charts, vegalite
from reporter.verdict import Verdict
from tests.report.conftest import ROOT


def _specs(verdict: Verdict, module: Any, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every spec the report would draw for `verdict`, built with `module` as `alt`.

    The tests using it ask for `real_chart_drawing`: the session's reuse of drawn charts
    would otherwise serve the second build from the first without calling vl-convert.
    """
    drawn: list[Any] = []

    def record(spec: dict[str, Any], **_: Any) -> str:
        drawn.append(spec)
        return '<svg xmlns="http://www.w3.org/2000/svg"></svg>'

    with monkeypatch.context() as mp:
        mp.setattr(charts, "alt", module)
        mp.setattr(charts.vlc, "vegalite_to_svg", record)
        charts.draw_charts(verdict)
    return drawn


@pytest.fixture(scope="module")
def shipped() -> Verdict:
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(ROOT)
        traces = sorted(p.relative_to(ROOT) for p in (ROOT / "traces").glob("*.jsonl"))
        return api.audit([str(p) for p in traces])


@pytest.mark.slow  # audits every shipped trace and builds 22 specs twice: ~3 s
def test_shipped_traces_draw_the_specs_altair_builds(
    shipped: Verdict, monkeypatch: pytest.MonkeyPatch, real_chart_drawing: None
) -> None:
    ours = _specs(shipped, vegalite, monkeypatch)
    theirs = _specs(shipped, altair, monkeypatch)
    # scaling per sweep, wall split, bandwidth, and the run charts
    assert len(ours) == 22
    assert ours == theirs


@pytest.mark.parametrize("name", ["batched.jsonl", "hostile.jsonl", "ladder.jsonl"])
def test_fixtures_draw_the_specs_altair_builds(
    name: str,
    fixture_verdicts: Callable[[str], Verdict],
    monkeypatch: pytest.MonkeyPatch,
    real_chart_drawing: None,
) -> None:
    verdict = fixture_verdicts(name)
    ours = _specs(verdict, vegalite, monkeypatch)
    assert ours
    assert ours == _specs(verdict, altair, monkeypatch)


def test_secondary_channels_take_no_type_and_a_field_needs_one() -> None:
    def build(module: Any, x2: str) -> dict[str, Any]:
        spec: dict[str, Any] = (
            module.Chart(module.InlineData(values=[{"a": 1, "e": 2}]))
            .mark_bar()
            .encode(x="a:Q", x2=x2)
            .to_dict(validate=False)
        )
        return spec

    spec = build(vegalite, "e:Q")
    assert spec["encoding"] == {
        "x": {"field": "a", "type": "quantitative"},
        "x2": {"field": "e"},
    }
    assert spec == build(altair, "e:Q")
    for module in (vegalite, altair):
        with pytest.raises(ValueError):
            build(module, "e:b")
