"""The trace file: one JSON object per line, each written whole and at once.

Every record goes out in a single ``write(2)`` on a file opened with ``O_APPEND``, so a line
is either entirely in the file or not at all: after a SIGKILL every line already written
parses. Nothing is buffered in the process, so nothing finished is lost with it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson

from reporter.errors import UsageError


class TraceWriter:
    """Appends records to a JSON Lines file; ``fsync`` optional (power loss, not SIGKILL)."""

    def __init__(self, path: str | Path, *, append: bool = False, fsync: bool = False) -> None:
        self.path = Path(path)
        self.fsync = fsync
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND
        if not append:
            flags |= os.O_EXCL
        try:
            self.fd: int | None = os.open(self.path, flags, 0o644)
        except FileExistsError:
            raise UsageError(
                f"{self.path}: the file exists; expected a new path, or --append to add to it"
            ) from None
        except OSError as exc:
            raise UsageError(f"{self.path}: cannot write the trace: {exc.strerror}") from None
        self.lines = 0
        if append and self.path.stat().st_size:
            # a previous writer killed mid-line would leave a partial line: start a fresh one
            with self.path.open("rb") as f:
                f.seek(-1, os.SEEK_END)
                if f.read(1) != b"\n":
                    os.write(self.fd, b"\n")

    def write(self, record: dict[str, Any]) -> None:
        if self.fd is None:
            raise ValueError("the trace file is closed")
        data = orjson.dumps(record, option=orjson.OPT_SERIALIZE_NUMPY) + b"\n"
        view = memoryview(data)
        while view:
            written = os.write(self.fd, view)
            view = view[written:]
        if self.fsync:
            os.fsync(self.fd)
        self.lines += 1

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def __enter__(self) -> TraceWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
