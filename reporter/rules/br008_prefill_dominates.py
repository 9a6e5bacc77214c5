"""Prompt processing takes more than 30% of the wall clock: the figure measures prefill.

## What it checks
How much of a run's wall clock went to reading the prompts rather than writing the answers.

## Why it matters
`wall ≈ Σ prompt tokens ÷ prefill rate + longest output ÷ per-request decode rate`. Only the
second term is decode. A run whose first term dominates measures the prompt length and the
prefill rate, not the decode throughput it is usually quoted as.

## How it decides
`prefill share = (Σ prompt tokens ÷ prefill rate) ÷ wall clock`. The prefill rate comes from a
`probe` record (`what: prefill_rate`, for the run, or for every run of its file; a file of
probes alone serves every run audited), else from a lone
request of the same sweep (`prompt tokens ÷ time to first token`), else from a
prompt-processing test of the same prompt, context and settings (llama-bench's `pp512` for its
`pp512+tg128`: prompt tokens ÷ its time). A lone request with a prompt under 1,024 tokens
spends its time to first token mostly on fixed overhead: its rate is a lower bound, the share
an upper bound, which can pass the run but not fire. The run fires above `prefill_share`
(30%), as METHOD.md states; the median time to first token is shown beside the estimate as a
cross-check.

## Worked example
METHOD.md §4, case B, prefill measured at 3,005 tok/s. Natural stop with 5,634-token prompts
at N=8: `8 × 5,634 = 45,072 tokens ÷ 3,005 = 15.0 s` of a 17.77 s wall clock, 84%; its
72.03 tok/s is a prefill measurement. With 352-token prompts: `2,816 ÷ 3,005 = 0.94 s` of
2.84 s, 33% (the measured median time to first token was 0.974 s).

A hard bound comes first where the file has one: every prompt is read after its request is
sent and before its first token, so prompt processing fits inside the union of the requests'
[send, first token] windows (from per-request times) or their sum, Σ TTFT (from a summary or
a list without send times). A bound within `prefill_share` passes the run, also when the
estimate above (which assumes prompts read one after another) is higher.

A run that processed no prompt tokens (llama-bench's `tg` tests) passes; a prompt-processing
test (phase `prompt`, no output) is not a decode figure and the rule does not apply.

## When it cannot decide
Without prompt token counts or a prefill rate (no probe, no lone request, no prompt test),
and a first-token bound above the limit: the time before first tokens then holds queueing as
well as prefill, and only a prefill rate tells them apart. When no request completed: tools
count the prompt tokens of completed requests only.

## What to do
Quote decode throughput from runs with short prompts and forced length; quote long-prompt runs
as what they are (prefill-bound throughput at that prompt length), with the prompt length.

## References
METHOD.md §4; seed 001 §2.
"""

from __future__ import annotations

import math

from reporter.config import threshold
from reporter.facts import PrefillWindow, percent
from reporter.numbers import fmt
from reporter.rules.base import AuditData, Finding, Rule, run_ref
from reporter.types import Outcome, Severity

PREFILL_SHARE = threshold(
    "prefill_share",
    0.30,
    "METHOD §4: above ~30% of the wall the figure measures prefill, not decode",
    high=1.0,
)


def check(data: AuditData) -> list[Finding]:
    return [_check_run(data, str(r)) for r in data.stats.index]


def _check_run(data: AuditData, run_id: str) -> Finding:
    s = data.figures(run_id)
    if data.run_field(run_id, "phase") == "prompt":
        return RULE.finding(
            run_id,
            Outcome.NOT_APPLICABLE,
            "a prompt-processing test (no output tokens): its figure is a prefill rate by design",
        )
    window = data.facts.runs[run_id].prefill_window
    limit = data.config[PREFILL_SHARE]
    prompt = float(s["prompt_tokens_total"])
    if math.isnan(prompt):
        return _by_window(run_id, window, limit, "no prompt token counts (prompt_tokens)")
    if float(s["ok"]) == 0:
        # tools count the prompts of completed requests only: a count of 0 is not "no prompt"
        return RULE.finding(
            run_id,
            Outcome.UNDECIDABLE,
            "no request completed: how much of the wall clock went to prompts is unknown",
        )
    if prompt == 0:
        return RULE.finding(
            run_id,
            Outcome.PASSED,
            "no prompt tokens were processed in the run: its wall clock holds no prompt processing",
            numbers={"prompt_tokens": prompt},
        )
    rate = float(s["prefill_rate"])
    if math.isnan(rate):
        return _by_window(
            run_id,
            window,
            limit,
            "no prefill rate: add a probe record (what: prefill_rate) or a lone "
            "request of the same sweep",
        )
    wall = float(s["wall_s"])
    if math.isnan(wall) or wall <= 0:
        return RULE.finding(run_id, Outcome.UNDECIDABLE, "no wall clock")
    share = float(s["prefill_share"])
    n = int(s["requests"])
    per = prompt / n if n else float("nan")
    prefill_s = float(s["prefill_s"])
    digits = _decimals(wall)
    arithmetic = [
        f"prompt tokens: {n} × {fmt(per, 0)} = {fmt(prompt, 0)}",
        f"prefill ≈ {fmt(prompt, 0)} ÷ {fmt(rate, 0)} tok/s = {fmt(prefill_s, digits)} s "
        f"(rate from {s.text('prefill_rate_source')})",
        f"share = {fmt(prefill_s, digits)} ÷ {fmt(wall, digits)} s wall = {share:.0%}",
    ]
    ttft = float(s["median_ttft_s"])
    if not math.isnan(ttft):
        arithmetic.append(f"measured median time to first token: {fmt(ttft, 3)} s")
    numbers = {
        "prompt_tokens": prompt,
        "prefill_rate": rate,
        "prefill_s": prefill_s,
        "wall_s": wall,
        "prefill_share": share,
        "median_ttft_s": ttft,
    }
    if share > limit and window is not None and window.share <= limit:
        # the estimate assumes prompts read one after another; the first-token times prove
        # the reading fitted in less, whatever the server batched
        numbers["prefill_window_s"] = window.seconds
        numbers["prefill_window_share"] = window.share
        return RULE.finding(
            run_id,
            Outcome.PASSED,
            f"prompt processing took at most {percent(window.share)} of the wall clock (every "
            f"prompt was read before its first token), within {limit:.0%}; the estimate of "
            f"{share:.0%} from the prefill rate assumes prompts read one after another",
            arithmetic=[*arithmetic, window.how],
            numbers=numbers,
        )
    if share > limit and s.flag("prefill_rate_bound"):
        return RULE.finding(
            run_id,
            Outcome.UNDECIDABLE,
            f"prompt processing is at most {share:.0%} of the wall clock, above {limit:.0%}, but "
            "that bound comes from a short lone request whose time to first token is mostly "
            "fixed overhead",
            arithmetic=arithmetic,
            numbers=numbers,
            help="measure the prefill rate with one long prompt, or add a probe record "
            "(what: prefill_rate)",
        )
    if share > limit:
        return RULE.finding(
            run_id,
            Outcome.FIRED,
            f"prompt processing ≈ {fmt(prefill_s, digits)} s of the {fmt(wall, digits)} s wall "
            f"clock ({share:.0%} > {limit:.0%}): the {fmt(s['aggregate_tps'])} tok/s measures "
            "prefill",
            arithmetic=arithmetic,
            numbers=numbers,
            refs=run_ref(data, run_id),
            help="quote decode throughput from short-prompt forced-length runs; state the prompt "
            "length with this figure",
        )
    return RULE.finding(
        run_id,
        Outcome.PASSED,
        ("prompt processing is at most" if s.flag("prefill_rate_bound") else "prompt processing ≈")
        + f" {share:.0%} of the wall clock",
        arithmetic=arithmetic,
        numbers=numbers,
    )


def _decimals(wall: float) -> int:
    """Decimals for the prefill seconds and the wall clock alike: 2, or as many as give a
    sub-second wall two significant figures (0.051 s of 0.054 s, not 0.1 s of 0.05 s). Rounded
    to the same decimals, a prefill time below the wall never prints above it."""
    if not 0 < wall < 0.1:
        return 2
    return min(9, 1 - math.floor(math.log10(wall)))


def _by_window(run_id: str, window: PrefillWindow | None, limit: float, missing: str) -> Finding:
    """Without a prefill estimate, the first-token times still bound prompt processing: a
    bound within the limit passes the run; above it, prefill and queueing cannot be told
    apart and the rule says so."""
    if window is None or window.share >= 1:
        # no window, or one as long as the wall: the bound says nothing
        return RULE.finding(run_id, Outcome.UNDECIDABLE, missing)
    numbers = {"prefill_window_s": window.seconds, "prefill_window_share": window.share}
    if window.share <= limit:
        return RULE.finding(
            run_id,
            Outcome.PASSED,
            f"prompt processing took at most {percent(window.share)} of the wall clock (every "
            f"prompt was read before its first token), within {limit:.0%}",
            arithmetic=[window.how],
            numbers=numbers,
        )
    return RULE.finding(
        run_id,
        Outcome.UNDECIDABLE,
        f"{missing}; the time before first tokens bounds prompt processing at "
        f"{window.share:.0%} of the wall clock, above {limit:.0%}, but that time holds "
        "queueing as well as prefill",
        arithmetic=[window.how],
        numbers=numbers,
        help="add a probe record (what: prefill_rate) to tell prefill from queueing",
    )


RULE = Rule(
    code="BR008",
    name="prefill-dominates-wall",
    severity=Severity.WARNING,
    summary="prompt processing is > 30% of the wall clock",
    check=check,
    doc=__doc__ or "",
)
