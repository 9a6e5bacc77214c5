"""Every chart spec the report draws is valid Vega-Lite, as altair's schema validation says.

The report builds its specs with altair without validating them (a fifth of their cost); here
every chart of the shipped traces and of the report fixtures (sampled timelines, hostile
labels) is built with validation on, so a spec that Vega-Lite would refuse fails a test.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from reporter import api
from reporter.render import charts, drawing
from reporter.verdict import Verdict
from tests.report.conftest import ROOT


def _validated_specs(verdict: Verdict, monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Every spec the report would draw for `verdict`, built with validation on.

    The tests using it ask for `real_chart_drawing`: the session's reuse of drawn charts would
    otherwise serve the build from an earlier one without building the specs again.
    """
    drawn: list[dict[str, Any]] = []

    def record(spec: dict[str, Any], **_: Any) -> str:
        drawn.append(spec)
        return '<svg xmlns="http://www.w3.org/2000/svg"></svg>'

    with monkeypatch.context() as mp:
        mp.setattr(charts, "VALIDATE", True)
        mp.setattr(charts.vlc, "vegalite_to_svg", record)
        drawing.draw_charts(verdict)
    return drawn


@pytest.mark.slow  # audits every shipped trace and builds 22 specs with validation: ~3 s
def test_shipped_traces_draw_valid_specs(
    monkeypatch: pytest.MonkeyPatch, real_chart_drawing: None
) -> None:
    with monkeypatch.context() as mp:
        mp.chdir(ROOT)
        traces = sorted(p.relative_to(ROOT) for p in (ROOT / "traces").glob("*.jsonl"))
        verdict = api.audit([str(p) for p in traces])
    specs = _validated_specs(verdict, monkeypatch)
    # scaling per sweep, wall split, bandwidth, and the run charts
    assert len(specs) == 22
    assert all(s["$schema"].startswith("https://vega.github.io/schema/vega-lite/") for s in specs)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["batched.jsonl", "hostile.jsonl", "ladder.jsonl"])
def test_fixtures_draw_valid_specs(
    name: str,
    fixture_verdicts: Callable[[str], Verdict],
    monkeypatch: pytest.MonkeyPatch,
    real_chart_drawing: None,
) -> None:
    specs = _validated_specs(fixture_verdicts(name), monkeypatch)
    assert specs
    # the data travels inline, as named datasets: nothing is loaded from a URL
    assert all("url" not in str(s.get("data", {})) for s in specs)
    assert all(s.get("datasets") for s in specs)


def test_an_invalid_spec_is_refused_when_validating() -> None:
    import altair as alt
    from altair.utils.schemapi import SchemaValidationError

    chart = alt.Chart(alt.InlineData(values=[{"a": 1}])).mark_bar().encode(x="a:Q")
    chart.width = "wide"  # not a number, "container" or a step; set without a check
    assert chart.to_dict(validate=False)["width"] == "wide"  # what the report does: no check
    with pytest.raises(SchemaValidationError):
        chart.to_dict(validate=True)
