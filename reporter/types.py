"""Shared enums and aliases."""

from __future__ import annotations

import enum
import os
from typing import TypeAlias

PathLike: TypeAlias = str | os.PathLike[str]


class Severity(enum.IntEnum):
    """How much a fired finding matters; ordered so that max() gives the worst."""

    INFO = 1
    WARNING = 2
    ERROR = 3

    def __str__(self) -> str:
        return self.name.lower()


class Outcome(enum.StrEnum):
    """What a rule concluded about one subject (a run, a group, a claim)."""

    FIRED = "fired"
    PASSED = "passed"
    NOT_APPLICABLE = "not-applicable"
    UNDECIDABLE = "undecidable"


class VerdictKind(enum.StrEnum):
    """The verdict of a run, a claim, or the whole audit (worst last).

    `understated` (a claim well below what the trace measures) ranks just above `supported`:
    the figure is wrong, but it accuses nobody of inflating anything, so any doubt
    (insufficient data) or accusation outranks it in the headline.
    """

    SUPPORTED = "supported"
    UNDERSTATED = "understated"
    INSUFFICIENT_DATA = "insufficient-data"
    INCOMPARABLE = "incomparable"
    SERIAL = "serial"
    INFLATED = "inflated"

    @property
    def rank(self) -> int:
        return list(VerdictKind).index(self)


def worst(verdicts: list[VerdictKind]) -> VerdictKind:
    """The worst of several verdicts; supported when there are none."""
    return max(verdicts, key=lambda v: v.rank, default=VerdictKind.SUPPORTED)


#: How an input's note begins when it names data of the file that the audit did not read
#: (the CLI repeats such notes on stderr).
LEFT_OUT = "left out: "
