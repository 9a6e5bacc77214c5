"""Speculative decoding was on, and the trace does not say what the model was writing.

## What it checks
For each run with speculative decoding on (stated in `workload.speculative.enabled`, or
inferred as BR011 does from a method, acceptance rate, flag or draft counter), whether
`workload.content` names the content type: code, prose, json or mixed.

## Why it matters
With speculation on, speed depends on how predictable the text is: a draft model guesses code
and JSON far more often than open prose (acceptance ~68.9% against ~30.5% in METHOD.md §5).
Single-stream decode with speculation on: code 143.01 tok/s, prose 115.30; with it off the two
are within 2.6%. A speculative figure without its content type can be the flattering one, and
two speculative figures with different content are not comparable.

## How it decides
Fires when speculation is on and `workload.content` is absent or `unknown`. Passes when the
content is named (the acceptance rate is shown when known). Not applicable when speculation
was off.

## Worked example
METHOD.md §5, case B, forced 512 tokens at N=8, speculation on: code 606.1 tok/s, prose 359.3
(1.69× apart, all of it from acceptance). Published as "606 tok/s at 8-way" without "code",
the figure overstates what a prose workload gets by 69%.

## When it cannot decide
When the trace does not say whether speculation was on (BR011 fires) and the content is not
named either.

## What to do
State `workload.content`, and measure at least code and prose separately, and once with
speculation off, to see how much of the speed comes from acceptance.

## References
METHOD.md §5 "Content and speculative decoding"; seed 001 §3, §4, §5.
"""

from __future__ import annotations

import math
from typing import Any

from reporter.compare import cell, speculation_state
from reporter.numbers import fmt
from reporter.rules.base import AuditData, Finding, Rule, run_ref
from reporter.types import Outcome, Severity


def check(data: AuditData) -> list[Finding]:
    return [_check_run(data, str(r["run"]), r) for r in data.run_rows()]


def _content(run: Any) -> str | None:
    value = run.get("content")
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return None if str(value) in ("", "unknown") else str(value)


def _check_run(data: AuditData, run_id: str, run: Any) -> Finding:
    refs = run_ref(data, run_id)
    state, source = speculation_state(run)
    content = _content(run)
    acceptance = run.get("spec_acceptance")
    has_acc = acceptance is not None and not (
        isinstance(acceptance, float) and math.isnan(acceptance)
    )
    numbers = {
        "spec_enabled": state,
        "content": content,
        "acceptance": float(acceptance) if has_acc else None,
    }
    if state is False:
        return RULE.finding(
            run_id, Outcome.NOT_APPLICABLE, f"speculative decoding off ({source})", numbers=numbers
        )
    if state is None:
        if content is not None:
            return RULE.finding(
                run_id,
                Outcome.PASSED,
                f"content disclosed ({content}); whether speculation was on is not (BR011)",
                numbers=numbers,
                refs=refs,
            )
        return RULE.finding(
            run_id,
            Outcome.UNDECIDABLE,
            "whether speculative decoding was on is not stated "
            "(workload.speculative.enabled), and workload.content is not "
            "either",
            numbers=numbers,
            refs=refs,
        )
    agg = cell(data.stats, run_id, "aggregate_tps")
    acc = f", acceptance {fmt(float(acceptance) * 100, 1)}%" if has_acc else ""
    if content is None:
        figure = f" {fmt(agg)} tok/s" if not math.isnan(agg) else ""
        return RULE.finding(
            run_id,
            Outcome.FIRED,
            f"speculative decoding on ({source}{acc}) but the content type is not stated "
            f"(workload.content): the{figure} figure depends on how predictable the text was "
            "(code ~69% accepted, prose ~31%)",
            numbers=numbers,
            refs=refs,
            arithmetic=["METHOD §5, speculation on, N=8: code 606.1 tok/s, prose 359.3 (1.69×)"],
            help="state workload.content (code, prose, json, mixed) and measure code and prose "
            "separately",
        )
    return RULE.finding(
        run_id,
        Outcome.PASSED,
        f"speculative decoding on ({source}{acc}); content stated: {content}",
        numbers=numbers,
        refs=refs,
    )


RULE = Rule(
    code="BR010",
    name="speculation-content-undisclosed",
    severity=Severity.WARNING,
    summary="speculative decoding on, content type unknown",
    check=check,
    doc=__doc__ or "",
)
