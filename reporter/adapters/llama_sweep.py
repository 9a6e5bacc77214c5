"""ik_llama.cpp's `llama-sweep-bench` (Markdown and JSON Lines), for reporter.adapters.llama_bench.

The tool (also ported to some llama.cpp forks) prints, after a
`main: n_kv_max = …, n_batch = …, n_ubatch = …, flash_attn = …, n_gpu_layers = …, n_threads =
…, n_threads_batch = …` line, a Markdown table `| PP | TG | N_KV | T_PP s | S_PP t/s | T_TG s |
S_TG t/s |` (`--sweep-memory` adds `RSS HWM` and `VRAM delta`). One sequence; at each context
depth N_KV (0, n_ubatch, 2 × n_ubatch, … below the context size) it first decodes TG tokens one
at a time, removes them, then processes PP = n_ubatch prompt tokens, which stay in the cache.
The two phases are timed apart and no time covers both, so a row is read as the two tests it
times, as llama-bench's `pp512 @ d N_KV` and `tg128 @ d N_KV` are: a prompt-processing run
(PP ÷ T_PP) and a single-stream decode run (TG ÷ T_TG), concurrency 1, at depth N_KV. Times are
printed to 1 ms and rates to 0.01 t/s, each rate computed from the unrounded time: a stated
rate that no time printed as T gives is named at its line and not shown as the tool's figure.
`--output-format jsonl` prints one JSON object per row through the logger instead (no table,
no settings line): the settings and `pp, tg, n_kv, t_pp, speed_pp, t_tg, speed_tg`, all `%f`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from reporter.adapters._common import (
    Fields,
    Problems,
    finish,
    json_lines,
    new_run,
    unique_ids,
)
from reporter.adapters.llama_cpp import (
    _FLOAT32_SLACK,
    _HEADING,
    NAME,
    _batched_cell,
    _cells,
    _left_aside,
    _read_tables,
    _tables,
    _test_name,
    _test_workload,
)
from reporter.ingest.lines import Source, text_lines
from reporter.numbers import counted, fmt
from reporter.table import Partial
from reporter.types import LEFT_OUT


def _sweep_line(line: bytes) -> bool:
    """A llama-sweep-bench JSON Lines point: a batched-bench point's fields but "pl"."""
    return (
        line.lstrip().startswith(b"{")
        and b'"speed_tg"' in line
        and b'"n_kv"' in line
        and b'"pl"' not in line
    )


def _is_sweep_point(r: Any) -> bool:
    return isinstance(r, dict) and all(k in r for k in SWEEP_JSONL) and "pl" not in r


def _has_sweep_points(source: Source) -> bool:
    return any(_sweep_line(line) for line in source.head(65536).split(b"\n")[:200])


#: ik_llama.cpp's llama-sweep-bench Markdown columns, in the order it prints them, and the
#: JSON Lines field of each (--output-format jsonl): the rows are
#: `|%6d | %6d | %6d | %8.3f | %8.2f | %8.3f | %8.2f |`, rates computed from the unrounded
#: times (S_PP = PP ÷ T_PP, S_TG = TG ÷ T_TG).
SWEEP_COLUMNS = {
    "PP": "pp", "TG": "tg", "N_KV": "n_kv", "T_PP s": "t_pp", "S_PP t/s": "speed_pp",
    "T_TG s": "t_tg", "S_TG t/s": "speed_tg",
}  # fmt: skip


#: The two columns --sweep-memory adds (MiB, or n/a): no figure the audit checks.
SWEEP_MEMORY = ("RSS HWM", "VRAM delta")


WHAT_SWEEP = "llama-sweep-bench row"


#: Why a llama-sweep-bench row ran without speculation.
NO_DRAFT_SWEEP = "llama-sweep-bench decodes the tokens it feeds one at a time, with no draft model"


#: Fields of a llama-sweep-bench JSON Lines point (--output-format jsonl); a batched-bench
#: point has "pl" too.
SWEEP_JSONL = ("pp", "tg", "n_kv", "t_pp", "speed_pp", "t_tg", "speed_tg")


@dataclass(frozen=True)
class _SweepShape:
    """How one of llama-sweep-bench's outputs names and rounds a row's figures."""

    #: the record key of each figure, by its JSON Lines name
    keys: Mapping[str, str]
    #: how a message names each figure
    shown: Mapping[str, str]
    #: decimals printed of a time (seconds) and of a rate (t/s)
    time_digits: int
    rate_digits: int
    what: str


SWEEP_MARKDOWN = _SweepShape(
    keys={field: column for column, field in SWEEP_COLUMNS.items()},
    shown={
        "pp": "PP",
        "tg": "TG",
        "n_kv": "N_KV",
        "t_pp": "T_PP",
        "speed_pp": "S_PP",
        "t_tg": "T_TG",
        "speed_tg": "S_TG",
    },
    time_digits=3,
    rate_digits=2,
    what=WHAT_SWEEP,
)


#: `%f` in the JSON Lines: 6 decimals of each.
SWEEP_JSON_LINES = _SweepShape(
    keys={k: k for k in SWEEP_JSONL},
    shown={k: k for k in SWEEP_JSONL},
    time_digits=6,
    rate_digits=6,
    what="llama-sweep-bench point",
)


def is_sweep_markdown_header(line: str) -> bool:
    """The header of llama-sweep-bench's Markdown table, its columns exactly (with or without
    the two of --sweep-memory)."""
    if not line.lstrip().startswith("|"):
        return False
    cells = _cells(line)
    return cells in (list(SWEEP_COLUMNS), [*SWEEP_COLUMNS, *SWEEP_MEMORY])


def _sweep_tables(source: Source) -> list[tuple[int, int]]:
    """(header line, rows) of each llama-sweep-bench Markdown table in the file."""
    return _tables(source, is_sweep_markdown_header)


def _printed_rates(tokens: int, time: float, shape: _SweepShape) -> tuple[float, float]:
    """The lowest and highest rate the tool can print beside a time printed as `time`: it
    divides `tokens` by the unrounded time, then rounds both as `shape` prints them."""
    time_half, rate_half = 0.5 * 10**-shape.time_digits, 0.5 * 10**-shape.rate_digits
    low = max(0.0, tokens / (time + time_half) * (1 - _FLOAT32_SLACK) - rate_half)
    if time <= time_half:
        return low, math.inf
    return low, tokens / (time - time_half) * (1 + _FLOAT32_SLACK) + rate_half


def _rate_check(
    line: int, shape: _SweepShape, phase: str, tokens: int, time: float, stated: float
) -> str | None:
    """None when the stated rate of `phase` ("pp" or "tg") is its tokens ÷ its time at the
    printed rounding; else why not, with the arithmetic."""
    low, high = _printed_rates(tokens, time, shape)
    if low <= stated <= high:
        return None
    rate, count, clock = (shape.shown[k] for k in (f"speed_{phase}", phase, f"t_{phase}"))
    scale, digits = 10**shape.rate_digits, shape.rate_digits
    span = (
        f"{math.floor(low * scale) / scale:.{digits}f} to "
        f"{math.ceil(high * scale) / scale:.{digits}f} t/s"
        if math.isfinite(high)
        else f"at least {math.floor(low * scale) / scale:.{digits}f} t/s"
    )
    shown_time = f"{time:.{shape.time_digits}f}"
    return (
        f"{LEFT_OUT}line {line}: {rate} {stated:.{digits}f} is not {count} ÷ {clock} at the "
        f"printed rounding: {tokens} ÷ {shown_time} s = {fmt(tokens / time, digits)} t/s, and "
        f"a time printed as {shown_time} s gives {span}; the audit's figures use {clock}, not "
        f"this {rate}"
    )


def _sweep_labels(lines: list[str], headers: list[int]) -> list[str | None]:
    """A label for each table (by the index of its header line) when a file holds more than
    one: the heading above it where the headings tell the tables apart, else its place
    ("table 2"). Tables of one paste are other builds or settings more often than repeats,
    and the table names neither."""
    if len(headers) < 2:
        return [None] * len(headers)
    headings: list[str | None] = []
    start = 0
    for header in headers:
        found = None
        for line in lines[start:header]:
            titled = _HEADING.match(line)
            if titled and (titled.group("hash") or titled.group("rule")):
                found = titled.group("hash") or titled.group("rule")
        headings.append(found)
        start = header + 1
    if all(headings) and len(set(headings)) == len(headings):
        return headings
    return [f"table {k}" for k in range(1, len(headers) + 1)]


def _read_sweep_markdown(source: Source, problems: Problems, lenient: bool) -> Partial:
    """Two runs per row of llama-sweep-bench's Markdown tables (the settings from the `main:`
    line before a table): the row's prompt and generation phases, one sequence at the row's
    context depth."""
    lines = text_lines(source.text())
    tables, others = _read_tables(lines, is_sweep_markdown_header)
    labels = _sweep_labels(lines, [t.line - 1 for t in tables])
    memory = any(len(t.header) > len(SWEEP_COLUMNS) for t in tables)
    rows: list[tuple[int, dict[str, Any], dict[str, Any], str | None]] = []
    for table, label in zip(tables, labels, strict=True):
        for number, cells in table.rows:
            if len(cells) != len(table.header):
                problems.add(
                    number,
                    f"the table row has {len(cells)} cells",
                    f"{len(table.header)}, one per column ({', '.join(table.header)})",
                )
                continue
            cell = {
                name: _batched_cell(text) for name, text in zip(table.header, cells, strict=True)
            }
            rows.append((number, cell, table.settings, label))
    runs, checks = _sweep_phases(rows, source, problems, SWEEP_MARKDOWN)
    problems.raise_unless(lenient)
    read = len(runs) // 2
    notes = [
        f"llama-sweep-bench: {counted(read, 'row')} read as {counted(len(runs), 'run')}, "
        "each row's prompt phase (PP ÷ T_PP) and generation phase (TG ÷ T_TG), which the "
        "tool times apart; one sequence at context depth N_KV (the runs' n_depth); times "
        "rounded to 1 ms and rates to 0.01 t/s as printed; a row is one measurement (newer "
        "builds' -nrep averages the first row's, which the table does not show)"
    ]
    if runs and not checks:
        notes.append(
            f"llama-sweep-bench: S_PP and S_TG of {'the row' if read == 1 else 'every row'} "
            "agree with PP ÷ T_PP and TG ÷ T_TG at the printed rounding"
        )
    notes.extend(checks)
    if memory:
        notes.append("llama-sweep-bench: the RSS HWM and VRAM delta columns are not read")
    if others:
        notes.append(_left_aside("llama-sweep-bench", others))
    return finish(source, NAME, runs, [], records=len(rows), notes=notes, problems=problems)


def _read_sweep_json_lines(source: Source, problems: Problems, lenient: bool) -> Partial:
    """Two runs per point of llama-sweep-bench's --output-format jsonl, as for a row of its
    table; the points are printed through its logger, between ordinary log lines."""
    records = json_lines(source, problems, keep=_sweep_line)
    points = [(line, r) for line, r in records if r is not None]
    objects: list[tuple[int, dict[str, Any], dict[str, Any], str | None]] = []
    for line, record in points:
        if not isinstance(record, dict):
            problems.add(
                line,
                f"the line holds a JSON {type(record).__name__}",
                f"an object ({SWEEP_JSON_LINES.what})",
            )
            continue
        objects.append((line, record, record, None))  # a point holds its own settings
    runs, checks = _sweep_phases(objects, source, problems, SWEEP_JSON_LINES)
    problems.raise_unless(lenient)
    read = len(runs) // 2
    notes = [
        f"llama-sweep-bench: {counted(read, 'point')} read as {counted(len(runs), 'run')}, "
        "each point's prompt phase (pp ÷ t_pp) and generation phase (tg ÷ t_tg), which the "
        "tool times apart; one sequence at context depth n_kv (the runs' n_depth); times and "
        "rates printed to 6 decimals; a point is one measurement (newer builds' -nrep "
        "averages the first point's, which the file does not show)"
    ]
    if runs and not checks:
        notes.append(
            f"llama-sweep-bench: speed_pp and speed_tg of "
            f"{'the point' if read == 1 else 'every point'} agree with pp ÷ t_pp and tg ÷ t_tg "
            "at the printed rounding"
        )
    notes.extend(checks)
    logs = len(records) - len(points)
    if logs:
        notes.append(f"llama-sweep-bench: {counted(logs, 'log line')} that are not JSON left aside")
    return finish(source, NAME, runs, [], records=len(points), notes=notes, problems=problems)


def _sweep_phases(
    points: list[tuple[int, dict[str, Any], dict[str, Any], str | None]],
    source: Source,
    problems: Problems,
    shape: _SweepShape,
) -> tuple[list[dict[str, Any]], list[str]]:
    """The runs of llama-sweep-bench's rows or points, (line, figures, settings, label) each
    (`_sweep_runs`), with ids told apart, and the notes on stated rates their times do not
    give."""
    runs: list[dict[str, Any]] = []
    checks: list[str] = []
    for line, figures, settings, label in points:
        phases, disagree = _sweep_runs(figures, settings, label, line, source, problems, shape)
        runs.extend(phases)
        checks.extend(disagree)
    # a paste may hold a row twice: its runs are told apart as llama-bench's are
    for run, run_id in zip(runs, unique_ids([str(r["run"]) for r in runs]), strict=True):
        run["run"] = run_id
    return runs, checks


def _sweep_runs(
    cell: dict[str, Any],
    settings: dict[str, Any],
    label: str | None,
    line: int,
    source: Source,
    problems: Problems,
    shape: _SweepShape = SWEEP_MARKDOWN,
) -> tuple[list[dict[str, Any]], list[str]]:
    """One llama-sweep-bench row as the two tests it times, each alone and at context N_KV:
    its prompt phase (a prompt-processing run, PP ÷ T_PP) and its generation phase (a decode
    run of one sequence, TG ÷ T_TG), as llama-bench's pp and tg tests at a depth are; and
    the notes on its stated rates that its times do not give. `cell` holds the row's figures
    under the names `shape` gives them."""
    f = Fields(cell, line, problems, shape.what)
    key = shape.keys
    pp = f.integer(key["pp"], required=True, minimum=1)
    tg = f.integer(key["tg"], required=True, minimum=1)
    n_kv = f.integer(key["n_kv"], required=True)
    t_pp = f.number(key["t_pp"], required=True, unit="seconds")
    speed_pp = f.number(key["speed_pp"], required=True, unit="tokens per second")
    t_tg = f.number(key["t_tg"], required=True, unit="seconds")
    speed_tg = f.number(key["speed_tg"], required=True, unit="tokens per second")
    for name, time in ((key["t_pp"], t_pp), (key["t_tg"], t_tg)):
        if time == 0:
            # below the printed digits: no rate can be recomputed from it
            problems.add(line, f'"{name}" is 0', f"a time above 0 seconds ({shape.what})")
            f.ok = False
    if not f.ok:
        return [], []
    assert pp is not None and tg is not None and n_kv is not None
    assert t_pp is not None and t_tg is not None
    assert speed_pp is not None and speed_tg is not None
    pp_check = _rate_check(line, shape, "pp", pp, t_pp, speed_pp)
    tg_check = _rate_check(line, shape, "tg", tg, t_tg, speed_tg)
    flags = [
        f"{k}={settings[k]}"
        for k in (
            "n_kv_max",
            "n_batch",
            "n_ubatch",
            "flash_attn",
            "n_gpu_layers",
            "n_threads",
            "n_threads_batch",
        )
        if k in settings
    ]
    suffix = f":label={label.replace(' ', '_')}" if label else ""
    alone = (
        "1 sequence in one process (no HTTP, no scheduling): a single-stream figure, no "
        "concurrent throughput"
    )
    prompt_run = _sweep_phase(
        f"{_test_name(pp, 0, n_kv)}{suffix}",
        source.path,
        line,
        flags,
        label,
        n_prompt=pp,
        n_gen=0,
        depth=n_kv,
        seconds=t_pp,
        # a stated rate that its own row's times do not give is no figure of the tool's
        stated=(speed_pp if pp_check is None else None, shape.shown["speed_pp"]),
        derived=[
            alone,
            f"PP = {pp} prompt tokens processed after the N_KV = {n_kv} tokens already in the "
            "cache (not in this phase's time), timed alone, after the row's generation phase",
            "wall clock = T_PP, the prompt phase alone; its figure is PP ÷ T_PP",
        ],
    )
    decode_run = _sweep_phase(
        f"{_test_name(0, tg, n_kv)}{suffix}",
        source.path,
        line,
        flags,
        label,
        n_prompt=0,
        n_gen=tg,
        depth=n_kv,
        seconds=t_tg,
        stated=(speed_tg if tg_check is None else None, shape.shown["speed_tg"]),
        derived=[
            alone,
            f"TG = {tg} tokens decoded one at a time after the N_KV = {n_kv} tokens already in "
            "the cache (not in this phase's time), then removed before the prompt phase",
            "wall clock = T_TG, the generation phase alone; its figure is TG ÷ T_TG",
            "stop forced: llama-sweep-bench always decodes TG tokens, random ones it feeds itself",
        ],
    )
    return [prompt_run, decode_run], [t for t in (pp_check, tg_check) if t is not None]


def _sweep_phase(
    run_id: str,
    path: str,
    line: int,
    flags: list[str],
    label: str | None,
    *,
    n_prompt: int,
    n_gen: int,
    depth: int,
    seconds: float,
    stated: tuple[float | None, str],
    derived: list[str],
) -> dict[str, Any]:
    """One timed phase of a llama-sweep-bench row as a run of one request, shaped as
    llama-bench's test of the same tokens at that depth (`_test_run`)."""
    summary: dict[str, Any] = {
        "requests": 1,
        "failed": 0,
        "output_tokens": n_gen,
        "prompt_tokens": n_prompt,
        "wall_s": seconds,
        "sum_latency_s": seconds,
        "tool_aggregate_tps": stated[0],
        "tool_aggregate_field": stated[1],
        "mean_output_tokens": n_gen,
        "min_output_tokens": n_gen,
        "max_output_tokens": n_gen,
        "mean_tpot_s": seconds / n_gen if n_gen else None,
    }
    return new_run(
        run_id,
        path,
        line,
        NAME,
        tool=("llama-sweep-bench", None),
        engine={"name": "llama.cpp", "flags": flags},
        # as for llama-bench's tests: the context at the first decoded token, or after the
        # prompt
        workload=_test_workload(n_prompt, n_gen, depth, NO_DRAFT_SWEEP),
        summary=summary,
        # a group of its own: the rows of a sweep differ in context, and are no repeats
        group=" ".join(["llama-sweep-bench", _test_name(n_prompt, n_gen, depth), *flags])
        + (f" ({label})" if label else ""),
        derived=derived,
        extra={
            "test": _test_name(n_prompt, n_gen, depth),
            "n_depth": depth,
            **({"label": label} if label else {}),
        },
        concurrency_derived=True,
    )
