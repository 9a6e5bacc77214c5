"""Shared by the adapter tests: where the real files are, and small helpers."""

from __future__ import annotations

import copy
import functools
from pathlib import Path
from typing import Any

import pytest

from reporter import api, metrics
from reporter.errors import BenchreportError
from reporter.table import Tables

#: Real result files of the tools, read in place (never copied into the repository).
REAL = Path(__file__).resolve().parents[2] / ".." / "shared" / "real-traces"
#: Small files written for the formats that have no public real file.
HERE = Path(__file__).resolve().parents[1] / "fixtures" / "adapters"


@pytest.fixture
def real() -> Any:
    """`real("vllm/x.json")` → the path of a real file; skips when the folder is absent."""
    if not REAL.is_dir():
        pytest.skip("../shared/real-traces is absent")

    def path(name: str) -> Path:
        return REAL / name

    return path


@functools.cache
def _audited_alone(path: Path) -> dict[str, Any] | None:
    try:
        return api.audit([path]).to_dict()
    except BenchreportError:
        return None


def audited_alone(path: Path) -> dict[str, Any] | None:
    """`api.audit([path])` as a JSON dict, None when the file is refused; each file is audited
    once per session (the CLI sweep over the real files and the convert round trip share it)."""
    verdict = _audited_alone(Path(path))
    return copy.deepcopy(verdict)


def stats_of(tables: Tables) -> Any:
    """The recomputed per-run figures (reporter.metrics.run_stats), indexed by run id."""
    return metrics.run_stats(tables)


def load(path: Path | str, fmt: str = "auto", **options: Any) -> Tables:
    return api.load([path], fmt, options=options or None)


def run(tables: Tables, run_id: str | None = None) -> dict[str, Any]:
    """One run row as a dict (the only run when no id is given)."""
    runs = tables.runs
    if run_id is None:
        assert len(runs) == 1, list(runs["run"])
        return dict(runs.iloc[0])
    return dict(runs[runs["run"] == run_id].iloc[0])
