"""What a rule is, what it returns, and the data it reads."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from reporter.auditdata import (
    AuditData,
    RunFigures,
    finish_reason_is,
    finish_reason_known,
    ref,
    request_refs,
    run_ref,
)
from reporter.decision import Decision
from reporter.findings import Finding, RuleDoc, clean
from reporter.types import Outcome, Severity

#: Named here for the rule modules, which import what they read from this one module.
__all__ = [
    "DOC_HEADINGS",
    "AuditData",
    "Check",
    "Finding",
    "Outcome",
    "Rule",
    "RunFigures",
    "Severity",
    "clean",
    "finish_reason_is",
    "finish_reason_known",
    "ref",
    "request_refs",
    "run_ref",
]

DOC_HEADINGS = (
    "What it checks",
    "Why it matters",
    "How it decides",
    "Worked example",
    "When it cannot decide",
    "What to do",
)


Check = Callable[[AuditData], Iterable[Finding]]


@dataclass(frozen=True)
class Rule:
    """A rule's metadata and its check; the module docstring is its documentation page."""

    code: str
    name: str
    severity: Severity
    summary: str
    check: Check
    doc: str
    status: str = "stable"
    since: str = "0.1.0"

    def page(self) -> RuleDoc:
        """What a report prints of this rule (the verdict carries it for the renderers)."""
        return RuleDoc(self.code, self.name, self.severity, self.summary, self.doc)

    def finding(
        self,
        subject: str,
        outcome: Outcome,
        message: str,
        *,
        severity: Severity | None = None,
        **kwargs: Any,
    ) -> Finding:
        return Finding(
            code=self.code,
            name=self.name,
            severity=severity or self.severity,
            outcome=outcome,
            subject=subject,
            message=message,
            **kwargs,
        )

    def printed(self, subject: str, decision: Decision) -> Finding:
        """One answer of the analysis layer (reporter.facts) as this rule's finding."""
        return self.finding(
            subject,
            decision.outcome,
            decision.message,
            severity=decision.severity,
            arithmetic=decision.arithmetic,
            numbers=decision.numbers,
            refs=decision.refs,
            help=decision.help,
        )
