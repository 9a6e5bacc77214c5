"""The aggregate does not grow with the number of concurrent requests.

## What it checks
Across a sweep (runs of one group that differ only in concurrency or repeat), whether the
honest aggregate `total output tokens ÷ wall clock` rises from the lowest N to the highest.

## Why it matters
A flat aggregate is the signature of serial service: one request at a time, whatever N is.
Real batching reads the weights once for several requests and rises at least from N=1 to
N=4; how much depends on the model and the KV cache, but it is not flat.

## How it decides
Per concurrency level the median aggregate over repeats, `A(N)`. The growth is
`A(N_max) ÷ A(N_min)`, and needs `N_max ≥ 2 × N_min`. A run that sent fewer requests than its
N never had N in flight: it stands at its request count (a closed loop of 4 with one request
is a point at 1, not a flat point at 4). The sweep is flat when the growth is
below `flat_growth` (1.2): single runs differ by ~5% and serial runs lose ~2% per step
(METHOD §2, §7), while even weak batching of two requests gains well over 20%.

Closed-loop sweeps only: when the runs themselves prove their requests overlapped (BR003's
answer, or its bound from a summary), a flat aggregate is saturation, reported as such
(informational), not serial service. An open-loop sweep over request rates is never judged
serial: the aggregate follows the offered load until the server saturates, and past that
point the requests in flight grow (by `flat_growth` or more from one rate to the next) while
the aggregate stays flat (grows less than `flat_growth`) or falls behind the offered load
(request rate × mean output tokens; its share served falls by more than `flat_growth`, as
87% → 52% when the rate doubles). The queue it builds is shown as in flight against
decoding at once. When the runs also limited the requests in flight (vLLM's
`--max-concurrency` beside `--request-rate`) and the requests in flight reach that limit
(within `flat_growth` of it), the queue is the client's: the other requests waited in the
client, the server never saw the offered rate, and the sweep is reported as held back by
the client's limit, not as the server's capacity.

## Worked example
METHOD.md §3, case A, three engine versions at C = 1/2/4/8: old default 90.3 / 89.5 / 89.6 /
88.5 tok/s (growth 0.98), new default 87.5 / 89.3 / 88.7 / 88.3 (1.01), new with continuous
batching 8: 86.7 / 87.2 / 86.8 / 86.3 (1.00). All flat: serial in every version, and the
batching flag made it 2% slower.

## When it cannot decide
A group with one concurrency level is not a sweep (not applicable). A sweep whose runs have
no wall clock, or whose levels do not span a factor of two, cannot be decided.

## What to do
Treat the server as serial until a sweep rises. Look for a refused batching flag (BR013) and
for the ladder in each run (BR003).

## References
METHOD.md §3 "Slope with N"; seed 000 §3.
"""

from __future__ import annotations

from reporter.rules.base import AuditData, Finding, Rule
from reporter.slope import FLAT_GROWTH, levels
from reporter.types import Severity

__all__ = ["FLAT_GROWTH", "levels"]


def check(data: AuditData) -> list[Finding]:
    """Each group's slope (reporter.facts), printed."""
    return [RULE.printed(name, group.slope) for name, group in data.facts.groups.items()]


RULE = Rule(
    code="BR005",
    name="flat-throughput-in-concurrency",
    severity=Severity.ERROR,
    summary="aggregate does not grow from N=1 upward",
    check=check,
    doc=__doc__ or "",
)
