"""A requested length: ``N`` or ``N±sd`` (also ``N:sd``, ``N+-sd``) tokens, each request's
drawn from a normal distribution, rounded and at least 1."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from reporter.errors import UsageError

#: Largest synthetic prompt or output length accepted (far above any context window).
MAX_LENGTH = 1_000_000

_LENGTH = re.compile(r"^\s*(\d+)\s*(?:(?:±|\+-|\+/-|:)\s*(\d+(?:\.\d*)?)\s*)?$")


@dataclass(frozen=True)
class Length:
    """A requested length: ``mean`` tokens, each request drawn from N(mean, sd²) when sd > 0."""

    mean: int
    sd: float = 0.0

    def draw(self, rng: np.random.Generator, n: int) -> list[int]:
        if self.sd <= 0:
            return [self.mean] * n
        values = np.rint(rng.normal(self.mean, self.sd, n))
        return [int(v) for v in np.clip(values, 1, MAX_LENGTH)]

    def text(self) -> str:
        return f"{self.mean}" if self.sd <= 0 else f"{self.mean}±{self.sd:g}"


def parse_length(text: str, option: str) -> Length:
    """``N``, ``N±sd``, ``N:sd`` or ``N+-sd`` → Length; a usage error otherwise."""
    m = _LENGTH.match(text)
    if m is None:
        raise UsageError(f"{option} {text!r}; expected tokens, or tokens±sd, e.g. 256 or 256:32")
    mean, sd = int(m.group(1)), float(m.group(2) or 0)
    if not 1 <= mean <= MAX_LENGTH:
        raise UsageError(f"{option} {text!r}; expected from 1 to {MAX_LENGTH:,} tokens")
    if not math.isfinite(sd) or sd > mean:
        raise UsageError(f"{option} {text!r}; expected a standard deviation of at most {mean}")
    return Length(mean, sd)
