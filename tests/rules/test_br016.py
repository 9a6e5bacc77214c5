"""BR016 single-run: runs whose load the files do not state are not called repeats."""

from __future__ import annotations

from pathlib import Path

from reporter import api


def _aiperf_csv(duration: float, tokens: int = 24723, requests: int = 100) -> str:
    """An AIPerf summary CSV (profile_export_aiperf.csv), which records no concurrency: the
    shape of a c1 and a c2 run written to folders named c1/ and c2/."""
    return (
        "Metric,avg,min,max,sum,p1,p5,p10,p25,p50,p75,p90,p95,p99,std\n"
        f"Request Latency (ms),27572.77,3386.96,65396.94,{27572.77 * requests:.2f},"
        "1,1,1,1,27561.93,1,1,1,1,1\n"
        f"Time to First Token (ms),10970.88,538.55,32093.94,{10970.88 * requests:.2f},"
        "1,1,1,1,10847.18,1,1,1,1,1\n"
        f"Output Sequence Length (tokens),{tokens / requests:.2f},10.00,740.00,{tokens:.2f},"
        "1,1,1,1,238.50,1,1,1,1,1\n"
        "\nMetric,Value\n"
        f"Benchmark Duration (sec),{duration}\n"
        f"Output Token Throughput (tokens/sec),{tokens / duration:.2f}\n"
        f"Request Count,{requests:.2f}\n"
        f"Total Output Tokens (tokens),{tokens:.2f}\n"
    )


def _two_runs_of_unstated_load(tmp_path: Path) -> list[Path]:
    paths = []
    for folder, duration in (("c1", 2757.64), ("c2", 3132.16)):
        (tmp_path / folder).mkdir()
        path = tmp_path / folder / "profile_export_aiperf.csv"
        path.write_text(_aiperf_csv(duration))
        paths.append(path)
    return paths


def test_runs_whose_load_is_not_stated_are_not_called_repeats(tmp_path: Path) -> None:
    # the same 100 requests at one and at two concurrent (8.97 and 7.89 tok/s): the files
    # state no concurrency, so nothing in them says the two runs repeat one point
    verdict = api.audit(_two_runs_of_unstated_load(tmp_path), select=["BR016"])
    (f,) = [f for f in verdict.findings if f.code == "BR016"]
    assert f.outcome == "undecidable"
    assert f.message.startswith(
        "2 runs record no load (no concurrency or request rate): whether they repeat one point "
        "or are points of a sweep the files do not say"
    )


def test_a_claim_at_an_unstated_load_does_not_call_the_runs_repeats(tmp_path: Path) -> None:
    verdict = api.audit(
        _two_runs_of_unstated_load(tmp_path), claim_texts=["aggregate=7.89 tok/s N=2"]
    )
    (claim,) = verdict.claims
    assert claim.check.arithmetic[0] == (
        "the trace does not state N; the claim's N=2 is taken as said"
    )
    assert claim.check.arithmetic[-1] == "median of 2 runs the files record alike = 8.43 tok/s"
