"""What llama.cpp's benchmark tools print alike, read for llama-bench, llama-batched-bench
and llama-sweep-bench (reporter.adapters.llama_bench and the modules beside it): Markdown
tables and the settings line above them, test names, and the workload of a single-stream test.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from reporter.ingest.lines import Source, text_lines
from reporter.numbers import counted
from reporter.values import numeric_text

NAME = "llama-bench"


#: Why a llama-bench or llama-batched-bench point ran without speculation.
NO_DRAFT = "llama-bench and llama-batched-bench load no draft model"


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _is_separator(line: str) -> bool:
    cells = _cells(line)
    return bool(cells) and all(re.fullmatch(r":?-+:?", c) for c in cells)


#: A heading above a table in a runner's log: `### GPU 0 ONLY ###`, `# Vulkan`, `=== CPU ===`.
_HEADING = re.compile(r"^\s*(?:#+\s*(?P<hash>.*?)\s*#*|={2,}\s*(?P<rule>.*?)\s*={2,})\s*$")


def _tables(source: Source, is_header: Callable[[str], bool]) -> list[tuple[int, int]]:
    """(header line, rows) of each Markdown table in the file whose header `is_header`: its
    rows are the `|` lines after the header and its separator."""
    out: list[tuple[int, int]] = []
    lines = text_lines(source.text())
    for i, line in enumerate(lines):
        if is_header(line):
            rows = 0
            for later in lines[i + 2 :]:
                if not later.lstrip().startswith("|"):
                    break
                rows += 1
            out.append((i + 1, rows))
    return out


def _spans(numbers: list[int]) -> str:
    """1, 2, 3, 7 → '1–3, 7'."""
    spans: list[list[int]] = []
    for n in numbers:
        if spans and n == spans[-1][1] + 1:
            spans[-1][1] = n
        else:
            spans.append([n, n])
    return ", ".join(f"{a}–{b}" if b > a else f"{a}" for a, b in spans)


def _left_aside(tool: str, others: list[int]) -> str:
    """The note on the lines around a tool's Markdown tables that are not rows of them."""
    return (
        f"{tool}: {counted(len(others), 'line')} around the tables left aside "
        f"(line{'s' if len(others) > 1 else ''} {_spans(others)}: log output, the settings "
        "line read for the table's settings)"
    )


def _test_name(n_prompt: int, n_gen: int, depth: int) -> str:
    parts = []
    if n_prompt:
        parts.append(f"pp{n_prompt}")
    if n_gen:
        parts.append(f"tg{n_gen}")
    name = "+".join(parts) or "empty"
    return f"{name}@d{depth}" if depth else name


def _test_workload(n_prompt: int, n_gen: int, depth: int, no_draft: str) -> dict[str, Any]:
    """The workload of one single-stream test of `n_prompt` prompt tokens and `n_gen`
    decoded ones after `depth` tokens already in the cache (`no_draft`: why without
    speculation)."""
    return {
        "concurrency": 1,
        "stop": "forced",
        "ignore_eos": True,
        "output_tokens": n_gen or None,
        "prompt_tokens": n_prompt,
        "context_tokens": depth + n_prompt,
        "speculative": {"enabled": False, "source": no_draft},
        "phase": _phase(n_prompt, n_gen),
    }


def _phase(n_prompt: int, n_gen: int) -> str | None:
    """What the test times: prompt processing (pp), generation (tg), or both (pp+tg)."""
    if n_prompt and n_gen:
        return "prompt+generation"
    if n_prompt:
        return "prompt"
    return "generation" if n_gen else None


def _int(value: Any) -> int:
    """A whole number for a run's name; 0 for what is not one (the field checks word it)."""
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return int(value)
    return 0


#: The settings line llama-batched-bench prints before its table ("main:" in older builds).
BATCHED_SETTINGS = re.compile(r"\s*(?:main|llama_batched_bench):\s+(n_kv_max\s*=.*)")


def _head_text(source: Source) -> str:
    return source.head(1 << 16).decode("utf-8", "replace")


def _batched_settings(text: str) -> dict[str, Any]:
    """`n_kv_max = 8192, n_batch = 2048, …` as the JSON Lines fields of the same names."""
    settings: dict[str, Any] = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        if sep and re.fullmatch(r"[a-z_]+", key.strip()):
            settings[key.strip()] = _batched_cell(value)
    return settings


def _batched_cell(text: str) -> Any:
    """A cell as the JSON Lines would hold it: a number, or the text (the checks word it)."""
    number = numeric_text(text)
    return text.strip() if number is None else number


@dataclass
class _MarkdownTable:
    """One Markdown table of a llama.cpp tool's output: its header's line number and cells,
    the settings of the last `main: n_kv_max = …` line before it, and its rows (line number,
    cells)."""

    line: int
    header: list[str]
    settings: dict[str, Any]
    rows: list[tuple[int, list[str]]]


def _read_tables(
    lines: list[str], is_header: Callable[[str], bool]
) -> tuple[list[_MarkdownTable], list[int]]:
    """Each Markdown table whose header `is_header` (its rows: the `|` lines after the header
    and its separator), and the numbers of the other lines that are not blank."""
    settings: dict[str, Any] = {}
    tables: list[_MarkdownTable] = []
    others: list[int] = []
    number = 0
    while number < len(lines):
        line = lines[number]
        number += 1
        found = BATCHED_SETTINGS.fullmatch(line)
        if found:
            settings = _batched_settings(found.group(1))
        if not is_header(line):
            if line.strip():
                others.append(number)
            continue
        table = _MarkdownTable(number, _cells(line), settings, [])
        if number < len(lines) and _is_separator(lines[number]):
            number += 1
        while number < len(lines) and lines[number].lstrip().startswith("|"):
            table.rows.append((number + 1, _cells(lines[number])))
            number += 1
        tables.append(table)
    return tables, others


#: The tool divides in single precision: a millionth of slack on each bound.
_FLOAT32_SLACK = 1e-6
