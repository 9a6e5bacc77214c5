"""Ray LLMPerf `token_benchmark_ray.py`: `<name>_individual_responses.json` (one object per
request) and `<name>_summary.json` (flattened statistics).

Neither file has a timestamp per request: the individual responses carry durations (TTFT,
end-to-end latency) and token counts, so the ladder question is undecidable and the effective
concurrency is Little's law (Σ latency ÷ wall). The wall clock is not written either; the
summary lets it be recovered exactly (completed ÷ completed-per-minute × 60), so an individual
responses file takes it from its sibling summary when that file sits next to it.
Token counts are always Llama-2 tokenizer counts, whatever the model; before llmperf PR #45
(April 2024) the per-request rate counted SSE events, not tokens, over the end-to-end time.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

from reporter.adapters._common import (
    Fields,
    Problems,
    container_lines,
    document,
    fail,
    finish,
    line_of,
    new_run,
    num,
)
from reporter.errors import TraceError
from reporter.ingest.limits import read_bytes
from reporter.ingest.lines import Source
from reporter.table import Partial

NAME = "llmperf"
WHAT = "LLMPerf individual response"
SUMMARY_KEY = "results_mean_output_throughput_token_per_s"
INDIVIDUAL_KEYS = (
    "request_output_throughput_token_per_s",
    "end_to_end_latency_s",
    "number_output_tokens",
)
_CAVEATS = [
    "output tokens counted with the Llama-2 tokenizer whatever the model (LLMPerf)",
    "per-request rate: SSE events ÷ end-to-end time before llmperf PR #45 (April 2024), "
    "tokens ÷ end-to-end time after it; the file does not say which",
    "LLMPerf before PR #59 (Dec 2024) sent N requests, waited for all of them, then sent the "
    "next N: fewer than N were in flight on average",
    "stop mode not recorded: LLMPerf sends max_tokens and asks for the length in the prompt",
]
#: Keys that make a file look like this format (to rank the "could not tell" candidates).
DETECT_KEYS = (
    SUMMARY_KEY,
    "num_concurrent_requests",
    "mean_output_tokens",
    *INDIVIDUAL_KEYS,
    "ttft_s",
)


def detect(source: Source, records: list[Any]) -> tuple[bool, list[str]]:
    """A summary with results_mean_output_throughput_token_per_s, or a list of responses with
    request_output_throughput_token_per_s and end_to_end_latency_s."""
    dicts = [r for r in records if isinstance(r, dict)]
    if dicts and SUMMARY_KEY in dicts[0]:
        return True, []
    if dicts and all(all(k in r for k in INDIVIDUAL_KEYS) for r in dicts):
        return True, []
    return False, [f'"{SUMMARY_KEY}"', f'or "{INDIVIDUAL_KEYS[0]}"']


def read(source: Source, *, lenient: bool = False, **options: Any) -> Partial:
    doc = document(source)
    if isinstance(doc, dict) and SUMMARY_KEY in doc:
        return _read_summary(source, doc, lenient)
    if not isinstance(doc, list):
        raise fail(
            source.path,
            1,
            "the file holds neither a summary nor a list of responses",
            "an LLMPerf *_summary.json or *_individual_responses.json",
        )
    return _read_individual(source, doc, lenient)


def _summary_figures(doc: dict[str, Any], f: Fields) -> tuple[dict[str, Any], list[str]]:
    completed = f.number("results_num_completed_requests", required=True)
    per_min = f.number("results_num_completed_requests_per_min", required=True)
    mean_out = _n(doc.get("results_number_output_tokens_mean"))
    mean_in = _n(doc.get("results_number_input_tokens_mean"))
    derived: list[str] = []
    summary: dict[str, Any] = {}
    if completed is None or per_min is None:
        return summary, derived
    wall = completed / (per_min / 60.0) if per_min > 0 else None
    derived.append(
        f"wall clock = completed ÷ completed-per-minute × 60 = {completed:g} ÷ "
        f"{per_min:.2f} × 60 = {wall:.2f} s (LLMPerf writes no duration)"
        if wall is not None
        else "wall clock unknown: no completed-per-minute"
    )
    errors = _n(doc.get("results_number_errors"))
    started = _n(doc.get("results_num_requests_started"))
    summary = {
        "requests": started if started is not None else completed + (errors or 0),
        "failed": errors,
        "wall_s": wall,
        "output_tokens": mean_out * completed if mean_out is not None else None,
        "prompt_tokens": mean_in * completed if mean_in is not None else None,
        "sum_latency_s": _times(doc.get("results_end_to_end_latency_s_mean"), completed),
        "mean_ttft_s": _n(doc.get("results_ttft_s_mean")),
        "median_ttft_s": _n(doc.get("results_ttft_s_quantiles_p50")),
        "mean_reported_tps": _n(doc.get("results_request_output_throughput_token_per_s_mean")),
        "sum_reported_tps": _times(
            doc.get("results_request_output_throughput_token_per_s_mean"), completed
        ),
        "tool_aggregate_tps": _n(doc.get(SUMMARY_KEY)),
        "mean_output_tokens": mean_out,
        "min_output_tokens": _n(doc.get("results_number_output_tokens_min")),
        "max_output_tokens": _n(doc.get("results_number_output_tokens_max")),
    }
    derived.append("output tokens = mean number_output_tokens × completed requests")
    derived.append("Σ latency = mean end_to_end_latency_s × completed requests")
    return summary, derived


def _n(value: Any) -> float | None:
    """LLMPerf writes some statistics as strings ("150")."""
    if isinstance(value, str):
        try:
            return num(float(value))
        except ValueError:
            return None
    return num(value)


def _times(value: Any, count: float) -> float | None:
    v = _n(value)
    return None if v is None else v * count


def _workload(doc: dict[str, Any]) -> dict[str, Any]:
    same_out = _n(doc.get("stddev_output_tokens")) == 0
    same_in = _n(doc.get("stddev_input_tokens")) == 0
    n = _n(doc.get("num_concurrent_requests"))
    return {
        "concurrency": int(n) if n else None,
        "output_tokens": int(doc["mean_output_tokens"])
        if same_out and isinstance(doc.get("mean_output_tokens"), int)
        else None,
        "prompt_tokens": int(doc["mean_input_tokens"])
        if same_in and isinstance(doc.get("mean_input_tokens"), int)
        else None,
        "stop": "unknown",
    }


def _run_name(doc: dict[str, Any], fallback: str) -> str:
    name = doc.get("name")
    if isinstance(name, str) and name:
        return name.removesuffix("_summary")
    return fallback


def _read_summary(source: Source, doc: dict[str, Any], lenient: bool) -> Partial:
    problems = Problems(source.path)
    f = Fields(doc, 1, problems, "LLMPerf summary")
    summary, derived = _summary_figures(doc, f)
    problems.raise_unless(lenient)
    derived.append(
        "no per-request records: the ladder question is undecidable; effective "
        "concurrency from Little's law (Σ latency ÷ wall)"
    )
    run = new_run(
        _run_name(doc, Path(source.path).stem.removesuffix("_summary")),
        source.path,
        1,
        NAME,
        tool=("llmperf", str(doc.get("version")) if doc.get("version") else None),
        model={"name": doc.get("model")},
        workload=_workload(doc),
        summary=summary,
        derived=derived + _CAVEATS,
        extra={
            "framework": doc.get("framework"),
            "timestamp": doc.get("timestamp"),
            "mean_inter_token_latency_s": doc.get("results_inter_token_latency_s_mean"),
            "error_code_frequency": doc.get("results_error_code_frequency"),
        },
    )
    return finish(
        source, NAME, [run], [], records=1, notes=["LLMPerf: summary only"], problems=problems
    )


def _sibling_summary(path: str) -> tuple[dict[str, Any] | None, str | None]:
    """`<name>_summary.json` next to `<name>_individual_responses.json`, if it is there."""
    p = Path(path)
    if not p.name.endswith("_individual_responses.json"):
        return None, None
    sibling = p.with_name(p.name.removesuffix("_individual_responses.json") + "_summary.json")
    try:
        doc = json.loads(read_bytes(str(sibling), "trace"))
    except (OSError, ValueError, RecursionError, TraceError):
        return None, None
    if isinstance(doc, dict) and SUMMARY_KEY in doc:
        return doc, sibling.name
    return None, None


def _read_individual(source: Source, doc: list[Any], lenient: bool) -> Partial:
    problems = Problems(source.path)
    lines = container_lines(source.data, 1)
    summary_doc, sibling = _sibling_summary(source.path)
    run_id = _run_name(
        summary_doc or {},
        Path(source.path).name.removesuffix("_individual_responses.json").removesuffix(".json"),
    )
    rows: list[dict[str, Any]] = []
    stray = 0
    latencies: list[float] = []
    ttfts: list[float] = []
    for i, item in enumerate(doc):
        line = line_of(lines, i)
        if not isinstance(item, dict):
            stray += 1
            continue
        f = Fields(item, line, problems, WHAT)
        e2e = f.number("end_to_end_latency_s", unit="seconds")
        ttft = f.number("ttft_s", unit="seconds")
        out = f.integer("number_output_tokens")
        prompt = f.integer("number_input_tokens")
        rate = f.number("request_output_throughput_token_per_s")
        code = item.get("error_code")
        message = item.get("error_msg")
        if not f.ok:
            continue
        error = None
        if code is not None or (isinstance(message, str) and message):
            error = str(message or f"error code {code}")
        if error is None and e2e is not None:
            latencies.append(e2e)
        if error is None and ttft is not None:
            ttfts.append(ttft)
        rows.append(
            {
                "run": run_id,
                "id": str(i),
                "output_tokens": out,
                "prompt_tokens": prompt,
                "reported_tps": rate,
                "error": error,
                "finish_reason": "error" if error else None,
                "source_line": line,
            }
        )
    problems.raise_unless(lenient)
    derived = [
        "no per-request send times: the ladder question is undecidable; effective "
        "concurrency from Little's law (Σ latency ÷ wall)",
        "Σ latency = Σ end_to_end_latency_s of the successful requests",
    ]
    summary: dict[str, Any] = {
        "requests": len(rows),
        "failed": sum(1 for r in rows if r["error"]),
        "sum_latency_s": sum(latencies) if latencies else None,
        "mean_ttft_s": statistics.fmean(ttfts) if ttfts else None,
        "median_ttft_s": statistics.median(ttfts) if ttfts else None,
    }
    notes = [f"LLMPerf: {len(rows)} individual response(s)"]
    workload: dict[str, Any] = {"stop": "unknown"}
    model = None
    version = None
    if summary_doc is not None:
        figures, more = _summary_figures(
            summary_doc, Fields(summary_doc, None, Problems(sibling or ""), "LLMPerf summary")
        )
        if figures.get("wall_s") is not None:
            summary["wall_s"] = figures["wall_s"]
            summary["tool_aggregate_tps"] = figures.get("tool_aggregate_tps")
            derived.append(f"wall clock from the sibling summary {sibling}: " + more[0])
        workload = _workload(summary_doc)
        model = summary_doc.get("model")
        version = summary_doc.get("version")
        notes.append(f"LLMPerf: run settings and wall clock from the sibling {sibling}")
    else:
        derived.append(
            "wall clock unknown: the responses hold no timestamps and no sibling "
            "*_summary.json was found"
        )
    if stray:
        notes.append(
            f"LLMPerf: left aside {stray} entries that are not objects (llmperf "
            "f1d6bed4 appends a dict's keys to the list)"
        )
    run = new_run(
        run_id,
        source.path,
        line_of(lines),
        NAME,
        tool=("llmperf", str(version) if version else None),
        model={"name": model},
        workload=workload,
        summary=summary,
        derived=derived + _CAVEATS,
        extra={"summary_file": sibling},
    )
    return finish(source, NAME, [run], rows, records=len(doc), notes=notes, problems=problems)
