"""vLLM `vllm bench serve` and the older `benchmarks/benchmark_serving.py` result files.

One JSON object per run: a single `--save-result` file (pretty-printed or not), the JSON Lines
that `--append-result` writes, or the JSON list of `vllm bench sweep`'s summary.json. With
`--save-detailed` (and in every file before March 2025) the object also holds per-request
lists: input_lens, output_lens, ttfts, itls, errors, and in 2026 files start_times (Python
perf_counter seconds: one clock per run, zero unknown) and latencies.

What the format does not hold is said, not guessed: without start_times there is no schedule,
so no completion ladder can be drawn (BR003 decides, if at all, from how many decoded at
once on average) and the effective concurrency comes from Little's law
(Σ latency ÷ duration); `max_concurrent_requests` of the Aug 2025 – Sept 2026 versions counts
1-second buckets and over-counts requests that follow each other, so it is kept but not trusted.
"""

from __future__ import annotations

import math
import re
from itertools import accumulate
from typing import Any

from reporter.adapters._common import (
    Fields,
    Problems,
    container_lines,
    document,
    finish,
    json_lines,
    keys_present,
    line_of,
    looks_like_json_lines,
    new_run,
    runs_of_records,
    stop_mode,
)
from reporter.errors import Problem, TraceError
from reporter.ingest.lines import Source
from reporter.numbers import counted
from reporter.table import Partial
from reporter.values import finite_number

NAME = "vllm"
WHAT = "vLLM bench serve result"
DECISIVE = ("backend", "duration", "completed", "total_output_tokens", "output_throughput")
ANY_OF = ("date", "mean_ttft_ms", "mean_tpot_ms", "endpoint_type")

#: vLLM's peak-concurrency figure was counted in 1-second buckets until this date (yyyymmdd;
#: PR #23867 of Aug 2025 introduced it, PRs #56647/#56675/#56678 of Sept 2026 replaced it).
BUCKET_PEAK_UNTIL = "20261001"

#: Keys vLLM itself writes; any other top-level key is --metadata or a swept parameter.
KNOWN_KEYS = {
    "date", "endpoint_type", "backend", "label", "model_id", "tokenizer_id", "num_prompts",
    "request_rate", "burstiness", "max_concurrency", "ramp_up_strategy", "ramp_up_start_rps",
    "ramp_up_end_rps", "duration", "completed", "failed", "total_input_tokens",
    "total_output_tokens", "request_throughput", "request_goodput", "request_goodput:",
    "output_throughput", "total_token_throughput", "input_throughput", "input_lens",
    "output_lens", "ttfts", "itls", "latencies", "start_times", "queue_times",
    "generated_texts", "errors", "max_output_tokens_per_s", "max_concurrent_requests", "rtfx",
    "best_of", "use_beam_search", "rps_change_events", "run_number",
}  # fmt: skip
#: Statistics vLLM writes per metric (mean_ttft_ms, p99.9_itl_ms, ...) and optional blocks.
_STAT_KEY = re.compile(
    r"^((mean|median|std|max|min|p\d+(\.\d+)?)_\w+_ms|(spec_decode|probe|"
    r"diffusion)_\w+)$"
)
#: Sweep parameters that are the run's own concurrency or repeat, not part of its group.
_NOT_GROUP = {"max_concurrency", "run_number", "request_rate"}
_ENGINES = {"vllm", "sglang", "lmdeploy", "tgi", "tensorrt-llm", "scalellm", "deepspeed-mii"}
#: Keys that make a file look like this format (to rank the "could not tell" candidates).
DETECT_KEYS = (*DECISIVE, *ANY_OF, "num_prompts", "request_rate")


def _is_result(record: Any) -> bool:
    return (
        isinstance(record, dict)
        and all(k in record for k in DECISIVE)
        and any(k in record for k in ANY_OF)
    )


def detect(source: Source, records: list[Any]) -> tuple[bool, list[str]]:
    """A vLLM result has backend, duration, completed, output_throughput and date or TTFT."""
    dicts = [r for r in records if isinstance(r, dict)]
    if (
        dicts
        and all(_is_result(r) for r in dicts)
        and not any("total_output_tokens_retokenized" in r for r in dicts)
    ):
        return True, []
    sample = keys_present(source, records)
    missing = [f'"{k}"' for k in DECISIVE if k not in sample]
    if not any(k in sample for k in ANY_OF):
        missing.append('"date" or "mean_ttft_ms"')
    return False, missing or ['"date" without "total_output_tokens_retokenized"']


def _records(source: Source, problems: Problems) -> tuple[list[tuple[int, Any]], str]:
    if looks_like_json_lines(source):
        records = json_lines(source, problems)
        if len(records) == 1:
            return records, "one JSON result"
        return records, "JSON Lines (one result a line, --append-result)"
    doc = document(source)
    if isinstance(doc, list):
        lines = container_lines(source.data, 1)
        return [(line_of(lines, i), r) for i, r in enumerate(doc)], "a JSON list of results"
    return [(1, doc)], "one JSON result"


#: What vLLM's offline throughput benchmark (benchmark_throughput.py, `vllm bench throughput`)
#: writes with --output-json, besides requests_per_second.
OFFLINE_THROUGHPUT_KEYS = ("elapsed_time", "num_requests", "total_num_tokens", "tokens_per_second")


#: What vLLM's offline latency benchmark (benchmark_latency.py, `vllm bench latency`) writes
#: with --output-json (and std_latency in newer versions).
OFFLINE_LATENCY_KEYS = ("avg_latency", "latencies", "percentiles")
#: What a refusal of an offline result expects instead.
_SERVING_EXPECTED = (
    "a serving benchmark's result (vllm bench serve --save-result, with --save-detailed "
    "for per-request times)"
)


def offline_result(records: list[Any]) -> tuple[str, str] | None:
    """(what is wrong, what is expected) for vLLM's offline throughput or latency result: a
    known tool's file that holds no serving run, so it is refused for what it is, not as
    unknown."""
    if len(records) != 1 or not isinstance(records[0], dict):
        return None
    record = records[0]
    if all(k in record for k in OFFLINE_LATENCY_KEYS) and isinstance(record["latencies"], list):
        # each latency times one llm.generate call over a whole batch (--batch-size prompts of
        # --input-len tokens, --output-len generated), none of which the file records
        n = len(record["latencies"])
        return (
            "vLLM's offline latency benchmark (avg_latency, latencies, percentiles): no "
            f"serving run to audit: {counted(n, 'timing')} of one whole batch each, whose "
            "size and lengths the file does not record, with no request's times and no token "
            "counts",
            _SERVING_EXPECTED,
        )
    if not all(k in record for k in OFFLINE_THROUGHPUT_KEYS):
        return None
    n = record["num_requests"]
    over = f"over {n:,} requests" if type(n) is int else "over all requests"
    return (
        "vLLM's offline throughput benchmark (elapsed_time, total_num_tokens, "
        f"tokens_per_second): no serving run to audit: one total {over}, with no request's "
        "times, no concurrency, and a tokens_per_second that vLLM counts over prompt and "
        "output tokens together",
        _SERVING_EXPECTED,
    )


def read(source: Source, *, lenient: bool = False, **options: Any) -> Partial:
    """Runs (one per result object) and, with per-request lists, request rows."""
    problems = Problems(source.path)
    records, shape = _records(source, problems)
    offline = offline_result([r for _, r in records])
    if offline is not None:  # named with --format vllm: the same refusal as detection's
        raise TraceError([Problem(source.path, None, *offline)])
    varying = _varying_metadata([r for _, r in records if isinstance(r, dict)])

    def name(record: dict[str, Any]) -> str:
        return ":".join([_name(record), *(f"{k}={record.get(k)}" for k in varying)])

    runs, rows = runs_of_records(records, name, _run, source.path, problems, WHAT)
    problems.raise_unless(lenient)
    notes = [f"vLLM: {counted(len(runs), 'run')} from {shape}"]
    with_rows = sum(1 for r in runs if (r["extra"] or {}).get("per_request_lists"))
    if with_rows:
        notes.append(f"vLLM: {counted(with_rows, 'run')} with per-request lists (--save-detailed)")
    return finish(source, NAME, runs, rows, records=len(records), notes=notes, problems=problems)


def _varying_metadata(records: list[dict[str, Any]]) -> list[str]:
    """--metadata keys whose values differ between the file's results (a deployment, a GPU):
    the run ids name them, so that "vllm:10qps:deployment=base" says which line it is (no
    spaces: an id is written in --claim run=ID)."""
    keys = sorted({k for r in records for k in r if _is_parameter(k) and k not in _NOT_GROUP})
    return [k for k in keys if len({str(r.get(k)) for r in records}) > 1]


def _name(record: dict[str, Any]) -> str:
    rate = record.get("request_rate")
    if rate in ("inf", None) or (isinstance(rate, float) and math.isinf(rate)):
        rate_text = "inf"
    elif isinstance(rate, int | float) and not isinstance(rate, bool):
        rate_text = f"{rate:g}"
    else:  # not a rate: the run's field check words it
        rate_text = "?"
    name = f"{record.get('label') or record.get('backend') or 'vllm'}:"
    if rate is None and _is_count(record.get("multi_turn_concurrency")):
        # a multi-turn run sends no request rate: its load is the conversations at once
        name += f"multiturn:c{record['multi_turn_concurrency']}"
    else:
        name += f"{rate_text}qps"
        if record.get("max_concurrency"):
            name += f":c{record['max_concurrency']}"
    if record.get("run_number") is not None:
        name += f":run{record['run_number']}"
    return name


def _one_request_turns(turns: Any, completed: Any) -> list[int]:
    """The output length of each request, where `per_turn_metrics` (the multi-turn mode)
    holds exactly one completed request per turn and together all the run's requests;
    empty otherwise (a turn of several requests gives only their total)."""
    if not isinstance(turns, list) or not turns or not isinstance(completed, int):
        return []
    lengths = []
    for turn in turns:
        if not isinstance(turn, dict) or not _is_one(turn.get("completed")) or turn.get("failed"):
            return []
        if not _is_one(turn.get("num_samples", 1)):
            return []
        tokens = turn.get("total_output_tokens")
        if not isinstance(tokens, int) or isinstance(tokens, bool) or tokens < 0:
            return []
        lengths.append(tokens)
    return lengths if len(lengths) == completed else []


def _is_one(value: Any) -> bool:
    """The count 1 (an int: True and 1.0 are other things)."""
    return type(value) is int and value == 1


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


#: `--metadata` keys that name the hardware (vLLM writes every metadata pair at the top level).
_HARDWARE_KEYS = ("hardware", "gpu", "gpu_type", "accelerator")
#: `--metadata` keys that name the serving engine: the client's `backend` ("vllm", "openai")
#: is the request format it speaks, which other engines serve too.
_ENGINE_KEYS = ("framework", "engine", "server")
#: Short names a metadata pair may give an engine.
_ENGINE_ALIASES = {"sgl": "sglang", "trtllm": "tensorrt-llm", "trt-llm": "tensorrt-llm"}


def _ms(f: Fields, key: str) -> float | None:
    value = f.number(key, unit="milliseconds")
    return None if value is None else value / 1000.0


def _run(
    record: dict[str, Any], line: int, run_id: str, path: str, problems: Problems
) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    # --metadata KEY=VALUE pairs are strings: a number among them is read as one
    f = Fields(record, line, problems, WHAT, text_numbers={k for k in record if _is_parameter(k)})
    duration = f.number("duration", required=True, unit="seconds")
    completed = f.integer("completed", required=True)
    total_output = f.integer("total_output_tokens", required=True)
    failed = f.integer("failed")
    num_prompts = f.integer("num_prompts")
    total_input = f.integer("total_input_tokens")
    max_concurrency = f.integer("max_concurrency", minimum=1)
    multi_turn = f.integer("multi_turn_concurrency", minimum=1)
    peak = f.integer("max_concurrent_requests")
    rate_raw = record.get("request_rate")
    rate_inf = rate_raw == "inf" or (isinstance(rate_raw, float) and math.isinf(rate_raw))
    rate = None if rate_inf else f.number("request_rate")
    date = f.string("date")
    ignore_eos = f.boolean("ignore_eos")
    derived: list[str] = []
    details = _details(f, record)
    if not f.ok:
        return None, []
    assert duration is not None and completed is not None and total_output is not None

    requests = completed + failed if failed is not None else None
    if failed is None and num_prompts is not None and num_prompts >= completed:
        failed = num_prompts - completed
        requests = num_prompts
        derived.append(
            f"failed = num_prompts − completed = {num_prompts} − {completed} "
            f"= {failed} (this vLLM version wrote no failed count)"
        )
    if requests is None:
        requests = completed

    rows, sum_latency, latency_note, n_chunks = _rows(details, run_id, line, derived)
    if sum_latency is None:
        mean_e2e = _ms(f, "mean_e2el_ms")
        key = "mean_e2el_ms"
        if mean_e2e is None:
            mean_e2e, key = _ms(f, "mean_latency_ms"), "mean_latency_ms"
        if mean_e2e is not None:
            sum_latency = mean_e2e * completed
            latency_note = (
                f"Σ latency = {key} × completed = {mean_e2e * 1000:.1f} ms × "
                f"{completed} (no per-request latencies in the file)"
            )
    if latency_note:
        derived.append(latency_note)
    if not rows or details.get("start_times") is None:
        derived.append(
            "no per-request send times: no completion times to order into a ladder; "
            "effective concurrency from Little's law (Σ latency ÷ duration)"
        )

    concurrency: int | None = max_concurrency
    concurrency_derived = False
    if concurrency is None and multi_turn is not None and rate_raw is None:
        concurrency = multi_turn
        derived.append(
            f"concurrency = multi_turn_concurrency = {multi_turn}: that many conversations at "
            "once, each sending its next turn when the answer to the last came (a closed loop)"
        )
    if concurrency is None and rate_inf and num_prompts:
        concurrency, concurrency_derived = num_prompts, True
        derived.append(
            f"concurrency = num_prompts = {num_prompts}: request rate inf and no "
            "max_concurrency, so every request was sent at once"
        )

    trusted: bool | None = None
    if peak == 0:
        peak = None  # nothing completed: the count is not a peak
        derived.append("max_concurrent_requests 0: no request completed to count")
    if peak is not None:
        if date is None or date.replace("-", "")[:8] < BUCKET_PEAK_UNTIL:
            trusted = False
            derived.append(
                f"max_concurrent_requests {peak} not trusted: vLLM versions of Aug "
                "2025 – Sept 2026 count it in 1-second buckets, which over-counts "
                "requests that follow each other (vLLM issue #56653)"
            )
        else:
            derived.append(
                f"max_concurrent_requests {peak}: the tool's own peak, counted by "
                "a method the file does not name"
            )

    lengths = [r["output_tokens"] for r in rows if r.get("error") is None]
    stop = stop_mode(ignore_eos, lengths)
    if ignore_eos is None:
        derived.append("stop mode not recorded (vLLM does not write ignore_eos)")
    out_len = f.integer("random_output_len", minimum=1) or f.integer("output_len", minimum=1)
    in_len = f.integer("random_input_len") or f.integer("input_len")
    spec_rate = f.number("spec_decode_acceptance_rate")
    backend = f.string("backend")
    old_schema = "endpoint_type" not in record and (
        "best_of" in record or "use_beam_search" in record
    )
    tool = (
        "vllm benchmark_serving.py"
        if old_schema or "request_goodput:" in record
        else ("vllm bench serve")
    )
    derived.append("tool version not recorded in the file")
    if f.read_from_text:
        derived.append(
            "read as numbers, written as text (vLLM --metadata writes strings): "
            + ", ".join(f'{k} "{record[k]}"' for k in f.read_from_text)
        )
    summary: dict[str, Any] = {
        "requests": requests,
        "failed": failed,
        "output_tokens": total_output,
        "prompt_tokens": total_input,
        "wall_s": duration,
        "sum_latency_s": sum_latency,
        "mean_ttft_s": _ms(f, "mean_ttft_ms"),
        "median_ttft_s": _ms(f, "median_ttft_ms"),
        "mean_tpot_s": _ms(f, "mean_tpot_ms"),
        # np.std over the requests' TPOTs: every one lies within √(n − 1) of these of the mean
        "std_tpot_s": _ms(f, "std_tpot_ms"),
        "median_tpot_s": _ms(f, "median_tpot_ms"),
        # the tool's percentiles (median, and p90 / p99 where --metric-percentiles asked)
        **{
            f"{metric}_p{q}_s": _ms(f, f"{prefix}_{key}_ms")
            for metric, key in (("ttft", "ttft"), ("tpot", "tpot"), ("itl", "itl"), ("e2e", "e2el"))
            for q, prefix in ((50, "median"), (90, "p90"), (99, "p99"))
        },
        "mean_itl_s": _ms(f, "mean_itl_ms"),
        # the server's draft counters over the run, as the tool took them
        "spec_drafts": f.number("spec_decode_num_drafts"),
        "spec_draft_tokens": f.number("spec_decode_draft_tokens"),
        "spec_accepted_tokens": f.number("spec_decode_accepted_tokens"),
        "tool_aggregate_tps": f.number("output_throughput"),  # total ÷ duration
        "tool_aggregate_field": "output_throughput",
        "tool_peak_concurrency": peak,
        "tool_peak_concurrency_trusted": trusted,
        "mean_output_tokens": total_output / completed if completed else None,
        "chunks": n_chunks,
    }
    lengths = _one_request_turns(record.get("per_turn_metrics"), completed)
    if lengths and total_output is not None and sum(lengths) != total_output:
        problems.add(
            line,
            f"per_turn_metrics' output tokens add up to {sum(lengths):,}, total_output_tokens "
            f"is {total_output:,}",
            "the turns' total_output_tokens to add up to the run's",
        )
        lengths = []
    if lengths:
        # a multi-turn run of one conversation: each turn's totals are one request's
        summary["min_output_tokens"], summary["max_output_tokens"] = min(lengths), max(lengths)
        derived.append(
            f"output lengths per request from per_turn_metrics: {len(lengths)} turns of one "
            f"request each, {min(lengths)}–{max(lengths)} tokens"
        )
    if completed == 0:
        # vLLM writes 0.0 for every latency statistic when no request completed
        for key in [k for k in summary if k.endswith("_s") and _is_latency(k)]:
            summary[key] = None
        derived.append("no request completed: the latency statistics (written as 0) are unknown")
    extra = {k: v for k, v in record.items() if _is_parameter(k)}
    extra.update(
        {
            "date": date,
            "backend": backend,
            "endpoint_type": record.get("endpoint_type"),
            "label": record.get("label"),
            "tokenizer_id": record.get("tokenizer_id"),
            "burstiness": record.get("burstiness"),
            "num_prompts": num_prompts,
            "request_rate": "inf" if rate_inf else None,
            "max_output_tokens_per_s": record.get("max_output_tokens_per_s"),
            "per_request_lists": bool(rows) or None,
        }
    )
    group = None
    if "run_number" in record:
        params = sorted(
            (k, v) for k, v in record.items() if _is_parameter(k) and k not in _NOT_GROUP
        )
        group = "vllm sweep " + " ".join(
            [str(record.get("model_id"))] + [f"{k}={v}" for k, v in params]
        )
    # `--metadata gpu=4xNVIDIA_L40S`: the hardware, as the file names it
    hardware_key = _first_named(record, _HARDWARE_KEYS)
    if hardware_key is not None:
        derived.append(f"hardware from the metadata {hardware_key}={record[hardware_key]!r}")
    engine_key = _first_named(record, _ENGINE_KEYS)
    # the client's backend is the request format it spoke (vllm, sglang and openai all send
    # OpenAI completions), not the server it reached: the engine is what metadata names
    engine_name = None
    if engine_key is None and backend in _ENGINES:
        derived.append(
            f"engine not recorded: the client backend {backend!r} names the request format, "
            "which other servers speak too"
        )
    if engine_key is not None:
        named = record[engine_key].strip()
        engine_name = _ENGINE_ALIASES.get(named.lower(), named)
        extra.pop(engine_key, None)  # the engine factor, not a deployment setting as well
        derived.append(
            f"engine from the metadata {engine_key}={record[engine_key]!r}"
            + (
                f", not the client backend {backend!r}"
                if backend and backend != engine_name
                else ""
            )
        )
    run = new_run(
        run_id,
        path,
        line,
        NAME,
        tool=(tool, None),
        engine={"name": engine_name} if engine_name else None,
        model={"name": record.get("model_id")},
        hardware={"name": record[hardware_key].strip()} if hardware_key is not None else None,
        workload={
            "concurrency": concurrency,
            "request_rate": math.inf if rate_inf else rate,
            "dataset": record.get("dataset_name")
            if isinstance(record.get("dataset_name"), str)
            else None,
            "stop": stop,
            "ignore_eos": ignore_eos,
            "output_tokens": out_len,
            "prompt_tokens": in_len,
            "temperature": finite_number(record.get("temperature")),
            "speculative": {
                "enabled": True,
                "method": None,
                "acceptance": spec_rate / 100.0,
                "source": f"spec_decode_acceptance_rate {spec_rate:g}",
            }
            if spec_rate is not None
            else None,
        },
        repeat=f.integer("run_number"),
        group=group,
        summary=summary,
        derived=derived,
        extra=extra,
        concurrency_derived=concurrency_derived,
    )
    return run, rows


def _first_named(record: dict[str, Any], keys: tuple[str, ...]) -> str | None:
    """The first of `keys` whose `--metadata` value is a non-empty string, or None."""
    return next((k for k in keys if isinstance(record.get(k), str) and record[k].strip()), None)


def _is_latency(key: str) -> bool:
    """A summary key of a latency statistic (mean_ttft_s, ttft_p99_s, std_tpot_s, …)."""
    return any(m in key for m in ("ttft", "tpot", "itl", "e2e"))


def _is_parameter(key: str) -> bool:
    """A --metadata pair or a swept parameter: a key vLLM does not write itself."""
    return key not in KNOWN_KEYS and not _STAT_KEY.match(key)


def _details(f: Fields, record: dict[str, Any]) -> dict[str, Any]:
    """The per-request lists, checked against each other's length."""
    out: dict[str, Any] = {}
    lens = f.numbers("output_lens")
    if lens is None:
        return out
    n = len(lens)
    out["output_lens"] = lens
    out["input_lens"] = f.numbers("input_lens", length=n)
    out["ttfts"] = f.numbers("ttfts", length=n, unit="seconds")
    out["latencies"] = f.numbers("latencies", length=n, unit="seconds")
    out["start_times"] = f.numbers("start_times", length=n, minimum=None, unit="seconds")
    itls = f.items("itls", length=n)
    if itls is not None:
        checked = []
        for i, gaps in enumerate(itls):
            sub = Fields({"x": gaps}, f.line, f.problems, f.what)
            values = sub.numbers("x", unit="seconds")
            if not sub.ok or values is None:
                f.ok = False
                if values is None and sub.ok:
                    f.problems.add(
                        f.line,
                        f'"itls[{i}]" is {gaps!r}',
                        f"a list of numbers of seconds ({f.what})",
                    )
                break
            checked.append(values)
        out["itls"] = checked
    errors = f.items("errors", length=n)
    if errors is not None:
        for i, e in enumerate(errors):
            if e is not None and not isinstance(e, str):
                f.problems.add(f.line, f'"errors[{i}]" is {e!r}', f"a string ({f.what})")
                f.ok = False
        out["errors"] = errors
    return out


def _rows(
    details: dict[str, Any], run_id: str, line: int, derived: list[str]
) -> tuple[list[dict[str, Any]], float | None, str | None, int | None]:
    """Request rows, Σ latency of the successful ones and how it was obtained, Σ chunks."""
    lens = details.get("output_lens")
    if lens is None:
        return [], None, None, None
    n = len(lens)
    ttfts = details.get("ttfts")
    itls = details.get("itls")
    latencies = details.get("latencies")
    starts = details.get("start_times")
    errors = details.get("errors") or [""] * n
    inputs = details.get("input_lens")
    rows = []
    sum_latency = 0.0
    have_latency = latencies is not None or (ttfts is not None and itls is not None)
    total_chunks = 0
    for i in range(n):
        error = errors[i] or None
        ttft = ttfts[i] if ttfts is not None else None
        gaps = itls[i] if itls is not None else None
        row: dict[str, Any] = {
            "run": run_id,
            "id": str(i),
            "source_line": line,
            "prompt_tokens": inputs[i] if inputs is not None else None,
            "output_tokens": lens[i],
            "error": error,
        }
        got_chunk = bool(gaps) or bool(ttft)
        if gaps is not None and error is None:
            row["n_chunks"] = len(gaps) + 1 if got_chunk else 0
            total_chunks += row["n_chunks"]
        latency = (
            latencies[i]
            if latencies is not None
            else (ttft + sum(gaps) if ttft is not None and gaps is not None and got_chunk else None)
        )
        if error is None and latency is not None:
            sum_latency += latency
        if starts is not None:
            t_send = starts[i]
            row["t_send"] = t_send
            if error is None and got_chunk and ttft is not None:
                row["t_first"] = t_send + ttft
                if gaps is not None:
                    row["token_times"] = list(accumulate(gaps, initial=t_send + ttft))
            if latency is not None and (error is None or latencies is not None) and latency > 0:
                row["t_end"] = t_send + latency
        rows.append(row)
    note = None
    if latencies is not None:
        note = "Σ latency from the per-request latencies (successful requests)"
    elif have_latency:
        note = (
            "Σ latency ≈ Σ (TTFT + Σ ITL) over successful requests: each one's last chunk, "
            "not its stream end (no per-request latencies in the file)"
        )
        if starts is not None:
            derived.append("t_end = send + TTFT + Σ ITL (the last chunk's arrival)")
    if starts is not None:
        derived.append(
            "times are perf_counter seconds (start_times): one clock per run, zero unknown"
        )
    return (
        rows,
        (sum_latency if have_latency else None),
        note,
        (total_chunks if itls is not None else None),
    )
