"""The command line: parse options, call the library (`reporter.api`), print, pick the exit code.

One module per command (`audit`, `compare`, `convert`, `probe`, `record`, `rules`), loaded
when its command runs or is listed; failures and exit codes are handled once, in
`reporter.cli.errors`; options shared by several commands live in `reporter.cli.options`.
"""

from __future__ import annotations

import importlib

import click

from reporter.cli.errors import ExitCode, GuardedGroup
from reporter.version import __version__

__all__ = ["ExitCode", "main"]

#: Command name → "module:attribute" of its click command, imported on first use.
COMMANDS = {
    "audit": "reporter.cli.audit:audit",
    "compare": "reporter.cli.compare:compare_cmd",
    "convert": "reporter.cli.convert:convert",
    "explain": "reporter.cli.rules:explain",
    "probe": "reporter.cli.probe:probe_cmd",
    "record": "reporter.cli.record:record_cmd",
    "rules": "reporter.cli.rules:rules_cmd",
    "validate": "reporter.cli.audit:validate",
}


class CommandGroup(GuardedGroup):
    """The `benchreport` group: its commands are imported when they are first needed."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*COMMANDS, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            module, _, attribute = COMMANDS[cmd_name].partition(":")
            command = getattr(importlib.import_module(module), attribute)
            self.add_command(command, cmd_name)
        return self.commands.get(cmd_name)


@click.group(
    cls=CommandGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
# the version from the source, not importlib.metadata: reading the installed distributions
# costs tens of milliseconds, and a checkout run with PYTHONPATH has none of its own
@click.version_option(__version__, prog_name="benchreport")
def main() -> None:
    """Audit throughput claims about LLM serving: recompute the figures and show the arithmetic."""
