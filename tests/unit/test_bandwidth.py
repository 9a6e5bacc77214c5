"""reporter.bandwidth: bytes per token and the honest denominator of METHOD §6."""

from __future__ import annotations

import pandas as pd
import pytest

from reporter import bandwidth

GIB = 1 << 30


def probes(*rows):
    return pd.DataFrame(
        [
            {
                "what": "bandwidth",
                "value": v,
                "unit": "GB/s",
                "buffer_bytes": s,
                "run": None,
                "source_path": "p.jsonl",
                "source_line": i + 1,
            }
            for i, (s, v) in enumerate(rows)
        ]
    )


METHOD_PROBES = probes(
    (1 * GIB, 366), (2 * GIB, 362), (4 * GIB, 358), (8 * GIB, 316), (16 * GIB, 267)
)


@pytest.mark.parametrize(
    ("quant", "bits"),
    [
        ("Q4_K_M", 4),
        ("4-bit", 4),
        ("AWQ", 4),
        ("mxfp4", 4),
        ("fp8", 8),
        ("Q8_0", 8),
        ("bf16", 16),
        ("FP16", 16),
        ("f32", 32),
        ("Q6_K", 6),
        ("mixed", None),
        (None, None),
    ],
)
def test_bits_of(quant, bits):
    assert bandwidth.bits_of(quant) == bits


def test_working_set_above_every_probe_takes_the_two_largest():
    d = bandwidth.denominator({"run": "a", "working_set_bytes": 21 * GIB}, METHOD_PROBES)
    assert d is not None
    assert (d.low, d.high) == (267, 316)
    assert d.refs == ["p.jsonl:4", "p.jsonl:5"]
    assert "larger than the largest probe" in d.note


def test_working_set_between_probes_brackets_it():
    d = bandwidth.denominator({"run": "a", "working_set_bytes": 6 * GIB}, METHOD_PROBES)
    assert d is not None and (d.low, d.high) == (316, 358)
    exact = bandwidth.denominator({"run": "a", "working_set_bytes": 8 * GIB}, METHOD_PROBES)
    assert exact is not None and (exact.low, exact.high) == (316, 316)


def test_measured_then_nominal():
    empty = probes()
    d = bandwidth.denominator(
        {"run": "a", "bandwidth_measured_gbps": 316, "bandwidth_nominal_gbps": 400}, empty
    )
    assert d is not None and (d.low, d.nominal) == (316, False)
    n = bandwidth.denominator({"run": "a", "bandwidth_nominal_gbps": 400}, empty)
    assert n is not None and (n.low, n.nominal) == (400, True)
    assert bandwidth.denominator({"run": "a"}, empty) is None


@pytest.mark.parametrize(
    ("model", "moe"),
    [
        ({"model_name": "Qwen3-30B-A3B"}, True),
        ({"model_name": "Mixtral-8x7B"}, True),
        ({"model_name": "some-moe-model"}, True),
        ({"model_name": "gpt-oss-120b"}, True),
        ({"params_total": 35e9, "params_active": 3e9}, True),
        ({"model_name": "granite-3.0-3b-a800m"}, True),
        ({"model_name": "DeepSeek-V3"}, True),
        # llama.cpp names DeepSeek-V2/V3/R1 (and Kimi K2) by their architecture, deepseek2
        ({"model_name": "deepseek2 671B IQ4_K_R4 - 4.5 bpw"}, True),
        ({"model_name": "deepseek2 16B IQ4_NL_R4"}, True),
        # dots.llm1 (142 B, 14 B active), as llama.cpp names it
        ({"model_name": "dots1 142B Q4_K - Medium"}, True),
        ({"model_name": "DeepSeek-R1-Distill-Qwen-7B"}, False),
        ({"model_name": "Llama-3.1-8B"}, False),
        ({"model_name": "Qwen2.5-7B-Instruct"}, False),
    ],
)
def test_moe_signs(model, moe):
    assert bandwidth.is_moe(model)[0] is moe


def test_moe_without_active_parameters_has_no_bytes():
    b = bandwidth.bytes_per_token(
        {"model_name": "Qwen3-30B-A3B", "params_total": 30.5e9, "quant": "Q4_K_M"}
    )
    assert b.value is None and b.moe_unknown


def test_active_parameters_times_bits():
    b = bandwidth.bytes_per_token(
        {
            "model_name": "Qwen3-30B-A3B",
            "params_total": 30.5e9,
            "params_active": 3.3e9,
            "quant": "Q4_K_M",
        }
    )
    assert b.value == pytest.approx(1.65e9)
    assert b.source == "estimated: 3.3B active parameters × 4 bits (Q4_K_M) ÷ 8"
