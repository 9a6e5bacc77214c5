"""BR008 with llama-bench: a pp test of the same settings gives a pp+tg test its prefill rate."""

from __future__ import annotations

from pathlib import Path

from reporter import api

# A llama-bench table of a 671B MoE spread over several machines: the pp512+tg128 test spends
# half of its time reading the prompt, as its pp512 neighbour measures (512 ÷ 26.86 t/s).
TABLE = """\
| model                          |       size |     params | backend    | ngl | threads | fa | mmap |            test |                  t/s |
| ------------------------------ | ---------: | ---------: | ---------- | --: | ------: | -: | ---: | --------------: | -------------------: |
| deepseek2 671B Q2_K - Medium   | 211.03 GiB |   671.03 B | Vulkan,RPC | 125 |      32 |  1 |    0 |           pp512 |         26.86 ± 0.35 |
| deepseek2 671B Q2_K - Medium   | 211.03 GiB |   671.03 B | Vulkan,RPC | 125 |      32 |  1 |    0 |           tg128 |          8.25 ± 0.04 |
| deepseek2 671B Q2_K - Medium   | 211.03 GiB |   671.03 B | Vulkan,RPC | 125 |      32 |  1 |    0 |     pp512+tg128 |         17.22 ± 0.04 |
"""  # noqa: E501


def _br008(path: Path) -> dict[str, object]:
    verdict = api.audit([path], select=["BR008"])
    return {str(f.subject): f for f in verdict.findings}


def test_a_prompt_test_gives_the_combined_test_its_prefill_rate(tmp_path: Path) -> None:
    path = tmp_path / "bench.md"
    path.write_text(TABLE)
    f = _br008(path)["pp512+tg128"]
    assert str(f.outcome) == "fired"  # type: ignore[attr-defined]
    # 640 tokens ÷ 17.22 t/s = 37.17 s, of which 512 ÷ 26.86 = 19.06 s read the prompt
    assert f.message == (  # type: ignore[attr-defined]
        "prompt processing ≈ 19.1 s of the 37.17 s wall clock (51% > 30%): the 3.4 tok/s "
        "measures prefill"
    )
    assert (
        "rate from the prompt-processing test pp512 of the same prompt, context and "
        in (
            f.arithmetic[1]  # type: ignore[attr-defined]
        )
    )


def test_a_prompt_test_of_other_settings_gives_no_rate(tmp_path: Path) -> None:
    path = tmp_path / "bench.md"
    # the pp512 row ran with flash attention off: not the combined test's settings
    path.write_text(TABLE.replace("|  1 |    0 |   ", "|  0 |    0 |   ", 1))
    f = _br008(path)["pp512+tg128:flash_attn=1"]
    assert str(f.outcome) == "undecidable"  # type: ignore[attr-defined]
