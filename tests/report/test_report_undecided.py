"""Every check shows its arithmetic in every output: a fired finding's, and that of a check that
could not decide or passed, whose bound or figures are there for the reader to check too."""

from __future__ import annotations

from reporter.render.context import build_context
from reporter.render.html import render_html_context
from reporter.render.markdown import render_markdown
from reporter.render.text import render_text
from reporter.types import Outcome
from reporter.verdict import Verdict

#: BR017 on the shipped traces audited together: two pairs of runs differ in context, and in
#: their answers' lengths too, so it cannot put the decode change on context.
BR017_STEPS = (
    "decode at context 608 tokens: 40.9 tok/s; 5,890 tokens: 42.0 tok/s (runs b-long-n8, "
    "b-natural-n8); not put on context: natural-stop answers of 60.8 and 160.0 tokens a request",
    "decode at context 296 tokens: 52.5 tok/s; 608 tokens: 40.8 tok/s (runs b-natural-n16, "
    "b-queue-n16); not put on context: natural-stop answers of 218.3 and 56.6 tokens a request",
)
#: BR008 on b-queue-n16: no prefill rate, but the first-token windows bound prompt processing.
BR008_STEP = (
    "every prompt was processed between its request's send and its first token: the union of "
    "those windows is 4.75 s of the 8.70 s wall = 55% (the last first token came 4.75 s after "
    "the first send)"
)
#: BR001 passed on b-code-spec-off-n8.
BR001_PASSED = (
    "Σ reported_tps over 8 requests = 203.8 tok/s",
    "total ÷ wall = 4,096 ÷ 20.50 s = 199.8 tok/s",
)


def test_the_audit_has_undecided_checks_with_arithmetic(traces_audited: Verdict) -> None:
    undecided = {
        (f.code, f.subject): f.arithmetic
        for f in traces_audited.findings
        if f.outcome is Outcome.UNDECIDABLE
    }
    assert undecided[("BR017", "audit")] == list(BR017_STEPS)
    assert undecided[("BR008", "b-queue-n16")] == [BR008_STEP]


def test_html_shows_the_arithmetic_of_undecided_and_passed_checks(traces_audited: Verdict) -> None:
    html = render_html_context(build_context(traces_audited, charts=False))
    undecided = html.split("<h3>Could not decide")[1].split("<details")[0]
    steps = "".join(f"<li><bdi>{s}</bdi></li>" for s in BR017_STEPS)
    assert f'<ul class="arith">{steps}</ul></td></tr>' in undecided
    # escaped as every trace-derived string is (the apostrophe)
    assert f"<li><bdi>{BR008_STEP.replace(chr(39), '&#39;')}</bdi></li>" in undecided
    passed = html.split("<h3>Passed or not applicable")[1].split("</details>")[0]
    steps = "".join(f"<li><bdi>{s}</bdi></li>" for s in BR001_PASSED)
    assert f'<ul class="arith">{steps}<li><bdi>203.8 ÷ 199.8 = 1.02×</bdi></li></ul>' in passed


def test_markdown_lists_undecided_checks_with_their_arithmetic(traces_audited: Verdict) -> None:
    md = render_markdown(traces_audited)
    lines = md.splitlines()
    start = lines.index("**Could not decide** (53; 51 more in the HTML report)")
    br017 = lines[start + 2]
    assert br017.startswith("- **BR017** context-undisclosed \\[audit\\]: decode is 52.5 tok/s")
    steps = " · ".join(s.replace("(", "\\(").replace(")", "\\)") for s in BR017_STEPS)
    assert br017.endswith(f"; arithmetic: {steps}")
    assert lines[start + 1].endswith(
        "; arithmetic: " + BR008_STEP.replace("(", "\\(").replace(")", "\\)")
    )
    assert len(lines) <= 60, "the Markdown summary is meant for a pull-request comment"


def test_markdown_gives_fired_findings_their_arithmetic(traces_audited: Verdict) -> None:
    """A pull-request comment can be checked without the HTML report: each fired rule's line
    carries the quoted finding's steps."""
    lines = render_markdown(traces_audited).splitlines()
    br003 = next(line for line in lines if line.startswith("- **BR003** "))
    assert "at a-new-cb8-c2: requests decoded one at a time" in br003
    assert br003.endswith(
        "; arithmetic: overlap = Σ decode time ÷ union of decode intervals = 1.00 \\(1.0 = one at "
        "a time; 2 requests\\) · completions \\(s from the first send\\): 5.9, 11.7 · mean step = "
        "last completion ÷ N = 11.74 ÷ 2 = 5.87 s; one request alone \\(run a-new-cb8-c1\\): 5.91 s"
    )
    fired = lines[lines.index(next(x for x in lines if x.startswith("**Findings**"))) + 1 :]
    fired = [x for x in fired[: fired.index("- … and 47 more in the HTML report")] if x]
    assert len(fired) == 8
    # BR006's finding is its message (lengths from the file): the one line without steps
    assert [x[:11] for x in fired if "; arithmetic: " not in x] == ["- **BR006**"]


def test_terminal_prints_the_arithmetic_under_an_undecided_check(traces_audited: Verdict) -> None:
    text = render_text(traces_audited, verbose=True).splitlines()
    at = next(k for k, line in enumerate(text) if line.startswith("  BR017 context-undisclosed"))
    assert text[at + 1 : at + 3] == [f"      {s}" for s in BR017_STEPS]
