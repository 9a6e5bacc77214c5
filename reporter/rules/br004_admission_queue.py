"""Only k of the N requests were served at once; the rest waited in an admission queue.

## What it checks
Whether a run that sent N requests together decoded all N at once, or only k of them, the
others getting their first token only when a running request finished.

## Why it matters
An engine with k slots (or a `max_num_seqs` of k) admits k requests and queues the rest. The
queued requests' wait appears in no request's own decode rate: each reports full speed once
admitted, so a sum of per-request rates overstates the aggregate, and "N concurrent" is
really "k concurrent plus a queue".

## How it decides
From the decode intervals `[t_first, t_end]` of the successful requests, the number decoding
at each moment. `k` is the largest level held for at least `queue_held_share` (10%) of the
time anything decodes (brief overlaps at hand-over do not count). `N` is the stated
concurrency, else the level of requests in flight (`[t_send, t_end]`) held as long. The run
has an admission queue when `2 ≤ k < N` and some requests got their first token only after
another request had finished, within `handover_share` (10%) of a request's decode time of that
completion (they waited for its slot; first tokens staggered by long prompts do not line up),
and waited for it: their time to first token exceeds the admitted requests' median by more
than that same slack. A queue hands every freed slot to a waiting request, so at least half
of the first tokens that came after the first completion must follow one that way; a few
lining up among first tokens stepped by prompts read one after another are chance. A
first-token delay that every request had, the first one included
(sent with nothing in flight), is a constant delay of the server or the path to it, not a
queue: an open-loop run whose requests arrive after earlier ones finished shows it on every
request. `k = 1` is the serial case (BR003).

## Worked example
METHOD.md §1, case B: 16 concurrent prose requests on a server that admits 8 at a time. Eight
decode together from the start; the other eight start only as slots free up, with a median
time to first token of 4.72 s — a whole request's duration. The sum of self-reported rates,
840.1 tok/s, is 2.09× the honest 401.3 tok/s.

## When it cannot decide
Without send, first-token and end times for the requests it cannot see a queue. A run with
fewer than three requests cannot have `2 ≤ k < N`: not applicable.

## What to do
State the figure at the concurrency the server really serves (k), or raise its slot limit and
measure again. Never sum per-request rates (BR001).

## References
METHOD.md §1 (case B); seed 001 §5.
"""

from __future__ import annotations

import math

import numpy as np

from reporter.config import threshold
from reporter.medians import median
from reporter.numbers import all_of, counted, fmt
from reporter.rules.base import AuditData, Finding, Rule
from reporter.types import Outcome, Severity

QUEUE_HELD_SHARE = threshold(
    "queue_held_share",
    0.10,
    "a level of concurrency must last a tenth of the busy time to count; hand-overs between "
    "a finishing and a starting request last milliseconds",
    high=1.0,
)


HANDOVER_SHARE = threshold(
    "handover_share",
    0.10,
    "a queued request's first token follows a completion by its own prefill, a small part of "
    "a request's decode time; later than a tenth of it, something else delayed it",
    high=1.0,
)


def held_level(starts: np.ndarray, ends: np.ndarray, share: float, *, ordered: bool = False) -> int:
    """The largest number of intervals open at once for at least `share` of the busy time.

    `ordered`: the starts and the ends are each in ascending order already (NaN last)."""
    if len(starts) == 0:
        return 0
    if not ordered:
        # each sorted alone, then merged: a stable sort of two ordered stretches is a merge
        starts, ends = np.sort(starts, kind="stable"), np.sort(ends, kind="stable")
    return _held(*_merge(starts, ends), share)


def _merge(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The times of ordered starts and ends merged in order, and where each start is.

    Ends first, and a stable sort: at equal times a close comes before an open, so a
    hand-over is not an overlap."""
    times = np.concatenate((ends, starts))
    order = np.argsort(times, kind="stable")
    return times[order], order >= len(ends)


#: The bits of infinity read as an unsigned integer: those of a time that is finite and not
#: negative are fewer, those of NaN, infinity and any time with its sign set (-0.0 too) not.
_INFINITY_BITS = np.uint64(0x7FF0000000000000)


def _merge_unordered(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`_merge` of starts in any order and ordered ends (float64 each)."""
    start_bits, end_bits = starts.view(np.uint64), ends.view(np.uint64)
    if max(start_bits.max(initial=0), end_bits.max(initial=0)) >= _INFINITY_BITS:
        return _merge(np.sort(starts, kind="stable"), ends)
    # Finite times of zero or more order as their bits do, read as unsigned integers. One
    # more bit below them, 0 for an end and 1 for a start, puts the ends first at equal
    # times: one sort of those keys, without an argsort and its gather, is the merge (a
    # stable sort merges the ordered stretches; equal keys are equal times of one kind).
    n_ends = len(ends)
    keys = np.empty(n_ends + len(starts), dtype=np.uint64)
    np.left_shift(end_bits, 1, out=keys[:n_ends])
    np.left_shift(start_bits, 1, out=keys[n_ends:])
    keys[n_ends:] |= np.uint64(1)
    keys.sort(kind="stable")
    return (keys >> np.uint64(1)).view(np.float64), (keys & np.uint64(1)).astype(bool)


#: Below this many times a level fits in 32 bits, and a sum of the spans in a level's bin
#: (the sums in order, as `np.bincount` adds them) is within a millionth of the busy time
#: of the pairwise sum of the same spans.
_FEW_TIMES = 2**31


def _held(times: np.ndarray, is_start: np.ndarray, share: float) -> int:
    """`held_level` of the merged times (`_merge`) and where the starts are among them."""
    if not is_start.any():
        return 0
    # the level after each time but the last: +1 at a start, -1 at an end, a running sum of
    # small steps taken in whole numbers (as floats it is the same count, three times slower)
    steps = is_start[:-1].view(np.int8) * np.int8(2) - np.int8(1)
    level: np.ndarray = np.cumsum(steps, dtype=np.int32 if len(times) < _FEW_TIMES else np.int64)
    spans = np.diff(times)
    # `compress`, not a boolean index: the same values, four times faster where the mask
    # alternates (levels of a hand-over)
    busy = spans.compress(level > 0).sum()
    top = int(level.max(initial=0))
    if busy <= 0:
        return top
    need = share * busy
    # The answer is the highest level whose own sum reaches the threshold, and any such
    # level is among the candidates below (their sums differ from its own by rounding, for
    # fewer than _FEW_TIMES times far less than a millionth of the busy time). So the top
    # level, or the one below it, whose own sum reaches it is the answer, found without the
    # sums of every level; not for an infinite or NaN busy time, which leaves no candidate.
    tried = 0
    if len(times) < _FEW_TIMES and busy < math.inf:
        for k in range(top, max(top - 2, 0), -1):
            if (busy if k == 1 else spans.compress(level >= k).sum()) >= need:
                return k
            tried = k
    # the time held at each level at once (a sum per level), then at or above each level
    at_level = np.bincount(np.maximum(level, 0), weights=spans, minlength=top + 1)
    at_least = np.cumsum(at_level[::-1])[::-1]
    # The sums above differ from the levels' own sums by rounding only (far less than a
    # millionth of the busy time), so no level above the first within that of the
    # threshold can be it.
    candidates = np.flatnonzero(at_least[1:] >= need - 1e-6 * busy) + 1
    highest = int(candidates.max(initial=0))
    for k in range(min(highest, tried - 1) if tried else highest, 0, -1):
        if spans.compress(level >= k).sum() >= need:
            return k
    return 0


def _known_first(ordered: np.ndarray, count: int) -> bool:
    """Whether exactly the first `count` of ordered times (NaN last) are known: the count of
    those not NaN, read at the two places where the known ones must end."""
    if count > len(ordered):
        return False
    ends_here = count == len(ordered) or bool(np.isnan(ordered[count]))
    return ends_here and (count == 0 or not np.isnan(ordered[count - 1]))


def _after_a_release(first: np.ndarray, ends: np.ndarray, slack: float) -> np.ndarray:
    """True where a request's first token came right after another request ended (within
    `slack`); `ends` in ascending order.

    That is how a slot hands over; first tokens staggered by prefill (long prompts processed
    one after another) do not line up with completions and are not a queue.
    """
    ended = np.searchsorted(ends, first, side="right")  # the ends at or before each
    gap = np.where(ended > 0, first - ends[np.maximum(ended - 1, 0)], np.inf)
    return gap <= slack


def check(data: AuditData) -> list[Finding]:
    return [_check_run(data, str(run_id)) for run_id in data.stats.index]


def _check_run(data: AuditData, run_id: str) -> Finding:
    s = data.figures(run_id)
    if int(s["requests"]) < 3:
        return RULE.finding(
            run_id,
            Outcome.NOT_APPLICABLE,
            f"{counted(int(s['requests']), 'request')}: no queue of k < N to find",
        )
    if not (s.flag("has_send") and s.flag("has_first") and s.flag("has_end")):
        missing = [
            name
            for name, ok in (
                ("t_send", s.flag("has_send")),
                ("t_first", s.flag("has_first")),
                ("t_end", s.flag("has_end")),
            )
            if not ok
        ]
        return RULE.finding(
            run_id,
            Outcome.UNDECIDABLE,
            f"no {', '.join(missing)} for every request: cannot see who waited",
        )

    # the successful requests with a first token and an end, as arrays (no frame taken)
    def column(name: str) -> np.ndarray:
        return np.asarray(data.values_of(run_id, name), dtype="float64")

    first_all, end_all = column("t_first"), column("t_end")
    keep = (
        np.asarray(data.values_of(run_id, "ok"), dtype=bool)
        & ~np.isnan(first_all)
        & ~np.isnan(end_all)
    )
    # every request kept (the usual case): the columns themselves, not copies of them
    kept = slice(None) if keep.all() else np.flatnonzero(keep)
    first, end = first_all[kept], end_all[kept]
    send = column("t_send")[kept]
    ttft = column("ttft")[kept]
    decode_s = column("decode_s")[kept]
    share = data.config[QUEUE_HELD_SHARE]
    ends = data.sorted_ends(run_id)
    # the successful requests' ends sorted once for every reader, unless some lack a first
    # token and are left out here
    ends = ends[: len(first)] if _known_first(ends, len(first)) else np.sort(end, kind="stable")
    # the first tokens' times merged in order with the ends (the values alone: which
    # request had which is not needed to count how many decoded at once). Where a sort orders
    # 0.0 and -0.0 otherwise than the default sort did, the levels are the same and the sums
    # compared differ at most in the sign of a zero.
    k = _held(*_merge_unordered(first, ends), share)
    stated = data.concurrency(run_id)
    # not stated: the level of requests in flight held as long
    n = (
        held_level(np.sort(send, kind="stable"), ends, share, ordered=True)
        if np.isnan(stated)
        else int(stated)
    )
    n = min(n, len(first))
    first_done = float(end.min()) if len(end) else np.nan
    served = median(ttft[first < first_done])
    # the run's median decode time: of all its rows when none with a decode time is left
    # out here (a failed one, or one without its own first token or end)
    every = np.count_nonzero(~np.isnan(column("decode_s"))) == len(first)
    decode = data.median_of(run_id, "decode_s") if every else median(decode_s)
    slack = data.config[HANDOVER_SHARE] * decode
    late = first >= first_done
    # a queued request waited for its slot: its first token came later than an admitted
    # one's, right after another request finished (searched for among the later ones only)
    slower = np.flatnonzero(late & (ttft > served + slack))
    waited_at = slower[_after_a_release(first[slower], ends, slack)]
    waited_ttft = ttft[waited_at]
    numbers = {
        "k": k,
        "n": n,
        "queued": len(waited_at),
        "queued_median_ttft_s": median(waited_ttft) if len(waited_at) else None,
        "served_median_ttft_s": served,
        "median_decode_s": decode,
    }
    arithmetic = [
        f"decoding at once (held ≥ {share:.0%} of the busy time): k = {k}; "
        + (
            f"in flight at once (held as long): N = {n}"
            if np.isnan(stated)
            else f"sent together: N = {n}"
        ),
    ]
    if k <= 1:
        return RULE.finding(
            run_id,
            Outcome.NOT_APPLICABLE,
            "one request decoded at a time: the serial case, see BR003",
            numbers=numbers,
        )
    handed_over = (
        np.count_nonzero(_after_a_release(first[late], ends, slack))
        if k < n and not len(waited_at)
        else 0
    )
    if handed_over:
        arithmetic.append(
            f"{handed_over} requests got their first token right after another finished, "
            f"but none later than the admitted ones' median {fmt(served, 3)} s + "
            f"{fmt(slack, 3)} s (a tenth of one request's decode, {fmt(decode, 2)} s)"
        )
        return RULE.finding(
            run_id,
            Outcome.PASSED,
            _constant_delay_text(send, ttft, served, slack),
            numbers=numbers,
            arithmetic=arithmetic,
        )
    if k >= n or not len(waited_at):
        return RULE.finding(
            run_id,
            Outcome.PASSED,
            f"{all_of(n, 'request')} decoded together (k = {k})",
            numbers=numbers,
            arithmetic=arithmetic,
        )
    late_count = int(np.count_nonzero(late))
    if 2 * len(waited_at) < late_count:
        # a queue hands each freed slot to a waiting request: most first tokens after the
        # first completion follow one. A few that do, among many that do not (prompts read
        # one after another), line up by chance.
        return RULE.finding(
            run_id,
            Outcome.PASSED,
            f"no queue: of the {late_count} requests whose first token came after another "
            f"request finished, only {len(waited_at)} got it within {fmt(slack, 2)} s of a "
            "completion, as a freed slot would give it",
            numbers=numbers,
            arithmetic=arithmetic,
        )
    wait = median(waited_ttft)
    queued = len(waited_at)
    arithmetic.append(
        f"{counted(queued, 'request')} got their first token only after "
        f"another finished: median "
        f"time to first token {fmt(wait, 2)} s against {fmt(served, 2)} s "
        f"for the admitted ones; one request decodes in {fmt(decode, 2)} s"
    )
    others = f"the other {queued}" if queued == n - k else f"{queued} of the other {n - k}"
    return RULE.finding(
        run_id,
        Outcome.FIRED,
        f"only {k} of {n} requests were served at once; {others} waited a median "
        f"{fmt(wait, 2)} s for their first token",
        arithmetic=arithmetic,
        numbers=numbers,
        refs=data.refs_of(run_id, np.flatnonzero(keep)[waited_at[:8]]),
        help=f"quote the figure as {k} concurrent requests, or raise the server's slot / "
        "max-sequences limit and measure again; never sum per-request rates",
    )


def _constant_delay_text(send: np.ndarray, ttft: np.ndarray, served: float, slack: float) -> str:
    """Why first tokens after a completion are no queue: they came no later than the rest."""
    first_ttft = float(ttft[int(np.argmin(send))])
    low, high = float(np.nanmin(ttft)), float(np.nanmax(ttft))
    if high - low <= slack:
        return (
            f"no queue: every request, the first included (sent with nothing in flight, "
            f"{fmt(first_ttft, 3)} s), got its first token after "
            f"{fmt(low, 3)}–{fmt(high, 3)} s: a constant first-token delay, not waiting for a slot"
        )
    return (
        f"no queue: requests whose first token followed a completion waited no longer than the "
        f"admitted ones (median time to first token {fmt(served, 2)} s)"
    )


RULE = Rule(
    code="BR004",
    name="admission-queue",
    severity=Severity.WARNING,
    summary="only k of N requests served at once (first-token times jump by a request's duration)",
    check=check,
    doc=__doc__ or "",
)
