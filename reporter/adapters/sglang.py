"""SGLang `python -m sglang.bench_serving` result lines.

JSON Lines, appended one line per run to `--output-file`; `request_rate` is Python's
`float("inf")`, which `json.dumps` writes as the non-standard token `Infinity`. With
`--output-details` the line also holds per-request lists (input_lens, output_lens, ttfts, itls,
errors) but never send times nor per-request latencies, so the ladder question is undecidable;
the tool's own `concurrency` is Little's law (Σ e2e latency ÷ duration), and is kept as such.
Newer versions add `server_info` (the server's arguments, version and speculative settings).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from reporter.adapters import vllm
from reporter.adapters._common import (
    Fields,
    Problems,
    finish,
    new_run,
    runs_of_records,
)
from reporter.grouping import SGLANG_RECORD_KEYS
from reporter.ingest.lines import Source
from reporter.table import Partial

NAME = "sglang"
WHAT = "SGLang bench_serving result"
DECISIVE = (
    "backend",
    "duration",
    "completed",
    "total_output_tokens",
    "total_output_tokens_retokenized",
)
#: Server arguments worth naming as engine flags when the line carries server_info.
FLAG_KEYS = (
    "tp_size",
    "dp_size",
    "pp_size",
    "max_running_requests",
    "chunked_prefill_size",
    "disable_radix_cache",
    "enable_mixed_chunk",
    "speculative_algorithm",
    "speculative_num_steps",
    "speculative_num_draft_tokens",
    "quantization",
    "kv_cache_dtype",
    "attention_backend",
    "schedule_policy",
    "stream_interval",
)
#: Keys that make a file look like this format (to rank the "could not tell" candidates).
DETECT_KEYS = (*DECISIVE, "dataset_name", "concurrency", "output_throughput")
#: Keys bench_serving writes itself, beside its statistics (`_STAT_KEY`); any other scalar
#: key of a line (a fork's, such as num_instances) is kept as one of the run's settings.
KNOWN_KEYS = {
    "backend", "dataset_name", "request_rate", "max_concurrency", "sharegpt_output_len",
    "fixed_output_len", "random_input_len", "random_output_len", "random_range_ratio",
    "duration", "completed", "concurrency", "accept_length", "tag", "server_info",
    "max_concurrent_requests", "input_lens", "output_lens", "ttfts", "itls",
    "generated_texts", "errors", "start_times", "latencies",
}  # fmt: skip
#: Statistics (mean_ttft_ms, p99_itl_ms, …), totals (total_output_tokens_retokenized) and
#: rates (output_throughput, max_output_tokens_per_s, ttft_slo_attainment) that
#: bench_serving and its forks write: measurements, never settings.
_STAT_KEY = re.compile(
    r"^((mean|median|std|min|max|p\d+(\.\d+)?)_\w+_(ms|s)|total_\w+|\w+_(throughput|per_s|attainment))$"
)


def settings_of(record: dict[str, Any]) -> dict[str, Any]:
    """The line's scalar keys that bench_serving does not write itself (a fork's or a
    wrapper's: the settings it ran under, which grouping compares)."""
    return {
        k: v
        for k, v in record.items()
        if k not in KNOWN_KEYS
        and not _STAT_KEY.match(k)
        and (v is None or isinstance(v, str | int | float | bool))
    }


def detect(source: Source, records: list[Any]) -> tuple[bool, list[str]]:
    """backend, duration, completed and total_output_tokens_retokenized (SGLang only)."""
    dicts = [r for r in records if isinstance(r, dict)]
    if dicts and all(all(k in r for k in DECISIVE) for r in dicts):
        return True, []
    sample = dicts[0] if dicts else {}
    return False, [f'"{k}"' for k in DECISIVE if k not in sample]


def read(source: Source, *, lenient: bool = False, **options: Any) -> Partial:
    """One run per line; per-request rows when the line has --output-details lists."""
    problems = Problems(source.path)
    # JSON Lines as written; a pretty-printed or listed copy is read as well
    records, _ = vllm._records(source, problems)
    runs, rows = runs_of_records(records, _name, _run, source.path, problems, WHAT)
    problems.raise_unless(lenient)
    notes = [f"SGLang: {len(runs)} run(s), one a line"]
    return finish(source, NAME, runs, rows, records=len(records), notes=notes, problems=problems)


def _name(record: dict[str, Any]) -> str:
    if isinstance(record.get("tag"), str) and record["tag"]:
        return str(record["tag"])
    rate = record.get("request_rate")
    rate_text = "inf" if not isinstance(rate, int | float) or math.isinf(rate) else f"{rate:g}"
    name = f"{record.get('backend') or 'sglang'}:{rate_text}qps"
    if record.get("max_concurrency"):
        name += f":c{record['max_concurrency']}"
    return name


def _is_chunk_timing(key: str) -> bool:
    """A summary key the client times from the streamed chunks (TTFT, ITL, TPOT)."""
    return any(m in key for m in ("ttft", "tpot", "itl"))


def _run(
    record: dict[str, Any], line: int, run_id: str, path: str, problems: Problems
) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    f = Fields(record, line, problems, WHAT)
    duration = f.number("duration", required=True, unit="seconds")
    completed = f.integer("completed", required=True)
    total_output = f.integer("total_output_tokens", required=True)
    retokenized = f.integer("total_output_tokens_retokenized")
    total_input = f.integer("total_input_tokens")
    max_concurrency = f.integer("max_concurrency", minimum=1)
    rate_raw = record.get("request_rate")
    rate_inf = isinstance(rate_raw, float) and math.isinf(rate_raw)
    rate = None if rate_inf else f.number("request_rate")
    mean_e2e = f.number("mean_e2e_latency_ms", unit="milliseconds")
    tool_concurrency = f.number("concurrency")
    accept_length = f.number("accept_length")
    peak = f.integer("max_concurrent_requests")
    server = f.mapping("server_info")
    details = vllm._details(f, record)
    if not f.ok:
        return None, []
    assert duration is not None and completed is not None and total_output is not None
    derived: list[str] = []
    rows, sum_latency, latency_note, n_chunks = vllm._rows(details, run_id, line, derived)
    failed: int | None = None
    requests = completed
    if rows:
        failed = sum(1 for r in rows if r.get("error"))
        requests = len(rows)
    else:
        derived.append("failed requests not recorded (SGLang writes only the completed count)")
    if mean_e2e is not None:
        sum_latency = mean_e2e / 1000.0 * completed
        latency_note = (
            f"Σ latency = mean_e2e_latency_ms × completed = {mean_e2e:.1f} ms × "
            f"{completed} (SGLang's own concurrency {tool_concurrency:.2f} is the "
            "same Little's law)"
            if tool_concurrency is not None
            else f"Σ latency = mean_e2e_latency_ms × completed = {mean_e2e:.1f} ms × {completed}"
        )
    if latency_note:
        derived.append(latency_note)
    derived.append(
        "no per-request send times: the ladder question is undecidable; "
        "effective concurrency from Little's law (Σ latency ÷ duration)"
    )
    derived.append(
        "stop mode not recorded: bench_serving sends ignore_eos unless "
        "--disable-ignore-eos, and the file does not say which"
    )
    if retokenized is not None:
        derived.append(
            f"output tokens as the server counted them ({total_output}); "
            f"re-tokenized by the client: {retokenized}"
        )

    lengths = _requested_lengths(record, f, derived)
    engine: dict[str, Any] | None = None
    spec: dict[str, Any] | None = None
    model = None
    if server is not None:
        if "decode" in server and isinstance(server["decode"], list) and server["decode"]:
            server = server["decode"][0] if isinstance(server["decode"][0], dict) else server
        flags = [
            f"{k}={server[k]}" for k in FLAG_KEYS if server.get(k) not in (None, False, "", [])
        ]
        engine = {"name": "sglang", "version": server.get("version"), "flags": flags}
        algorithm = server.get("speculative_algorithm")
        spec = {
            "enabled": algorithm is not None,
            "method": algorithm,
            "source": f"server_info.speculative_algorithm {algorithm!r}"
            if algorithm is not None
            else "server_info.speculative_algorithm null",
        }
        model = server.get("served_model_name") or server.get("model_path")
    if accept_length is not None:
        spec = {
            "enabled": True,
            "method": (spec or {}).get("method"),
            "source": f"accept_length {accept_length:.2f}",
        }
        derived.append(
            f"accept_length {accept_length:.2f} is server-wide and accumulated over "
            "earlier traffic, not this run's acceptance"
        )

    summary: dict[str, Any] = {
        "requests": requests,
        "failed": failed,
        "output_tokens": total_output,
        "prompt_tokens": total_input,
        "wall_s": duration,
        "sum_latency_s": sum_latency,
        "mean_ttft_s": _s(f.number("mean_ttft_ms")),
        "median_ttft_s": _s(f.number("median_ttft_ms")),
        "mean_tpot_s": _s(f.number("mean_tpot_ms")),
        "std_tpot_s": _s(f.number("std_tpot_ms")),  # np.std over the requests' TPOTs
        "median_tpot_s": _s(f.number("median_tpot_ms")),
        # the tool's percentiles (median, p90 where written, p99)
        **{
            f"{metric}_p{q}_s": _s(f.number(f"{prefix}_{key}_ms"))
            for metric, key in (
                ("ttft", "ttft"),
                ("tpot", "tpot"),
                ("itl", "itl"),
                ("e2e", "e2e_latency"),
            )
            for q, prefix in ((50, "median"), (90, "p90"), (99, "p99"))
        },
        "mean_itl_s": _s(f.number("mean_itl_ms")),
        "tool_aggregate_tps": f.number("output_throughput"),
        "tool_concurrency": tool_concurrency,
        "tool_peak_concurrency": peak,
        "mean_output_tokens": total_output / completed if completed else None,
        "chunks": n_chunks,
    }
    if retokenized == 0 and total_output > 0 and not rows:
        # the client timed the first chunk and the gaps between chunks; it received no text,
        # so the zeros it wrote for them are no measurement (the end-to-end times are)
        for key in [k for k in summary if k.endswith("_s") and _is_chunk_timing(k)]:
            summary[key] = None
        derived.append(
            f"the client received no text (re-tokenized output 0 of the server's "
            f"{total_output}): its TTFT, ITL and TPOT statistics, written as 0, are unknown"
        )
    concurrency: int | None = max_concurrency
    concurrency_derived = False
    if concurrency is None and rate_inf and rows:
        concurrency, concurrency_derived = len(rows), True
        derived.append(
            f"concurrency = {len(rows)} requests: request rate inf and no "
            "max_concurrency, so every request was sent at once"
        )
    derived.append(
        "tool version not recorded (the server's version is)"
        if engine is not None and engine.get("version")
        else "tool version not recorded, nor the server's (no server_info)"
        if engine is None
        else "tool version not recorded, nor the server's"
    )
    if peak is not None:
        derived.append(
            f"max_concurrent_requests {peak}: the tool's own peak, by a method the file "
            "does not name (vLLM's, which SGLang copied, counted 1-second buckets)"
        )
    extra = {k: record.get(k) for k in SGLANG_RECORD_KEYS}
    extra.update(settings_of(record))
    extra["request_rate"] = "inf" if rate_inf else rate
    extra["total_output_tokens_retokenized"] = retokenized
    extra["per_request_lists"] = bool(rows) or None
    run = new_run(
        run_id,
        path,
        line,
        NAME,
        tool=("sglang bench_serving", None),
        engine=engine,
        model={"name": model},
        workload={
            "concurrency": concurrency,
            "request_rate": math.inf if rate_inf else rate,
            "dataset": record.get("dataset_name")
            if isinstance(record.get("dataset_name"), str)
            else None,
            "output_tokens": lengths.output,
            "output_tokens_min": lengths.output_min,
            "prompt_tokens": lengths.prompt,
            "stop": "unknown",
            "speculative": spec,
        },
        summary=summary,
        derived=derived,
        extra=extra,
        concurrency_derived=concurrency_derived,
    )
    return run, rows


@dataclass
class _Lengths:
    """What the line says was requested: output length (the upper end of a range), the
    range's lower end, and the prompt length (None where not recorded)."""

    output: int | None = None
    output_min: int | None = None
    prompt: int | None = None


def _requested_lengths(record: dict[str, Any], f: Fields, derived: list[str]) -> _Lengths:
    """The requested lengths, read only where the dataset uses them.

    random_input_len / random_output_len are written whatever the dataset, at their defaults
    (1024) when it is not a random one; with random_range_ratio r < 1 each request's length
    is drawn from [int(r × len), len] (bench_serving's sample_random_requests).
    """
    dataset = record.get("dataset_name")
    fixed = f.integer("sharegpt_output_len", minimum=1) or f.integer("fixed_output_len", minimum=1)
    if isinstance(dataset, str) and dataset.startswith("random"):
        out_len = f.integer("random_output_len", minimum=1)
        in_len = f.integer("random_input_len")
        ratio = f.number("random_range_ratio")
        if ratio is None or ratio >= 1:
            return _Lengths(out_len, None, in_len)
        out_min = int(out_len * ratio) if out_len is not None else None
        in_min = int(in_len * ratio) if in_len is not None else None
        derived.append(
            f"lengths drawn per request (random_range_ratio {ratio:g}): output from "
            f"[{out_min}, {out_len}] tokens, prompt from [{in_min}, {in_len}]; the mean "
            f"output asked for is about {((out_min or 0) + (out_len or 0)) / 2:g}"
        )
        return _Lengths(out_len, out_min, None)
    if fixed is not None:
        return _Lengths(fixed, None, None)
    name = dataset if isinstance(dataset, str) else "not recorded"
    if "random_output_len" in record or "random_input_len" in record:
        derived.append(
            f"requested lengths not recorded: the dataset is {name!r}, so random_input_len "
            f"{record.get('random_input_len')} and random_output_len "
            f"{record.get('random_output_len')} describe nothing that was sent"
        )
    else:
        derived.append(f"requested lengths not recorded (dataset {name!r})")
    return _Lengths()


def _s(ms: float | None) -> float | None:
    return None if ms is None else ms / 1000.0
