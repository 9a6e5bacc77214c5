"""benchreport convert: any supported file → the native trace, and auditing the converted file
gives the verdict of the original (every real file, the fixtures, and generated vLLM results)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from reporter import api
from reporter.api import convert_file
from reporter.cli import main
from tests.adapters.conftest import HERE, audited_alone
from tests.adapters.test_detect import FIXTURES, REAL_FILES


def comparable(verdict: dict[str, Any]) -> dict[str, Any]:
    """A verdict without what names the file it came from (paths, lines, hashes)."""
    out = dict(verdict)
    out.pop("inputs")
    out["runs"] = [{k: v for k, v in r.items() if k != "source"} for r in out["runs"]]
    out["findings"] = [{k: v for k, v in f.items() if k != "refs"} for f in out["findings"]]
    out["claims"] = [{k: v for k, v in c.items() if k not in ("ref", "source")}
                     for c in out["claims"]]  # fmt: skip
    # a converted file names its groups, the original's were matched by settings
    out["groups"] = [{k: v for k, v in g.items() if k != "why"} for g in out.get("groups", [])]
    return out


def round_trip(path: Path, tmp_path: Path, fmt: str = "auto", **options: Any) -> None:
    __tracebackhide__ = True
    out = tmp_path / "converted.jsonl"
    if fmt == "auto" and not options:
        before = audited_alone(path)
        assert before is not None, f"{path} is refused"
    else:
        before = api.audit([path], fmt=fmt, options=options or None).to_dict()
    convert_file(path, str(out), fmt, options=options or None)
    after = api.audit([out]).to_dict()
    assert after["inputs"][0]["format"] == "benchreport"
    assert comparable(after) == comparable(before)


def _one_per_shape(names: list[str]) -> list[Any]:
    """Every real file; the quick lane round-trips one per shape (tool, file type, summary or
    per-request), the others run in the full lane (each is two audits and a conversion)."""
    seen: set[tuple[str, str, bool]] = set()
    params = []
    for name in names:
        shape = (REAL_FILES[name], Path(name).suffix, "summary" in name)
        quick = shape not in seen
        seen.add(shape)
        params.append(name if quick else pytest.param(name, marks=pytest.mark.slow))
    return params


@pytest.mark.parametrize("name", _one_per_shape(sorted(REAL_FILES)))
def test_real_files_round_trip(real, tmp_path, name):
    round_trip(real(name), tmp_path)


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_fixtures_round_trip(tmp_path, name):
    round_trip(HERE / name, tmp_path)


def test_custom_log_round_trips(tmp_path):
    round_trip(HERE / "bench-log.csv", tmp_path, "custom", mapping=str(HERE / "bench-log.yaml"))


def test_converted_run_keeps_provenance(real, tmp_path):
    out = tmp_path / "converted.jsonl"
    convert_file(real("vllm/er0080-v0.25.1-sweep-maxseqs4-conc2-run0.json"), str(out))
    run = json.loads(out.read_text().splitlines()[0])
    assert run["schema"] == "benchreport/1"
    assert (run["source_format"], run["tool"]) == ("vllm", {"name": "vllm bench serve"})
    assert run["summary"]["tool_peak_concurrency"] == 6
    assert run["summary"]["tool_peak_concurrency_trusted"] is False
    assert run["max_num_seqs"] == 4  # the swept parameter, kept
    assert api.validate([out])[0].input.records == 1  # a valid native trace


# generated vLLM --save-detailed results: any schedule, lengths and failures round-trip


@st.composite
def vllm_results(draw: Any) -> dict[str, Any]:
    n = draw(st.integers(1, 6))
    starts = sorted(draw(st.lists(st.floats(1000.0, 1010.0), min_size=n, max_size=n)))
    failed = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    lens, ttfts, itls, lats, errors = [], [], [], [], []
    for i in range(n):
        if failed[i]:
            lens.append(0), ttfts.append(0.0), itls.append([]), lats.append(0.0)
            errors.append("Bad Gateway")
            continue
        k = draw(st.integers(1, 12))
        gaps = draw(st.lists(st.floats(0.001, 0.2), min_size=k - 1, max_size=k - 1))
        ttfts.append(draw(st.floats(0.001, 2.0)))
        itls.append(gaps)
        lats.append(ttfts[-1] + sum(gaps) + 0.001)
        lens.append(k * draw(st.integers(1, 3)))  # 1–3 tokens a chunk
        errors.append("")
    end = max(s + lat for s, lat in zip(starts, lats, strict=True))
    duration = end - starts[0] + 0.001
    completed = n - sum(failed)
    return {
        "date": "20261101-120000", "backend": "vllm", "model_id": "m", "num_prompts": n,
        "request_rate": "inf", "max_concurrency": draw(st.sampled_from([None, 1, 2, 4])),
        "duration": duration, "completed": completed, "failed": sum(failed),
        "total_input_tokens": 10 * completed, "total_output_tokens": sum(lens),
        "output_throughput": sum(lens) / duration, "mean_ttft_ms": 1.0,
        "input_lens": [10] * n, "output_lens": lens, "ttfts": ttfts, "itls": itls,
        "latencies": lats, "start_times": starts, "errors": errors,
        "max_concurrent_requests": n,
    }  # fmt: skip


def generated_results_round_trip(folder: Path, doc: dict[str, Any]) -> None:
    path = folder / "result.json"
    path.write_text(json.dumps(doc))
    out = folder / "converted.jsonl"
    convert_file(path, str(out))
    a, b = api.load([path]), api.load([out])
    columns = ["run", "id", "t_send", "t_first", "t_end", "output_tokens", "n_chunks", "ok"]
    left, right = a.requests[columns], b.requests[columns]
    assert left.astype(str).equals(right.astype(str))
    # the native reader keeps chunk times as Arrow lists, absent ones as NA
    times = [np.asarray(t, dtype=float) for t in a.requests["token_times"] if t is not None]
    again = [
        np.asarray(t, dtype=float)
        for t in b.requests["token_times"].to_numpy(dtype=object, na_value=None)
        if t is not None
    ]
    assert len(times) == len(again)
    assert all(np.array_equal(x, y) for x, y in zip(times, again, strict=True))
    # the audit of the tables just read (api.audit would read both files again)
    assert comparable(api.audit_tables(b).to_dict()) == comparable(api.audit_tables(a).to_dict())


#: Generated files per run, in the full lane only: each is a conversion and two audits (the
#: quick lane converts every fixture and a real file of each shape).
@pytest.mark.slow
def test_generated_results_round_trip(tmp_path):
    @settings(max_examples=40, deadline=None)
    @given(doc=vllm_results())
    def round_trips(doc):
        with tempfile.TemporaryDirectory(dir=tmp_path) as folder:
            generated_results_round_trip(Path(folder), doc)

    round_trips()


def test_cli_convert(real, tmp_path):
    out = tmp_path / "x.jsonl"
    src = real("sglang/tonyli15-sglang055-qwen25-3b-agg-n50-c8.jsonl")
    result = CliRunner().invoke(main, ["convert", str(src), "--to", str(out)])
    assert result.exit_code == 0
    assert result.stdout == (f"wrote {out}: 1 record (1 run, 0 requests) from {src} (sglang)\n")
    assert result.stderr == f"{src}: SGLang: 1 run, one a line\n"


def test_cli_convert_bad_input(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"benchmarks": [{"type_": "generative_benchmark"')
    result = CliRunner().invoke(main, ["convert", str(bad), "--to", str(tmp_path / "o.jsonl")])
    assert result.exit_code == 2
    assert result.stderr == (
        f"{bad}:1:49: the JSON document ends early (the file is truncated); expected a complete "
        "JSON document\n"
    )


def test_native_chunk_times_round_trip_with_absent_lists(tmp_path: Path) -> None:
    """A native trace whose chunk times are Arrow lists in the table (some absent, one
    empty) converts to the same lists, and the absent ones stay absent."""
    run = {"kind": "run", "schema": "benchreport/1", "id": "r", "workload": {"concurrency": 1}}
    times: list[list[float] | None] = [[0.1, 0.2], None, [], [1.5]]
    requests = [
        {"kind": "request", "run": "r", "id": str(i), "t_send": i, "t_first": i + 0.1,
         "t_end": i + 2, "output_tokens": 2,
         "token_times": None if t is None else [i + x for x in t]}
        for i, t in enumerate(times)
    ]  # fmt: skip
    lines = [json.dumps(record) for record in [run, *requests]]
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out.jsonl"
    convert_file(src, str(out))
    written = [json.loads(x) for x in out.read_text().splitlines()]
    got = [r.get("token_times") for r in written if r["kind"] == "request"]
    assert got == [None if t is None else [i + x for x in t] for i, t in enumerate(times)]
