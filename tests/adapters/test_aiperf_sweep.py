"""AIPerf's sweep aggregate (`sweep_aggregate/profile_export_aiperf_sweep.json` and `.csv`) as
written since 0.11: with one trial per swept value, each entry copies that trial's summary under
the metric's own tag (`{"benchmark_duration": {"mean", "avg", "std", "min", "max", "cv",
"ci_low", "ci_high", "unit", "p1"…"p99", "count", "sum"}}`, std and cv 0), and the CSV writes
`<tag>_mean/_std/_min/_max/_cv` columns; with several trials the entry holds flattened
`<tag>_<stat>` keys whose `mean` is over the trials (AIPerf's cli_runner sweep aggregation and
orchestrator/aggregation/confidence.py). The documents here are small ones of those shapes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reporter import adapters
from reporter.adapters.aiperf import _csv_kind
from reporter.errors import TraceError
from reporter.ingest.lines import Source
from tests.adapters.conftest import load, run, stats_of

PERCENTILES = ("p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99")


def _point(c: int) -> dict[str, Any]:
    """One setting's figures as its own profile_export_aiperf.json states them."""
    requests = 100.0 * c
    wall = 300.0 + c
    tokens = 250.0 * requests
    ttft = {"avg": 20.0 + c, "min": 10.0, "max": 90.0 + c, "std": 7.0, "count": requests}
    ttft |= {p: 15.0 + c + i for i, p in enumerate(PERCENTILES)}
    ttft["sum"] = ttft["avg"] * requests
    latency = {"avg": 2000.0 + c, "min": 40.0, "max": 9000.0, "std": 900.0, "count": requests}
    latency |= {p: 100.0 + 500 * i for i, p in enumerate(PERCENTILES)}
    latency["sum"] = latency["avg"] * requests
    osl = {"avg": 250.0, "min": 3.0, "max": 1125.0, "std": 80.0, "count": requests}
    osl |= {p: 10.0 + 60 * i for i, p in enumerate(PERCENTILES)}
    osl["sum"] = tokens
    return {
        "benchmark_duration": {"unit": "sec", "avg": wall},
        "request_count": {"unit": "requests", "avg": requests},
        "request_throughput": {"unit": "requests/sec", "avg": requests / wall},
        "output_token_throughput": {"unit": "tokens/sec", "avg": tokens / wall},
        "total_osl": {"unit": "tokens", "avg": tokens},
        "time_to_first_token": {"unit": "ms", **ttft},
        "request_latency": {"unit": "ms", **latency},
        "output_sequence_length": {"unit": "tokens", **osl},
    }


def _summary(c: int) -> dict[str, Any]:
    return {
        "schema_version": "1.3",
        "aiperf_version": "0.11.0",
        **_point(c),
        "input_config": {"phases": [{"name": "profiling", "concurrency": c}]},
    }


def _single_trial(metric: dict[str, Any]) -> dict[str, Any]:
    """AIPerf's projection of one trial's metric into its sweep entry."""
    avg = metric["avg"]
    out = {"mean": avg, "avg": avg, "std": 0.0, "min": metric.get("min", avg)}
    out |= {"max": metric.get("max", avg), "cv": 0.0, "ci_low": avg, "ci_high": avg}
    out["unit"] = metric["unit"]
    out |= {k: metric[k] for k in (*PERCENTILES, "count", "sum") if k in metric}
    return out


def _sweep(values: list[int], trials: int = 1) -> dict[str, Any]:
    return {
        "aggregation_type": "sweep",
        "num_profile_runs": len(values) * trials,
        "num_successful_runs": len(values) * trials,
        "failed_runs": [],
        "metadata": {
            "sweep_parameters": [{"name": "concurrency", "values": values}],
            "num_combinations": len(values),
            "sweep_mode": "repeated",
            "confidence_level": 0.95,
            "num_trials_per_value": trials,
            "aggregation_type": "sweep",
        },
        "per_combination_metrics": [
            {
                "parameters": {"concurrency": c},
                "metrics": {k: _single_trial(m) for k, m in _point(c).items()},
            }
            for c in values
        ],
    }


def _flat(metrics: dict[str, Any], spread: float) -> dict[str, Any]:
    """Several trials: `<tag>_<stat>` keys, each a mean over the trials with its spread."""
    out: dict[str, Any] = {}
    for tag, metric in metrics.items():
        for stat, value in metric.items():
            if stat in ("unit", "std"):
                continue
            out[f"{tag}_{stat}"] = {
                "mean": value,
                "std": spread * value,
                "min": value * (1 - spread),
                "max": value * (1 + spread),
                "cv": spread,
                "ci_low": value * (1 - 2 * spread),
                "ci_high": value * (1 + 2 * spread),
                "unit": metric["unit"],
            }
    return out


def _csv(doc: dict[str, Any], runs: tuple[int, int] | None = None, drop: str | None = None) -> str:
    """AIPerf's sweep CSV of `doc`: parameter columns, `<key>_mean/_std/_min/_max/_cv` columns
    (values to 2 decimals, cv to 4), then its Best Configurations, Pareto and Metadata
    sections; `runs` = (combinations, successful runs) for the Metadata section."""
    entries = doc["per_combination_metrics"]
    keys = sorted(k for k in entries[0]["metrics"] if k != drop)
    stats = ("mean", "std", "min", "max", "cv")
    lines = [",".join(["concurrency", *(f"{k}_{s}" for k in keys for s in stats)])]
    for entry in entries:
        cells = [str(entry["parameters"]["concurrency"])]
        for k in keys:
            m = entry["metrics"][k]
            cells += [f"{m[s]:.2f}" for s in ("mean", "std", "min", "max")] + [f"{m['cv']:.4f}"]
        lines.append(",".join(cells))
    lines += ["", "Best Configurations", "", "Pareto Optimal Points", "None", ""]
    lines += ["Metadata", "Field,Value", "Aggregation Type,sweep", "Sweep Parameters,concurrency"]
    if runs is not None:
        combos, successful = runs
        lines += [f"Number of Combinations,{combos}", f"Number of Profile Runs,{successful}"]
        lines += [f"Number of Successful Runs,{successful}"]
    return "\n".join(lines) + "\n"


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


FIGURES = (
    "requests",
    "wall_s",
    "output_tokens",
    "tool_aggregate_tps",
    "sum_latency_s",
    "mean_ttft_s",
    "median_ttft_s",
    "ttft_p90_s",
    "ttft_p99_s",
    "e2e_p50_s",
    "e2e_p99_s",
    "mean_output_tokens",
    "min_output_tokens",
    "max_output_tokens",
)


def test_011_sweep_json_is_one_run_per_setting_with_its_points_figures(tmp_path):
    path = _write(tmp_path, "profile_export_aiperf_sweep.json", json.dumps(_sweep([16, 32])))
    assert adapters.detect(Source.read(str(path))).NAME == "aiperf"
    tables = load(path)
    runs = tables.runs
    assert list(runs["run"]) == ["aiperf:c16", "aiperf:c32"]
    assert list(runs["concurrency"]) == [16, 32]
    assert runs["group"].nunique() == 1
    for c in (16, 32):
        swept = run(tables, f"aiperf:c{c}")
        point = run(load(_write(tmp_path, f"c{c}.json", json.dumps(_summary(c)))))
        for key in FIGURES:
            assert swept["summary"][key] == pytest.approx(point["summary"][key]), key
        # one trial per value: that trial's own figures, not a mean over trials
        assert not any("means across" in d for d in swept["derived"])
        assert any("the one profile run of this setting" in d for d in swept["derived"])
    s = stats_of(tables)
    assert [round(x, 1) for x in s["wall_s"]] == [316.0, 332.0]
    assert list(s["requests"]) == [1600.0, 3200.0]


def test_011_sweep_csv_reads_the_tags_mean_columns(tmp_path):
    doc = _sweep([16, 32])
    path = _write(tmp_path, "profile_export_aiperf_sweep.csv", _csv(doc, runs=(2, 2)))
    assert adapters.detect(Source.read(str(path))).NAME == "aiperf"
    tables = load(path)
    assert list(tables.runs["run"]) == ["aiperf:c16", "aiperf:c32"]
    s = stats_of(tables)
    assert list(s["requests"]) == [1600.0, 3200.0]
    assert list(s["wall_s"]) == [316.0, 332.0]
    r = run(tables, "aiperf:c16")
    # the CSV writes each tag's mean (its avg), min and max: no percentiles, no sum
    assert r["summary"]["mean_ttft_s"] == pytest.approx(0.036)
    assert (r["summary"]["min_output_tokens"], r["summary"]["max_output_tokens"]) == (3.0, 1125.0)
    assert r["summary"].get("median_ttft_s") is None
    assert any("the one profile run of this setting" in d for d in r["derived"])


def test_011_sweep_csv_without_its_metadata_section_is_still_read(tmp_path):
    # the tag form is only ever written for a setting of one trial
    path = _write(tmp_path, "sweep.csv", _csv(_sweep([16])).split("\n\n")[0] + "\n")
    tables = load(path)
    assert list(tables.runs["run"]) == ["aiperf:c16"]
    assert stats_of(tables)["wall_s"].iloc[0] == 316.0


def test_011_sweep_entry_without_a_duration_is_refused_at_its_line(tmp_path):
    doc = _sweep([16, 32])
    del doc["per_combination_metrics"][1]["metrics"]["benchmark_duration"]
    text = json.dumps(doc, indent=2)
    path = _write(tmp_path, "profile_export_aiperf_sweep.json", text)
    with pytest.raises(TraceError) as err:
        load(path)
    lines = text.splitlines()
    entry = next(i for i, line in enumerate(lines, 1) if '"concurrency": 32' in line and i > 20)
    line = max(i for i in range(1, entry) if lines[i - 1].strip() == "{")
    assert str(err.value) == (
        f"{path}:{line}: sweep entry 1 (concurrency 32) has no benchmark duration: neither "
        '"benchmark_duration" (its "avg" or "mean") nor "benchmark_duration_avg" (its "mean") '
        "among its metrics; expected a duration for every swept setting (AIPerf sweep export)"
    )


def test_011_sweep_csv_row_without_a_duration_is_refused_naming_the_columns(tmp_path):
    path = _write(tmp_path, "sweep.csv", _csv(_sweep([16]), drop="benchmark_duration"))
    with pytest.raises(TraceError) as err:
        load(path)
    assert str(err.value) == (
        f"{path}:2: no benchmark duration: neither benchmark_duration_mean nor "
        "benchmark_duration_avg_mean holds a number; expected a duration for the setting "
        "(AIPerf sweep CSV)"
    )


def _several_trials(trials: int) -> dict[str, Any]:
    doc = _sweep([16, 32], trials=trials)
    for entry in doc["per_combination_metrics"]:
        c = entry["parameters"]["concurrency"]
        entry["metrics"] = _flat(_point(c), spread=0.05)
    return doc


def test_sweep_of_several_trials_per_value_is_refused_not_read_as_one_run(tmp_path):
    # a mean over trials of a duration or a request count is no run's figure
    path = _write(tmp_path, "sweep.json", json.dumps(_several_trials(3)))
    with pytest.raises(TraceError) as err:
        load(path)
    message = str(err.value)
    assert "sweep entry 0 (concurrency 16) holds means over 3 trials" in message
    assert "metadata.num_trials_per_value 3" in message
    assert "each trial's own profile_export_aiperf.json" in message


def test_sweep_csv_of_several_trials_per_value_is_refused(tmp_path):
    path = _write(tmp_path, "sweep.csv", _csv(_several_trials(3), runs=(2, 6)))
    with pytest.raises(TraceError) as err:
        load(path)
    message = str(err.value)
    assert f"{path}:2: sweep row (concurrency 16) holds means over 3 trials" in message
    assert "6 successful runs over 2 combinations" in message


def test_flat_sweep_of_one_trial_per_value_is_that_trials_figures(tmp_path):
    # the same keys with one trial a value (AIPerf's single-run path flattens them too)
    doc = _several_trials(1)
    for entry in doc["per_combination_metrics"]:
        c = entry["parameters"]["concurrency"]
        entry["metrics"] = _flat(_point(c), spread=0.0)
    path = _write(tmp_path, "sweep.json", json.dumps(doc))
    tables = load(path)
    assert list(stats_of(tables)["requests"]) == [1600.0, 3200.0]
    r = run(tables, "aiperf:c16")
    assert r["summary"]["median_ttft_s"] == pytest.approx(0.035)  # p50 = 15 + 16 + 4 ms
    assert any("the one profile run of this setting" in d for d in r["derived"])


def test_sweep_csv_is_told_by_its_five_columns_a_key_not_by_count_columns(tmp_path):
    # no `*_count_mean` column: the header still has AIPerf's mean/std/min/max/cv per key
    path = _write(tmp_path, "sweep.csv", _csv(_sweep([16]), drop="request_count"))
    assert adapters.detect(Source.read(str(path))).NAME == "aiperf"
    # a `_count_mean` column alone, without its std/min/max/cv, is not the sweep's layout
    assert _csv_kind(["concurrency", "request_count_mean", "other"]) is None


def _entry_lines(text: str) -> list[int]:
    """The line where each `per_combination_metrics` entry of an indented document opens."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if '"per_combination_metrics"' in line)
    indent = len(lines[start + 1]) - len(lines[start + 1].lstrip())
    return [
        i + 1 for i, line in enumerate(lines[start + 1 :], start + 1) if line == " " * indent + "{"
    ]


def test_sweep_entry_given_twice_is_refused_naming_the_first(tmp_path):
    # one setting twice in one export is impossible data, not two repeats of one point
    doc = _sweep([16, 32])
    twin = json.loads(json.dumps(doc["per_combination_metrics"][0]))
    twin["metrics"]["benchmark_duration"]["avg"] *= 1.8
    twin["parameters"] = {"concurrency": 16.0}  # the same value written as a float
    doc["per_combination_metrics"].append(twin)
    text = json.dumps(doc, indent=2)
    path = _write(tmp_path, "profile_export_aiperf_sweep.json", text)
    with pytest.raises(TraceError) as err:
        load(path)
    first, _, again = _entry_lines(text)
    assert str(err.value) == (
        f"{path}:{again}: sweep entry 2 (concurrency 16) is the setting of sweep entry 0 "
        f"(line {first}) again; expected each swept setting once"
    )


def test_sweep_csv_row_given_twice_is_refused_naming_the_first(tmp_path):
    text = _csv(_sweep([16, 32]), runs=(2, 2))
    rows = text.split("\n")
    rows.insert(3, rows[1])
    path = _write(tmp_path, "sweep.csv", "\n".join(rows))
    with pytest.raises(TraceError) as err:
        load(path)
    assert str(err.value) == (
        f"{path}:4: sweep row (concurrency 16) is the setting of the row at line 2 again; "
        "expected each swept setting once"
    )


@pytest.mark.parametrize("mean", [2400.0, float("nan"), "2032"])
def test_011_sweep_metric_whose_avg_and_mean_disagree_is_refused(tmp_path, mean):
    # one trial's average is written as both: two values are no figure to pick one of
    doc = _sweep([16, 32])
    doc["per_combination_metrics"][1]["metrics"]["request_latency"]["mean"] = mean
    text = json.dumps(doc, indent=2)
    path = _write(tmp_path, "profile_export_aiperf_sweep.json", text)
    with pytest.raises(TraceError) as err:
        load(path)
    _, line = _entry_lines(text)
    shown = {2400.0: "2400.0", "2032": '"2032"'}.get(mean, "NaN")
    assert str(err.value) == (
        f'{path}:{line}: sweep entry 1 (concurrency 32): metric "request_latency" has "avg" '
        f'2032.0 and "mean" {shown}, which disagree; expected the one trial\'s average as both '
        "(AIPerf writes it twice)"
    )


def test_011_sweep_duration_whose_avg_and_mean_disagree_is_refused_for_that_alone(tmp_path):
    doc = _sweep([16])
    doc["per_combination_metrics"][0]["metrics"]["benchmark_duration"]["mean"] = 100.0
    path = _write(tmp_path, "sweep.json", json.dumps(doc))
    with pytest.raises(TraceError) as err:
        load(path)
    assert len(err.value.problems) == 1
    assert 'metric "benchmark_duration" has "avg" 316.0 and "mean" 100.0' in str(err.value)


def test_011_sweep_avg_and_mean_alike_but_for_float_rounding_are_read(tmp_path):
    doc = _sweep([16])
    latency = doc["per_combination_metrics"][0]["metrics"]["request_latency"]
    latency["mean"] = latency["avg"] * (1 + 1e-12)
    tables = load(_write(tmp_path, "sweep.json", json.dumps(doc)))
    assert list(tables.runs["run"]) == ["aiperf:c16"]


@pytest.mark.parametrize(
    ("value", "shown", "expected"),
    [
        (True, "true", "a whole number of at least 1"),
        ("NaN", '"NaN"', "a whole number of at least 1"),
        ([16], "[16]", "a whole number of at least 1"),
        (2.5, "2.5", "a whole number of at least 1"),
        (0, "0", "a whole number of at least 1"),
        (None, "null", "a whole number of at least 1"),
    ],
)
def test_a_sweep_parameter_of_the_wrong_type_is_refused(tmp_path, value, shown, expected):
    # it became "?" without a word
    doc = _sweep([16, 32])
    doc["per_combination_metrics"][1]["parameters"] = {"concurrency": value}
    text = json.dumps(doc, indent=2)
    path = _write(tmp_path, "profile_export_aiperf_sweep.json", text)
    with pytest.raises(TraceError) as err:
        load(path)
    _, line = _entry_lines(text)
    assert str(err.value) == (
        f'{path}:{line}: sweep entry 1: parameter "concurrency" is {shown}; expected {expected}'
    )


@pytest.mark.parametrize(
    ("parameters", "shown"), [([16], "[16]"), ("c16", '"c16"'), (None, "null")]
)
def test_sweep_parameters_that_are_no_object_are_refused(tmp_path, parameters, shown):
    doc = _sweep([16, 32])
    doc["per_combination_metrics"][0]["parameters"] = parameters
    text = json.dumps(doc, indent=2)
    path = _write(tmp_path, "profile_export_aiperf_sweep.json", text)
    with pytest.raises(TraceError) as err:
        load(path)
    line, _ = _entry_lines(text)
    assert str(err.value) == (
        f'{path}:{line}: sweep entry 0: "parameters" is {shown}; expected an object of the '
        'swept values, as {"concurrency": 16}'
    )


def test_a_sweep_parameter_of_other_than_a_number_is_refused(tmp_path):
    doc = _sweep([16])
    doc["per_combination_metrics"][0]["parameters"]["name"] = "warmup"
    path = _write(tmp_path, "sweep.json", json.dumps(doc))
    with pytest.raises(TraceError, match='parameter "name" is "warmup"; expected a finite number'):
        load(path)


def test_a_sweep_parameter_named_name_does_not_rename_the_phase(tmp_path):
    doc = _sweep([16])
    doc["per_combination_metrics"][0]["parameters"]["name"] = 7
    tables = load(_write(tmp_path, "sweep.json", json.dumps(doc)))
    assert list(tables.runs["concurrency"]) == [16]


def test_a_sweep_csv_concurrency_that_is_no_whole_number_is_refused(tmp_path):
    text = _csv(_sweep([16]), runs=(1, 1)).replace("\n16,", "\n2.5,", 1)
    path = _write(tmp_path, "sweep.csv", text)
    with pytest.raises(TraceError) as err:
        load(path)
    assert str(err.value) == (
        f'{path}:2: sweep row: parameter "concurrency" is 2.5; expected a whole number of at '
        "least 1"
    )


def test_a_sweep_setting_is_quoted_bounded_and_escaped_in_messages(tmp_path):
    # a 1 MB parameter key made a 1 MB error line, its controls written raw
    doc = _sweep([16, 32])
    huge = "\x1b]0;title\x07" + "k" * 1_000_000
    doc["per_combination_metrics"][1]["parameters"] = {huge: 1, **{f"p{n}": n for n in range(20)}}
    del doc["per_combination_metrics"][1]["metrics"]["benchmark_duration"]
    path = _write(tmp_path, "sweep.json", json.dumps(doc))
    with pytest.raises(TraceError) as err:
        load(path)
    message = str(err.value)
    assert len(message) < 600
    assert "\x1b" not in message and "\x07" not in message
    assert 'sweep entry 1 ("\\u001b]0;title\\u0007kkk' in message
    assert "p0 0, p1 1, p2 2, and 17 more) has no benchmark duration" in message
