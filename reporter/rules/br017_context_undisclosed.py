"""A decode speed stated without the context length it was measured at.

## What it checks
For each run, whether the trace says how long the context was: `workload.context_tokens`,
or the prompt length (`workload.prompt_tokens`, or `prompt_tokens` on the requests), from
which the context at the start of decoding follows. Where runs of one setup differ only in
context length (a sweep), it shows the decode rate against the context.

## Why it matters
Decode slows as the context grows: every token attends over the whole KV cache, and the cache
is read with the weights. METHOD.md §6: the same machine decodes ~98 tok/s at short context
and 34 tok/s with a 43k-token prompt. A single-stream figure without its context length is
the short-context ceiling, whatever the workload it is quoted for.

## How it decides
Per run: passes when `workload.context_tokens` is given, or the prompt length (the run's,
the requests' mean, or a summary's prompt tokens ÷ completed requests); fires (information)
otherwise. Per audit, when runs that agree on everything but
prompt and context length (stop mode, content, speculation, N, engine, model, hardware) show
at least two context lengths: the median decode rate at each, and the fall from the shortest
to the longest.

Such a sweep puts a change of decode on the context only when its runs differ in nothing
else the file shows that moves decode:
- answer length, unless the stop is forced: the mean output a request wrote, at each
  context, within `comparable_length_tolerance` (10%) of the others. With natural stop the
  model chose the lengths: answers of other lengths are other text, decoded at other
  contexts than the stated ones, and at N > 1 beside a different share of other requests'
  prefill.
- with speculation on, the draft's acceptance: stated for every run, and at most
  `context_acceptance_gap` (2 points) apart. Acceptance depends on the text (METHOD.md §5:
  68.9% for code, 30.5% for prose: 79.45 against 47.25 tok/s at N=8), and each context
  length is another prompt.

Over those sweeps it fires (information) when decode falls by more than
`context_decode_drop` (10%), naming the sweep that falls most, and passes otherwise. A sweep
whose runs also differ in answer length or acceptance is shown in the arithmetic with what
differs, and decides nothing.

## Worked example
METHOD.md §6: short prompts, 97.83 tok/s single-stream decode; a 43k-token prompt, 34 tok/s:
65% slower. Quoted without context, "98 tok/s" promises a long conversation three times the
speed it gets.

Case B's natural-stop runs at N=16 (traces/case-b-queue.jsonl, case-b-natural-stop.jsonl)
decode 52.5 tok/s at 296 tokens of context and 40.8 at 608: 22% apart. Their answers
averaged 218.3 and 56.6 tokens a request. How much of the 22% is the context's, the file
cannot tell, and the finding says so instead of putting it all on the context.

## When it cannot decide
It always decides per run. The sweep needs first-token times for a decode rate; without
them, no sweep finding is made. When the runs of every sweep also differ in answer length
or acceptance (or do not say it), the sweep finding is undecidable: it gives the decode rate
at each context and what else differs, with the numbers, and no cause.

## What to do
State `workload.context_tokens` (or the prompt length) with every decode figure, and measure
at the context lengths the workload has. To measure what context does to decode, vary only
the context: forced output lengths, and with speculation on, the acceptance of each run.

## References
METHOD.md §6 "How fast can one stream be"; seed 000 §6.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from reporter import compare
from reporter.config import threshold
from reporter.numbers import fmt, listed, pct
from reporter.rules.base import AuditData, Finding, Rule, run_ref
from reporter.types import Outcome, Severity
from reporter.values import number

CONTEXT_DROP = threshold(
    "context_decode_drop",
    0.10,
    "run-to-run decode rates differ by ~2% (METHOD §7: 143.01 vs 145.24); a fall of more than "
    "10% with context, in runs that differ in nothing else, is the context's doing",
    high=1.0,
)

#: Answers whose mean lengths are this close are of one length (the tolerance `benchreport
#: compare` and BR012 hold lengths to).
LENGTH_TOLERANCE = compare.LENGTH_TOLERANCE

ACCEPTANCE_GAP = threshold(
    "context_acceptance_gap",
    0.02,
    "METHOD §5, N=8: acceptance 68.9% vs 30.5% made decode 1.68× faster, ~1.4% a point; "
    "rates 2 points apart move decode ~3%, under the 10% fall looked for",
    high=1.0,
)

_LENGTHS = ("prompt_tokens", "context_tokens", "output_tokens_requested")


def check(data: AuditData) -> list[Finding]:
    # the figures read per run: positions in data.stats taken once
    cell = compare.Cells(data.stats)
    findings = [_check_run(data, cell, str(r["run"]), r) for r in data.run_rows()]
    sweep = _check_sweep(data, cell)
    if sweep is not None:
        findings.append(sweep)
    return findings


def context_of(cell: compare.Cells, run_id: str, run: Any) -> tuple[float | None, str]:
    """The run's context length and where it came from (`cell`: the run figures')."""
    ctx = number(run.get("context_tokens"))
    if ctx is not None:
        return ctx, "workload.context_tokens"
    prompt = number(run.get("prompt_tokens"))
    if prompt is not None:
        return prompt, "workload.prompt_tokens; context at the first decoded token"
    mean = number(cell(run_id, "prompt_tokens_mean"))
    if mean is not None and cell(run_id, "from_summary") == 1:
        return mean, "the summary's mean prompt length; context at the first decoded token"
    if mean is not None:
        return mean, "the requests' mean prompt_tokens; context at the first decoded token"
    # a summary's prompt tokens over its completed requests (vLLM, SGLang and LLMPerf count
    # the prompts of those only): their mean
    total = number(cell(run_id, "prompt_tokens_total"))
    done = number(cell(run_id, "ok"))
    if total is not None and done:
        return total / done, (
            f"the summary's prompt tokens ÷ completed requests: {fmt(total, 0)} ÷ "
            f"{fmt(done, 0)}, a mean; context at the first decoded token"
        )
    return None, ""


def _check_run(data: AuditData, cell: compare.Cells, run_id: str, run: Any) -> Finding:
    ctx, source = context_of(cell, run_id, run)
    if ctx is not None:
        return RULE.finding(
            run_id,
            Outcome.PASSED,
            f"context {fmt(ctx, 0)} tokens ({source})",
            numbers={"context_tokens": ctx, "source": source},
        )
    rate = cell(run_id, "median_decode_tps")
    if math.isnan(rate) and not cell(run_id, "output_tokens") > 0:
        return RULE.finding(
            run_id,
            Outcome.NOT_APPLICABLE,
            "no tokens decoded: no figure to give a context length to",
        )
    figure = f"the decode rate {fmt(rate, 1)} tok/s" if not math.isnan(rate) else "the figure"
    return RULE.finding(
        run_id,
        Outcome.FIRED,
        f"{figure} comes without a context length: no workload.context_tokens, no "
        "workload.prompt_tokens and no prompt_tokens on the requests",
        numbers={"context_tokens": None, "median_decode_tps": rate},
        refs=run_ref(data, run_id),
        arithmetic=["METHOD §6: ~98 tok/s at short context, 34 tok/s with a 43k-token prompt"],
        help="state workload.context_tokens (or the prompt length) with every decode figure",
    )


@dataclass(frozen=True)
class _Point:
    """A run on a sweep: its context, decode rate, and what else it shows."""

    context: float
    rate: float
    run: str
    #: the mean output of its completed requests (tokens), when known
    answer: float | None
    #: the stated acceptance rate of its draft tokens, when given
    acceptance: float | None


def _answer(cell: compare.Cells, run_id: str) -> float | None:
    """The mean output of the run's completed requests: theirs, else a summary's output
    tokens ÷ completed requests; None when neither is known."""
    mean = number(cell(run_id, "out_mean"))
    if mean is not None:
        return mean
    total = number(cell(run_id, "output_tokens"))
    done = number(cell(run_id, "ok"))
    return total / done if total is not None and done else None


def _by_context(pts: list[_Point], value: Callable[[_Point], float | None]) -> list[float | None]:
    """The median of `value` over the runs at each context (None where no run gives it),
    shortest context first: the sweep's decode rates, answer lengths and acceptances."""
    groups: dict[float, list[float]] = {}
    for p in pts:
        known = groups.setdefault(p.context, [])
        v = value(p)
        if v is not None:
            known.append(v)
    return [sorted(v)[len(v) // 2] if v else None for _, v in sorted(groups.items())]


def _spread(values: list[float | None]) -> float:
    """How far apart the known values are, as a share of the largest: (max − min) ÷ max."""
    known = [v for v in values if v is not None]
    return (max(known) - min(known)) / max(known) if known and max(known) > 0 else 0.0


def _gap(values: list[float | None]) -> float:
    """How far apart the known values are: max − min."""
    known = [v for v in values if v is not None]
    return max(known) - min(known) if known else 0.0


def _shown(values: list[float | None], show: Callable[[float], str]) -> str:
    """Values one per context: two as `a and b`, in context order; more as `lo to hi`."""
    known = [v for v in values if v is not None]
    if len(values) == 2 and len(known) == 2:
        return f"{show(known[0])} and {show(known[1])}"
    return f"{show(min(known))} to {show(max(known))}"


def _also_differs(
    pts: list[_Point], stop: Any, speculation: Any, tolerance: float, gap: float
) -> list[tuple[str, str]]:
    """What else the sweep's runs differ in that moves a decode rate: (name, words) pairs.

    Answers of other lengths, where the model chose them (any stop but forced): other text,
    decoded at other contexts than the stated ones, and at N > 1 beside another share of
    other requests' prefill. Speculation on with acceptance not stated alike for every run:
    the draft guesses some texts better than others, and each context here is another prompt.
    """
    out: list[tuple[str, str]] = []
    if stop != "forced":
        mode = "natural-stop answers" if stop == "natural" else "answers"
        tail = "" if stop == "natural" else ", stop mode unknown"
        missing = sorted(p.run for p in pts if p.answer is None)
        answers = _by_context(pts, lambda p: p.answer)
        if missing:
            out.append(("answer length", f"no output length for {listed(missing, 4)}{tail}"))
        elif _spread(answers) > tolerance:
            shown = _shown(answers, lambda v: fmt(v, 1))
            out.append(("answer length", f"{mode} of {shown} tokens a request{tail}"))
    if isinstance(speculation, str) and speculation.startswith("on"):
        missing = sorted(p.run for p in pts if p.acceptance is None)
        rates = _by_context(pts, lambda p: p.acceptance)
        if missing:
            words = f"speculation on with no acceptance rate for {listed(missing, 4)}"
            out.append(("speculation acceptance", words))
        elif _gap(rates) > gap:
            words = f"speculation on with acceptance {_shown(rates, lambda v: pct(v, 1))}"
            out.append(("speculation acceptance", words))
    return out


@dataclass
class _Sweep:
    """Runs of one setup at two or more context lengths: the median decode rate at each."""

    pts: list[_Point]
    table: list[tuple[float, float]]
    differs: list[tuple[str, str]]

    @property
    def drop(self) -> float:
        return 1 - self.table[-1][1] / self.table[0][1]

    @property
    def runs(self) -> list[str]:
        return sorted({p.run for p in self.pts})

    def line(self) -> str:
        text = (
            "decode at context "
            + "; ".join(f"{fmt(c, 0)} tokens: {fmt(r, 1)} tok/s" for c, r in self.table)
            + f" (runs {', '.join(self.runs[:4])})"
        )
        if self.differs:
            text += "; not put on context: " + "; ".join(w for _, w in self.differs)
        return text


def _check_sweep(data: AuditData, cell: compare.Cells) -> Finding | None:
    """Decode rate against context, over runs that agree on everything else.

    A sweep whose runs also differ in something else that moves decode (`_also_differs`) is
    shown but decides nothing; with no other sweep, the finding says what it cannot tell.
    """
    sets: dict[tuple[str, ...], list[_Point]] = {}
    modes: dict[tuple[str, ...], tuple[Any, Any]] = {}
    for run in data.run_rows():
        run_id = str(run["run"])
        rate = cell(run_id, "median_decode_tps")
        ctx, _ = context_of(cell, run_id, run)
        if ctx is None or math.isnan(rate) or rate <= 0:
            continue
        vals = compare.values(run, compare.stats_row(data.stats, run_id))
        key = tuple(compare.show(v) for k, v in vals.items() if k not in _LENGTHS)
        point = _Point(ctx, rate, run_id, _answer(cell, run_id), number(run.get("spec_acceptance")))
        sets.setdefault(key, []).append(point)
        modes[key] = (vals["stop"], vals["speculation"])
    tolerance = data.config[LENGTH_TOLERANCE]
    gap = data.config[ACCEPTANCE_GAP]
    sweeps: list[_Sweep] = []
    for key, pts in sets.items():
        if len({round(p.context) for p in pts}) < 2:
            continue
        contexts = sorted({p.context for p in pts})
        rates = [r for r in _by_context(pts, lambda p: p.rate) if r is not None]
        table = list(zip(contexts, rates, strict=True))
        sweeps.append(_Sweep(pts, table, _also_differs(pts, *modes[key], tolerance, gap)))
    if not sweeps:
        return None
    lines = [s.line() for s in sweeps]
    clean = [s for s in sweeps if not s.differs]
    worst = max(clean or sweeps, key=lambda s: s.drop)
    short, long_ = worst.table[0], worst.table[-1]
    numbers: dict[str, Any] = {
        "context_tokens": [c for c, _ in worst.table],
        "decode_tps": [r for _, r in worst.table],
        "drop": worst.drop,
    }
    refs = [x for r in worst.runs for x in run_ref(data, r)][:8]
    if not clean:
        return _undecidable(worst, lines, numbers, refs)
    head = (
        f"decode falls from {fmt(short[1], 1)} tok/s at {fmt(short[0], 0)} tokens of context "
        f"to {fmt(long_[1], 1)} at {fmt(long_[0], 0)} ({fmt(worst.drop * 100, 0)}% slower)"
    )
    if worst.drop > data.config[CONTEXT_DROP]:
        return RULE.finding(
            "audit",
            Outcome.FIRED,
            f"{head}: a decode figure holds only at its context length",
            severity=Severity.INFO,
            arithmetic=lines,
            numbers=numbers,
            refs=refs,
            help="quote decode figures with their context length; measure at the workload's",
        )
    return RULE.finding(
        "audit",
        Outcome.PASSED,
        f"decode holds across context: {fmt(short[1], 1)} tok/s at "
        f"{fmt(short[0], 0)} tokens, {fmt(long_[1], 1)} at {fmt(long_[0], 0)}",
        arithmetic=lines,
        numbers=numbers,
    )


def _undecidable(
    sweep: _Sweep, lines: list[str], numbers: dict[str, Any], refs: list[str]
) -> Finding:
    """Every sweep differs in more than context: the rates as measured, and what else differs."""
    short, long_ = sweep.table[0], sweep.table[-1]
    change = round(sweep.drop * 100)
    moved = (
        "the same rate" if change == 0 else f"{abs(change)}% {'slower' if change > 0 else 'faster'}"
    )
    numbers |= {
        "differs": [name for name, _ in sweep.differs],
        "answer_tokens": _by_context(sweep.pts, lambda p: p.answer),
        "acceptance": _by_context(sweep.pts, lambda p: p.acceptance),
    }
    return RULE.finding(
        "audit",
        Outcome.UNDECIDABLE,
        f"decode is {fmt(short[1], 1)} tok/s at {fmt(short[0], 0)} tokens of context and "
        f"{fmt(long_[1], 1)} at {fmt(long_[0], 0)}, {moved}, but the runs differ in more than "
        f"context: {'; '.join(w for _, w in sweep.differs)}; the file cannot tell the "
        "context's share",
        arithmetic=lines,
        numbers=numbers,
        refs=refs,
        help="to measure what context does to decode, vary only the context: forced output "
        "lengths, and the draft's acceptance recorded for each run when speculation is on",
    )


RULE = Rule(
    code="BR017",
    name="context-undisclosed",
    severity=Severity.INFO,
    summary="decode speed stated without context length",
    check=check,
    doc=__doc__ or "",
)
