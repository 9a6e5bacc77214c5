"""The answers of the analysis layer as plain records: a decision, a run's facts, a sweep's.

Below reporter.facts (which computes them) and reporter.ladder / reporter.slope (which answer
one question each), so that each of those can name the others' answers without importing them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from reporter.config import threshold
from reporter.types import Outcome, Severity

SERIAL_OVERLAP = threshold(
    "serial_overlap",
    1.15,
    "a strictly serial server gives 1.0; a few ms of hand-over between requests and clock "
    "jitter add a little, real batching of even two requests gives close to 2",
)
#: An approximate Σ decode time (unequal lengths, mean TPOT) decides only when it is this far
#: above serial: it can be off by the covariance of length and per-token time, never by 2×.
APPROXIMATE_MARGIN = 2.0

#: The load axes a run can sit on.
CONCURRENCY = "concurrency"
RATE = "rate"
UNKNOWN = "unknown"


@dataclass
class Decision:
    """An answer to one question about a run or a sweep, with the numbers behind it."""

    outcome: Outcome
    message: str
    arithmetic: list[str] = field(default_factory=list)
    numbers: dict[str, Any] = field(default_factory=dict)
    refs: list[str] = field(default_factory=list)
    help: str = ""
    #: What the answer says about serial service: True serial, False overlapping, None neither.
    serial: bool | None = None
    #: A severity other than the rule's own (a flat rate sweep is saturation, informational).
    severity: Severity | None = None


@dataclass
class DecodeBound:
    """How many requests decoded at once, from Σ decode time ÷ wall (time-averaged).

    The time average of the number decoding is Σ decode time ÷ wall; the peak is at least
    that (pigeonhole). Exact when the Σ comes from per-request times or exact summaries;
    approximate (`exact` False) when it is rebuilt from mean output × mean TPOT.
    """

    value: float
    exact: bool
    how: str
    arithmetic: list[str]

    @property
    def at_least(self) -> int:
        """Requests decoding together at some moment: the average, rounded up."""
        return max(1, math.ceil(self.value - 1e-9))


@dataclass
class InFlight:
    """Requests in flight, Little's law: Σ end-to-end latency ÷ wall."""

    value: float
    exact: bool
    how: str


@dataclass
class PrefillWindow:
    """An upper bound on the wall time in which any prompt was being processed.

    A server reads a prompt after the request is sent and before its first token, so every
    prompt's processing lies inside its request's [send, first token] window: the union of the
    windows (from per-request times), or their sum, Σ TTFT (from a summary), bounds the time
    prefill took out of the wall, however the server batched it. The same window holds any
    queueing, so a large share is prefill or queue, never decided between them by this bound.
    """

    seconds: float
    share: float
    #: How the bound was computed, with its numbers.
    how: str
    #: When the last request got its first token, seconds after the first send (NaN without
    #: per-request times).
    last_first_s: float = math.nan


@dataclass
class RunFacts:
    run: str
    group: str
    #: CONCURRENCY (closed loop at N), RATE (open loop at a request rate) or UNKNOWN.
    axis: str
    concurrency: float
    #: Requests per second (inf: every request sent at once); NaN when not stated.
    rate: float
    ladder: Decision
    decode: DecodeBound | None
    #: One stream's decode rate (1 ÷ mean TPOT, as the tool defines TPOT) and the aggregate
    #: as a multiple of it.
    stream_tps: float
    stream_multiple: float
    in_flight: InFlight | None
    ttft_share: float
    prefill_window: PrefillWindow | None = None
    #: True: served one at a time; False: requests overlapped; None: the file cannot tell.
    serial: bool | None = None
    #: Why, in one sentence that answers the question.
    why: str = ""
    #: What makes the run serial, each prefixed with the code of the question it answers.
    reasons: list[str] = field(default_factory=list)
    #: For an undecided run: the field that would decide it.
    missing: str = ""
    #: Did the requests overlap: the ladder from timestamps, else a bound from the summary
    #: (what BR003 prints).
    overlap: Decision = field(default_factory=lambda: Decision(Outcome.UNDECIDABLE, ""))


@dataclass
class GroupFacts:
    group: str
    runs: list[str]
    axis: str
    slope: Decision
    #: Why these runs form one group (the fields they share).
    why: str = ""


@dataclass
class Facts:
    runs: dict[str, RunFacts]
    groups: dict[str, GroupFacts]

    def serial(self, run_id: str) -> bool | None:
        facts = self.runs.get(run_id)
        return None if facts is None else facts.serial


def proves_overlap(f: RunFacts) -> bool:
    """The run's own evidence shows requests overlapping (timestamps or a decode bound)."""
    return f.overlap.serial is False
