"""A decode rate against the memory bandwidth it needs: impossible, near the ceiling, or fine.

## What it checks
For each run with a decode rate, and each single-stream target (`claim` with metric
`stream_tps`): the memory bandwidth the rate needs, `tok/s × bytes read per token`, against
the bandwidth the machine really delivers at the model's working-set size.

## Why it matters
Decode reads the active weights once per token, so bandwidth ÷ bytes per token bounds the
single-stream rate. A figure above that bound is impossible (a measurement or reporting
error, or an undisclosed trick such as speculative decoding); a figure near it leaves no
headroom for a faster engine. The data-sheet bandwidth flatters: METHOD.md §6's machine is
rated 400 GB/s, a read stream reaches 358–366 GB/s on small buffers and 267 GB/s at 16 GiB.

## How it decides
- Rate: the median per-request decode rate (output tokens ÷ (t_end − t_first)); without
  first-token times, the aggregate of a run at concurrency 1 (or never more than one request
  in flight): it includes prefill, so it is a lower bound on decode.
- Bytes per token: `model.bytes_per_token` (bytes; GB = 1e9 bytes) when given; otherwise
  `model.params_active × bits ÷ 8`, bits read from `model.quant` (nominal: "Q4_K_M", "4bit",
  "awq" → 4; "fp8" → 8; "bf16" → 16), which is a lower bound (block scales, unquantized
  layers); a model with `params_total` only and no sign of experts is taken as dense, and the
  message says so. A mixture-of-experts model (active < total, or a name such as "35B-A3B",
  "8x7B", "MoE") without `bytes_per_token` or `params_active` is undecidable, never impossible:
  its total parameters overstate what one token reads.
- Denominator: bandwidth `probe` records (`what: bandwidth`, `value` in GB/s, `buffer_bytes`)
  of the run, or of no run in the run's own file or in a file of probes alone, at the model's
  working set `model.working_set_bytes`: the probe at that size, or the two around it, or,
  when the working set is larger than every probe, the two largest (bandwidth falls with
  size: the true figure is at most the largest buffer's).
  Without probes, `hardware.bandwidth_measured_gbps`; without that, the nominal
  `hardware.bandwidth_nominal_gbps`, which fires as a nominal denominator.
- Utilization = needed ÷ denominator, as a range. Impossible when even the highest
  denominator gives more than 100% (error); near the ceiling when the lowest gives more than
  `bandwidth_near_ceiling` (55%, the gate METHOD.md §6 pre-registered; information for a
  measured run, a warning for a target); otherwise passed. For a mixture of experts the
  message recalls that MoE decode typically reaches 60–65%.
- Speculative decoding emits several tokens per weight read: a run with it on is undecidable.

## Worked example
METHOD.md §6, case A: 1.849 GB per token (audited); probes 358–366 GB/s at 1–4 GiB, 316 at
8 GiB, 267 at 16 GiB; the model's working set is 21 GiB, larger than every probe, so the
honest denominator is 267–316 GB/s (METHOD rounds it to 265–315). 97.83 tok/s × 1.849 GB =
181 GB/s: 57–68% utilization, near the ceiling. A 125 tok/s target needs 125 × 1.849 = 231
GB/s: 73–87%, above what MoE decode reaches (60–65%): not physically plausible.

## When it cannot decide
No decode rate; no bytes per token and nothing to estimate them from (not applicable); an
MoE without active-parameter bytes; speculative decoding on; no bandwidth figure at all (not
applicable: the needed bandwidth is still shown).

## What to do
Audit the bytes per token from the weight file (embedding rows are a lookup, experts are
read in full), probe the bandwidth at the model's working-set size (`benchreport probe
bandwidth`), and quote utilization with both. A figure above 100% needs an explanation before
it is published; a target above ~65% on MoE decode is not a plan.

## References
METHOD.md §6 "How fast can one stream be"; seed 000 §4, §6.
"""

from __future__ import annotations

import math
from typing import Any

from reporter import bandwidth
from reporter.compare import Cells, row, speculation_state
from reporter.config import threshold
from reporter.numbers import fmt
from reporter.rules.base import AuditData, Finding, Rule, run_ref
from reporter.types import Outcome, Severity

NEAR_CEILING = threshold(
    "bandwidth_near_ceiling",
    0.55,
    "METHOD §6: a pre-registered gate of 55% utilization ended the plan for a faster engine; "
    "above it the headroom is single-digit percent (MoE decode reaches 60–65%)",
    high=1.0,
)
MOE_TYPICAL = 0.65  # METHOD §6: "MoE decode typically reaches 60–65%"


def check(data: AuditData) -> list[Finding]:
    # the runs' figures read by position (a label looked up in the run-id index costs more)
    cell = Cells(data.stats)
    findings = [_check_run(data, cell, str(r["run"]), r) for r in data.run_rows()]
    findings += [_check_claim(data, c) for c in data.claim_checks if c.metric == "stream_tps"]
    return findings


def _rate(data: AuditData, cell: Cells, run_id: str) -> tuple[float | None, str]:
    rate = cell(run_id, "median_decode_tps")
    if not math.isnan(rate) and rate > 0:
        return rate, "median per-request decode rate"
    n = data.concurrency(run_id)
    agg = cell(run_id, "aggregate_tps")
    one_at_a_time = n == 1 or (math.isnan(n) and cell(run_id, "in_flight") <= 1.05)
    if one_at_a_time and not math.isnan(agg) and agg > 0:
        return agg, "single-stream aggregate (includes prefill: a lower bound on decode)"
    return None, ""


def _range(lo: float, hi: float, digits: int = 0, unit: str = "") -> str:
    if round(lo, digits) == round(hi, digits):
        return f"{fmt(lo, digits)}{unit}"
    return f"{fmt(lo, digits)}–{fmt(hi, digits)}{unit}"


def _pct(lo: float, hi: float) -> str:
    return _range(lo * 100, hi * 100, 0, "%")


def _assess(
    needed: float, bpt: bandwidth.BytesPerToken, den: bandwidth.Denominator, run: Any, limit: float
) -> dict[str, Any]:
    util_lo, util_hi = needed / den.high, needed / den.low
    moe, _ = bandwidth.is_moe(run)
    level = "impossible" if util_lo > 1.0 else "near" if util_hi > limit else "fine"
    return {
        "util_lo": util_lo,
        "util_hi": util_hi,
        "moe": moe,
        "level": level,
        "denominator": _range(den.low, den.high, 0, " GB/s"),
    }


def _check_run(data: AuditData, cell: Cells, run_id: str, run: Any) -> Finding:
    refs = run_ref(data, run_id)
    rate, rate_source = _rate(data, cell, run_id)
    if rate is None and cell(run_id, "output_tokens") == 0:
        done = cell(run_id, "ok")
        return RULE.finding(
            run_id,
            Outcome.NOT_APPLICABLE,
            "no tokens decoded (output_tokens 0: a prompt-processing run)"
            if done > 0
            else "no tokens decoded: no request completed",
            refs=refs,
        )
    if rate is None:
        return RULE.finding(
            run_id,
            Outcome.UNDECIDABLE,
            "no decode rate: no first-token times (t_first) and not a single-stream run",
            refs=refs,
        )
    spec, spec_source = speculation_state(run)
    if spec:
        return RULE.finding(
            run_id,
            Outcome.UNDECIDABLE,
            f"speculative decoding on ({spec_source}): one weight read yields "
            "several tokens, so tok/s × bytes per token is not the bandwidth "
            "used",
            refs=refs,
        )
    bpt = bandwidth.bytes_per_token(run)
    if bpt.value is None:
        outcome = Outcome.UNDECIDABLE if bpt.moe_unknown else Outcome.NOT_APPLICABLE
        return RULE.finding(
            run_id,
            outcome,
            f"no bytes per token: {bpt.missing}",
            numbers={"rate_tps": rate},
            refs=refs,
        )
    needed = rate * bpt.value / 1e9
    lines = [
        *bpt.arithmetic,
        f"needed bandwidth = {fmt(rate, 2)} tok/s ({rate_source}) × {bandwidth.gb(bpt.value)} "
        f"GB/token = {fmt(needed, 0)} GB/s",
    ]
    numbers: dict[str, Any] = {
        "rate_tps": rate,
        "bytes_per_token": bpt.value,
        "bytes_source": bpt.source,
        "needed_gbps": needed,
    }
    den = bandwidth.denominator(run, data.tables.probes, data.tables.run_files)
    if den is None:
        return RULE.finding(
            run_id,
            Outcome.NOT_APPLICABLE,
            f"decode {fmt(rate, 1)} tok/s × {bandwidth.gb(bpt.value)} GB/token needs "
            f"{fmt(needed, 0)} GB/s, but no bandwidth is known to compare it with (bandwidth "
            "probe records, hardware.bandwidth_measured_gbps or _nominal_gbps)",
            arithmetic=lines,
            numbers=numbers,
            refs=refs,
        )
    a = _assess(needed, bpt, den, run, data.config[NEAR_CEILING])
    lines += [
        *den.arithmetic,
        f"utilization = {fmt(needed, 0)} ÷ {a['denominator']} = {_pct(a['util_lo'], a['util_hi'])}",
    ]
    if den.note:
        lines.append(den.note)
    numbers |= {
        "denominator_low_gbps": den.low,
        "denominator_high_gbps": den.high,
        "denominator_source": den.source,
        "utilization_low": a["util_lo"],
        "utilization_high": a["util_hi"],
        "nominal": den.nominal,
    }
    refs = [*refs, *den.refs]
    head = (
        f"decode {fmt(rate, 2)} tok/s × {bandwidth.gb(bpt.value)} GB/token = "
        f"{fmt(needed, 0)} GB/s: {_pct(a['util_lo'], a['util_hi'])} of the "
        f"{a['denominator']} {den.phrase}"
    )
    spec_note = "" if spec is False else " (unless speculative decoding was on: not stated)"
    if a["level"] == "impossible":
        return RULE.finding(
            run_id,
            Outcome.FIRED,
            f"{head}: above 100%, physically impossible{spec_note}",
            arithmetic=lines,
            numbers=numbers,
            refs=refs,
            severity=Severity.ERROR,
            help="check the rate (tokens counted as chunks? prefill excluded?) and the bytes per "
            "token before publishing; disclose speculative decoding if it was on",
        )
    if den.nominal:
        return RULE.finding(
            run_id,
            Outcome.FIRED,
            f"{head}: the denominator is the data-sheet figure; a read stream at the model's "
            "working set reaches less, so the true utilization is higher",
            arithmetic=lines,
            numbers=numbers,
            refs=refs,
            severity=Severity.WARNING,
            help="measure the bandwidth at the working-set size (benchreport probe bandwidth) "
            "and write it as probe records",
        )
    if a["level"] == "near":
        moe = (
            f"; MoE decode typically reaches {MOE_TYPICAL * 100 - 5:.0f}–{MOE_TYPICAL * 100:.0f}%"
            if a["moe"]
            else ""
        )
        return RULE.finding(
            run_id,
            Outcome.FIRED,
            f"{head}: near the ceiling (above {data.config[NEAR_CEILING]:.0%}){moe}; little "
            "headroom for a faster engine",
            arithmetic=lines,
            numbers=numbers,
            refs=refs,
            severity=Severity.INFO,
            help="expect single-digit gains from a faster kernel; quote the utilization with "
            "the figure",
        )
    return RULE.finding(
        run_id,
        Outcome.PASSED,
        f"{head}: headroom left",
        arithmetic=lines,
        numbers=numbers,
        refs=refs,
    )


def _claim_run(data: AuditData, claim: Any) -> str | None:
    if claim.runs:
        return str(claim.runs[0])
    runs = data.tables.runs
    models = {(str(r["model_name"]), str(r["hardware_name"])) for _, r in runs.iterrows()}
    if len(models) == 1 and len(runs):
        return str(runs["run"].iloc[0])
    return None


def _check_claim(data: AuditData, claim: Any) -> Finding:
    subject = str(claim.claim)
    refs = [claim.ref] if claim.ref else []
    run_id = _claim_run(data, claim)
    if run_id is None:
        return RULE.finding(
            subject,
            Outcome.UNDECIDABLE,
            f"the {fmt(claim.value, 1)} tok/s target names no run, and the "
            "audit holds several models or machines",
            refs=refs,
        )
    run = row(data.runs, run_id)
    bpt = bandwidth.bytes_per_token(run)
    if bpt.value is None:
        outcome = Outcome.UNDECIDABLE if bpt.moe_unknown else Outcome.NOT_APPLICABLE
        return RULE.finding(
            subject, outcome, f"no bytes per token for run {run_id}: {bpt.missing}", refs=refs
        )
    needed = claim.value * bpt.value / 1e9
    lines = [
        *bpt.arithmetic,
        f"needed bandwidth = {fmt(claim.value, 1)} tok/s × {bandwidth.gb(bpt.value)} "
        f"GB/token = {fmt(needed, 0)} GB/s",
    ]
    numbers: dict[str, Any] = {
        "target_tps": claim.value,
        "bytes_per_token": bpt.value,
        "needed_gbps": needed,
        "run": run_id,
    }
    den = bandwidth.denominator(run, data.tables.probes, data.tables.run_files)
    if den is None:
        return RULE.finding(
            subject,
            Outcome.NOT_APPLICABLE,
            f"{fmt(claim.value, 1)} tok/s needs {fmt(needed, 0)} GB/s, but no bandwidth is "
            "known to compare it with (bandwidth probes, hardware.bandwidth_measured_gbps)",
            arithmetic=lines,
            numbers=numbers,
            refs=refs,
        )
    a = _assess(needed, bpt, den, run, data.config[NEAR_CEILING])
    lines += [
        *den.arithmetic,
        f"utilization needed = {fmt(needed, 0)} ÷ {a['denominator']} = "
        f"{_pct(a['util_lo'], a['util_hi'])}",
    ]
    if den.note:
        lines.append(den.note)
    numbers |= {
        "denominator_low_gbps": den.low,
        "denominator_high_gbps": den.high,
        "utilization_low": a["util_lo"],
        "utilization_high": a["util_hi"],
        "nominal": den.nominal,
    }
    refs = [*refs, *den.refs]
    head = (
        f"the {fmt(claim.value, 1)} tok/s target needs {fmt(claim.value, 1)} × "
        f"{bandwidth.gb(bpt.value)} GB/token = {fmt(needed, 0)} GB/s: "
        f"{_pct(a['util_lo'], a['util_hi'])} of the {a['denominator']} {den.phrase}"
    )
    if a["level"] == "impossible":
        return RULE.finding(
            subject,
            Outcome.FIRED,
            f"{head}: above 100%, impossible",
            arithmetic=lines,
            numbers=numbers,
            refs=refs,
            severity=Severity.ERROR,
            help="drop the target or change what bounds it (fewer bytes per token, more bandwidth)",
        )
    if a["level"] == "near" or den.nominal:
        if a["moe"] and a["util_lo"] > MOE_TYPICAL:
            what = (
                f"beyond what MoE decode reaches ({MOE_TYPICAL * 100 - 5:.0f}–"
                f"{MOE_TYPICAL * 100:.0f}%): not physically plausible"
            )
        elif a["level"] == "near":
            what = f"above the {data.config[NEAR_CEILING]:.0%} gate: little room to reach it"
        else:
            what = "a nominal denominator: the measured bandwidth is lower, the need higher"
        return RULE.finding(
            subject,
            Outcome.FIRED,
            f"{head}, {what}",
            arithmetic=lines,
            numbers=numbers,
            refs=refs,
            severity=Severity.WARNING,
            help="set the target from measured bandwidth at the working set and "
            "audited bytes per token",
        )
    return RULE.finding(
        subject,
        Outcome.PASSED,
        f"{head}: within reach",
        arithmetic=lines,
        numbers=numbers,
        refs=refs,
    )


RULE = Rule(
    code="BR015",
    name="bandwidth-ceiling",
    severity=Severity.WARNING,
    summary="bytes per token × tok/s against measured bandwidth at the model's working-set "
    "size: impossible (> 100%), near the ceiling (> 55%), or a nominal denominator used",
    check=check,
    doc=__doc__ or "",
)
