"""The fuzz suite's one property and the CLI call it is checked on.

The property, for every input however broken: the command ends with exit 0, 1 or 2; no
exception escapes and no traceback is printed; the JSON verdict (``--json -``) parses with a
strict parser (no NaN, no Infinity); and no time in it (a wall clock, a TTFT, a latency, an
overlap) is negative.
"""

from __future__ import annotations

import json
import math
import os
import re
import signal
import traceback
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from click.testing import CliRunner, Result

from reporter.cli import main
from reporter.cli.errors import GuardedGroup

#: Seconds one example may take before it counts as a hang (a loaded two-core machine).
HANG_S = 60

#: Keys whose value is a time, a duration or a ratio of durations: never negative.
_TIME_SUFFIXES = ("_s", "_tps")
_TIME_KEYS = {"overlap", "recomputed", "p50", "p90", "p99", "in_flight", "prefill_share"}
#: Figures the user typed (a claim's value): they may be anything the claim says.
_USER_KEYS = {"value", "claimed"}


class Hang(Exception):
    """One example ran past HANG_S."""


@contextmanager
def time_limit(seconds: int = HANG_S) -> Iterator[None]:
    """Raise Hang in the main thread after `seconds` (SIGALRM; the CLI runs in this thread)."""

    def on_alarm(signum: int, frame: Any) -> None:
        raise Hang(f"no answer after {seconds} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"non-finite number {name} in the JSON output")


def strict_json(text: str) -> Any:
    """Parse JSON as a strict reader does: NaN, Infinity and -Infinity are errors."""
    return json.loads(text, parse_constant=_reject_constant)


def negative_times(doc: Any, path: str = "$") -> list[str]:
    """Every place in a verdict where a time-like figure is negative or not finite."""
    found: list[str] = []
    if isinstance(doc, dict):
        for key, value in doc.items():
            where = f"{path}.{key}"
            if key in _USER_KEYS:
                continue
            if isinstance(value, int | float) and not isinstance(value, bool):
                timed = key.endswith(_TIME_SUFFIXES) or key in _TIME_KEYS
                if timed and (value < 0 or not math.isfinite(value)):
                    found.append(f"{where} = {value!r}")
            elif isinstance(value, list) and key.endswith(_TIME_SUFFIXES):
                found += [
                    f"{where}[{i}] = {v!r}"
                    for i, v in enumerate(value)
                    if isinstance(v, int | float) and not isinstance(v, bool) and v < 0
                ]
            else:
                found += negative_times(value, where)
    elif isinstance(doc, list):
        for i, value in enumerate(doc):
            found += negative_times(value, f"{path}[{i}]")
    return found


@dataclass(frozen=True)
class Known:
    """A failure class found by the suite and still open: what it looks like and its cause.

    While a class is open, a property that hits it counts the hit and goes on looking for
    others; the test then reports xfail naming the class. Its reproducer in
    test_fuzz_known.py is a strict xfail, so the fix that closes it must also remove it here.
    """

    name: str
    pattern: str
    cause: str


#: The open failure classes (kept in step with test_fuzz_known.py).
KNOWN: list[Known] = []

_tolerated: list[list[str]] = []
#: BENCHREPORT_FUZZ_HUNT=1: record every violation by its first line and go on (for a hunt
#: that lists every failure class at once); the property then reports them and xfails.
_HUNT = bool(os.environ.get("BENCHREPORT_FUZZ_HUNT"))
_hunted: dict[str, tuple[int, str]] = {}


@contextmanager
def known_tolerated() -> Iterator[list[str]]:
    """Within: a violation of a KNOWN class is recorded (by name), not raised."""
    hits: list[str] = []
    _tolerated.append(hits)
    try:
        yield hits
    finally:
        _tolerated.pop()


def run_property(prop: Any) -> None:
    """Run a hypothesis property; hits of open KNOWN classes make it xfail, naming them."""
    with known_tolerated() as hits:
        prop()
    if _hunted:
        for signature, (count, text) in sorted(_hunted.items(), key=lambda kv: -kv[1][0]):
            print(f"=== {count} × {signature}\n{text[:3000]}\n")
        found = len(_hunted)
        _hunted.clear()
        pytest.xfail(f"hunt: {found} failure classes (printed above)")
    if hits:
        counts = {name: hits.count(name) for name in sorted(set(hits))}
        pytest.xfail(f"open failure classes hit (see test_fuzz_known.py): {counts}")


def violated(message: str, outcome: Outcome | None = None) -> None:
    """Fail with `message`, unless it is of an open KNOWN class and those are tolerated."""
    __tracebackhide__ = True
    text = message if outcome is None else f"{message}\n{outcome.describe()}"
    first = message.split("\n", 1)[0]
    if _HUNT and _tolerated:
        signature = re.sub(r"\d+", "N", re.sub(r"/tmp/\S+", "PATH", first))[:200]
        count, kept = _hunted.get(signature, (0, text))
        _hunted[signature] = (count + 1, kept if len(kept) <= len(text) else text)
        return
    if _tolerated:
        for known in KNOWN:
            if re.search(known.pattern, first):
                _tolerated[-1].append(known.name)
                return
    raise AssertionError(text)


@dataclass
class Outcome:
    args: list[str]
    result: Result
    #: An unexpected exception that the CLI caught and reported as an internal error.
    internal: BaseException | None = None

    @property
    def code(self) -> int:
        return self.result.exit_code

    def describe(self) -> str:
        return (
            f"benchreport {' '.join(self.args)}\nexit {self.code}\n"
            f"stderr: {self.result.stderr[-3000:]}\nstdout: {self.result.stdout[-1500:]}"
        )


def invoke(args: Sequence[str], env: dict[str, str] | None = None) -> Outcome:
    """Run the CLI in this process as a user would, warnings shown, not raised.

    The CLI turns an unexpected exception into one line and exit 2 (reporter.cli.errors); the
    exception is kept here as well, so that a crash behind that line still fails the property.
    """
    internal: list[BaseException] = []
    original = GuardedGroup._fail

    def keep(self: GuardedGroup, ctx: Any, exc: Exception, kind: str | None) -> Any:
        if kind is not None:
            internal.append(exc)
        return original(self, ctx, exc, kind)

    with warnings.catch_warnings(), mock.patch.object(GuardedGroup, "_fail", keep):
        warnings.simplefilter("default")
        with time_limit():
            result = CliRunner().invoke(main, list(args), env=env, catch_exceptions=True)
    return Outcome(list(args), result, internal[0] if internal else None)


def where(exc: BaseException | None) -> str:
    """The innermost frame of the project's code in an exception's traceback."""
    if exc is None or exc.__traceback__ is None:
        return "?"
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if f"{os.sep}reporter{os.sep}" in f.filename]
    last = (ours or frames)[-1]
    return f"{Path(last.filename).name}:{last.lineno} {last.name}()"


def check(outcome: Outcome, json_stdout: bool = False) -> Any:
    """Assert the property on one CLI call; returns the parsed verdict when there is one."""
    __tracebackhide__ = True
    result = outcome.result
    exc = result.exception
    if exc is not None and not isinstance(exc, SystemExit):
        if isinstance(exc, Hang):
            return violated(f"hang: {exc}", outcome)
        return violated(
            f"an exception escaped the CLI: {type(exc).__name__} at {where(exc)}: {str(exc)[:300]}",
            outcome,
        )
    if outcome.internal is not None:
        exc = outcome.internal
        return violated(
            f"internal error (caught by the CLI): {type(exc).__name__} at {where(exc)}: "
            f"{str(exc)[:300]}",
            outcome,
        )
    if outcome.code not in (0, 1, 2):
        return violated(f"exit code {outcome.code} is none of 0, 1, 2", outcome)
    for stream in (result.stdout, result.stderr):
        if "Traceback (most recent call last)" in stream:
            return violated("a traceback was printed", outcome)
    if outcome.code == 2:
        if not result.stderr.strip():
            return violated("exit 2 without a message on stderr", outcome)
        return None
    if not json_stdout:
        return None
    try:
        verdict = strict_json(result.stdout)
    except ValueError as err:
        return violated(f"--json - is not strict JSON: {err}", outcome)
    bad = negative_times(verdict)
    if bad:
        return violated(f"negative or non-finite time in the verdict: {bad[:5]}", outcome)
    return verdict


def audit(files: Sequence[Path | str], *extra: str, env: dict[str, str] | None = None) -> Any:
    """`benchreport audit FILES --no-html --json - EXTRA` under the property."""
    args = ["audit", *map(str, files), "--no-html", "--json", "-", *extra]
    return check(invoke(args, env=env), json_stdout=True)
