"""The run record's field map (reporter.runfields) against the native schema, both ways, and
the table, the reader and the writer it generates."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from reporter import api, runfields, table
from reporter.convert import run_record
from reporter.runfields import NOT_COLUMNS, RECORD_ORDER, RUN_FIELDS
from reporter.runrecord import run_row

SCHEMA = json.loads(
    (Path(__file__).resolve().parents[2] / "schemas" / "benchreport-1.schema.json").read_text()
)
RUN = SCHEMA["$defs"]["run"]


def schema_node(path: tuple[str, ...]) -> dict[str, Any] | None:
    node: dict[str, Any] = RUN
    for key in path:
        props = node.get("properties") or {}
        if key not in props:
            return None
        node = props[key]
    return node


def schema_leaves(node: dict[str, Any], prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every field of the schema's run record that holds a value (objects opened)."""
    found: list[tuple[str, ...]] = []
    for key, child in (node.get("properties") or {}).items():
        path = (*prefix, key)
        found += schema_leaves(child, path) if "properties" in child else [path]
    return found


def json_types(node: dict[str, Any]) -> set[str]:
    """The JSON types a schema node allows (enums and const-or-number spelled out)."""
    if "anyOf" in node:
        return set().union(*(json_types(n) for n in node["anyOf"]))
    if "enum" in node:
        return {"null" if v is None else "string" for v in node["enum"]}
    if "const" in node:
        return {"string"}
    declared = node["type"]
    return {declared} if isinstance(declared, str) else set(declared)


def test_every_mapped_field_is_in_the_schema_with_its_type() -> None:
    for field in RUN_FIELDS:
        if field.path is None or field.json is None:
            continue
        node = schema_node(field.path)
        assert node is not None, f"{field.column}: {'.'.join(field.path)} is not in the schema"
        assert field.json in json_types(node), (field.column, field.json, json_types(node))


def test_every_schema_field_is_mapped_or_said_why_not() -> None:
    mapped = {f.path for f in RUN_FIELDS if f.path is not None}
    for path in schema_leaves(RUN):
        dotted = ".".join(path)
        said = any(dotted == k or dotted.startswith(k + ".") for k in NOT_COLUMNS)
        # an object kept whole (workload.prompts) covers its leaves
        covered = any(path[: len(m)] == m for m in mapped)
        assert covered != said, f"{dotted}: mapped {covered}, said {said}"


def test_fields_beyond_the_schema_are_the_ones_convert_adds() -> None:
    beyond = {".".join(f.path) for f in RUN_FIELDS if f.path and f.json is None}
    assert beyond == {"concurrency_derived", "source_format", "summary", "derived"}
    assert all(schema_node(tuple(p.split("."))) is None for p in beyond)
    assert RUN.get("additionalProperties", True) is not False  # the schema allows them


def test_dtypes_agree_with_the_json_types() -> None:
    expected = {"string": {"str"}, "integer": {"float"}, "number": {"float"},
                "boolean": {"object", "bool"}, "array": {"object"},
                "object": {"object"}}  # fmt: skip
    for field in RUN_FIELDS:
        if field.json is not None:
            assert field.dtype in expected[field.json], (field.column, field.dtype, field.json)


def test_the_table_and_the_writer_use_the_map() -> None:
    assert {f.column: f.dtype for f in RUN_FIELDS} == table.RUN_COLUMNS
    assert list(table.RUN_COLUMNS)[:3] == ["run", "group", "group_explicit"]
    written = {".".join(f.path) for f in RUN_FIELDS if f.path is not None and f.write}
    assert sorted(RECORD_ORDER) == sorted(written) and len(set(RECORD_ORDER)) == len(written)
    assert all(f.description for f in RUN_FIELDS)
    assert {"id", "workload", "model", "kind"} <= runfields.RECORD_KEYS


FULL = {
    "kind": "run", "schema": "benchreport/1", "id": "r1",
    "tool": {"name": "vllm-bench", "version": "0.6"},
    "engine": {"name": "vllm", "version": "0.6.3", "flags": ["--max-num-seqs", "4"]},
    "model": {"name": "m", "params_total": 8e9, "params_active": 8e9, "quant": "fp8",
              "bytes_per_token": 8e9, "working_set_bytes": 9e9},
    "hardware": {"name": "h100", "bandwidth_nominal_gbps": 3350, "bandwidth_measured_gbps": 2900},
    "workload": {"concurrency": 4, "output_tokens": 256, "stop": "forced", "ignore_eos": True,
                 "min_tokens": 256, "temperature": 0, "prompt_tokens": 512,
                 "context_tokens": 0, "request_rate": "inf", "dataset": "random",
                 "output_tokens_min": 128, "phase": "generation", "content": "prose",
                 "speculative": {"enabled": True, "method": "eagle", "acceptance": 0.7}},
    "repeat": 2, "group": "g", "interrupted": False,
    "summary": {"total_tokens": 1024}, "derived": ["concurrency"],
    "source_format": "vllm", "concurrency_derived": True,
}  # fmt: skip


def test_a_record_with_every_field_goes_flat_and_back_unchanged() -> None:
    row = run_row(FULL, "t.jsonl", 3, "benchreport")
    assert list(row) == list(table.RUN_COLUMNS)
    assert row["request_rate"] == math.inf
    assert row["spec_method"] == "eagle" and row["engine_flags"] == ["--max-num-seqs", "4"]
    assert row["format"] == "vllm" and row["group_explicit"] is True
    assert (row["source_path"], row["source_line"], row["extra"]) == ("t.jsonl", 3, None)
    back = run_record(row)
    assert back == FULL
    assert list(back) == list(FULL)  # the keys in the order convert writes them


@pytest.mark.parametrize(
    ("record", "column", "value"),
    [
        ({"id": 7}, "run", "7"),
        ({"id": "r"}, "stop", "unknown"),
        ({"id": "r"}, "content", "unknown"),
        ({"id": "r"}, "format", "benchreport"),
        ({"id": "r"}, "engine_flags", []),
        ({"id": "r"}, "derived", []),
        ({"id": "r", "group": 3}, "group", "3"),
        ({"id": "r"}, "group_explicit", False),
        ({"id": "r", "summary": [1]}, "summary", None),
        ({"id": "r", "workload": None}, "concurrency", None),
        ({"id": "r", "metrics_before": "x"}, "extra", {"metrics_before": "x"}),
    ],
)
def test_absent_and_odd_values_read_as_before(
    record: dict[str, Any], column: str, value: object
) -> None:
    assert run_row(record, "t.jsonl", 1, "benchreport")[column] == value


def test_the_recorders_prompt_record_reaches_the_verdict_and_survives_convert(
    tmp_path: Path,
) -> None:
    # the seed and salt of a recording are stated in the JSON verdict, and convert keeps them
    prompts = {"source": "synthetic", "seed": 7, "salt": "a1b2", "repeated": False,
               "tokens_counted": "server /tokenize", "tokens": {"mean": 128, "sd": 0}}  # fmt: skip
    run = {"kind": "run", "schema": "benchreport/1", "id": "r",
           "workload": {"concurrency": 1, "prompts": prompts, "output_tokens_sd": 4.0}}  # fmt: skip
    req = {"kind": "request", "run": "r", "id": 0, "t_send": 0, "t_first": 0.1, "t_end": 1,
           "output_tokens": 10}  # fmt: skip
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(run) + "\n" + json.dumps(req) + "\n", encoding="utf-8")
    (summary,) = api.audit([str(path)]).to_dict()["runs"]
    assert summary["prompts"] == prompts
    out = tmp_path / "c.jsonl"
    api.convert_file(str(path), str(out))
    written = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    assert written["workload"]["prompts"] == prompts
    assert written["workload"]["output_tokens_sd"] == 4.0
