"""The trace does not say whether speculative decoding was on.

## What it checks
For each run, whether speculative decoding was on or off: stated in
`workload.speculative.enabled`, or shown by a speculative method or acceptance rate, an engine
flag that asks for a draft (`--speculative-config`, `--speculative-model`, `-md`,
`--draft-model`, `num_speculative_tokens`, …), or draft counters that rose during the run
(`vllm:spec_decode_num_drafts_total`, `vllm:spec_decode_num_draft_tokens_total`, other
`*spec*draft*` counters in the run's `metrics_before` / `metrics_after`, or in its `run_end`).

## Why it matters
Speculative decoding changes what a tok/s figure means. On one machine and model, single-stream
decode went from 54.04 to 143.01 tok/s on code and from 52.66 to 115.30 on prose when it was
turned on; at N=8 the aggregate went from 199.8 to 606.1 (code). A figure that does not say
whether it was on cannot be compared with any other.

## How it decides
Fires (information) when nothing tells whether speculation was on. A draft counter that was
scraped before and after a run that generated tokens, and did not move, tells it was off.
Fires as a warning when the run says it was off but a flag or a rising draft counter shows it
on. Passes when it is stated, or inferred from a flag, method, acceptance rate or counter, or
from what another tool's file records (SGLang's `server_info.speculative_algorithm`, vLLM's
acceptance rate; llama-bench loads no draft model): the message says "stated" or "inferred"
and names which.

## Worked example
METHOD.md §5: code at N=1, 53.0 tok/s with speculation off, 140.6 with it on (2.65×); prose at
N=8, 228.3 and 359.3 (1.57×). The same "N=8" figure is 199.8 or 606.1 depending on one switch.

## When it cannot decide
It always decides: an unstated switch is the finding.

## What to do
Write `workload.speculative.enabled` (true or false) in the run record, with `method` and the
measured `acceptance` when on; the recorder takes the acceptance from the server's counters.

## References
METHOD.md §5 "Content and speculative decoding"; seed 001 §4; FORMATS.md §5.2 (vLLM spec
decode counters).
"""

from __future__ import annotations

from typing import Any

from reporter import features
from reporter.compare import speculation_state
from reporter.rules.base import AuditData, Finding, Rule, run_ref
from reporter.types import Outcome, Severity


def check(data: AuditData) -> list[Finding]:
    return [_check_run(data, str(r["run"]), r) for r in data.run_rows()]


def _evidence_on(run: Any) -> str | None:
    """A flag or a rising draft counter that shows speculation on, whatever the run says."""
    flags = features.requested(features.parse_flags(run.get("engine_flags") or []))
    if "speculation" in flags:
        return f"engine flag {flags['speculation'][0].text}"
    drafts = features.counter_delta(run.get("extra"), features.SPEC_DRAFT_COUNTERS)
    if drafts is not None and drafts.delta > 0:
        return f"draft counter {drafts.names[0]} rose by {drafts.delta:,.0f} ({drafts.where})"
    return None


def _drafts_stayed_at_zero(data: AuditData, run_id: str, run: Any) -> str | None:
    """A draft counter scraped before and after a run that wrote tokens, and that did not move."""
    drafts = features.counter_delta(run.get("extra"), features.SPEC_DRAFT_COUNTERS)
    tokens = data.figures(run_id)["output_tokens"]
    if drafts is None or not tokens > 0:
        return None
    if drafts.after != 0 and (drafts.before is None or drafts.delta != 0):
        return None
    return (
        f"draft counter {drafts.names[0]} stayed at {drafts.after:,.0f} while the run "
        f"generated {tokens:,.0f} tokens ({drafts.where})"
    )


def _check_run(data: AuditData, run_id: str, run: Any) -> Finding:
    refs = run_ref(data, run_id)
    state, source = speculation_state(run)
    if state is None:
        idle = _drafts_stayed_at_zero(data, run_id, run)
        if idle is not None:
            return RULE.finding(
                run_id,
                Outcome.PASSED,
                f"not stated, but off: {idle}",
                numbers={"spec_enabled": False, "inferred_from": idle},
                refs=refs,
            )
        return RULE.finding(
            run_id,
            Outcome.FIRED,
            "whether speculative decoding was on is not stated (workload.speculative.enabled "
            "absent) and no flag, method, acceptance rate or draft counter shows it",
            numbers={"spec_enabled": None},
            refs=refs,
            help="state workload.speculative.enabled (true or false); when on, its method and "
            "acceptance, and the content type",
        )
    if state is False:
        contrary = _evidence_on(run)
        if contrary is not None:
            return RULE.finding(
                run_id,
                Outcome.FIRED,
                f"the run says speculative decoding was off, but {contrary} shows it on",
                severity=Severity.WARNING,
                numbers={"spec_enabled": False, "contrary": contrary},
                refs=refs,
                help="check the server's configuration and correct workload.speculative.enabled",
            )
    word = "on" if state else "off"
    how = "stated" if source == "workload.speculative.enabled" else "inferred"
    return RULE.finding(
        run_id,
        Outcome.PASSED,
        f"speculative decoding {word} ({how}: {source})",
        numbers={"spec_enabled": state, "source": source},
        refs=refs,
    )


RULE = Rule(
    code="BR011",
    name="speculation-unknown",
    severity=Severity.INFO,
    summary="cannot tell whether speculative decoding was on",
    check=check,
    doc=__doc__ or "",
)
