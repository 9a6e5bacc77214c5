"""One policy for every command's failures: exit 2 when the input could not be audited.

Exit codes (the same for every command):

    0  done; for `audit`, no finding at or above --fail-on fired
    1  `audit` only: audited, and a finding at or above --fail-on fired
    2  could not audit: bad input or options (a `path:line: what; expected what` message),
       or an unexpected error (one line naming the input; --debug prints the traceback)
  130  interrupted (Ctrl-C)

A crash never exits 1: a CI job gating on `--fail-on error` must be able to tell a failed
audit from an audit that did not happen.
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Iterable, Sequence
from typing import Any, NoReturn

import click

from reporter.errors import BenchreportError, TraceError
from reporter.safetext import echo

#: Could not audit: bad input, bad options, or an unexpected error.
EXIT_CANNOT_AUDIT = 2
#: Stopped by Ctrl-C (128 + SIGINT), as shells report it.
EXIT_INTERRUPTED = 130

#: The longest exception message printed on the one line (the traceback has it whole).
MAX_MESSAGE_CHARS = 300

#: What each command does to its inputs, for "internal error while auditing FILE".
_VERBS = {
    "audit": "auditing",
    "validate": "validating",
    "convert": "converting",
    "compare": "comparing runs of",
    "record": "recording",
}
#: The parameters that name what a command works on (the recorder: the trace it writes).
_SUBJECTS = ("files", "file", "traces", "out")
#: Other files a command reads, named with their option.
_OPTION_FILES = (
    ("config_path", "--config"),
    ("mapping", "--mapping"),
    ("server_logs", "--server-log"),
)


def one_line(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """`text` on one line: whitespace runs become one space, control characters are shown
    as escapes (never sent to the terminal), and the end is cut at `limit` characters."""
    flat = " ".join(text.split())
    shown = "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in flat[: limit + 1])
    return shown if len(flat) <= limit else shown[:limit] + "…"


def _values(value: Any) -> list[str]:
    values: Iterable[Any] = value if isinstance(value, list | tuple) else [value]
    return [str(v) for v in values if v is not None]


def _subject(cmd_name: str | None, params: dict[str, Any]) -> str:
    """`auditing a.jsonl (--mapping m.yaml, --claim 'aggregate=40')`: what was being done."""
    verb = _VERBS.get(cmd_name or "", f"running {cmd_name}" if cmd_name else "starting")
    names = (
        _values(params.get("out"))
        if cmd_name == "record"
        else [v for name in _SUBJECTS[:-1] for v in _values(params.get(name))]
    )
    extras = [f"{option} {v}" for name, option in _OPTION_FILES for v in _values(params.get(name))]
    extras += [f"--claim {c!r}" for c in _values(params.get("claim_texts"))]
    text = verb + "".join(f" {n}" if i == 0 else f", {n}" for i, n in enumerate(names))
    if extras:
        text += " (" + ", ".join(extras) + ")"
    return one_line(text)


class GuardedGroup(click.Group):
    """A command group whose commands never end in a traceback or share exit 1 with a finding.

    Expected errors (`BenchreportError`) print their message; anything else prints
    `benchreport: internal error while auditing FILE: ExcType: msg`; both exit 2. With
    `--debug` the traceback is printed as well (still exit 2).
    """

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name, cmd, rest = super().resolve_command(ctx, args)
        # kept to name the inputs in a message, should the command fail
        ctx.meta["benchreport.command"] = (name, cmd, list(rest))
        return name, cmd, rest

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, click.Abort, SystemExit):
            raise  # usage errors, --help, sys.exit(n): click and the command chose the code
        except BrokenPipeError:
            raise  # click silences a closed stdout (`| head`)
        except KeyboardInterrupt:
            echo("\nbenchreport: interrupted", err=True)
            sys.exit(EXIT_INTERRUPTED)
        except BenchreportError as exc:
            self._fail(ctx, exc, None)
        except Exception as exc:
            self._fail(ctx, exc, "internal error")

    def _fail(self, ctx: click.Context, exc: Exception, kind: str | None) -> NoReturn:
        cmd_name, params = self._params(ctx)
        if params.get("debug"):
            traceback.print_exception(exc, file=sys.stderr)
        if kind is None:
            text = exc.render() if isinstance(exc, TraceError) else str(exc)
            echo(text, err=True)
        else:
            hint = "" if params.get("debug") else " (run with --debug for the traceback)"
            detail = one_line(f"{type(exc).__name__}: {exc}")
            echo(
                f"benchreport: {kind} while {_subject(cmd_name, params)}: {detail}{hint}",
                err=True,
            )
        sys.exit(EXIT_CANNOT_AUDIT)

    @staticmethod
    def _params(ctx: click.Context) -> tuple[str | None, dict[str, Any]]:
        """The failed command's name and options, parsed again from its arguments.

        The command's own context is gone when its exception arrives here; parsing its
        arguments once more (resilient: no callbacks, no errors) recovers what it was given.
        """
        stored: tuple[str | None, click.Command | None, Sequence[str]] | None = ctx.meta.get(
            "benchreport.command"
        )
        if stored is None:
            return None, {}
        name, cmd, args = stored
        if cmd is None:
            return name, {}
        try:
            sub = cmd.make_context(name, list(args), parent=ctx, resilient_parsing=True)
        except Exception:  # the message still goes out, without the paths
            return name, {"debug": "--debug" in args}
        params = dict(sub.params)
        params.setdefault("debug", "--debug" in args)  # a nested group (probe) holds it deeper
        return name, params
