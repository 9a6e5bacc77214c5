"""Every command and option says what it does; the README lists the commands there are."""

from __future__ import annotations

import re

import click
import pytest
from click.testing import CliRunner

from reporter.cli import main
from tests.conftest import ROOT


def _commands() -> list[tuple[str, click.Command]]:
    ctx = click.Context(main)
    out: list[tuple[str, click.Command]] = []

    def walk(group: click.Group, path: str) -> None:
        for name in group.list_commands(ctx):
            cmd = group.get_command(ctx, name)
            assert cmd is not None, name
            out.append((f"{path} {name}".strip(), cmd))
            if isinstance(cmd, click.Group):
                walk(cmd, f"{path} {name}")

    walk(main, "")
    return out


COMMANDS = _commands()


@pytest.mark.parametrize(("name", "cmd"), COMMANDS, ids=[n for n, _ in COMMANDS])
def test_every_command_and_option_has_help(name: str, cmd: click.Command) -> None:
    assert cmd.help, name
    undocumented = [p.name for p in cmd.params if isinstance(p, click.Option) and not p.help]
    assert not undocumented, f"{name}: {undocumented}"


@pytest.mark.parametrize(("name", "cmd"), COMMANDS, ids=[n for n, _ in COMMANDS])
def test_short_help_is_a_whole_sentence(name: str, cmd: click.Command) -> None:
    # the list in `benchreport --help` (80 columns) shows it whole, never cut with "..."
    short = cmd.get_short_help_str(limit=80 - 6 - max(len(n) for n, _ in COMMANDS))
    assert short.endswith(".") and not short.endswith("..."), f"{name}: {short!r}"


def test_the_group_lists_every_command_uncut() -> None:
    out = CliRunner().invoke(main, ["--help"], terminal_width=80).output
    listed = re.findall(r"^  (\w+)\s+(.+)$", out.split("Commands:")[1], re.MULTILINE)
    assert [name for name, _ in listed] == main.list_commands(click.Context(main))
    assert all(not text.endswith("...") for _, text in listed), listed


def test_audit_help_shows_examples_and_exit_codes() -> None:
    out = CliRunner().invoke(main, ["audit", "--help"]).output
    assert "Examples:" in out and "benchreport audit results.jsonl" in out
    for code in ("0  audited", "1  audited", "2  could not audit", "130  interrupted"):
        assert code in out


def test_the_readme_lists_the_commands_there_are() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## The command line", 1)[1].split("```", 2)[1]
    documented = set(re.findall(r"^benchreport (\w+)", section, re.MULTILINE))
    assert documented == set(main.list_commands(click.Context(main)))


@pytest.mark.parametrize("name", ["audit", "convert", "probe bandwidth", "record"])
def test_one_output_file_is_dash_o_or_output(name: str) -> None:
    cmd = dict(COMMANDS)[name]
    options = [p for p in cmd.params if isinstance(p, click.Option) and "-o" in p.opts]
    assert len(options) == 1 and "--output" in options[0].opts, name
