"""`benchreport compare A B`: the ratio, the factors, the chain; errors exit 2."""

from __future__ import annotations

import json

from click.testing import CliRunner

from reporter.cli import main
from tests.conftest import FIXTURES

METHOD5 = str(FIXTURES / "BR012" / "fires_method_stop_and_content.jsonl")
METHOD6 = str(FIXTURES / "BR012" / "passes_engine_speedup_bandwidth.jsonl")


def test_method_5_decomposition():
    result = CliRunner().invoke(main, ["compare", "-t", METHOD5, "code-n8", "qa-n8"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("A  code-n8: 606.1 tok/s (4,096 tokens ÷ 6.76 s)")
    assert lines[1].startswith("B  qa-n8: 171.2 tok/s (486 tokens ÷ 2.84 s)")
    assert lines[2] == "A ÷ B = 606.1 ÷ 171.2 = 3.54×"
    assert "They differ in:" in lines
    assert "  factor                   A       B" in lines
    assert "  stop mode                forced  natural" in lines
    assert lines[-3:] == [
        "  qa-n8 171.2 → prose-n8 359.3 tok/s: 2.10× (stop mode, prompt length, requested "
        "output length)",
        "  prose-n8 359.3 → code-n8 606.1 tok/s: 1.69× (content)",
        "  2.10 × 1.69 = 3.54 = 606.1 ÷ 171.2",
    ]


def test_method_6_bandwidth_split_as_json():
    result = CliRunner().invoke(
        main, ["compare", f"{METHOD6}:new-engine-n1", f"{METHOD6}:llama-cpp-n1", "--json"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    bw = data["bandwidth"]
    assert (
        round(bw["bytes_ratio"], 2),
        round(bw["bandwidth_ratio"], 2),
        round(bw["ratio"], 2),
    ) == (1.52, 1.56, 2.37)
    assert data["comparable"] is True
    assert round(data["ratio"], 2) == 2.36


def test_unknown_run_exits_2_with_the_choices():
    result = CliRunner().invoke(main, ["compare", "-t", METHOD5, "code-n8", "nope"])
    assert result.exit_code == 2
    assert result.output == (
        "no run 'nope' in the traces; expected one of qa-n8, prose-n8, code-n8\n"
    )


def test_no_trace_exits_2():
    result = CliRunner().invoke(main, ["compare", "a", "b"])
    assert result.exit_code == 2
    assert result.output == ("no trace file: name the runs as FILE:RUN, or pass --trace FILE\n")


def test_compare_and_br012_read_one_length_tolerance(monkeypatch, tmp_path):
    from reporter import compare
    from reporter.rules import br012_incomparable_runs as br012

    assert br012.LENGTH_TOLERANCE is compare.LENGTH_TOLERANCE
    seen: list[float] = []
    original = compare.compare

    def spy(*args, tolerance, **kwargs):
        seen.append(tolerance)
        return original(*args, tolerance=tolerance, **kwargs)

    monkeypatch.setattr(compare, "compare", spy)
    config = tmp_path / "t.toml"
    config.write_text("[thresholds]\ncomparable_length_tolerance = 0.02\n", encoding="utf-8")
    args = ["compare", "-t", METHOD5, "code-n8", "qa-n8"]
    assert CliRunner().invoke(main, args).exit_code == 0
    assert CliRunner().invoke(main, [*args, "--config", str(config)]).exit_code == 0
    assert seen == [0.10, 0.02]


def test_compare_json_to_a_file_keeps_the_text(tmp_path):
    out = tmp_path / "c.json"
    result = CliRunner().invoke(
        main, ["compare", "-t", METHOD5, "code-n8", "qa-n8", "--json", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[2] == "A ÷ B = 606.1 ÷ 171.2 = 3.54×"
    assert json.loads(out.read_text(encoding="utf-8"))["a"]
