"""The rule registry: code → Rule, discovered from the `brNNN_*.py` modules of this package."""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Iterable
from pathlib import Path

from reporter.config import THRESHOLDS, Config
from reporter.errors import UsageError
from reporter.rulebook import REDIRECTS, REMOVED
from reporter.rules.base import AuditData, Finding, Rule

CODE_RE = re.compile(r"^BR\d{3}$")


def _discover() -> dict[str, Rule]:
    registry: dict[str, Rule] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if not re.match(r"^br\d{3}_", info.name):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        rule: Rule = module.RULE
        if rule.code in registry:
            raise RuntimeError(f"rule code {rule.code} is defined twice")
        registry[rule.code] = rule
    return registry


REGISTRY: dict[str, Rule] = _discover()


def _check_prefixes(prefixes: Iterable[str], option: str) -> list[str]:
    out = []
    # `--select BR003,BR005` as in ruff and flake8, as well as the option given twice
    for prefix in (part for given in prefixes for part in given.split(",")):
        p = REDIRECTS.get(prefix.strip().upper(), prefix.strip().upper())
        if not p:
            continue
        if not any(code.startswith(p) for code in REGISTRY):
            known = ", ".join(REGISTRY)
            raise UsageError(f"{option} {prefix!r} matches no rule; expected a prefix of {known}")
        out.append(p)
    return out


def select(select: Iterable[str] = (), ignore: Iterable[str] = ()) -> list[Rule]:
    """Rules whose code starts with a --select prefix and with no --ignore prefix.

    As in flake8, the longer matching prefix wins when both match (`--select BR0 --ignore
    BR006` drops BR006 only).
    """
    chosen = _check_prefixes(select, "--select") or ["BR"]
    dropped = _check_prefixes(ignore, "--ignore")
    rules = []
    for code, rule in REGISTRY.items():
        sel = max((len(p) for p in chosen if code.startswith(p)), default=-1)
        ign = max((len(p) for p in dropped if code.startswith(p)), default=-1)
        if sel >= 0 and sel > ign:
            rules.append(rule)
    return rules


def lookup(code: str) -> Rule:
    code = code.strip().upper()
    code = REDIRECTS.get(code, code)
    if code in REMOVED:
        raise UsageError(f"{code} was removed in {REMOVED[code]}")
    if code not in REGISTRY:
        raise UsageError(f"unknown rule {code!r}; expected one of {', '.join(REGISTRY)}")
    return REGISTRY[code]


def load_config(path: str | Path | None) -> Config:
    """The thresholds of a TOML file (`[thresholds]`), checked against every declared one
    (this package's modules and what they read declare them all on import)."""
    return Config.load(path, THRESHOLDS)


def run_rules(data: AuditData, rules: list[Rule]) -> list[Finding]:
    findings: list[Finding] = []
    for rule in rules:
        findings.extend(rule.check(data))
    return sorted(findings, key=Finding.sort_key)


__all__ = [
    "REGISTRY",
    "AuditData",
    "Finding",
    "Rule",
    "load_config",
    "lookup",
    "run_rules",
    "select",
]
