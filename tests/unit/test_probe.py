"""reporter.probe: sizes, parsing, and one small real measurement (no timing asserted)."""

from __future__ import annotations

import pytest

from reporter import probe
from reporter.errors import UsageError

MIB = 1 << 20


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("256MiB", 256 * MIB),
        ("256M", 256 * MIB),
        ("1GB", 10**9),
        ("4GiB", 4 << 30),
        ("1.5GiB", int(1.5 * (1 << 30))),
        ("1048576", 1 << 20),
        ("512 KiB", 512 << 10),
    ],
)
def test_parse_size(text, value):
    assert probe.parse_size(text) == value


def test_parse_size_rejects_words():
    with pytest.raises(UsageError, match="expected a number of bytes"):
        probe.parse_size("lots")


def test_sizes_double_up_to_the_limit():
    assert probe.sizes(256 * MIB) == [64 * MIB, 128 * MIB, 256 * MIB]
    assert probe.sizes(400 * MIB) == [64 * MIB, 128 * MIB, 256 * MIB, 400 * MIB]
    with pytest.raises(UsageError):
        probe.sizes(16 * MIB)


def test_available_bytes_reads_meminfo(tmp_path):
    f = tmp_path / "meminfo"
    f.write_text("MemTotal: 100 kB\nMemAvailable:   2048 kB\n")
    assert probe.available_bytes(f) == 2048 * 1024
    assert probe.available_bytes(tmp_path / "absent") is None


def test_read_rate_is_positive_and_a_record():
    result = probe.read_rate(8 * MIB, passes=2, threads=2)
    assert result.buffer_bytes == 8 * MIB
    assert 0.05 < result.gbps < 10_000
    rec = result.record("r1")
    assert rec["kind"] == "probe" and rec["what"] == "bandwidth" and rec["unit"] == "GB/s"
    assert rec["run"] == "r1" and rec["buffer_bytes"] == 8 * MIB


def test_write_records_writes_and_appends_probe_lines(tmp_path):
    import json

    results = [
        probe.ProbeResult(1 << 26, 20.5, 0.01, 5, 2),
        probe.ProbeResult(1 << 27, 18.25, 0.02, 5, 2),
    ]
    trace = tmp_path / "trace.jsonl"
    trace.write_text('{"kind":"run","schema":"benchreport/1","id":"r1"}', encoding="utf-8")
    probe.write_records(trace, results, run_id="r1", append=True)
    lines = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    assert [r["kind"] for r in lines] == ["run", "probe", "probe"]  # a newline was added first
    assert [(r["value"], r["buffer_bytes"], r["run"]) for r in lines[1:]] == [
        (20.5, 1 << 26, "r1"),
        (18.25, 1 << 27, "r1"),
    ]
    probe.write_records(trace, results[:1])  # without append: replaced
    assert len(trace.read_text(encoding="utf-8").splitlines()) == 1
