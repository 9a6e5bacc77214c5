"""Two figures compared that were measured under different conditions.

## What it checks
Every claim that compares two runs (a speed-up `runs: [a, b]`, a scaling factor against the
lowest N of its sweep), and the audit as a whole when it holds runs under several settings:
which factors the runs differ in, whether the comparison is fair, and where the traces allow,
how the ratio splits into those factors.

## Why it matters
A ratio of two throughput figures means something only when one thing changed between them.
METHOD.md §5: 606 ÷ 171 = 3.54× on the same machine and model, and it is not one effect: stop
mode gives 2.10× and content (through speculative acceptance) 1.69×. Quoted as "the new
configuration is 3.5× faster", it credits the wrong cause.

## How it decides
The factors (run and workload fields): conditions, which must match (stop mode, prompt
length, requested output length, content, context length, temperature, and where the tool
records them the dataset and the range output lengths were drawn from); and setups, which a
comparison is about (speculation, the load: N or the open-loop request rate, hardware,
model, the engine with its version, flags and weights, and the deployment settings a tool
records beside the run, such as vLLM `--metadata` pairs). Runs at different request rates or
on different datasets never "share one setting"; runs whose files name no engine or
hardware share every setting the files record, and are said to. Lengths within
`comparable_length_tolerance` (10%) count as equal. A prompt-processing test (llama-bench
`pp`, phase `prompt`) requests no output: its requested output length is 0, not undisclosed.

- A speed-up is comparable when no condition differs and at most one setup category does
  (engine name, version, flags and quantization count as one: an engine comes with its own
  weight format). A scaling factor compares N, so nothing else may differ.
- A factor known for one run only makes the comparison undecidable, unless something else
  already differs.
- The audit: the runs outside one sweep are compared the same way, all at once. A factor
  differs where two runs state different values; one value stated beside runs that state
  none is named as disclosed for some runs only, never as a difference.

Decomposition: a path of runs from one end to the other in which every run agrees with both
ends on what they share and takes one end's value on each factor they differ in; each step
moves some factors and none back. The finest such path is shown, step ratios multiplying to
the whole; a factor one run of a step does not state is named apart, as known for one run
only, never as a difference the step makes. When both runs know their bytes per token
(`model.bytes_per_token`, or active parameters × bits), the decode-rate ratio is also split
into bytes per token × achieved bandwidth (METHOD.md §6).

## Worked example
METHOD.md §5: natural-stop QA at N=8, 171.2 tok/s (median decode 40.95); forced prose,
359.3 (47.25); forced code, 606.1 (79.45). 606.1 ÷ 171.2: stop mode and content differ.
Through the forced-prose run: 359.3 ÷ 171.2 = 2.10× (stop mode, with the prompt set), then
606.1 ÷ 359.3 = 1.69× (content); 2.10 × 1.69 = 3.54.
METHOD.md §6: "2.36× faster than llama.cpp": bytes per token 2.80 ÷ 1.849 = 1.52× times
achieved bandwidth 181 ÷ 116 GB/s = 1.56×, 1.52 × 1.56 = 2.37: one engine, its weights, its
kernels; comparable, and explained.

## When it cannot decide
A claim whose runs are not in the trace, or whose runs lack an aggregate; a comparison where
a condition is disclosed for one run only. An audit with a single run is not applicable.

## What to do
Compare runs that differ in one thing. Rerun the slower configuration under the faster one's
conditions (forced length, same prompts, same content), or add the intermediate run that
changes one factor at a time, and quote each factor's share. `benchreport compare A B` shows
the factors and the chain for two runs.

## References
METHOD.md §5 "Content and speculative decoding", §6 "How fast can one stream be", §7;
seed 001 §3, §4; seed 000 §4.
"""

from __future__ import annotations

import math
from typing import Any

from reporter import compare
from reporter.grouping import unrecorded_text
from reporter.numbers import all_of, counted, fmt, listed
from reporter.rules.base import AuditData, Finding, Rule, run_ref
from reporter.types import Outcome, Severity

#: Declared with the comparison it tunes, so that `compare` and this rule read one value.
LENGTH_TOLERANCE = compare.LENGTH_TOLERANCE


def check(data: AuditData) -> list[Finding]:
    # every run's factors, taken once: each comparison chains through all the runs
    # (the rows the audit took once, when each run id has one; a pass of iterrows builds
    # them anew)
    by_run = (
        compare.values_by_run(data.run_rows(), data.stats)
        if data.runs.index.is_unique
        else compare.run_values(data.tables.runs, data.stats)
    )
    findings = [
        _check_claim(data, c, by_run)
        for c in data.claim_checks
        if c.metric in ("speedup", "scaling")
    ]
    audit = _check_audit(data, by_run)
    if audit is not None:
        findings.append(audit)
    return findings


def _factor_lines(diffs: list[compare.FactorDiff]) -> list[str]:
    return [
        f"{d.label}: {d.shown()[0]} vs {d.shown()[1]}"
        for d in diffs
        if d.state in (compare.DIFFERS, compare.ONE_SIDED)
    ]


def _numbers(c: compare.Comparison) -> dict[str, Any]:
    numbers: dict[str, Any] = {
        "ratio": c.ratio,
        "differs": [d.label for d in c.factors if d.state == compare.DIFFERS],
        "one_sided": [d.label for d in c.factors if d.state == compare.ONE_SIDED],
        "undisclosed": [
            d.label
            for d in c.factors
            if d.state == compare.UNKNOWN and d.key not in compare.OPTIONAL_FACTORS
        ],
    }
    if c.chain:
        numbers["chain"] = [
            {
                "from": s.src,
                "to": s.dst,
                "ratio": s.ratio,
                "factors": s.factors,
                "one_sided": s.one_sided,
            }
            for s in c.chain
        ]
        numbers["chain_ratios"] = [s.ratio for s in c.chain]
    if c.bandwidth is not None:
        numbers["bytes_ratio"] = c.bandwidth.bytes_ratio
        numbers["bandwidth_ratio"] = c.bandwidth.bandwidth_ratio
        numbers["decode_ratio"] = c.bandwidth.ratio
    return numbers


def _decomposition_text(c: compare.Comparison) -> str:
    if c.chain:
        parts = [f"{s.ratio:.2f}× ({s.named()})" for s in c.chain]
        product = math.prod(s.ratio for s in c.chain)
        return "; it splits into " + " × ".join(parts) + f" = {product:.2f}"
    if c.bandwidth is not None:
        bw = c.bandwidth
        return (
            f"; the decode rates split into bytes per token {bw.bytes_ratio:.2f}× × "
            f"achieved bandwidth {bw.bandwidth_ratio:.2f}× = {bw.ratio:.2f}"
        )
    return ""


def _check_claim(data: AuditData, claim: Any, by_run: dict[str, dict[str, Any]]) -> Finding:
    subject = str(claim.claim)
    refs = [claim.ref] if claim.ref else []
    if claim.metric == "speedup":
        pair = list(claim.runs)
        compared: frozenset[str] = frozenset()
    else:
        pair = [*claim.runs[:1], *claim.compared[:1]]
        compared = frozenset({"concurrency"})
    if len(pair) != 2 or not all(r in data.stats.index for r in pair):
        why = claim.problem or "the claim does not name two runs of the trace"
        return RULE.finding(subject, Outcome.UNDECIDABLE, f"cannot compare: {why}", refs=refs)
    a, b = pair
    c = compare.compare(
        data.tables.runs,
        data.stats,
        a,
        b,
        compared,
        data.config[LENGTH_TOLERANCE],
        by_run=by_run,
    )
    refs = [*refs, *run_ref(data, a), *run_ref(data, b)]
    what = "speed-up" if claim.metric == "speedup" else "scaling factor"
    arithmetic = []
    if c.ratio is not None:
        arithmetic.append(
            f"{what} = {a} {fmt(c.a.aggregate_tps or math.nan)} ÷ {b} "
            f"{fmt(c.b.aggregate_tps or math.nan)} tok/s = {fmt(c.ratio, 2)}×"
        )
    arithmetic += [f"differs: {x}" for x in _factor_lines(c.factors)]
    arithmetic += c.chain_lines()
    if c.bandwidth is not None:
        arithmetic += c.bandwidth.lines(a, b)
    numbers = _numbers(c) | {"claimed": claim.value}
    j = c.judgement
    if j.comparable is False:
        differs = ", ".join(d.text() for d in j.differing)
        return RULE.finding(
            subject,
            Outcome.FIRED,
            f"the {fmt(claim.value, 2)}× {what} compares runs {a} and {b}, which differ in "
            f"{differs}: {j.reason}{_decomposition_text(c)}",
            arithmetic=arithmetic,
            numbers=numbers,
            refs=refs,
            evidence=[
                {
                    "factor": d.label,
                    "a": d.shown()[0],
                    "b": d.shown()[1],
                    "state": d.state,
                }
                for d in c.factors
                if d.state != compare.UNKNOWN
            ],
            help="compare runs that differ in one thing: rerun one side under the other's "
            "conditions, or add the intermediate run and quote each factor's share",
        )
    if j.comparable is None:
        return RULE.finding(
            subject,
            Outcome.UNDECIDABLE,
            f"cannot tell whether runs {a} and {b} are comparable: {j.reason}",
            arithmetic=arithmetic,
            numbers=numbers,
            refs=refs,
            help="disclose the same fields for both runs (workload.stop, prompt_tokens, "
            "content, speculative, context_tokens)",
        )
    unknown = [
        d.label
        for d in j.unknown
        if (d.kind == compare.CONDITION or d.key in ("speculation", "hardware"))
        and d.key not in compare.OPTIONAL_FACTORS
    ]
    tail = f" (undisclosed for both: {', '.join(unknown)})" if unknown else ""
    return RULE.finding(
        subject,
        Outcome.PASSED,
        f"runs {a} and {b} are comparable: {j.reason}{tail}{_decomposition_text(c)}",
        arithmetic=arithmetic,
        numbers=numbers,
        refs=refs,
    )


def _check_audit(data: AuditData, by_run: dict[str, dict[str, Any]]) -> Finding | None:
    runs = data.tables.runs
    if len(runs) < 2:
        return RULE.finding(
            "audit",
            Outcome.NOT_APPLICABLE,
            f"{counted(len(runs), 'run')} in the audit: nothing to compare",
        )
    tolerance = data.config[LENGTH_TOLERANCE]
    vals = by_run  # every run has figures (a row of data.stats)
    ids = list(vals)
    # Each factor across all runs: the distinct values and the runs having each.
    varying: list[tuple[compare.Factor, dict[str, list[str]]]] = []
    for f in compare.FACTORS:
        if f.key == "concurrency":
            continue
        reps: list[Any] = []
        members: list[list[tuple[str, Any]]] = []  # per representative: its runs and values
        for run_id in ids:
            v = vals[run_id][f.key]
            at = next(
                (
                    i
                    for i, r in enumerate(reps)
                    if r == v
                    or (v is not None and r is not None and compare._same(f, v, r, tolerance))
                ),
                None,
            )
            if at is None:
                reps.append(v)
                members.append([])
                at = len(reps) - 1
            members[at].append((run_id, v))
        # values within the tolerance print as their range, not as the first one's
        by_value = {
            _bucket_label(f, rep, [v for _, v in runs_of]): [r for r, _ in runs_of]
            for rep, runs_of in zip(reps, members, strict=True)
        }
        if len(by_value) > 1 and any(isinstance(r, compare.Settings) for r in reps):
            # settings lists share most pairs: print each with only the pairs that differ
            reduced = compare.differing_settings(reps)
            short = dict(zip((compare.show(r, f.key) for r in reps), reduced, strict=True))
            by_value = {short[k]: v for k, v in by_value.items()}
        if len(by_value) > 1:
            varying.append((f, by_value))
    if not varying:
        series = sorted({str(g) for g in runs["group"]})
        if len(series) > 1:
            # grouping kept them apart (dates far apart, or --group-by): something the
            # files do not record may differ between the series
            return RULE.finding(
                "audit",
                Outcome.UNDECIDABLE,
                f"the {len(ids)} runs differ in no recorded factor but form {len(series)} "
                f"series ({', '.join(series[:4])}): what changed between series is not in "
                "the files, so figures of different series are compared at the reader's risk",
                arithmetic=[f"{g}: {data.group_reason(g)}" for g in series[:4]],
                refs=[x for r in ids for x in run_ref(data, r)][:8],
            )
        # "one setting" as far as the files record: a client's result file may name no
        # engine or hardware, and two servers measured alike then read as one setting
        # the run records taken once for every rule (a frame of them cost 6 ms for 16 runs), read
        # as dicts of their values (to_dict boxes each value anew: ~100 µs a run)
        hedge = unrecorded_text([compare.fields(data.run(r)) for r in ids])
        setting = f"every setting the files record{hedge}" if hedge else "one setting"
        return RULE.finding(
            "audit",
            Outcome.PASSED,
            f"{all_of(len(ids), 'run')} share {setting}: they differ only in N or repeat",
        )
    # a factor differs when two runs state different values; one value stated beside runs
    # that state none is known for some runs only, and is not said to differ
    partly = {f.key for f, by in varying if len([v for v in by if v != "undisclosed"]) < 2}
    diffs = [
        compare.FactorDiff(
            f.key,
            f.label,
            f.kind,
            f.category,
            None,
            None,
            compare.ONE_SIDED if f.key in partly else compare.DIFFERS,
        )
        for f, by in varying
    ]
    j = compare.judge(diffs)
    lines = []
    for f, by in varying:
        items = list(by.items())
        shown = "; ".join(f"{value}: {listed(r, 4)}" for value, r in items[:6])
        if len(items) > 6:
            shown += f"; and {len(items) - 6} more values"
        lines.append(f"{f.label}: {shown}")
    best = _largest_chain(data, tolerance, by_run)
    numbers: dict[str, Any] = {"factors": [f.label for f, _ in varying], "runs": len(ids)}
    tail = ""
    if best is not None:
        lines += [
            f"runs {best.a.run} ÷ {best.b.run}: {fmt(best.ratio or math.nan, 2)}×",
            *best.chain_lines(),
        ]
        numbers |= _numbers(best)
        tail = (
            f"; {best.a.run} ÷ {best.b.run} = {fmt(best.ratio or math.nan, 2)}×"
            f"{_decomposition_text(best)}"
        )
    refs = [x for r in ids for x in run_ref(data, r)][:8]
    labels = ", ".join(f.label for f, _ in varying if f.key not in partly)
    some = ", ".join(f.label for f, _ in varying if f.key in partly)
    if labels:
        labels = f"the {len(ids)} runs differ in {labels}"
        labels += f" ({some} disclosed for some runs only)" if some else ""
    else:
        labels = f"{some} disclosed for some of the {len(ids)} runs only"
    if j.comparable is False:
        return RULE.finding(
            "audit",
            Outcome.FIRED,
            f"{labels}: their figures are not comparable with each other: {j.reason}{tail}",
            severity=Severity.INFO,
            arithmetic=lines,
            numbers=numbers,
            refs=refs,
            help="compare figures only within a setting; name the differing factors next to "
            "any ratio between settings",
        )
    if j.comparable is None:
        return RULE.finding(
            "audit",
            Outcome.UNDECIDABLE,
            f"{labels}: cannot tell whether their figures are comparable",
            arithmetic=lines,
            numbers=numbers,
            refs=refs,
        )
    return RULE.finding(
        "audit",
        Outcome.PASSED,
        f"the {len(ids)} runs are comparable: {j.reason}{tail}",
        arithmetic=lines,
        numbers=numbers,
        refs=refs,
    )


def _bucket_label(f: compare.Factor, rep: Any, values: list[Any]) -> str:
    """A factor's value for runs counted equal: their range when their numbers differ."""
    numbers = [v for v in values if isinstance(v, float)]
    if f.numeric and len(numbers) == len(values) and min(numbers) != max(numbers):
        return f"{compare.show(min(numbers), f.key)}–{compare.show(max(numbers), f.key)}"
    return compare.show(rep, f.key)


def _largest_chain(
    data: AuditData, tolerance: float, by_run: dict[str, dict[str, Any]]
) -> compare.Comparison | None:
    """The pair of runs at one N with the largest ratio that a chain of runs explains."""
    pts = compare.points(data.tables.runs, data.stats, by_run=by_run)
    best: compare.Comparison | None = None
    for i, p in enumerate(pts):
        for q in pts[i + 1 :]:
            if p.values["concurrency"] != q.values["concurrency"]:
                continue
            hi, lo = (p, q) if p.value >= q.value else (q, p)
            steps = compare.chain(pts, lo, hi, tolerance)
            if len(steps) < 2:
                continue
            ratio = hi.value / lo.value
            if best is None or ratio > (best.ratio or 0):
                c = compare.compare(
                    data.tables.runs,
                    data.stats,
                    hi.runs[0],
                    lo.runs[0],
                    tolerance=tolerance,
                    by_run=by_run,
                )
                if len(c.chain) >= 2:
                    best = c
    return best


RULE = Rule(
    code="BR012",
    name="incomparable-runs",
    severity=Severity.WARNING,
    summary="two runs or claims compared that differ in stop mode, prompt length, content, "
    "speculation, N or hardware; the ratio decomposed into factors where possible",
    check=check,
    doc=__doc__ or "",
)
