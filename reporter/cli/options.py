"""Options shared by several commands."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])

#: The --format choices: detection, or one adapter by name. Written out rather than read from
#: `reporter.adapters.ADAPTERS`, which imports pandas, so that `--help` starts at once
#: (tests/cli/test_startup.py checks that the two lists agree).
FORMATS = (
    "auto", "benchreport", "guidellm", "aiperf", "genai-perf", "llmperf", "sglang", "vllm",
    "llama-bench", "custom",
)  # fmt: skip
#: The --output-format choices of audit (`reporter.render.annotations.OUTPUT_FORMATS`, which
#: imports the verdict's records and numpy; the same test checks them).
OUTPUT_FORMATS = ("text", "github", "concise")


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


config_option = click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False),
    help="A TOML file with [thresholds] overrides (benchreport rules --thresholds lists them).",
)


def json_option(what: str) -> Callable[[F], F]:
    """`--json FILE|-`, the same on every command: write `what` as JSON to FILE, or to
    stdout for `-` (also for `--json` given last, without a value)."""
    return click.option(
        "--json",
        "json_out",
        metavar="FILE|-",
        type=click.Path(dir_okay=False, allow_dash=True),
        is_flag=False,
        flag_value="-",
        default=None,
        help=f"Write {what} as JSON to FILE (- or no value: stdout).",
    )


def write_json(text: str, target: str) -> None:
    """JSON text to stdout (`-`) or to a file; a file that cannot be written is a usage error."""
    from pathlib import Path

    from reporter.errors import UsageError
    from reporter.safetext import echo_json

    if target == "-":
        echo_json(text)
        return
    try:
        Path(target).write_text(text + "\n", encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{target}: cannot write: {exc.strerror}") from None
