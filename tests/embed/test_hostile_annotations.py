"""The line formats on the regression files of ../shared/hostile that audit (the refused
ones print nothing to annotate): each fired finding stays one workflow command whose
properties and message read back whole, with no control or bidi character left raw."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from embed_helpers import ROOT

from reporter import api
from reporter.errors import BenchreportError
from reporter.render.annotations import render_concise, render_github

HOSTILE = ROOT / ".." / "shared" / "hostile"
# the README's runs that end in an audit: plain, or --lenient
PLAIN = ("inject01-*.jsonl", "inject02-*.jsonl", "wrong04-*.json", "wrong05-*.jsonl",
         "tb-run-without-requests.jsonl", "tb02-*.csv", "tb07-*.csv")  # fmt: skip
LENIENT = ("tb01-*.jsonl", "tb04-*.jsonl", "tb08-*.json", "tb10-*.json", "tb12-*.json")
COMMAND = re.compile(r"::(error|warning|notice) file=[^,:]*(,line=\d+)?,title=[^,:]*::.*")
RAW = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2066-\u2069]")


def _cases() -> list[tuple[Path, bool]]:
    if not HOSTILE.is_dir():
        return []
    return [(p, False) for g in PLAIN for p in sorted(HOSTILE.glob(g))] + [
        (p, True) for g in LENIENT for p in sorted(HOSTILE.glob(g))
    ]


@pytest.mark.skipif(not HOSTILE.is_dir(), reason="../shared/hostile is absent")
@pytest.mark.parametrize(("path", "lenient"), _cases(), ids=lambda v: getattr(v, "name", str(v)))
def test_hostile_files_give_one_clean_command_per_finding(path: Path, lenient: bool) -> None:
    try:
        verdict = api.audit([str(path)], lenient=lenient)
    except BenchreportError:
        return  # a clean refusal: nothing fired, nothing to annotate (the hostile suite checks it)
    fired = len(verdict.fired())
    if path.name.startswith("inject"):
        assert fired > 0  # the injection files fire findings about their hostile runs
    github, concise = render_github(verdict), render_concise(verdict)
    for text in (github, concise):
        assert text.count("\n") == fired
        assert not RAW.search(text.replace("\n", ""))
    for line in github.splitlines():
        assert COMMAND.fullmatch(line), line[:300]
