"""The JSON verdict is the contract: it validates against schemas/verdict-2.schema.json, and
the outputs built from it alone (read back with `verdict_from_dict`) are the outputs built
from the audit (terminal, Markdown, HTML, CSV, badge, card, annotations): every fact,
equation and chart series the HTML shows is in the JSON."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from report_helpers import CASES, case_params

from reporter.model import FORMAT_VERSION, Verdict, verdict_from_dict
from reporter.render import charts
from reporter.render.annotations import render_concise, render_github
from reporter.render.badge import render_badge
from reporter.render.card import render_card
from reporter.render.html import render_html
from reporter.render.json import render_json
from reporter.render.markdown import render_markdown
from reporter.render.runs_csv import render_csv
from reporter.render.text import render_text

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "schemas" / f"verdict-{FORMAT_VERSION}.schema.json").read_text())


@pytest.fixture
def audited(golden_verdicts: Callable[[str], Verdict]) -> Callable[[str], Verdict]:
    """Each case's verdict, audited once per session (tests/report/conftest.py)."""
    return golden_verdicts


def _rounded(value: Any) -> Any:
    """Floats to 4 decimals: the JSON keeps 6, the charts draw far coarser."""
    if isinstance(value, float):
        return round(value, 4)
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


@pytest.fixture
def specs_not_svg(monkeypatch: pytest.MonkeyPatch) -> None:
    """Charts drawn as their Vega-Lite spec (what they show), not as SVG (how vega draws it):
    comparable between a live verdict and one read back from its JSON."""

    def spec_text(spec: dict[str, Any], chart_id: str) -> str:
        text = json.dumps(_rounded(spec))
        # each data set is named by a hash of its values (as altair names them), which the
        # rounding changes
        names: dict[str, str] = {}
        text = re.sub(
            r"data-[0-9a-f]{32}", lambda m: names.setdefault(m[0], f"data-{len(names)}"), text
        )
        return f"<svg>{html.escape(text)}</svg>"

    monkeypatch.setattr(charts, "to_svg", spec_text)


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_json_verdict_validates(case: str, audited: Callable[[str], Verdict]) -> None:
    verdict = audited(case)
    validator = jsonschema.Draft202012Validator(SCHEMA)
    for with_series in (False, True):
        data = json.loads(render_json(verdict, include_series=with_series))
        errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(data)]
        assert not errors, errors[:5]
        assert ("series" in data) is with_series


def test_the_schema_documents_every_key() -> None:
    """Each object of the schema closes its keys and describes each one."""
    undocumented = []

    def walk(node: Any, where: str) -> None:
        if isinstance(node, dict):
            if node.get("type") == "object" and "properties" in node:
                assert node.get("additionalProperties") is False, where
                for key, sub in node["properties"].items():
                    if "description" not in sub and "$ref" not in sub and "oneOf" not in sub:
                        undocumented.append(f"{where}.{key}")
            for key, sub in node.items():
                walk(sub, f"{where}.{key}")
        elif isinstance(node, list):
            for i, sub in enumerate(node):
                walk(sub, f"{where}[{i}]")

    walk(SCHEMA, "schema")
    assert undocumented == []


_NUMBER = re.compile(r"(?<![\w.])(-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)")


def same_up_to_rounding(built: str, rebuilt: str) -> None:
    """The two texts are the same but for numbers one unit apart in their last printed digit
    (a figure rounded to 6 decimals in the JSON, then to 1 for print, can land one unit off
    the figure rounded to 1 directly: 9.06125000001 s prints 9,061.3 ms, 9.06125 9,061.2)."""
    a, b = _NUMBER.split(built), _NUMBER.split(rebuilt)
    assert len(a) == len(b), "the texts differ in more than their numbers"
    for k, (x, y) in enumerate(zip(a, b, strict=True)):
        if k % 2 == 0 or x == y:
            assert x == y, f"text differs: {x[:200]!r} != {y[:200]!r}"
            continue
        decimals = len(x.partition(".")[2])
        assert decimals == len(y.partition(".")[2]), (x, y)
        step = 10.0**-decimals
        gap = abs(float(x.replace(",", "")) - float(y.replace(",", "")))
        assert gap <= step * 1.001, f"{x} != {y} near {a[k - 1][-120:]!r}"


@pytest.mark.parametrize("case", case_params())
@pytest.mark.usefixtures("specs_not_svg")
def test_every_report_can_be_built_from_the_json_alone(
    case: str, audited: Callable[[str], Verdict]
) -> None:
    verdict = audited(case)
    read_back = verdict_from_dict(json.loads(render_json(verdict, include_series=True)))
    command = f"benchreport audit {CASES[case]}"
    same_up_to_rounding(render_text(verdict, verbose=True), render_text(read_back, verbose=True))
    for render in (render_csv, render_badge, render_card, render_github, render_concise):
        same_up_to_rounding(render(verdict), render(read_back))
    same_up_to_rounding(render_markdown(verdict, command), render_markdown(read_back, command))
    built = render_html(verdict, command)
    same_up_to_rounding(built, render_html(read_back, command))
    # the charts are there, drawn from the series the JSON carries
    if verdict.series.runs:
        assert re.search(r'id="chart-run-1"|run-1', built)


def test_the_json_carries_what_the_run_table_shows(audited: Callable[[str], Verdict]) -> None:
    data = json.loads(render_json(audited("case-a-ladder")))
    run = data["runs"][0]
    assert (run["engine"], run["engine_version"], run["hardware"]) == (
        "closed Mac engine", "1.0", "M1 Max 64GB",
    )  # fmt: skip
    assert (run["content"], run["speculation"], run["context_tokens"]) == ("prose", False, 536)
    assert (run["output_tokens_requested"], run["output_tokens_min"]) == (512, 512)
    assert run["failed"] == 0
    assert run["prefill_s"] == pytest.approx(run["prompt_tokens_total"] / run["prefill_rate"])
    assert run["prefill_rate_source"].startswith("a lone request of the same group")
    (claim,) = data["claims"]
    assert claim["equation"] == "4 × 512 tokens ÷ 22.50 s = 91.0 tok/s; claimed 350 = 3.85×"


def test_a_verdict_of_another_format_is_refused(audited: Callable[[str], Verdict]) -> None:
    data = audited("case-a-ladder").to_dict()
    data["format_version"] = 1
    with pytest.raises(ValueError, match="format_version 1; expected 2"):
        verdict_from_dict(data)


@pytest.mark.slow
def test_json_series_from_the_command_line() -> None:
    from click.testing import CliRunner

    from reporter.cli import main

    trace = str(ROOT / "traces" / "case-a-ladder.jsonl")
    plain = CliRunner().invoke(main, ["audit", "--no-html", "--json", "-", trace])
    full = CliRunner().invoke(main, ["audit", "--no-html", "--json", "-", "--json-series", trace])
    assert "series" not in json.loads(plain.stdout)
    series = json.loads(full.stdout)["series"]
    # three runs with request times, each drawn: 1, 2 and 4 requests one after another
    assert series["runs_with_times"] == 3
    assert [r["timeline"]["requests"] for r in series["runs"]] == [1, 2, 4]
    last = series["runs"][-1]["completions"]
    assert [p["done"] for p in last["points"]] == [1, 2, 3, 4]
    assert last["single_run"] == "a-retest-n1"
