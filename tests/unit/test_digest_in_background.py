"""A file's sha256 is worked out on a worker thread, started when a core is free: by the
native reader after its parse (on the fast path and the line-by-line one), by api.read_file
for the other formats. Whenever it starts, the digest is the file's."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from reporter import api
from reporter.ingest import lines

TRACES = Path(__file__).resolve().parents[2] / "traces"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "adapters"


def _broken(tmp_path: Path) -> Path:
    """A shipped trace with one line pyarrow cannot parse: read line by line, leniently."""
    text = (TRACES / "case-a-ladder.jsonl").read_bytes()
    path = tmp_path / "broken.jsonl"
    path.write_bytes(text + b'{"kind":"request", oops}\n')
    return path


@pytest.mark.parametrize(
    "make",
    [
        lambda tmp: TRACES / "case-a-ladder.jsonl",
        _broken,
        lambda tmp: Path(shutil.copy(FIXTURES / "vllm-2026-save-detailed-c2.json", tmp)),
    ],
    ids=["native", "native line by line", "vllm"],
)
def test_the_digest_is_the_files_whenever_it_starts(
    make: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert callable(make)
    path = make(tmp_path)
    want = hashlib.sha256(path.read_bytes()).hexdigest()
    started: list[str] = []
    hash_later = lines._hash_later

    def spy(data: bytes) -> object:
        started.append(hashlib.sha256(data).hexdigest())
        return hash_later(data)

    monkeypatch.setattr(lines, "HASH_LATER_BYTES", 0)  # every file, however small
    monkeypatch.setattr(lines, "_hash_later", spy)
    partial = api.read_file(path, lenient=True)
    assert partial.input is not None
    assert partial.input.sha256 == want
    assert started == [want]  # on the worker thread, once
