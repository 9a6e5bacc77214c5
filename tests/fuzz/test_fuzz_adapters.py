"""Every adapter's records, broken: the CLI audits them or refuses them cleanly.

One property per adapter family (slow: CI runs them at the profile's example count) and one
quick sample across all families for the default lane.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fuzz.harness import audit, check, invoke, run_property, violated
from tests.fuzz.mutate import mutated
from tests.fuzz.seeds import FAMILIES, SEEDS, Seed

#: What is run on a broken file: the audit (strict or lenient), validate, convert.
COMMANDS = ("audit", "audit", "audit --lenient", "validate", "convert")


def exercise(seed: Seed, data: bytes, command: str) -> None:
    with tempfile.TemporaryDirectory(prefix="fuzz-") as tmp:
        folder = Path(tmp)
        args = seed.lay_out(folder, data)
        if command.startswith("audit"):
            audit(args[:1], *args[1:], *command.split()[1:])
        elif command == "validate":
            check(invoke(["validate", *args]))
        else:
            out = folder / "converted.jsonl"
            converted = invoke(["convert", *args, "--to", str(out)])
            check(converted)
            # what convert wrote is a native trace: the audit reads it, never refuses it
            if converted.code == 0 and audit([out]) is None:
                violated(f"convert wrote a trace that the audit refuses ({seed.family})", converted)


def seeds_of(family: str) -> list[Seed]:
    found = [s for s in SEEDS if s.family == family]
    if not found:
        pytest.skip(f"no seed file of {family} here (../shared/real-traces absent?)")
    return found


@st.composite
def case(draw: st.DrawFn, seeds: list[Seed]) -> tuple[Seed, bytes, str]:
    seed = draw(st.sampled_from(seeds))
    data = draw(mutated(seed.files[seed.target].read_bytes(), seed.kind()))
    return seed, data, draw(st.sampled_from(COMMANDS))


@pytest.mark.slow
@pytest.mark.parametrize("family", FAMILIES)
def test_broken_records_end_cleanly(family: str) -> None:
    seeds = seeds_of(family)

    @given(data=st.data())
    def prop(data: st.DataObject) -> None:
        exercise(*data.draw(case(seeds), label="case"))

    run_property(prop)


@pytest.mark.slow
def test_broken_records_of_any_adapter_end_cleanly() -> None:
    """The default lane's sample: a few broken files across every family."""

    @settings(max_examples=12)
    @given(data=st.data())
    def prop(data: st.DataObject) -> None:
        exercise(*data.draw(case(SEEDS), label="case"))

    run_property(prop)


@pytest.mark.slow
@pytest.mark.parametrize("seed", SEEDS, ids=lambda s: f"{s.family}:{s.name}")
def test_every_seed_is_valid(seed: Seed) -> None:
    """The unbroken seeds audit (exit 0 or 1): a mutation is then what breaks them."""
    with tempfile.TemporaryDirectory(prefix="fuzz-") as tmp:
        args = seed.lay_out(Path(tmp), seed.files[seed.target].read_bytes())
        if audit(args[:1], *args[1:]) is None:
            pytest.skip(f"{seed.name} is refused unbroken: its format is not read yet")


NATIVE = [s for s in SEEDS if s.family == "native"]


def duplicated_request(seed: Seed, which: int, copies: int, lenient: bool) -> None:
    """A request line written more than once is never counted twice: refused (exit 2), or
    with --lenient audited with the copies skipped and counted."""
    lines = seed.files[seed.target].read_bytes().splitlines(keepends=True)
    requests = [i for i, line in enumerate(lines) if b'"kind":"request"' in line.replace(b" ", b"")]
    at = requests[which % len(requests)]
    data = b"".join([*lines[: at + 1], *[lines[at]] * copies, *lines[at + 1 :]])
    with tempfile.TemporaryDirectory(prefix="fuzz-") as tmp:
        args = seed.lay_out(Path(tmp), data)
        verdict = audit(args, *(["--lenient"] if lenient else []))
        if verdict is None:
            return  # refused, with a message: the property held
        skipped = sum(inp.get("skipped") or 0 for inp in verdict["inputs"])
        if not lenient or skipped < copies:
            violated(
                f"a request line written {copies + 1} times was audited "
                f"({'lenient, ' if lenient else ''}{skipped} skipped): {seed.name} line {at + 1}"
            )


@pytest.mark.slow
def test_duplicated_request_lines_are_never_counted_twice() -> None:
    @settings(max_examples=20)
    @given(
        seed=st.sampled_from(NATIVE),
        which=st.integers(0, 100),
        copies=st.integers(1, 3),
        lenient=st.booleans(),
    )
    def prop(seed: Seed, which: int, copies: int, lenient: bool) -> None:
        duplicated_request(seed, which, copies, lenient)

    run_property(prop)
