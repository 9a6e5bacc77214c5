"""Valid record files of every adapter, the starting points the fuzz suite breaks.

Real files are read in place from ``../shared/real-traces`` (absent: those seeds are left out);
small written ones come from tests/fixtures/adapters and the shipped traces.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REAL = ROOT / ".." / "shared" / "real-traces"
FIXTURES = ROOT / "tests" / "fixtures"
ADAPTERS = FIXTURES / "adapters"


@dataclass(frozen=True)
class Seed:
    """Files audited together; `target` is the one mutated, `args` go after the files."""

    family: str
    files: tuple[Path, ...]
    target: int = 0
    audited: tuple[int, ...] = (0,)
    args: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.files[self.target].name

    def kind(self) -> str:
        """How the target is broken at the value level: json, jsonl, yaml, csv or table."""
        path = self.files[self.target]
        if path.suffix in (".csv", ".yaml"):
            return path.suffix[1:]
        data = path.read_bytes()
        if path.suffix == ".log" and b"| --" in data:
            return "table"
        try:
            json.loads(data)
        except ValueError:
            return "jsonl"
        return "json"

    def lay_out(self, folder: Path, mutated: bytes) -> list[str]:
        """Copy the files into `folder` (the target as `mutated`); the CLI's arguments."""
        for i, path in enumerate(self.files):
            dest = folder / path.name
            if i == self.target:
                dest.write_bytes(mutated)
            else:
                shutil.copyfile(path, dest)
        names = [str(folder / self.files[i].name) for i in self.audited]
        args = [a.format(**{f"f{i}": str(folder / p.name) for i, p in enumerate(self.files)})
                for a in self.args]  # fmt: skip
        return names + args


def _real(*names: str) -> list[Path]:
    return [REAL / n for n in names]


def _one(family: str, paths: list[Path]) -> list[Seed]:
    return [Seed(family, (p,)) for p in paths]


def all_seeds() -> list[Seed]:
    custom = (ADAPTERS / "bench-log.csv", ADAPTERS / "bench-log.yaml")
    custom_args = ("--format", "custom", "--mapping", "{f1}")
    llmperf = _real(
        "llmperf/leaderboard-groq_70b_individual_responses.json",
        "llmperf/leaderboard-groq_70b_summary.json",
    )
    seeds = [
        *_one(
            "native",
            [
                ROOT / "traces" / "case-a-ladder.jsonl",
                ROOT / "traces" / "case-b-queue.jsonl",
                ROOT / "traces" / "case-b-repeats.jsonl",
                FIXTURES / "BR001" / "fires_summed_claim.jsonl",
                FIXTURES / "BR004" / "fires_three_slots.jsonl",
                FIXTURES / "BR006" / "fires_natural.jsonl",
            ],
        ),
        *_one(
            "vllm",
            [
                ADAPTERS / "vllm-2026-save-detailed-c2.json",
                *_real(
                    "vllm/er0080-v0.25.1-sweep-maxseqs4-conc2-run0.json",
                    "vllm/er0080-v0.25.1-sweep-maxseqs4-conc2-summary.json",
                    "vllm/lambdalabs-1xH100-llama31-8b-fp8-10prompts-detailed.json",
                    "vllm/nerdalert-h100-llama31-8b-rate-sweep.jsonl",
                    "vllm/diogoaav-llama33-70b-fp8-100k-prompt-single-request.json",
                    "vllm/yangligt2-llama4scout-fp8-2node-maxconc-sweep/c16-20251022-234745.json",
                ),
            ],
        ),
        *_one(
            "sglang",
            [
                ADAPTERS / "sglang-output-details.jsonl",
                *_real(
                    "sglang/bowenwan6-benchserving-vllm-backend-c16-repeats/caseC_batched_vllm_rep1.json",
                    "sglang/tonyli15-sglang055-qwen25-3b-agg-n50-c8.jsonl",
                ),
            ],
        ),
        *_one(
            "llama-bench",
            [
                ADAPTERS / "llama-bench.jsonl",
                ADAPTERS / "llama-bench.csv",
                ADAPTERS / "llama-batched-bench.log",
                *_real(
                    "llama-bench/brayniac-rtx4090-b5606-pp8192-tg1280.json",
                    "llama-bench/kyuz0-8060s-vulkan-radv-glm47flash-q8-markdown.log",
                    "llama-bench/lhl-8060s-rocm-quick-test-jsonl-with-stderr-lines.jsonl",
                ),
            ],
        ),
        *_one(
            "guidellm",
            _real(
                "guidellm/guidellm-v02-test-asset-benchmarks_stripped.json",
                "guidellm/guidellm-v02-test-asset-benchmarks_stripped.yaml",
            ),
        ),
        *_one(
            "aiperf",
            _real(
                "aiperf/akamaslabs-aiperf0.11-qwen3-4b-conc16-profile_export_aiperf.csv",
                "aiperf/akamaslabs-aiperf0.11-qwen3-4b-conc16-profile_export_aiperf.json",
                "aiperf/anud18-aiperf-qwen3vl-c2-profile_export-first2records-excerpt.jsonl",
                "aiperf/databloom-aiperf-qwen35-4b-gguf-c1-all-timeouts-profile_export.jsonl",
            ),
        ),
        *_one("genai-perf", [ADAPTERS / "genai-perf-profile_export.json"]),
        Seed("llmperf", tuple(llmperf), target=0),
        Seed("llmperf", tuple(llmperf), target=1),
        Seed("custom", custom, target=0, args=custom_args),
        Seed("custom", custom, target=1, args=custom_args),
    ]
    return [s for s in seeds if all(p.is_file() for p in s.files)]


SEEDS = all_seeds()
#: Every adapter's family (a family whose real files are absent is skipped, not dropped).
FAMILIES = (
    "native", "vllm", "sglang", "llama-bench", "guidellm", "aiperf", "genai-perf", "llmperf",
    "custom",
)  # fmt: skip
