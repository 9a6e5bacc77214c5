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
