"""The rules' pages and the thresholds they decide by, read from the source without running it.

`benchreport rules`, `rules --thresholds` and `explain` print what a rule is, not what it
finds, so they read each `brNNN_*.py` module's docstring and its `RULE = Rule(...)` literal,
and every `NAME = threshold(...)` declaration, with `ast`: importing the rules would import
pandas and pyarrow, seconds before the first line. tests/unit/test_rulebook.py checks that
this reading equals the imported registry and `reporter.config.THRESHOLDS`, field by field.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from reporter.errors import UsageError
from reporter.types import Severity

PACKAGE = Path(__file__).resolve().parent
#: Renamed codes: old → new (never reuse a code).
REDIRECTS: dict[str, str] = {}
#: Retired codes and the version that retired them.
REMOVED: dict[str, str] = {}

_RULE_FILE = re.compile(r"^br\d{3}_\w+\.py$")


@dataclass(frozen=True)
class RulePage:
    """What `rules` lists and `explain` prints of one rule."""

    code: str
    name: str
    severity: Severity
    summary: str
    doc: str
    status: str
    since: str
    #: The thresholds the rule decides by (names, in declaration order).
    thresholds: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code, "name": self.name, "severity": str(self.severity),
            "status": self.status, "since": self.since, "summary": self.summary,
            "thresholds": list(self.thresholds), "doc": self.doc.strip(),
        }  # fmt: skip


@dataclass(frozen=True)
class ThresholdEntry:
    """A threshold as declared (`reporter.config.threshold`), and the rules that use it."""

    name: str
    default: float
    reason: str
    low: float
    high: float
    #: The module declaring it (`reporter.ladder`), for thresholds no rule module names.
    module: str
    rules: tuple[str, ...]

    def range_text(self) -> str:
        text = f"> {self.low:g}"
        return text if math.isinf(self.high) else f"{text}, ≤ {self.high:g}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name, "default": self.default, "low": self.low,
            "high": None if math.isinf(self.high) else self.high, "reason": self.reason,
            "rules": list(self.rules), "module": self.module,
        }  # fmt: skip


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _calls(text: str, func: str) -> Iterator[tuple[str, ast.Call]]:
    """Every `NAME = func(...)` at the start of a line: (NAME, the call).

    Only the statement is parsed (lines are added until it parses), not the module: parsing
    every rule module whole costs a tenth of a second.
    """
    lines = text.splitlines()
    for match in re.finditer(rf"^(\w+) = {func}\(", text, re.MULTILINE):
        first = text.count("\n", 0, match.start())
        for last in range(first + 1, len(lines) + 1):
            try:
                node = ast.parse("\n".join(lines[first:last])).body[0]
            except SyntaxError:
                continue
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                yield match.group(1), node.value
            break


def _docstring(text: str) -> tuple[str, str]:
    """A module's docstring, and the code after it."""
    match = re.match(r'\s*("""|\'\'\')(.*?)\1', text, re.DOTALL)
    if match is None:
        return "", text
    return str(ast.literal_eval(match.group(0).strip())), text[match.end() :]


@cache
def _declared() -> dict[str, tuple[str, ThresholdEntry]]:
    """Variable name → (module, threshold) for every `NAME = threshold(...)` in the package."""
    out: dict[str, tuple[str, ThresholdEntry]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if " = threshold(" not in text:
            continue
        module = _module_name(path)
        for var, call in _calls(text, "threshold"):
            args = [ast.literal_eval(a) for a in call.args]
            kw = {k.arg: ast.literal_eval(k.value) for k in call.keywords if k.arg}
            name, default, reason = args[0], args[1], args[2]
            entry = ThresholdEntry(
                name, float(default), reason, float(kw.get("low", 0.0)),
                float(kw.get("high", math.inf)), module, (),
            )  # fmt: skip
            out[var] = (module, entry)
    return out


@cache
def pages() -> dict[str, RulePage]:
    """Code → page of every rule, in code order."""
    declared = _declared()
    out: dict[str, RulePage] = {}
    for path in sorted((PACKAGE / "rules").iterdir()):
        if not _RULE_FILE.match(path.name):
            continue
        text = path.read_text(encoding="utf-8")
        rule = next(call for var, call in _calls(text, "Rule") if var == "RULE")
        fields: dict[str, Any] = {"status": "stable", "since": "0.1.0"}
        for kw in rule.keywords:
            if kw.arg == "severity" and isinstance(kw.value, ast.Attribute):
                fields["severity"] = Severity[kw.value.attr]
            elif kw.arg in ("code", "name", "summary", "status", "since"):
                fields[kw.arg] = ast.literal_eval(kw.value)
        doc, code = _docstring(text)
        mentioned = set(re.findall(r"\b[A-Za-z_]\w*\b", code))
        used = tuple(entry.name for var, (_, entry) in declared.items() if var in mentioned)
        page = RulePage(doc=doc, thresholds=used, **fields)
        out[page.code] = page
    return dict(sorted(out.items()))


def thresholds() -> list[ThresholdEntry]:
    """Every declared threshold with the codes of the rules deciding by it, by name."""
    users: dict[str, list[str]] = {}
    for page in pages().values():
        for name in page.thresholds:
            users.setdefault(name, []).append(page.code)
    entries = [
        ThresholdEntry(**{**e.__dict__, "rules": tuple(users.get(e.name, ()))})
        for _, e in _declared().values()
    ]
    return sorted(entries, key=lambda e: e.name)


def lookup(code: str) -> RulePage:
    """The page of `code` (case and spaces ignored); a usage error naming the known codes."""
    code = code.strip().upper()
    code = REDIRECTS.get(code, code)
    if code in REMOVED:
        raise UsageError(f"{code} was removed in {REMOVED[code]}")
    known = pages()
    if code not in known:
        raise UsageError(f"unknown rule {code!r}; expected one of {', '.join(known)}")
    return known[code]
