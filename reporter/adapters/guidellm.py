"""GuideLLM `benchmarks.json`: the 0.2/0.3 layout and the ≥ 0.5 one (`metadata`, `info.timings`).

One benchmark (a strategy of a sweep: synchronous, concurrent, throughput, constant rate, …)
is one run. Its request lists (`successful`, `incomplete`, `errored`) hold every request the
scheduler ran, warm-up and cool-down included, while GuideLLM's own metrics use only the
requests that overlap its measurement window (`get_within_range`: ended after the window
opened and started before it closed). The adapter keeps the same records and says how many
it dropped. When the lists are a sample (`--sample-requests`, or a trimmed file), the rows
cannot give a wall clock, so the run keeps GuideLLM's own summary instead and says so.
Times are epoch seconds (floats), one clock for the whole file.

Report version 2 (GuideLLM 0.8) states the run's specification once (`config.spec`: backend
model, synthetic data lengths, constraints as a list); its per-request objects keep the 0.5
layout (`info.timings`). `incomplete` requests are the ones still running when the benchmark
stopped: cut by its time limit (`time_limit`) or cancelled by the client at the end
(`cancelled`), never server failures.
"""

from __future__ import annotations

import ast
import json
import math
import re
from typing import Any

import yaml

from reporter.adapters._common import (
    Fields,
    Problems,
    container_lines,
    document,
    fail,
    finish,
    get,
    line_of,
    new_run,
    obj,
    sha256_text,
    stop_mode,
    unique_ids,
)
from reporter.ingest.limits import check_yaml
from reporter.ingest.lines import Source
from reporter.numbers import counted
from reporter.table import Partial
from reporter.values import finite_number

NAME = "guidellm"
WHAT = "GuideLLM benchmark"
#: Request lists → finish_reason. GuideLLM's `incomplete` requests are the ones still running
#: when the benchmark stopped, which the client then cancelled: `time_limit` when its
#: duration limit stopped it, else `cancelled` (see _incomplete_reason).
STATUSES = (("successful", None), ("incomplete", "cancelled"), ("errored", "error"))
#: Keys that make a file look like this format (to rank the "could not tell" candidates).
DETECT_KEYS = ("benchmarks", "metadata", "args")


def detect(source: Source, records: list[Any]) -> tuple[bool, list[str]]:
    """A report whose benchmarks are of type_ generative_benchmark."""
    for r in records:
        benchmarks = r.get("benchmarks") if isinstance(r, dict) else None
        if (
            isinstance(benchmarks, list)
            and benchmarks
            and all(
                isinstance(b, dict) and str(b.get("type_", "")).endswith("benchmark")
                for b in benchmarks
            )
        ):
            return True, []
    if not records and _is_yaml_report(source):
        return True, []
    return False, ['"benchmarks"[].type_ "generative_benchmark"']


#: How much of a YAML file detection scans for the report's keys: enough for any report
#: (sorted keys put `type_` after a benchmark's request lists), bounded for a stray huge file.
YAML_SCAN_BYTES = 512 << 20


def _is_yaml_report(source: Source) -> bool:
    """benchmarks.yaml: the same report, written as YAML: a top-level `benchmarks:` key and a
    benchmark `type_: generative_benchmark`, wherever they sit in the file (a report written
    with sorted keys has megabytes of `args` and request lists before them)."""
    data = source.data[:YAML_SCAN_BYTES]
    return (
        re.search(rb"(?m)^benchmarks:", data) is not None
        and re.search(rb"(?m)^[ \t-]*type_: ['\"]?generative_benchmark", data) is not None
    )


def _yaml_document(source: Source) -> tuple[Any, dict[tuple[Any, ...], int]]:
    """The YAML report and the line of each benchmark (its requests point there too)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    text = source.text()
    try:
        check_yaml(text, source.path, loader)  # depth and alias budget, before anything is built
        doc = yaml.load(text, Loader=loader)  # a safe loader: plain data only
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise fail(
            source.path,
            mark.line + 1 if mark is not None else None,
            f"not valid YAML: {getattr(exc, 'problem', None) or exc}",
            "a GuideLLM benchmarks.yaml report",
        ) from None
    except (ValueError, OverflowError) as exc:  # a tagged value that cannot be built
        raise fail(
            source.path, None, f"a value cannot be read: {exc}", "a GuideLLM benchmarks.yaml report"
        ) from None
    count = (
        len(doc["benchmarks"])
        if isinstance(doc, dict) and isinstance(doc.get("benchmarks"), list)
        else 0
    )
    starts = _yaml_items(source.data, b"benchmarks", count)
    if starts is None:  # not the layout GuideLLM writes: each benchmark's type_ line
        starts = [
            m.start()
            for m in re.finditer(rb"(?m)^\s*(- )?type_: generative_benchmark", source.data)
        ]
    lines: dict[tuple[Any, ...], int] = {(): 1}
    for i, start in enumerate(starts):
        lines[("benchmarks", i)] = source.data.count(b"\n", 0, start) + 1
    return doc, lines


def _yaml_items(data: bytes, key: bytes, count: int) -> list[int] | None:
    """Where each item of the top-level YAML list `key` starts (its `- ` line), as GuideLLM
    writes it (`key:` at the margin, its items each at one indentation); None when the text
    does not hold exactly `count` of them so."""
    top = re.search(rb"(?m)^" + re.escape(key) + rb":[ \t]*\r?$", data)
    if top is None:
        return None
    end = re.compile(rb"(?m)^[^\s#-]").search(data, top.end())
    block = slice(top.end(), end.start() if end else len(data))
    first = re.compile(rb"(?m)^([ \t]*)- ").search(data, block.start, block.stop)
    if first is None:
        return None
    item = re.compile(rb"(?m)^" + re.escape(first.group(1)) + rb"- ")
    starts = [m.start() for m in item.finditer(data, block.start, block.stop)]
    return starts if len(starts) == count else None


def read(source: Source, *, lenient: bool = False, **options: Any) -> Partial:
    """One run per benchmark; request rows for the records inside its measurement window."""
    problems = Problems(source.path)
    if source.data.lstrip(b"\xef\xbb\xbf").lstrip()[:1] in (b"{", b"["):
        doc = document(source)
        lines = container_lines(source.data, 5)
    else:
        doc, lines = _yaml_document(source)
    if not isinstance(doc, dict) or not isinstance(doc.get("benchmarks"), list):
        raise fail(source.path, 1, 'no "benchmarks" list', "a GuideLLM benchmarks.json report")
    metadata = obj(doc.get("metadata"))
    version = metadata.get("guidellm_version") if metadata else None
    args = obj(doc.get("args"))
    # report version 2 (GuideLLM 0.8) states the run's specification once, at the top
    spec = obj(get(doc, "config", "spec"))
    if spec:
        args = {**args, "spec": spec}
    benchmarks = doc["benchmarks"]
    ids = unique_ids(
        [_strategy_name(b) if isinstance(b, dict) else "benchmark" for b in benchmarks]
    )
    runs: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    notes: list[str] = []
    records = 0
    for i, (bench, run_id) in enumerate(zip(benchmarks, ids, strict=True)):
        line = line_of(lines, "benchmarks", i)
        if not isinstance(bench, dict):
            problems.add(
                line, f"the benchmark is a JSON {type(bench).__name__}", f"an object ({WHAT})"
            )
            continue
        run, run_rows, note, count = _benchmark(
            bench, i, line, run_id, lines, source.path, problems, version, args
        )
        records += count
        if run is not None:
            runs.append(run)
            rows.extend(run_rows)
            notes.append(note)
    problems.raise_unless(lenient)
    return finish(source, NAME, runs, rows, records=records, notes=notes, problems=problems)


def _strategy(bench: dict[str, Any]) -> dict[str, Any]:
    strategy = get(bench, "config", "strategy")
    if not isinstance(strategy, dict):
        strategy = get(bench, "args", "strategy")
    return strategy if isinstance(strategy, dict) else {}


def _strategy_name(bench: dict[str, Any]) -> str:
    s = _strategy(bench)
    kind = str(s.get("type_") or "benchmark")
    if kind == "concurrent" and s.get("streams") is not None:
        return f"concurrent-{s['streams']}"
    if s.get("rate") is not None and kind in ("constant", "poisson", "async"):
        return f"{kind}-{float(s['rate']):g}rps"
    if kind == "throughput" and s.get("max_concurrency") is not None:
        return f"throughput-{s['max_concurrency']}"
    return kind


def _stat(metrics: Any, name: str, field: str, status: str = "successful") -> float | None:
    return finite_number(get(metrics, name, status, field))


def _benchmark(
    bench: dict[str, Any],
    index: int,
    line: int,
    run_id: str,
    lines: dict[tuple[Any, ...], int],
    path: str,
    problems: Problems,
    version: str | None,
    args: dict[str, Any],
) -> tuple[dict[str, Any] | None, list[dict[str, Any]], str, int]:
    f = Fields(bench, line, problems, WHAT)
    new = "scheduler_metrics" in bench or "config" in bench
    start = f.number("scheduler_metrics.measure_start_time", minimum=None) if new else None
    end = f.number("scheduler_metrics.measure_end_time", minimum=None) if new else None
    if start is None:
        start = f.number("start_time", required=True, minimum=None, unit="epoch seconds")
    if end is None:
        end = f.number("end_time", required=True, minimum=None, unit="epoch seconds")
    duration = f.number("duration", unit="seconds")
    requests = f.mapping("requests", required=True)
    if not f.ok or requests is None:
        return None, [], "", 0
    assert start is not None and end is not None
    if duration is None:
        duration = end - start
    metrics = obj(bench.get("metrics"))
    time_limit = _time_limit(bench, args)
    timed_out = time_limit is not None and (
        duration >= 0.99 * time_limit
        or _scheduled_for(bench) >= 0.99 * time_limit
        or _stopped_by(bench, ("max_seconds", "max_duration"))
    )
    all_rows: list[dict[str, Any]] = []
    bodies: list[dict[str, Any] | None] = []
    count = 0
    for status, reason in STATUSES:
        items = requests.get(status)
        if items is None:
            continue
        if not isinstance(items, list):
            problems.add(line, f'"requests.{status}" is {type(items).__name__}', "a list")
            continue
        for j, item in enumerate(items):
            count += 1
            item_line = line_of(lines, "benchmarks", index, "requests", status, j)
            row, body = _request(item, status, reason, run_id, item_line, problems, new)
            if row is not None and reason == "cancelled":
                row["finish_reason"], row["error"] = _incomplete_reason(
                    row["error"], time_limit if timed_out else None
                )
            if row is not None:
                all_rows.append(row)
                bodies.append(body)
    inside = [r for r in all_rows if _in_window(r, start, end)]
    dropped = len(all_rows) - len(inside)
    # why they fell outside: a warm-up or cool-down the file sets, or only their times
    outside = (
        _outside_words([r for r in all_rows if not _in_window(r, start, end)], start, end)
        if dropped and _no_warm_up_or_cool_down(bench)
        else None
    )
    totals = get(metrics, "request_totals") if new else bench.get("request_totals")
    total = _total(totals)
    sampled = total is not None and len(inside) < total
    derived: list[str] = []
    strategy = _strategy(bench)
    kind = strategy.get("type_")
    concurrency: int | None = None
    rate = finite_number(strategy.get("rate"))
    if kind == "synchronous":
        concurrency = 1
    elif kind == "concurrent":
        concurrency = _whole(strategy.get("streams"))
    elif kind == "throughput":
        concurrency = _whole(strategy.get("max_concurrency"))
    used = [b for b, r in zip(bodies, all_rows, strict=True) if _in_window(r, start, end)]
    recorded = [b for b in used if b is not None]
    ignore_eos: bool | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    if recorded and len(recorded) == len(used):
        flags = {bool(b.get("ignore_eos", False)) for b in recorded}
        ignore_eos = flags.pop() if len(flags) == 1 else None
        caps = {b.get("max_tokens", b.get("max_completion_tokens")) for b in recorded}
        max_tokens = _whole(caps.pop()) if len(caps) == 1 else None
        temps = {b.get("temperature") for b in recorded}
        temperature = finite_number(temps.pop()) if len(temps) == 1 else None
    else:
        derived.append("request bodies not recorded: stop mode unknown")
    data_spec = str(get(bench, "request_loader", "data") or "")
    prompt_len = _spec_int(data_spec, "prompt_tokens")
    out_len = _spec_int(data_spec, "output_tokens")
    data0 = obj(get(args, "spec", "data", 0))
    if prompt_len is None and not finite_number(data0.get("prompt_tokens_stdev")):
        prompt_len = _whole(data0.get("prompt_tokens"))
    if out_len is None and not finite_number(data0.get("output_tokens_stdev")):
        out_len = _whole(data0.get("output_tokens"))
    if data0.get("output_tokens") is not None and finite_number(data0.get("output_tokens_stdev")):
        derived.append(
            f"synthetic outputs drawn around {data0['output_tokens']} tokens (stdev "
            f"{data0['output_tokens_stdev']}, {data0.get('output_tokens_min')}–"
            f"{data0.get('output_tokens_max')}): no single requested length"
        )
    lengths = [r["output_tokens"] for r in inside if r.get("finish_reason") is None]
    stop = stop_mode(ignore_eos, lengths)

    summary: dict[str, Any] = {
        "requests": total if total is not None else len(inside),
        "failed": _failed(totals),
        "output_tokens": _stat(metrics, "output_token_count", "total_sum"),
        "prompt_tokens": _stat(metrics, "prompt_token_count", "total_sum"),
        "wall_s": duration,
        "sum_latency_s": _stat(metrics, "request_latency", "total_sum", "total")
        or _stat(metrics, "request_latency", "total_sum"),
        "mean_ttft_s": _ms(_stat(metrics, "time_to_first_token_ms", "mean")),
        "median_ttft_s": _ms(_stat(metrics, "time_to_first_token_ms", "median")),
        "mean_tpot_s": _ms(_stat(metrics, "inter_token_latency_ms", "mean")),
        "median_tpot_s": _ms(_stat(metrics, "inter_token_latency_ms", "median")),
        "tool_aggregate_tps": _stat(metrics, "output_tokens_per_second", "mean"),
        "tool_aggregate_field": "output_tokens_per_second.successful.mean",
        "tool_concurrency": _stat(metrics, "request_concurrency", "mean"),
        "mean_output_tokens": _stat(metrics, "output_token_count", "mean"),
        "min_output_tokens": _stat(metrics, "output_token_count", "min"),
        "max_output_tokens": _stat(metrics, "output_token_count", "max"),
    }
    rates = [
        r["reported_tps"]
        for r in inside
        if r.get("finish_reason") is None and r.get("reported_tps") is not None
    ]
    if rates:
        summary["mean_reported_tps"] = sum(rates) / len(rates)
    incomplete = _whole(obj(totals).get("incomplete")) if isinstance(totals, dict) else None
    if incomplete:
        cause = "time_limited" if timed_out else "cancelled"
        summary[cause] = incomplete
        derived.append(
            f"{counted(incomplete, 'incomplete request')} "
            + (
                f"cut by the time limit ({time_limit:g} s): still running when the "
                "benchmark's duration ran out"
                if timed_out and time_limit is not None
                else "cancelled by the client when the benchmark stopped"
            )
            + "; their tokens are not in the aggregate"
        )
    shortfall = _shortfall(
        bench, args, total, time_limit if timed_out else None, _made(bench, len(all_rows))
    )
    if shortfall is not None:
        derived.append(shortfall)
    keep = inside
    note = (
        f"GuideLLM {run_id}: kept {len(inside)} of {len(all_rows)} records inside the "
        f"measurement window; dropped {dropped} "
        + ("outside it (the file sets no warm-up or cool-down)" if outside else "warm-up/cool-down")
    )
    if sampled:
        keep = []
        n_total = int(summary["requests"])
        n_ok = n_total - int(summary["failed"] or 0)
        if rates and n_ok:
            summary["sum_reported_tps"] = sum(rates) / len(rates) * n_ok
            derived.append(
                f"Σ reported rates estimated as the sample's mean × {n_ok} successful requests"
            )
        note = (
            f"GuideLLM {run_id}: the request lists are a sample ({len(inside)} of "
            f"{n_total} inside the window): figures from GuideLLM's own summary, "
            "per-request rows not used"
        )
        derived.append(
            f"per-request records are a sample ({len(inside)} of {n_total}): "
            "totals, wall clock and Σ latency from GuideLLM's summary"
        )
    elif dropped:
        derived.append(
            f"{counted(dropped, 'record')} outside the measurement window dropped"
            + (
                f": {outside} (the file sets no warm-up or cool-down)"
                if outside
                else " (warm-up / cool-down)"
            )
        )
    if version is None:
        derived.append("tool version not recorded (a report without metadata: GuideLLM ≤ 0.3)")
    if summary["tool_concurrency"] is not None:
        derived.append(
            f"request_concurrency {summary['tool_concurrency']:.2f} is GuideLLM's "
            "time-weighted count of requests in flight"
        )
    else:
        # 0.2 / 0.3 reports keep the measured figures in the profile, one per strategy
        measured = _measured(bench, "measured_concurrencies")
        if measured is not None:
            summary["tool_concurrency"] = measured
            derived.append(
                f"measured_concurrencies {measured:.2f} is GuideLLM's count of requests in "
                "flight over the benchmark"
            )
    if rate is not None and kind in ("constant", "poisson", "async"):
        achieved = _measured(bench, "measured_rates")
        derived.append(
            f"open loop: requests sent at {rate:g} req/s ({kind}) whatever the server's pace"
            + (f", {achieved:.2f} req/s achieved" if achieved is not None else "")
            + "; the number in flight is an outcome, not a setting"
        )
    run_group = get(bench, "config", "run_id") or bench.get("run_id")
    model = (
        get(bench, "config", "backend", "model")
        or get(bench, "worker", "backend_model")
        or args.get("model")
        or get(args, "spec", "backend", "model")
    )
    run = new_run(
        run_id,
        path,
        line,
        NAME,
        tool=("guidellm", version),
        model={"name": model if isinstance(model, str) else None},
        workload={
            "concurrency": concurrency,
            "request_rate": rate,
            "stop": stop,
            "ignore_eos": ignore_eos,
            "output_tokens": max_tokens or out_len,
            "prompt_tokens": prompt_len,
            "temperature": temperature,
        },
        group=f"guidellm {run_group}" if run_group else None,
        summary=summary,
        derived=derived,
        extra={
            "strategy": kind,
            "window": [start, end],
            "warmup_duration": bench.get("warmup_duration"),
            "cooldown_duration": bench.get("cooldown_duration"),
            "records_dropped_outside_window": dropped or None,
            "sampled": sampled or None,
            "backend_target": get(bench, "config", "backend", "target"),
        },
    )
    if shortfall is not None:
        note += f"; {shortfall}"
    return run, keep, note, count


def _measured(bench: dict[str, Any], key: str) -> float | None:
    """A figure the 0.2 / 0.3 profile measured for this benchmark's strategy."""
    values = get(bench, "args", "profile", key)
    index = _whole(get(bench, "args", "strategy_index")) or 0
    if isinstance(values, list) and 0 <= index < len(values):
        return finite_number(values[index])
    return None


def _time_limit(bench: dict[str, Any], args: dict[str, Any]) -> float | None:
    """The benchmark's duration limit in seconds (`--max-seconds`), in any report layout:
    0.2/0.3 `args.max_duration`; ≥ 0.5 a `max_seconds` or `max_duration` constraint holding
    `max_duration`, `duration` or (0.8) `args.seconds`, per benchmark or listed once."""
    candidates: list[Any] = [get(bench, "args", "max_duration")]
    for key in ("max_seconds", "max_duration"):
        c = get(bench, "config", "constraints", key)
        candidates += [get(c, "max_duration"), get(c, "duration"), get(c, "seconds")]
        candidates += [get(c, "args", "seconds"), get(c, "args", "duration")]
        for field in ("seconds", "duration"):
            candidates.append(_listed_constraint(get(args, "spec", "constraints"), key, field))
    index = _whole(get(bench, "config", "run_index")) or 0
    for value in candidates:
        value = _per_strategy(value, index)
        if finite_number(value) is not None and float(value) > 0:
            return float(value)
    return None


def _max_requests(bench: dict[str, Any], args: dict[str, Any]) -> int | None:
    """The request count the benchmark's own constraint asked for (`--max-requests`)."""
    index = _whole(get(bench, "config", "run_index")) or 0
    for value in (
        get(bench, "args", "max_number"),  # 0.2 / 0.3
        get(bench, "config", "constraints", "max_requests", "max_num"),  # 0.5
        get(bench, "config", "constraints", "max_requests", "args", "count"),  # 0.8
        get(bench, "config", "constraints", "max_requests", "count"),
        _listed_constraint(get(args, "spec", "constraints"), "max_requests", "count"),
    ):
        value = _per_strategy(value, index)
        if _whole(value):
            return _whole(value)
    return None


def _per_strategy(value: Any, index: int) -> Any:
    """A constraint value given once, or as a list with one value per strategy (0.8)."""
    if isinstance(value, list):
        return value[index] if 0 <= index < len(value) else None
    return value


def _listed_constraint(constraints: Any, kind: str, key: str) -> Any:
    """A value of report version 2's list of constraints (`[{"kind": ..., ...}]`)."""
    if not isinstance(constraints, list):
        return None
    for c in constraints:
        if isinstance(c, dict) and c.get("kind") == kind:
            return c.get(key)
    return None


def _scheduled_for(bench: dict[str, Any]) -> float:
    """How long the scheduler ran (0.2/0.3 `run_stats`; 0 when not recorded): the time limit
    counts from its start, which may be seconds before the first request's (the benchmark's
    own `duration`)."""
    start = finite_number(get(bench, "run_stats", "start_time"))
    end = finite_number(get(bench, "run_stats", "end_time"))
    return end - start if start is not None and end is not None else 0.0


def _stopped_by(bench: dict[str, Any], kinds: tuple[str, ...]) -> bool:
    """Whether the scheduler says one of these constraints ended the processing."""
    ended = get(bench, "scheduler_state", "end_processing_constraints")
    return isinstance(ended, dict) and any(k in ended for k in kinds)


def _made(bench: dict[str, Any], records: int) -> int | None:
    """How many requests the benchmark made, its warm-up and cool-down included: the
    scheduler's count (0.5+ `scheduler_metrics`, 0.3 `run_stats`), or the request records the
    file holds, whichever is larger; None when neither is known."""
    counts = [
        _whole(get(bench, "scheduler_metrics", "requests_made", "total")),
        _whole(get(bench, "run_stats", "requests_made", "total")),
        records or None,
    ]
    known = [c for c in counts if c is not None]
    return max(known) if known else None


def _shortfall(
    bench: dict[str, Any],
    args: dict[str, Any],
    total: int | None,
    time_limit: float | None,
    made: int | None = None,
) -> str | None:
    """A file holding fewer requests than its own max_requests constraint asked for; when the
    time limit ended the benchmark (`time_limit`), that is why. `total` counts the requests
    inside GuideLLM's measurement window; `made` (`_made`) those outside it too."""
    wanted = _max_requests(bench, args)
    if wanted is None or total is None or total >= wanted:
        return None
    outside = made - total if made is not None and made > total else 0
    window = (
        f" inside its measurement window ({made} made: the other {outside} fell in the "
        "warm-up or cool-down, which GuideLLM's figures leave out)"
        if outside
        else ""
    )
    if made is not None and made >= wanted:
        # every request asked for was made: the window, not the file, holds fewer
        return (
            f"holds {counted(total, 'request')}{window}; all {wanted} its max_requests "
            "constraint asked for were made, none is missing"
        )
    if time_limit is not None:
        return (
            f"holds {counted(total, 'request')}{window} of up to {wanted} "
            "(its max_requests constraint): its "
            f"{time_limit:g} s time limit ended the benchmark first"
        )
    # fewer made than asked: the requests outside the window were made, the rest were not
    short, what = (wanted - (made or total), "not made") if outside else (wanted - total, "missing")
    return (
        f"holds {counted(total, 'request')}{window} of the {wanted} its own max_requests "
        f"constraint asked for ({short} {what}: the benchmark stopped early or the file was cut)"
    )


def _incomplete_reason(error: str | None, time_limit: float | None) -> tuple[str, str]:
    """finish_reason and wording of a request GuideLLM left incomplete."""
    detail = f": {error}" if error and not error.startswith("cancelled before the end") else ""
    if time_limit is not None:
        return "time_limit", (
            f"cut by the time limit (GuideLLM incomplete: still running when the "
            f"{time_limit:g} s duration ran out){detail}"
        )
    return "cancelled", (
        f"cancelled by the client (GuideLLM incomplete: still running when the benchmark "
        f"stopped){detail}"
    )


def _no_warm_up_or_cool_down(bench: dict[str, Any]) -> bool:
    """Whether the file states that the benchmark had neither a warm-up nor a cool-down: ≥ 0.5
    `warmup_duration` and `cooldown_duration` both 0 with no `config.warmup` / `config.cooldown`
    value or percent; 0.2/0.3 `args.warmup_*` and `args.cooldown_*` all null. A record
    outside the window of such a run is not a warm-up or cool-down record."""
    durations = [finite_number(bench.get(k)) for k in ("warmup_duration", "cooldown_duration")]
    if all(d is not None for d in durations):
        configured = [get(bench, "config", phase) for phase in ("warmup", "cooldown")]
        return all(d == 0 for d in durations) and not any(
            isinstance(c, dict) and (c.get("value") or c.get("percent")) for c in configured
        )
    args = obj(bench.get("args"))
    keys = [f"{p}_{k}" for p in ("warmup", "cooldown") for k in ("number", "duration")]
    return all(k in args for k in keys) and not any(args[k] for k in keys)


def _outside_words(rows: list[dict[str, Any]], start: float, end: float) -> str:
    """Where the records outside the measurement window fell, from their own times (a record
    without a send time that ended after the window is said to have ended after it)."""

    def where(row: dict[str, Any]) -> str:
        send, ended = finite_number(row.get("t_send")), finite_number(row.get("t_end"))
        if ended is not None and ended < start:
            return "ended before the window opened"
        if send is not None and send > end:
            return "started after the window closed"
        if ended is not None and ended > end:
            return "ended after the window closed"
        return "has no end time"

    places = [where(r) for r in rows]
    if len(rows) == 1:
        return f"it {places[0]}"
    counts = {w: places.count(w) for w in dict.fromkeys(places)}
    return ", ".join(
        f"{n} {'have no end time' if w == 'has no end time' and n > 1 else w}"
        for w, n in counts.items()
    )


def _in_window(row: dict[str, Any], start: float, end: float) -> bool:
    t_end = row.get("t_end")
    t_send = row.get("t_send")
    if t_end is None or math.isnan(t_end) or t_end < start:
        return False
    if t_send is not None and not math.isnan(t_send):
        return bool(t_send <= end)
    return bool(t_end <= end)


def _total(totals: Any) -> int | None:
    if not isinstance(totals, dict):
        return None
    if _whole(totals.get("total")) is not None:
        return _whole(totals.get("total"))
    parts = [_whole(totals.get(k)) for k in ("successful", "errored", "incomplete")]
    return sum(p for p in parts if p is not None) if any(p is not None for p in parts) else None


def _failed(totals: Any) -> int | None:
    if not isinstance(totals, dict):
        return None
    parts = [_whole(totals.get(k)) for k in ("errored", "incomplete")]
    return sum(p or 0 for p in parts)


def _whole(value: Any) -> int | None:
    v = finite_number(value)
    return int(v) if v is not None and v == int(v) else None


def _ms(value: float | None) -> float | None:
    return None if value is None else value / 1000.0


def _spec_int(spec: str, key: str) -> int | None:
    """A whole number of GuideLLM's `--data` spec, in either form it takes and writes back:
    `prompt_tokens=256,output_tokens=128` or JSON (`{"prompt_tokens": 256, ...}`)."""
    match = re.search(rf"\b{key}=(\d+)\b", spec) or re.search(rf'"{key}"\s*:\s*(\d+)\b', spec)
    return int(match.group(1)) if match else None


def _request(
    item: Any,
    status: str,
    reason: str | None,
    run_id: str,
    line: int,
    problems: Problems,
    new: bool,
) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    if not isinstance(item, dict):
        problems.add(
            line,
            f"the request is a JSON {type(item).__name__}",
            "an object (GuideLLM request record)",
        )
        return None, None
    f = Fields(item, line, problems, "GuideLLM request record")
    if new and isinstance(item.get("info"), dict):
        timings = "info.timings."
        send = (
            f.number(timings + "request_start", minimum=None)
            or f.number(timings + "resolve_start", minimum=None)
            or f.number("request_start_time", minimum=None)
        )
        first = f.number(timings + "first_token_iteration", minimum=None)
        t_end = (
            f.number(timings + "request_end", minimum=None)
            or f.number(timings + "resolve_end", minimum=None)
            or f.number("request_end_time", minimum=None)
        )
        chunks = f.integer(timings + "token_iterations")
        error = f.string("info.error")
        prompt_tokens = f.number("prompt_tokens") or f.number("input_metrics.total_tokens")
        output_tokens = f.number("output_tokens")
        if output_tokens is None:
            output_tokens = f.number("output_metrics.total_tokens")
    else:
        send = f.number("scheduler_info.request_start", minimum=None) or f.number(
            "start_time", minimum=None
        )
        first = f.number("first_token_time", minimum=None)
        t_end = f.number("scheduler_info.request_end", minimum=None) or f.number(
            "end_time", minimum=None
        )
        chunks = None
        error = f.string("error")
        prompt_tokens = f.number("prompt_tokens")
        output_tokens = f.number("output_tokens")
    reported = f.number("output_tokens_per_second")
    request_id = item.get("request_id")
    if not f.ok:
        return None, None
    body, prompt = _body(item)
    if reason is not None and error is None:
        error = (
            "cancelled before the end (GuideLLM: incomplete)"
            if reason == "cancelled"
            else ("errored (GuideLLM)")
        )
    row = {
        "run": run_id,
        "id": str(request_id) if request_id is not None else f"{status}-{line}",
        "t_send": send,
        "t_first": first,
        "t_end": t_end,
        "prompt_tokens": prompt_tokens,
        "output_tokens": output_tokens,
        "reported_tps": reported,
        "n_chunks": chunks,
        "finish_reason": reason,
        "error": error,
        "prompt_sha256": sha256_text(prompt),
        "source_line": line,
    }
    return row, body


def _body(item: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
    """The request body GuideLLM recorded, and the prompt text in it.

    Versions up to 0.4 write it as a JSON string; 0.5 as the repr of a Python dict (single
    quotes, True, None), which is read as a Python literal (ast.literal_eval evaluates no
    code)."""
    args = item.get("request_args")
    prompt = item.get("prompt") if isinstance(item.get("prompt"), str) else None
    if not isinstance(args, str):
        return None, prompt
    try:
        parsed = json.loads(args)
    except (ValueError, RecursionError):  # RecursionError: nested too deeply
        try:
            parsed = ast.literal_eval(args)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return None, prompt
    body = (
        parsed.get("body")
        if isinstance(parsed, dict) and isinstance(parsed.get("body"), dict)
        else parsed
        if isinstance(parsed, dict)
        else None
    )
    if body is None:
        return None, prompt
    if isinstance(body.get("prompt"), str):
        prompt = body["prompt"]
    elif isinstance(body.get("messages"), list):
        prompt = json.dumps(body["messages"], sort_keys=True, ensure_ascii=False)
    return body, prompt
