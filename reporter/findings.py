"""Findings as plain records: what a rule concluded, read alike by rules, verdict and renderers.

The lowest layer of the audit's output: it imports nothing of the package but the shared
enums, so that a renderer can print findings without importing a rule or a table.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from reporter.types import Outcome, Severity

__all__ = ["Finding", "Outcome", "RuleDoc", "Severity", "clean"]


@dataclass
class Finding:
    """One rule's conclusion about one subject (a run, a group of runs, a claim, the audit)."""

    code: str
    name: str
    severity: Severity
    outcome: Outcome
    subject: str
    message: str
    #: The arithmetic behind the message, one step a line ("4 × 512 ÷ 22.5 s = 91.0 tok/s").
    arithmetic: list[str] = field(default_factory=list)
    #: What to do about it (imperative), for fired findings.
    help: str = ""
    numbers: dict[str, Any] = field(default_factory=dict)
    refs: list[str] = field(default_factory=list)
    #: Evidence rows: plain dicts with the same keys in every row.
    evidence: list[dict[str, Any]] = field(default_factory=list)

    @property
    def fired(self) -> bool:
        return self.outcome is Outcome.FIRED

    def sort_key(self) -> tuple[Any, ...]:
        fired_first = 0 if self.fired else 1
        return (fired_first, -int(self.severity) if self.fired else 0, self.code, self.subject)


@dataclass(frozen=True)
class RuleDoc:
    """What a report prints of a rule: its name, its severity and its documentation page."""

    code: str
    name: str
    severity: Severity
    summary: str
    #: The page (the rule module's docstring), Markdown-like: headings, lists, `code`.
    doc: str


def clean(numbers: dict[str, Any]) -> dict[str, Any]:
    """JSON-ready numbers: NaN becomes None, numpy scalars become Python ones."""
    out: dict[str, Any] = {}
    for key, value in numbers.items():
        if isinstance(value, np.generic):
            value = value.item()
        if isinstance(value, float) and not math.isfinite(value):
            value = None
        out[key] = value
    return out
