"""A quantile sketch with a relative error bound (the DDSketch construction), fed whole arrays.

Values above zero fall in logarithmic buckets: bucket i holds (γ^(i-1), γ^i] with
γ = (1 + α) / (1 - α), and a bucket stands for the value 2γ^i / (γ + 1), which is within a
relative α of every value the bucket holds. So any quantile read from the sketch is within α
(relative) of the value of the same rank in the data (Masson, Rim and Lee, "DDSketch", VLDB
2019). Zeros are counted apart (a zero TTFT is exact). Memory is one counter per occupied
bucket: values between 1 µs and 10^6 need at most log(10^12) / log(γ) ≈ 1,400 of them at α = 1%,
whatever the number of values.

The `ddsketch` package implements the same sketch, but adds one value per Python call; a
batch of a million values here is one numpy pass.
"""

from __future__ import annotations

import math

import numpy as np

#: Relative accuracy of every quantile read from a sketch (1%).
RELATIVE_ACCURACY = 0.01


class QuantileSketch:
    """Counts of positive values in logarithmic buckets, plus a count of zeros."""

    def __init__(self, alpha: float = RELATIVE_ACCURACY) -> None:
        self.alpha = alpha
        self.gamma = (1 + alpha) / (1 - alpha)
        self._log_gamma = math.log(self.gamma)
        self.buckets: dict[int, int] = {}
        self.zeros = 0
        self.count = 0

    def add(self, values: np.ndarray) -> None:
        """Add the finite values of an array that are ≥ 0 (NaN is skipped: not a value)."""
        values = values[np.isfinite(values)]
        if len(values) == 0:
            return
        if (values < 0).any():
            raise ValueError("the sketch holds values ≥ 0")
        positive = values[values > 0]
        self.zeros += len(values) - len(positive)
        self.count += len(values)
        if len(positive):
            index = np.ceil(np.log(positive) / self._log_gamma).astype(np.int64)
            keys, counts = np.unique(index, return_counts=True)
            for key, n in zip(keys.tolist(), counts.tolist(), strict=True):
                self.buckets[key] = self.buckets.get(key, 0) + n

    def merge(self, other: QuantileSketch) -> None:
        """Add another sketch of the same accuracy (a sketch per batch, or per machine)."""
        assert other.alpha == self.alpha, "sketches of one accuracy merge"
        self.zeros += other.zeros
        self.count += other.count
        for key, n in other.buckets.items():
            self.buckets[key] = self.buckets.get(key, 0) + n

    def _value(self, key: int) -> float:
        return 2 * self.gamma**key / (self.gamma + 1)

    def quantile(self, q: float) -> float:
        """The value of rank ⌊q (n - 1)⌋ (within α relative of the true one); NaN when empty."""
        if self.count == 0:
            return math.nan
        return self._at_rank(math.floor(q * (self.count - 1)))

    def median(self) -> float:
        """The median as pandas gives it (the mean of the two middle values for an even count),
        each middle value read from the sketch: within α (relative) of the exact median."""
        if self.count == 0:
            return math.nan
        if self.count % 2:
            return self.quantile(0.5)
        low_rank = (self.count - 1) // 2
        return (self._at_rank(low_rank) + self._at_rank(low_rank + 1)) / 2

    def _at_rank(self, rank: int) -> float:
        if rank < self.zeros:
            return 0.0
        seen = self.zeros
        for key in sorted(self.buckets):
            seen += self.buckets[key]
            if seen > rank:
                return self._value(key)
        return self._value(max(self.buckets))
