"""The Markdown summary (GitHub-flavoured) for a pull-request comment: no HTML, no links.

Every value printed by the template passes through `md_text()` unless it is `Md` (text this
module built, such as a code fence around the rerun command). Trace strings can therefore
neither open a table cell, a link, an image or an HTML tag, nor become an autolink.

Escaping does not stop GFM's autolinks: cmark-gfm links `www.`, `http://` and e-mail
addresses in the text after escapes are resolved, and GitHub links `@user` and `#123` the same
way. A zero-width joiner is put where each would start (`www\u200d.`, `:\u200d//`,
`@\u200d`, `#\u200d`), which no autolink rule accepts and a reader does not see.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

import jinja2

from reporter.model import Verdict
from reporter.render.context import FindingView, ReportContext, build_context
from reporter.resources import templates_dir

TEMPLATE = "summary.md.j2"
#: Rules whose findings are listed (one line each); the rest are counted.
TOP_FINDINGS = 8
#: Rules whose undecided checks with arithmetic (a bound, figures a reader can check) are
#: listed, one line each; the rest of the undecided checks are counted.
TOP_UNDECIDED = 2
#: Subjects named per rule.
SUBJECTS = 3
#: Runs in the table; the rest are counted.
TOP_RUNS = 12
#: Runs whose stated aggregate differs from total ÷ wall listed under the table; the rest
#: are counted.
TOP_STATED = 5
#: Sweeps listed in the summary; the rest are in the HTML report.
TOP_SWEEPS = 5
#: Longest value in a table cell, and longest finding message.
CELL = 60
MESSAGE = 300
#: Longest arithmetic of a line (all its steps, joined on one line).
ARITHMETIC = 500

# ASCII punctuation that starts Markdown or HTML syntax anywhere in a line.
_SPECIAL = re.compile(r"([\\`*_\[\]<>|!#~&$(){}])")
#: Where GFM's autolinks and GitHub's references would start: a zero-width joiner goes there.
_AUTOLINK = re.compile(r"(?i)(?<=www)(?=\.)|(?<=:)(?=//)|(?<=[@#])")
ZWJ = "\u200d"
#: Between the lines of a finding's arithmetic printed on one line ("; " is inside some lines).
ARITHMETIC_JOIN = " · "
_SPACE = re.compile(r"\s+")


class Md(str):
    """Text that is already Markdown and is printed as it is."""

    __slots__ = ()


def md_text(value: object) -> str:
    """A value as inert Markdown text: one line, every syntax character escaped.

    Values are never printed at the start of a line, so list and heading markers need no
    escape; a zero-width joiner after `@` and `#`, inside `://` and after `www` keeps any
    autolink or reference from forming.
    """
    if isinstance(value, Md):
        return str(value)
    text = _SPACE.sub(" ", str(value))
    text = _SPECIAL.sub(r"\\\1", text)
    return _AUTOLINK.sub(ZWJ, text)


def cut(value: object, limit: int = CELL) -> str:
    text = str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def fenced(text: str, fence: str) -> Md:
    """A fenced code block; the fence is longer than any run of backticks in the text."""
    return Md(f"{fence}\n{' '.join(text.split())}\n{fence}")


@cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        autoescape=False,
        undefined=jinja2.StrictUndefined,
        finalize=md_text,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["cut"] = cut
    return env


@dataclass(frozen=True)
class CodeLine:
    """The findings of one rule at one severity, as one line: the subjects, and the message
    and arithmetic (the first subject's, named in `example`, where their messages differ)."""

    code: str
    name: str
    severity: str
    count: int
    subjects: list[str]
    more: int
    message: str
    #: The subject whose message is quoted, when the subjects' messages differ ("" if alike).
    example: str = ""
    #: The quoted finding's arithmetic, its lines joined on one line ("" if it has none).
    arithmetic: str = ""


def by_code(findings: list[FindingView]) -> list[CodeLine]:
    """Findings (fired, or undecided) of one rule at one severity on one line, with their
    subjects, in the order of their first (worst) finding. Where their messages differ, the
    line quotes the first and names its subject (`example`): one run's figures are never
    printed as another's, nor one severity as another's."""
    groups: dict[tuple[str, str], list[FindingView]] = {}
    for f in findings:
        groups.setdefault((f.code, f.severity), []).append(f)
    return [
        CodeLine(
            code=fs[0].code,
            name=fs[0].name,
            severity=fs[0].severity,
            count=len(fs),
            subjects=[f.subject for f in fs[:SUBJECTS]],
            more=max(0, len(fs) - SUBJECTS),
            message=fs[0].message,
            example=fs[0].subject if len({f.message for f in fs}) > 1 else "",
            arithmetic=ARITHMETIC_JOIN.join(fs[0].arithmetic),
        )
        for fs in groups.values()
    ]


def render_markdown_context(context: ReportContext) -> str:
    fired = by_code([f for g in context.groups for f in g.findings])
    # only those with arithmetic: the rest say no more than their count, in a PR comment
    undecided = by_code([f for f in context.undecided if f.arithmetic])[:TOP_UNDECIDED]
    stated = [run for run in context.runs if run.stated_note]
    extra: dict[str, Any] = {
        "top": fired[:TOP_FINDINGS],
        "more_findings": sum(line.count for line in fired[TOP_FINDINGS:]),
        "undecided": undecided,
        "more_undecided": context.counts.undecidable - sum(line.count for line in undecided),
        "runs": context.runs[:TOP_RUNS],
        "more_runs": max(0, len(context.runs) - TOP_RUNS),
        "stated": stated[:TOP_STATED],
        "more_stated": max(0, len(stated) - TOP_STATED),
        "command": fenced(context.command, context.command_fence),
        "cell": CELL,
        "message": MESSAGE,
        "arithmetic": ARITHMETIC,
        "max_sweeps": TOP_SWEEPS,
    }
    text = environment().get_template(TEMPLATE).render(r=context, **extra)
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


def render_markdown(verdict: Verdict, command: str | None = None) -> str:
    """The summary as GitHub-flavoured Markdown."""
    return render_markdown_context(build_context(verdict, command, charts=False))
