"""Shared fixtures: the repository's folders and a one-call audit of trace files."""

from __future__ import annotations

import json
import os
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from reporter import api
from reporter.render import charts, drawing
from reporter.verdict import Verdict

ROOT = Path(__file__).resolve().parents[1]
TRACES = ROOT / "traces"
FIXTURES = ROOT / "tests" / "fixtures"
SHARED = ROOT.parent / "shared"

# Hypothesis profiles. Examples per property: BENCHREPORT_HYPOTHESIS_EXAMPLES, else 60 in CI
# (reproducible: derandomized, no example database) and hypothesis' 100 elsewhere. Tests that
# set max_examples themselves keep theirs. HYPOTHESIS_PROFILE=ci|dev|deep picks one by name;
# `deep` is for a long local hunt (1,000 examples). No deadline: an audit takes tens of
# milliseconds, more on a loaded machine, and a slow example is not a failing one.
_EXAMPLES = os.environ.get("BENCHREPORT_HYPOTHESIS_EXAMPLES")
_SLOW_OK = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
settings.register_profile(
    "ci",
    parent=settings.get_profile("ci"),
    max_examples=int(_EXAMPLES or 60),
    deadline=None,
    suppress_health_check=_SLOW_OK,
)
settings.register_profile(
    "dev", max_examples=int(_EXAMPLES or 100), deadline=None, suppress_health_check=_SLOW_OK
)
settings.register_profile(
    "deep", max_examples=int(_EXAMPLES or 1000), deadline=None, suppress_health_check=_SLOW_OK
)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
)


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


@pytest.hookimpl(wrapper=True)
def pytest_cmdline_main(config: pytest.Config) -> Generator[None, object, object]:
    """A run of the whole suite spreads over the cores when pytest-xdist is installed.

    `pytest` and `pytest -m "not slow"` (no test paths named, no -k) get `-n auto
    --dist loadgroup`, as if typed; naming files or tests, -k, or -n 0 runs in one process
    (`-n N` picks the count). Tests that must not overlap share an `xdist_group`.
    """
    if (
        config.pluginmanager.hasplugin("xdist")
        and getattr(config.option, "numprocesses", 0) is None
        and not os.environ.get("PYTEST_XDIST_WORKER")
        and config.args_source == pytest.Config.ArgsSource.TESTPATHS
        and not config.option.keyword
        and not config.option.usepdb
        and not config.option.collectonly
        and _cores() > 1
    ):
        config.option.numprocesses = "auto"
        if config.option.dist == "no":
            config.option.dist = "loadgroup"
    return (yield)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """Tell each worker that the run groups by `xdist_group`: a worker parses the command
    line again, which does not hold the `--dist loadgroup` set above, and without it a
    worker leaves its tests' groups out of their ids, so the groups are spread."""
    node.workerinput["benchreport_loadgroup"] = node.config.option.dist == "loadgroup"


def pytest_configure(config: pytest.Config) -> None:
    workerinput = getattr(config, "workerinput", None)
    if isinstance(workerinput, dict) and workerinput.get("benchreport_loadgroup"):
        config.option.dist = "loadgroup"
        config.option.loadgroup = True


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="rewrite the files in tests/golden/ from the current output (accept intended changes)",
    )
    parser.addoption(
        "--golden-exact",
        action="store_true",
        default=False,
        help="compare the charts of HTML goldens byte for byte, not by their outline",
    )


def float_bits(values: Any) -> list[int]:
    """Each value's bits as float64, every NaN alike: the comparison that holds a fast path to
    the code it replaces bit for bit (the sign of a zero included; numpy hands back whichever
    NaN it met last, and a NaN is written as one)."""
    import numpy as np

    values = np.asarray(values, dtype=np.float64)
    return np.where(np.isnan(values), np.nan, values).view(np.int64).tolist()


def assert_aggregates_as_group_by(frame: Any) -> None:
    """metrics.request_aggregates of `frame` is its pandas group-by reference, frame for frame
    and bit for bit, column by column."""
    import numpy as np
    import pandas as pd

    from reporter import metrics

    with np.errstate(all="ignore"):  # inf − inf: NaN, as pandas gives it
        expected = metrics._request_aggregates_by_group_by(frame)
        found = metrics.request_aggregates(frame)
    pd.testing.assert_frame_equal(found, expected, check_exact=True)
    for column in expected.columns:
        assert float_bits(found[column].to_numpy()) == float_bits(expected[column].to_numpy()), (
            column
        )


def finding(verdict: Verdict | dict[str, Any], code: str, subject: str) -> dict[str, Any]:
    """The one finding of `code` about `subject`, from a verdict or its JSON dict."""
    __tracebackhide__ = True
    data = verdict.to_dict() if isinstance(verdict, Verdict) else verdict
    found = [f for f in data["findings"] if f["code"] == code and f["subject"] == subject]
    if len(found) != 1:
        subjects = sorted({f["subject"] for f in data["findings"] if f["code"] == code})
        pytest.fail(f"{len(found)} findings of {code} about {subject!r}; subjects: {subjects}")
    return found[0]


def run_of(verdict: Verdict | dict[str, Any], run_id: str) -> dict[str, Any]:
    __tracebackhide__ = True
    data = verdict.to_dict() if isinstance(verdict, Verdict) else verdict
    found = [r for r in data["runs"] if r["id"] == run_id]
    if len(found) != 1:
        pytest.fail(f"no run {run_id!r}; runs: {[r['id'] for r in data['runs']]}")
    return found[0]


@pytest.fixture(scope="session")
def traces_audited() -> Verdict:
    """The audit of every shipped trace at once, as the README's command runs it (from the
    project's folder, the paths relative to it); built once per worker, read only."""
    root = TRACES.parent
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(root)
        return api.audit([str(p.relative_to(root)) for p in sorted(TRACES.glob("*.jsonl"))])


@pytest.fixture(scope="session")
def traces_verdict(traces_audited: Verdict) -> dict[str, Any]:
    """`traces_audited` as a JSON dict."""
    return traces_audited.to_dict()


@pytest.fixture(scope="session")
def trace_audit() -> Any:
    """Audit one shipped trace by name (cached), as a JSON dict."""
    cache: dict[str, dict[str, Any]] = {}

    def audit(name: str) -> dict[str, Any]:
        if name not in cache:
            cache[name] = api.audit([TRACES / name]).to_dict()
        return cache[name]

    return audit


_DRAW_CHART = charts.to_svg


@pytest.fixture(autouse=True, scope="session")
def charts_drawn_once() -> Iterator[None]:
    """Each distinct chart is drawn by vl-convert once per session, then reused.

    Drawing is most of the cost of a report, and the goldens, the HTML tests and the CLI tests
    draw the same charts again and again. A drawing depends on nothing but its spec and its id
    (`test_same_input_same_bytes` checks that with `real_chart_drawing`), so reusing one
    changes no output. A spec that cannot be drawn raises again each time.
    """
    drawn: dict[tuple[str, str], str] = {}

    def draw_once(spec: dict[str, Any], chart_id: str) -> str:
        key = (json.dumps(spec, sort_keys=True, default=str), chart_id)
        if key not in drawn:
            drawn[key] = _DRAW_CHART(spec, chart_id)
        return drawn[key]

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(charts, "to_svg", draw_once)
        yield


@pytest.fixture(autouse=True, scope="session")
def charts_drawn_in_process() -> Iterator[None]:
    """No helper process draws charts in the tests (the CLI starts two per report,
    reporter.render.drawing): the session's drawings above are reused instead.
    tests/report/test_drawing.py starts helpers itself."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(drawing, "WORKERS", 0)
        yield


@pytest.fixture
def real_chart_drawing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Draw every chart of this test with vl-convert, none from the session's drawings."""
    monkeypatch.setattr(charts, "to_svg", _DRAW_CHART)
