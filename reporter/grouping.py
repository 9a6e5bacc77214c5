"""Which runs form one sweep: the same model, engine, hardware and workload, whatever file
each came from, differing only in their load (concurrency or request rate) or repeat.

Tools write one file per point (vLLM `--save-result`), or append every point to one file
(SGLang); either way, the runs of one sweep are the ones that share every setting. Runs
taken in sessions far apart (the `date` a tool records) are separate series even when the
file records no difference: a server may have been reconfigured in between, and the file
would not say so.

`group_by` chooses: "settings" (the default, across files), "file" (one file's runs only,
the behaviour before sweeps across files), "run" (every run alone).
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

from reporter.numbers import counted

#: How runs may be grouped (the CLI's --group-by choices).
GROUP_BY = ("settings", "file", "run")

#: Run fields that describe the setting a run was measured under, with how they read.
SETTING_FIELDS = (
    ("model_name", "model"),
    ("engine_name", "engine"),
    ("engine_version", "engine version"),
    ("hardware_name", "hardware"),
    ("quant", "quantization"),
    ("stop", "stop mode"),
    ("content", "content"),
    ("spec_enabled", "speculation"),
    ("output_tokens_requested", "output length"),
    ("prompt_tokens", "prompt length"),
    ("context_tokens", "context length"),
    ("temperature", "temperature"),
    ("tool_name", "tool"),
    ("format", "format"),
)
#: Tool fields kept in a run's `extra` that name its workload or deployment, for every tool.
SETTING_EXTRA = (
    "dataset_name",
    "random_range_ratio",
    "random_input_len",
    "random_output_len",
    "backend",
    "endpoint_type",
    "tokenizer_id",
    "burstiness",
    "label",
    "streaming",
)
#: vLLM `extra` keys that vary per point or say nothing of the setting (every other key a
#: vLLM file carries in `extra` is a `--metadata` pair or a swept parameter: a setting).
VLLM_PER_POINT = {
    "date",
    "num_prompts",
    "request_rate",
    "max_concurrency",
    "run_number",
    "per_request_lists",
    "max_output_tokens_per_s",
    "request_goodput:",
    "request_rate_inf",
    "source_format",
    "concurrency_derived",
    # a multi-turn run's load and its counts (vLLM's multi-turn benchmark)
    "multi_turn_concurrency",
    "num_conversations",
    "conversations_completed",
    "conversations_failed",
    "avg_turns_completed",
    "avg_conversation_duration_ms",
    # names of the native record's own parts: a --metadata pair of that name repeats a run
    # field (model=...) and a converted file cannot keep it beside the record
    "model",
    "engine",
    "tool",
    "hardware",
    "workload",
    "id",
    "group",
    "schema",
}
#: The keys of an SGLang line that its adapter keeps in `extra` as they are.
SGLANG_RECORD_KEYS = (
    "tag", "backend", "dataset_name", "random_input_len", "random_output_len",
    "random_range_ratio", "sharegpt_output_len", "fixed_output_len", "accept_length",
)  # fmt: skip
#: Every key SGLang's adapter writes in `extra` itself (any other is a key bench_serving
#: does not write, a fork's or a wrapper's: a setting).
SGLANG_OWN = {
    *SGLANG_RECORD_KEYS,
    "request_rate", "total_output_tokens_retokenized", "per_request_lists", "source_format",
    # bench_one_batch: measurements of the batch, not settings
    "last_ttft", "last_gen_throughput", "acc_length", "cache_hit_rate", "prefill_rate",
}  # fmt: skip
#: Runs further apart than this (by the date the tool wrote) are separate series.
SESSION_GAP_H = 6.0


def scalar(value: Any) -> bool:
    """A JSON scalar (or null): a value a setting can be."""
    return value is None or isinstance(value, str | int | float | bool)


#: Tool fields compared as their own factors (reporter.compare), not as deployment settings.
_OWN_FACTORS = {"dataset_name", "random_range_ratio"}


#: The lengths of a random dataset, which SGLang writes at their defaults whatever the dataset.
RANDOM_LENGTH_KEYS = frozenset({"random_range_ratio", "random_input_len", "random_output_len"})


def unused_keys(extra: Mapping[str, Any]) -> frozenset[str]:
    """Tool fields that describe nothing that was sent: a random dataset's lengths, when the
    dataset named is another one (sharegpt, autobench, …)."""
    dataset = extra.get("dataset_name")
    if isinstance(dataset, str) and not dataset.startswith("random"):
        return RANDOM_LENGTH_KEYS
    return frozenset()


def tool_settings(row: Mapping[Any, Any] | pd.Series) -> list[tuple[str, str]]:
    """(key, value) of the settings a tool recorded beside a run, beyond the run fields."""
    extra = row.get("extra") or {}
    if not isinstance(extra, dict):
        return []
    keys = set(SETTING_EXTRA) & set(extra)
    # a converted file keeps the tool's name beside the run (source_format)
    fmt = extra.get("source_format") or row.get("format")
    if fmt == "vllm":
        keys |= {k for k, v in extra.items() if k not in VLLM_PER_POINT and scalar(v)}
    elif fmt == "sglang":
        keys |= {k for k, v in extra.items() if k not in SGLANG_OWN and scalar(v)}
    # a random dataset's lengths are the run's prompt and output lengths, not a deployment's
    keys -= _OWN_FACTORS | RANDOM_LENGTH_KEYS
    return [(k, str(extra[k])) for k in sorted(keys) if scalar(extra[k]) and extra[k] is not None]


def pacing(row: Mapping[Any, Any]) -> str:
    """ "open loop" for a run whose requests were sent on a schedule: at a finite request rate,
    or all at once (rate inf with no concurrency limit stated: a rate sweep's last point);
    else "" (a closed loop at N, or not recorded). A sweep over N and one over the rate are
    separate series."""
    try:
        rate = float(row.get("request_rate"))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return ""
    stated = row.get("concurrency")
    limited = stated is not None and stated == stated and not row.get("concurrency_derived")
    return "open loop" if rate > 0 and (math.isfinite(rate) or not limited) else ""


def _setting_text(value: Any) -> str:
    if isinstance(value, bool | np.bool_):
        return "on" if value else "off"  # the only boolean setting: speculation
    return str(value)


def setting_items(row: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, value) of every setting of a run, the ones two runs of a sweep share."""
    items = [(label, _setting_text(row.get(key))) for key, label in SETTING_FIELDS]
    flags = row.get("engine_flags") or []
    items.append(("engine flags", ",".join(sorted(map(str, flags)))))
    extra = row.get("extra") or {}
    if isinstance(extra, dict):
        items += [(k, str(extra.get(k))) for k in sorted(_OWN_FACTORS - unused_keys(extra))]
    return items + tool_settings(row)


def _when(row: dict[str, Any]) -> dt.datetime | None:
    return tool_date(row.get("extra"))


def tool_date(extra: Any) -> dt.datetime | None:
    """The `date` a tool wrote in a run's settings, read to the second (vLLM writes it when
    the run has ended, in local time); None where there is none or it does not read."""
    text = extra.get("date") if isinstance(extra, dict) else None
    if not isinstance(text, str):
        return None
    for form in ("%Y%m%d-%H%M%S", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S"):
        try:
            return dt.datetime.strptime(text[:19], form)
        except ValueError:
            continue
    return None


def _file(row: dict[str, Any]) -> str:
    return str(row.get("source_path") or "")


def _stem(path: str) -> str:
    return path.rsplit("/", 1)[-1]


#: Runs of one setting whose measured mean prompts (or outputs) differ by more than this
#: factor read different prompt sets (a sample of one dataset varies far less): kept apart.
LENGTH_SPLIT = 1.5
#: The lengths compared: (key of the measured means, run field that states it, label).
_LENGTHS = (
    ("prompt", "prompt_tokens", "prompt"),
    ("output", "output_tokens_requested", "output"),
)


def _by_length(
    rows: list[dict[str, Any]], measured: Mapping[str, float], stated: str, label: str
) -> list[tuple[list[dict[str, Any]], str]]:
    """Runs that state no such length, split where their measured means differ by more than
    LENGTH_SPLIT; each part with the measured range, for the reason."""
    if any(r.get(stated) is not None and r.get(stated) == r.get(stated) for r in rows):
        return [(rows, "")]
    known = sorted(
        ((measured[str(r["run"])], r) for r in rows if str(r["run"]) in measured),
        key=lambda x: x[0],
    )
    if not known:
        return [(rows, "")]
    parts: list[list[tuple[float, dict[str, Any]]]] = [[known[0]]]
    for value, row in known[1:]:
        if value > parts[-1][0][0] * LENGTH_SPLIT:
            parts.append([])
        parts[-1].append((value, row))
    unknown = [r for r in rows if str(r["run"]) not in measured]
    out = []
    for i, part in enumerate(parts):
        lo, hi = part[0][0], part[-1][0]
        span = f"{lo:,.0f}" if round(lo) == round(hi) else f"{lo:,.0f}–{hi:,.0f}"
        members = [r for _, r in part] + (unknown if i == 0 and len(parts) == 1 else [])
        text = f"measured mean {label} {span} tokens"
        if unknown and len(parts) == 1:
            text += f" ({counted(len(unknown), 'run')} without {label} counts)"
        out.append((members, text))
    if unknown and len(parts) > 1:
        out.append((unknown, f"{label} lengths not counted"))
    return out


def _by_lengths(
    rows: list[dict[str, Any]], measured: Mapping[str, Mapping[str, float]]
) -> list[tuple[list[dict[str, Any]], str]]:
    """Runs split by each measured length in turn (prompt, then output); the reasons joined."""
    parts: list[tuple[list[dict[str, Any]], str]] = [(rows, "")]
    for key, stated, label in _LENGTHS:
        means = measured.get(key, {})
        parts = [
            (sub, "; ".join(x for x in (why, more) if x))
            for part, why in parts
            for sub, more in _by_length(part, means, stated, label)
        ]
    return parts


def assign(
    runs: list[dict[str, Any]],
    group_by: str = "settings",
    measured: Mapping[str, Mapping[str, float]] | None = None,
) -> dict[str, str]:
    """Set `group` on every run without one; returns group name → why its runs are together.
    `measured`: each run's measured mean prompt and output lengths ("prompt", "output": run
    id → tokens), which split runs of one stated setting that read different prompt sets."""
    reasons: dict[str, str] = {}
    pending = [r for r in runs if r.get("group") is None]
    for row in runs:
        if row.get("group") is not None:
            reasons.setdefault(str(row["group"]), "named by the file")
    buckets: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for row in pending:
        items = (*setting_items(row), ("pacing", pacing(row)))
        if group_by == "file":
            key: tuple[Any, ...] = (_file(row), items)
        elif group_by == "run":
            key = (str(row.get("run")),)
        else:
            key = items
        buckets.setdefault(key, []).append(row)
    series: list[tuple[list[dict[str, Any]], str, str]] = []
    for rows in buckets.values():
        for by_length, lengths in (
            _by_lengths(rows, measured or {}) if group_by != "run" else [(rows, "")]
        ):
            for part, split in _sessions(by_length):
                series.append((part, split, lengths))
    # numbered by first appearance, as the files were given
    order = {id(r): i for i, r in enumerate(pending)}
    series.sort(key=lambda s: min(order[id(r)] for r in s[0]))
    for k, (rows, split, lengths) in enumerate(series, start=1):
        files = sorted({_file(r) for r in rows})
        first = _stem(_file(rows[0]))
        name = f"{first}#{k}" if len(files) == 1 else f"{len(files)} files from {first}#{k}"
        for row in rows:
            row["group"] = name
            row["group_explicit"] = False
        reasons[name] = _reason(rows, files, group_by, split, lengths)
    return reasons


def _sessions(rows: list[dict[str, Any]]) -> list[tuple[list[dict[str, Any]], str]]:
    """Split runs whose dates lie more than SESSION_GAP_H apart into separate series."""
    dated = [(w, r) for r in rows if (w := _when(r)) is not None]
    if len(dated) != len(rows) or len(rows) < 2:
        return [(rows, "")]
    dated.sort(key=lambda x: x[0])
    parts: list[list[tuple[dt.datetime, dict[str, Any]]]] = [[dated[0]]]
    for when, row in dated[1:]:
        if (when - parts[-1][-1][0]).total_seconds() > SESSION_GAP_H * 3600:
            parts.append([])
        parts[-1].append((when, row))
    if len(parts) == 1:
        return [(rows, "")]
    out = []
    for part in parts:
        start, end = part[0][0], part[-1][0]
        out.append(
            (
                [r for _, r in part],
                f"one session ({start:%Y-%m-%d %H:%M} – {end:%H:%M}); runs more than "
                f"{SESSION_GAP_H:g} h apart are separate series (the server may have been "
                "reconfigured between them, which the files do not record)",
            )
        )
    return out


#: What makes runs alike that a file may leave out: (run field, how it reads).
_NAMED = (("model_name", "model"), ("engine_name", "engine"), ("hardware_name", "hardware"))


def unrecorded(rows: Sequence[Mapping[Any, Any] | pd.Series]) -> list[str]:
    """Which of model, engine and hardware none of `rows` records: runs alike in every setting
    their files record may still differ in these (a client's result file names no server)."""
    return [
        label
        for key, label in _NAMED
        if all(r.get(key) is None or r.get(key) != r.get(key) or r.get(key) == "" for r in rows)
    ]


def unrecorded_text(rows: Sequence[Mapping[Any, Any] | pd.Series]) -> str:
    """' (they record no engine or hardware)', or '' when the files record all three."""
    unnamed = unrecorded(rows)
    return f" (they record no {_joined(unnamed)})" if unnamed else ""


def _joined(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def _open_loop(rows: list[dict[str, Any]]) -> str:
    """How an open-loop series sent its requests: at a rate, all at once, or both."""
    at_once = {math.isinf(float(r["request_rate"])) for r in rows}
    if at_once == {True}:
        return "every request sent at once (request rate inf, no concurrency limit)"
    if at_once == {False}:
        return "open loop (requests sent at a request rate)"
    return "open loop (requests sent at a request rate, or all at once)"


def _reason(
    rows: list[dict[str, Any]], files: list[str], group_by: str, split: str, measured: str = ""
) -> str:
    if group_by == "run":
        return "--group-by run: every run alone"
    shared = [
        f"{label} {value}"
        for label, value in setting_items(rows[0])
        if value not in ("None", "", "unknown", "nan")
    ]
    if measured:
        shared.append(measured)
    if pacing(rows[0]):
        shared.append(_open_loop(rows))
    where = "one file" if len(files) == 1 else f"{len(files)} files"
    if len(rows) == 1:  # nothing shared with another run
        text = f"1 run from {where}" + (" (" + "; ".join(shared) + ")" if shared else "")
    else:
        text = f"{counted(len(rows), 'run')} from {where} sharing every setting"
        if shared:
            text += " (" + "; ".join(shared) + ")"
        text += ", differing only in load or repeat"
    unnamed = unrecorded(rows)
    if len(rows) > 1 and unnamed:
        # "every setting" is every one the files record: say which they do not
        text += f"; {'the files record' if len(files) > 1 else 'the file records'} no " + (
            _joined(unnamed)
        )
    if group_by == "file":
        text += "; --group-by file: runs of other files kept apart"
    if split:
        text += f"; {split}"
    return text
