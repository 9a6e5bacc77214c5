"""Every real file through the CLI, with and without claims: no traceback, ever.

Each file of the shared real traces (all folders, SOURCES.md aside) is audited with
`audit F --no-html --json -`, alone, with a generic claim, and with the claim published next to
it (SOURCES.md, "Claims published next to the files (round 2)") where there is one. The exit
code is 0 or 1 with strict JSON on stdout, or 2 with a clean `path: …` message; never an
internal error, never a traceback.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from reporter.cli import main
from tests.adapters.conftest import REAL, audited_alone

FILES = (
    sorted(p for p in REAL.rglob("*") if p.is_file() and p.name != "SOURCES.md")
    if REAL.is_dir()
    else []
)
GENERIC_CLAIM = "aggregate=100 tok/s N=4"

LHL_HIP = "llama-bench/lhl-8060s-rocm-llama32-1b-default-hip-depth-sweep.jsonl"
LHL_WMMA = "llama-bench/lhl-8060s-rocm-llama32-1b-default-rocwmma-depth-sweep.jsonl"
BOWENWAN6 = "sglang/bowenwan6-benchserving-vllm-backend-c16-repeats"

#: The claims of SOURCES.md on their files: (files, claim, verdict, recomputed, precision).
PUBLISHED: list[tuple[list[str], str, str, float, float]] = [
    (
        [f"{BOWENWAN6}/caseC_batched_vllm_rep{i}.json" for i in (1, 2, 3)],
        "aggregate=2163.3 tok/s N=16",
        "supported",
        2163.3,
        0.05,
    ),
    ([LHL_HIP], "aggregate=4703.28 tok/s N=1 run=pp512", "supported", 4703.28, 0.01),
    ([LHL_HIP], "aggregate=195.65 tok/s N=1 run=tg128", "supported", 195.65, 0.01),
    ([LHL_WMMA], "aggregate=4884.42 tok/s N=1 run=pp512", "supported", 4884.42, 0.01),
    ([LHL_WMMA], "aggregate=193.01 tok/s N=1 run=tg128", "supported", 193.01, 0.01),
    (
        ["aiperf/databloom-aiperf-llama32-3b-gguf-c1-dualhost-half-timeouts-profile_export.jsonl"],
        "aggregate=0.58 tok/s N=1",
        "supported",
        0.52,
        0.005,
    ),
    (
        ["llmperf/leaderboard-bedrock_70b_individual_responses.json"],
        "aggregate=21 tok/s N=5",
        "incomparable",
        62.87,
        0.01,
    ),
    (
        ["llmperf/leaderboard-bedrock_70b_summary.json"],
        "aggregate=21 tok/s N=5",
        "incomparable",
        62.87,
        0.01,
    ),
    (
        ["guidellm/rsevilla87-guidellm-qwen3-06b-constant-10rps.json"],
        "aggregate=1251.54 tok/s",
        "supported",
        1249.9,
        0.05,
    ),
]


def _strict(text: str) -> Any:
    """JSON as the standard says: NaN and Infinity are not numbers there."""

    def refuse(name: str) -> None:
        raise ValueError(f"{name} in the JSON verdict")

    return json.loads(text, parse_constant=refuse)


def _audit(files: list[Path], *claims: str) -> tuple[int, Any]:
    args = ["audit", *map(str, files), "--no-html", "--json", "-"]
    for claim in claims:
        args += ["--claim", claim]
    result = CliRunner().invoke(main, args)
    where = f"{' '.join(map(str, files))} {claims}"
    assert result.exit_code in (0, 1, 2), f"{where}: exit {result.exit_code}"
    assert "Traceback" not in result.output and "Traceback" not in result.stderr, where
    assert "internal error" not in result.stderr, f"{where}: {result.stderr}"
    if result.exit_code == 2:
        first = result.stderr.splitlines()[0] if result.stderr else ""
        assert first.startswith(str(files[0]) + ":"), f"{where}: unclean refusal {first!r}"
        assert result.stdout == ""
        return 2, None
    verdict = _strict(result.stdout)
    assert verdict["format_version"] == 2
    return result.exit_code, verdict


#: Real files whose audits take seconds: their sweep runs in the full lane.
SLOW_FILES = {"llama-bench/orionzhen-7900xtx-vulkan-radv-gptoss20b-b7951-depth-sweep.json"}


@pytest.mark.skipif(not FILES, reason="../shared/real-traces is absent")
@pytest.mark.parametrize(
    "path",
    [
        pytest.param(p, marks=pytest.mark.slow) if str(p.relative_to(REAL)) in SLOW_FILES else p
        for p in FILES
    ],
    ids=[str(p.relative_to(REAL)) for p in FILES],
)
def test_every_real_file_is_audited_or_refused_cleanly(path: Path) -> None:
    # alone through the library (audited once per session, shared with the convert round
    # trip), with claims through the command line
    alone = audited_alone(path)
    code = 2 if alone is None else 0
    runs = [r["id"] for r in alone["runs"]] if alone is not None else []
    # every metric, and a speed-up between the file's own first two runs when it has two
    claims = [GENERIC_CLAIM, "stream=50 tok/s N=1", "scaling=2x N=4"]
    claims.append(
        f"speedup=1.5 runs={runs[0]},{runs[1]}" if len(runs) > 1 else "speedup=1.5 runs=a,b"
    )
    code_claimed, claimed = _audit([path], *claims)
    assert (code == 2) == (code_claimed == 2), "a claim changes whether the file can be read"
    if claimed is not None:
        assert len(claimed["claims"]) == len(claims)
        for claim in claimed["claims"]:
            assert claim["verdict"] in {
                "supported",
                "understated",
                "insufficient-data",
                "incomparable",
                "serial",
                "inflated",
            }
            assert claim["reason"], "every claim verdict says why"
            if claim["verdict"] not in ("insufficient-data", "incomparable"):
                assert claim["recomputed"] is not None and claim["factor"] is not None
        assert alone is not None and alone["runs"] == claimed["runs"]


@pytest.mark.skipif(not FILES, reason="../shared/real-traces is absent")
@pytest.mark.parametrize(
    "names, claim, verdict, recomputed, precision",
    PUBLISHED,
    ids=[f"{names[0].split('/')[-1]}:{claim}" for names, claim, *_ in PUBLISHED],
)
def test_the_published_claims_get_their_verdicts(
    names: list[str], claim: str, verdict: str, recomputed: float, precision: float
) -> None:
    code, out = _audit([REAL / n for n in names], claim)
    assert code in (0, 1)
    judged = out["claims"][0]
    assert judged["verdict"] == verdict, judged["reason"]
    assert judged["recomputed"] == pytest.approx(recomputed, abs=precision)


FOLDERS = sorted({p.parent for p in FILES})


@pytest.mark.slow
@pytest.mark.skipif(not FILES, reason="../shared/real-traces is absent")
@pytest.mark.parametrize("folder", FOLDERS, ids=[str(f.relative_to(REAL)) for f in FOLDERS])
def test_the_readable_files_of_a_folder_audited_together(folder: Path) -> None:
    # As a user passes a glob: every file of the folder that is readable alone, in one audit.
    readable = [p for p in FILES if p.parent == folder and _audit([p])[0] != 2]
    if not readable:
        pytest.skip("no readable file")
    code, verdict = _audit(readable, GENERIC_CLAIM, "speedup=2 runs=a,b")
    assert code in (0, 1)
    assert [c["verdict"] for c in verdict["claims"]][1] == "insufficient-data"
