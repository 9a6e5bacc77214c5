"""Time to first token plus decode time does not explain the measured wall clock.

## What it checks
Whether the wall clock is what prefill and decode predict:
`predicted wall = prefill + longest output ÷ median per-request decode rate` (METHOD.md §4),
where prefill is the median TTFT or `Σ prompt tokens ÷ prefill rate`; a closed loop that sends
more requests than it keeps in flight runs in waves, each but the last taking a typical
request's `prefill + mean output ÷ decode rate`.

## Why it matters
When the prediction holds, the aggregate is understood: it is decode at the measured rate,
after a known prefill. When the measured wall is far longer, something else took the time
(a queue, stragglers, retries, a saturated client); when it is far shorter, the per-request
rates or token counts are wrong. Either way the figure is not yet explained.

## How it decides
Per run with first-token times: the prefill term, which is the median time to first token of
the first wave (requests that got their first token before any request finished: later ones may
have waited for a slot, and that wait is what the prediction must not contain; one stream, N =
1, waits behind none of its requests, and all count), or
`Σ prompt tokens ÷ prefill rate` when a prefill rate is known and that is longer (prompts
processed one after another, BR008); the number of waves, `⌈requests ÷ concurrency⌉`, when a
closed loop sends more requests than it keeps in flight; the median per-request decode
rate `output tokens ÷ (t_end − t_first)`, the longest output. The run fires when
`|measured ÷ predicted − 1|` exceeds `wall_tolerance` (20%). The predicted aggregate
`Σ output tokens ÷ predicted wall` is shown beside the measured one.

A run without per-request times whose requests were all admitted at once and prefilled
together as one batch (its record gives that batch's one time to first token,
`summary.batch_ttft_s`: SGLang `bench_one_batch`, which sends no request through a queue, and
llama.cpp's `llama-batched-bench`, which puts the prompts of its `pl` sequences in one batch
and times it as `t_pp` before any generation step) is one wave, and that time is its first
term: no request waited for a slot, and no other run's prefill rate replaces it. The
prefill gave every request its first token, so the rest is `longest output − 1` decode steps,
each `1 ÷ decode rate` (the rate is one over the time per token after the first), and none
when one token was asked for; where the record states the steps instead
(`summary.batch_decode_steps`: `llama-batched-bench` samples no token from its prefill and
times `tg` steps, one per output token, in `t_tg`), that many. Such a tool's wall is by its
own account the prefill plus the decode steps; the finding shows that sum. A summary of one
request is one wave too: its TTFT, then `output − 1` decode steps at its tool's decode rate,
`1 ÷ TPOT` (the time per token after the first).

An open-loop run (a request rate is set) lasts as long as its arrival schedule: the prediction
is then the span of the send times (else `(requests − 1) ÷ rate`) plus one request's TTFT and
decode, and only a wall longer than that (a queue building up) is unexplained. When failed
requests were the only ones in flight for more than `wall_tolerance` of the wall (timeouts in
a serial run), the finding says so, and how much of the wall they took, instead of calling
that time unexplained.

## Worked example
METHOD.md §4, case B, forced 512 tokens at N=8: TTFT 0.23 s, median decode 79.45 tok/s;
predicted wall `0.23 + 512 ÷ 79.45 = 6.67 s`, predicted aggregate `8 × 512 ÷ 6.67 = 614`;
measured `4,096 ÷ 6.76 = 606` tok/s: 1.3% apart, explained. Case A at N=4 predicts one
request's 5.5 s against a measured 22.5 s: the queue is the unexplained time.

When the measured wall is longer, the finding also says when the last request got its first
token (from per-request times): until then some request was still queued or behind other
prompts, which is where a queue's time shows.

## When it cannot decide
Without per-request first-token and end times, the first wave's time to first token is
unknown (a summary's median TTFT may contain the queue the prediction must leave out), unless
the run is one request or one batch admitted at once; without a decode rate there is nothing
to predict from, except for a batch of one output token per request, which has no decode step.

## What to do
Find where the unexplained time went: a queue (BR003, BR004), a few slow requests, errors
(BR019), the client (BR018).

## References
METHOD.md §4; seed 001 §2.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from reporter.config import threshold
from reporter.facts import percent
from reporter.medians import median
from reporter.numbers import fmt
from reporter.rules.base import AuditData, Finding, Rule, run_ref
from reporter.types import Outcome, Severity
from reporter.values import number

WALL_TOLERANCE = threshold(
    "wall_tolerance",
    0.20,
    "the prediction uses medians; METHOD's explained case is 1.3% off, single runs vary ~5%, "
    "so beyond 20% something else took the time",
)


def first_wave_ttft(data: AuditData, run_id: str) -> float:
    """Median time to first token of the requests that started before any finished.

    Later requests may have waited for a slot; their wait is what the prediction must not
    contain, or a queue would explain itself.
    """
    # on the columns as arrays: filtering the whole frame per run dominated big audits, and
    # taking a frame per run dominated audits of thousands of small runs
    t_first = data.values_of(run_id, "t_first")
    t_end = data.values_of(run_id, "t_end")
    keep = data.values_of(run_id, "ok") & ~np.isnan(t_first) & ~np.isnan(t_end)
    if not keep.any():
        return float("nan")
    # every row kept (the usual case): the columns themselves, not copies of them
    kept = slice(None) if keep.all() else np.flatnonzero(keep)
    ttft = data.values_of(run_id, "ttft")[kept]
    if data.concurrency(run_id) == 1:
        # one stream: no request waits behind another of the run's, and a first wave of one
        # request is its cold start alone (1.17 s against a median of 0.10 s, seen in a real
        # GuideLLM synchronous run): every request's TTFT counts
        return median(ttft)
    first = t_first[kept] < t_end[kept].min()
    return median(ttft[first] if first.any() else ttft)


def _missing(ttft: float, rate: float, s: Any) -> str:
    """What the prediction lacks, said of this run: a summary's median TTFT is no first wave's."""
    missing = []
    if math.isnan(ttft):
        median = float(s["median_ttft_s"])
        missing.append(
            "no per-request first-token and end times, so no time to first token of the first "
            + (
                f"wave (the file's median TTFT, {fmt(median, 3)} s, may include waiting for a slot)"
                if not math.isnan(median)
                else "wave"
            )
        )
    if math.isnan(rate) or rate <= 0:
        missing.append("no per-request decode rate")
    return "; ".join(missing)


def check(data: AuditData) -> list[Finding]:
    return [_check_run(data, str(r)) for r in data.stats.index]


def batch_ttft(data: AuditData, run_id: str) -> float:
    """The one time to first token of a run whose requests were all admitted at once and
    prefilled together (its summary's `batch_ttft_s`), NaN for any other run.

    Every request of such a run is in the first wave: none waited for a slot."""
    value = number(data.summary(run_id).get("batch_ttft_s"))
    return math.nan if value is None else value


def batch_decode_steps(data: AuditData, run_id: str, longest: float) -> tuple[float, bool]:
    """The decode steps timed after a batch's prefill, and whether its record states them
    (`batch_decode_steps`: llama-batched-bench times one per output token, its prefill
    sampling none); else `longest − 1`, the prefill having given each its first token."""
    value = number(data.summary(run_id).get("batch_decode_steps"))
    return (longest - 1, False) if value is None else (value, True)


def _batch_name(requests: int) -> str:
    """The prefill term of a batch admitted at once, named."""
    who = "its one request" if requests == 1 else f"{requests:,} requests prefilled together"
    return f"the batch's one TTFT ({who})"


def _check_run(data: AuditData, run_id: str) -> Finding:
    s = data.figures(run_id)
    ttft, rate = first_wave_ttft(data, run_id), float(s["median_decode_tps"])
    # one batch admitted at once, known only from its record when no request has times
    batch = batch_ttft(data, run_id) if math.isnan(ttft) else math.nan
    together = not math.isnan(batch)
    one = int(s["requests"]) == 1 and s.flag("from_summary") and not together
    if together:
        ttft = batch
    elif math.isnan(ttft) and one:
        # a summary of one request: its median TTFT is that request's, the whole first wave
        ttft = float(s["median_ttft_s"])
    longest, wall = float(s["out_max"]), float(s["wall_s"])
    if math.isnan(longest) and one:
        longest = float(s["output_tokens"])  # its one output
    steps, stated = batch_decode_steps(data, run_id, longest) if together else (math.nan, False)
    # a batch of one output token, the prefill's, has no decode step and needs no rate (a
    # tool that states its steps samples no token from its prefill: none is the prefill's)
    no_decode = (together and steps == 0 and not stated) or (one and longest == 1)
    if math.isnan(ttft) or ((math.isnan(rate) or rate <= 0) and not no_decode):
        return RULE.finding(run_id, Outcome.UNDECIDABLE, _missing(ttft, rate, s))
    if math.isnan(wall) or wall <= 0 or math.isnan(longest):
        return RULE.finding(run_id, Outcome.UNDECIDABLE, "no wall clock or output lengths")
    prefill = float(s["prefill_s"])
    # METHOD §4: the first term is Σ prompt ÷ prefill rate where that is known and larger
    # (prompts processed one after another), else the time to first token
    first_term, term_name = (
        ttft,
        (
            _batch_name(int(s["requests"]))
            if together
            else "TTFT of its one request"
            if one
            else "median TTFT"
            if data.concurrency(run_id) == 1
            else "median TTFT of the first wave"
        ),
    )
    # the batch's prefill gave every request its first token: decode steps make the rest
    # (1 ÷ the rate is a TPOT, the time per token after the first)
    if no_decode:
        decode_s, decode_text = 0.0, "no decode step (each request's one token is the prefill's)"
    elif together:
        decode_s = steps / rate
        decode_text = (
            f"{fmt(steps, 0)} decode steps (one per output token: the prefill sampled none) "
            f"÷ median decode {fmt(rate, 2)}"
            if stated
            else f"(longest output {fmt(longest, 0)} − 1, its first token from the prefill) ÷ "
            f"median decode {fmt(rate, 2)}"
        )
    elif one:
        # a summary's rate is 1 ÷ its TPOT, the time per token after the first: the TTFT
        # brought the first token, the other tokens are decode steps
        decode_s = (longest - 1) / rate
        decode_text = (
            f"(output {fmt(longest, 0)} − 1, its first token at the TTFT) ÷ "
            f"decode {fmt(rate, 2)} (1 ÷ TPOT)"
        )
    else:
        decode_s = longest / rate
        decode_text = f"longest output {fmt(longest, 0)} ÷ median decode {fmt(rate, 2)}"
    # a prefill rate taken from this TTFT itself (one request's) gives it back up to
    # rounding: only a longer Σ prompt ÷ rate is another first term. A batch's TTFT is its
    # whole prefill, timed: a rate from another run (a lone request) does not replace it
    if not together and not math.isnan(prefill) and prefill > ttft * (1 + 1e-9):
        first_term, term_name = prefill, "Σ prompt ÷ prefill rate"
    schedule = _schedule(data, run_id)
    if schedule is not None:
        # open loop: the last request is sent when the schedule says, then takes one request's time
        waves, typical = 1, longest
        predicted = schedule[0] + first_term + decode_s
    else:
        # closed loop with more requests than slots: requests ÷ N waves, one after another
        n = data.concurrency(run_id)
        waves = math.ceil(int(s["requests"]) / n) if not math.isnan(n) and n >= 1 else 1
        # the last wave ends with the longest request; the waves before it take a typical one
        typical = float(s["out_mean"]) if waves > 1 else longest
        earlier = (waves - 1) * (first_term + typical / rate) if waves > 1 else 0.0
        predicted = earlier + first_term + decode_s
    total = float(s["output_tokens"])
    off = wall / predicted - 1
    numbers = {
        "waves": waves,
        "median_ttft_s": ttft,
        "median_decode_tps": rate,
        "longest_output": longest,
        "predicted_wall_s": predicted,
        "measured_wall_s": wall,
        "predicted_aggregate_tps": total / predicted,
        "measured_aggregate_tps": total / wall,
        "off": off,
    }
    arithmetic = [
        (
            "predicted wall = "
            + (f"{schedule[1]} + " if schedule is not None else "")
            + (
                f"{waves - 1} waves × ({fmt(first_term, 2)} + mean output {fmt(typical, 0)} ÷ "
                f"{fmt(rate, 2)}) + "
                if waves > 1
                else ""
            )
            + f"{term_name} {fmt(first_term, 2)} + {decode_text} = {fmt(predicted, 2)} s"
        ),
        f"predicted aggregate = {fmt(total, 0)} ÷ {fmt(predicted, 2)} = "
        f"{_rate(total / predicted)} tok/s; measured {fmt(total, 0)} ÷ {fmt(wall, 2)} = "
        f"{_rate(total / wall)} tok/s ({fmt(abs(off) * 100, 1)}% apart)",
    ]
    limit = data.config[WALL_TOLERANCE]
    failed = _failed_only(data, run_id)
    if abs(off) > limit and failed is not None and failed[0] > limit * wall:
        failed_s, count, low, high = failed
        what = _failure_kind(data, run_id)
        arithmetic.append(
            f"time with only failed requests in flight: {fmt(failed_s, 2)} s of {fmt(wall, 2)} s "
            f"({fmt(failed_s / wall * 100, 1)}%); {count} failed requests ({what}) lasted "
            f"{fmt(low, 2)}–{fmt(high, 2)} s each"
        )
        numbers["failed_only_s"] = failed_s
        return RULE.finding(
            run_id,
            Outcome.FIRED,
            f"the wall is mostly failed requests: {count} failed ({what}, "
            + (fmt(low, 1) if fmt(low, 1) == fmt(high, 1) else f"{fmt(low, 1)}–{fmt(high, 1)}")
            + f" s each) were the only requests in flight for {fmt(failed_s, 2)} s "
            f"of the {fmt(wall, 2)} s wall; the successful requests account for the other "
            f"{fmt(wall - failed_s, 2)} s",
            arithmetic=arithmetic,
            numbers=numbers,
            refs=run_ref(data, run_id),
            help="quote the aggregate over the successful requests' time and say how many "
            "failed, or remove the cause of the failures (BR019)",
        )
    if abs(off) > limit:
        where = "longer" if off > 0 else "shorter"
        basis = "the arrival schedule, TTFT and decode" if schedule is not None else "TTFT + decode"
        waiting = ""
        last_first = _last_first_token(data, run_id)
        if off > 0 and last_first > first_term:
            # where the time went: a request still had no first token this late, so it sat in
            # a queue or behind other prompts until then
            numbers["last_first_token_s"] = last_first
            arithmetic.append(
                f"the last first token came {fmt(last_first, 2)} s after the first send, "
                f"{percent(last_first / wall)} of the {fmt(wall, 2)} s wall"
            )
            waiting = (
                f"; a request was still waiting for its first token (queue or prefill) "
                f"{fmt(last_first, 2)} s into the wall ({percent(last_first / wall)} of it)"
            )
        return RULE.finding(
            run_id,
            Outcome.FIRED,
            f"measured wall {fmt(wall, 2)} s is {fmt(abs(off) * 100, 0)}% {where} than {basis} "
            f"predict ({fmt(predicted, 2)} s){waiting}",
            arithmetic=arithmetic,
            numbers=numbers,
            refs=run_ref(data, run_id),
            help="find the unexplained time: a queue (BR003/BR004), stragglers, errors "
            "(BR019) or the client (BR018)",
        )
    return RULE.finding(
        run_id,
        Outcome.PASSED,
        ("the arrival schedule, TTFT and decode" if schedule is not None else "TTFT + decode")
        + f" explain the wall: predicted {fmt(predicted, 2)} s, "
        f"measured {fmt(wall, 2)} s ({fmt(abs(off) * 100, 1)}% apart)",
        arithmetic=arithmetic,
        numbers=numbers,
    )


def _last_first_token(data: AuditData, run_id: str) -> float:
    """When the last request got its first token, after the first send (the run's facts)."""
    window = data.facts.runs[run_id].prefill_window
    return math.nan if window is None else window.last_first_s


def _rate(value: float) -> str:
    """Whole tok/s, except below 10 where that would print 0.52 as 1."""
    return fmt(value, 0 if value >= 10 else 2)


def _schedule(data: AuditData, run_id: str) -> tuple[float, str] | None:
    """An open-loop run's arrival schedule: how long after the first request the last one was
    sent (from the send times, else requests ÷ rate), and its wording. None for a closed loop."""
    rate = number(data.run_field(run_id, "request_rate"))
    if rate is None or not 0 < rate < math.inf:
        return None
    rows = data.requests_of(run_id)
    sends = rows["t_send"].dropna()
    count = int(data.figures(run_id)["requests"])
    if len(sends) == len(rows) and len(rows) > 1:
        span = float(sends.max() - sends.min())
        return span, (
            f"last send {fmt(span, 2)} s after the first ({count:,} requests at {rate:g} req/s)"
        )
    if count < 2:
        return None
    span = (count - 1) / rate
    return span, f"arrival schedule ({count:,} − 1) ÷ {rate:g} req/s {fmt(span, 2)}"


def _failed_only(data: AuditData, run_id: str) -> tuple[float, int, float, float] | None:
    """How long failed requests were the only ones in flight, with their count and the range
    of their durations; None without send and end times for every request."""
    ok = np.asarray(data.values_of(run_id, "ok"), dtype=bool)
    if ok.all():  # the usual case, decided without taking the frame
        return None
    rows = data.requests_of(run_id)
    bad = rows[~ok]
    if rows[["t_send", "t_end"]].isna().any().any():
        return None
    starts, ends = rows["t_send"].to_numpy(float), rows["t_end"].to_numpy(float)
    times = np.concatenate((starts, ends))
    order = np.argsort(times, kind="stable")
    ok_delta = np.concatenate((ok.astype(float), -ok.astype(float)))[order]
    bad_delta = np.concatenate(((~ok).astype(float), -(~ok).astype(float)))[order]
    spans = np.diff(times[order])
    ok_level, bad_level = np.cumsum(ok_delta)[:-1], np.cumsum(bad_delta)[:-1]
    failed_s = float(spans[(ok_level <= 0) & (bad_level > 0)].sum())
    durations = (bad["t_end"] - bad["t_send"]).to_numpy(float)
    return failed_s, len(bad), float(durations.min()), float(durations.max())


def _failure_kind(data: AuditData, run_id: str) -> str:
    """The most common error of the run's failed requests ("TimeoutError"), else their
    finish reason."""
    rows = data.tables.rows_of([run_id])
    bad = rows[~rows["ok"].astype(bool)]
    for column in ("error", "finish_reason"):
        values = bad[column].dropna().astype(str)
        values = values[values != ""]
        if len(values):
            text = str(values.mode().iloc[0])
            return text.split("(")[0].strip() or text
    return "no error recorded"


RULE = Rule(
    code="BR009",
    name="wall-unexplained",
    severity=Severity.WARNING,
    summary="TTFT + tokens ÷ per-request decode predicts a wall far from the measured one",
    check=check,
    doc=__doc__ or "",
)
