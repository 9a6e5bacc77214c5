"""One policy for every command's failures, applied in one place: `GuardedGroup.invoke`.

Exit codes (the same for every command, `ExitCode`):

    0  done; for `audit`, no finding at or above --fail-on fired
    1  `audit` only: audited, and a finding at or above --fail-on fired
    2  could not audit: bad input or options (a `path:line: what; expected what` message),
       or an unexpected error (one line naming the input; --debug prints the traceback)
  130  interrupted (Ctrl-C)

A crash never exits 1: a CI job gating on `--fail-on error` must be able to tell a failed
audit from an audit that did not happen. Commands raise `BenchreportError` and never call
`sys.exit(2)` themselves.
"""

from __future__ import annotations

import enum
import sys
import traceback
from collections.abc import Iterable, Sequence
from typing import Any, NoReturn

import click

from reporter.errors import BenchreportError, TraceError
from reporter.safetext import echo


class ExitCode(enum.IntEnum):
    """What a command's exit status means (the same for every command)."""

    #: Done; for `audit`, no finding at or above --fail-on fired.
    OK = 0
    #: `audit`: audited, and a finding at or above --fail-on fired.
    FINDINGS = 1
    #: Could not audit: bad input, bad options (click's usage errors too), or an internal error.
    CANNOT_AUDIT = 2
    #: Stopped by Ctrl-C or SIGTERM (128 + SIGINT, as shells report it).
    INTERRUPTED = 130


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
#: Where the shared --debug option leaves its value (`Context.meta` is shared by a command
#: and its group, so the group's error handler finds it after the command's context is gone).
DEBUG_KEY = "benchreport.debug"


def _remember_debug(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    if value:
        ctx.meta[DEBUG_KEY] = True
    return value


def debug_option() -> click.Option:
    """`--debug`, declared here once; `GuardedGroup` gives it to every command it holds."""
    return click.Option(
        ["--debug"],
        is_flag=True,
        expose_value=False,
        callback=_remember_debug,
        help="Show the traceback of any error (the exit code stays 2).",
    )


def with_debug(cmd: click.Command) -> click.Command:
    """`cmd` (and, for a group such as `probe`, each of its commands) with `--debug`."""
    if isinstance(cmd, click.Group):
        for sub in cmd.commands.values():
            with_debug(sub)
    elif not any(p.name == "debug" for p in cmd.params):
        cmd.params.append(debug_option())
    return cmd


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
    `--debug` the traceback is printed as well (still exit 2). Every command added to the
    group gets the one `--debug` option.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.params.append(debug_option())  # `benchreport --debug audit ...` works too

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        super().add_command(with_debug(cmd), name)

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
            sys.exit(ExitCode.INTERRUPTED)
        except BenchreportError as exc:
            self._fail(ctx, exc, None)
        except Exception as exc:
            self._fail(ctx, exc, "internal error")

    def _fail(self, ctx: click.Context, exc: Exception, kind: str | None) -> NoReturn:
        cmd_name, params = self._params(ctx)
        debug = bool(ctx.meta.get(DEBUG_KEY) or params.get("debug"))
        if debug:
            traceback.print_exception(exc, file=sys.stderr)
        if kind is None:
            text = exc.render() if isinstance(exc, TraceError) else str(exc)
            echo(text, err=True)
        else:
            hint = "" if debug else " (run with --debug for the traceback)"
            detail = one_line(f"{type(exc).__name__}: {exc}")
            echo(
                f"benchreport: {kind} while {_subject(cmd_name, params)}: {detail}{hint}",
                err=True,
            )
        sys.exit(ExitCode.CANNOT_AUDIT)

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
