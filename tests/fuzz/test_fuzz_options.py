"""The audit's options, hostile: claims, a thresholds config, rule selection, --fail-on.

Same property as every fuzz test (exit 0/1/2, no traceback, strict finite JSON, no negative
time), and two more: a figure that is not a finite number (a claim of 1e309, a threshold of
nan or inf) is refused with exit 2 rather than audited, and so is a negative threshold.
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reporter.rules  # noqa: F401  (declares every threshold)
from reporter.config import THRESHOLDS
from tests.fuzz.harness import check, invoke, run_property, violated
from tests.fuzz.mutate import hostile_text

ROOT = Path(__file__).resolve().parents[2]
TRACES = [ROOT / "traces" / n for n in ("case-a-ladder.jsonl", "case-b-repeats.jsonl")]
RUN_IDS = ["a-retest-n1", "a-retest-n4", "b-n1-r0", "nope", ""]

#: Number texts as a user may type them, good and bad.
number_text = st.one_of(
    st.floats(min_value=0, max_value=1e6, allow_nan=False).map(lambda v: f"{v:g}"),
    st.integers(0, 10**6).map(str),
    st.sampled_from(
        ["0", "-1", "1e309", "1e308", "nan", "inf", "-inf", "Infinity", "1e-320", "9" * 400,
         "9" * 5000, ".5", "5.", "1e", "0x10", "1_000", "٣", "1,5", ""]
    ),
)  # fmt: skip


@st.composite
def claim_text(draw: st.DrawFn) -> str:
    """A --claim in the documented grammar with hostile parts, or free text."""
    if draw(st.integers(0, 9)) == 0:
        return draw(hostile_text)
    metric = draw(st.sampled_from(["aggregate", "stream", "speedup", "scaling", "AGGREGATE", "x"]))
    parts = [f"{metric}={draw(number_text)}{draw(st.sampled_from(['', 'x', '×', 'tok/s']))}"]
    optional = {
        "unit": st.sampled_from(["tok/s", "t/s", "x", "tokens/s"]),
        "N": number_text.map(lambda v: f"N={v}"),
        "method": st.sampled_from(["sum", "wall", "unknown", "SUM", ""]).map("method={}".format),
        "run": st.sampled_from(RUN_IDS).map(lambda v: f"run={v}"),
        "group": st.sampled_from(["case-a-retest", "g", ""]).map(lambda v: f"group={v}"),
        "runs": st.lists(st.sampled_from(RUN_IDS), max_size=3).map(lambda v: "runs=" + ",".join(v)),
        "id": hostile_text.map(lambda v: f"id={v.replace(' ', '')}"),
    }  # fmt: skip
    for key in draw(st.lists(st.sampled_from(sorted(optional)), max_size=4, unique=True)):
        parts.append(draw(optional[key]))
    return " ".join(draw(st.permutations(parts)))


toml_value = st.one_of(
    number_text.filter(lambda v: v not in ("", "٣", "1,5", "0x10")),
    st.sampled_from(
        ['"1.2"', "true", "[1, 2]", "{a = 1}", "[[[[1]]]]", "1979-05-27", "-0.0", "+inf", "-nan"]
    ),
)
EMPTY_KEY = '""'
threshold_name = st.one_of(st.sampled_from(sorted(THRESHOLDS)), st.sampled_from(["nope", ""]))


@st.composite
def config_text(draw: st.DrawFn) -> tuple[bytes, bool]:
    """A --config file, and whether it sets a threshold to a non-finite or negative number."""
    shape = draw(st.integers(0, 9))
    if shape == 0:
        return draw(
            st.sampled_from([b"thresholds = 1", b"thresholds = [1]", b"\xff\xfe[", b""])
        ), False
    lines = ["[thresholds]"]
    bad = False
    for name in draw(st.lists(threshold_name, min_size=1, max_size=4, unique=True)):
        value = draw(toml_value)
        lines.append(f"{name or EMPTY_KEY} = {value}")
        try:
            number = float(value)
        except ValueError:
            continue
        bad = bad or (name in THRESHOLDS and (not math.isfinite(number) or number < 0))
    if draw(st.booleans()):
        lines.append(f"[other]\nx = {draw(toml_value)}")
    return "\n".join(lines).encode(), bad


def non_finite_claim(texts: list[str]) -> bool:
    """Whether a claim's figure is a readable number that is not finite (1e309, 999…9e999)."""
    for text in texts:
        head = text.split()[0] if text.split() else ""
        key, _, value = head.partition("=")
        value = value.removesuffix("tok/s").rstrip("x×")
        if key.lower() in ("aggregate", "stream", "speedup", "scaling"):
            try:
                if not math.isfinite(float(value)):
                    return True
            except (ValueError, OverflowError):
                pass
    return False


def audit_with(trace: Path, options: list[str], config: bytes | None) -> tuple[Any, int]:
    with tempfile.TemporaryDirectory(prefix="fuzz-") as tmp:
        args = ["audit", str(trace), "--no-html", "--json", "-", *options]
        if config is not None:
            path = Path(tmp) / "thresholds.toml"
            path.write_bytes(config)
            args += ["--config", str(path)]
        outcome = invoke(args)
        return check(outcome, json_stdout=True), outcome.code


@st.composite
def options(draw: st.DrawFn) -> list[str]:
    opts: list[str] = []
    for text in draw(st.lists(claim_text(), max_size=3)):
        opts += ["--claim", text]
    prefix = st.one_of(
        st.sampled_from(["BR", "BR0", "BR00", "BR001", "BR999", "br003", "B"]), hostile_text
    )
    for flag in ("--select", "--ignore"):
        for value in draw(st.lists(prefix, max_size=2)):
            opts += [flag, value]
    if draw(st.booleans()):
        opts += ["--fail-on", draw(st.sampled_from(["error", "warning", "info", "never", "x", ""]))]
    opts += draw(st.sampled_from([[], ["--lenient"], ["-v"]]))
    return opts


def hostile_options(trace: Path, opts: list[str], config: tuple[bytes, bool] | None) -> None:
    _, code = audit_with(trace, opts, None if config is None else config[0])
    claims = [opts[i + 1] for i, o in enumerate(opts) if o == "--claim"]
    if non_finite_claim(claims) and code != 2:
        violated(f"a claim of a non-finite figure was audited (exit {code}): {claims}")
    if config is not None and config[1] and code != 2:
        violated(f"a non-finite or negative threshold was accepted (exit {code}): {config[0]!r}")


@pytest.mark.slow
def test_hostile_options_end_cleanly() -> None:
    @given(trace=st.sampled_from(TRACES), opts=options(), config=st.none() | config_text())
    def prop(trace: Path, opts: list[str], config: tuple[bytes, bool] | None) -> None:
        hostile_options(trace, opts, config)

    run_property(prop)


@pytest.mark.slow
def test_hostile_options_sample() -> None:
    """The default lane's sample: claims, selection and --fail-on on one trace."""

    @settings(max_examples=10)
    @given(opts=options())
    def prop(opts: list[str]) -> None:
        hostile_options(TRACES[0], opts, None)

    run_property(prop)
