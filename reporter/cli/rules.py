"""`benchreport rules` and `benchreport explain CODE`: the rules and their documentation."""

from __future__ import annotations

import click

from reporter import rules
from reporter.safetext import echo


@click.command(name="rules")
def rules_cmd() -> None:
    """List the rules: code, name, severity, status."""
    for rule in rules.REGISTRY.values():
        echo(f"{rule.code}  {rule.name:<34} {rule.severity!s:<8} {rule.status:<7} {rule.summary}")


@click.command()
@click.argument("code")
def explain(code: str) -> None:
    """Print the documentation page of one rule (e.g. BR003)."""
    rule = rules.lookup(code)
    echo(f"{rule.code} {rule.name} ({rule.severity}, {rule.status} since {rule.since})\n")
    echo(rule.doc.strip())
