"""Thresholds: named constants with their reasons, overridable from a TOML file."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from reporter.errors import UsageError


@dataclass(frozen=True)
class Threshold:
    """A number a rule decides by, with the reason it has this value."""

    name: str
    default: float
    reason: str


THRESHOLDS: dict[str, Threshold] = {}


def threshold(name: str, default: float, reason: str) -> Threshold:
    """Declare a threshold (rule modules call this at import)."""
    t = Threshold(name, default, reason)
    THRESHOLDS[name] = t
    return t


@dataclass(frozen=True)
class Config:
    """Overrides of thresholds by name; everything else takes its default."""

    overrides: dict[str, float] = field(default_factory=dict)

    def __getitem__(self, t: Threshold) -> float:
        return self.overrides.get(t.name, t.default)

    @classmethod
    def load(cls, path: str | Path | None) -> Config:
        """Read `[thresholds]` from a TOML file: `flat_growth = 1.3`."""
        if path is None:
            return cls()
        try:
            with Path(path).open("rb") as f:
                data = tomllib.load(f)
        except OSError as exc:
            raise UsageError(f"{path}: cannot read the config file: {exc.strerror}") from None
        except tomllib.TOMLDecodeError as exc:
            raise UsageError(
                f"{path}: not valid TOML: {exc}; expected [thresholds] name = number"
            ) from None
        table = data.get("thresholds", {})
        overrides: dict[str, float] = {}
        import reporter.rules  # noqa: F401  (declares every threshold)

        for name, value in table.items():
            if name not in THRESHOLDS:
                known = ", ".join(sorted(THRESHOLDS))
                raise UsageError(f"{path}: unknown threshold {name!r}; expected one of {known}")
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise UsageError(f"{path}: threshold {name} is {value!r}; expected a number")
            overrides[name] = float(value)
        return cls(overrides)
