"""The shipped example traces are exactly what scripts/make_traces.py writes."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from tests.conftest import ROOT, TRACES


def test_shipped_traces_are_not_stale(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = importlib.util.spec_from_file_location(
        "make_traces", ROOT / "scripts" / "make_traces.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "OUT", tmp_path)
    module.main()
    written = sorted(p.name for p in tmp_path.glob("*.jsonl"))
    assert written == sorted(p.name for p in TRACES.glob("*.jsonl"))
    for name in written:
        assert (tmp_path / name).read_bytes() == (TRACES / name).read_bytes(), (
            f"traces/{name} is stale: run python scripts/make_traces.py"
        )
