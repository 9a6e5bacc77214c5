"""Ray LLMPerf `token_benchmark_ray.py`: `<name>_individual_responses.json` (one object per
request) and `<name>_summary.json` (flattened statistics).

Neither file has a timestamp per request: the individual responses carry durations (TTFT,
end-to-end latency) and token counts, so no completion ladder can be drawn and the effective
concurrency is Little's law (Σ latency ÷ wall). The wall clock is not written either; the
summary lets it be recovered exactly (completed ÷ completed-per-minute × 60), so an individual
responses file takes it from its sibling summary when that file sits next to it.
Token counts are always Llama-2 tokenizer counts, whatever the model; before llmperf PR #45
(April 2024) the per-request rate counted SSE events, not tokens, over the end-to-end time.

A summary and the individual responses of the same run, passed together, are one run (`join`):
they are matched by the run name (or the sibling file name), the model, the concurrency and
the request counts (started, completed) and the completed requests' output tokens. Summaries
wrapped in a dict keyed by concurrency (`{"1": {...summary...}, "2": {...}}`, as sweep
scripts collect them) are one run per key.

Error code -100 ("Output too few tokens N") is LLMPerf's own check on a finished answer that
came back shorter than asked for: the request completed with tokens, the client flagged it
and left its tokens out of the aggregate. Such requests are "too_short" (named by that cause
in BR019 at info), not server failures.
"""

from __future__ import annotations

import re
import statistics
from pathlib import Path
from typing import Any

import orjson

from reporter.adapters._common import (
    Fields,
    Problems,
    container_lines,
    document,
    fail,
    finish,
    lengths_drawn,
    line_of,
    new_run,
    unique_ids,
)
from reporter.errors import TraceError
from reporter.ingest.limits import read_bytes
from reporter.ingest.lines import Source
from reporter.numbers import counted
from reporter.table import Partial
from reporter.values import finite_number

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


#: LLMPerf's error code for an answer shorter than asked for (token_benchmark_ray.py:
#: "Output too few tokens"): set by the client on a request that finished.
TOO_SHORT_CODE = -100


def _is_wrapper(doc: Any) -> bool:
    """Summaries wrapped in a dict keyed by concurrency (or any label)."""
    return (
        isinstance(doc, dict)
        and bool(doc)
        and SUMMARY_KEY not in doc
        and all(isinstance(v, dict) and SUMMARY_KEY in v for v in doc.values())
    )


def detect(source: Source, records: list[Any]) -> tuple[bool, list[str]]:
    """A summary with results_mean_output_throughput_token_per_s (alone, or several in a dict
    keyed by concurrency), or a list of responses with request_output_throughput_token_per_s
    and end_to_end_latency_s."""
    dicts = [r for r in records if isinstance(r, dict)]
    if dicts and (SUMMARY_KEY in dicts[0] or _is_wrapper(dicts[0])):
        return True, []
    if dicts and all(all(k in r for k in INDIVIDUAL_KEYS) for r in dicts):
        return True, []
    return False, [f'"{SUMMARY_KEY}"', f'or "{INDIVIDUAL_KEYS[0]}"']


def read(source: Source, *, lenient: bool = False, **options: Any) -> Partial:
    doc = document(source)
    if isinstance(doc, dict) and SUMMARY_KEY in doc:
        return _read_summary(source, doc, lenient)
    if _is_wrapper(doc):
        return _read_wrapper(source, doc, lenient)
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
    too_short = _error_codes(doc.get("results_error_code_frequency")).get(TOO_SHORT_CODE)
    summary = {
        "requests": started if started is not None else completed + (errors or 0),
        "failed": errors,
        "too_short": too_short,
        "wall_s": wall,
        "output_tokens": mean_out * completed if mean_out is not None else None,
        "prompt_tokens": mean_in * completed if mean_in is not None else None,
        "mean_prompt_tokens": mean_in,
        "sum_latency_s": _times(doc.get("results_end_to_end_latency_s_mean"), completed),
        "mean_ttft_s": _n(doc.get("results_ttft_s_mean")),
        "median_ttft_s": _n(doc.get("results_ttft_s_quantiles_p50")),
        "mean_reported_tps": _n(doc.get("results_request_output_throughput_token_per_s_mean")),
        "sum_reported_tps": _times(
            doc.get("results_request_output_throughput_token_per_s_mean"), completed
        ),
        "tool_aggregate_tps": _n(doc.get(SUMMARY_KEY)),
        "tool_aggregate_field": SUMMARY_KEY,
        "mean_output_tokens": mean_out,
        "min_output_tokens": _n(doc.get("results_number_output_tokens_min")),
        "max_output_tokens": _n(doc.get("results_number_output_tokens_max")),
        # the tool's percentiles of time to first token and end-to-end latency (its
        # inter_token_latency_s divides a request's whole latency, first token included, by
        # its tokens: neither an ITL nor a TPOT, so left out)
        **{
            f"{metric}_p{q}_s": _n(doc.get(f"results_{key}_s_quantiles_p{q}"))
            for metric, key in (("ttft", "ttft"), ("e2e", "end_to_end_latency"))
            for q in (50, 90, 99)
        },
    }
    if too_short:
        derived.append(
            f"{too_short:g} of the {errors or 0:g} errors are code {TOO_SHORT_CODE} ('Output too "
            "few tokens'): answers that finished shorter than asked for, flagged by the client"
        )
    derived.append("output tokens = mean number_output_tokens × completed requests")
    derived.append("Σ latency = mean end_to_end_latency_s × completed requests")
    return summary, derived


def _error_codes(value: Any) -> dict[int, float]:
    """results_error_code_frequency, a dict or its Python repr as a string ("{-100.0: 49}")."""
    if isinstance(value, str):
        pairs = re.findall(r"(-?\d+(?:\.\d+)?)\s*:\s*(\d+(?:\.\d+)?)", value)
        return {int(float(k)): float(v) for k, v in pairs}
    if isinstance(value, dict):
        out: dict[int, float] = {}
        for k, v in value.items():
            code, count = _n(k), _n(v)
            if code is not None and count is not None:
                out[int(code)] = count
        return out
    return {}


def _n(value: Any) -> float | None:
    """LLMPerf writes some statistics as strings ("150")."""
    if isinstance(value, str):
        try:
            return finite_number(float(value))
        except ValueError:
            return None
    return finite_number(value)


def _times(value: Any, count: float) -> float | None:
    v = _n(value)
    return None if v is None else v * count


def _workload(doc: dict[str, Any]) -> dict[str, Any]:
    same_out = _n(doc.get("stddev_output_tokens")) == 0
    same_in = _n(doc.get("stddev_input_tokens")) == 0
    n = _n(doc.get("num_concurrent_requests"))
    return {
        "concurrency": int(n) if n is not None and n >= 1 else None,
        "output_tokens": _count(doc.get("mean_output_tokens")) if same_out else None,
        "prompt_tokens": _count(doc.get("mean_input_tokens")) if same_in else None,
        "stop": "unknown",
    }


def _count(value: Any) -> int | None:
    """A token count of the summary: a whole number ≥ 1, else unknown (a negative or zero
    mean is not a length that every request had, and the native schema refuses it)."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return value
    return None


def _run_name(doc: dict[str, Any], fallback: str) -> str:
    name = doc.get("name")
    if isinstance(name, str) and name:
        return name.removesuffix("_summary")
    return fallback


def _read_summary(source: Source, doc: dict[str, Any], lenient: bool) -> Partial:
    problems = Problems(source.path)
    run = _summary_run(
        doc, _run_name(doc, Path(source.path).stem.removesuffix("_summary")), source.path, 1,
        problems,
    )  # fmt: skip
    problems.raise_unless(lenient)
    return finish(
        source, NAME, [run], [], records=1, notes=["LLMPerf: summary only"], problems=problems
    )


def _read_wrapper(source: Source, doc: dict[str, Any], lenient: bool) -> Partial:
    """Summaries keyed by concurrency (or another label): one run per key."""
    problems = Problems(source.path)
    lines = container_lines(source.data, 1)
    names = unique_ids(
        [f"{_run_name(v, 'llmperf')}:{'c' if k.isdigit() else ''}{k}" for k, v in doc.items()]
    )
    runs = [
        _summary_run(value, name, source.path, line_of(lines, key), problems)
        for (key, value), name in zip(doc.items(), names, strict=True)
    ]
    for run, key in zip(runs, doc, strict=True):
        stated = run["concurrency"]
        if stated is not None and str(key) not in (str(stated), f"{stated:g}"):
            run["derived"].append(
                f"the wrapper's key {key!r} is not the summary's num_concurrent_requests "
                f"{stated:g}; the summary's value is used"
            )
    problems.raise_unless(lenient)
    notes = [f"LLMPerf: {len(runs)} summaries in one object keyed by {', '.join(map(str, doc))}"]
    return finish(source, NAME, runs, [], records=len(runs), notes=notes, problems=problems)


def _summary_run(
    doc: dict[str, Any], run_id: str, path: str, line: int, problems: Problems
) -> dict[str, Any]:
    f = Fields(doc, line, problems, "LLMPerf summary")
    summary, derived = _summary_figures(doc, f)
    derived.append(
        "no per-request records: no completion times to order into a ladder; effective "
        "concurrency from Little's law (Σ latency ÷ wall)"
    )
    workload = _workload(doc)
    prompt_asked, prompt_measured = (
        workload["prompt_tokens"],
        _n(doc.get("results_number_input_tokens_mean")),
    )
    if prompt_asked and prompt_measured and abs(prompt_measured / prompt_asked - 1) > 0.05:
        # the prompts as sent and counted are the context, not the length asked for
        workload["prompt_tokens"] = None
        derived.append(
            f"prompt length asked {prompt_asked:g} tokens (mean_input_tokens), measured mean "
            f"{prompt_measured:g}: the measured one is the run's"
        )
    asked, spread = _n(doc.get("mean_output_tokens")), _n(doc.get("stddev_output_tokens"))
    if asked is not None and spread:
        derived.append(lengths_drawn(asked, spread, " (LLMPerf's max_tokens)"))
    return new_run(
        run_id,
        path,
        line,
        NAME,
        tool=("llmperf", str(doc.get("version")) if doc.get("version") else None),
        model={"name": doc.get("model")},
        workload=workload,
        summary=summary,
        derived=derived + _CAVEATS,
        extra={
            "framework": doc.get("framework"),
            "timestamp": doc.get("timestamp"),
            "mean_inter_token_latency_s": doc.get("results_inter_token_latency_s_mean"),
            "error_code_frequency": doc.get("results_error_code_frequency"),
            "kind": "summary",
            "name": doc.get("name"),
        },
    )


def _sibling_summary(path: str) -> tuple[dict[str, Any] | None, str | None]:
    """`<name>_summary.json` next to `<name>_individual_responses.json`, if it is there."""
    p = Path(path)
    if not p.name.endswith("_individual_responses.json"):
        return None, None
    sibling = p.with_name(p.name.removesuffix("_individual_responses.json") + "_summary.json")
    try:
        doc = orjson.loads(read_bytes(str(sibling), "trace"))
    except (OSError, orjson.JSONDecodeError, TraceError):
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
        too_short = error is not None and _n(code) == TOO_SHORT_CODE
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
                "ttft": ttft,
                "e2e": e2e,
                "error": error,
                "finish_reason": "too_short" if too_short else "error" if error else None,
                "source_line": line,
            }
        )
    problems.raise_unless(lenient)
    derived = [
        "no per-request send times: no completion times to order into a ladder; effective "
        "concurrency from Little's law (Σ latency ÷ wall)",
        "Σ latency = Σ end_to_end_latency_s of the successful requests",
    ]
    flagged = sum(1 for r in rows if r["finish_reason"] == "too_short")
    if flagged:
        derived.append(
            f"{counted(flagged, 'response')} with error code {TOO_SHORT_CODE} "
            "('Output too few tokens'): "
            "answers that finished shorter than asked for, flagged by the client; their "
            "tokens are outside LLMPerf's aggregate and this one"
        )
    summary: dict[str, Any] = {
        "requests": len(rows),
        "failed": sum(1 for r in rows if r["error"]),
        "sum_latency_s": sum(latencies) if latencies else None,
        "mean_ttft_s": statistics.fmean(ttfts) if ttfts else None,
        "median_ttft_s": statistics.median(ttfts) if ttfts else None,
    }
    notes = [f"LLMPerf: {counted(len(rows), 'individual response')}"]
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
            summary["tool_aggregate_field"] = figures.get("tool_aggregate_field")
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
        extra={"summary_file": sibling, "kind": "individual_responses"},
    )
    return finish(source, NAME, [run], rows, records=len(doc), notes=notes, problems=problems)


#: Run-table fields the summary states and the individual responses do not.
_FROM_SUMMARY = ("concurrency", "output_tokens_requested", "prompt_tokens", "model_name")


def join(partials: list[Partial]) -> None:
    """A summary and the individual responses of one run, passed together, become one run:
    the responses' run takes what only the summary holds (wall clock, settings), and the
    summary's own run is dropped; both files' notes say so."""
    summaries = [
        (p, r)
        for p in partials
        for r in p.runs
        if p.input is not None and p.input.format == NAME and _kind(r) == "summary"
    ]
    used: set[int] = set()
    for part in partials:
        if part.input is None or part.input.format != NAME:
            continue
        for run in part.runs:
            if _kind(run) != "individual_responses":
                continue
            for spart, srun in summaries:
                if id(srun) in used or spart is part:
                    continue
                why = _same_run(part, run, spart, srun)
                if why is None:
                    continue
                used.add(id(srun))
                _merge(run, srun, spart, why)
                spart.runs.remove(srun)
                assert spart.input is not None
                here, there = Path(part.input.path).name, Path(spart.input.path).name
                spart.input.notes.append(f"LLMPerf: read with {here} as one run ({why})")
                part.input.notes.append(f"LLMPerf: read with {there} as one run ({why})")
                break


def _kind(run: dict[str, Any]) -> Any:
    return (run.get("extra") or {}).get("kind")


def _same_run(
    part: Partial, run: dict[str, Any], spart: Partial, srun: dict[str, Any]
) -> str | None:
    """Why the two are one run, or None when anything they both state differs."""
    assert spart.input is not None
    mine, theirs = run.get("summary") or {}, srun.get("summary") or {}
    if (run.get("extra") or {}).get("summary_file") == Path(spart.input.path).name:
        return "its sibling summary file"
    for key in ("model_name", "concurrency"):
        if run.get(key) is not None and srun.get(key) is not None and run[key] != srun[key]:
            return None
    if mine.get("requests") != theirs.get("requests") or mine.get("failed") != theirs.get("failed"):
        return None
    reasons = [f"{theirs.get('requests'):g} requests started, {theirs.get('failed'):g} with errors"]
    tokens = theirs.get("output_tokens")
    rows = part.requests
    if tokens is not None and rows is not None and len(rows):
        ok = rows[(rows["run"].astype(str) == str(run["run"])) & rows["ok"]]
        total = float(ok["output_tokens"].sum())
        if abs(total - float(tokens)) >= 0.5:
            return None
        reasons.append(f"{total:,.0f} output tokens of the completed requests")
    if run["run"] == srun["run"]:
        reasons.insert(0, f"name {run['run']}")
    if srun.get("model_name") is not None:
        reasons.append(f"model {srun['model_name']}")
    return "same " + ", ".join(reasons)


def _merge(run: dict[str, Any], srun: dict[str, Any], spart: Partial, why: str) -> None:
    assert spart.input is not None
    summary = dict(run.get("summary") or {})
    theirs = srun.get("summary") or {}
    for key in ("wall_s", "tool_aggregate_tps", "tool_aggregate_field"):
        if summary.get(key) is None and theirs.get(key) is not None:
            summary[key] = theirs[key]
    run["summary"] = summary
    for key in _FROM_SUMMARY:
        if run.get(key) is None and srun.get(key) is not None:
            run[key] = srun[key]
    if run.get("tool_version") is None:
        run["tool_version"] = srun.get("tool_version")
    name = Path(spart.input.path).name
    run["derived"] = [
        d
        for d in run.get("derived") or []
        if not d.startswith("wall clock unknown: the responses hold no timestamps")
    ] + [
        f"one run with the summary {name} ({why}): wall clock and settings from the summary",
        *(d for d in srun.get("derived") or [] if d.startswith("wall clock =")),
    ]
    extra = dict(run.get("extra") or {})
    extra["summary_file"] = name
    run["extra"] = extra
