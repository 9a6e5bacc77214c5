"""GenAI-Perf (triton-inference-server/perf_analyzer): the raw `profile_export.json` that
perf_analyzer writes, and genai-perf's summary `profile_export_genai_perf.json`.

The raw export has one experiment per load level (`{"mode": "concurrency"|"request_rate",
"value": N}`), and per request its send time (`timestamp`, system-clock epoch nanoseconds),
one timestamp per received response (an SSE event, so per chunk, not per token) and the raw
response texts. genai-perf counts tokens by re-tokenizing those texts with a client tokenizer
that the file does not hold; here output tokens come from the server's `usage` when a response
carries it (OpenAI `stream_options.include_usage`), and are otherwise unknown, never guessed
from the chunk count. Clocks are made relative to each experiment's first send as integers.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import orjson

from reporter.adapters._common import (
    Fields,
    Problems,
    container_lines,
    document,
    epoch_ns_seconds,
    fail,
    finish,
    get,
    lengths_drawn,
    line_of,
    new_run,
    obj,
    sha256_text,
    stop_mode,
    unique_ids,
)
from reporter.ingest.lines import Source
from reporter.numbers import counted
from reporter.table import Partial
from reporter.values import finite_number

NAME = "genai-perf"
WHAT = "perf_analyzer profile export request"
_SUMMARY_KEYS = ("output_token_throughput", "request_throughput", "request_latency")
#: Keys that make a file look like this format (to rank the "could not tell" candidates).
DETECT_KEYS = (
    "experiments",
    "service_kind",
    "endpoint",
    "output_token_throughput",
    "request_throughput",
    "request_latency",
    "input_config",
)


def _is_raw(r: Any) -> bool:
    return (
        isinstance(r, dict)
        and isinstance(r.get("experiments"), list)
        and ("service_kind" in r or "version" in r)
    )


def _is_summary(r: Any) -> bool:
    return (
        isinstance(r, dict)
        and all(isinstance(r.get(k), dict) for k in _SUMMARY_KEYS)
        and ("aiperf_version" not in r and "schema_version" not in r)
    )


def detect(source: Source, records: list[Any]) -> tuple[bool, list[str]]:
    """The raw export (experiments[].requests[].response_timestamps, service_kind) or the
    genai-perf summary (output_token_throughput, request_throughput, request_latency)."""
    dicts = [r for r in records if isinstance(r, dict)]
    if dicts and (_is_raw(dicts[0]) or _is_summary(dicts[0])):
        return True, []
    return False, ['"experiments" and "service_kind"', 'or "output_token_throughput"']


def read(source: Source, *, lenient: bool = False, **options: Any) -> Partial:
    doc = document(source)
    if _is_summary(doc):
        return _read_summary(source, doc, lenient)
    if not _is_raw(doc):
        raise fail(
            source.path,
            1,
            'no "experiments" list',
            "perf_analyzer's profile_export.json (GenAI-Perf)",
        )
    problems = Problems(source.path)
    lines = container_lines(source.data, 4)
    experiments = doc["experiments"]
    names = []
    for exp in experiments:
        mode = get(exp, "experiment", "mode")
        value = get(exp, "experiment", "value")
        names.append(f"{mode}-{value}" if mode is not None else "experiment")
    ids = unique_ids(names)
    runs: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    count = 0
    for i, (exp, run_id) in enumerate(zip(experiments, ids, strict=True)):
        line = line_of(lines, "experiments", i)
        if not isinstance(exp, dict) or not isinstance(exp.get("requests"), list):
            problems.add(
                line,
                '"requests" is missing',
                'an experiment with a "requests" list (perf_analyzer export)',
            )
            continue
        run, run_rows = _experiment(doc, exp, i, line, run_id, lines, source.path, problems)
        count += len(exp["requests"])
        runs.append(run)
        rows.extend(run_rows)
    problems.raise_unless(lenient)
    notes = [
        f"GenAI-Perf: {counted(len(runs), 'experiment')}, {counted(len(rows), 'request')} "
        f"(perf_analyzer {doc.get('version') or 'version not recorded'})"
    ]
    return finish(source, NAME, runs, rows, records=count, notes=notes, problems=problems)


def _sse_events(text: str) -> list[str]:
    """The data payloads of one response text (which may hold several SSE events)."""
    out = []
    for event in text.strip().split("\n\n"):
        for part in event.splitlines():
            part = part.strip()
            if part.startswith("data:"):
                out.append(part[5:].strip())
    return out


def _content(payload: dict[str, Any]) -> str:
    choice = get(payload, "choices", 0)
    if isinstance(choice, dict):
        delta = choice.get("delta")
        if isinstance(delta, dict):
            return str(delta.get("content") or delta.get("reasoning_content") or "")
        return str(choice.get("text") or "")
    return str(payload.get("text_output") or "")


def _experiment(
    doc: dict[str, Any],
    exp: dict[str, Any],
    index: int,
    line: int,
    run_id: str,
    lines: dict[tuple[Any, ...], int],
    path: str,
    problems: Problems,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    parsed = []
    for j, req in enumerate(exp["requests"]):
        req_line = line_of(lines, "experiments", index, "requests", j)
        if not isinstance(req, dict):
            problems.add(
                req_line, f"the request is a JSON {type(req).__name__}", f"an object ({WHAT})"
            )
            continue
        f = Fields(req, req_line, problems, WHAT)
        sent = f.integer("timestamp", required=True, minimum=None)
        stamps = f.items("response_timestamps")
        outputs = f.items("response_outputs")
        if stamps is not None and any(
            not isinstance(t, int) or isinstance(t, bool) for t in stamps
        ):
            problems.add(
                req_line,
                '"response_timestamps" holds a non-integer',
                f"integer nanoseconds ({WHAT})",
            )
            continue
        if stamps is not None and any(b < a for a, b in itertools.pairwise(stamps)):
            # the server's responses arrive in order: a stamp before the one before it is
            # no time any response came back at
            problems.add(
                req_line,
                '"response_timestamps" go backwards',
                f"non-decreasing times ({WHAT})",
            )
            continue
        if stamps is not None and outputs is not None and len(outputs) != len(stamps):
            problems.add(
                req_line,
                f'"response_outputs" has {len(outputs)} items',
                f"one per response timestamp, {len(stamps)} ({WHAT})",
            )
            continue
        if not f.ok or sent is None:
            continue
        if stamps and stamps[0] < sent:
            problems.add(
                req_line,
                '"response_timestamps" start before "timestamp" (the send)',
                f"responses at or after the send ({WHAT})",
            )
            continue
        parsed.append((req_line, req, sent, stamps or [], outputs or []))
    base = min((p[2] for p in parsed), default=0)
    rows: list[dict[str, Any]] = []
    bodies: list[dict[str, Any]] = []
    with_usage = 0
    for req_line, req, sent, stamps, outputs in parsed:
        content_stamps: list[int] = []
        usage: dict[str, Any] | None = None
        error = None
        finish_reason = None
        for stamp, out in zip(stamps, outputs, strict=False):
            text = out.get("response") if isinstance(out, dict) else None
            if not isinstance(text, str):
                # Triton responses: output tensors, one response a chunk
                content_stamps.append(stamp)
                continue
            has_content = False
            for data in _sse_events(text):
                if data == "[DONE]" or not data:
                    continue
                try:
                    # strict: NaN and Infinity are not JSON, and an answer with them is no usage
                    payload = orjson.loads(data)
                except orjson.JSONDecodeError:
                    continue
                if not isinstance(payload, dict):
                    continue
                if "error" in payload:
                    error = str(payload["error"])
                if isinstance(payload.get("usage"), dict):
                    usage = payload["usage"]
                if _content(payload):
                    has_content = True
                reason = get(payload, "choices", 0, "finish_reason")
                if reason in ("length", "stop"):
                    finish_reason = reason
            if has_content:
                content_stamps.append(stamp)
        body = _payload(req)
        bodies.append(body)
        prompt = (
            body.get("prompt")
            if isinstance(body.get("prompt"), str)
            else (
                json.dumps(body.get("messages"), sort_keys=True, ensure_ascii=False)
                if body.get("messages") is not None
                else None
            )
        )
        t_send = epoch_ns_seconds([sent], base)[0]
        times = epoch_ns_seconds(list(content_stamps), base)
        row: dict[str, Any] = {
            "run": run_id,
            "id": str(len(rows)),
            "t_send": t_send,
            "t_end": epoch_ns_seconds([stamps[-1]], base)[0] if stamps else None,
            "n_chunks": len(content_stamps),
            "error": error,
            "finish_reason": "error" if error else finish_reason,
            "prompt_sha256": sha256_text(prompt),
            "source_line": req_line,
        }
        if times:
            row["t_first"] = times[0]
            row["token_times"] = times
        if usage is not None:
            with_usage += 1
            row["output_tokens"] = finite_number(usage.get("completion_tokens"))
            row["prompt_tokens"] = finite_number(usage.get("prompt_tokens"))
        rows.append(row)
    derived = [
        "times: epoch nanoseconds (perf_analyzer, system clock), made relative to the "
        "experiment's first send (integer subtraction)",
        "token_times are per response (SSE event), not per token",
    ]
    if with_usage < len(rows):
        derived.append(
            f"output tokens unknown for {len(rows) - with_usage} of "
            f"{counted(len(rows), 'request')}: genai-perf re-tokenizes the text with a client "
            "tokenizer the file does not hold, and no usage was streamed"
        )
    else:
        derived.append("output tokens: the server's usage counts")
    mode = get(exp, "experiment", "mode")
    value = finite_number(get(exp, "experiment", "value"))
    concurrency = int(value) if mode == "concurrency" and value is not None else None
    rate = value if mode == "request_rate" else None
    flags = {bool(b.get("ignore_eos", False)) for b in bodies} if bodies else set()
    ignore_eos = flags.pop() if len(flags) == 1 else None
    caps = {b.get("max_tokens", b.get("max_completion_tokens")) for b in bodies}
    max_tokens = caps.pop() if len(caps) == 1 else None
    lengths = [float(r["output_tokens"]) for r in rows if r.get("output_tokens") is not None]
    model = next((b.get("model") for b in bodies if isinstance(b.get("model"), str)), None)
    run = new_run(
        run_id,
        path,
        line,
        NAME,
        tool=(
            "genai-perf (perf_analyzer)",
            str(doc.get("version")) if doc.get("version") else None,
        ),
        model={"name": model},
        workload={
            "concurrency": concurrency,
            "request_rate": rate,
            "stop": stop_mode(ignore_eos, lengths),
            "ignore_eos": ignore_eos,
            "min_tokens": finite_number(
                next((b.get("min_tokens") for b in bodies if b.get("min_tokens") is not None), None)
            ),
            "output_tokens": max_tokens if isinstance(max_tokens, int) else None,
        },
        derived=derived,
        extra={
            "service_kind": doc.get("service_kind"),
            "endpoint": doc.get("endpoint"),
            "window_boundaries": exp.get("window_boundaries"),
            "t0_epoch_ns": base or None,
        },
    )
    return run, rows


def _payload(req: dict[str, Any]) -> dict[str, Any]:
    """The request body (a JSON string in request_inputs.payload for OpenAI endpoints)."""
    raw = get(req, "request_inputs", "payload")
    if isinstance(raw, str):
        try:
            body = orjson.loads(raw)
        except orjson.JSONDecodeError:  # not strict JSON (NaN, too deep): no settings read
            return {}
        if isinstance(body, dict):
            return body
    return {}


def _read_summary(source: Source, doc: dict[str, Any], lenient: bool) -> Partial:
    """genai-perf's own summary: per-metric statistics, no per-request rows."""
    problems = Problems(source.path)
    f = Fields(doc, 1, problems, "genai-perf summary")
    throughput = f.number("output_token_throughput.avg", required=True, unit="tokens/s")
    problems.raise_unless(lenient)

    def stat(name: str, field: str) -> float | None:
        value = finite_number(get(doc, name, field))
        unit = get(doc, name, "unit")
        if value is not None and unit == "ms":
            return value / 1000.0
        return value

    requests = stat("request_count", "avg")
    osl_mean = stat("output_sequence_length", "avg")
    isl_mean = stat("input_sequence_length", "avg")
    request_rate = stat("request_throughput", "avg")
    wall = requests / request_rate if requests and request_rate else None
    mean_latency = stat("request_latency", "avg")
    derived = ["no per-request records: no completion times to order into a ladder"]
    summary: dict[str, Any] = {
        "requests": requests,
        "tool_aggregate_tps": throughput,
        "tool_aggregate_field": "output_token_throughput.avg",
        "mean_ttft_s": stat("time_to_first_token", "avg"),
        "median_ttft_s": stat("time_to_first_token", "p50"),
        "mean_tpot_s": stat("inter_token_latency", "avg"),
        "median_tpot_s": stat("inter_token_latency", "p50"),
        "mean_reported_tps": stat("output_token_throughput_per_user", "avg"),
        "mean_output_tokens": osl_mean,
        "min_output_tokens": stat("output_sequence_length", "min"),
        "max_output_tokens": stat("output_sequence_length", "max"),
        "mean_prompt_tokens": isl_mean,
    }
    if wall is not None:
        summary["wall_s"] = wall
        derived.append("wall clock = request_count ÷ request_throughput")
        if osl_mean is not None and requests:
            summary["output_tokens"] = osl_mean * requests
            derived.append("output tokens = mean output_sequence_length × request_count")
        if isl_mean is not None and requests:
            summary["prompt_tokens"] = isl_mean * requests
            derived.append("prompt tokens = mean input_sequence_length × request_count")
        if mean_latency is not None and requests:
            summary["sum_latency_s"] = mean_latency * requests
            derived.append("Σ latency = mean request_latency × request_count")
    config = obj(doc.get("input_config"))
    concurrency = finite_number(
        get(config, "perf_analyzer", "stimulus", "concurrency")
    ) or finite_number(config.get("concurrency"))
    model = get(config, "model_names", 0) or get(config, "model_name")
    requested = _requested_output(config, derived)
    engine = _engine(config, derived)
    run = new_run(
        "genai-perf",
        source.path,
        1,
        NAME,
        tool=("genai-perf", None),
        model={"name": model if isinstance(model, str) else None},
        engine=engine,
        workload={
            "concurrency": int(concurrency) if concurrency else None,
            "output_tokens": requested,
        },
        summary=summary,
        derived=derived,
        # a setting the figures depend on (a non-streaming run's TTFT is its whole latency)
        extra={"streaming": _streaming(config)},
    )
    return finish(
        source,
        NAME,
        [run],
        [],
        records=1,
        notes=["GenAI-Perf: summary only (profile_export_genai_perf.json)"],
        problems=problems,
    )


def _requested_output(config: dict[str, Any], derived: list[str]) -> int | None:
    """The output length asked of every request: --output-tokens-mean with a stddev of 0
    (GenAI-Perf then sends it as each request's max_tokens); -1 or absent: none asked."""
    mean = finite_number(get(config, "output_tokens", "mean")) or finite_number(
        config.get("output_tokens_mean")
    )
    stddev = finite_number(get(config, "output_tokens", "stddev"))
    if stddev is None:
        stddev = finite_number(config.get("output_tokens_stddev"))
    if mean is None or mean <= 0 or mean != int(mean):
        return None
    if stddev:
        derived.append(lengths_drawn(mean, stddev))
        return None
    derived.append(f"requested output length from input_config output_tokens_mean {mean:g}")
    return int(mean)


#: GenAI-Perf's Triton backends and the engine each one serves with.
_TRITON_ENGINES = {"tensorrtllm": "tensorrt-llm", "vllm": "vllm"}


def _engine(config: dict[str, Any], derived: list[str]) -> dict[str, Any] | None:
    """The engine a Triton run names (service_kind triton, backend tensorrtllm or vllm); an
    OpenAI-compatible endpoint does not say which engine serves it."""
    kind = get(config, "endpoint", "service_kind") or config.get("service_kind")
    backend = get(config, "endpoint", "backend") or config.get("backend")
    if kind != "triton" or not isinstance(backend, str) or backend not in _TRITON_ENGINES:
        return None
    derived.append(f"engine from input_config backend {backend!r} (service_kind triton)")
    return {"name": _TRITON_ENGINES[backend]}


def _streaming(config: dict[str, Any]) -> bool | None:
    value = get(config, "endpoint", "streaming")
    value = config.get("streaming") if value is None else value
    return value if isinstance(value, bool) else None
