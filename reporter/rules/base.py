"""What a rule is, what it returns, and the data it reads."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from reporter.config import Config

if TYPE_CHECKING:
    from reporter.facts import Decision, Facts
from reporter.table import Tables
from reporter.types import Outcome, Severity, number, number_or_nan

DOC_HEADINGS = (
    "What it checks",
    "Why it matters",
    "How it decides",
    "Worked example",
    "When it cannot decide",
    "What to do",
)


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


@dataclass
class AuditData:
    """Everything a rule may read: the tables, the per-run figures, the thresholds."""

    tables: Tables
    stats: pd.DataFrame
    config: Config = field(default_factory=Config)
    #: The claims, recomputed (reporter.claims.ClaimCheck), for the rules about claims.
    claim_checks: list[Any] = field(default_factory=list)

    #: Columns a rule never reads per run: leaving them out makes taking a run's rows cheap.
    _HEAVY = ("id", "error", "token_times")

    @cached_property
    def _by_run(self) -> tuple[pd.DataFrame, dict[str, slice]]:
        """The request rows grouped by run (file order within a run), and each run's slice.

        Taking a run's rows is then a view, not a copy: rules read them many times.
        """
        req = self.tables.requests
        slim = req.drop(columns=[c for c in self._HEAVY if c in req.columns])
        if not len(slim):
            return slim, {}
        codes = slim["run"].cat.codes.to_numpy()
        if len(codes) > 1 and (np.diff(codes) < 0).any():
            order = np.argsort(codes, kind="stable")
            slim, codes = slim.take(order), codes[order]
        bounds = np.flatnonzero(np.diff(codes)) + 1
        starts = np.concatenate(([0], bounds))
        stops = np.concatenate((bounds, [len(codes)]))
        names = slim["run"].cat.categories
        return slim, {
            str(names[codes[a]]): slice(int(a), int(b)) for a, b in zip(starts, stops, strict=True)
        }

    def requests_of(self, run: str) -> pd.DataFrame:
        """The request rows of one run, in file order (without ids, errors, chunk times)."""
        slim, slices = self._by_run
        return slim.iloc[slices.get(run, slice(0, 0))]

    def figures(self, run_id: str) -> RunFigures:
        """One run's recomputed figures (reporter.metrics), read as plain numbers."""
        return RunFigures(self._stats_rows[run_id])

    @cached_property
    def _stats_rows(self) -> dict[str, dict[str, Any]]:
        """Each run's row of `stats` as a dict, taken once: rules read figures per run many
        times, and a pandas row lookup costs more than the rule's own arithmetic."""
        assert self.stats.index.is_unique, "one row of figures per run"
        return {
            str(k): {str(c): x for c, x in v.items()}
            for k, v in self.stats.to_dict("index").items()
        }

    def run_field(self, run_id: str, name: str) -> Any:
        """One field of a run's record, as flattened in the run table (None when unset)."""
        value = self.runs.at[run_id, name]
        if isinstance(value, float) and value != value:
            return None
        return value

    @cached_property
    def runs(self) -> pd.DataFrame:
        """The run table indexed by run id."""
        return self.tables.runs.set_index("run", drop=False)

    def run(self, run_id: str) -> pd.Series:
        """One run's record, flattened (reporter.table.RUN_COLUMNS)."""
        return self._run_rows[run_id]

    @cached_property
    def _run_rows(self) -> dict[str, pd.Series]:
        """Each run's record as a Series, taken once (rules ask for it per finding)."""
        assert self.runs.index.is_unique, "one record per run id"
        return {str(k): row for k, row in self.runs.iterrows()}

    def groups(self) -> dict[str, list[str]]:
        """Group name → run ids in it, ordered by concurrency then repeat."""
        out: dict[str, list[str]] = {}
        ordered = self.tables.runs.sort_values(["concurrency", "repeat"], na_position="first")
        for _, row in ordered.iterrows():
            out.setdefault(str(row["group"]), []).append(str(row["run"]))
        return out

    @cached_property
    def facts(self) -> Facts:
        """What is known of each run and each sweep, computed once (reporter.facts)."""
        from reporter.facts import compute

        return compute(self)

    def group_reason(self, group: str) -> str:
        """Why the runs of a group were put together (the fields they share)."""
        return self.tables.group_reasons.get(group, "")

    def concurrency(self, run_id: str) -> float:
        """The run's concurrency as written (NaN when not stated)."""
        return number_or_nan(self.runs.at[run_id, "concurrency"])


class RunFigures:
    """One run's row of `AuditData.stats`, read as floats (NaN when unknown)."""

    def __init__(self, row: pd.Series | dict[str, Any]) -> None:
        self._row = row

    def __getitem__(self, name: str) -> float:
        return number_or_nan(self._row[name])

    def flag(self, name: str) -> bool:
        return bool(self._row[name])

    def text(self, name: str) -> str | None:
        value = self._row[name]
        return None if value is None or number(value) is not None or value != value else str(value)


def ref(row: pd.Series | dict[str, Any]) -> str:
    line = row["source_line"]
    if line is None or (isinstance(line, float) and math.isnan(line)):
        return str(row["source_path"])
    return f"{row['source_path']}:{int(line)}"


def request_refs(rows: pd.DataFrame, limit: int = 8) -> list[str]:
    """path:line of the first rows, for a finding's evidence pointers."""
    head = rows.iloc[:limit]
    paths = head["source_path"].astype(str).to_numpy()
    lines = head["source_line"].to_numpy()
    return [f"{p}:{int(n)}" for p, n in zip(paths, lines, strict=True)]


def run_ref(data: AuditData, run_id: str) -> list[str]:
    row = data.run(run_id)
    return [ref(row)] if row["source_path"] else []


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
