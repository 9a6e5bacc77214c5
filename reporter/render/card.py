"""A card to paste into a blog post (`audit --card card.html`): one self-contained HTML
fragment with the verdict, each claim against the recomputed figure with its equation, the
three questions answered for the runs the claims rest on, and one scaling chart.

A fragment carries no Content-Security-Policy of its own (the page it is pasted into has
its own), so it is built to need none: no script, no link, no image, no frame, no `url(`,
no event attribute; the chart is an inline SVG that `svgcheck.check_svg` accepted, its ids
prefixed with the card's own so that two cards on one page do not share clip paths; the
styles are one `<style>` block whose every selector starts with the card's class. Every
string from a trace is autoescaped (jinja2) after `context.shown()` made it visible.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from dataclasses import dataclass, field

from markupsafe import Markup

from reporter.model import Verdict
from reporter.render.common import Chart, shown
from reporter.render.context import ClaimView, RunView, build_context
from reporter.render.html import environment
from reporter.version import __version__

TEMPLATE = "card.html.j2"
#: Runs whose three questions the card answers; the full report has the rest.
MAX_CARD_RUNS = 4
#: Claims shown on the card.
MAX_CARD_CLAIMS = 6


@dataclass(frozen=True)
class CardContext:
    card_id: str
    verdict_class: str
    verdict_text: str
    verdict_meaning: str
    headline: str
    equation: str
    claims: list[ClaimView]
    claims_more: int
    runs: list[RunView]
    runs_more: int
    chart: Chart | None
    files: list[str] = field(default_factory=list)
    files_more: int = 0
    version: str = ""


def card_id(verdict: Verdict) -> str:
    """A deterministic id for this audit (the inputs' hashes), to keep the card's ids apart."""
    digest = hashlib.sha256("".join(i.sha256 for i in verdict.inputs).encode()).hexdigest()
    return f"benchreport-card-{digest[:10]}"


def _focus_runs(verdict: Verdict) -> list[str]:
    """The runs the card is about: those the claims rest on, else those carrying the
    headline verdict, else every run, in the run table's order."""
    claimed = {r for c in verdict.claims for r in c.check.runs}
    if claimed:
        return [r.id for r in verdict.runs if r.id in claimed]
    headline = [r.id for r in verdict.runs if r.verdict is verdict.verdict]
    return headline or [r.id for r in verdict.runs]


def _chart(verdict: Verdict, focus: list[str], prefix: str) -> Chart | None:
    """The scaling chart (aggregate against N) of the first swept group holding a focus run,
    else of the first swept group; None when no group spans two levels of N."""
    from reporter.render.charts import scaling_charts
    from reporter.render.svgcheck import check_svg

    levels: dict[str, set[float]] = {}
    for r in verdict.runs:
        if r.concurrency is not None and r.aggregate_tps is not None:
            levels.setdefault(r.group, set()).add(r.concurrency)
    swept = [g for g, ns in levels.items() if len(ns) >= 2]
    if not swept:
        return None
    groups = {r.id: r.group for r in verdict.runs}
    group = next((groups[r] for r in focus if groups.get(r) in swept), swept[0])
    # draw that group alone: the others would cost a drawing each for nothing
    alone = dataclasses.replace(verdict, runs=[r for r in verdict.runs if r.group == group])
    charts = scaling_charts(alone, [])
    if not charts or charts[0].left_out:
        return None
    chosen = charts[0]
    svg = re.sub(r'\bid="', f'id="{prefix}-', chosen.svg)
    svg = svg.replace("url(#", f"url(#{prefix}-").replace('href="#', f'href="#{prefix}-')
    check_svg(svg, chosen.id)
    return Chart(chosen.id, chosen.title, chosen.caption, svg, chosen.note, small=True)


def build_card(verdict: Verdict) -> CardContext:
    context = build_context(verdict, charts=False)
    focus = _focus_runs(verdict)
    runs = [v for r, v in zip(verdict.runs, context.runs, strict=True) if r.id in set(focus)]
    ident = card_id(verdict)
    return CardContext(
        card_id=ident,
        verdict_class=context.verdict_class,
        verdict_text=context.verdict_text,
        verdict_meaning=context.verdict_meaning,
        headline=context.headline,
        equation=context.equation,
        claims=context.claims[:MAX_CARD_CLAIMS],
        claims_more=max(0, len(context.claims) - MAX_CARD_CLAIMS),
        runs=runs[:MAX_CARD_RUNS],
        runs_more=max(0, len(runs) - MAX_CARD_RUNS),
        chart=_chart(verdict, focus, ident),
        files=[shown(i.path.rsplit("/", 1)[-1], 80) for i in verdict.inputs[:4]],
        files_more=max(0, len(verdict.inputs) - 4),
        version=__version__,
    )


def render_card(verdict: Verdict) -> str:
    """The card as an HTML fragment (a str; the caller writes it as UTF-8)."""
    card = build_card(verdict)
    svg = Markup(card.chart.svg) if card.chart is not None else Markup("")
    return environment().get_template(TEMPLATE).render(c=card, svg=svg)
