"""The server's log says that a performance flag that was passed was refused.

## What it checks
For each run, the server log lines that concern it (`log` records of the run or of no run,
and the lines of `--server-log FILE`): whether a warning or an error refuses a feature that
the run asked for.

## Why it matters
A flag accepted is not a feature enabled. METHOD.md §3: a closed Mac engine took
`--continuous-batching 4` without complaint, logged at startup a WARNING that continuous
batching was not available for this model's architecture (hybrid recurrent + MoE), and served
every request one at a time; the sweep was flat, the flag even cost 2%. The same happened to a
prefix-cache flag. The one place that told the truth was a log line nobody read.

## How it decides
The lines searched: `log` records of the run, of no run, or of a run served by the same
server configuration (same file, engine, version, flags, model and hardware: a startup log
concerns every run it served), and every line of `--server-log`.
What the run asked for: the flags in `engine.flags` (and flags echoed in the log, such as a
command line or vLLM's "non-default args"), plus `workload.ignore_eos` / `min_tokens` (forced
length) and `workload.speculative.enabled`. Each flag is matched by name to a feature:

- continuous batching: flags `--continuous-batching`, `--cont-batching`, `-cb`,
  `--parallel N` / `-np N` (N > 1), `--max-num-seqs N`, `--max-running-requests N`,
  `--max-batch-size N`; words "continuous batching", "batching", "max_num_seqs",
  "n_parallel", "multiple sequences";
- prefix caching: flags `--prefix-cache`, `--enable-prefix-caching`, `--cache-prompt`,
  `--prompt-cache`, `--enable-radix-cache`, `--kv-cache-reuse`; words "prefix cache",
  "prompt cache", "radix cache", "KV cache reuse";
- KV cache reuse by shifting (llama.cpp's `--cache-reuse N`: chunks past the common prefix
  reused by shifting the cache): word "cache_reuse". It is not prefix caching: refused, the
  prompt cache stays on;
- speculative decoding: flags `--speculative-config`, `--speculative-model`,
  `--speculative-algorithm`, `-md`, `--model-draft`, `--draft-model`,
  `--num-speculative-tokens`, `--spec-*`; words "speculative", "spec decode", "draft model",
  "MTP", "EAGLE", "Medusa", "n-gram";
- forced length: flags `--ignore-eos`, `--min-tokens` and the workload fields; words
  "ignore_eos", "min_tokens";
- flash attention (`--flash-attn`, `-fa`) and chunked prefill (`--enable-chunked-prefill`),
  by their names.

Flags that turn a feature off (`--no-cont-batching`, `--disable-radix-cache`, value `0`/`off`)
ask for nothing. A line refuses a feature when its level is warning or error (from the record's
`level`, or guessed from the text) and one clause of it names the feature (one of its words or
the passed flag's own name) together with a refusal word: not supported, unsupported, not
available, unavailable, disabled, refused, ignored, falling back, incompatible, cannot,
overridden, only supports, and the like.

## Worked example
METHOD.md §3, case A: engine flags `--continuous-batching 4`; startup log
`WARNING: continuous batching is not available for this model: the Gated-DeltaNet hybrid
architecture keeps recurrent state for one sequence only; falling back to serial scheduling`.
Fired: continuous batching refused. The completions (5.5 / 11.1 / 16.8 / 22.5 s) and the flat
sweep (86.7 / 87.2 / 86.8 / 86.3 tok/s) confirm it (BR003, BR005, BR014).

## When it cannot decide
No log lines for the run: not applicable (pass `--server-log FILE`, or write `log` records).
A log that refuses a feature while the run records no flag asking for it: undecidable (was it
asked for?).

## What to do
After every performance flag, read the server's startup log for warnings; check that the
feature is observed in the trace (BR014: a sweep that rises, a time to first token that drops
on a repeated prompt, counters that move). Do not publish a figure "with" a refused feature.

## References
METHOD.md §3 "Slope with N"; seed 000 §3, §5, §7.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import pandas as pd

from reporter import features
from reporter.numbers import counted
from reporter.rules.base import AuditData, Finding, Rule
from reporter.types import Outcome, Severity

_ECHO_LINE = re.compile(r"\bargs\b|arguments|argv|command[ -]?line|cmdline|\bconfig\b", re.I)
_ECHO_FLAG = re.compile(r"(?<![\w-])(--[A-Za-z][\w-]+)(?:[= ]([\w./:-]+))?")
_ECHO_KEY = re.compile(r"['\"]?([a-z][a-z0-9_]{3,})['\"]?\s*[:=]\s*['\"]?([\w.]+)")


@dataclass(frozen=True)
class _Line:
    """A log line read once: its run, level, text, place, and flags it echoes."""

    run: str | None
    level: str | None
    text: str
    ref: str
    #: The file the line was read from (a trace's log record, or a --server-log file).
    path: str
    echoed: tuple[features.Flag, ...]
    #: A complaint (warning or error) with a refusal word: the only lines worth matching.
    candidate: bool


def _lines(logs: pd.DataFrame) -> list[_Line]:
    out = []
    columns = (logs[c] for c in ("run", "level", "text", "source_path", "source_line"))
    for run, level, raw, path, line in zip(*columns, strict=True):
        text = str(raw)
        where = f"{path}:{int(line)}" if line is not None and not pd.isna(line) else str(path)
        lv = features.normalise_level(level, text)
        echoed: list[str] = []
        if "--" in text:
            echoed += [
                f"{m.group(1)}={m.group(2)}" if m.group(2) else m.group(1)
                for m in _ECHO_FLAG.finditer(text)
            ]
        if _ECHO_LINE.search(text):
            echoed += [f"{m.group(1)}={m.group(2)}" for m in _ECHO_KEY.finditer(text)]
        flags = tuple(
            features.Flag(f"{f.text} (echoed at {where})", f.name, f.value)
            for f in features.parse_flags(echoed)
        )
        out.append(
            _Line(
                None if run is None or pd.isna(run) else str(run),
                lv,
                text,
                where,
                str(path),
                flags,
                lv in features.COMPLAINT_LEVELS and bool(features.REFUSAL.search(text)),
            )
        )
    return out


def check(data: AuditData) -> list[Finding]:
    lines = _lines(data.tables.logs) if len(data.tables.logs) else []
    return [_check_run(data, str(r["run"]), r, lines) for r in data.run_rows()]


def _wanted(run: Any, lines: list[_Line]) -> dict[str, list[features.Flag]]:
    flags = features.parse_flags(run.get("engine_flags") or [])
    for line in lines:
        flags += line.echoed
    wanted = features.requested(flags)
    if features.as_bool(run.get("ignore_eos")):
        wanted.setdefault("forced_length", []).append(
            features.Flag("workload.ignore_eos", "ignore-eos", "true")
        )
    min_tokens = run.get("min_tokens")
    if (
        min_tokens is not None
        and not (isinstance(min_tokens, float) and math.isnan(min_tokens))
        and float(min_tokens) > 0
    ):
        wanted.setdefault("forced_length", []).append(
            features.Flag(
                f"workload.min_tokens {int(min_tokens)}", "min-tokens", str(int(min_tokens))
            )
        )
    if features.as_bool(run.get("spec_enabled")):
        wanted.setdefault("speculation", []).append(
            features.Flag("workload.speculative.enabled", "speculative", "true")
        )
    return wanted


_EVERY = {f.key: [features.Flag(f.label, f.key, None)] for f in features.FEATURES}


def _check_run(data: AuditData, run_id: str, run: Any, lines: list[_Line]) -> Finding:
    if not lines:
        return RULE.finding(
            run_id, Outcome.NOT_APPLICABLE, "no server log: no log records and no --server-log FILE"
        )
    server = set(data.same_server(run_id))
    # a line of no run is of its own file's runs, a --server-log's of every run (run_files)
    own = str(run.get("source_path"))
    mine = [
        x
        for x in lines
        if x.run in server or (x.run is None and data.tables.speaks_for(x.path, own))
    ]
    if not mine:
        return RULE.finding(
            run_id,
            Outcome.NOT_APPLICABLE,
            "no server log lines for this run or its server (log records name other runs)",
        )
    wanted = _wanted(run, mine)
    complaints = sum(1 for x in mine if x.level in features.COMPLAINT_LEVELS)
    found: list[features.Refusal] = []
    unasked: list[features.Refusal] = []
    for line in mine:
        if not line.candidate:
            continue
        found += features.refusals(line.text, line.level, wanted, line.ref)
        unasked += [
            r
            for r in features.refusals(line.text, line.level, _EVERY, line.ref)
            if r.feature not in wanted
        ]
    searched = f"{counted(len(mine), 'log line')}, {complaints} at warning or error level"
    numbers: dict[str, Any] = {
        "lines": len(mine),
        "complaints": complaints,
        "asked": sorted(wanted),
    }
    if found:
        by_feature: dict[str, list[features.Refusal]] = {}
        for r in found:
            by_feature.setdefault(r.feature, []).append(r)
        parts = []
        for key, rs in by_feature.items():
            flag = wanted[key][0].text
            parts.append(
                f'{rs[0].label} (asked for with {flag}) at {rs[0].ref}: "{_short(rs[0].text)}"'
            )
        numbers["refused"] = sorted(by_feature)
        return RULE.finding(
            run_id,
            Outcome.FIRED,
            "the server log refuses a feature that was asked for: " + "; ".join(parts),
            arithmetic=[
                f"asked for: {_asked(wanted)}",
                f"searched {searched}",
                *(f"{r.ref} [{r.level}] {r.text}" for r in found[:8]),
            ],
            numbers=numbers,
            refs=[r.ref for r in found][:8],
            evidence=[
                {
                    "feature": r.label,
                    "flag": wanted[r.feature][0].text,
                    "level": r.level,
                    "text": r.text,
                    "ref": r.ref,
                }
                for r in found
            ],
            help="do not publish the figure as measured with this feature; fix the "
            "configuration (or the model choice) until the log is clean, then check that "
            "the feature shows in the trace",
        )
    if unasked:
        r = unasked[0]
        return RULE.finding(
            run_id,
            Outcome.UNDECIDABLE,
            f'the server log refuses {r.label} at {r.ref} ("{_short(r.text)}"), but the '
            "run records no flag asking for it (engine.flags)",
            numbers=numbers,
            refs=[x.ref for x in unasked][:8],
            help="record the server's flags in engine.flags",
        )
    if not wanted:
        return RULE.finding(
            run_id,
            Outcome.NOT_APPLICABLE,
            f"no performance flag passed (engine.flags); searched {searched}",
            numbers=numbers,
        )
    return RULE.finding(
        run_id, Outcome.PASSED, f"no refusal of {_asked(wanted)} in {searched}", numbers=numbers
    )


def _asked(wanted: dict[str, list[features.Flag]]) -> str:
    return ", ".join(f"{features.BY_KEY[k].label} ({v[0].text})" for k, v in wanted.items())


def _short(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


RULE = Rule(
    code="BR013",
    name="feature-refused-in-log",
    severity=Severity.WARNING,
    summary="server log warns that a passed performance flag was refused",
    check=check,
    doc=__doc__ or "",
)
