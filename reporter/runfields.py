"""The run record's fields, declared once.

Each field of the run table (one row per run, `reporter.table`) is declared here with its
dtype in the table, where the native run record (schema benchreport/1) holds it, how a value
is read from the record and written back, and what it means. From this one list come the
table's dtypes (`table.RUN_COLUMNS`), nested → flat (`adapters.native.run_row`, which every
adapter's `new_run` goes through) and flat → nested (`convert.run_record`). The schema test
(tests/unit/test_runfields.py) checks the list against schemas/benchreport-1.schema.json both
ways. This module imports nothing of the package: the table, the adapters and convert all
read it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

#: The run table's dtypes: str and float columns hold nulls, object columns lists or dicts.
Dtype = Literal["str", "float", "bool", "object"]
#: How a value is read from the run record (nested → flat):
#:   value: as it is; text: a string, or null; unknown: the value, or "unknown" when absent;
#:   rate: "inf" as infinity; list: a list, empty when absent; strings: a list of strings,
#:   empty when absent or not a list; dict: a dict, or null; flag: true only when true;
#:   fallback: the value, or the file's format when absent; id: the run id as a string.
Read = Literal[
    "value", "text", "unknown", "rate", "list", "strings", "dict", "flag", "fallback", "id"
]
#: How a value is written back to the record (flat → nested), in JSON terms:
#:   integer: whole numbers as integers; number; string; plain: as it is (booleans);
#:   rate: infinity as "inf"; strings: a list of strings, left out when empty; dict: nulls
#:   left out, left out when empty; flag: true, or left out; id: the run id as a string.
Write = Literal["integer", "number", "string", "plain", "rate", "strings", "dict", "flag", "id"]


@dataclass(frozen=True)
class RunField:
    """One column of the run table and its place in the native run record."""

    column: str
    dtype: Dtype
    #: Where the run record holds it; None: not in the record (set by the reader).
    path: tuple[str, ...] | None
    read: Read
    write: Write | None
    description: str
    #: The schema's JSON type for the value (None: written by convert beyond the schema,
    #: whose run record allows other properties).
    json: str | None = None


def _f(
    column: str,
    dtype: Dtype,
    path: str | None,
    read: Read,
    write: Write | None,
    json: str | None,
    description: str,
) -> RunField:
    where = None if path is None else tuple(path.split("."))
    return RunField(column, dtype, where, read, write, description, json)


#: Every column of the run table, in the table's order.
RUN_FIELDS: tuple[RunField, ...] = (
    _f("run", "str", "id", "id", "id", "string", "the run's id"),
    _f("group", "str", "group", "text", "string", "string", "the sweep the file names"),
    _f("group_explicit", "bool", None, "value", None, None,
       "the file named the group (else runs are grouped by their settings)"),
    _f("concurrency", "float", "workload.concurrency", "value", "integer", "integer",
       "requests in flight the client kept (closed loop)"),
    _f("concurrency_derived", "bool", "concurrency_derived", "flag", "flag", None,
       "the concurrency was derived from the requests, not stated"),
    _f("repeat", "float", "repeat", "value", "integer", "integer",
       "which repetition of the same settings"),
    _f("stop", "str", "workload.stop", "unknown", "string", "string",
       "forced (a fixed output length), natural or unknown"),
    _f("output_tokens_requested", "float", "workload.output_tokens", "value", "integer",
       "integer", "the requested output length"),
    _f("ignore_eos", "object", "workload.ignore_eos", "value", "plain", "boolean",
       "the end-of-sequence token was ignored"),
    _f("min_tokens", "float", "workload.min_tokens", "value", "integer", "integer",
       "the minimum output length asked for"),
    _f("temperature", "float", "workload.temperature", "value", "number", "number",
       "the sampling temperature"),
    _f("prompt_tokens", "float", "workload.prompt_tokens", "value", "integer", "integer",
       "the prompt length of every request"),
    _f("context_tokens", "float", "workload.context_tokens", "value", "integer", "integer",
       "tokens already in the context before the prompt (llama-bench depth)"),
    _f("request_rate", "float", "workload.request_rate", "rate", "rate", "number",
       "open-loop arrival rate the tool targeted (req/s); inf = every request sent at once; "
       "None = not an open-loop run or not recorded. A load axis distinct from concurrency"),
    _f("dataset", "str", "workload.dataset", "value", "string", "string",
       "the prompt source the tool named (random, sharegpt, ...)"),
    _f("output_tokens_requested_min", "float", "workload.output_tokens_min", "value",
       "integer", "integer",
       "lower end of the requested output length when the tool drew each request's length "
       "from a range [min, output_tokens_requested] (SGLang random_range_ratio < 1)"),
    _f("phase", "str", "workload.phase", "value", "string", "string",
       "what a single-stream micro-benchmark test times (llama-bench): prompt (pp), "
       "generation (tg) or prompt+generation; None for runs of requests, which have both"),
    _f("output_tokens_sd", "float", "workload.output_tokens_sd", "value", "number", "number",
       "the standard deviation of the output lengths the recorder drew per request"),
    _f("prompts", "object", "workload.prompts", "dict", "dict", "object",
       "where the recorder's prompts came from: source, seed, salt, how lengths were counted"),
    _f("content", "str", "workload.content", "unknown", "string", "string",
       "what the prompts ask for: code, prose, json, mixed or unknown"),
    _f("spec_enabled", "object", "workload.speculative.enabled", "value", "plain", "boolean",
       "speculative decoding was on"),
    _f("spec_method", "str", "workload.speculative.method", "value", "string", "string",
       "the speculative decoding method"),
    _f("spec_acceptance", "float", "workload.speculative.acceptance", "value", "number",
       "number", "the draft tokens' acceptance rate"),
    _f("spec_source", "str", "workload.speculative.source", "text", "string", "string",
       "what in another tool's file showed whether speculation was on (absent: stated)"),
    _f("engine_name", "str", "engine.name", "value", "string", "string", "the serving engine"),
    _f("engine_version", "str", "engine.version", "value", "string", "string",
       "the engine's version"),
    _f("engine_flags", "object", "engine.flags", "list", "strings", "array",
       "the engine's command-line flags"),
    _f("tool_name", "str", "tool.name", "value", "string", "string", "the load tool"),
    _f("tool_version", "str", "tool.version", "value", "string", "string",
       "the load tool's version"),
    _f("model_name", "str", "model.name", "value", "string", "string", "the model"),
    _f("params_total", "float", "model.params_total", "value", "number", "number",
       "the model's parameters"),
    _f("params_active", "float", "model.params_active", "value", "number", "number",
       "parameters active per token (mixture of experts)"),
    _f("quant", "str", "model.quant", "value", "string", "string", "the weights' quantization"),
    _f("bytes_per_token", "float", "model.bytes_per_token", "value", "number", "number",
       "bytes of weights read per generated token"),
    _f("working_set_bytes", "float", "model.working_set_bytes", "value", "number", "number",
       "the model's size in memory"),
    _f("hardware_name", "str", "hardware.name", "value", "string", "string", "the hardware"),
    _f("bandwidth_nominal_gbps", "float", "hardware.bandwidth_nominal_gbps", "value", "number",
       "number", "the memory bandwidth on the data sheet (GB/s)"),
    _f("bandwidth_measured_gbps", "float", "hardware.bandwidth_measured_gbps", "value",
       "number", "number", "the memory bandwidth measured (GB/s)"),
    _f("interrupted", "object", "interrupted", "value", "plain", "boolean",
       "the run was interrupted before its end"),
    _f("format", "str", "source_format", "fallback", "string", None,
       "the format the run was read from (a converted file keeps its original's)"),
    _f("summary", "object", "summary", "dict", "dict", None,
       "what the tool itself summarised, for files without per-request rows (None elsewhere)"),
    _f("derived", "object", "derived", "strings", "strings", None,
       "names of fields that were derived (by the adapter or here) rather than measured"),
    _f("extra", "object", None, "value", None, None,
       "fields of the record beyond these columns, kept for the rules that read them"),
    _f("source_path", "str", None, "value", None, None, "the file the run was read from"),
    _f("source_line", "float", None, "value", None, None, "the line of its run record"),
)  # fmt: skip

#: The order convert writes a run record's keys in (every path of RUN_FIELDS, once).
RECORD_ORDER: tuple[str, ...] = (
    "id",
    "tool.name",
    "tool.version",
    "engine.name",
    "engine.version",
    "engine.flags",
    "model.name",
    "model.params_total",
    "model.params_active",
    "model.quant",
    "model.bytes_per_token",
    "model.working_set_bytes",
    "hardware.name",
    "hardware.bandwidth_nominal_gbps",
    "hardware.bandwidth_measured_gbps",
    "workload.concurrency",
    "workload.output_tokens",
    "workload.stop",
    "workload.ignore_eos",
    "workload.min_tokens",
    "workload.temperature",
    "workload.prompt_tokens",
    "workload.context_tokens",
    "workload.request_rate",
    "workload.dataset",
    "workload.output_tokens_min",
    "workload.output_tokens_sd",
    "workload.prompts",
    "workload.phase",
    "workload.content",
    "workload.speculative.enabled",
    "workload.speculative.method",
    "workload.speculative.acceptance",
    "workload.speculative.source",
    "repeat",
    "group",
    "interrupted",
    "summary",
    "derived",
    "source_format",
    "concurrency_derived",
)

#: Fields of the schema's run record that are no column of the run table, and why.
NOT_COLUMNS: dict[str, str] = {
    "kind": "the record's kind, always run",
    "schema": "the schema's version, checked when the file is read",
    "metrics_before": "kept in `extra` (the engine's counters, read by BR011 and BR014)",
    "metrics_after": "kept in `extra` (the engine's counters, read by BR011 and BR014)",
}

#: The run table's columns and their dtypes.
RUN_COLUMNS: dict[str, str] = {f.column: f.dtype for f in RUN_FIELDS}
#: The run record's top-level keys the table reads (the others are kept in `extra`).
RECORD_KEYS: frozenset[str] = frozenset(
    {"kind", "schema"} | {f.path[0] for f in RUN_FIELDS if f.path is not None}
)
