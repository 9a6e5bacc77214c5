"""BR015 bandwidth-ceiling: METHOD §6's arithmetic, and the cases that must not be guessed."""

from __future__ import annotations

import json

import pytest

from reporter import api
from tests.conftest import FIXTURES, finding

GIB = 1 << 30


@pytest.fixture(scope="module")
def case_a():
    return api.audit([FIXTURES / "BR015" / "fires_method_case_a.jsonl"], select=["BR015"]).to_dict()


def test_method_6_utilization_57_to_68(case_a):
    """97.83 tok/s × 1.849 GB = 181 GB/s against 267–316 GB/s at a 21 GiB working set."""
    f = finding(case_a, "BR015", "a-n1")
    assert f["outcome"] == "fired"
    assert f["severity"] == "info"
    n = f["numbers"]
    assert round(n["needed_gbps"]) == 181
    assert (n["denominator_low_gbps"], n["denominator_high_gbps"]) == (267, 316)
    assert (round(n["utilization_low"] * 100), round(n["utilization_high"] * 100)) == (57, 68)
    assert f["message"].startswith(
        "decode 97.83 tok/s × 1.849 GB/token = 181 GB/s: 57–68% of the 267–316 GB/s measured "
        "at the 21 GiB working set (probes at 8 GiB and 16 GiB): near the ceiling (above 55%)"
    )


def test_method_6_target_125_needs_231(case_a):
    f = finding(case_a, "BR015", "target-125")
    assert f["outcome"] == "fired"
    assert f["severity"] == "warning"
    n = f["numbers"]
    assert round(n["needed_gbps"]) == 231
    assert (round(n["utilization_low"] * 100), round(n["utilization_high"] * 100)) == (73, 87)
    assert f["message"].endswith(
        "beyond what MoE decode reaches (60–65%): not physically plausible"
    )


def test_dense_model_above_the_ceiling_is_impossible():
    v = api.audit([FIXTURES / "BR015" / "fires_dense_above_ceiling.jsonl"], select=["BR015"])
    f = finding(v, "BR015", "fast-n1")
    assert f["outcome"] == "fired"
    assert f["severity"] == "error"
    assert round(f["numbers"]["utilization_low"], 2) == 1.72
    assert "above 100%, physically impossible" in f["message"]


def test_bytes_estimated_from_parameters_say_so():
    v = api.audit(
        [FIXTURES / "BR015" / "fires_dense_estimated_from_params.jsonl"], select=["BR015"]
    )
    f = finding(v, "BR015", "est-n1")
    assert f["severity"] == "error"
    assert f["numbers"]["bytes_per_token"] == 8.03e9 * 16 / 8
    assert f["numbers"]["bytes_source"].startswith("estimated: 8.03B total parameters × 16 bits")
    assert f["arithmetic"][0].startswith("bytes per token ≈ 8.03B total (dense model assumed")


@pytest.mark.parametrize(
    "name", ["undecidable_moe_without_active", "undecidable_mixtral_without_active"]
)
def test_moe_without_active_bytes_is_undecidable_never_impossible(name):
    v = api.audit([FIXTURES / "BR015" / f"{name}.jsonl"], select=["BR015"]).to_dict()
    (f,) = v["findings"]
    assert f["outcome"] == "undecidable"
    assert "mixture-of-experts model" in f["message"]


def test_llama_cpp_deepseek2_type_is_a_moe_never_impossible(tmp_path):
    """llama-bench names DeepSeek-R1 by its architecture ("deepseek2 671B IQ4_K_R4"), with no
    active-parameter count: 2.97 tok/s × the 672 B total would need 997 GB/s, but a token
    reads the ~37 B active only; a 68 GB/s probe must not make the rate impossible."""
    test = {
        "build_commit": "ddc8eee1", "build_number": 3599, "cpu_info": "Xeon", "gpu_info": "",
        "model_filename": "r1.gguf", "model_type": "deepseek2 671B IQ4_K_R4 - 4.5 bpw",
        "model_size": 379595751424, "model_n_params": 672049829376, "n_threads": 48,
        "n_prompt": 0, "n_gen": 128, "avg_ns": 43130895818, "stddev_ns": 98868993,
        "avg_ts": 2.967723, "stddev_ts": 0.006819,
        "samples_ns": [42963040991, 43127461276], "samples_ts": [2.9793, 2.96795],
    }  # fmt: skip
    bench = tmp_path / "llama-bench.json"
    bench.write_text(json.dumps([test]))
    probe = tmp_path / "probe.jsonl"
    record = {"kind": "probe", "what": "bandwidth", "value": 68.0, "unit": "GB/s"}
    probe.write_text(json.dumps(record | {"buffer_bytes": 8 * GIB}) + "\n")
    (f,) = api.audit([bench, probe], select=["BR015"]).to_dict()["findings"]
    assert f["outcome"] == "undecidable"
    assert "mixture-of-experts model" in f["message"]
    assert "impossible" not in f["message"]


def test_nominal_denominator_fires():
    v = api.audit([FIXTURES / "BR015" / "fires_nominal_only.jsonl"], select=["BR015"])
    f = finding(v, "BR015", "nom-n1")
    assert f["outcome"] == "fired"
    assert f["severity"] == "warning"
    assert f["numbers"]["nominal"] is True
    assert "the denominator is the data-sheet figure" in f["message"]


def test_probes_around_the_working_set():
    v = api.audit([FIXTURES / "BR015" / "passes_headroom.jsonl"], select=["BR015"])
    f = finding(v, "BR015", "ok-n1")
    assert f["outcome"] == "passed"
    assert (f["numbers"]["denominator_low_gbps"], f["numbers"]["denominator_high_gbps"]) == (
        2880,
        2950,
    )


def test_speculation_on_is_undecidable():
    v = api.audit([FIXTURES / "BR010" / "passes_spec_on_code.jsonl"], select=["BR015"])
    assert finding(v, "BR015", "code-n1")["outcome"] == "undecidable"


@pytest.mark.slow
def test_a_probe_of_no_run_measures_only_its_own_files_machine(tmp_path):
    """Audited beside a file from another machine (its own probes, 1,000 GB/s), case A's run
    keeps its own probes; before, both files' probes were pooled for every run."""
    lines = (FIXTURES / "BR015" / "fires_method_case_a.jsonl").read_text().splitlines()
    other = [
        line.replace('"value":', '"value":1000, "was":').replace("a-n1", "b-n1")
        for line in lines
        if '"claim"' not in line
    ]
    path = tmp_path / "other-machine.jsonl"
    path.write_text("\n".join(other) + "\n")
    v = api.audit([FIXTURES / "BR015" / "fires_method_case_a.jsonl", path], select=["BR015"])
    n = finding(v, "BR015", "a-n1")["numbers"]
    assert (n["denominator_low_gbps"], n["denominator_high_gbps"]) == (267, 316)
    n = finding(v, "BR015", "b-n1")["numbers"]
    assert (n["denominator_low_gbps"], n["denominator_high_gbps"]) == (1000, 1000)
    # a file of probes alone still serves every run
    probes = tmp_path / "probes.jsonl"
    probes.write_text("\n".join(line for line in lines if '"probe"' in line) + "\n")
    runs = tmp_path / "runs.jsonl"
    runs.write_text("\n".join(line for line in lines if '"probe"' not in line) + "\n")
    n = finding(api.audit([probes, runs], select=["BR015"]), "BR015", "a-n1")["numbers"]
    assert (n["denominator_low_gbps"], n["denominator_high_gbps"]) == (267, 316)
