"""Each figure comes from a single run: its error is unknown.

## What it checks
Whether the runs behind each concurrency level of a sweep were repeated.

## Why it matters
Single runs are soft. Case B repeated one point: aggregates 140.55 and 133.27 tok/s, ~5%
apart, mostly from the time to first token (0.062 vs 0.316 s). A ratio built on two single
runs carries both errors, and a threshold such as "8-way must reach 3× single" can pass or
fail on noise alone.

## How it decides
Per group (a sweep: runs sharing every setting), the number of runs at each load point: the
same concurrency, the same request rate (open loop) and the same number of prompts. Runs that
differ in any of them are points of a sweep, not repeats of one point. Runs that record
neither a concurrency nor a request rate are of no known point: two of them are called
neither repeats nor a sweep (undecidable, with the requests each had in flight where the
files give them). With at least
two runs at some level the spread `max ÷ min − 1` of their aggregates (of their prompt
rates, for prompt-processing tests that write no output tokens) is shown, and the
finding fires when it exceeds `repeat_spread` (25%: the repeats disagree by more than any
figure of them can be trusted to). Runs of one point that ran at the same time are no
repeats for certain: where both files carry the date their tool wrote as the run ended
(vLLM's `date`), two runs whose dates lie closer together than half the shorter run's wall
clock overlapped for most of it. On one server each then carried the other's load as well;
on two they repeat each other only if the servers were set up alike, which such files do not
record. Such points are left out of the spread; when no other point is repeated, the
finding fires. Repeats whose files name no engine or hardware (a client's result file names
no server) are said to be repeats as far as the files record: two servers measured with one
command read alike. With one run
at every level the finding fires (informational), unless every run repeats its test itself
and states the spread (llama-bench's `-r`: the mean of N repetitions ± their standard
deviation; AIPerf's multi-run aggregate: the means of its profile runs, with the aggregate's
standard deviation across them), which passes with the largest relative spread.

## Worked example
METHOD.md §7: 140.55 vs 133.27 tok/s, 5.5% apart; the decode rate alone, 143.01 vs 145.24,
1.6% apart.

## When it cannot decide
Runs without a wall clock have no aggregate (nor prompt rate) to compare between repeats.

## What to do
Repeat each point at least twice (three times for published figures) and quote the spread.

## References
METHOD.md §7 "How sure are we"; seed 001 §6.
"""

from __future__ import annotations

import itertools
import math
from typing import NamedTuple

from reporter.compare import fields
from reporter.config import threshold
from reporter.grouping import tool_date, unrecorded_text
from reporter.numbers import counted, fmt
from reporter.rules.base import AuditData, Finding, Rule, run_ref
from reporter.types import Outcome, Severity
from reporter.values import number_or_nan


def check(data: AuditData) -> list[Finding]:
    return [_check_group(data, name, runs) for name, runs in data.groups().items()]


def _prompts(data: AuditData, run_id: str) -> float:
    extra = data.run_field(run_id, "extra")
    value = extra.get("num_prompts") if isinstance(extra, dict) else None
    return number_or_nan(value)


def _point(n: float, rate: float, prompts: float) -> str:
    """How a load point reads: N=16, 10 req/s, with its number of prompts when known."""
    parts = []
    if not math.isnan(n):
        parts.append(f"N={n:g}")
    if not math.isnan(rate):
        parts.append("rate inf" if math.isinf(rate) else f"{rate:g} req/s")
    if not math.isnan(prompts):
        parts.append(f"{prompts:g} prompts")
    return ", ".join(parts) or "N unknown"


def _at_once(data: AuditData, runs: list[str]) -> tuple[str, str] | None:
    """How two of `runs` (one load point) are known to have run at the same time: their tools'
    end dates lie closer together than half the shorter one's wall clock (a date is read to
    the second, and is written a little after its run's last request). None when no two are
    known to; else how it is known, in short and at length."""
    timed = []
    for run_id in runs:
        when = tool_date(data.run_field(run_id, "extra"))
        wall = float(data.figures(run_id)["wall_s"])
        if when is not None and wall > 0:
            timed.append((when, wall, run_id))
    timed.sort()
    for (end_a, wall_a, _), (end_b, wall_b, _) in itertools.combinations(timed, 2):
        gap = (end_b - end_a).total_seconds()
        if gap + 1 < min(wall_a, wall_b) / 2:
            walls = sorted((wall_a, wall_b))
            lasted = (
                f"{fmt(walls[0], 0)} s"
                if round(walls[0]) == round(walls[1])
                else f"{fmt(walls[0], 0)}–{fmt(walls[1], 0)} s"
            )
            return (
                f"dates {fmt(gap, 0)} s apart, runs of {lasted}",
                f"their dates, written as each run ended, are {end_a:%Y-%m-%d %H:%M:%S} and "
                + (
                    f"{end_b:%H:%M:%S}"
                    if end_b.date() == end_a.date()
                    else f"{end_b:%Y-%m-%d %H:%M:%S}"
                )
                + f", {fmt(gap, 0)} s apart, and each run lasted {lasted}",
            )
    return None


def _unknown_load(data: AuditData, group: str, runs: list[str]) -> Finding:
    """Runs that record no load: repeats of one point, or points of a sweep, the files do not
    say; the requests each had in flight (Σ latency ÷ wall) are shown where known."""
    flight = [float(data.figures(r)["in_flight"]) for r in runs]
    known = [x for x in flight if not math.isnan(x)]
    seen = ""
    if len(known) == len(runs):
        shown = [f"≈{fmt(x, 1)}" for x in sorted(known)]
        seen = (
            f"; they had {', '.join(shown[:-1])} and {shown[-1]} requests in flight on "
            "average (Σ latency ÷ wall clock)"
        )
    return RULE.finding(
        group,
        Outcome.UNDECIDABLE,
        f"{counted(len(runs), 'run')} record no load (no concurrency or request rate): "
        f"whether they repeat one point or are points of a sweep the files do not say{seen}",
        arithmetic=[f"{r}: {fmt(float(data.figures(r)['aggregate_tps']))} tok/s" for r in runs],
        refs=[x for r in runs for x in run_ref(data, r)][:4],
        numbers={"runs": len(runs), "repeated_levels": 0, "unknown_load": len(runs)},
        help="record each run's concurrency (or request rate) with its results",
    )


REPEAT_SPREAD = threshold(
    "repeat_spread",
    0.25,
    "repeats of one point agree within a few percent (METHOD §7: 5.5%, mostly the first "
    "token's time); a quarter apart, something else changed between them",
)


def _repeated_within(data: AuditData, runs: list[str]) -> Finding | None:
    """A finding for runs that each repeat their test and state the spread (llama-bench -r:
    the mean of N repetitions ± their standard deviation), None unless every run does."""
    worst: tuple[float, str, str] | None = None
    for run_id in runs:
        extra = data.run_field(run_id, "extra")
        extra = extra if isinstance(extra, dict) else {}
        profile = _profile_runs(extra)
        if profile is not None:
            spread, text = profile
            if worst is None or spread > worst[0]:
                worst = (spread, run_id, text)
            continue
        sd = number_or_nan(extra.get("stddev_ts"))
        samples = extra.get("samples_ts")
        reps = (
            f"{len(samples)} repetitions"
            if isinstance(samples, list)
            else "repetitions, how many not printed"
        )
        s = data.figures(run_id)
        # the stated deviation is of the repetitions' rates: relative to their mean (avg_ts,
        # the summary's mean rate), not to total tokens ÷ total time
        rate = number_or_nan(data.summary(run_id).get("mean_reported_tps"))
        if math.isnan(rate):
            rate = float(s["aggregate_tps"])
        if math.isnan(rate):
            rate = float(s["prompt_tps"])
        if math.isnan(sd) or not rate > 0 or (isinstance(samples, list) and len(samples) < 2):
            return None
        if worst is None or sd / rate > worst[0]:
            worst = (sd / rate, run_id, f"{reps}, {fmt(rate)} ± {fmt(sd, 2)} tok/s")
    if worst is None:
        return None
    spread, run_id, text = worst
    group = str(data.run_field(runs[0], "group"))
    return RULE.finding(
        group,
        Outcome.PASSED,
        f"{counted(len(runs), 'run')}, each the mean of its tool's repetitions with their spread "
        f"stated: at most ±{fmt(spread * 100, 2)}% ({run_id}: {text})",
        refs=[x for r in runs for x in run_ref(data, r)][:4],
        numbers={"runs": len(runs), "repeated_levels": 0, "max_relative_stddev": spread},
    )


def _profile_runs(extra: dict[str, object]) -> tuple[float, str] | None:
    """The spread of a run that is the mean of its tool's profile runs (AIPerf's multi-run
    aggregate: the aggregate's standard deviation, min and max across them), relative to the
    mean, with its words; None for any other run."""
    runs = extra.get("profile_runs")
    if not isinstance(runs, dict):
        return None
    mean, sd = number_or_nan(runs.get("mean")), number_or_nan(runs.get("std"))
    if not mean > 0 or math.isnan(sd):
        return None
    count = runs.get("count")
    how_many = (
        f"{count} profile runs" if isinstance(count, int) else "profile runs, how many not stated"
    )
    lo, hi = number_or_nan(runs.get("min")), number_or_nan(runs.get("max"))
    span = f", {fmt(lo)}–{fmt(hi)}" if not (math.isnan(lo) or math.isnan(hi)) else ""
    return sd / mean, f"{how_many}, {fmt(mean)} ± {fmt(sd, 2)} tok/s{span}"


class _Load(NamedTuple):
    """One run of a group: its load point and the rates its repeats compare."""

    run: str
    n: float
    rate: float
    point: str
    agg: float
    prompt: float


def _repeat_values(loads: list[_Load]) -> tuple[list[float], str]:
    """The rates repeats of one point compare, NaN left out, with their unit: the output
    rates; the prompt rates for a prompt-processing test (fewer than two output rates)."""
    values = [x.agg for x in loads if not math.isnan(x.agg)]
    if len(values) >= 2:
        return values, "tok/s"
    return [x.prompt for x in loads if not math.isnan(x.prompt)], "prompt tok/s"


def _check_group(data: AuditData, group: str, runs: list[str]) -> Finding:
    facts = data.facts.runs
    # plain lists, not a frame: a frame and its group-by cost ~10 ms for 16 runs
    loads = []
    for r in runs:
        n, rate, prompts = data.concurrency(r), facts[r].rate, _prompts(data, r)
        figures = data.figures(r)
        loads.append(
            _Load(
                r,
                n,
                rate,
                _point(n, rate, prompts),
                float(figures["aggregate_tps"]),
                float(figures["prompt_tps"]),
            )
        )
    # runs that record neither a concurrency nor a request rate are of no known load point:
    # two of them may repeat one point or be two points of a sweep, and the files do not say
    unknown = [x.run for x in loads if math.isnan(x.n) and math.isnan(x.rate)]
    by_point: dict[str, list[_Load]] = {}  # in order of first appearance
    for x in loads:
        if not (math.isnan(x.n) and math.isnan(x.rate)):
            by_point.setdefault(x.point, []).append(x)
    most = max((len(sub) for sub in by_point.values()), default=0)
    if most < 2 and len(unknown) >= 2:
        return _unknown_load(data, group, unknown)
    within = _repeated_within(data, runs)
    if most < 2 and within is not None:
        return within
    if most < 2:
        return RULE.finding(
            group,
            Outcome.FIRED,
            f"{counted(len(runs), 'run')}, none repeated: the error of each figure is unknown",
            refs=[x for r in runs for x in run_ref(data, r)][:4],
            numbers={"runs": len(runs), "repeated_levels": 0},
            help="repeat each point at least twice and quote the spread",
        )
    spreads = []
    lines = []
    together: list[tuple[str, int, tuple[str, str]]] = []
    for point, sub in by_point.items():
        if len(sub) >= 2 and (how := _at_once(data, [x.run for x in sub])) is not None:
            together.append((point, len(sub), how))
            continue
        values, unit = _repeat_values(sub)
        if len(values) < 2 or min(values) <= 0:
            continue
        low, high = min(values), max(values)
        spread = high / low - 1
        spreads.append(spread)
        lines.append(
            f"{point}: {len(values)} repeats, {fmt(low)}–{fmt(high)} "
            f"{unit}, spread {fmt(spread * 100, 1)}%"
        )
    at_once = "; ".join(
        f"the {n} runs at {point} ran at the same time ({how[0]})" for point, n, how in together
    )
    # how each such point is known to have run at once, one arithmetic line a point
    simultaneous = [f"{point}: {how[1]}" for point, _, how in together]
    if not spreads and together:
        return RULE.finding(
            group,
            Outcome.FIRED,
            f"no repeat for certain: {at_once}: on one server each carried the other's load "
            "as well, and on two they repeat each other only if the servers were set up "
            "alike, which the files do not record",
            arithmetic=simultaneous,
            refs=[x for r in runs for x in run_ref(data, r)][:4],
            numbers={"runs": len(runs), "repeated_levels": 0, "simultaneous_levels": len(together)},
            help="repeat each point one run after another against one server, and record "
            "which server each run measured",
        )
    if not spreads:
        return RULE.finding(
            group,
            Outcome.UNDECIDABLE,
            "repeated runs, but no two repeats of a point have a rate to compare (a wall "
            "clock and output or prompt tokens)",
        )
    worst = max(spreads)
    limit = data.config[REPEAT_SPREAD]
    aside = f"; not counted as repeats: {at_once}" if together else ""
    if len(unknown) >= 2:
        aside += f"; not counted as repeats: {counted(len(unknown), 'run')} that record no load"
    numbers = {"max_spread": worst if math.isfinite(worst) else None}
    if worst > limit:
        return RULE.finding(
            group,
            Outcome.FIRED,
            f"repeated, but repeats of one point differ by up to {fmt(worst * 100, 1)}% "
            f"(above {fmt(limit * 100, 0)}%): either the point's figure is uncertain by that "
            "much, or something the files do not record differed between the runs" + aside,
            arithmetic=lines + simultaneous,
            numbers=numbers,
            refs=[x for r in runs for x in run_ref(data, r)][:4],
            help="find what differed between the repeats (a cold first run, other load on "
            "the machine) before quoting any of them",
        )
    # repeats as far as the files record: a client's result file may name no engine or
    # hardware, and two servers measured with one command then read as repeats
    repeated = [x.run for sub in by_point.values() if len(sub) >= 2 for x in sub]
    # the run records taken once for every rule (a frame of them cost 6 ms for 16 runs), read
    # as dicts of their values (to_dict boxes each value anew: ~100 µs a run)
    hedge = unrecorded_text([fields(data.run(str(r))) for r in repeated])
    said = f"repeated, as far as the files record{hedge}" if hedge else "repeated"
    return RULE.finding(
        group,
        Outcome.PASSED,
        f"{said}: the largest spread between repeats is {fmt(worst * 100, 1)}%{aside}",
        arithmetic=lines + simultaneous,
        numbers=numbers,
    )


RULE = Rule(
    code="BR016",
    name="single-run",
    severity=Severity.INFO,
    summary="no repeats: the figure's error is unknown",
    check=check,
    doc=__doc__ or "",
)
