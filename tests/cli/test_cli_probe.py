"""`benchreport probe bandwidth`: a small real probe written as schema-valid probe records."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from reporter import api
from reporter.cli import main


@pytest.mark.slow
def test_probe_writes_valid_records(tmp_path):
    out = tmp_path / "probes.jsonl"
    result = CliRunner().invoke(
        main,
        [
            "probe",
            "bandwidth",
            "--max-bytes",
            "256MiB",
            "--passes",
            "1",
            "--threads",
            "2",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["buffer_bytes"] for r in records] == [64 << 20, 128 << 20, 256 << 20]
    assert all(
        r["kind"] == "probe" and r["what"] == "bandwidth" and r["unit"] == "GB/s" for r in records
    )
    assert all(0 < r["value"] < 10_000 for r in records)
    api.validate([out])  # raises on any schema problem
    lines = result.output.splitlines()
    assert lines[1] == "    buffer      GB/s  vs smallest"
    assert lines[2] == "----------- --------- -----------"
    assert lines[3].startswith("    64 MiB")
    assert lines[-1] == f"wrote 3 probe records to {out}"


def test_probe_appends_to_a_trace(tmp_path):
    out = tmp_path / "trace.jsonl"
    out.write_text('{"kind":"run","schema":"benchreport/1","id":"r1"}')
    result = CliRunner().invoke(
        main,
        [
            "probe",
            "bandwidth",
            "--max-bytes",
            "64MiB",
            "--passes",
            "1",
            "--out",
            str(out),
            "--append",
            "--run",
            "r1",
        ],
    )
    assert result.exit_code == 0, result.output
    lines = out.read_text().splitlines()
    assert len(lines) == 2 and json.loads(lines[1])["run"] == "r1"
    api.validate([out])


def test_bad_size_exits_2():
    result = CliRunner().invoke(main, ["probe", "bandwidth", "--max-bytes", "lots"])
    assert result.exit_code == 2
    assert result.output == (
        "--max-bytes: size 'lots': expected a number of bytes or e.g. 256MiB, 4GiB, 1GB\n"
    )
