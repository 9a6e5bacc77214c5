"""NVIDIA AIPerf exports: `profile_export.jsonl` (one record per request), and the summary
`profile_export_aiperf.json` / `profile_export_aiperf.csv`.

Records carry epoch-nanosecond clocks (`request_start_ns`, `request_end_ns`); they are made
relative to the run's first send by integer subtraction before becoming float seconds, so
nothing is lost. Per-request metrics are `{value, unit}` pairs in milliseconds and tokens;
`inter_chunk_latency` gaps are per SSE chunk, not per token. Records of the warm-up phase are
left out and counted.

The summary holds one statistics object per metric; since schema 1.1 each has a `sum`, and
`output_token_throughput_per_user.sum` is a sum of per-request rates (the trap: 233 110
"tokens/sec/user" for a true 1 792 tok/s); it is kept as the sum of reported rates, and the
honest aggregate is recomputed from `total_osl` ÷ `benchmark_duration`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import accumulate
from pathlib import Path
from typing import Any

import orjson

from reporter.adapters._common import (
    Fields,
    Problems,
    container_lines,
    csv_head,
    csv_rows,
    document,
    epoch_ns_seconds,
    fail,
    finish,
    get,
    json_lines,
    line_of,
    new_run,
    obj,
    parse_value,
    shown,
    stop_mode,
    unique_ids,
)
from reporter.errors import Problem, TraceError
from reporter.ingest.lines import Source
from reporter.numbers import counted
from reporter.table import Partial
from reporter.values import MAX_INT64, finite_number, whole

NAME = "aiperf"
WHAT = "AIPerf record"
WHAT_SUMMARY = "AIPerf summary"
_TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "sec": 1.0}
#: CSV display names that do not reduce to the JSON tag by lower-casing and underscoring.
_CSV_ALIASES = {
    "total_output_sequence_length": "total_osl",
    "total_input_sequence_length": "total_isl",
    "http_waiting_(ttfb)": "http_req_waiting",
    "goodrequestfraction": "good_request_fraction",
    "osl_mismatch_diff_%": "osl_mismatch_diff_pct",
    "osl_mismatch_diff": "osl_mismatch_diff_pct",  # newer AIPerf drops the "%" of its header
}
#: Metric tags of AIPerf's first releases (its `MetricTag` enum, mid-2025) → today's tags; a
#: record or summary written with the old names reads as one written with the new.
OLD_TAGS = {
    "ttft": "time_to_first_token",
    "ttst": "time_to_second_token",
    "itl": "inter_token_latency",
    "isl": "input_sequence_length",
    "osl": "output_sequence_length",
    "min_request": "min_request_timestamp",
    "max_response": "max_response_timestamp",
}
#: Sibling files larger than this are not read (an inputs.json holds every prompt sent).
SIBLING_LIMIT_BYTES = 256 << 20
#: File stems AIPerf always writes: a run is then named after its artifact folder instead.
_DEFAULT_STEMS = ("profile_export", "profile_export_raw")
#: Keys that make a file look like this format (to rank the "could not tell" candidates).
DETECT_KEYS = (
    "metadata",
    "metrics",
    "aiperf_version",
    "schema_version",
    "benchmark_duration",
    "output_token_throughput",
    "request_count",
    "Metric",
    "avg",
    "min",
    "max",
)


def _is_record(r: Any) -> bool:
    return (
        isinstance(r, dict)
        and isinstance(r.get("metadata"), dict)
        and isinstance(r.get("metrics"), dict)
        and ("request_start_ns" in r["metadata"] or "timestamp_ns" in r["metadata"])
    )


def _is_aggregate(r: Any) -> bool:
    """`profile_export_aiperf_aggregate.json` (statistics across the profile runs of one
    setting) or `profile_export_aiperf_sweep.json` (one entry per swept setting)."""
    if not isinstance(r, dict):
        return False
    kind = r.get("aggregation_type") or get(r, "metadata", "aggregation_type")
    return isinstance(kind, str) and (
        isinstance(r.get("metrics"), dict) or isinstance(r.get("per_combination_metrics"), list)
    )


def _is_inputs(r: Any) -> bool:
    """`inputs.json`: the payloads AIPerf sent, `{"data": [{"session_id", "payloads"}]}`."""
    data = r.get("data") if isinstance(r, dict) else None
    return (
        isinstance(data, list)
        and bool(data)
        and isinstance(data[0], dict)
        and isinstance(data[0].get("payloads"), list)
        and "session_id" in data[0]
    )


def _is_summary(r: Any) -> bool:
    if not isinstance(r, dict) or _is_aggregate(r):
        return False
    if "aiperf_version" in r or (
        "schema_version" in r and isinstance(r.get("output_token_throughput"), dict)
    ):
        return True
    # 2025 exports: {"records": {tag: {tag, header, unit, avg, ...}}, "input_config": ...}
    records = r.get("records")
    return (
        isinstance(records, dict)
        and "input_config" in r
        and isinstance(records.get("request_latency", records.get("benchmark_duration")), dict)
    )


def _is_csv(source: Source) -> bool:
    head = csv_head(source)
    return head[:4] == ["Metric", "avg", "min", "max"] or _csv_kind(head) is not None


#: Header of `profile_export_aiperf_aggregate.csv` (statistics across profile runs).
AGGREGATE_CSV_HEADER = ["metric", "mean", "std", "min", "max", "cv", "se", "ci_low", "ci_high"]
#: The five columns AIPerf's sweep CSV writes for each metric key, in this order.
SWEEP_CSV_STATS = ("mean", "std", "min", "max", "cv")


def _csv_kind(head: list[str]) -> str | None:
    """'aggregate' or 'sweep' for AIPerf's multi-run CSV exports, else None. The sweep CSV
    writes `<key>_mean,<key>_std,<key>_min,<key>_max,<key>_cv` for each metric key."""
    cells = [c.strip() for c in head]
    if cells[: len(AGGREGATE_CSV_HEADER)] == AGGREGATE_CSV_HEADER:
        return "aggregate"
    n = len(SWEEP_CSV_STATS)
    for i in range(len(cells) - n + 1):
        key = cells[i].removesuffix("_mean")
        if key and key != cells[i] and cells[i : i + n] == [f"{key}_{s}" for s in SWEEP_CSV_STATS]:
            return "sweep"
    return None


def detect(source: Source, records: list[Any]) -> tuple[bool, list[str]]:
    """Records with metadata.request_start_ns and metrics, or a summary with aiperf_version,
    or the summary CSV (Metric,avg,min,max,…)."""
    dicts = [r for r in records if isinstance(r, dict)]
    if dicts and all(_is_record(r) for r in dicts):
        return True, []
    if dicts and (_is_summary(dicts[0]) or _is_aggregate(dicts[0]) or _is_inputs(dicts[0])):
        return True, []
    if not dicts and _is_csv(source):
        return True, []
    return False, ['"metadata".request_start_ns and "metrics"', 'or "aiperf_version"']


def read(source: Source, *, lenient: bool = False, **options: Any) -> Partial:
    """Records → one run with request rows; a summary (JSON or CSV) → one summary-only run."""
    head = source.data.lstrip(b"\xef\xbb\xbf").lstrip()
    if head[:1] not in (b"{", b"["):
        return _read_csv(source, lenient)
    first = head.split(b"\n", 1)[0].strip()
    value, problem = parse_value(source.path, 1, first)
    one_document = first == b"{" if problem is not None else not _is_record(value)
    if one_document:  # a summary, an aggregate or inputs.json, not JSON Lines
        doc = document(source)
        if _is_aggregate(doc):
            return _read_aggregate(source, doc, lenient)
        if _is_summary(doc):
            return _read_summary(source, doc, lenient)
        if _is_inputs(doc):
            return _read_inputs(source, doc)
    return _read_records(source, lenient)


# --------------------------------------------------------------------------- records


def _metric(f: Fields, name: str, unit_scale: bool = True) -> float | None:
    """A `{value, unit}` metric; times in seconds, counts as written."""
    value = f.number(f"metrics.{name}.value", minimum=None)
    if value is None:
        return None
    unit = get(f.record, "metrics", name, "unit")
    if unit_scale and isinstance(unit, str) and unit in _TIME_UNITS:
        return value * _TIME_UNITS[unit]
    return value


def run_name(path: str) -> str:
    """The run's id, from the file alone and the same on every read: AIPerf names every
    records file `profile_export.jsonl`, so such a file is named after its artifact folder
    (`<model>-<endpoint>-concurrency<N>` by default), any other file after its stem."""
    parts = [p for p in re.split(r"[\\/]", path) if p]
    name = parts[-1] if parts else path
    stem = re.sub(r"\.(jsonl|json|csv|ndjson)$", "", name, flags=re.IGNORECASE)
    if stem in _DEFAULT_STEMS and len(parts) > 1 and parts[-2] not in (".", ".."):
        return f"aiperf:{parts[-2]}"
    return f"aiperf:{stem}"


def load_from_name(name: str) -> tuple[int | None, float | None]:
    """The concurrency or request rate AIPerf wrote into its default artifact folder name
    (`…-concurrency4`, `…-request_rate2.5`), if the name carries one."""
    conc = re.search(r"(?:^|[-_:])concurrency[-_]?(\d+)$", name)
    if conc:
        return int(conc.group(1)), None
    rate = re.search(r"(?:^|[-_:])request_rate[-_]?(\d+(?:\.\d+)?)$", name)
    if rate:
        return None, float(rate.group(1))
    return None, None


def _modern_tags(record: dict[str, Any]) -> int:
    """Rename old metric tags in place (a record of AIPerf's first releases); how many."""
    metrics = record.get("metrics")
    renamed = 0
    if isinstance(metrics, dict):
        for old, new in OLD_TAGS.items():
            if old in metrics and new not in metrics:
                metrics[new] = metrics.pop(old)
                renamed += 1
    metadata = record.get("metadata")
    # the first releases kept the error inside the metadata
    if isinstance(metadata, dict) and record.get("error") is None and metadata.get("error"):
        record["error"] = metadata["error"]
    return renamed


def _read_records(source: Source, lenient: bool) -> Partial:
    problems = Problems(source.path)
    records = json_lines(source, problems)
    run_id = run_name(source.path)
    raw: list[dict[str, Any]] = []
    warmup = 0
    old_tags = 0
    for line, record in records:
        if not _is_record(record):
            problems.add(
                line,
                "the line is not an AIPerf record",
                'an object with "metadata".request_start_ns and "metrics"',
            )
            continue
        old_tags += _modern_tags(record)
        f = Fields(record, line, problems, WHAT)
        # `credit_phase` in records before AIPerf PR #325
        phase = f.string("metadata.benchmark_phase") or f.string("metadata.credit_phase")
        if phase is not None and phase != "profiling":
            warmup += 1
            continue
        # older records (before AIPerf PR #325) name the send time timestamp_ns
        key = "request_start_ns" if "request_start_ns" in record["metadata"] else "timestamp_ns"
        start = f.integer(f"metadata.{key}", required=True, minimum=None)
        end = f.integer("metadata.request_end_ns", minimum=None)
        ttft = _metric(f, "time_to_first_token")
        latency = _metric(f, "request_latency")
        gaps_value = f.value("metrics.inter_chunk_latency.value")
        gap_unit = get(record, "metrics", "inter_chunk_latency", "unit")
        gaps = None
        if isinstance(gaps_value, list):
            gaps = f.numbers("metrics.inter_chunk_latency.value", minimum=0)
        usage_out = _metric(f, "usage_completion_tokens", False)
        osl = _metric(f, "output_sequence_length", False)
        usage_in = _metric(f, "usage_prompt_tokens", False)
        isl = _metric(f, "input_sequence_length", False)
        reported = _metric(f, "output_token_throughput_per_user", False)
        cancelled = f.boolean("metadata.was_cancelled")
        error = record.get("error")
        if not f.ok or start is None:
            continue
        message = None
        if isinstance(error, dict):
            message = str(error.get("message") or error.get("type") or error.get("code") or "error")
        elif error is not None:
            message = str(error)
        raw.append(
            {
                "line": line,
                "start": start,
                "end": end,
                "ttft": ttft,
                "latency": latency,
                "gaps": gaps,
                "gap_scale": _TIME_UNITS.get(str(gap_unit), 1e-3),
                "output": usage_out if usage_out is not None else osl,
                "from_usage": usage_out is not None,
                "prompt": usage_in if usage_in is not None else isl,
                "reported": reported,
                "error": message,
                "cancelled": bool(cancelled),
                "id": get(record, "metadata", "x_request_id")
                or get(record, "metadata", "session_num")
                or get(record, "metadata", "request_num"),  # older records
            }
        )
    problems.raise_unless(lenient)
    rows: list[dict[str, Any]] = []
    base = min((r["start"] for r in raw), default=0)
    sends = epoch_ns_seconds([r["start"] for r in raw], base)
    ends = epoch_ns_seconds([r["end"] for r in raw], base)
    for r, t_send, t_end in zip(raw, sends, ends, strict=True):
        if r["end"] is None and r["latency"] is not None:
            t_end = t_send + r["latency"]
        row: dict[str, Any] = {
            "run": run_id,
            "id": str(r["id"]) if r["id"] is not None else str(r["line"]),
            "t_send": t_send,
            "t_end": t_end,
            "prompt_tokens": r["prompt"],
            "output_tokens": r["output"],
            "reported_tps": r["reported"],
            "error": r["error"],
            "source_line": r["line"],
            "finish_reason": "cancelled" if r["cancelled"] else ("error" if r["error"] else None),
        }
        if r["cancelled"]:
            # --request-cancellation-rate: the client cancelled it on purpose
            row["error"] = f"cancelled by the client (AIPerf was_cancelled){_detail(r['error'])}"
        if r["ttft"] is not None and r["error"] is None and not r["cancelled"]:
            row["t_first"] = t_send + r["ttft"]
            if r["gaps"] is not None:
                scale = r["gap_scale"]
                times = list(accumulate((g * scale for g in r["gaps"]), initial=row["t_first"]))
                row["token_times"] = times
                row["n_chunks"] = len(times)
        rows.append(row)
    derived = [
        "times: epoch nanoseconds, made relative to the first send (integer "
        "subtraction, no precision lost)",
        "token_times are per SSE chunk (inter_chunk_latency), not per token",
    ]
    if old_tags:
        derived.append(
            "metric tags of AIPerf's first releases (ttft, isl, osl, itl) read as "
            "time_to_first_token, input_sequence_length, output_sequence_length, "
            "inter_token_latency"
        )
    if rows:
        usage = sum(1 for r in raw if r["from_usage"])
        derived.append(
            "output tokens: the server's usage counts"
            if usage == len(raw)
            else "output tokens: AIPerf's output_sequence_length (client tokenizer "
            "unless --use-server-token-count)"
            if usage == 0
            else f"output tokens: server usage for {usage} of {len(raw)} records, "
            "output_sequence_length for the others"
        )
    run = new_run(
        run_id,
        source.path,
        rows[0]["source_line"] if rows else 1,
        NAME,
        tool=("aiperf", None),
        summary=None,
        derived=derived,
        extra={"t0_epoch_ns": base, "aiperf_file": "records"}
        if rows
        else {"aiperf_file": "records"},
    )
    notes = [f"AIPerf: {counted(len(rows), 'profiling record')}"]
    if warmup:
        notes.append(f"AIPerf: left out {counted(warmup, 'warm-up record')} (benchmark_phase)")
    lengths = [r["output"] for r in raw if r["error"] is None and not r["cancelled"]]
    _read_siblings(source.path, run, lengths, notes, len(rows))
    if run["concurrency"] is None and run["request_rate"] is None:
        concurrency, rate = load_from_name(run_id.removeprefix("aiperf:"))
        if concurrency is not None or rate is not None:
            run["concurrency"], run["request_rate"] = concurrency, rate
            run["derived"].append(
                f"{'concurrency ' + str(concurrency) if concurrency else f'request rate {rate:g}'}"
                " from the artifact folder's name (AIPerf names it after the load it ran)"
            )
    if run["concurrency"] is None and run["request_rate"] is None:
        run["derived"].append(
            "concurrency not recorded in the records file (it is in the summary export, "
            "profile_export_aiperf.json: pass it too)"
        )
    if run["tool_version"] is None:
        run["derived"].append("tool version not recorded in the records file")
    return finish(source, NAME, [run], rows, records=len(records), notes=notes, problems=problems)


def _detail(error: str | None) -> str:
    return f": {error}" if error else ""


# --------------------------------------------------------------------------- one run, several files

#: What a summary or an inputs file can tell about the run of a records file: run columns.
CONTEXT_COLUMNS = (
    "concurrency",
    "request_rate",
    "ignore_eos",
    "min_tokens",
    "output_tokens_requested",
    "prompt_tokens",
    "tool_version",
    "model_name",
    "group",
    "repeat",
)


def summary_context(doc: dict[str, Any]) -> dict[str, Any]:
    """The run columns a `profile_export_aiperf.json` states (its input_config and run_info)."""
    config = obj(doc.get("input_config"))
    run_info = obj(doc.get("run_info"))
    concurrency, rate = _load(config)
    ignore_eos, min_tokens = _extras(config)
    model = get(config, "models", "items", 0, "name") or get(config, "model_names", 0)
    sweep = run_info.get("sweep_id")
    out = {
        "concurrency": concurrency,
        "request_rate": rate,
        "ignore_eos": ignore_eos,
        "min_tokens": min_tokens,
        "prompt_tokens": _synthetic_prompt_tokens(config),
        "tool_version": str(doc.get("aiperf_version") or "") or None,
        "model_name": model if isinstance(model, str) else None,
        "group": f"aiperf sweep {sweep}" if sweep else None,
        "repeat": whole(run_info.get("trial")),
    }
    return {k: v for k, v in out.items() if v is not None}


def _synthetic_prompt_tokens(config: dict[str, Any]) -> int | None:
    """The prompt length of every request, where AIPerf generated the prompts at one length:
    a synthetic dataset whose input length (``prompts.isl``) has no spread. AIPerf counts it
    with its tokenizer, without the tokens the server adds (BOS, a chat template)."""
    datasets = config.get("datasets")
    if not isinstance(datasets, list) or not datasets:
        return None
    lengths = set()
    for dataset in datasets:
        if not isinstance(dataset, dict) or dataset.get("type") != "synthetic":
            return None
        isl = obj(get(dataset, "prompts", "isl"))
        mean, spread = whole(isl.get("mean")), finite_number(isl.get("stddev"))
        if mean is None or spread:
            return None
        lengths.add(mean)
    return lengths.pop() if len(lengths) == 1 else None


def inputs_context(doc: Any) -> dict[str, Any]:
    """The run columns AIPerf's `inputs.json` (the payloads it sent) states: the requested
    output length and ignore_eos, when every payload carries the same value."""
    payloads = [
        p
        for session in (doc.get("data") if isinstance(doc, dict) else None) or []
        if isinstance(session, dict)
        for p in session.get("payloads") or []
        if isinstance(p, dict)
    ]
    if not payloads:
        return {}
    out: dict[str, Any] = {"payloads": len(payloads)}
    caps = {whole(p.get("max_tokens", p.get("max_completion_tokens"))) for p in payloads}
    if len(caps) == 1 and None not in caps:
        out["output_tokens_requested"] = caps.pop()
    flags = {p.get("ignore_eos", get(p, "nvext", "ignore_eos")) for p in payloads}
    if len(flags) == 1:
        flag = flags.pop()
        out["ignore_eos"] = bool(flag) if isinstance(flag, bool) or flag is None else None
        if out["ignore_eos"] is None:
            del out["ignore_eos"]
    mins = {whole(p.get("min_tokens")) for p in payloads}
    if len(mins) == 1 and None not in mins:
        out["min_tokens"] = mins.pop()
    return out


def apply_context(
    run: dict[str, Any], context: dict[str, Any], what: str, lengths: list[float] | None
) -> None:
    """Fill the run columns a sibling file states and the records file does not; the stop
    mode follows from ignore_eos and the recorded lengths."""
    filled = []
    for column in CONTEXT_COLUMNS:
        value = context.get(column)
        if value is not None and run.get(column) is None:
            run[column] = value
            filled.append(f"{column} {value}")
    if not filled:
        return
    run["derived"].append(f"from {what}: {', '.join(filled)}")
    if run.get("stop") in (None, "unknown"):
        stop = stop_mode(run.get("ignore_eos"), lengths)
        if stop != "unknown":
            run["stop"] = stop


def _sibling(path: str, name: str) -> Any:
    """A JSON file AIPerf wrote beside the records file, or None (absent or unreadable)."""
    sibling = Path(path).parent / name
    try:
        if not sibling.is_file() or sibling.stat().st_size > SIBLING_LIMIT_BYTES:
            return None
        return orjson.loads(sibling.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None


def _summary_requests(doc: dict[str, Any]) -> float | None:
    """Every profiling request a summary counts (successful and errored)."""
    stats = {**doc, **obj(doc.get("records"))}
    ok = _scaled(stats, "request_count", "avg")
    errors = _scaled(stats, "error_request_count", "avg")
    return None if ok is None else ok + (errors or 0)


def _read_siblings(
    path: str, run: dict[str, Any], lengths: list[float], notes: list[str], records_held: int
) -> None:
    """A records file named as AIPerf names it: its summary and inputs, read from the same
    folder (AIPerf writes them there), complete the run; the run's notes say so."""
    stem = Path(path).name.rsplit(".", 1)[0]
    if stem not in _DEFAULT_STEMS:
        return
    summary = _sibling(path, "profile_export_aiperf.json")
    counted = _summary_requests(summary) if isinstance(summary, dict) else None
    if counted is not None and round(counted) != records_held:
        notes.append(
            f"AIPerf: {Path(path).parent / 'profile_export_aiperf.json'} not read: it counts "
            f"{counted:g} requests, this file holds {records_held} (not the same run)"
        )
        summary = None
    if isinstance(summary, dict) and _is_summary(summary):
        where = str(Path(path).parent / "profile_export_aiperf.json")
        apply_context(run, summary_context(summary), f"the summary beside it ({where})", lengths)
        run["extra"] = {**(run["extra"] or {}), "joined_summary": where}
        notes.append(f"AIPerf: read {where} (the same run's summary) for its settings")
    inputs = _sibling(path, "inputs.json")
    if isinstance(inputs, dict):
        where = str(Path(path).parent / "inputs.json")
        apply_context(
            run, inputs_context(inputs), f"the request inputs beside it ({where})", lengths
        )
        run["extra"] = {**(run["extra"] or {}), "joined_inputs": where}
        notes.append(f"AIPerf: read {where} (the payloads sent) for max_tokens and ignore_eos")


# --------------------------------------------------------------------------- asked lengths

#: AIPerf's percentiles of per-request metrics (numpy's linear interpolation between ranks).
_PERCENTILES = (1, 5, 10, 25, 50, 75, 90, 95, 99)
#: What osl_mismatch_count counts (AIPerf's OSLMismatchCountMetric, since it appeared in 2026):
#: requests whose output differs from the length asked by more than this, so not those that
#: differ by less; it never says how many wrote exactly the length.
OSL_MISMATCH_THRESHOLD = "min(5% of the length asked, 50 tokens)"


@dataclass(frozen=True)
class LengthBounds:
    """What `osl_mismatch_diff_pct`'s statistics prove about the requests' differences from
    the length asked of them: how many wrote fewer or more tokens (at least, at most), and
    the steps that prove it."""

    compared: int
    short: tuple[int, int]
    over: tuple[int, int]
    steps: tuple[str, ...]

    @property
    def exact(self) -> tuple[int, int]:
        """Requests that wrote exactly the length asked: at least, at most."""
        return (
            max(self.compared - self.short[1] - self.over[1], 0),
            self.compared - self.short[0] - self.over[0],
        )

    def summary(self) -> dict[str, float]:
        return {
            "length_compared": float(self.compared),
            "length_short_min": float(self.short[0]),
            "length_short_max": float(self.short[1]),
            "length_over_min": float(self.over[0]),
            "length_over_max": float(self.over[1]),
            "length_exact_min": float(self.exact[0]),
            "length_exact_max": float(self.exact[1]),
        }


def _pct(value: float) -> str:
    return f"{value:.2f}".replace("-", "−")


def length_bounds(
    stats: dict[str, Any], rounded: bool, longest_output: float | None
) -> LengthBounds | None:
    """Bounds on how many requests wrote fewer, more or exactly the tokens asked of them, from
    the statistics of osl_mismatch_diff_pct ((written − asked) ÷ asked × 100 per request); None
    without them. `rounded`: the figures are rounded to 2 decimals (the CSV), so a sign is
    taken only where the rounding cannot flip it, and a 0.00 is a true 0 only when no request
    can differ by less than 0.005% (one token of the longest output, plus one, is more)."""
    entry = stats.get("osl_mismatch_diff_pct")
    if not isinstance(entry, dict):
        return None
    low, high, total = (finite_number(entry.get(k)) for k in ("min", "max", "sum"))
    if low is None or high is None or total is None:
        return None
    half = 0.005 if rounded else 0.0
    n = whole(entry.get("count"))
    mean = finite_number(entry.get("avg"))
    if n is None and mean:
        # the CSV writes no count: sum ÷ mean gives it where it reproduces the mean
        guess = round(total / mean)
        if guess > 0 and abs(total / guess - mean) <= half * 2 + 1e-9 * abs(mean):
            n = guess
    if n is None or n < 1:
        return None
    # the smallest difference a request can have that is not 0: one token of (longest + 1)
    grain = 100 / (longest_output + 1) if longest_output else 0.0
    values = {0.0: low, 100.0: high}
    for q in _PERCENTILES:
        p = finite_number(entry.get(f"p{q}"))
        if p is not None:
            values[float(q)] = p
    steps = [
        f"osl_mismatch_diff_pct over {n} requests: min {_pct(low)}%, max {_pct(high)}%, "
        f"sum {_pct(total)}%"
    ]
    short = _one_side(values, total, n, half, grain, steps, mirrored=False)
    over = _one_side(
        {100 - q: -v for q, v in values.items()}, -total, n, half, grain, steps, mirrored=True
    )
    return LengthBounds(n, short, over, tuple(steps))


def _one_side(
    values: dict[float, float],
    total: float,
    n: int,
    half: float,
    grain: float,
    steps: list[str],
    mirrored: bool,
) -> tuple[int, int]:
    """How many values are below 0 (at least, at most), given the statistics with the lowest
    at 0 (the over-length side is read mirrored: −value, percentile 100 − q). `half` is the
    rounding of each figure, `grain` the smallest difference that is not 0."""
    word, name = ("above", "max") if mirrored else ("below", "min")

    def shown(v: float) -> str:
        return _pct(-v if mirrored else v)

    def label(q: float) -> str:
        return name if q == 0 else f"p{100 - q if mirrored else q:g}"

    lowest, top = values[0.0], values[100.0]
    least = n if top + half < 0 else 1 if lowest + half < 0 else 0
    for q, p in sorted(values.items()):
        rank = q / 100 * (n - 1)
        if 0 < q < 100 and p + half < 0 and int(rank) + 1 > least:
            least = int(rank) + 1
            steps.append(
                f"{label(q)} = {shown(p)}% at rank {rank + 1:g} of {n}: at least {least} {word} 0"
            )
    known = 1 if least else 0  # the lowest values known exactly, for the sum
    # figures recomputed here carry float error (and the rounding, where rounded)
    tol = 2 * half + 1e-9 * (abs(lowest) + abs(total) + 1)
    f = 0.01 * (n - 1)
    second = values.get(1.0)
    order = "highest" if mirrored else "lowest"
    if least and second is not None and 0 < f < 1:
        # p1 interpolates between the lowest two: it gives the second lowest
        x1 = lowest + (second - lowest) / f
        if x1 + half * (2 - f) / f + tol < 0:
            known, least = 2, max(least, 2)
            steps.append(
                f"second {order} = {name} + ({label(1.0)} − {name}) ÷ {f:g} = {shown(lowest)} + "
                f"({shown(second)} − ({shown(lowest)})) ÷ {f:g} = {shown(x1)}%"
            )
            rest = total - lowest - x1
            if rest + half + half / f + half * abs(1 - 2 * f) / f + tol < 0:
                least = max(least, 3)
                steps.append(
                    f"sum − the two {order} = {shown(total)} − ({shown(lowest)}) − "
                    f"({shown(x1)}) = {shown(rest)}%: one more {word} 0"
                )
    if known == 1 and total - lowest + tol < 0:
        least = max(least, 2)
        steps.append(
            f"sum − {name} = {shown(total)} − ({shown(lowest)}) = {shown(total - lowest)}%: "
            f"another {word} 0"
        )
    # at most: from the first rank proven not below 0, none is below 0
    other = "below" if mirrored else "above"
    none_over = top < 0 or (top == 0 and (half == 0 or grain > half))
    most = n
    for q, p in sorted(values.items()):
        rank = q / 100 * (n - 1)
        lo, frac = int(rank), rank - int(rank)
        at, why = None, ""
        # min and max are requests' own values: a 0.00 of them is 0 where no value can round
        # to it (the grain); percentiles interpolate, and are taken below
        exact = q in (0.0, 100.0) and abs(p) <= half and grain > half
        if p - half >= 0 or exact:
            at = lo if frac == 0 else min(lo + 1, n - 1)
            why = f"{label(q)} = {shown(p)}%"
        if abs(p) <= half and none_over and (half == 0 or (1 - frac) * grain > half):
            # an interpolation that is 0 with nothing on the other side of 0: both ends are 0
            at = lo
            why = f"{label(q)} = {shown(p)}% with none {other} 0"
        if at is not None and at < most:
            most = at
            if 0 < q < 100:
                steps.append(
                    f"{why} (ranks {lo + 1}–{lo + 2} of {n}): from rank {most + 1} on none is "
                    f"{word} 0, so at most {most} are"
                )
    return least, max(most, least)


# --------------------------------------------------------------------------- summary


def _all_short_of_asked(stats: dict[str, Any], completed: float) -> str | None:
    """Why the stop was natural, when every completed request wrote fewer tokens than the
    length AIPerf asked of it (osl_mismatch_diff_pct below 0 for all of them: the model ended
    each, not the cap); else None. The summary CSV writes no count per metric: there, every
    request counted in osl_mismatch_count (the ones that wrote another length than asked) has
    a difference, so a count equal to the completed requests covers them all."""
    longest = _scaled(stats, "osl_mismatch_diff_pct", "max")
    counted = _scaled(stats, "osl_mismatch_diff_pct", "count")
    if counted is None:
        counted = _scaled(stats, "osl_mismatch_count", "avg")
    if longest is None or not longest < 0 or not completed > 0 or counted != completed:
        return None
    median = _scaled(stats, "osl_mismatch_diff_pct", "p50")
    typical = f", median {median:.1f}%" if median is not None else ""
    return (
        f"stop natural: every one of the {completed:g} completed requests wrote fewer tokens "
        f"than the length asked of it (osl_mismatch_diff_pct at most {longest:.1f}%{typical}): "
        "the model ended them, not the cap"
    )


def _asked_lengths_note(
    bounds: LengthBounds | None, mismatches: float | None, completed: float
) -> str:
    """The derived line for lengths asked per request: what the summary proves of them."""
    head = "output lengths asked per request (AIPerf sends each its expected length as max_tokens)"
    counted_ = (
        f"osl_mismatch_count {mismatches:g} counts those past {OSL_MISMATCH_THRESHOLD}"
        if mismatches is not None
        else "no osl_mismatch_count"
    )
    if bounds is None:
        return (
            f"{head}: {counted_}, of {completed:g} completed; how many wrote exactly their "
            "length is not recorded (no osl_mismatch_diff_pct)"
        )
    (e0, e1), (s0, s1) = bounds.exact, bounds.short
    return (
        f"{head}: from osl_mismatch_diff_pct, {_span(e0, e1)} of {bounds.compared} wrote "
        f"exactly that length and {_span(s0, s1)} fewer tokens; {counted_}"
    )


def _span(least: int, most: int) -> str:
    return f"{least}" if least == most else f"{least}–{most}"


def _scaled(stats: dict[str, Any], name: str, field: str) -> float | None:
    """A summary statistic in seconds (time units) or as written (tokens, counts)."""
    entry = stats.get(name)
    if not isinstance(entry, dict):
        return None
    value = finite_number(entry.get(field))
    unit = entry.get("unit")
    if value is None:
        return None
    if isinstance(unit, str) and unit in _TIME_UNITS:
        return value * _TIME_UNITS[unit]
    return value


def _read_summary(source: Source, doc: dict[str, Any], lenient: bool) -> Partial:
    problems = Problems(source.path)
    if isinstance(doc.get("records"), dict):  # the 2025 layout nests the metrics
        doc = {**doc, **doc["records"]}
    f = Fields(doc, 1, problems, WHAT_SUMMARY)
    f.number("benchmark_duration.avg", required=True, unit="seconds")
    problems.raise_unless(lenient)
    config = obj(doc.get("input_config"))
    run_info = obj(doc.get("run_info"))
    return _summary_partial(
        source,
        doc,
        config,
        run_info,
        str(doc.get("aiperf_version") or "") or None,
        problems,
        shape="profile_export_aiperf.json",
    )


def _read_csv(source: Source, lenient: bool) -> Partial:
    problems = Problems(source.path)
    header, rows = csv_rows(source, problems)
    kind = _csv_kind(header)
    if kind is not None:
        return _read_aggregate_csv(source, kind, header, rows, problems, lenient)
    if header[:2] != ["Metric", "avg"]:
        raise fail(
            source.path,
            1,
            f"the header is {','.join(header[:4])!r}",
            "AIPerf's summary CSV (Metric,avg,min,max,…)",
        )
    stats: dict[str, Any] = {}
    columns = header
    for line, cells in rows:
        if not cells or not cells[0].strip():
            continue
        if cells[0] in ("Metric", "Endpoint"):
            columns = [c.strip() for c in cells]
            continue
        if columns[0] != "Metric":
            continue  # GPU telemetry and other blocks
        name, unit = _display_name(cells[0])
        entry: dict[str, Any] = {"unit": unit}
        for key, text in zip(columns[1:], cells[1:], strict=False):
            if not text.strip():
                continue  # a statistic AIPerf does not compute for this metric (0.13 rows)
            value = _finite(text.replace(",", ""))
            if value is None:  # text, or nan / inf: no figure of a run
                problems.add(
                    line,
                    f"{shown(cells[0])} {shown(key)} is {shown(text)}",
                    "a finite number or empty",
                )
                continue
            entry[key if key != "Value" else "avg"] = value
        stats[name] = entry
    if "benchmark_duration" not in stats and any(k.endswith("_(per_sec)") for k in stats):
        # GenAI-Perf's CSV ("Request Throughput (per sec)"), which states no duration
        problems.add(
            None,
            "this is GenAI-Perf's summary CSV (rates per sec, no benchmark duration), which is "
            "not read",
            "GenAI-Perf's profile_export_genai_perf.json, written beside it",
        )
    elif "benchmark_duration" not in stats:
        problems.add(
            None,
            '"Benchmark Duration (sec)" is missing',
            "a row with the benchmark duration (AIPerf summary CSV)",
        )
    problems.raise_unless(lenient)
    return _summary_partial(
        source,
        stats,
        {},
        {},
        None,
        problems,
        shape="profile_export_aiperf.csv (values rounded to 2 decimals)",
    )


def _display_name(text: str) -> tuple[str, str | None]:
    """'Request Latency (ms)' → ('request_latency', 'ms')."""
    match = re.match(r"^(.*?)\s*\(([^()]*)\)\s*$", text.strip())
    unit = None
    name = text.strip()
    if match and match.group(2) in (
        "ms",
        "sec",
        "s",
        "ns",
        "us",
        "tokens",
        "tokens/sec",
        "tokens/sec/user",
        "requests/sec",
        "requests",
        "ratio",
        "KB",
        "%",
    ):
        name, unit = match.group(1), match.group(2)
    key = re.sub(r"\s+", "_", name.strip().lower())
    key = _CSV_ALIASES.get(key, key)
    if key.startswith("http_") and not key.startswith("http_req_"):
        key = "http_req_" + key[5:]
    return key, unit


def _summary_partial(
    source: Source,
    stats: dict[str, Any],
    config: dict[str, Any],
    run_info: dict[str, Any],
    version: str | None,
    problems: Problems,
    shape: str,
) -> Partial:
    # a summary of AIPerf's first releases names some metrics by their old tags
    stats = {**{OLD_TAGS[k]: v for k, v in stats.items() if k in OLD_TAGS}, **stats}
    derived: list[str] = []
    requests = _scaled(stats, "request_count", "avg")
    errors = _scaled(stats, "error_request_count", "avg")
    if errors is None and isinstance(stats.get("error_summary"), list):
        errors = float(
            sum(
                finite_number(e.get("count")) or 0
                for e in stats["error_summary"]
                if isinstance(e, dict)
            )
        )
    wall = _scaled(stats, "benchmark_duration", "avg")
    if wall is not None and wall <= 0:
        wall = None  # refused as a problem above; with --lenient the run has no wall clock
    output_tokens = _scaled(stats, "total_osl", "avg") or _scaled(
        stats, "output_sequence_length", "sum"
    )
    sum_latency = _scaled(stats, "request_latency", "sum")
    if sum_latency is None:
        mean_latency = _scaled(stats, "request_latency", "avg")
        if mean_latency is not None and requests:
            sum_latency = mean_latency * requests
            derived.append("Σ latency = mean request latency × request count")
    per_user = stats.get("output_token_throughput_per_user")
    summary: dict[str, Any] = {
        "requests": (requests or 0) + (errors or 0) if requests is not None else None,
        "failed": errors,
        "output_tokens": output_tokens,
        "prompt_tokens": _scaled(stats, "total_isl", "avg")
        or _scaled(stats, "input_sequence_length", "sum"),
        "wall_s": wall,
        "sum_latency_s": sum_latency,
        "mean_ttft_s": _scaled(stats, "time_to_first_token", "avg"),
        "median_ttft_s": _scaled(stats, "time_to_first_token", "p50"),
        "mean_tpot_s": _scaled(stats, "inter_token_latency", "avg"),
        "median_tpot_s": _scaled(stats, "inter_token_latency", "p50"),
        # the tool's percentiles: its inter-token latency is per request, (e2e − TTFT) ÷
        # (tokens − 1), a TPOT; its chunk gaps are left out (pooled how, the file does not say)
        **{
            f"{metric}_p{q}_s": _scaled(stats, name, f"p{q}")
            for metric, name in (
                ("ttft", "time_to_first_token"),
                ("tpot", "inter_token_latency"),
                ("e2e", "request_latency"),
            )
            for q in (50, 90, 99)
        },
        "mean_itl_s": _scaled(stats, "inter_chunk_latency", "avg"),
        "mean_reported_tps": _scaled(stats, "output_token_throughput_per_user", "avg"),
        "sum_reported_tps": _scaled(stats, "output_token_throughput_per_user", "sum"),
        "tool_aggregate_tps": _scaled(stats, "output_token_throughput", "avg"),
        "tool_aggregate_field": "output_token_throughput.avg",
        "mean_output_tokens": _scaled(stats, "output_sequence_length", "avg"),
        "min_output_tokens": _scaled(stats, "output_sequence_length", "min"),
        "max_output_tokens": _scaled(stats, "output_sequence_length", "max"),
        "chunks": _scaled(stats, "http_req_chunks_received", "sum"),
    }
    if isinstance(per_user, dict) and per_user.get("sum") is not None:
        derived.append(
            "sum of reported rates = output_token_throughput_per_user.sum: AIPerf "
            "adds up every request's own rate (never an aggregate)"
        )
    if summary["chunks"] is not None:
        derived.append("chunks: HTTP chunks received, summed over requests")
    if errors is None:
        derived.append(
            "no error count in the summary: taken as 0 failed requests"
            if isinstance(stats.get("error_summary"), list)
            else "failed requests not recorded"
        )
        if isinstance(stats.get("error_summary"), list):
            summary["failed"] = 0
    derived.append(
        "no per-request records: no completion times to order into a ladder; effective "
        "concurrency from Little's law (Σ request latency ÷ benchmark duration)"
    )
    concurrency, rate = _load(config)
    endpoint = obj(config.get("endpoint"))
    ignore_eos, min_tokens = _extras(config)
    lo, hi = summary["min_output_tokens"], summary["max_output_tokens"]
    stop = stop_mode(ignore_eos, [lo, hi] if lo is not None and hi is not None else None)
    mismatches = _scaled(stats, "osl_mismatch_count", "avg")
    completed = (requests or 0) - (summary["failed"] or 0)
    bounds = length_bounds(stats, "rounded" in shape, hi)
    length_steps: list[str] = []
    asked = mismatches is not None or bounds is not None
    if stop != "forced" and asked and completed > 0:
        # AIPerf sends each request its expected output length (the dataset's, or one drawn
        # for it) as max_tokens; its count is of those past a threshold, not of all that
        # wrote another length, so how many wrote exactly it comes from the differences
        if mismatches is not None:
            summary["length_mismatches"] = mismatches
        if bounds is not None:
            summary.update(bounds.summary())
            length_steps = list(bounds.steps)
        # natural stays only where most provably wrote another length than asked
        off = (bounds.short[0] + bounds.over[0]) if bounds is not None else mismatches or 0
        if off <= completed / 2:
            stop = "unknown"  # a CSV records no extras: it may be unknown already
            derived.append(_asked_lengths_note(bounds, mismatches, completed))
    short_of_asked = _all_short_of_asked(stats, completed)
    if stop != "forced" and short_of_asked is not None:
        stop = "natural"
        derived.append(short_of_asked)
    elif stop == "natural":
        derived.append(
            f"stop natural: no ignore_eos among the request extras, and output "
            f"lengths vary ({lo:g}–{hi:g})"
        )
    if concurrency is None and rate is None:
        named = run_name(source.path)
        concurrency, rate = load_from_name(named.removeprefix("aiperf:"))
        if concurrency is not None or rate is not None:
            derived.append(
                f"{'concurrency ' + str(concurrency) if concurrency else f'request rate {rate:g}'}"
                " from the artifact folder's name (AIPerf names it after the load it ran)"
            )
        elif not config:
            derived.append("concurrency not recorded in the summary CSV")
    cancelled = _scaled(stats, "cancelled_request_count", "avg")
    if cancelled:
        # requests the client cancelled on purpose (--request-cancellation-rate)
        summary["cancelled"] = cancelled
        if summary["failed"] is None or summary["failed"] < cancelled:
            summary["failed"] = (summary["failed"] or 0) + cancelled
        derived.append(
            f"{counted(cancelled, 'request')} cancelled by the client on purpose "
            "(cancelled_request_count: --request-cancellation-rate)"
        )
    model = get(config, "models", "items", 0, "name") or get(config, "model_names", 0)
    run_id = (
        f"aiperf:c{concurrency}"
        if concurrency
        else (f"aiperf:{rate:g}rps" if rate else run_name(source.path))
    )
    sweep = run_info.get("sweep_id")
    run = new_run(
        run_id,
        source.path,
        1,
        NAME,
        tool=("aiperf", version),
        model={"name": model if isinstance(model, str) else None},
        workload={
            "concurrency": concurrency,
            "request_rate": rate,
            "stop": stop,
            "ignore_eos": ignore_eos,
            "min_tokens": min_tokens,
        },
        repeat=whole(run_info.get("trial")),
        group=f"aiperf sweep {sweep}" if sweep else None,
        summary=summary,
        derived=derived,
        extra={
            "benchmark_id": stats.get("benchmark_id") or run_info.get("benchmark_id"),
            "schema_version": stats.get("schema_version"),
            "cli_command": run_info.get("cli_command"),
            "streaming": endpoint.get("streaming"),
            "use_server_token_count": endpoint.get("use_server_token_count"),
            "aiperf_file": "summary",
            "length_steps": length_steps or None,
            "length_threshold": OSL_MISMATCH_THRESHOLD if mismatches is not None else None,
        },
    )
    notes = [f"AIPerf: summary only ({shape})"]
    return finish(source, NAME, [run], [], records=1, notes=notes, problems=problems)


def _extras(config: dict[str, Any]) -> tuple[bool | None, float | None]:
    """ignore_eos and min_tokens among the request extras (`--extra-inputs`); ignore_eos is
    False when extras were recorded without it, None when none were recorded."""
    extra_inputs = obj(config.get("endpoint")).get("extra")
    if not isinstance(extra_inputs, dict | list):
        return None, None
    pairs: dict[str, Any] = {}
    if isinstance(extra_inputs, dict):
        pairs = dict(extra_inputs)
    else:
        for entry in extra_inputs:
            if isinstance(entry, list | tuple) and len(entry) == 2:
                pairs[str(entry[0])] = entry[1]
    return bool(pairs.get("ignore_eos", False)), finite_number(pairs.get("min_tokens"))


def _load(config: dict[str, Any]) -> tuple[int | None, float | None]:
    """The profiling phase's concurrency or request rate, in the newer and older layouts."""
    phases = config.get("phases")
    if isinstance(phases, list):
        for phase in phases:
            if isinstance(phase, dict) and phase.get("name", "profiling") == "profiling":
                # AIPerf 0.10 writes a poisson or constant phase's rate as "rate"
                rate = phase.get("request_rate", phase.get("rate"))
                return whole(phase.get("concurrency")), finite_number(rate)
    loadgen = config.get("loadgen")
    if isinstance(loadgen, dict):
        return whole(loadgen.get("concurrency")), finite_number(loadgen.get("request_rate"))
    return None, None


# --------------------------------------------------------------------------- several profile runs

#: Statistic names AIPerf appends to a metric tag in its multi-run exports
#: (`time_to_first_token_avg`, `request_latency_p99`; orchestrator/aggregation).
STAT_KEYS = ("avg", "min", "max", "std", "sum", "count", *(f"p{n}" for n in range(1, 100)))


def _tag_form(keys: Iterable[str]) -> bool:
    """Whether metric keys are AIPerf's own tags (`benchmark_duration`), as a sweep entry of
    one trial holds them since 0.11, rather than `<tag>_<stat>` keys (`benchmark_duration_avg`,
    statistics across trials). Some tags end as a statistic does (`request_count`): the form
    is told by the keys that do not."""
    return any(
        not tag or stat not in STAT_KEYS for tag, _, stat in (str(k).rpartition("_") for k in keys)
    )


def _unflatten(
    metrics: dict[str, Any],
    problems: Problems | None = None,
    line: int | None = None,
    where: str = "",
) -> dict[str, Any]:
    """The metrics of a multi-run export as a summary's statistics, `{tag: {stat: value,
    "unit": u}}`, from either form:

    - `{"request_latency_avg": {"mean": m, "unit": u}}` → `{"request_latency": {"avg": m}}`:
      each statistic is its mean across the profile runs;
    - `{"request_latency": {"avg": a, "mean": a, "p99": q, "std": 0.0, …}}` (one trial): the
      trial's own statistics, its `avg` (or `mean`), min, max, percentiles, count and sum;
      its std, cv and confidence bounds are across trials (0 for one), so they are left out.
      A metric whose `avg` and `mean` disagree (beyond float rounding) is left out, a problem
      at `line` (`where` names the setting): neither is picked.
    """
    stats: dict[str, Any] = {}
    nested = _tag_form(metrics)
    for key, value in metrics.items():
        if not isinstance(value, dict):
            continue
        if nested:
            tag = str(key)
            values = {stat: finite_number(value.get(stat)) for stat in STAT_KEYS if stat != "std"}
            avg, mean = value.get("avg"), value.get("mean")
            if avg is not None and mean is not None and not _alike(avg, mean):
                if problems is not None:
                    problems.add(
                        line,
                        f'{where}metric {shown(tag)} has "avg" {shown(avg)} and "mean" '
                        f"{shown(mean)}, which disagree",
                        "the one trial's average as both (AIPerf writes it twice)",
                    )
                continue
            if values["avg"] is None:
                values["avg"] = finite_number(value.get("mean"))
        else:
            tag, _, stat = str(key).rpartition("_")
            if not tag or stat not in STAT_KEYS:
                continue
            values = {stat: finite_number(value.get("mean"))}
        present = {stat: v for stat, v in values.items() if v is not None}
        if not present:
            continue
        tag = OLD_TAGS.get(tag, tag)
        entry = stats.setdefault(tag, {})
        entry.update(present)
        if isinstance(value.get("unit"), str) and value["unit"]:
            entry["unit"] = value["unit"]
        elif "unit" not in entry and _display_unit(tag):
            entry["unit"] = _display_unit(tag)  # the sweep CSV writes no units
    return stats


def _alike(a: Any, b: Any) -> bool:
    """Two statistics of a file that are one figure: finite numbers equal but for float
    rounding."""
    x, y = finite_number(a), finite_number(b)
    if x is None or y is None or isinstance(a, bool) or isinstance(b, bool):
        return False
    return math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12)


def _display_unit(tag: str) -> str | None:
    """The unit AIPerf exports a metric in: seconds for the benchmark duration, milliseconds
    for per-request times."""
    if tag == "benchmark_duration":
        return "sec"
    if tag.startswith(("time_to_", "http_req_")) or tag in (
        "request_latency",
        "inter_token_latency",
        "inter_chunk_latency",
    ):
        return "ms"
    return None


#: What a multi-run figure is, by how many profile runs of the setting it comes from.
ONE_TRIAL = (
    "figures are the one profile run of this setting, as AIPerf's sweep aggregate copies "
    "its summary (one trial per swept value)"
)
#: Where the runs behind a mean over trials are.
TRIALS_EXPECTED = (
    "each trial's own profile_export_aiperf.json (profile_runs/trial_NNNN/…), audited "
    "as one run each"
)
#: What the sweep export's missing duration is looked for as.
NO_DURATION = (
    'has no benchmark duration: neither "benchmark_duration" (its "avg" or "mean") nor '
    '"benchmark_duration_avg" (its "mean") among its metrics'
)


def _aggregate_run(
    source: Source,
    metrics: dict[str, Any],
    parameters: dict[str, Any],
    what: str,
    version: str | None,
    problems: Problems,
    shape: str,
    line: int | None = None,
    where: str = "",
) -> dict[str, Any] | None:
    """One run from the statistics of one setting, `what` saying whose figures they are;
    None when they hold no duration (a problem already added at `line` when it is one
    refused there)."""
    stats = _unflatten(metrics, problems, line, where)
    if "avg" not in stats.get("benchmark_duration", {}):
        return None
    phase = {**parameters, "name": "profiling"}  # a parameter "name" is no phase's name
    partial = _summary_partial(source, stats, {"phases": [phase]}, {}, version, problems, shape)
    run = partial.runs[0]
    run["derived"].insert(0, what)
    run["derived"] = [
        d for d in run["derived"] if d != "concurrency not recorded in the summary CSV"
    ]
    return run


#: Most parameters of one setting a message names; the rest are counted.
SETTING_SHOWN = 4


def _setting(parameters: dict[str, Any]) -> str:
    """`{"concurrency": 16}` → 'concurrency 16', for a message: a key that is not a plain
    name and any value that is not a number quoted bounded and escaped (`shown`), at most
    `SETTING_SHOWN` parameters named and the rest counted."""

    def key(k: Any) -> str:
        return k if isinstance(k, str) and _PLAIN_KEY.fullmatch(k) else shown(k)

    def value(v: Any) -> str:
        return f"{v:g}" if finite_number(v) is not None else shown(v)

    items = list(parameters.items())
    named = [f"{key(k)} {value(v)}" for k, v in items[:SETTING_SHOWN]]
    if len(items) > SETTING_SHOWN:
        named.append(f"and {len(items) - SETTING_SHOWN} more")
    return ", ".join(named)


_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,59}")


#: What a sweep export holds of each setting: one entry (two would be two runs of one
#: setting that its trials never were, and read as repeats of one point).
SETTING_ONCE = "each swept setting once"


#: Sweep parameters read as the load of a setting, and what each must be.
_LOAD_PARAMETERS = {
    "concurrency": "a whole number of at least 1",
    "request_rate": "a number above 0",
}


def _parameters_ok(parameters: dict[str, Any], line: int, where: str, problems: Problems) -> bool:
    """Whether every swept value of a setting is a finite number (a concurrency a whole one
    of at least 1, a request rate above 0); each that is not is a problem at `line`."""
    ok = True
    for key, value in parameters.items():
        number = finite_number(value)
        expected = _LOAD_PARAMETERS.get(str(key), "a finite number")
        if key == "concurrency":
            fits = whole(value) is not None and number is not None and number >= 1
        elif key == "request_rate":
            fits = number is not None and number > 0
        else:
            fits = number is not None
        if not fits:
            problems.add(line, f"{where}: parameter {shown(key)} is {shown(value)}", expected)
            ok = False
    return ok


def _setting_key(parameters: dict[str, Any]) -> Any:
    """What two entries of one sweep export share when they give the same setting: their
    parameters, a number equal to another however written (16 and 16.0)."""

    def frozen(value: Any) -> Any:
        if isinstance(value, bool):
            return ("bool", value)
        if isinstance(value, dict):
            return ("object", tuple(sorted((str(k), frozen(v)) for k, v in value.items())))
        if isinstance(value, list):
            return ("list", tuple(frozen(v) for v in value))
        return value

    return frozen(parameters)


def _trials(
    stated: Any, successful: Any, settings: int | None, noun: str = "setting"
) -> tuple[int | None, str]:
    """Profile runs per swept setting, and what says so: metadata.num_trials_per_value, else
    the successful runs shared evenly between the settings; None when neither tells."""
    trials = whole(stated)
    if trials is not None and trials > 0:
        return trials, f"metadata.num_trials_per_value {trials}"
    runs = whole(successful)
    if runs is not None and settings and runs % settings == 0 and runs >= settings:
        return runs // settings, f"{runs} successful runs over {counted(settings, noun)}"
    return None, ""


#: The metric whose spread across profile runs is kept (the aggregate's own).
SPREAD_METRIC = "output_token_throughput_avg"


def _keep_spread(
    run: dict[str, Any],
    metrics: dict[str, Any],
    runs: int | None,
    problems: Problems,
    line: int | None,
) -> None:
    """Keep, in the run's `extra`, how its aggregate varied across the profile runs whose
    means it is (`profile_runs`: how many, when stated; the output token throughput's
    standard deviation, min and max across them), for BR016: the runs were repeats. A spread
    no set of runs can have (a negative deviation, a min above the max, a mean outside them)
    is a problem at `line`, not a spread to quote."""
    stats = obj(metrics.get(SPREAD_METRIC))
    spread = {k: finite_number(stats.get(k)) for k in ("mean", "std", "min", "max")}
    mean, std, lo, hi = spread["mean"], spread["std"], spread["min"], spread["max"]
    wrong = []
    if std is not None and std < 0:
        wrong.append(f"its std {std:g} is below 0")
    if lo is not None and hi is not None and lo > hi:
        wrong.append(f"its min {lo:g} is above its max {hi:g}")
    elif mean is not None and lo is not None and hi is not None:
        slack = SPREAD_ROUNDING + 1e-9 * abs(mean)
        if not lo - slack <= mean <= hi + slack:
            wrong.append(f"its mean {mean:g} is outside its min {lo:g} and max {hi:g}")
    if wrong:
        problems.add(
            line,
            f"{SPREAD_METRIC} across the profile runs: {'; '.join(wrong)}",
            "a standard deviation of 0 or more and min ≤ mean ≤ max",
        )
        return
    if mean is None or std is None or (runs is not None and runs < 2):
        return
    run["extra"] = {**(run.get("extra") or {}), "profile_runs": {"count": runs, **spread}}


#: How far a mean may lie outside its min and max by the CSV's rounding to 2 decimals.
SPREAD_ROUNDING = 0.01


def _run_count(value: Any, line: int | None, what: str, problems: Problems) -> int | None:
    """A stated number of profile runs or trials: a whole number of at least 1; None (and a
    problem at `line`) for anything else, None without one when nothing is stated."""
    if value is None:
        return None
    count = whole(value)
    if count is None or count < 1:
        problems.add(
            line, f"{what} is {shown(value)}", "a whole number of profile runs, at least 1"
        )
        return None
    if count > MAX_INT64:  # no set of runs; refused here by the file's own key
        problems.add(
            line,
            f"{what} is {shown(value)}",
            "a whole number of profile runs, at least 1 and at most 2^63 − 1",
        )
        return None
    return count


def _whose_figures(
    one_trial: bool,
    trials: int | None,
    told: str,
    line: int | None,
    entry: str,
    parameters: dict[str, Any],
    problems: Problems,
) -> str | None:
    """Whose figures a sweep export's setting holds (the run's first derived note): one
    trial's (`one_trial`, the tag form, or one trial per value), or means over trials of
    a count unknown; None, with a problem at `line`, for means over a known count of
    several trials, which are no single run's figures."""
    if one_trial or trials == 1:
        return ONE_TRIAL
    if trials is None:
        return _means_note("its profile runs")
    problems.add(
        line,
        f"{entry} ({_setting(parameters)}) holds means over {trials} trials ({told}): a mean "
        "duration or request count is no single run's figure",
        TRIALS_EXPECTED,
    )
    return None


def _means_note(runs_counted: str) -> str:
    return (
        f"figures are AIPerf's means across {runs_counted} of this setting "
        "(its multi-run aggregate), not one run's"
    )


def _read_aggregate(source: Source, doc: dict[str, Any], lenient: bool) -> Partial:
    """`profile_export_aiperf_aggregate.json` → one run (the mean of its profile runs);
    `profile_export_aiperf_sweep.json` → one run per swept setting, one group: a setting of one
    trial is that trial's run; the means over several trials are no run's figures (a mean
    duration, a mean request count), so such a setting is refused."""
    problems = Problems(source.path)
    version = str(doc.get("aiperf_version") or "") or None
    meta = obj(doc.get("metadata"))
    where = (
        "num_successful_runs" if "num_successful_runs" in doc else "metadata.num_successful_runs"
    )
    count = _run_count(
        doc.get("num_successful_runs", meta.get("num_successful_runs")), None, where, problems
    )
    combos = doc.get("per_combination_metrics")
    runs: list[dict[str, Any]] = []
    if isinstance(combos, list):
        shape = "profile_export_aiperf_sweep.json"
        lines = container_lines(source.data, 2)
        stated = _run_count(
            meta.get("num_trials_per_value"), None, "metadata.num_trials_per_value", problems
        )
        trials, told = _trials(stated, count, len(combos))
        seen: dict[Any, tuple[int, int]] = {}
        for i, combo in enumerate(combos):
            line = line_of(lines, "per_combination_metrics", i)
            if not isinstance(combo, dict):
                problems.add(
                    line,
                    f"sweep entry {i} is {shown(combo)}",
                    'an object with "parameters" and "metrics"',
                )
                continue
            if not isinstance(combo.get("parameters"), dict):
                given = shown(combo["parameters"]) if "parameters" in combo else "missing"
                problems.add(
                    line,
                    f'sweep entry {i}: "parameters" is {given}',
                    'an object of the swept values, as {"concurrency": 16}',
                )
                continue
            parameters = combo["parameters"]
            if not _parameters_ok(parameters, line, f"sweep entry {i}", problems):
                continue
            first = seen.setdefault(_setting_key(parameters), (i, line))
            if first[0] != i:
                problems.add(
                    line,
                    f"sweep entry {i} ({_setting(parameters)}) is the setting of sweep entry "
                    f"{first[0]} (line {first[1]}) again",
                    SETTING_ONCE,
                )
                continue
            metrics = obj(obj(combo).get("metrics"))
            # AIPerf writes the tag form only for a setting of one trial
            what = _whose_figures(
                _tag_form(metrics), trials, told, line, f"sweep entry {i}", parameters, problems
            )
            if what is None:
                continue
            before = problems.count
            run = _aggregate_run(
                source, metrics, parameters, what, version, problems, shape, line,
                f"sweep entry {i} ({_setting(parameters)}): ",
            )  # fmt: skip
            if run is None and problems.count > before:
                continue  # its duration is refused for what it is
            if run is None:
                problems.add(
                    line,
                    f"sweep entry {i} ({_setting(parameters)}) {NO_DURATION}",
                    "a duration for every swept setting (AIPerf sweep export)",
                )
                continue
            runs.append(run)
    else:
        shape = "profile_export_aiperf_aggregate.json"
        runs_counted = counted(count, "profile run") if count is not None else "its profile runs"
        metrics = obj(doc.get("metrics"))
        before = problems.count
        run = _aggregate_run(
            source, metrics, {}, _means_note(runs_counted), version, problems, shape
        )
        if run is None and problems.count > before:
            pass  # its duration is refused for what it is
        elif run is None:
            problems.add(
                None,
                '"benchmark_duration_avg" (its "mean") is missing',
                "the benchmark duration among the metrics (AIPerf aggregate export)",
            )
        else:
            _keep_spread(run, metrics, count, problems, None)
            runs.append(run)
    problems.raise_unless(lenient)
    return _aggregate_partial(source, runs, shape, problems)


def _aggregate_partial(
    source: Source, runs: list[dict[str, Any]], shape: str, problems: Problems
) -> Partial:
    ids = unique_ids([str(r["run"]) for r in runs])
    for run, run_id in zip(runs, ids, strict=True):
        run["run"] = run_id
        if len(runs) > 1:
            run["group"] = f"aiperf sweep {Path(source.path).name}"
    notes = [f"AIPerf: {counted(len(runs), 'setting')} from the multi-run export ({shape})"]
    return finish(source, NAME, runs, [], records=len(runs), notes=notes, problems=problems)


def _read_aggregate_csv(
    source: Source,
    kind: str,
    header: list[str],
    rows: list[tuple[int, list[str]]],
    problems: Problems,
    lenient: bool,
) -> Partial:
    """The CSV twins of the multi-run exports: the metrics table ends at the first row that
    is not one (AIPerf writes a blank line, then other sections)."""
    columns = [c.strip() for c in header]
    table: list[tuple[int, dict[str, str]]] = []
    last = None
    for line, cells in rows:
        if last is not None and line > last + 1:
            break  # a blank line: the metrics table is over
        if len(cells) < 2 or (kind == "aggregate" and len(cells) < len(AGGREGATE_CSV_HEADER)):
            break
        table.append((line, dict(zip(columns, (c.strip() for c in cells), strict=False))))
        last = line
    runs: list[dict[str, Any]] = []
    if kind == "aggregate":
        metrics: dict[str, Any] = {}
        first: dict[str, int] = {}
        spread_line = None
        for line, row in table:
            name = row.get("metric", "")
            if name in first:
                problems.add(
                    line,
                    f"metric {name!r} given again (first at line {first[name]})",
                    "each metric once",
                )
                continue
            first[name] = line
            mean = _cell(row.get("mean"), line, "mean", problems)
            if mean is not None:
                metrics[name] = {"mean": mean, "unit": row.get("unit")}
                if name == SPREAD_METRIC:  # the spread BR016 quotes, checked too
                    spread_line = line
                    for stat in ("std", "min", "max"):
                        metrics[name][stat] = _cell(row.get(stat), line, stat, problems)
        run = _aggregate_run(
            source, metrics, {}, _means_note("its profile runs"), None, problems,
            "profile_export_aiperf_aggregate.csv",
        )  # fmt: skip
        if run is not None:
            # the metadata block after the table: "Successful Runs,3"
            count = _successful_runs(rows, problems)
            _keep_spread(run, metrics, count, problems, spread_line)
            runs.append(run)
        elif not any(
            row.get("metric") == "benchmark_duration_avg" and (row.get("mean") or "").strip()
            for _, row in table
        ):  # else its mean is refused at its row already
            problems.add(
                None, 'no "benchmark_duration_avg" row (its "mean")', "a benchmark duration row"
            )
    else:
        runs = _sweep_csv_runs(source, columns, table, rows, problems)
    problems.raise_unless(lenient)
    return _aggregate_partial(source, runs, f"profile_export_aiperf_{kind}.csv", problems)


def _sweep_csv_runs(
    source: Source,
    columns: list[str],
    table: list[tuple[int, dict[str, str]]],
    rows: list[tuple[int, list[str]]],
    problems: Problems,
) -> list[dict[str, Any]]:
    """`profile_export_aiperf_sweep.csv`: one row per swept setting, `<key>_mean/_std/_min/
    _max/_cv` columns. Since 0.11 a setting of one trial has its metrics' own tags as keys
    (`benchmark_duration_mean` is its duration; `request_latency_min` the least request's);
    several trials give `<tag>_<stat>` keys (`benchmark_duration_avg_mean`), means over
    them, whose count the Metadata section gives (successful runs over combinations)."""
    keys = [c.removesuffix("_mean") for c in columns if c.endswith("_mean")]
    stat_columns = {f"{k}_{s}" for k in keys for s in SWEEP_CSV_STATS}
    params = [c for c in columns if c not in stat_columns]
    nested = _tag_form(keys)
    fields = {cells[0].strip(): cells[1].strip() for _, cells in rows if len(cells) >= 2}
    trials, told = _trials(
        None,
        _finite(fields.get("Number of Successful Runs")),
        whole(_finite(fields.get("Number of Combinations"))),
        "combination",
    )
    shape = "profile_export_aiperf_sweep.csv (values rounded to 2 decimals)"
    runs: list[dict[str, Any]] = []
    seen: dict[Any, int] = {}
    for line, row in table:
        parameters = {p: _cell(row.get(p), line, p, problems) for p in params}
        parameters = {k: v for k, v in parameters.items() if v is not None}
        if not _parameters_ok(parameters, line, "sweep row", problems):
            continue
        first = seen.setdefault(_setting_key(parameters), line)
        if first != line:
            problems.add(
                line,
                f"sweep row ({_setting(parameters)}) is the setting of the row at line "
                f"{first} again",
                SETTING_ONCE,
            )
            continue
        what = _whose_figures(nested, trials, told, line, "sweep row", parameters, problems)
        if what is None:
            continue
        # one trial: its tag's mean (the avg), min and max; several: each key's mean
        metrics: dict[str, Any] = {}
        for key in keys:
            cells = {
                s: _cell(row.get(f"{key}_{s}"), line, f"{key}_{s}", problems)
                for s in (("mean", "min", "max") if nested else ("mean",))
            }
            metrics[key] = {s: v for s, v in cells.items() if v is not None}
        run = _aggregate_run(source, metrics, parameters, what, None, problems, shape)
        durations = ("benchmark_duration_mean", "benchmark_duration_avg_mean")
        if run is None and not any((row.get(c) or "").strip() for c in durations):
            # (a duration written but refused is a problem at its cell already)
            problems.add(
                line,
                "no benchmark duration: neither benchmark_duration_mean nor "
                "benchmark_duration_avg_mean holds a number",
                "a duration for the setting (AIPerf sweep CSV)",
            )
        if run is None:
            continue
        runs.append(run)
    return runs


def _successful_runs(rows: list[tuple[int, list[str]]], problems: Problems) -> int | None:
    """The aggregate CSV's "Successful Runs" (its metadata block): the number of profile
    runs behind the means; None when absent or not a count (a problem at its line)."""
    found = [
        (line, cells[1].strip())
        for line, cells in rows
        if len(cells) > 1 and cells[0].strip() == "Successful Runs"
    ]
    for line, _ in found[1:]:
        problems.add(
            line, f'"Successful Runs" given again (first at line {found[0][0]})', "it once"
        )
    if not found:
        return None
    line, text = found[0]
    if not re.fullmatch(r"[0-9]{1,18}", text) or int(text) < 1:
        problems.add(
            line,
            f'"Successful Runs" is {text[:60]!r}',
            "a whole number of profile runs, at least 1",
        )
        return None
    return int(text)


def _finite(text: str | None) -> float | None:
    """A cell's number, None when it is empty or no finite number."""
    try:
        value = float(text) if text else math.nan
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _cell(text: str | None, line: int, column: str, problems: Problems) -> float | None:
    """A number of a multi-run CSV, None when empty; anything but a finite number (text,
    `nan`, `inf`, or one too large to be a float) is a problem at `line`, naming its column."""
    if text is None or not text.strip():
        return None
    value = _finite(text)
    if value is None:
        problems.add(line, f"{shown(column)} is {shown(text)}", "a finite number or empty")
    return value


# --------------------------------------------------------------------------- request inputs


def _read_inputs(source: Source, doc: dict[str, Any]) -> Partial:
    """`inputs.json` holds no results: what it states (max_tokens, ignore_eos) is kept for
    the records file of the same run (see join)."""
    partial = finish(
        source,
        NAME,
        [],
        [],
        records=len(doc["data"]),
        notes=["AIPerf: request inputs (the payloads sent), no results of their own"],
    )
    partial.context = {"aiperf_inputs": inputs_context(doc)}
    return partial


def join(partials: list[Partial]) -> None:
    """Files of one AIPerf run passed together become one run: a summary or an inputs.json
    completes the records file in the same folder (or the only records file of the audit);
    the summary's own run is then dropped and its file's notes say where it went."""
    records = [p for p in partials if _kind(p) == "records"]
    for p in partials:
        kind = _kind(p)
        if kind not in ("summary", "inputs"):
            continue
        assert p.input is not None
        folder = Path(p.input.path).parent
        mates = [r for r in records if r.input is not None and Path(r.input.path).parent == folder]
        if not mates and len(records) == 1:
            mates = records
        if len(mates) != 1:
            if kind == "inputs":
                p.input.notes.append(
                    "AIPerf: no records file of the same run to join these inputs to"
                )
            continue
        target = mates[0].runs[0]
        differ = _counts_differ(p, mates[0], kind)
        if differ is not None:  # another run's file: joining it would state false settings
            p.input.notes.append(f"AIPerf: not joined to run {target['run']}: {differ}")
            continue
        lengths = [float(x) for x in _ok_lengths(mates[0])]
        if kind == "summary":
            summary_run = p.runs[0]
            if (target.get("extra") or {}).get("joined_summary") != p.input.path:
                context = {c: summary_run.get(c) for c in CONTEXT_COLUMNS}
                apply_context(target, context, f"the summary {p.input.path}", lengths)
            p.runs = []
            p.input.notes.append(f"AIPerf: joined to run {target['run']} (the same run's records)")
        else:
            context = p.context.get("aiperf_inputs") or {}
            if (target.get("extra") or {}).get("joined_inputs") != p.input.path:
                apply_context(target, context, f"the request inputs {p.input.path}", lengths)
            p.input.notes.append(f"AIPerf: joined to run {target['run']} (its request inputs)")

    lone = [p for p in partials if _kind(p) == "inputs"]
    if lone and not any(p.runs for p in partials):
        raise TraceError(
            [
                Problem(
                    p.input.path,
                    None,
                    "AIPerf's inputs.json holds the requests sent, no results",
                    "the run's profile_export.jsonl (or its summary) audited with it",
                )
                for p in lone
                if p.input is not None
            ]
        )


def _counts_differ(partial: Partial, records: Partial, kind: str) -> str | None:
    """Why a summary or inputs file cannot belong to the run of a records file: the request
    counts disagree (a summary counts every profiling request; inputs.json holds a payload
    for every request sent, warm-up included, so it may hold more, never fewer)."""
    held = 0 if records.requests is None else len(records.requests)
    if kind == "summary":
        counted = finite_number((partial.runs[0].get("summary") or {}).get("requests"))
        if counted is not None and round(counted) != held:
            return f"its summary counts {counted:g} requests, the records file holds {held}"
        return None
    payloads = finite_number((partial.context.get("aiperf_inputs") or {}).get("payloads"))
    if payloads is not None and payloads < held:
        return f"it holds {payloads:g} payloads, the records file {held} requests"
    return None


def _kind(partial: Partial) -> str | None:
    if partial.input is None or partial.input.format != NAME:
        return None
    if "aiperf_inputs" in partial.context:
        return "inputs"
    if len(partial.runs) != 1:
        return None
    return str((partial.runs[0].get("extra") or {}).get("aiperf_file") or "") or None


def _ok_lengths(partial: Partial) -> list[float]:
    req = partial.requests
    if req is None or not len(req):
        return []
    return [float(x) for x in req.loc[req["ok"], "output_tokens"].dropna()]
