"""How much of the output a tool counted reached the client as text.

SGLang's bench_serving re-tokenizes the text each request got back
(`total_output_tokens_retokenized`) beside the count it divides by the wall clock
(`total_output_tokens`: the server's count, or in some clients the length asked for). The
round trip moves a count by a few percent; far less text than that means tokens the client
never received, or a count that was never the server's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from reporter.config import threshold
from reporter.numbers import fmt, pct
from reporter.values import finite

RECEIVED_SHARE = threshold(
    "received_share",
    0.5,
    "re-tokenizing received text moves a count by a few percent (real files keep 87% and "
    "more); less than half is text that never arrived, or a count of the length asked for",
    high=1.0,
)


@dataclass(frozen=True)
class Shortfall:
    """A run whose received text holds far fewer tokens than the count its aggregate uses."""

    received: float
    counted: float
    wall_s: float | None

    @property
    def share(self) -> float:
        return self.received / self.counted

    def _per_wall(self, tokens: float) -> str:
        wall = self.wall_s
        assert wall is not None and wall > 0
        return (
            f"{fmt(tokens, 0)} ÷ {fmt(wall, 4 if wall < 1 else 2)} s = {fmt(tokens / wall)} tok/s"
        )

    def message(self) -> str:
        """One sentence with the arithmetic: what was counted, what arrived."""
        head = (
            f"the client received text for {fmt(self.received, 0)} of the "
            f"{fmt(self.counted, 0)} output tokens counted (re-tokenized, {pct(self.share, 1)})"
        )
        if self.wall_s is None or not self.wall_s > 0:
            return head
        return (
            f"{head}: {self._per_wall(self.counted)} counts tokens no received text shows; "
            f"on the text received, {self._per_wall(self.received)}"
        )

    def numbers(self) -> dict[str, Any]:
        wall = self.wall_s if self.wall_s is not None and self.wall_s > 0 else None
        return {
            "received_tokens": self.received,
            "counted_tokens": self.counted,
            "received_share": self.share,
            "received_tps": self.received / wall if wall is not None else None,
        }


def shortfall(summary: Mapping[str, Any] | None, share: float) -> Shortfall | None:
    """The run's shortfall of received text, when its summary gives both counts and the
    received one is below `share` (the `received_share` threshold) of the counted one; else
    None."""
    if not summary:
        return None
    received = finite(summary.get("received_output_tokens"))
    counted = finite(summary.get("output_tokens"))
    if received is None or counted is None or counted <= 0:
        return None
    if received >= share * counted:
        return None
    wall = finite(summary.get("wall_s"))
    return Shortfall(received, counted, wall)
