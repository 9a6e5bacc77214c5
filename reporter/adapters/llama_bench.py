"""llama.cpp `llama-bench` (`-o json`, `-o jsonl`, `-o csv`) and `llama-batched-bench -jsonl`.

llama-bench runs one sequence at a time: a test (`pp512`, `tg128`, `pp512+tg128`, optionally
`@ d4096` of context already in the cache) is repeated `-r` times after an untimed warm-up, and
`samples_ns` holds each repetition's time (JSON and JSONL only; CSV has the mean). Each test
becomes a run of concurrency 1 whose "requests" are its repetitions; the repetitions ran one
after another, but their start times are not written, so their wall clock is the sum of
their times (said in `derived`). `avg_ts` is the mean of the repetitions' rates, which mixes
prompt and generated tokens for `pp+tg` tests; it is kept as the tool's figure.

llama-batched-bench prints one JSON object per (pp, tg, pl) point through its logger, between
ordinary log lines; each point is a run of `pl` sequences decoded together in one process.
"""

from __future__ import annotations

from pathlib import PurePath
from typing import Any

from reporter.adapters._common import (
    Fields,
    Problems,
    container_lines,
    csv_head,
    csv_rows,
    document,
    finish,
    json_lines,
    line_of,
    looks_like_json_lines,
    new_run,
    unique_ids,
)
from reporter.ingest.lines import Source
from reporter.table import Partial

NAME = "llama-bench"
WHAT = "llama-bench test"
WHAT_BATCHED = "llama-batched-bench point"
DECISIVE = ("build_commit", "n_prompt", "n_gen", "avg_ts")
BATCHED = ("pl", "speed_tg", "n_kv_max", "t_tg")
#: Settings that may differ between the tests of one file; when they do, the run id names them.
SETTINGS = (
    "model_type",
    "model_filename",
    "backends",
    "n_batch",
    "n_ubatch",
    "n_threads",
    "type_k",
    "type_v",
    "n_gpu_layers",
    "n_cpu_moe",
    "flash_attn",
    "split_mode",
    "main_gpu",
    "tensor_split",
    "use_mmap",
    "no_kv_offload",
    "devices",
)
#: CSV cells are all strings; these fields are numbers or booleans in the JSON output.
_INT_FIELDS = {
    "build_number",
    "n_batch",
    "n_ubatch",
    "n_threads",
    "poll",
    "model_size",
    "model_n_params",
    "n_gpu_layers",
    "main_gpu",
    "n_prompt",
    "n_gen",
    "n_depth",
    "avg_ns",
    "stddev_ns",
    "no_op_offload",
    "n_cpu_moe",
    "fit_target",
    "fit_min_ctx",
    "flash_attn",
}
_BOOL_FIELDS = {
    "f16_kv",
    "no_kv_offload",
    "cpu_strict",
    "embeddings",
    "no_host",
    "use_mmap",
    "use_direct_io",
}
_FLOAT_FIELDS = {"avg_ts", "stddev_ts", "defrag_thold"}
#: Keys that make a file look like this format (to rank the "could not tell" candidates).
DETECT_KEYS = (*DECISIVE, *BATCHED, "n_depth", "samples_ns", "model_type")


def _is_test(r: Any) -> bool:
    return isinstance(r, dict) and all(k in r for k in DECISIVE)


def _batched_line(line: bytes) -> bool:
    return line.lstrip().startswith(b"{") and b'"speed_tg"' in line and b'"pl"' in line


def detect(source: Source, records: list[Any]) -> tuple[bool, list[str]]:
    """llama-bench tests (build_commit, n_prompt, n_gen, avg_ts), as JSON or CSV, or
    llama-batched-bench points (pl, speed_tg, n_kv_max) among log lines."""
    dicts = [r for r in records if isinstance(r, dict)]
    if dicts and all(_is_test(r) for r in dicts):
        return True, []
    if dicts and all(all(k in r for k in BATCHED) for r in dicts):
        return True, []
    if not dicts:
        head = csv_head(source)
        if all(k in head for k in DECISIVE):
            return True, []
        if any(_batched_line(line) for line in source.head(65536).split(b"\n")[:200]):
            return True, []
    sample = dicts[0] if dicts else {}
    return False, [f'"{k}"' for k in DECISIVE if k not in sample]


def read(source: Source, *, lenient: bool = False, **options: Any) -> Partial:
    """One run per test (or per batched-bench point)."""
    problems = Problems(source.path)
    notes: list[str] = []
    head = source.data.lstrip(b"\xef\xbb\xbf").lstrip()
    records: list[tuple[int, Any]]
    if _has_batched(source):
        return _read_batched(source, problems, lenient)
    if looks_like_json_lines(source):
        records, shape = json_lines(source, problems), "JSON Lines (-o jsonl)"
    elif head[:1] in (b"{", b"["):
        doc = document(source)
        lines = container_lines(source.data, 1)
        if isinstance(doc, list):
            records = [(line_of(lines, i), r) for i, r in enumerate(doc)]
        else:
            records = [(1, doc)]
        shape = "a JSON array (-o json)"
    else:
        records, shape = _csv_records(source, problems), "CSV (-o csv: no per-repetition samples)"
    tests = [(line, r) for line, r in records if isinstance(r, dict)]
    for line, r in records:
        if not isinstance(r, dict):
            problems.add(line, f"the record is a JSON {type(r).__name__}", f"an object ({WHAT})")
    varying = [k for k in SETTINGS if len({str(r.get(k)) for _, r in tests}) > 1]
    ids = unique_ids([_name(r, varying) for _, r in tests])
    runs: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    for (line, record), run_id in zip(tests, ids, strict=True):
        run, run_rows = _test_run(record, line, run_id, source.path, problems)
        if run is not None:
            runs.append(run)
            rows.extend(run_rows)
    problems.raise_unless(lenient)
    notes.append(
        f"llama-bench: {len(runs)} test(s) from {shape}; each repetition is one "
        "request of a single-sequence run"
    )
    return finish(source, NAME, runs, rows, records=len(records), notes=notes, problems=problems)


def _has_batched(source: Source) -> bool:
    return any(_batched_line(line) for line in source.head(65536).split(b"\n")[:200])


def _csv_records(source: Source, problems: Problems) -> list[tuple[int, Any]]:
    header, cells = csv_rows(source, problems)
    out: list[tuple[int, Any]] = []
    for line, values in cells:
        if len(values) != len(header):
            problems.add(
                line, f"the row has {len(values)} cells", f"{len(header)}, one per header column"
            )
            continue
        record: dict[str, Any] = {}
        for key, text in zip(header, values, strict=True):
            record[key] = _typed(key, text.strip())
        out.append((line, record))
    return out


def _typed(key: str, text: str) -> Any:
    """A CSV cell as llama-bench's JSON output would type it (numbers, 0/1 booleans)."""
    try:
        if key in _INT_FIELDS:
            return int(text)
        if key in _FLOAT_FIELDS:
            return float(text)
        if key in _BOOL_FIELDS and text in ("0", "1"):
            return text == "1"
    except ValueError:
        return text
    return text


def _test_name(n_prompt: int, n_gen: int, depth: int) -> str:
    parts = []
    if n_prompt:
        parts.append(f"pp{n_prompt}")
    if n_gen:
        parts.append(f"tg{n_gen}")
    name = "+".join(parts) or "empty"
    return f"{name}@d{depth}" if depth else name


def _phase(n_prompt: int, n_gen: int) -> str | None:
    """What the test times: prompt processing (pp), generation (tg), or both (pp+tg)."""
    if n_prompt and n_gen:
        return "prompt+generation"
    if n_prompt:
        return "prompt"
    return "generation" if n_gen else None


def _name(record: dict[str, Any], varying: list[str]) -> str:
    base = _test_name(
        _int(record.get("n_prompt")), _int(record.get("n_gen")), _int(record.get("n_depth"))
    )
    for key in varying:
        value = record.get(key)
        if key == "model_filename" and isinstance(value, str):
            value = PurePath(value).name
        base += f" {key}={value}"
    return base


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def _test_run(
    record: dict[str, Any], line: int, run_id: str, path: str, problems: Problems
) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    f = Fields(record, line, problems, WHAT)
    n_prompt = f.integer("n_prompt", required=True)
    n_gen = f.integer("n_gen", required=True)
    depth = f.integer("n_depth") or 0
    avg_ts = f.number("avg_ts", required=True, unit="tokens per second")
    avg_ns = f.number("avg_ns", unit="nanoseconds")
    samples_ns = f.numbers("samples_ns", unit="nanoseconds")
    samples_ts = f.numbers(
        "samples_ts",
        unit="tokens per second",
        length=None if samples_ns is None else len(samples_ns),
    )
    build = f.integer("build_number")
    commit = f.string("build_commit")
    if not f.ok:
        return None, []
    assert n_prompt is not None and n_gen is not None and avg_ts is not None
    derived = [
        "concurrency 1: llama-bench runs a single sequence",
        "stop forced: llama-bench always generates n_gen tokens",
        "speculative decoding off: llama-bench never drafts",
    ]
    rows: list[dict[str, Any]] = []
    if samples_ns:
        reps = len(samples_ns)
        wall = sum(s for s in samples_ns if s is not None) / 1e9
        derived.append(
            f"wall clock = Σ of the {reps} repetitions' times: they ran one after "
            "another, with an untimed warm-up before and gaps not recorded"
        )
        if n_gen:
            # the per-repetition rates stay in `extra`: the repetitions ran one after another,
            # so a sum of them would be the summed-rates error by construction
            for i in range(reps):
                rows.append(
                    {
                        "run": run_id,
                        "id": str(i),
                        "source_line": line,
                        "prompt_tokens": n_prompt,
                        "output_tokens": n_gen,
                    }
                )
    elif avg_ns is not None:
        reps = 1
        wall = avg_ns / 1e9
        derived.append(
            "one average repetition: the CSV holds neither the repetitions' times nor their count"
        )
    else:
        reps = 1
        wall = (n_prompt + n_gen) / avg_ts if avg_ts > 0 else 0.0
        derived.append("wall clock = (n_prompt + n_gen) ÷ avg_ts: the file has no times")
    if n_prompt and n_gen:
        derived.append("avg_ts mixes prompt and generated tokens ((n_prompt + n_gen) ÷ time)")
    summary: dict[str, Any] = {
        "requests": reps,
        "failed": 0,
        "output_tokens": n_gen * reps,
        "prompt_tokens": n_prompt * reps,
        "wall_s": wall,
        "sum_latency_s": wall,
        "mean_reported_tps": avg_ts,
        "tool_aggregate_tps": avg_ts,
        "mean_output_tokens": n_gen,
        "min_output_tokens": n_gen,
        "max_output_tokens": n_gen,
        "mean_tpot_s": wall / reps / n_gen if n_gen and not n_prompt and reps else None,
    }
    model_type = record.get("model_type")
    quant = None
    if isinstance(model_type, str) and len(model_type.split(" ", 2)) == 3:
        quant = model_type.split(" ", 2)[2]
    flags = [f"{k}={record[k]}" for k in SETTINGS[2:] if record.get(k) is not None]
    gpu = record.get("gpu_info")
    run = new_run(
        run_id,
        path,
        line,
        NAME,
        tool=("llama-bench", f"b{build}" if build is not None else None),
        engine={
            "name": "llama.cpp",
            "version": f"b{build}" + (f" ({commit})" if commit else "")
            if build is not None
            else commit,
            "flags": flags,
        },
        model={
            "name": model_type if isinstance(model_type, str) else None,
            "params_total": f.number("model_n_params"),
            "quant": quant,
            "working_set_bytes": f.number("model_size"),
        },
        hardware={"name": gpu if isinstance(gpu, str) and gpu else record.get("cpu_info")},
        workload={
            "concurrency": 1,
            "stop": "forced",
            "ignore_eos": True,
            "output_tokens": n_gen or None,
            "prompt_tokens": n_prompt,
            "context_tokens": depth + n_prompt,
            "speculative": {"enabled": False},
            "phase": _phase(n_prompt, n_gen),
        },
        summary=summary,
        derived=derived,
        extra={
            "test": _test_name(n_prompt, n_gen, depth),
            "n_depth": depth,
            "test_time": record.get("test_time"),
            "avg_ns": avg_ns,
            "stddev_ts": record.get("stddev_ts"),
            "samples_ts": samples_ts,
            "model_filename": record.get("model_filename"),
            "backends": record.get("backends"),
            "cpu_info": record.get("cpu_info"),
        },
        concurrency_derived=True,
    )
    return run, rows


def _read_batched(source: Source, problems: Problems, lenient: bool) -> Partial:
    records = json_lines(source, problems, keep=_batched_line)
    points = [(line, r) for line, r in records if r is not None]
    logs = len(records) - len(points)
    runs: list[dict[str, Any]] = []
    ids = unique_ids(
        [
            f"pp{_int(r.get('pp'))}+tg{_int(r.get('tg'))}:pl{_int(r.get('pl'))}"
            if isinstance(r, dict)
            else "point"
            for _, r in points
        ]
    )
    for (line, record), run_id in zip(points, ids, strict=True):
        if not isinstance(record, dict):
            problems.add(
                line,
                f"the line holds a JSON {type(record).__name__}",
                f"an object ({WHAT_BATCHED})",
            )
            continue
        run = _batched_run(record, line, run_id, source.path, problems)
        if run is not None:
            runs.append(run)
    problems.raise_unless(lenient)
    notes = [
        f"llama-batched-bench: {len(runs)} point(s); {logs} log line(s) that are not "
        "JSON were left aside"
    ]
    return finish(source, NAME, runs, [], records=len(points), notes=notes, problems=problems)


def _batched_run(
    record: dict[str, Any], line: int, run_id: str, path: str, problems: Problems
) -> dict[str, Any] | None:
    f = Fields(record, line, problems, WHAT_BATCHED)
    pp = f.integer("pp", required=True)
    tg = f.integer("tg", required=True)
    pl = f.integer("pl", required=True, minimum=1)
    t_pp = f.number("t_pp", required=True, unit="seconds")
    t_tg = f.number("t_tg", required=True, unit="seconds")
    t = f.number("t", unit="seconds")
    speed_tg = f.number("speed_tg", unit="tokens per second")
    shared = f.integer("is_pp_shared")
    if not f.ok:
        return None
    assert pp is not None and tg is not None and pl is not None
    assert t_pp is not None and t_tg is not None
    wall = t if t is not None else t_pp + t_tg
    summary: dict[str, Any] = {
        "requests": pl,
        "failed": 0,
        "output_tokens": pl * tg,
        "prompt_tokens": pp if shared else pl * pp,
        "wall_s": wall,
        "sum_latency_s": pl * wall,
        "mean_ttft_s": t_pp,
        "median_ttft_s": t_pp,
        "mean_tpot_s": t_tg / tg if tg else None,
        "tool_aggregate_tps": speed_tg,
        "mean_output_tokens": tg,
        "min_output_tokens": tg,
        "max_output_tokens": tg,
    }
    derived = [
        f"{pl} sequences decoded together in one process (no HTTP, no scheduling): an upper "
        "bound for a server",
        "Σ latency = pl × t: every sequence is in flight for the whole point",
        "time to first token = t_pp: all prompts are processed before the first token",
        "per-sequence decode = tg ÷ t_tg: one token per sequence per step",
        "stop forced: batched-bench always generates tg tokens per sequence",
        "speed_tg counts generated tokens only; speed mixes prompt and generated tokens",
    ]
    flags = [
        f"{k}={record[k]}"
        for k in (
            "n_kv_max",
            "n_batch",
            "n_ubatch",
            "flash_attn",
            "is_pp_shared",
            "n_gpu_layers",
            "n_threads",
            "n_threads_batch",
        )
        if k in record
    ]
    return new_run(
        run_id,
        path,
        line,
        NAME,
        tool=("llama-batched-bench", None),
        engine={"name": "llama.cpp", "flags": flags},
        workload={
            "concurrency": pl,
            "stop": "forced",
            "ignore_eos": True,
            "output_tokens": tg,
            "prompt_tokens": pp,
            "context_tokens": pp,
            "speculative": {"enabled": False},
        },
        group=f"batched pp{pp} tg{tg} " + " ".join(flags),
        summary=summary,
        derived=derived,
        extra={
            "speed_pp": record.get("speed_pp"),
            "speed": record.get("speed"),
            "n_kv": record.get("n_kv"),
        },
    )
