"""Server logs (`--server-log`): each line becomes a `log` row, with its level when it has one."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from reporter.errors import Problem, TraceError
from reporter.ingest.limits import read_bytes
from reporter.ingest.lines import text_lines
from reporter.table import LOG_COLUMNS, Tables

# llama-server "0.00.006.389 W srv ...", Python logging "WARNING:", glog "W1129 ...", "[warn]"
_LEVELS = (
    (re.compile(r"\b(ERROR|ERR|FATAL|CRITICAL)\b|^\S*\s+E\s|^E\d{4}\s|\[error\]", re.I), "error"),
    (re.compile(r"\b(WARNING|WARN)\b|^\S*\s+W\s|^W\d{4}\s|\[warn(ing)?\]", re.I), "warning"),
    (re.compile(r"\b(INFO)\b|^\S*\s+I\s|^I\d{4}\s", re.I), "info"),
    (re.compile(r"\bDEBUG\b|^\S*\s+D\s", re.I), "debug"),
)


#: llama.cpp's own prefix: the level letter after the elapsed time (`0.02.746.380 W srv …`),
#: wherever a journald, docker or router prefix puts it, or opening the line when timestamps
#: are off (`W llama_context: …`). The letter decides, not a word of the message.
_LLAMA_CPP = re.compile(
    r"(?:(?<![\d.])\d+\.\d{2}\.\d{3}\.\d{3}\s+|^)([EWID])\s+(?=[A-Za-z_][\w-]*:|srv\b|slot\b|cmn\b)"
)
_LLAMA_CPP_LEVELS = {"E": "error", "W": "warning", "I": "info", "D": "debug"}


def level_of(text: str) -> str | None:
    llama = _LLAMA_CPP.search(text)
    if llama is not None:
        return _LLAMA_CPP_LEVELS[llama.group(1)]
    for pattern, level in _LEVELS:
        if pattern.search(text):
            return level
    return None


def read_server_log(path: Path, tables: Tables) -> pd.DataFrame:
    """The log rows of `tables` plus one row per non-blank line of the log file."""
    try:
        raw = read_bytes(str(path), "server log")
    except OSError as exc:
        raise TraceError(
            [Problem(str(path), None, f"cannot read the server log: {exc.strerror}")]
        ) from None
    text = raw.decode("utf-8", errors="replace")
    runs = tables.runs["run"].astype(str).tolist()
    run = runs[0] if len(runs) == 1 else None
    rows = [
        {
            "run": run,
            "level": level_of(line),
            "text": line.rstrip(),
            "t": None,
            "source_path": str(path),
            "source_line": number,
        }
        for number, line in enumerate(text_lines(text), start=1)
        if line.strip()
    ]
    new = pd.DataFrame(rows, columns=list(LOG_COLUMNS))
    if not len(tables.logs):
        return new
    return pd.concat([tables.logs, new], ignore_index=True)
