"""The report's charts: Vega-Lite specs built with altair, drawn to SVG by vl-convert.

Drawing is deterministic (no random ids: vega numbers its clip paths with a counter that
lives as long as the process, so every id is renamed after the chart it belongs to), and
every SVG is checked to hold only drawing elements that load nothing. Big traces are
sampled (evenly, in a fixed order) and the chart says what it shows.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import replace
from typing import Any, Literal

import altair as alt
import vl_convert as vlc

from reporter.errors import RenderError
from reporter.model import Completions, GroupSummary, RunSeries, RunSummary, Timeline, Verdict
from reporter.numbers import listed
from reporter.render import chartjobs, fonts
from reporter.render.common import (
    MAX_MESSAGE,
    Chart,
    all_prefill,
    num,
    pct,
    prefill_lacks,
    shown,
)
from reporter.render.svgcheck import check_svg
from reporter.values import number_or_nan

#: Runs shown in the wall-clock split; groups shown against N.
MAX_SPLIT_RUNS = 40
MAX_SCALING_GROUPS = 8
#: Longest label drawn in a chart (trace strings are cut to this).
LABEL = 48

COLORS = {
    "waiting": "#c7c7c7",
    "prefill": "#e0a030",
    "wait + prefill": "#d9b878",
    "decode": "#3566a8",
    "request": "#3566a8",
    "measured": "#3566a8",
    "serial": "#c0392b",
    "ideal": "#2e8b57",
}
PART_TEXT = {
    "waiting": "grey: waiting in a queue",
    "prefill": "amber: prefill, prompt tokens ÷ prefill rate",
    "wait + prefill": "tan: waiting and prefill, not separable without a prefill rate",
    "decode": "blue: decode, first token to last",
    "request": "blue: the whole request (no first-token time)",
}
FONT = "DejaVu Sans, Liberation Sans, Arial, Helvetica, sans-serif"
CONFIG: dict[str, Any] = {
    "font": FONT,
    "aria": False,
    "view": {"stroke": "#ddd"},
    "axis": {"labelFontSize": 11, "titleFontSize": 11, "titleFontWeight": "normal",
             "gridColor": "#eee"},
    "legend": {"labelFontSize": 11, "titleFontSize": 11, "orient": "bottom",
               "titleFontWeight": "normal", "labelLimit": 260},
    "title": {"fontSize": 13, "anchor": "start", "fontWeight": "bold"},
}  # fmt: skip

#: Validate each spec against Vega-Lite's schema as altair builds it. The specs are this
#: module's own, every one of the shipped traces and report fixtures is validated by the tests
#: (which set this), and validation costs about a fifth of building a report's specs.
VALIDATE = False
_ID = re.compile(r'\bid="([^"]+)"')


#: In a helper process drawing with subsets of the font (reporter.render.fonts): what they
#: cover. A spec they do not cover raises `NotCovered`, and the report process draws it.
COVERAGE: fonts.Coverage | None = None


class NotCovered(Exception):
    """A chart the helper's fonts would not draw as the machine's fonts do."""


def to_svg(spec: dict[str, Any], chart_id: str) -> str:
    """Draw a Vega-Lite spec; ids renamed `<chart_id>-<n>`, content checked to load nothing."""
    if COVERAGE is not None and (reason := COVERAGE.declines(spec, CONFIG)):
        raise NotCovered(f"chart {chart_id}: {reason}")
    try:
        svg: str = vlc.vegalite_to_svg(spec, config=CONFIG, allowed_base_urls=[])
    except Exception as exc:  # vl-convert raises plain ValueErrors for spec problems
        raise RenderError(f"chart {chart_id}: cannot draw: {exc}") from None
    return finished_svg(svg, chart_id)


def finished_svg(svg: str, chart_id: str) -> str:
    """vl-convert's SVG with its ids renamed `<chart_id>-<n>` and checked to load nothing."""
    ids = list(dict.fromkeys(_ID.findall(svg)))
    for n, old in enumerate(ids, start=1):
        new = f"{chart_id}-{n}"
        svg = re.sub(rf'\bid="{re.escape(old)}"', f'id="{new}"', svg)
        svg = svg.replace(f"url(#{old})", f"url(#{new})").replace(
            f'href="#{old}"', f'href="#{new}"'
        )
    check_svg(svg, chart_id)
    return svg


def drawn_chart(
    chart_id: str,
    title: str,
    caption: str,
    spec: dict[str, Any],
    note: str = "",
    *,
    small: bool = False,
    group: str = "",
    run: str = "",
) -> Chart:
    """The chart drawn, or, when it cannot be drawn safely, left out with a note in its place.

    A trace string in a label can make vega write something `check_svg` refuses (a run id
    holding `url(` lands in an attribute); that costs the one chart, never the report.
    """
    chart = Chart(chart_id, title, caption, "", note, small=small, group=group, run=run)
    try:
        svg = to_svg(spec, chart_id)
    except RenderError as exc:
        reason = shown(str(exc), MAX_MESSAGE)
        left_out = f"This chart was left out: it could not be drawn safely ({reason})."
        return replace(chart, caption="", note="", left_out=left_out)
    return replace(chart, svg=svg)


def _label(value: object) -> str:
    return shown(value, LABEL)


#: The rows of the datasets named since the last `_spec` (name → rows).
_rows: dict[str, list[dict[str, Any]]] = {}


def _values(rows: list[dict[str, Any]]) -> alt.NamedData:
    """Rows for a chart, by name: the spec gets them in its `datasets` (`_spec`).

    altair would move inline rows to `datasets` under the same name itself, but only after
    copying them with every copy of the chart it makes (a layer copies its parts, every
    property set copies the chart); a name costs nothing to copy. The spec is the same.
    """
    text = json.dumps(rows, sort_keys=True, default=str)
    name = "data-" + hashlib.sha256(text.encode()).hexdigest()[:32]
    _rows[name] = rows
    return alt.NamedData(name=name)


def _spec(chart: Any) -> dict[str, Any]:
    """The Vega-Lite spec of `chart`, with the rows of its named datasets, in the order the
    spec names them."""
    spec: dict[str, Any] = chart.to_dict(validate=VALIDATE)
    names: dict[str, None] = {}

    def find(node: Any) -> None:
        if isinstance(node, dict):
            data = node.get("data")
            if isinstance(data, dict) and isinstance(data.get("name"), str):
                names[data["name"]] = None
            for value in node.values():
                find(value)
        elif isinstance(node, list):
            for value in node:
                find(value)

    find(spec)
    spec["datasets"] = {name: _rows[name] for name in names}
    _rows.clear()
    return spec


# --------------------------------------------------------------------------- per run


def _single_text(done: Completions) -> str:
    """How one request's duration alone was taken, for the caption."""
    if done.single_run is not None:
        return f"the N=1 run {_label(done.single_run)} takes {num(done.single_s, 2)} s"
    return f"the first completion, {num(done.single_s, 2)} s"


def run_chart(series: RunSeries, index: int) -> Chart | None:
    """Timeline (waiting, prefill, decode per request) beside completions against the staircase."""
    if series.timeline is None:
        return None
    run_id = series.run
    notes = []
    timeline, note, legend = _timeline(series.timeline)
    if note:
        notes.append(note)
    parts: list[Any] = [timeline]
    caption = (
        f"Left: each request from send to last token ({legend}); a staircase of blue bars "
        "is a queue, blue bars side by side are a batch."
    )
    if series.completions is not None:
        completion, note = _completions(series.completions)
        parts.append(completion)
        if note:
            notes.append(note)
        caption += (
            f" Right: requests finished over time against the serial staircase "
            f"(one request at a time, each taking {_single_text(series.completions)})."
        )
    spec = _spec(
        alt.hconcat(
            *parts,
            spacing=24,
            resolve=alt.Resolve(
                scale=alt.ScaleResolveMap(color="independent", strokeDash="independent"),
                legend=alt.LegendResolveMap(color="independent", strokeDash="independent"),
            ),
            title=alt.Title(f"run {_label(run_id)}", anchor="start"),
        )
    )
    chart_id = f"run-{index}"
    return drawn_chart(
        chart_id, f"Run {shown(run_id)}", caption, spec, "; ".join(notes), run=run_id
    )


#: Vega's own limit on an axis label's width (pixels) when the spec sets none.
AXIS_LABEL_LIMIT = 180
#: The widest printable ASCII character, in ems, of the fonts that may measure the labels
#: (DejaVu Sans's widest is 1.0 em, Liberation Sans's 1.015), with room to spare.
_ASCII_EM = 1.1


def _label_limit(labels: list[str], limit: int = AXIS_LABEL_LIMIT, size: float = 0) -> int:
    """A label limit (of an axis or a legend): `limit`, or 0 (none) when every label is
    surely narrower.

    vega cuts a label wider than the limit, and to know, it measures every label against
    it once more each time it lays the axis out and draws it: most of a chart's cost is text
    measurement. A label of printable ASCII no longer than the limit at `_ASCII_EM` per
    character is never cut, so without the limit the chart is the same, measured less.
    """
    size = size or float(CONFIG["axis"]["labelFontSize"])
    fits = all(
        t.isascii() and t.isprintable() and len(t) * size * _ASCII_EM < limit for t in labels
    )
    return 0 if fits else limit


def _numbers_limit(top: float) -> int:
    """The label limit of a quantitative axis whose values lie within ±`top`: 0 when none of
    its tick labels could be cut.

    vega formats ticks as d3 does (`,.Nf`, N the decimals of the tick step), and a step is
    at least the power of ten below the span ÷ the tick count (at most 20 here, ceil(width ÷
    40) by default); twice `top` leaves room for a domain made nice.
    """
    if not (math.isfinite(top) and top > 0):
        return AXIS_LABEL_LIMIT
    step = 10.0 ** math.floor(math.log10(2 * top / 20))
    decimals = max(0, -math.floor(math.log10(step)))
    return _label_limit([f"-{2 * top:,.{decimals}f}"])


def _legend(labels: list[str]) -> alt.Legend:
    """A legend of these labels, without the label limit when none would be cut."""
    limit = int(CONFIG["legend"]["labelLimit"])
    size = float(CONFIG["legend"]["labelFontSize"])
    return alt.Legend(labelLimit=_label_limit(labels, limit, size))


def _widest(rows: list[dict[str, Any]], *fields: str) -> float:
    """The largest magnitude of these fields in `rows` (NaN when there is none)."""
    values = [abs(float(r[f])) for r in rows for f in fields if r.get(f) is not None]
    return max(values) if values else math.nan


def _count_axis(n: int, start: int) -> alt.Axis:
    """An axis of whole counts: every value when few, else round steps (never 0.5)."""
    if n <= 12:
        values = list(range(start, n + 1))
        return alt.Axis(
            values=values, format="d", labelLimit=_label_limit([str(v) for v in values])
        )
    raw = n / 6
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)
    values = sorted({start, *range(step, n + 1, step)})
    return alt.Axis(
        values=values, format=",d", labelLimit=_label_limit([f"{v:,d}" for v in values])
    )


def _opt_rate(value: Any) -> float | None:
    try:
        rate = float(value)
    except (TypeError, ValueError):
        return None
    return rate if math.isfinite(rate) and rate > 0 else None


def _timeline(line: Timeline) -> tuple[alt.Chart, str, str]:
    note = ""
    if line.drawn < line.requests:
        note = (
            f"timeline: {line.drawn:,} of {line.requests:,} requests drawn, evenly spaced in "
            "send order"
        )
    segs = line.segments
    parts = [p for p in COLORS if p in {seg["part"] for seg in segs}]
    n = line.requests
    height = int(min(max(line.drawn * 12, 90), 300))
    chart = (
        alt.Chart(_values(segs), width=360, height=height, title="timeline")
        .mark_bar(height={"band": 0.8} if line.drawn <= 60 else 1.5)
        .encode(
            x=alt.X(
                "start:Q",
                title="seconds from the first send",
                scale=alt.Scale(nice=False),
                axis=alt.Axis(
                    tickCount=8, labelLimit=_numbers_limit(_widest(segs, "start", "end"))
                ),
            ),
            x2=alt.X2("end"),
            y=alt.Y(
                "request:Q",
                title=f"request (send order, {n:,})",
                scale=alt.Scale(domain=[0.4, n + 0.6], nice=False, reverse=True),
                axis=_count_axis(n, start=1),
            ),
            color=alt.Color(
                "part:N",
                title=None,
                scale=alt.Scale(domain=parts, range=[COLORS[p] for p in parts]),
                legend=_legend(parts),
            ),
        )
    )
    legend = "; ".join(PART_TEXT[p] for p in parts)
    return chart, note, legend


def _completions(done: Completions) -> tuple[Any, str]:
    n, single = done.total, done.single_s
    note = ""
    if len(done.points) < n:
        note = (
            f"completions: {len(done.points):,} of {n:,} drawn, evenly spaced in completion order"
        )
    measured = [{"t": 0.0, "done": 0, "line": "measured"}] + [
        {"t": p["t"], "done": p["done"], "line": "measured"} for p in done.points
    ]
    serial = [{"t": 0.0, "done": 0, "line": "serial"}] + [
        {"t": float(p["done"] * single), "done": p["done"], "line": "serial"} for p in done.points
    ]
    x_max = max(float(done.points[-1]["t"]), single) * 1.12
    interpolate: Literal["step-after", "linear"] = (
        "step-after" if len(done.points) == n else "linear"
    )
    domain = ["measured", "serial"]
    base = alt.Chart(_values(measured + serial)).encode(
        x=alt.X(
            "t:Q",
            title="seconds from the first send",
            scale=alt.Scale(domain=[0, x_max], nice=False),
            axis=alt.Axis(tickCount=6, labelLimit=_numbers_limit(x_max)),
        ),
        y=alt.Y(
            "done:Q",
            title="requests finished",
            scale=alt.Scale(domain=[0, n]),
            axis=_count_axis(n, start=0),
        ),
        color=alt.Color(
            "line:N",
            title=None,
            scale=alt.Scale(domain=domain, range=[COLORS["measured"], COLORS["serial"]]),
            legend=_legend(domain),
        ),
        strokeDash=alt.StrokeDash(
            "line:N",
            title=None,
            scale=alt.Scale(domain=domain, range=[[1, 0], [5, 4]]),
            legend=_legend(domain),
        ),
    )
    lines = base.mark_line(interpolate=interpolate, clip=True, strokeWidth=2)
    layers: list[Any] = [lines]
    if n <= 64:
        points = (
            alt.Chart(_values(measured[1:]))
            .mark_point(filled=True, size=28, color=COLORS["measured"], clip=True)
            .encode(x=alt.X("t:Q"), y=alt.Y("done:Q"))
        )
        layers.append(points)
    height = 180 if n <= 60 else 220
    chart = alt.layer(*layers, width=300, height=height, title="completions")
    return chart, note


# --------------------------------------------------------------------------- overview


def scaling_charts(verdict: Verdict, notes: list[str]) -> list[Chart]:
    """Aggregate against N per group, with the ideal-scaling and the serial lines."""
    out: list[Chart] = []
    groups: dict[str, list[tuple[float, float, str]]] = {}
    for r in verdict.runs:
        if r.concurrency is not None and r.aggregate_tps is not None:
            groups.setdefault(r.group, []).append((r.concurrency, r.aggregate_tps, r.id))
    summaries = {g.name: g for g in verdict.groups}
    swept: dict[str, tuple[list[tuple[float, float, str]], GroupSummary]] = {
        g: (pts, summaries[g])
        for g, pts in groups.items()
        if g in summaries and summaries[g].levels
    }
    for k, (group, (pts, summary)) in enumerate(swept.items()):
        if k >= MAX_SCALING_GROUPS:
            notes.append(
                f"aggregate against N: {MAX_SCALING_GROUPS} of {len(swept)} sweeps "
                "drawn; the run table has the rest"
            )
            break
        levels = summary.levels
        (base_n, base), (top_n, top) = levels[0], levels[-1]
        ns = [n for n, _ in levels]
        rows = [
            {"n": float(x), "tps": float(base * x / base_n), "line": "ideal scaling"} for x in ns
        ]
        rows += [{"n": float(x), "tps": base, "line": "serial (flat)"} for x in ns]
        rows += [{"n": x, "tps": v, "line": "measured"} for x, v in levels]
        points = [{"n": float(n), "tps": float(t), "run": _label(r)} for n, t, r in pts]
        domain = ["measured", "ideal scaling", "serial (flat)"]
        y_max = max(base * top_n / base_n, max(t for _, t, _ in pts)) * 1.08
        lines = (
            alt.Chart(_values(rows))
            .mark_line(strokeWidth=2)
            .encode(
                x=alt.X(
                    "n:Q",
                    title="concurrent requests (N)",
                    scale=alt.Scale(domain=[0, top_n * 1.05], nice=False),
                    axis=alt.Axis(
                        values=ns, format="d", labelLimit=_label_limit([f"{x:.0f}" for x in ns])
                    ),
                ),
                y=alt.Y(
                    "tps:Q",
                    title="aggregate tok/s (tokens ÷ wall)",
                    scale=alt.Scale(domain=[0, y_max], nice=False),
                    axis=alt.Axis(labelLimit=_numbers_limit(y_max)),
                ),
                color=alt.Color(
                    "line:N",
                    title=None,
                    scale=alt.Scale(
                        domain=domain, range=[COLORS["measured"], COLORS["ideal"], COLORS["serial"]]
                    ),
                    legend=_legend(domain),
                ),
                strokeDash=alt.StrokeDash(
                    "line:N",
                    title=None,
                    scale=alt.Scale(domain=domain, range=[[1, 0], [5, 4], [2, 3]]),
                    legend=_legend(domain),
                ),
            )
        )
        dots = (
            alt.Chart(_values(points))
            .mark_point(filled=True, size=40, color=COLORS["measured"])
            .encode(x=alt.X("n:Q"), y=alt.Y("tps:Q"))
        )
        spec = _spec(
            alt.layer(
                lines, dots, width=260, height=180, title=f"aggregate against N: {_label(group)}"
            )
        )
        chart_id = f"scaling-{k + 1}"
        growth = summary.growth
        caption = (
            f"Measured aggregate (tokens ÷ wall) at N = "
            f"{', '.join(num(x, 0) for x in ns)}: {num(base, 1)} → "
            f"{num(top, 1)} tok/s, {num(growth, 2)}× for "
            f"{num(top_n / base_n, 0)}× the concurrency. Ideal scaling multiplies the "
            f"N={num(base_n, 0)} figure by N"
            + (f" ÷ {num(base_n, 0)}" if base_n != 1 else "")
            + "; a serial server stays flat."
        )
        out.append(
            drawn_chart(
                chart_id,
                f"Aggregate against N ({shown(group)})",
                caption,
                spec,
                small=True,
                group=group,
            )
        )
    return out


def wall_split_chart(verdict: Verdict, notes: list[str]) -> Chart | None:
    """The wall clock of each run split into prefill and the rest (decode)."""
    rows: list[dict[str, Any]] = []
    unknown = []
    for r in verdict.runs:
        prefill, wall = number_or_nan(r.prefill_s), number_or_nan(r.wall_s)
        if not (math.isfinite(prefill) and math.isfinite(wall) and wall > 0):
            unknown.append(r)
            continue
        prefill = min(prefill, wall)
        label = _label(r.id)
        share = pct(prefill / wall)
        rows.append({"run": label, "part": "prefill", "s": prefill, "order": 0, "share": share})
        rows.append(
            {
                "run": label,
                "part": "decode and the rest",
                "s": wall - prefill,
                "order": 1,
                "share": share,
            }
        )
    if unknown:
        by_lack: dict[str, list[str]] = {}
        for r in unknown:
            by_lack.setdefault(_split_lacks(r), []).append(r.id)
        parts = []
        for lack, ids in by_lack.items():
            parts.append(f"{lack} for {listed([_label(u) for u in ids], 5)}")
        notes.append("wall clock split: " + "; ".join(parts))
    if not rows:
        return None
    runs = list(dict.fromkeys(r["run"] for r in rows))
    if len(runs) > MAX_SPLIT_RUNS:
        notes.append(f"wall clock split: {MAX_SPLIT_RUNS} of {len(runs)} runs drawn")
        keep = set(runs[:MAX_SPLIT_RUNS])
        rows = [r for r in rows if r["run"] in keep]
        runs = runs[:MAX_SPLIT_RUNS]
    domain = ["prefill", "decode and the rest"]
    bars = (
        alt.Chart(_values(rows))
        .mark_bar(height={"band": 0.7})
        .encode(
            y=alt.Y(
                "run:N", title=None, sort=runs, axis=alt.Axis(labelLimit=_label_limit(runs, 220))
            ),
            x=alt.X(
                "s:Q",
                title="seconds of wall clock",
                stack="zero",
                axis=alt.Axis(labelLimit=_numbers_limit(sum(abs(r["s"]) for r in rows))),
            ),
            color=alt.Color(
                "part:N",
                title=None,
                scale=alt.Scale(domain=domain, range=[COLORS["prefill"], COLORS["decode"]]),
                legend=_legend(domain),
            ),
            order=alt.Order("order:Q"),
        )
    )
    labels = (
        alt.Chart(_values(_totals(rows)))
        .mark_text(align="left", dx=4, fontSize=10, color="#333")
        .encode(y=alt.Y("run:N", sort=runs), x=alt.X("wall:Q"), text=alt.Text("label:N"))
    )
    height = max(60, 22 * len(runs))
    spec = _spec(
        alt.layer(bars, labels, width=440, height=height, title="wall clock: prefill and the rest")
    )
    caption = (
        "Prefill is the prompt tokens of the run ÷ the prefill rate (METHOD §4); the "
        "label is its share of the wall clock. Above 30%, the figure measures prompt "
        "processing more than decoding."
    )
    return drawn_chart("wall-split", "Wall clock split", caption, spec)


def _split_lacks(r: RunSummary) -> str:
    """What a run lacks for its split: prefill is its prompt tokens ÷ the prefill rate."""
    if all_prefill(r):
        # its wall clock is prompt processing, timed at its own rate: nothing to split
        return "all prefill (prompt-processing tests)"
    return prefill_lacks(r)


def _totals(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for r in rows:
        entry = out.setdefault(
            r["run"], {"run": r["run"], "wall": 0.0, "label": f"prefill {r['share']}"}
        )
        entry["wall"] += r["s"]
    return list(out.values())


def bandwidth_chart(verdict: Verdict, notes: list[str]) -> Chart | None:
    """Bandwidth utilization (achieved ÷ measured) per subject, from BR015 or the run records."""
    items: list[dict[str, Any]] = []
    for f in verdict.findings:
        if f.code != "BR015":
            continue
        lo = _opt_rate(f.numbers.get("utilization_low", f.numbers.get("utilization")))
        hi = _opt_rate(f.numbers.get("utilization_high", f.numbers.get("utilization")))
        if lo is None and hi is None:
            continue
        known = [u for u in (lo, hi) if u is not None]
        items.append(
            {
                "subject": _label(f.subject),
                "low": min(known) * 100,
                "high": max(known) * 100,
                "source": "BR015",
            }
        )
    source = "BR015 findings"
    if not items:
        for r in verdict.runs:
            if r.bandwidth_utilization is not None:
                u = r.bandwidth_utilization * 100
                items.append({"subject": _label(r.id), "low": u, "high": u, "source": "run"})
        source = "the run records: median decode rate × bytes per token ÷ measured bandwidth"
    if not items:
        return None
    subjects = list(dict.fromkeys(i["subject"] for i in items))
    x_max = max(110.0, max(i["high"] for i in items) * 1.1)
    bars = (
        alt.Chart(_values(items))
        .mark_bar(height={"band": 0.6}, color=COLORS["decode"])
        .encode(
            y=alt.Y(
                "subject:N",
                title=None,
                sort=subjects,
                axis=alt.Axis(labelLimit=_label_limit(subjects, 220)),
            ),
            x=alt.X(
                "low:Q",
                title="bandwidth utilization, % of measured",
                scale=alt.Scale(domain=[0, x_max], nice=False),
                axis=alt.Axis(labelLimit=_numbers_limit(x_max)),
            ),
            x2=alt.X2("high"),
        )
    )
    ticks = (
        alt.Chart(_values(items))
        .mark_tick(color=COLORS["decode"], thickness=2)
        .encode(y=alt.Y("subject:N", sort=subjects), x=alt.X("high:Q"))
    )
    marks = (
        alt.Chart(
            _values(
                [
                    {"x": 55.0, "what": "55% near the ceiling"},
                    {"x": 100.0, "what": "100% impossible"},
                ]
            )
        )
        .mark_rule(strokeDash=[4, 3], color=COLORS["serial"])
        .encode(x=alt.X("x:Q"))
    )
    spec = _spec(
        alt.layer(
            bars,
            ticks,
            marks,
            width=440,
            height=max(60, 24 * len(subjects)),
            title="bandwidth utilization",
        )
    )
    caption = (
        f"Achieved bandwidth (tok/s × bytes read per token) ÷ measured read bandwidth at "
        f"the model's size, from {source}. Dashed: 55% (near the ceiling for MoE decode) "
        "and 100% (physically impossible)."
    )
    return drawn_chart("bandwidth", "Bandwidth utilization", caption, spec)


def made(verdict: Verdict, job: chartjobs.Job) -> chartjobs.Made:
    """The charts of one job of `chartjobs.chart_jobs(verdict)`, and the notes it adds; the
    same here and in a helper process."""
    kind, index = job
    notes: list[str] = []
    # altair's debug mode validates every object as it is made, a second time for a
    # layer's or a concatenation's parts; `VALIDATE` checks each whole spec once instead.
    with alt.utils.schemapi.debug_mode(False):
        if kind == chartjobs.SCALING:
            made = scaling_charts(verdict, notes)
        elif kind == chartjobs.WALL_SPLIT:
            made = [c for c in [wall_split_chart(verdict, notes)] if c is not None]
        elif kind == chartjobs.BANDWIDTH:
            made = [c for c in [bandwidth_chart(verdict, notes)] if c is not None]
        elif kind == chartjobs.RUN:
            made = [c for c in [run_chart(verdict.series.runs[index], index + 1)] if c]
        else:
            raise ValueError(f"no such chart job: {job!r}")
    return made, notes
