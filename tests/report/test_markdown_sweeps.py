"""The Markdown summary lists the groups of runs: each one's runs, load span, why and slope."""

from __future__ import annotations

from pathlib import Path

import pytest

from reporter import api
from reporter.render.markdown import TOP_SWEEPS, render_markdown

ROOT = Path(__file__).resolve().parents[2]
REAL = ROOT / ".." / "shared" / "real-traces"


def _sweep_lines(markdown: str) -> list[str]:
    lines = markdown.splitlines()
    start = lines.index("**Groups of runs**")
    block = []
    for line in lines[start + 2 :]:
        if not line.startswith("- "):
            break
        block.append(line)
    return block


def test_each_sweep_with_its_runs_load_and_slope() -> None:
    markdown = render_markdown(api.audit([str(ROOT / "traces" / "case-a-versions.jsonl")]))
    lines = _sweep_lines(markdown)
    assert [line.split(":")[0] for line in lines] == [
        "- case-a-old-default",
        "- case-a-new-default",
        "- case-a-new-cb8",
    ]
    assert lines[0].startswith("- case-a-old-default: 4 runs at N=1–8 (named by the file): ")
    assert "aggregate flat in N: 90.3 / 89.5 / 89.6 / 88.5 tok/s" in lines[0]


def test_rate_sweep_shows_its_rates() -> None:
    path = REAL / "vllm" / "nerdalert-h100-llama31-8b-rate-sweep.jsonl"
    if not path.exists():
        pytest.skip("../shared/real-traces is not here")
    lines = _sweep_lines(render_markdown(api.audit([str(path)])))
    assert lines and all(" req/s " in line for line in lines), lines


@pytest.mark.slow
def test_a_run_alone_is_no_sweep_and_many_sweeps_are_counted(tmp_path: Path) -> None:
    one = tmp_path / "one.jsonl"
    one.write_text(
        '{"kind":"run","schema":"benchreport/1","id":"r","workload":{"concurrency":1}}\n'
        '{"kind":"request","run":"r","id":0,"t_send":0,"t_first":0.1,"t_end":1,'
        '"output_tokens":10}\n',
        encoding="utf-8",
    )
    assert "**Groups of runs**" not in render_markdown(api.audit([str(one)]))
    # one file per sweep, TOP_SWEEPS + 2 sweeps of two runs each
    paths = []
    for k in range(TOP_SWEEPS + 2):
        lines = []
        for n in (1, 2):
            lines.append(
                f'{{"kind":"run","schema":"benchreport/1","id":"s{k}-n{n}","group":"s{k}",'
                f'"workload":{{"concurrency":{n},"stop":"forced","output_tokens":10}}}}'
            )
            for i in range(n):
                lines.append(
                    f'{{"kind":"request","run":"s{k}-n{n}","id":{i},"t_send":0,'
                    f'"t_first":0.1,"t_end":1,"output_tokens":10}}'
                )
        path = tmp_path / f"s{k}.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        paths.append(str(path))
    markdown = render_markdown(api.audit(paths))
    listed = _sweep_lines(markdown)
    assert len(listed) == TOP_SWEEPS + 1
    assert listed[-1] == "- … and 2 more in the HTML report"


def test_a_rules_findings_share_a_line_only_at_one_severity_and_each_message_is_named() -> None:
    # case A: BR001 fires as an error on the a-350 claim and as info on a-retest-n2; one line
    # had printed the claim's error and message for both, and BR003's 5.48 s step for
    # a-retest-n4 (whose step is 5.62 s)
    markdown = render_markdown(api.audit([str(ROOT / "traces" / "case-a-ladder.jsonl")]))
    lines = [line for line in markdown.splitlines() if line.startswith("- **BR0")]
    br001 = [line for line in lines if line.startswith("- **BR001**")]
    assert br001[0].startswith("- **BR001** summed-self-reported-rates (error) \\[a-350\\]: ")
    assert br001[1].startswith("- **BR001** summed-self-reported-rates (info) \\[a-retest-n2\\]: ")
    (br003,) = [line for line in lines if line.startswith("- **BR003**")]
    assert "\\[a-retest-n2, a-retest-n4\\]; at a-retest-n2: " in br003
    assert "5.48 s" in br003


def _vllm_points(tmp_path: Path, points: dict[str, tuple[int | None, float | str]]) -> list[Path]:
    import json

    paths = []
    for name, (n, rate) in points.items():
        record = {
            "date": "20250601-120000", "backend": "vllm", "model_id": "m", "num_prompts": 64,
            "request_rate": rate, "duration": 20.0 / (n or 8) ** 0.5, "completed": 64,
            "total_input_tokens": 64 * 500, "total_output_tokens": 64 * 200,
            "output_throughput": 1.0, "mean_ttft_ms": 50.0, "median_ttft_ms": 50.0,
            "mean_tpot_ms": 10.0, "median_tpot_ms": 10.0,
        } | ({"max_concurrency": n} if n else {})  # fmt: skip
        path = tmp_path / name
        path.write_text(json.dumps(record))
        paths.append(path)
    return paths


def test_a_rate_sweep_ending_at_inf_says_so_and_the_ideal_is_from_the_first_n(
    tmp_path: Path,
) -> None:
    # nerdalert's rate sweeps end with every request sent at once: "3 runs at 10–30 req/s"
    # left that run out. And a sweep from N=16: ideal scaling multiplies its figure by N ÷ 16
    paced = _vllm_points(tmp_path, {"r1.json": (None, 1.0), "r4.json": (None, 4.0)})
    paced += _vllm_points(tmp_path, {"rinf.json": (None, "inf")})
    markdown = render_markdown(api.audit(paced))
    assert any("3 runs at 1–4 req/s and all at once" in line for line in _sweep_lines(markdown)), (
        _sweep_lines(markdown)
    )
    from reporter.render.charts import scaling_charts

    closed = _vllm_points(tmp_path, {"c16.json": (16, "inf"), "c64.json": (64, "inf")})
    (chart,) = scaling_charts(api.audit(closed), [])
    assert "Ideal scaling multiplies the N=16 figure by N ÷ 16;" in chart.caption


@pytest.mark.slow
def test_a_supported_report_says_its_verdict_once_and_counts_findings_from_rules() -> None:
    # with no claim and no run giving a reason, the headline repeated the verdict's meaning:
    # "… ÷ wall clock. The figures hold when recomputed as total output tokens ÷ wall clock."
    from reporter.render.html import render_html

    verdict = api.audit([str(ROOT / "traces" / "case-b-natural-stop.jsonl")])
    markdown = render_markdown(verdict)
    assert markdown.lower().count("the figures hold when recomputed") == 1
    page = render_html(verdict)
    assert page.lower().count("the figures hold when recomputed") == 1
    # the counts are of findings (one rule finds once per run), from the rules
    assert f"from {len(verdict.rules)} rules." in page
