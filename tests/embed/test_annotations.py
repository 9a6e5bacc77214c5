"""`--output-format github` and `concise`: one line a fired finding, on the line it cites."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from embed_helpers import HOSTILE_ID, ROOT

from reporter.findings import Finding
from reporter.render.annotations import (
    escape_data,
    escape_property,
    place,
    render_concise,
    render_github,
)
from reporter.types import Outcome, Severity
from reporter.verdict import Verdict

# A workflow command as the runner parses it: the command, properties, `::`, the message.
COMMAND = re.compile(r"::(error|warning|notice) ((?:[a-z]+=[^,:]*)(?:,[a-z]+=[^,:]*)*)::(.*)")


def _unescape(text: str) -> str:
    """What the runner makes of an escaped value (its own order: the escapes, then %)."""
    for coded, char in (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%")):
        text = text.replace(coded, char)
    return text


def _parse(line: str) -> tuple[str, dict[str, str], str]:
    m = COMMAND.fullmatch(line)
    assert m is not None, line
    props = dict(p.split("=", 1) for p in m.group(2).split(","))
    return m.group(1), {k: _unescape(v) for k, v in props.items()}, _unescape(m.group(3))


def test_escaping_follows_the_runners_rules() -> None:
    assert escape_data("50% a\r\nb") == "50%25 a%0D%0Ab"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    # an already escaped sequence is escaped again, so it reads back as written
    assert _unescape(escape_data("%0A")) == "%0A"
    assert _unescape(escape_property("x::y,%2C")) == "x::y,%2C"


def test_each_fired_finding_is_one_command_on_its_cited_line(
    audited: Callable[[str], Verdict],
) -> None:
    verdict = audited("ladder")
    lines = render_github(verdict).splitlines()
    fired = verdict.fired()
    assert len(lines) == len(fired) > 0
    parsed = [_parse(line) for line in lines]
    # BR003 on the serial runs, at the first request line of each ladder
    serial = sorted(
        (p["line"], m) for kind, p, m in parsed if p["title"] == "BR003 serial-completion-ladder"
    )
    assert [line for line, _ in serial] == ["4", "7"]
    assert all(p["file"] == "traces/case-a-ladder.jsonl" for _, p, _ in parsed)
    assert {kind for kind, _, _ in parsed} == {"error", "warning", "notice"}
    by_code = {p["title"].split()[0]: kind for kind, p, _ in parsed}
    assert by_code["BR003"] == "error" and by_code["BR009"] == "warning"
    assert by_code["BR016"] == "notice"
    # the inflated claim is cited at the claim's line
    claim = next((p, m) for _, p, m in parsed if p["title"].startswith("BR001") and "a-350" in m)
    assert claim[0]["line"] == "11"
    assert "3.85× lower" in claim[1]


def test_concise_is_path_line_code_message(audited: Callable[[str], Verdict]) -> None:
    verdict = audited("ladder")
    lines = render_concise(verdict).splitlines()
    assert len(lines) == len(verdict.fired())
    assert "traces/case-a-ladder.jsonl:4: BR003 a-retest-n2: requests decoded one at a time" in (
        render_concise(verdict)
    )
    for line in lines:
        assert re.match(r"traces/case-a-ladder\.jsonl:\d+: BR\d{3} \S", line), line


def test_an_audit_where_nothing_fired_prints_nothing() -> None:
    from reporter import api

    # the honest sweep overlaps: the ladder rule passes on every run
    verdict = api.audit([str(ROOT / "traces" / "honest-batched.jsonl")], select=["BR003"])
    assert verdict.findings and not verdict.fired()
    assert render_github(verdict) == "" and render_concise(verdict) == ""


def test_a_hostile_run_id_stays_inside_its_one_command(audited: Callable[[str], Verdict]) -> None:
    verdict = audited("hostile")
    out = render_github(verdict)
    lines = out.splitlines()
    assert len(lines) == len(verdict.fired())
    assert not re.search(r"[\x00-\x09\x0b-\x1f\x7f\u202e]", out)  # nothing but the newlines
    for line in lines:
        _, props, _ = _parse(line)  # fails on an injected property or command
        assert set(props) == {"file", "line", "title"}
        assert props["file"].endswith("ladder-hostile.jsonl")
    serial = [_parse(x) for x in lines if "title=BR003 " in x]
    assert [p["line"] for _, p, _ in serial] == ["4", "7"]
    message = next(m for _, _, m in serial if m.startswith("=cmd"))
    # the id reads back as its visible form: controls escaped, the %0A written as text
    assert "\\r\\n::error file=evil.py,line=1::pwned %0A a:b,c \\x1b]0;title\\x07" in message
    assert "\\u202egnp.exe <script>alert(1)</script>" in message
    concise = render_concise(verdict)
    assert len(concise.splitlines()) == len(lines)
    assert "\x1b" not in concise and "\r" not in concise and "\u202e" not in concise
    assert HOSTILE_ID not in concise


def _finding(refs: list[str]) -> Finding:
    return Finding("BR016", "single-run", Severity.INFO, Outcome.FIRED, "g", "m", refs=refs)


@pytest.mark.parametrize(
    ("refs", "fallback", "expected"),
    [
        (["a/b.jsonl:12", "a/b.jsonl:3"], "x", ("a/b.jsonl", 12)),
        (["C:/w/b.csv:7"], None, ("C:/w/b.csv", 7)),
        (["run.json"], "x", ("run.json", None)),
        ([], "first.jsonl", ("first.jsonl", None)),
    ],
)
def test_the_place_of_a_finding(
    refs: list[str], fallback: str | None, expected: tuple[str, int | None]
) -> None:
    where = place(_finding(refs), fallback)
    assert where is not None and (where.path, where.line) == expected


def test_a_finding_without_any_file_has_no_place() -> None:
    assert place(_finding([]), None) is None
