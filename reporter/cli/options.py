"""Options shared by several commands."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from reporter.adapters import ADAPTERS

F = TypeVar("F", bound=Callable[..., Any])

#: The --format choices: detection, or one adapter by name.
FORMATS = ("auto", *ADAPTERS)


def input_options(func: F) -> F:
    """--format and --mapping: how to read the input files (audit, validate, convert)."""
    func = click.option(
        "--mapping",
        type=click.Path(exists=True, dir_okay=False),
        help="For --format custom: which column is what (YAML).",
    )(func)
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(FORMATS),
        default="auto",
        show_default=True,
        help="Input format; detected from the content by default.",
    )(func)
