"""Expected errors: the library raises these, only the CLI prints them."""

from __future__ import annotations

from dataclasses import dataclass, field

from reporter.safetext import visible

#: How many problems of one file are shown before "… and N more".
MAX_SHOWN_PROBLEMS = 20


class BenchreportError(Exception):
    """Base of every error a user can cause; never printed with a traceback."""

    slug = "error"


@dataclass(frozen=True)
class Problem:
    """One problem at one place of an input file: `path:line[:col]: message; expected ...`."""

    path: str
    line: int | None
    message: str
    expected: str | None = None
    col: int | None = None

    def __str__(self) -> str:
        # The path and the message can quote a file's content: shown with visible escapes.
        where = visible(self.path)
        if self.line is not None:
            where += f":{self.line}"
            if self.col is not None:
                where += f":{self.col}"
        text = f"{where}: {visible(self.message)}"
        if self.expected:
            text += f"; expected {visible(self.expected)}"
        return text


@dataclass
class TraceError(BenchreportError):
    """One or more files could not be read; holds every problem found (see `total`)."""

    problems: list[Problem] = field(default_factory=list)
    #: Problems found in all, when more were found than were worded.
    total: int | None = None
    slug = "trace-error"

    def __post_init__(self) -> None:
        super().__init__(self.render())

    @property
    def count(self) -> int:
        return self.total if self.total is not None else len(self.problems)

    def render(self, limit: int = MAX_SHOWN_PROBLEMS) -> str:
        lines = [str(p) for p in self.problems[:limit]]
        more = self.count - min(limit, len(self.problems))
        if more > 0:
            lines.append(f"… and {more} more")
        return "\n".join(lines)


class UnknownFormat(TraceError):
    """Format detection could not pick an adapter."""

    slug = "unknown-format"


class UsageError(BenchreportError):
    """Options that do not make sense together, a bad --claim, an unknown rule code."""

    slug = "usage"


class RenderError(BenchreportError):
    """A report could not be written."""

    slug = "render"
