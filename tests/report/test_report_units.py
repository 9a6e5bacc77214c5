"""Units of the report: text made safe, numbers, Markdown escaping, SVG checks, rule pages."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path

import altair as alt
import pytest

from reporter import api
from reporter.errors import RenderError
from reporter.findings import Finding
from reporter.render.charts import to_svg, wall_split_chart
from reporter.render.context import (
    DocBlock,
    Span,
    build_context,
    doc_blocks,
    num,
    rerun_command,
    run_view,
    shown,
    value_text,
)
from reporter.render.drawing import draw_charts
from reporter.render.markdown import fenced, md_text
from reporter.render.svgcheck import check_svg
from reporter.types import Outcome, Severity
from reporter.verdict import Verdict

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("run-1", "run-1"),
        ("evil\u202egnp.exe", "evil<U+202E>gnp.exe"),
        ("a\u2066b\u2069c\u200bd", "a<U+2066>b<U+2069>c<U+200B>d"),
        ("line\nbreak\r\n\tand tab", "line break and tab"),
        ("nul\x00bell\x07", "nul<U+0000>bell<U+0007>"),
        ("x" * 200, "x" * 159 + "… (200 characters)"),
        (None, ""),
        (42, "42"),
    ],
)
def test_shown(raw: object, expected: str) -> None:
    assert shown(raw) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, "—"),
        (True, "yes"),
        (2048, "2,048"),
        (512.0, "512"),
        (91.0222, "91.022"),
        (0.5, "0.5"),
        (1849000000.5, "1,849,000,000.5"),
        (0.000123, "0.000123"),
        (float("nan"), "n/a"),
        ([5.5, 11.1], "5.5, 11.1"),
        (list(range(10)), "0, 1, 2, 3, 4, 5, 6, 7, … (10 in all)"),
        ("<b>", "<b>"),
    ],
)
def test_value_text(value: object, expected: str) -> None:
    assert value_text(value) == expected


def test_num() -> None:
    assert num(91.0222) == "91.0"
    assert num(2048, 0, " tokens") == "2,048 tokens"
    assert num(None) == "n/a"
    assert num(float("inf")) == "n/a"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("plain run-1.a", "plain run-1.a"),
        ("a|b", "a\\|b"),
        ("<script>", "\\<script\\>"),
        ("[x](javascript:alert(1))", "\\[x\\]\\(javascript:alert\\(1\\)\\)"),
        ("![i](http://e.invalid/i.png)", "\\!\\[i\\]\\(http:\u200d//e.invalid/i.png\\)"),
        (
            "see http://e.invalid and www.e.invalid",
            "see http:\u200d//e.invalid and www\u200d.e.invalid",
        ),
        ("mail a@b.invalid", "mail a@\u200db.invalid"),
        ("`tick` *b* _u_ ~s~ #h", "\\`tick\\` \\*b\\* \\_u\\_ \\~s\\~ \\#\u200dh"),
        ("&lt; $x$", "\\&lt; \\$x\\$"),
        ("back\\slash", "back\\\\slash"),
        ("two\nlines", "two lines"),
        (": ", ": "),
    ],
)
def test_md_text(raw: str, expected: str) -> None:
    assert md_text(raw) == expected


def test_fence_is_longer_than_any_backtick_run() -> None:
    assert fenced("benchreport audit a```b.jsonl", "````") == (
        "````\nbenchreport audit a```b.jsonl\n````"
    )


def test_rerun_command_quotes_paths(fixture_verdicts: Callable[[str], Verdict]) -> None:
    verdict = fixture_verdicts("ladder.jsonl")
    assert rerun_command(verdict, None) == "benchreport audit tests/fixtures/report/ladder.jsonl"
    assert rerun_command(verdict, "benchreport audit\nx") == "benchreport audit x"


def test_doc_blocks() -> None:
    summary, blocks = doc_blocks(
        "One line.\n\n## What it checks\nThe `overlap` of\nrequests.\n\n- one\n  more\n- two\n"
        "\n```\nA(4) ÷ A(1)\n```\n"
    )
    assert summary == "One line."
    assert blocks == [
        DocBlock("heading", spans=[Span("What it checks")]),
        DocBlock("para", spans=[Span("The "), Span("overlap", code=True), Span(" of requests.")]),
        DocBlock("list", items=[[Span("one more")], [Span("two")]]),
        DocBlock("code", text="A(4) ÷ A(1)"),
    ]


SVG = '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">{}</svg>'


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("<script>alert(1)</script>", "chart c: refused element <script> in the SVG"),
        ('<image href="http://e.invalid/i.png"/>', "chart c: refused element <image> in the SVG"),
        ("<foreignObject/>", "chart c: refused element <foreignObject> in the SVG"),
        ('<g onload="alert(1)"/>', "chart c: refused attribute onload in the SVG"),
        ('<g style="fill:red"/>', "chart c: refused attribute style in the SVG"),
        ('<path xlink:href="http://e.invalid/"/>', "chart c: refused attribute href in the SVG"),
        ('<rect fill="url(http://x/)"/>', "chart c: refused reference 'url(http://x/)' in the SVG"),
        ("<style>@import 'x';</style>", "chart c: refused element <style> in the SVG"),
    ],
)  # fmt: skip
def test_check_svg_refuses(body: str, message: str) -> None:
    with pytest.raises(RenderError) as exc:
        check_svg(SVG.format(body), "c")
    assert str(exc.value) == message


def test_check_svg_accepts_local_references() -> None:
    check_svg(
        SVG.format('<defs><clipPath id="c-1"><rect/></clipPath></defs><g clip-path="url(#c-1)"/>')
    )


def test_to_svg_renames_ids_the_same_way_each_time() -> None:
    spec = (
        alt.Chart(alt.InlineData(values=[{"x": 1, "y": 2}, {"x": 2, "y": 3}]))
        .mark_line(clip=True)
        .encode(x="x:Q", y=alt.Y("y:Q", scale=alt.Scale(domain=[0, 2])))
        .to_dict()
    )
    first, second = to_svg(spec, "demo"), to_svg(spec, "demo")
    assert first == second
    assert 'id="demo-1"' in first and 'clip-path="url(#demo-1)"' in first


@pytest.mark.slow
def test_charts_of_a_sweep(fixture_verdicts: Callable[[str], Verdict]) -> None:
    drawn = draw_charts(fixture_verdicts("batched.jsonl"))
    assert [c.id for c in drawn.overview] == ["scaling-1", "wall-split"]
    assert [c.id for c in drawn.runs] == ["run-1", "run-2", "run-3", "run-4"]
    assert drawn.overview[0].caption == (
        "Measured aggregate (tokens ÷ wall) at N = 1, 2, 4, 8: 132.5 → 605.3 tok/s, 4.57× for 8× "
        "the concurrency. Ideal scaling multiplies the N=1 figure by N; a serial server stays flat."
    )
    assert drawn.runs[3].caption.endswith("each taking the N=1 run batched-n1 takes 3.86 s).")
    assert drawn.notes == []


def test_bandwidth_from_the_rule_findings(fixture_verdicts: Callable[[str], Verdict]) -> None:
    verdict = fixture_verdicts("ladder.jsonl")
    ceiling = Finding(
        "BR015", "bandwidth-ceiling", Severity.INFO, Outcome.FIRED, "case-a-n1", "near the ceiling",
        numbers={"utilization_low": 0.57, "utilization_high": 0.68, "achieved_gbps": 181.0},
    )  # fmt: skip
    others = [f for f in verdict.findings if f.code != "BR015"]
    drawn = draw_charts(dataclasses.replace(verdict, findings=[*others, ceiling]))
    chart = next(c for c in drawn.overview if c.id == "bandwidth")
    assert "from BR015 findings" in chart.caption
    assert ">case-a-n1</text>" in chart.svg
    assert ">case-a-n2</text>" not in chart.svg


def test_bandwidth_from_the_run_records(fixture_verdicts: Callable[[str], Verdict]) -> None:
    verdict = fixture_verdicts("ladder.jsonl")
    plain = dataclasses.replace(
        verdict, findings=[f for f in verdict.findings if f.code != "BR015"]
    )
    chart = next(c for c in draw_charts(plain).overview if c.id == "bandwidth")
    assert "from the run records: median decode rate × bytes per token" in chart.caption
    assert ">case-a-n4</text>" in chart.svg


def test_markdown_context_draws_no_chart(fixture_verdicts: Callable[[str], Verdict]) -> None:
    context = build_context(fixture_verdicts("ladder.jsonl"), charts=False)
    assert context.charts == [] and context.run_charts == []
    assert context.equation == "4 × 512 tokens ÷ 22.50 s = 91.0 tok/s; claimed 350 = 3.85×"
    assert context.headline == "Claim blog-350: claimed 350.0 is 3.85× the recomputed 91.0"


def test_doc_blocks_read_commonmark() -> None:
    # numbered items keep their numbers, raw HTML stays text, emphasis keeps its asterisks
    _, blocks = doc_blocks("S\n\n1. first *step*\n2. <b>second</b>\n\nThen:\n\n    indented code\n")
    assert blocks == [
        DocBlock("list", items=[[Span("1. "), Span("first *step*")],
                                [Span("2. "), Span("<b>second</b>")]]),
        DocBlock("para", spans=[Span("Then:")]),
        DocBlock("code", text="indented code"),
    ]  # fmt: skip


def test_a_label_limit_is_dropped_only_where_no_label_could_be_cut() -> None:
    from reporter.render import charts

    # 11 px labels, at most 1.1 em a character: 14 characters stay under 180 px
    assert charts._label_limit(["0", "1,000", "a-retest-n1"]) == 0
    assert charts._label_limit(["x" * 14]) == 0
    assert charts._label_limit(["x" * 15]) == charts.AXIS_LABEL_LIMIT
    # a character outside ASCII (a wide glyph, a fallback font) or a control keeps the limit
    assert charts._label_limit(["run ﷽"], 220) == 220
    assert charts._label_limit(["run\u200b1"], 220) == 220
    assert charts._label_limit(["a\tb"], 220) == 220
    assert charts._legend(["decode and the rest"]).to_dict() == {"labelLimit": 0}


def test_a_numeric_axis_keeps_its_label_limit_when_a_tick_label_could_be_long() -> None:
    from reporter.render import charts

    # seconds, tokens per second, percentages: short labels, no limit needed
    assert charts._numbers_limit(6.2) == 0
    assert charts._numbers_limit(4_703.28) == 0
    assert charts._numbers_limit(110.0) == 0
    # a tiny span has many decimals, a huge one many digits: the limit stays
    assert charts._numbers_limit(1e-9) == 0  # "0.0000000020": 12 characters still fit
    assert charts._numbers_limit(1e-13) == charts.AXIS_LABEL_LIMIT
    assert charts._numbers_limit(1e15) == charts.AXIS_LABEL_LIMIT
    assert charts._numbers_limit(float("nan")) == charts.AXIS_LABEL_LIMIT
    assert charts._numbers_limit(0.0) == charts.AXIS_LABEL_LIMIT


@pytest.mark.parametrize(
    ("trace", "run", "prompt", "context"),
    [
        # a summary's prompt tokens ÷ its completed requests: a mean, which BR017 takes
        (
            "adapters/sglang-rate-sweep-range-ratio.jsonl",
            "sglang:4qps",
            "≈ 768 (total ÷ completed)",
            "≈ 768 (prompt total ÷ completed, at first token)",
        ),
        # the prompt length without a context length: the context at the first token
        (
            "BR008/fires_long_prompts.jsonl",
            "r4",
            "2,000",
            "2,000 (stated prompt, at first token)",
        ),
        ("BR017/passes_context_stated.jsonl", "c-n1", "16", "272"),
        ("BR017/fires_no_context.jsonl", "nc-n1", "unknown", "unknown"),
    ],
    ids=["summary-total", "prompt-stated", "context-stated", "nothing"],
)
def test_prompt_and_context_cells_say_what_the_file_gives(
    at_root: Path, trace: str, run: str, prompt: str, context: str
) -> None:
    verdict = api.audit([f"tests/fixtures/{trace}"])
    view = next(v for v in build_context(verdict, charts=False).runs if v.id == run)
    assert (view.prompt_tokens, view.context_tokens) == (prompt, context)
    # "unknown" exactly where BR017 finds no context length
    (br017,) = (f for f in verdict.findings if f.code == "BR017" and f.subject == run)
    assert (br017.outcome is Outcome.FIRED) == (context == "unknown")


def _lengths_trace(path: Path, stated: int | None, prompts: list[int]) -> str:
    """A run of len(prompts) requests with those prompt lengths, its run record stating
    `stated`-token prompts (or none)."""
    workload: dict[str, object] = {"concurrency": len(prompts), "output_tokens": 64}
    if stated is not None:
        workload["prompt_tokens"] = stated
    lines = [{"kind": "run", "schema": "benchreport/1", "id": "r", "workload": workload}]
    lines += [
        {"kind": "request", "run": "r", "id": k, "t_send": 0, "t_first": 0.5, "t_end": 2.0,
         "output_tokens": 64, "prompt_tokens": p}
        for k, p in enumerate(prompts)
    ]  # fmt: skip
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return str(path)


@pytest.mark.parametrize(
    ("stated", "context"),
    [(128, "128 (stated prompt, at first token)"), (None, "≈ 121 (mean prompt, at first token)")],
    ids=["stated-first", "measured-mean"],
)
def test_the_context_cell_shows_the_context_length_br017_takes(
    tmp_path: Path, stated: int | None, context: str
) -> None:
    # the requests' prompts average 121 tokens; a run record may state 128
    verdict = api.audit([_lengths_trace(tmp_path / "t.jsonl", stated, [120, 122])])
    (view,) = build_context(verdict, charts=False).runs
    (br017,) = (f for f in verdict.findings if f.code == "BR017" and f.subject == "r")
    assert view.context_tokens == context
    assert context.lstrip("≈ ").startswith(f"{br017.numbers['context_tokens']:.0f} ")
    # the prompt column is the requests' mean whatever the record states
    assert view.prompt_tokens == "121"


def test_the_context_cell_of_a_real_file_agrees_with_br017(at_root: Path) -> None:
    # GuideLLM states 128-token prompts; the requests' prompts average 121 tokens
    path = Path("../shared/real-traces/guidellm/rsevilla87-guidellm-qwen3-06b-constant-10rps.json")
    if not path.exists():
        pytest.skip("../shared/real-traces is absent")
    verdict = api.audit([str(path)])
    (view,) = build_context(verdict, charts=False).runs
    (br017,) = (f for f in verdict.findings if f.code == "BR017")
    assert br017.numbers["context_tokens"] == 128
    assert view.context_tokens == "128 (stated prompt, at first token)"


def test_a_prompt_total_without_a_request_count_is_not_called_unknown(
    fixture_verdicts: Callable[[str], Verdict],
) -> None:
    run = fixture_verdicts("ladder.jsonl").runs[0]
    counted = dataclasses.replace(
        run, prompt_tokens=None, prompt_tokens_total=5_000.0, requests=None, context_tokens=None
    )
    view = run_view(counted)
    assert (view.prompt_tokens, view.context_tokens) == ("unknown (5,000 in all)", "unknown")


def test_the_wall_clock_split_says_what_each_run_lacks(
    fixture_verdicts: Callable[[str], Verdict],
) -> None:
    run = fixture_verdicts("ladder.jsonl").runs[0]
    lacking = [
        # seven runs with their prompt lengths but no prefill rate: five named, then a count
        *(
            dataclasses.replace(run, id=f"rate-{k}", prefill_rate=None, prefill_s=None)
            for k in range(7)
        ),
        dataclasses.replace(
            run, id="prompt", prompt_tokens=None, prompt_tokens_total=None, prefill_s=None
        ),
        # the prompt length stated, the prompts not counted
        dataclasses.replace(run, id="uncounted", prompt_tokens_total=None, prefill_s=None),
        dataclasses.replace(
            run,
            id="both",
            prompt_tokens=None,
            prompt_tokens_total=None,
            prefill_rate=None,
            prefill_s=None,
        ),
        dataclasses.replace(run, id="wall", wall_s=None),
        dataclasses.replace(run, id="zero", wall_s=0.0),
        # a prompt-processing test's wall clock is all prefill: it has its own rate
        dataclasses.replace(
            run, id="pp512", phase="prompt", prompt_tps=4_703.3, prefill_rate=None, prefill_s=None
        ),
    ]
    notes: list[str] = []
    wall_split_chart(dataclasses.replace(fixture_verdicts("ladder.jsonl"), runs=lacking), notes)
    assert notes == [
        "wall clock split: no prefill rate for rate-0, rate-1, rate-2, rate-3, rate-4 and 2 "
        "more; no prompt lengths for prompt; no prompt token counts for uncounted; no prompt "
        "lengths and no prefill rate for both; "
        "no wall clock for wall; a wall clock of 0.00 s for zero; all prefill "
        "(prompt-processing tests) for pp512"
    ]


def test_the_wall_clock_split_of_a_run_without_a_prefill_rate(at_root: Path) -> None:
    # the queue trace counts its prompt tokens (640) but gives no prefill rate
    notes: list[str] = []
    assert wall_split_chart(api.audit(["traces/case-b-queue.jsonl"]), notes) is None
    assert notes == ["wall clock split: no prefill rate for b-queue-n16"]


def _llama_bench_trace(path: Path) -> str:
    """llama-bench -o jsonl: a pp512 and a tg128 test, two repetitions each."""
    tests = [(512, 0, 4_000.0, 128_000_000), (0, 128, 100.0, 1_280_000_000)]
    lines = [
        {"build_commit": "abc1234", "build_number": 5606, "n_prompt": p, "n_gen": g,
         "n_depth": 0, "avg_ts": ts, "avg_ns": ns, "samples_ns": [ns, ns],
         "samples_ts": [ts, ts], "model_type": "llama 1B Q4_0"}
        for p, g, ts, ns in tests
    ]  # fmt: skip
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return str(path)


def test_the_prefill_note_says_what_a_run_lacks(
    fixture_verdicts: Callable[[str], Verdict],
) -> None:
    run = fixture_verdicts("ladder.jsonl").runs[0]
    gone = {"prefill_share": None}
    # the run record states 24-token prompts; the requests do not count theirs
    uncounted = run_view(
        dataclasses.replace(run, prompt_tokens_total=None, prefill_s=None, **gone)
    ).prefill_note
    assert "unknown" not in uncounted
    assert uncounted.startswith("no prompt token counts: ")
    assert "24 tokens" in uncounted
    # the share is missing for want of a wall clock only: the prefill time is known
    for wall, lack in ((None, "no wall clock"), (0.0, "a wall clock of 0.00 s")):
        note = run_view(dataclasses.replace(run, wall_s=wall, **gone)).prefill_note
        assert note == (
            f"{lack}: 24 prompt tokens ÷ 300 tok/s = 0.08 s of prefill; rate from a lone "
            "request of the same group, prompt tokens ÷ TTFT (24 tokens: mostly fixed "
            "overhead, so a lower bound)"
        )
    # nothing in the group measures the rate
    bare = dataclasses.replace(run, prefill_rate=None, prefill_s=None, **gone)
    assert run_view(bare).prefill_note == "no prefill rate: no probe, no lone request"
    # the chart's note words the same lack the same way
    notes: list[str] = []
    runs = [dataclasses.replace(run, id="u", prompt_tokens_total=None, prefill_s=None, **gone)]
    wall_split_chart(dataclasses.replace(fixture_verdicts("ladder.jsonl"), runs=runs), notes)
    assert notes == ["wall clock split: no prompt token counts for u"]


def test_the_prefill_note_of_single_sequence_tests(tmp_path: Path) -> None:
    verdict = api.audit([_llama_bench_trace(tmp_path / "bench.jsonl")])
    notes = {v.id: v.prefill_note for v in build_context(verdict, charts=False).runs}
    # a prompt-processing test is all prefill, at the rate the report gives it
    assert notes["pp512"] == (
        "the whole wall clock of a prompt-processing test, 1,024 prompt tokens ÷ 0.26 s = "
        "4,000.0 tok/s, its own rate"
    )
    # a generation test reads no prompt (n_prompt 0): none of its wall clock is prefill,
    # whatever the prefill rate (it has none: no probe, no first-token time)
    assert notes["tg128"] == "no prompt tokens were processed: nothing of the wall clock is prefill"
    shares = {r.id: (r.prefill_s, r.prefill_share) for r in verdict.runs}
    assert shares["tg128"] == (0.0, 0.0)
    assert shares["pp512"] == (None, None)


def test_the_prefill_note_of_a_lone_request_without_a_first_token_time(
    fixture_verdicts: Callable[[str], Verdict],
) -> None:
    run = dataclasses.replace(
        fixture_verdicts("ladder.jsonl").runs[0],
        prefill_rate=None, prefill_s=None, prefill_share=None, median_ttft_s=None,
    )  # fmt: skip
    lone = dataclasses.replace(run, id="lone", requests=1, concurrency=1.0)
    many = dataclasses.replace(run, id="many", requests=8, concurrency=8.0)
    verdict = dataclasses.replace(fixture_verdicts("ladder.jsonl"), runs=[lone, many])
    notes = {v.id: v.prefill_note for v in build_context(verdict, charts=False).runs}
    assert notes == {
        "lone": "no prefill rate: no probe, and its one request has no first-token time",
        "many": "no prefill rate: no probe, and the lone request of its group has no "
        "first-token time",
    }


def test_a_run_where_nothing_completed_has_no_prefill_share(tmp_path: Path) -> None:
    # vLLM bench serve with every request failed: total_input_tokens 0 counts the prompts of
    # completed requests only, so it says nothing of the time spent prefilling the failed ones
    from tests.rules.test_br003 import ALL_FAILED

    path = tmp_path / "failed.json"
    path.write_text(json.dumps(ALL_FAILED))
    verdict = api.audit([path])
    (run,) = verdict.runs
    assert (run.prefill_s, run.prefill_share) == (None, None)
    (row,) = build_context(verdict, charts=False).runs
    assert row.prefill_share != "0%"
    assert row.prompt_tokens == "unknown (no request completed)"
    assert "nothing of the wall clock is prefill" not in row.prefill_note
    from reporter.render.markdown import render_markdown

    assert "| 0% |" not in render_markdown(verdict)
