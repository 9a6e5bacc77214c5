"""`benchreport compare A B`: why two figures differ, factor by factor."""

from __future__ import annotations

import json

import click

from reporter import terminal
from reporter.cli.options import config_option, json_option, write_json
from reporter.safetext import visible


@click.command(name="compare", short_help="Explain why two runs' aggregates differ.")
@click.argument("run_a", metavar="A")
@click.argument("run_b", metavar="B")
@click.option(
    "-t",
    "--trace",
    "traces",
    multiple=True,
    type=click.Path(dir_okay=False),
    help="A trace file holding the runs (repeatable; every run of these files can "
    "serve as an intermediate step).",
)
@click.option(
    "--format",
    "fmt",
    default="auto",
    show_default=True,
    help="Input format of the traces; detected by default.",
)
@config_option
@json_option("the comparison")
def compare_cmd(
    run_a: str,
    run_b: str,
    traces: tuple[str, ...],
    fmt: str,
    config_path: str | None,
    json_out: str | None,
) -> None:
    """Explain the ratio A ÷ B of two runs' aggregates (total output tokens ÷ wall clock).

    A and B are run ids in the --trace files, or FILE:RUN (the file is then read too):

    \b
        benchreport compare -t case-b.jsonl code-n8 qa-n8
        benchreport compare new.jsonl:n1 old.jsonl:n1

    It prints every factor the two runs differ in (stop mode, prompt length, content,
    speculation, N, hardware, engine and version, context length, ...), whether they can be
    compared, and, when other runs of the traces change one factor at a time, the ratio split
    into those factors (METHOD.md §5: 2.10 × 1.69 = 3.54). When both runs know their bytes per
    token, the decode-rate ratio is also split into bytes per token × achieved bandwidth
    (METHOD.md §6: 1.52 × 1.56 = 2.37).
    """
    from reporter import api, compare, rules
    from reporter.model import finite_only

    # errors: exit 2 (reporter.cli.errors)
    result = api.compare(run_a, run_b, traces, fmt=fmt, config=rules.load_config(config_path))
    if json_out:
        reasons: dict[str, str] = {}
        data = finite_only(result.to_dict(), "", reasons)  # strict JSON: no NaN, no Infinity
        if reasons:
            data["null_reasons"] = reasons
        text = json.dumps(data, ensure_ascii=False, indent=2, default=_plain, allow_nan=False)
        write_json(text, json_out)
    if json_out != "-":  # the JSON on stdout stays alone there
        lines = compare.text_lines(result)
        terminal.show([visible(x, limit=None) if isinstance(x, str) else x for x in lines])


def _plain(value: object) -> object:
    return str(value)
