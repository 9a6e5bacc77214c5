"""A large file is read into huge-page-backed memory (limits._read_into_huge_pages): the
bytes must be the file's, whatever its size, and a file that ends sooner than its stated
size gives what it holds."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from reporter.ingest import limits


@pytest.mark.parametrize("size", [0, 1, 4095, limits.HUGE_PAGE - 1, 3 * limits.HUGE_PAGE + 17])
def test_read_bytes_is_the_file(tmp_path: Path, size: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "HUGE_READ_BYTES", 1)  # every size through the huge-page read
    path = tmp_path / "trace.jsonl"
    content = os.urandom(size)
    path.write_bytes(content)
    data = limits.read_bytes(str(path), "trace")
    assert type(data) is bytes
    assert data == content


def test_large_file_default_threshold(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    content = os.urandom(limits.HUGE_READ_BYTES + 12345)
    path.write_bytes(content)
    assert limits.read_bytes(str(path), "trace") == content


def test_shorter_than_stated() -> None:
    content = b'{"kind":"request"}\n' * 1000
    data = limits._read_into_huge_pages(io.BytesIO(content), len(content) + 5000)
    if data is None:
        pytest.skip("no huge-page read on this platform")
    assert type(data) is bytes
    assert data == content


def test_stops_at_the_stated_size() -> None:
    content = b"x" * 10_000
    data = limits._read_into_huge_pages(io.BytesIO(content), 4096)
    if data is None:
        pytest.skip("no huge-page read on this platform")
    assert data == content[:4096]


def test_bytes_are_usable_and_hashable() -> None:
    content = b"abc\n" * 5000
    data = limits._read_into_huge_pages(io.BytesIO(content), len(content))
    if data is None:
        pytest.skip("no huge-page read on this platform")
    assert hash(data) == hash(content)
    assert {data: 1}[content] == 1


@pytest.mark.parametrize("size", [0, 1, 4095, 2 * limits.HUGE_PAGE, 3 * limits.HUGE_PAGE + 17])
def test_read_by_two_threads_is_the_file(
    tmp_path: Path, size: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A large file's halves are read by two threads: the bytes are the file's, in order."""
    monkeypatch.setattr(limits, "HUGE_READ_BYTES", 1)
    monkeypatch.setattr(limits, "PARALLEL_READ_BYTES", 1)
    path = tmp_path / "trace.jsonl"
    content = os.urandom(size)
    path.write_bytes(content)
    assert limits.read_bytes(str(path), "trace") == content


@pytest.mark.parametrize(
    ("held", "stated"),
    [(100, 4 * limits.HUGE_PAGE), (3 * limits.HUGE_PAGE, 3 * limits.HUGE_PAGE + 5000)],
)
def test_two_threads_shorter_than_stated(
    tmp_path: Path, held: int, stated: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file that ends before its stated size, within the first half or the second, gives
    what it holds, and is left just after it."""
    monkeypatch.setattr(limits, "PARALLEL_READ_BYTES", 1)
    path = tmp_path / "trace.jsonl"
    content = os.urandom(held)
    path.write_bytes(content)
    with path.open("rb", buffering=0) as f:
        data = limits._read_into_huge_pages(f, stated)
        if data is None:
            pytest.skip("no huge-page read on this platform")
        assert data == content
        assert f.tell() == held
