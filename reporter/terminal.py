"""Tables and styled lines for the terminal, drawn by rich, with trace strings kept inert.

Every cell and line is a `rich.text.Text` built here from `visible()` text: rich never parses
it as markup, so a run id such as `[bold]x[/]` or `[link=file:///etc/passwd]y` prints as
those characters, and its control, format and bidi characters are shown as escapes
(reporter.safetext, the one set of invisible characters).

Where the output goes decides how it looks:
- a terminal gets colour and bold, at the terminal's width, unless `NO_COLOR` is set
  (any non-empty value), in which case it gets no ANSI escape at all;
- anything else (a pipe, a file, a test) gets plain text at `WIDTH` columns, whatever the
  size of the terminal that launched it, so that piped output and test expectations are
  stable.

The tables have no vertical rules and one line of `-` under the header (an ASCII box): each
row stays one line of plain ASCII separators, so `grep RUN` finds a run's whole row,
`cut`/`awk` split it on spaces, and a pager or a log viewer without UTF-8 shows it unbroken.
A column of figures is never narrower than its widest cell: where the table cannot fit, its
lines get longer than the terminal rather than a figure being cut; only free-text columns
wrap.

rich is imported when a table is drawn, not when this module is: `--help`, `--version` and
shell completion never pay for it.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Literal

from reporter.safetext import echo, visible

if TYPE_CHECKING:
    from rich.console import Console, RenderableType
    from rich.table import Table
    from rich.text import Text

#: The width a renderable is measured at, to learn the fewest columns it needs.
UNBOUNDED = 100_000
#: The narrowest a column of free text is drawn (it wraps within it).
TEXT_MIN_WIDTH = 30
#: Columns of the output when it is not a terminal: wide enough that the run table and the
#: rule listing keep one line per row (only a row that needs them takes them).
WIDTH = 240


@dataclass(frozen=True)
class Column:
    """One column of a table: its header, its alignment and how it copes with a long cell."""

    header: str
    justify: Literal["left", "right"] = "left"
    #: Widest the column may be; a longer cell is cut with "…" (None: as wide as needed).
    max_width: int | None = None
    #: Free text: wrapped at spaces when the table is wider than the output (other columns
    #: keep their widest cell, up to `max_width`).
    wrap: bool = False
    #: A fixed width (for rows printed one at a time as they are measured).
    width: int | None = None


def no_color() -> bool:
    """NO_COLOR set to anything but the empty string (https://no-color.org)."""
    return os.environ.get("NO_COLOR", "") != ""


def text(value: object, style: str = "") -> Text:
    """`value` as rich Text: escaped by `visible()` (one line) and never read as markup."""
    from rich.text import Text

    return Text(visible(value), style=style, end="")


def line(*parts: str | Text) -> Text:
    """One line assembled from parts; str parts are trace-safe `text()`, Text parts as given."""
    from rich.text import Text

    out = Text(end="")
    for part in parts:
        out.append(part if isinstance(part, Text) else text(part))
    return out


def table(
    columns: Sequence[Column],
    rows: Iterable[Sequence[str | Text | None]],
    *,
    header: bool = True,
) -> Table:
    """A table of `columns` and `rows` (a str cell is shown literally, escaped).

    A column that does not wrap is never narrower than its widest cell (up to its
    `max_width`): printed where it cannot fit, the table is wider than the terminal rather
    than showing a figure cut short.
    """
    from rich import box
    from rich.table import Table

    cells = [[text(c) if isinstance(c, str) else c for c in row] for row in rows]
    ascii_head = box.Box("    \n    \n -  \n    \n    \n    \n    \n    \n", ascii=True)
    out = Table(
        box=ascii_head, show_edge=False, pad_edge=False, collapse_padding=True,
        header_style="bold", show_header=header,
    )  # fmt: skip
    for k, c in enumerate(columns):
        widths = [cell.cell_len for row in cells if (cell := row[k]) is not None]
        widest = max([len(c.header), *widths])
        out.add_column(
            c.header,
            justify=c.justify,
            max_width=c.max_width,
            min_width=min(widest, TEXT_MIN_WIDTH if c.wrap else c.max_width or widest),
            width=c.width,
            no_wrap=not c.wrap,
            overflow="fold" if c.wrap else "ellipsis",
        )
    for row in cells:
        out.add_row(*row)
    return out


def console(
    file: IO[str] | None = None, *, force_terminal: bool | None = None, stderr: bool = False
) -> Console:
    """A console that styles only a terminal without NO_COLOR; WIDTH columns elsewhere.

    A terminal is a file whose isatty() says so (or `force_terminal`): FORCE_COLOR and
    TTY_COMPATIBLE, which rich would also read, do not make a pipe a terminal here, so that
    piped output never holds an escape.
    """
    from rich.console import Console

    if force_terminal is None:
        target = file or (sys.stderr if stderr else sys.stdout)
        isatty = getattr(target, "isatty", None)
        try:
            force_terminal = bool(isatty and isatty())
        except ValueError:  # a closed file
            force_terminal = False
    plain = no_color() or not force_terminal
    return Console(
        file=file,
        stderr=stderr,
        force_terminal=force_terminal,
        color_system=None if plain else "auto",
        no_color=plain,
        highlight=False,
        markup=False,
        emoji=False,
        soft_wrap=True,
        width=None if force_terminal else WIDTH,
    )


def _as_text(renderable: RenderableType) -> RenderableType:
    """A str laid out by this program (its trace parts already escaped) as Text, not markup."""
    from rich.text import Text

    return Text(renderable, end="") if isinstance(renderable, str) else renderable


def _print(out: Console, renderables: Iterable[RenderableType], width: int) -> None:
    """Print each renderable at `width` columns, or wider if it cannot fit: a figure is never
    cut to fit a narrow terminal (free-text columns wrap first; then the line is longer)."""
    from rich.measure import Measurement

    for r in renderables:
        r = _as_text(r)
        unbounded = out.options.update_width(UNBOUNDED)  # measure what it needs, not what fits
        out.width = max(width, Measurement.get(out, unbounded, r).minimum)
        out.print(r)
    out.width = width


def indented(renderable: RenderableType, by: int = 2) -> RenderableType:
    """`renderable` shifted right by `by` columns (a table under its heading)."""
    from rich.padding import Padding

    return Padding(renderable, (0, 0, 0, by), expand=False)


def plain(renderables: Iterable[RenderableType], width: int = WIDTH) -> str:
    """The renderables as plain text at `width` columns: no ANSI escape, no trailing spaces.

    A str is one line this program laid out from escaped parts; it is printed as it is
    (never read as markup, never wrapped).
    """
    buffer = io.StringIO()
    _print(console(buffer, force_terminal=False), renderables, width)
    return "".join(x.rstrip() + "\n" for x in buffer.getvalue().splitlines())


def show(renderables: Sequence[RenderableType], *, err: bool = False) -> None:
    """Print renderables on stdout (stderr with `err`): styled on a terminal, else plain."""
    out = console(stderr=err)
    if out.color_system is None or not out.is_terminal:
        width = out.width if out.is_terminal else WIDTH
        echo(plain(renderables, width), nl=False, err=err)
        return
    _print(out, renderables, out.width)
