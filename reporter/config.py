"""Thresholds: named constants with their reasons, overridable from a TOML file."""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from reporter.errors import UsageError
from reporter.ingest.limits import read_bytes


@dataclass(frozen=True)
class Threshold:
    """A number a rule decides by, with the reason it has this value.

    Valid values are finite, above `low` and at most `high` (a share is at most 1);
    `load` refuses the others.
    """

    name: str
    default: float
    reason: str
    low: float = 0.0
    high: float = math.inf

    def valid(self, value: float) -> bool:
        return math.isfinite(value) and self.low < value <= self.high

    def range_text(self) -> str:
        text = f"a finite number above {self.low:g}"
        return text if math.isinf(self.high) else f"{text} and at most {self.high:g}"


THRESHOLDS: dict[str, Threshold] = {}


def threshold(
    name: str, default: float, reason: str, *, low: float = 0.0, high: float = math.inf
) -> Threshold:
    """Declare a threshold (rule modules call this at import); by default valid when > 0."""
    t = Threshold(name, default, reason, low, high)
    if not t.valid(default):
        raise ValueError(f"threshold {name}: default {default!r}; expected {t.range_text()}")
    THRESHOLDS[name] = t
    return t


@dataclass(frozen=True)
class Config:
    """Overrides of thresholds by name; everything else takes its default."""

    overrides: dict[str, float] = field(default_factory=dict)

    def __getitem__(self, t: Threshold) -> float:
        return self.overrides.get(t.name, t.default)

    @classmethod
    def load(cls, path: str | Path | None, known: dict[str, Threshold]) -> Config:
        """Read `[thresholds]` from a TOML file: `flat_growth = 1.3`.

        `known` is every declared threshold: the modules that declare them (the rules and
        the analysis they read) sit above this one, so the caller that has imported them
        passes them (`reporter.rules.load_config`).
        """
        if path is None:
            return cls()
        table = _thresholds_table(str(path))
        overrides: dict[str, float] = {}
        for name, value in table.items():
            if name not in known:
                names = ", ".join(sorted(known))
                raise UsageError(f"{path}: unknown threshold {name!r}; expected one of {names}")
            t = known[name]
            if isinstance(value, bool) or not isinstance(value, int | float):
                shown = type(value).__name__ if isinstance(value, list | dict) else repr(value)
                raise UsageError(f"{path}: threshold {name} is {shown}; expected a number")
            number = float(value) if abs(value) < 1e308 else math.inf  # no OverflowError
            if not t.valid(number):
                shown = (
                    repr(value) if len(repr(value)) <= 40 else f"a {len(str(value))}-digit number"
                )
                raise UsageError(f"{path}: threshold {name} is {shown}; expected {t.range_text()}")
            overrides[name] = number
        return cls(overrides)


def _thresholds_table(path: str) -> dict[str, object]:
    """The `[thresholds]` table of a TOML file; every way the file can be wrong is worded."""
    expected = "expected [thresholds] name = number"
    try:
        data = read_bytes(path, "config")
    except OSError as exc:
        raise UsageError(f"{path}: cannot read the config file: {exc.strerror}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise UsageError(
            f"{path}:{line}: byte {data[exc.start]:#04x} is not UTF-8; expected a UTF-8 TOML file"
        ) from None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path}: not valid TOML: {exc}; {expected}") from None
    except RecursionError:
        raise UsageError(f"{path}: not valid TOML: nested too deeply; {expected}") from None
    except ValueError:  # an integer of more digits than Python converts (4,300)
        raise UsageError(f"{path}: not valid TOML: a number too long to read; {expected}") from None
    table = doc.get("thresholds", {})
    if not isinstance(table, dict):
        raise UsageError(f"{path}: thresholds is a {type(table).__name__}; {expected}")
    return table
