"""`benchreport rules` and `benchreport explain CODE`: the rules, their thresholds and pages.

Both read `reporter.rulebook` (the rules' source, not the rules): no pandas, no pyarrow.
The listings are tables drawn by rich (reporter.terminal), imported when one is printed.
"""

from __future__ import annotations

import json

import click

from reporter import rulebook, terminal
from reporter.cli.options import json_option, write_json
from reporter.safetext import echo
from reporter.terminal import Column


@click.command(name="rules", short_help="List the rules, or the thresholds they decide by.")
@click.option(
    "--thresholds",
    is_flag=True,
    help="List every configurable threshold: its default, valid range, the rules deciding "
    "by it and why it has its value (override in a --config TOML file, [thresholds]).",
)
@json_option("the list")
def rules_cmd(thresholds: bool, json_out: str | None) -> None:
    """List the rules: code, name, severity, status and what each checks.

    With --thresholds, list the thresholds instead.
    """
    if thresholds:
        entries = rulebook.thresholds()
        if json_out:
            write_json(_dumps([e.to_dict() for e in entries]), json_out)
            return
        columns = (
            Column("threshold"),
            Column("default"),
            Column("range"),
            Column("rules"),
            Column("why this value", wrap=True),
        )
        rows = [
            (e.name, f"{e.default:g}", e.range_text(), ", ".join(e.rules) or e.module, e.reason)
            for e in entries
        ]
        terminal.show([terminal.table(columns, rows)])
        return
    pages = rulebook.pages().values()
    if json_out:
        write_json(_dumps([p.to_dict() for p in pages]), json_out)
        return
    columns = (
        Column("code"),
        Column("name"),
        Column("severity"),
        Column("status"),
        Column("checks", wrap=True),
    )
    rows = [(p.code, p.name, str(p.severity), p.status, p.summary) for p in pages]
    terminal.show([terminal.table(columns, rows)])


@click.command(short_help="Print one rule's documentation page (e.g. BR003).")
@click.argument("code")
@json_option("the page, with the rule's thresholds")
def explain(code: str, json_out: str | None) -> None:
    """Print the documentation page of one rule (e.g. BR003) and the thresholds it uses."""
    page = rulebook.lookup(code)
    if json_out:
        by_name = {e.name: e for e in rulebook.thresholds()}
        data = page.to_dict()
        data["thresholds"] = [by_name[name].to_dict() for name in page.thresholds]
        write_json(_dumps(data), json_out)
        return
    echo(f"{page.code} {page.name} ({page.severity}, {page.status} since {page.since})\n")
    echo(page.doc.strip())
    if page.thresholds:
        echo("\n## Thresholds")
        by_name = {e.name: e for e in rulebook.thresholds()}
        for name in page.thresholds:
            e = by_name[name]
            echo(f"- {name} = {e.default:g} ({e.range_text()}): {e.reason}")


def _dumps(data: object) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2)
