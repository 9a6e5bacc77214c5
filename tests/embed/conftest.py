"""Fixtures of the tests of what an audit is attached to (a pull request, a blog post):
audits of the shipped traces and of a copy of a trace whose run id is hostile."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from embed_helpers import HOSTILE_GROUP, HOSTILE_ID, ROOT

from reporter import api
from reporter.verdict import Verdict

TRACES = ROOT / "traces"
REPORT_FIXTURES = ROOT / "tests" / "fixtures" / "report"
#: What case-a-ladder.jsonl's copy renames: a serial run (so BR003 fires on it), its group.
RENAMED = {"a-retest-n2": HOSTILE_ID, "case-a-retest": HOSTILE_GROUP}


def _rename(value: object) -> object:
    if isinstance(value, dict):
        return {k: _rename(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rename(v) for v in value]
    return RENAMED.get(value, value) if isinstance(value, str) else value


@pytest.fixture(scope="session")
def hostile_trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """case-a-ladder.jsonl with run a-retest-n2 and its group renamed, line for line."""
    out = tmp_path_factory.mktemp("hostile") / "ladder-hostile.jsonl"
    lines = (TRACES / "case-a-ladder.jsonl").read_text(encoding="utf-8").splitlines()
    renamed = [json.dumps(_rename(json.loads(line)), ensure_ascii=True) for line in lines]
    out.write_text("\n".join(renamed) + "\n", encoding="utf-8")
    return out


@pytest.fixture(scope="session")
def audited(hostile_trace: Path) -> Callable[[str], Verdict]:
    """An audit by name, cached: "traces" (every shipped trace, relative paths as the
    README runs them), "pair" (case A's ladder and case B's queue: two inflated claims),
    "ladder", "honest", "hostile" (the renamed copy), "report-hostile"."""
    cache: dict[str, Verdict] = {}
    paths: dict[str, list[str]] = {
        "traces": sorted(f"traces/{p.name}" for p in TRACES.glob("*.jsonl")),
        "pair": ["traces/case-a-ladder.jsonl", "traces/case-b-queue.jsonl"],
        "ladder": ["traces/case-a-ladder.jsonl"],
        "honest": ["traces/honest-batched.jsonl"],
        "hostile": [str(hostile_trace)],
        "report-hostile": [str(REPORT_FIXTURES / "hostile.jsonl")],
    }

    def get(name: str) -> Verdict:
        if name not in cache:
            with pytest.MonkeyPatch.context() as mp:
                mp.chdir(ROOT)
                cache[name] = api.audit(paths[name])
        return cache[name]

    return get
