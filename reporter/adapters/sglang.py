"""SGLang `python -m sglang.bench_serving` result lines.

JSON Lines, appended one line per run to `--output-file`; `request_rate` is Python's
`float("inf")`, which `json.dumps` writes as the non-standard token `Infinity`. With
`--output-details` the line also holds per-request lists (input_lens, output_lens, ttfts, itls,
errors) but never send times nor per-request latencies, so no completion ladder can be drawn;
the tool's own `concurrency` is Little's law (Σ e2e latency ÷ duration), and is kept as such.
Newer versions add `server_info` (the server's arguments, version and speculative settings).

The same `result.jsonl` name is also where `python -m sglang.bench_one_batch` (formerly
`bench_latency`) and `bench_one_batch_server` append their lines: one static batch of
`batch_size` sequences, each with `input_len` prompt tokens and exactly `output_len` generated
ones (ignore_eos), all started together. The offline tool times the batch's prefill
(`prefill_latency`) and each decode step (`median_decode_latency`), `total_latency` being
their sum; the server tool times the one HTTP request that carries the whole batch
(`latency`), and since it streamed (the lines with `last_gen_throughput`) its
`output_throughput` is batch × output_len ÷ (latency − the batch's last first-token time).
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
    keys_present,
    new_run,
    runs_of_records,
)
from reporter.grouping import SGLANG_RECORD_KEYS
from reporter.ingest.lines import Source
from reporter.numbers import counted
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


#: The keys of a bench_one_batch / bench_one_batch_server line, beside its latency.
ONE_BATCH_KEYS = ("run_name", "batch_size", "input_len", "output_len", "overall_throughput")
WHAT_ONE_BATCH = "SGLang bench_one_batch result"
#: What bench_one_batch_server's output_throughput is when it streamed the batch (it then
#: times the last sequence's first token, last_ttft, and divides by the time after it).
STREAMED_OUTPUT_THROUGHPUT = (
    "batch_size × output_len ÷ (latency − the batch's last first-token time): it leaves out "
    "the prefill and any wait"
)


def is_one_batch(record: Any) -> bool:
    """A line of bench_one_batch (total_latency) or bench_one_batch_server (latency)."""
    return (
        isinstance(record, dict)
        and all(k in record for k in ONE_BATCH_KEYS)
        and ("total_latency" in record or "latency" in record)
    )


def detect(source: Source, records: list[Any]) -> tuple[bool, list[str]]:
    """backend, duration, completed and total_output_tokens_retokenized (SGLang only); or the
    batch size, lengths and latency of a bench_one_batch line."""
    dicts = [r for r in records if isinstance(r, dict)]
    if dicts and all(all(k in r for k in DECISIVE) or is_one_batch(r) for r in dicts):
        return True, []
    sample = keys_present(source, records)
    return False, [f'"{k}"' for k in DECISIVE if k not in sample]


def read(source: Source, *, lenient: bool = False, **options: Any) -> Partial:
    """One run per line; per-request rows when the line has --output-details lists."""
    problems = Problems(source.path)
    # JSON Lines as written; a pretty-printed or listed copy is read as well
    records, _ = vllm._records(source, problems)
    runs, rows = runs_of_records(records, _any_name, _any_run, source.path, problems, WHAT)
    problems.raise_unless(lenient)
    notes = [f"SGLang: {counted(len(runs), 'run')}, one a line"]
    partial = finish(source, NAME, runs, rows, records=len(records), notes=notes, problems=problems)
    partial.probes.extend(_prefill_probes(runs, source.path))
    return partial


def _prefill_probes(runs: list[dict[str, Any]], path: str) -> list[dict[str, Any]]:
    """bench_one_batch times its batch's prefill alone (one forward pass, nothing queued):
    batch × input_len ÷ prefill_latency is the prefill rate of that run, as a probe would
    measure it. No probe record holds it: its origin names the line's own timing."""
    probes = []
    for run in runs:
        rate = (run.get("extra") or {}).get("prefill_rate")
        if rate is not None:
            summary = run.get("summary") or {}
            line = run.get("source_line")
            probes.append(
                {
                    "what": "prefill_rate",
                    "value": rate,
                    "unit": "tok/s",
                    "buffer_bytes": None,
                    "run": run["run"],
                    "source_path": path,
                    "source_line": line,
                    "origin": f"the batch's own prefill timing at {path}:{line}: batch_size "
                    f"× input_len ÷ prefill_latency = {summary.get('requests'):,} × "
                    f"{run.get('prompt_tokens'):,} ÷ {summary.get('mean_ttft_s'):.4f} s",
                }
            )
    return probes


def _any_name(record: dict[str, Any]) -> str:
    return _one_batch_name(record) if is_one_batch(record) else _name(record)


def _any_run(
    record: dict[str, Any], line: int, run_id: str, path: str, problems: Problems
) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    if is_one_batch(record):
        return _one_batch_run(record, line, run_id, path, problems), []
    return _run(record, line, run_id, path, problems)


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
    ordered, one_piece = _ttft_past_end(record, f, line, problems)
    if not f.ok or not ordered:
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
        "no per-request send times: no completion times to order into a ladder; "
        "effective concurrency from Little's law (Σ latency ÷ duration)"
    )
    derived.append(
        "stop mode not recorded: bench_serving sends ignore_eos unless "
        "--disable-ignore-eos, and the file does not say which"
    )
    if retokenized is not None:
        derived.append(
            f"output tokens as the tool counted them ({total_output}: the server's count, or "
            "the length asked for where a client falls back to it); re-tokenized from the "
            f"text the client received: {retokenized}"
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
        "tool_aggregate_tps": f.number("output_throughput"),  # total ÷ duration
        "tool_aggregate_field": "output_throughput",
        "tool_concurrency": tool_concurrency,
        "tool_peak_concurrency": peak,
        "mean_output_tokens": total_output / completed if completed else None,
        "chunks": n_chunks,
        "received_output_tokens": retokenized,
    }
    if one_piece is not None:
        # the time to the whole answer, not to its first token: kept, it would read as a
        # prefill filling the wall clock
        for key in [k for k in summary if k.endswith("_s") and _is_chunk_timing(k)]:
            summary[key] = None
        derived.append(one_piece)
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
    lengths = (
        f"random_input_len {record.get('random_input_len')} and random_output_len "
        f"{record.get('random_output_len')}"
    )
    if not isinstance(dataset, str) and (
        "random_output_len" in record or "random_input_len" in record
    ):
        # no dataset named (clients built on bench_serving's metrics, such as its LoRA
        # benchmark): the lengths may be what was sent, or defaults written whatever it was
        derived.append(
            f"requested lengths not recorded: the dataset is not recorded, so {lengths} may "
            "or may not describe what was sent (they are written whatever the dataset)"
        )
    elif "random_output_len" in record or "random_input_len" in record:
        derived.append(
            f"requested lengths not recorded: the dataset is {name!r}, so {lengths} describe "
            "nothing that was sent"
        )
    else:
        derived.append(f"requested lengths not recorded (dataset {name!r})")
    return _Lengths()


def _s(ms: float | None) -> float | None:
    return None if ms is None else ms / 1000.0


#: How far a TTFT statistic may sit past the same end-to-end one. bench_serving's request
#: functions read the end clock when a chunk arrives and the first-token clock after parsing
#: it, so an answer that came in one piece (no stream) has a TTFT a parse later than its
#: latency: microseconds for a short answer, well under this for a megabyte of JSON.
ONE_PIECE_SLACK_MS = 10.0
#: The statistics written for both TTFT and end-to-end latency, as their keys name them.
_ORDERED_STATS = ("mean", "median", "p90", "p99")


def _ttft_past_end(
    record: dict[str, Any], f: Fields, line: int, problems: Problems
) -> tuple[bool, str | None]:
    """Whether the TTFT statistics are ordered before the end-to-end ones, and a note when
    they sit just past them (an answer in one piece). Both are taken over the same completed
    requests, each with TTFT ≤ latency, so every statistic is ordered too; past the slack it
    is impossible and a problem of the line."""
    ok, note = True, None
    for stat in _ORDERED_STATS:
        ttft_key, e2e_key = f"{stat}_ttft_ms", f"{stat}_e2e_latency_ms"
        if ttft_key not in record or e2e_key not in record:
            continue
        ttft, e2e = f.number(ttft_key), f.number(e2e_key)
        if ttft is None or e2e is None or ttft <= e2e:
            continue
        past = f"{ttft_key} {ttft:.3f} is {ttft - e2e:.3f} ms past {e2e_key} {e2e:.3f}"
        if ttft - e2e > ONE_PIECE_SLACK_MS:
            ok = False
            problems.add(
                line,
                past,
                "a TTFT no later than the end-to-end latency (bench_serving takes both over "
                "the same completed requests; an answer that came in one piece puts the TTFT "
                f"at most {ONE_PIECE_SLACK_MS:g} ms past it)",
            )
        elif note is None:
            note = (
                f"{past}: the client reads its first-token clock after parsing a chunk and its "
                "end clock before, so the text came in one piece; the TTFT, ITL and TPOT "
                "statistics time no first token and are unknown"
            )
    return ok, note


def _one_batch_name(record: dict[str, Any]) -> str:
    name = record.get("run_name")
    prefix = f"{name}:" if isinstance(name, str) and name else ""
    return (
        f"{prefix}b{record.get('batch_size')}:in{record.get('input_len')}"
        f":out{record.get('output_len')}"
    )


def _one_batch_run(
    record: dict[str, Any], line: int, run_id: str, path: str, problems: Problems
) -> dict[str, Any] | None:
    """One static batch: batch_size sequences started together, each generating exactly
    output_len tokens (1 from the prefill, output_len − 1 decode steps)."""
    f = Fields(record, line, problems, WHAT_ONE_BATCH)
    batch = f.integer("batch_size", required=True, minimum=1)
    input_len = f.integer("input_len", required=True)
    output_len = f.integer("output_len", required=True, minimum=1)
    offline = "total_latency" in record
    wall = f.number("total_latency" if offline else "latency", required=True, unit="seconds")
    prefill = f.number("prefill_latency", unit="seconds")
    median_step = f.number("median_decode_latency", unit="seconds")
    decode_tps = f.number("median_decode_throughput", unit="tokens per second")
    output_tps = f.number("output_throughput", unit="tokens per second")
    last_ttft = f.number("last_ttft", unit="seconds")
    last_gen = f.number("last_gen_throughput", minimum=None)
    accept = f.number("acc_length", minimum=None)
    run_name = record.get("run_name")
    if not f.ok:
        return None
    assert batch is not None and input_len is not None and output_len is not None
    assert wall is not None
    tokens = batch * output_len
    honest = tokens / wall if wall > 0 else None
    # each note short enough for a report's cell to show whole
    sequences = "one sequence" if batch == 1 else f"{batch} sequences"
    derived = [
        f"{sequences} of {input_len} prompt tokens started together as one batch",
        f"each generated exactly {output_len} tokens (ignore_eos): "
        f"{batch} × {output_len} = {tokens} output tokens",
    ]
    summary: dict[str, Any] = {
        "requests": batch,
        "failed": 0,
        "output_tokens": tokens,
        "prompt_tokens": batch * input_len,
        "wall_s": wall,
        "mean_output_tokens": output_len,
        "min_output_tokens": output_len,
        "max_output_tokens": output_len,
    }
    spec: dict[str, Any] | None = None
    if offline:
        tool = "sglang bench_one_batch"
        derived[0] = f"{derived[0]}, run in one process (no server, no HTTP)"
        # the sequences step together from the first forward pass to the last
        summary["sum_latency_s"] = batch * wall
        derived.append(
            "Σ latency = batch_size × total_latency: every sequence is in flight for the "
            "whole batch"
        )
        spec = {"enabled": False, "source": "bench_one_batch runs the model without a draft"}
        if prefill is not None:
            summary["mean_ttft_s"] = summary["median_ttft_s"] = prefill
            # one timing of the whole batch, every sequence's: the first wave's TTFT (nothing
            # waited for a slot), and no percentile of the tool's
            summary["batch_ttft_s"] = prefill
            derived.append(
                "time to first token = prefill_latency: every sequence is admitted at once and "
                "the whole batch prefilled in one forward pass, which yields every first token"
            )
            if output_len > 1 and wall > prefill:
                step = (wall - prefill) / (output_len - 1)
                summary["mean_tpot_s"] = summary["mean_itl_s"] = step
                derived.append(
                    f"mean decode step = (total_latency − prefill_latency) ÷ (output_len − 1) "
                    f"= {step:.6f} s, every sequence's time per output token"
                )
        if median_step is not None:
            summary["itl_p50_s"] = median_step
        if decode_tps is not None:
            summary["tool_aggregate_tps"] = decode_tps
            summary["tool_aggregate_field"] = "median_decode_throughput"
            summary["tool_aggregate_how"] = (
                "batch_size ÷ the median decode step: decode alone, without the prefill"
            )
            derived.append(
                f"median_decode_throughput {decode_tps:.2f} = batch_size ÷ the median decode "
                "step: decode alone, without the prefill"
                + (f"; output tokens ÷ total_latency = {honest:.2f} tok/s" if honest else "")
            )
    else:
        tool = "sglang bench_one_batch_server"
        derived[0] = f"{derived[0]}, sent to a server as one HTTP request"
        derived.insert(
            1,
            "the server may have finished some sequences before others: only the whole "
            "batch's latency is recorded",
        )
        if output_tps is not None:
            summary["tool_aggregate_tps"] = output_tps
            summary["tool_aggregate_field"] = "output_throughput"
        streamed = last_ttft is not None or "last_gen_throughput" in record
        if output_tps is not None and not streamed:
            derived.append(
                f"output_throughput {output_tps:.2f} = batch_size × output_len ÷ latency"
            )
        elif output_tps is not None:
            first = (
                last_ttft
                if last_ttft is not None
                else wall - tokens / output_tps
                if output_tps > 0
                else None
            )
            derived.append(
                f"output_throughput {output_tps:.2f} = batch_size × output_len ÷ (latency − "
                "the batch's last first-token time)"
            )
            summary["tool_aggregate_how"] = STREAMED_OUTPUT_THROUGHPUT
            derived.append(
                "so it leaves out the prefill and any wait"
                + (f" ({first:.2f} s of the {wall:.2f} s)" if first is not None else "")
                + (f"; output tokens ÷ latency = {honest:.2f} tok/s" if honest else "")
            )
        if last_gen is not None:
            derived.append(
                f"last_gen_throughput {last_gen:g} is the server's own last logged decode rate, "
                "not a figure of this batch"
            )
        if accept is not None and accept > 0:
            spec = {"enabled": True, "source": f"acc_length {accept:g}"}
    derived.append("tool version not recorded, nor the server's")
    return new_run(
        run_id,
        path,
        line,
        NAME,
        tool=(tool, None),
        engine={"name": "sglang", "flags": []},
        workload={
            "concurrency": batch,
            "stop": "forced",
            "ignore_eos": True,
            "output_tokens": output_len,
            "prompt_tokens": input_len,
            "context_tokens": input_len,
            "speculative": spec,
        },
        group=f"{tool} {run_name if isinstance(run_name, str) else ''} "
        f"in{input_len} out{output_len}",
        summary=summary,
        derived=derived,
        extra={
            "run_name": run_name if isinstance(run_name, str) else None,
            "last_ttft": last_ttft,
            "last_gen_throughput": last_gen,
            "acc_length": accept,
            "cache_hit_rate": f.number("cache_hit_rate"),
            "prefill_rate": batch * input_len / prefill
            if offline and prefill and input_len
            else None,
        },
    )
