"""Findings as one line each, placed on the trace line they cite: GitHub workflow commands
(`::error file=…,line=…,title=…::message`, as ruff and flake8 print with
`--output-format github`) and a plain `path:line: CODE message` for editors and grep.

Every string that came from a trace is first made visible (reporter.safetext.visible: escape
sequences, controls and bidi characters shown as backslash escapes, long text cut), so a run
id can neither drive the terminal or the log viewer nor start a second command on a new
line. The workflow command is then escaped as GitHub's runner reads it: in the message `%`,
CR and LF; in a property also `:` and `,`, which end a property or the property list.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from reporter.findings import Finding
from reporter.model import Verdict
from reporter.safetext import visible
from reporter.types import Severity

#: The workflow command of each severity (GitHub has no "info": a notice is its lowest).
COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}
#: The output formats of `audit --output-format`: the terminal summary or one line a finding.
OUTPUT_FORMATS = ("text", "github", "concise")

_LINE_REF = re.compile(r"(?s)(.+):([0-9]+)")


@dataclass(frozen=True)
class Place:
    """Where a finding points: a file, and a 1-based line when the finding cites one."""

    path: str
    line: int | None


def place(finding: Finding, fallback: str | None) -> Place | None:
    """The first trace line the finding cites; its file alone when the ref has no line;
    `fallback` (the first input) when it cites nothing; None when there is no file at all."""
    for ref in finding.refs:
        m = _LINE_REF.fullmatch(ref)
        if m is not None:
            return Place(m.group(1), int(m.group(2)))
        if ref:
            return Place(ref, None)
    return Place(fallback, None) if fallback else None


def escape_data(text: str) -> str:
    """A workflow command's message as the runner reads it back: % first, then CR and LF."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value: the message's escapes, and `:` and `,`."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


#: Longest subject (a run id, a group, a claim) printed before a finding's message.
MAX_SUBJECT = 120


def _said(finding: Finding) -> str:
    """The finding in one line, made visible: whom it concerns, then what it found."""
    message = visible(finding.message)
    if not finding.subject:
        return message
    return f"{visible(finding.subject, limit=MAX_SUBJECT)}: {message}"


def _fired(verdict: Verdict) -> list[Finding]:
    """Fired findings, worst first, then by code and subject (a stable order to diff)."""
    return sorted(verdict.fired(), key=lambda f: (-int(f.severity), f.code, f.subject))


def _fallback(verdict: Verdict) -> str | None:
    return verdict.inputs[0].path if verdict.inputs else None


def github_line(finding: Finding, where: Place | None) -> str:
    """One finding as a GitHub workflow command (an annotation on the line it cites)."""
    props = []
    if where is not None:
        props.append(f"file={escape_property(visible(where.path))}")
        if where.line is not None:
            props.append(f"line={where.line}")
    props.append(f"title={escape_property(f'{finding.code} {finding.name}')}")
    message = _said(finding)
    if finding.help:
        message += f" ({visible(finding.help)})"
    return f"::{COMMAND[finding.severity]} {','.join(props)}::{escape_data(message)}"


def concise_line(finding: Finding, where: Place | None) -> str:
    """One finding as `path:line: CODE message` (ruff's concise format without the column)."""
    if where is None:
        at = "-"
    elif where.line is None:
        at = visible(where.path)
    else:
        at = f"{visible(where.path)}:{where.line}"
    return f"{at}: {finding.code} {_said(finding)}"


def render_github(verdict: Verdict) -> str:
    """Every fired finding as a workflow command, one a line."""
    return _lines(github_line(f, place(f, _fallback(verdict))) for f in _fired(verdict))


def render_concise(verdict: Verdict) -> str:
    """Every fired finding as `path:line: CODE subject: message`, one a line."""
    return _lines(concise_line(f, place(f, _fallback(verdict))) for f in _fired(verdict))


def _lines(lines: Iterable[str]) -> str:
    return "".join(f"{line}\n" for line in lines)


def render_findings(verdict: Verdict, output_format: str) -> str:
    """The fired findings in one of the line formats (`github` or `concise`)."""
    if output_format == "github":
        return render_github(verdict)
    if output_format == "concise":
        return render_concise(verdict)
    raise ValueError(f"output format {output_format!r}; expected github or concise")
