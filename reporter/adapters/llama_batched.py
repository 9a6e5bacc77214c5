"""llama.cpp's `llama-batched-bench` (JSON Lines and Markdown), for
reporter.adapters.llama_bench.

llama-batched-bench prints one JSON object per (pp, tg, pl) point through its logger, between
ordinary log lines; each point is a run of `pl` sequences decoded together in one process.
"""

from __future__ import annotations

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
    NAME,
    NO_DRAFT,
    _batched_cell,
    _cells,
    _int,
    _left_aside,
    _read_tables,
    _tables,
)
from reporter.ingest.lines import Source, text_lines
from reporter.numbers import counted
from reporter.table import Partial

WHAT_BATCHED = "llama-batched-bench point"


BATCHED = ("pl", "speed_tg", "n_kv_max", "t_tg")


def _batched_line(line: bytes) -> bool:
    return line.lstrip().startswith(b"{") and b'"speed_tg"' in line and b'"pl"' in line


def _has_batched(source: Source) -> bool:
    return any(_batched_line(line) for line in source.head(65536).split(b"\n")[:200])


def is_batched_markdown_header(line: str) -> bool:
    """The header of llama-batched-bench's Markdown table (| PP | TG | B | N_KV | …)."""
    return line.lstrip().startswith("|") and {"PP", "TG", "B", "N_KV"} <= set(_cells(line))


def _batched_tables(source: Source) -> list[tuple[int, int]]:
    """(header line, rows) of each llama-batched-bench Markdown table in a llama-bench log."""
    return _tables(source, is_batched_markdown_header)


def _read_batched(source: Source, problems: Problems, lenient: bool) -> Partial:
    records = json_lines(source, problems, keep=_batched_line)
    points = [(line, r) for line, r in records if r is not None]
    logs = len(records) - len(points)
    runs: list[dict[str, Any]] = []
    ids = unique_ids(
        [
            f"pp{_int(r.get('pp'))}+tg{_int(r.get('tg'))}:pl{_int(r.get('pl'))}"
            if isinstance(r, dict)
            else "point"
            for _, r in points
        ]
    )
    for (line, record), run_id in zip(points, ids, strict=True):
        if not isinstance(record, dict):
            problems.add(
                line,
                f"the line holds a JSON {type(record).__name__}",
                f"an object ({WHAT_BATCHED})",
            )
            continue
        run = _batched_run(record, line, run_id, source.path, problems)
        if run is not None:
            runs.append(run)
    problems.raise_unless(lenient)
    notes = [
        f"llama-batched-bench: {counted(len(runs), 'point')}; "
        f"{counted(logs, 'log line')} that are not JSON were left aside"
    ]
    return finish(source, NAME, runs, [], records=len(points), notes=notes, problems=problems)


#: llama-batched-bench's Markdown columns and the JSON Lines field each one prints: the rows
#: are `|%6d | %6d | %4d | %6d | %8.3f | %8.2f | %8.3f | %8.2f | %8.3f | %8.2f |`; builds
#: before the `T s` and `S t/s` columns printed the first eight.
BATCHED_COLUMNS = {
    "PP": "pp", "TG": "tg", "B": "pl", "N_KV": "n_kv", "T_PP s": "t_pp",
    "S_PP t/s": "speed_pp", "T_TG s": "t_tg", "S_TG t/s": "speed_tg", "T s": "t",
    "S t/s": "speed",
}  # fmt: skip


#: What the Markdown rounds, said with every audit of it.
BATCHED_MARKDOWN_SHAPE = (
    "llama-batched-bench's Markdown table: times rounded to 1 ms and rates to 0.01 t/s as "
    "printed; --output-format jsonl keeps them whole"
)


def _read_batched_markdown(source: Source, problems: Problems, lenient: bool) -> Partial:
    """One run per row of llama-batched-bench's Markdown tables, each row read as the JSON
    Lines point it prints (the settings from the line before the table)."""
    tables, others = _read_tables(text_lines(source.text()), is_batched_markdown_header)
    points: list[tuple[int, dict[str, Any]]] = []
    for table in tables:
        for number, cells in table.rows:
            if len(cells) != len(table.header):
                problems.add(
                    number,
                    f"the table row has {len(cells)} cells; expected {len(table.header)}, one "
                    "per column",
                )
                continue
            record = dict(table.settings)
            for name, cell in zip(table.header, cells, strict=True):
                if name in BATCHED_COLUMNS:
                    record[BATCHED_COLUMNS[name]] = _batched_cell(cell)
            points.append((number, record))
    ids = unique_ids(
        [f"pp{_int(r.get('pp'))}+tg{_int(r.get('tg'))}:pl{_int(r.get('pl'))}" for _, r in points]
    )
    runs = [
        run
        for (line, record), run_id in zip(points, ids, strict=True)
        if (run := _batched_run(record, line, run_id, source.path, problems)) is not None
    ]
    problems.raise_unless(lenient)
    notes = [f"llama-batched-bench: {counted(len(runs), 'point')}; {BATCHED_MARKDOWN_SHAPE}"]
    if others:
        notes.append(_left_aside("llama-batched-bench", others))
    return finish(source, NAME, runs, [], records=len(points), notes=notes, problems=problems)


def _batched_run(
    record: dict[str, Any], line: int, run_id: str, path: str, problems: Problems
) -> dict[str, Any] | None:
    f = Fields(record, line, problems, WHAT_BATCHED)
    pp = f.integer("pp", required=True)
    tg = f.integer("tg", required=True)
    pl = f.integer("pl", required=True, minimum=1)
    t_pp = f.number("t_pp", required=True, unit="seconds")
    t_tg = f.number("t_tg", required=True, unit="seconds")
    t = f.number("t", unit="seconds")
    speed_tg = f.number("speed_tg", unit="tokens per second")
    shared = f.integer("is_pp_shared")
    if not f.ok:
        return None
    assert pp is not None and tg is not None and pl is not None
    assert t_pp is not None and t_tg is not None
    wall = t if t is not None else t_pp + t_tg
    summary: dict[str, Any] = {
        "requests": pl,
        "failed": 0,
        "output_tokens": pl * tg,
        "prompt_tokens": pp if shared else pl * pp,
        "wall_s": wall,
        "sum_latency_s": pl * wall,
        "mean_ttft_s": t_pp,
        "median_ttft_s": t_pp,
        "mean_tpot_s": t_tg / tg if tg else None,
        "tool_aggregate_tps": speed_tg,
        "tool_aggregate_field": "speed_tg",
        "tool_aggregate_how": "pl × tg ÷ t_tg: the generation phase alone, without the "
        "prompt processing (t_pp)",
        "mean_output_tokens": tg,
        "min_output_tokens": tg,
        "max_output_tokens": tg,
        # every prompt goes into the one batch t_pp times, before any generation step: one
        # timing of the whole batch, and no sequence waits for a slot
        "batch_ttft_s": t_pp,
        # the prefill samples no token (it asks logits of the batch's last position only):
        # t_tg times tg steps, one per output token, the first included
        "batch_decode_steps": tg,
    }
    derived = [
        (f"{pl} sequences decoded together" if pl != 1 else "1 sequence decoded alone")
        + " in one process (no HTTP, no scheduling): an upper "
        "bound for a server",
        "Σ latency = pl × t: every sequence is in flight for the whole point",
        "time to first token = t_pp: all prompts are processed together, as one batch, before "
        "the first token",
        "per-sequence decode = tg ÷ t_tg: one token per sequence per step, tg steps after t_pp",
        "stop forced: batched-bench always generates tg tokens per sequence",
        "speed_tg counts generated tokens only; speed mixes prompt and generated tokens",
    ]
    flags = [
        f"{k}={record[k]}"
        for k in (
            "n_kv_max",
            "n_batch",
            "n_ubatch",
            "flash_attn",
            "is_pp_shared",
            "n_gpu_layers",
            "n_threads",
            "n_threads_batch",
        )
        if k in record
    ]
    return new_run(
        run_id,
        path,
        line,
        NAME,
        tool=("llama-batched-bench", None),
        engine={"name": "llama.cpp", "flags": flags},
        workload={
            "concurrency": pl,
            "stop": "forced",
            "ignore_eos": True,
            "output_tokens": tg,
            "prompt_tokens": pp,
            "context_tokens": pp,
            "speculative": {"enabled": False, "source": NO_DRAFT},
        },
        group=f"batched pp{pp} tg{tg} " + " ".join(flags),
        summary=summary,
        derived=derived,
        extra={
            "speed_pp": record.get("speed_pp"),
            "speed": record.get("speed"),
            "n_kv": record.get("n_kv"),
        },
    )
