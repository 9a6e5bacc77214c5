"""Requests failed, were aborted or came back empty, and the aggregate may count them.

## What it checks
Requests with an error, an abort, no tokens although "successful", or a stream cut short (no
finish reason and fewer tokens than asked for), and whether a tool's aggregate counted them.
Also output the client never received as text: a tool that re-tokenizes what came back
(SGLang's `total_output_tokens_retokenized`) and found far fewer tokens than it counted.

## Why it matters
A request that fails fast frees its slot and shortens the wall clock; one that is cut short
(llama-cpp-python's default interrupts the running stream when a new request arrives) returns
HTTP 200 with one token. An aggregate that assumes N × requested tokens, or counts the failed
requests' tokens, reports throughput that was never delivered.

## How it decides
Per run: failed = `finish_reason` error or abort, or an `error` field; empty = successful with
0 output tokens; cut = no finish reason and fewer tokens than requested, when the length was
forced or the file records finish reasons for other requests (a tool that writes none, such as
LLMPerf, cannot tell a short natural answer from a cut stream). Any of them fires:
errors at `error` severity when they exceed `failed_share` (10%) of the requests, else
`warning`. benchreport's own aggregate counts only the tokens of successful requests; the
finding says how many tokens that leaves out. For summary-only files, the tool's failed count,
at the same severities.

Received text: where the run's summary gives the tokens the client re-tokenized from the text
it received (`received_output_tokens`) beside the count the aggregate divides by, a received
count below `received_share` (50%) of it fires at `error`: re-tokenizing moves a count by a
few percent, never by half. The finding gives the aggregate on the text received, and the
run's verdict becomes insufficient data, since the count it rests on is not borne out.

Requests the client ended on purpose are named by their cause and are not failures of the
server: `finish_reason` `cancelled` (AIPerf `--request-cancellation-rate`, `was_cancelled`) is
"cancelled by the client", `time_limit` (GuideLLM's incomplete requests when the benchmark's
duration ran out) is "cut by the time limit". They are reported at `info` whatever form of the
file is read (per-request records, or a summary's `cancelled` / `time_limited` counts); their
tokens stay outside the aggregate. Timeouts and server errors stay failures. So is `too_short`
(LLMPerf's error -100, "Output too few tokens"): an answer that finished with tokens and that
the client flagged as shorter than asked for, not a server failure; a summary counts them as
`too_short`.

## Worked example
The LambdaLabs vLLM file (FORMATS.md §11b): three "successful" requests with 0 output tokens
of 10. llama-cpp-python with its default settings at N=4: three of four streams got 1 token,
so "275 tok/s" nominal was 70 tok/s received. A fork of SGLang's LoRA benchmark client
(which counts the length it asked for and sends no `ignore_eos`) wrote one request as 285
output tokens in 0.0984 s, 2,894.9 tok/s, while the text it got back re-tokenized to 3
tokens: 3 ÷ 0.0984 s = 30.5 tok/s on what arrived.

## When it cannot decide
Without output token counts or finish reasons, a cut stream cannot be told from a short
answer; errors are still counted.

## What to do
Fix the errors and rerun; never divide requested tokens by the wall clock; quote the failure
rate beside any figure.

## References
The llama.cpp server recipe's pitfalls; FORMATS.md §11.
"""

from __future__ import annotations

import math

import numpy as np

from reporter.config import threshold
from reporter.numbers import all_of, fmt
from reporter.received import RECEIVED_SHARE, shortfall
from reporter.rules.base import (
    AuditData,
    Finding,
    Rule,
    request_refs,
    run_ref,
)
from reporter.types import Outcome, Severity
from reporter.values import number

FAILED_SHARE = threshold(
    "failed_share",
    0.10,
    "a tenth of the requests failing changes the wall clock and the token count enough to "
    "move the aggregate beyond run-to-run noise",
    high=1.0,
)


def check(data: AuditData) -> list[Finding]:
    return [_check_run(data, str(r)) for r in data.stats.index]


#: finish_reason of a request the client ended on purpose → how the finding names it.
DELIBERATE = {
    "cancelled": "cancelled by the client",
    "time_limit": "cut by the time limit",
    "too_short": "finished but flagged too short by the client",
}
#: The same causes as counted in a tool's summary (run summary keys).
SUMMARY_CAUSES = {
    "cancelled": "cancelled by the client",
    "time_limited": "cut by the time limit",
    "too_short": "finished but flagged too short by the client",
}


def _not_server(counts: dict[str, int]) -> str:
    """The parenthesis after the causes: requests ended on purpose, or (LLMPerf's too-short
    flag) answers that finished and that the client left out."""
    flagged = counts.get(DELIBERATE["too_short"], 0)
    if flagged and flagged == sum(counts.values()):
        return " (finished answers the client left out, not server failures)"
    if flagged:
        return " (the client's doing, not server failures)"
    return " (ended by the client on purpose, not server failures)"


def _deliberate_parts(counts: dict[str, int]) -> list[str]:
    return [f"{n} {name}" for name, n in counts.items() if n]


def _check_summary(data: AuditData, run_id: str) -> Finding:
    s = data.figures(run_id)
    if not (s.flag("from_summary") and not math.isnan(s["failed"])):
        return RULE.finding(run_id, Outcome.UNDECIDABLE, "no per-request rows and no failure count")
    counted = int(s["failed"])
    if not counted:
        return RULE.finding(run_id, Outcome.PASSED, "the tool counted no failed request")
    summary = data.summary(run_id)
    causes = {name: int(number(summary.get(key)) or 0) for key, name in SUMMARY_CAUSES.items()}
    deliberate = min(sum(causes.values()), counted)
    real = counted - deliberate
    n = int(s["requests"])
    numbers = {"failed": real, **{k: causes[v] for k, v in SUMMARY_CAUSES.items() if causes[v]}}
    if not deliberate:
        severity = Severity.ERROR if real > data.config[FAILED_SHARE] * n else Severity.WARNING
        return RULE.finding(
            run_id,
            Outcome.FIRED,
            # as the file gives it: a failed count, or (vLLM versions that wrote none) the
            # prompts sent less those completed, which the run's derived list shows
            f"{counted} of {n} requests failed or did not complete",
            severity=severity,
            numbers=numbers,
            refs=run_ref(data, run_id),
            help="fix the errors and rerun; quote the failure rate",
        )
    parts = _deliberate_parts(causes)
    if real:
        parts.insert(0, f"{real} failed")
        severity = Severity.ERROR if real > data.config[FAILED_SHARE] * n else Severity.WARNING
    else:
        severity = Severity.INFO
    return RULE.finding(
        run_id,
        Outcome.FIRED,
        f"of {n} requests the tool counted {'; '.join(parts)}"
        + ("" if real else _not_server(causes)),
        severity=severity,
        numbers=numbers,
        refs=run_ref(data, run_id),
        help="fix the errors and rerun; quote the failure rate"
        if real
        else "quote the completed requests only; their tokens are all the aggregate counts",
    )


def _all_well(data: AuditData, run_id: str, requested: float | None) -> bool:
    """Every request ended well with output and none may have been cut: nothing to report.

    Checked on the columns as arrays; the detailed path filters the frame several times,
    which dominated audits of thousands of runs where nearly every run passes.
    """
    if not np.asarray(data.values_of(run_id, "ok"), dtype=bool).all():
        return False
    out = np.asarray(data.values_of(run_id, "output_tokens"), dtype="float64")
    if (out == 0).any():
        return False
    if requested is not None:
        no_reason = ~data.finish_reason_known(run_id)
        if (no_reason & (out < requested) & (out > 0)).any():
            return False
    return True


def _check_run(data: AuditData, run_id: str) -> Finding:
    finding = _check_requests(data, run_id)
    gap = shortfall(data.summary(run_id), data.config[RECEIVED_SHARE])
    if gap is None:
        return finding
    # the received text outweighs a failure count: it says the aggregate's tokens never came
    failures = f"; {finding.message}" if finding.fired else ""
    return RULE.finding(
        run_id,
        Outcome.FIRED,
        gap.message() + failures,
        severity=Severity.ERROR,
        numbers={**(finding.numbers if finding.fired else {}), **gap.numbers()},
        refs=run_ref(data, run_id),
        help="count the tokens the client received (the server's usage with the text it "
        "streamed); never divide requested tokens by the wall clock",
    )


def _check_requests(data: AuditData, run_id: str) -> Finding:
    # the rows' count from a column: most runs pass without their frame being taken
    n = len(data.values_of(run_id, "ok"))
    if not n:
        return _check_summary(data, run_id)
    requested = data.run_field(run_id, "output_tokens_requested")
    if _all_well(data, run_id, number(requested)):
        numbers = {"requests": n, "failed": 0, "empty": 0, "cut": 0,
                   "failed_tokens_not_counted": 0.0}  # fmt: skip
        return RULE.finding(
            run_id, Outcome.PASSED, f"{all_of(n, 'request')} succeeded with output", numbers=numbers
        )
    rows = data.requests_of(run_id)
    ended = rows[~rows["ok"]]
    reasons = ended["finish_reason"].astype(object)
    on_purpose = reasons.isin(list(DELIBERATE))
    failed = ended[~on_purpose.to_numpy(dtype=bool)]
    causes = {name: int((reasons == reason).sum()) for reason, name in DELIBERATE.items()}
    ok = rows[rows["ok"]]
    empty = ok[ok["output_tokens"] == 0]
    cut = ok.iloc[0:0]
    requested = number(requested)
    # a missing finish reason tells of a cut stream only when the length was forced or the
    # tool writes finish reasons; otherwise (LLMPerf, vLLM lists) a short answer is natural
    telling = data.run_field(run_id, "stop") == "forced" or ok["finish_reason"].notna().any()
    if requested is not None and telling:
        cut = ok[
            ok["finish_reason"].isna()
            & (ok["output_tokens"] < requested)
            & (ok["output_tokens"] > 0)
        ]
    n = len(rows)
    bad = len(failed) + len(empty) + len(cut)
    lost = float(ended["output_tokens"].fillna(0).sum()) if len(ended) else 0.0
    numbers = {
        "requests": n,
        "failed": len(failed),
        "empty": len(empty),
        "cut": len(cut),
        "failed_tokens_not_counted": lost,
        **{k: causes[v] for k, v in SUMMARY_CAUSES.items() if causes[v]},
    }
    if bad == 0 and not len(ended):
        return RULE.finding(
            run_id, Outcome.PASSED, f"{all_of(n, 'request')} succeeded with output", numbers=numbers
        )
    parts = _deliberate_parts(causes)
    if len(failed):
        kinds = failed["finish_reason"].astype(object).fillna("error").value_counts()
        parts.insert(0, f"{len(failed)} failed ({', '.join(f'{v} {k}' for k, v in kinds.items())})")
    if len(empty):
        parts.append(f"{len(empty)} 'successful' with 0 tokens")
    if len(cut):
        parts.append(
            f"{len(cut)} cut short with no finish reason (shortest "
            f"{fmt(float(cut['output_tokens'].min()), 0)} of {fmt(requested or 0, 0)} "
            "tokens)"
        )
    # LLMPerf's too-short answers finished: "unfinished" only where none of them is among
    # the requests left out, "flagged" where they all are
    flagged = causes.get(DELIBERATE["too_short"], 0)
    if not sum(causes.values()):
        which = "failed requests"
    elif not flagged:
        which = "unfinished requests"
    elif flagged == len(ended):
        which = "flagged requests"
    else:
        which = "the requests"
    counting = "the aggregate counts only successful requests' tokens" + (
        f" ({fmt(lost, 0)} tokens of {which} left out)" if lost else ""
    )
    if bad:
        severity = Severity.ERROR if bad > data.config[FAILED_SHARE] * n else Severity.WARNING
    else:  # only requests the client ended on purpose
        severity = Severity.INFO
    evidence = failed if len(failed) else (empty if len(empty) else (cut if len(cut) else ended))
    if sum(causes.values()):
        message = f"of {n} requests: {'; '.join(parts)}" + ("" if bad else _not_server(causes))
    else:
        message = f"{'; '.join(parts)} of {n} requests"
    return RULE.finding(
        run_id,
        Outcome.FIRED,
        f"{message}; {counting}",
        severity=severity,
        numbers=numbers,
        refs=request_refs(evidence),
        help="fix the failures and rerun; never divide requested tokens by the wall clock"
        if bad
        else "quote the completed requests only; their tokens are all the aggregate counts",
    )


RULE = Rule(
    code="BR019",
    name="failed-requests",
    severity=Severity.WARNING,
    summary="errors or aborted requests present, and whether the aggregate counts them",
    check=check,
    doc=__doc__ or "",
)
