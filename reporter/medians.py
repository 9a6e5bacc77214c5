"""The median `np.median` takes, from one partition instead of its three.

`np.median` partitions an array around both middle positions and its last one (to find a
NaN), and numpy's partition around several positions costs about five times one around a
single position (0.9 ms against 0.2 ms for 62,500 values). The two middle values of an even
count are the value at the upper middle position and the largest value below it, so one
partition around the upper middle gives both. The figures are those of `np.median` to the
last bit: the same two values, added and halved as it does.
"""

from __future__ import annotations

import math

import numpy as np


def median(values: np.ndarray) -> float:
    """The median of the values that are not NaN (NaN if none), as `np.median` gives it."""
    values = np.asarray(values, dtype="float64")
    missing = np.isnan(values)
    if missing.any():
        values = values[~missing]
    count = len(values)
    if not count:
        return math.nan
    half = count // 2
    part = np.partition(values, half)
    middle = part[half] if count % 2 else (part[:half].max() + part[half]) / 2
    if middle == 0:
        # -0.0 and 0.0 tie in a partition: which of them np.median picks is its own to say
        return float(np.median(values))
    return float(middle)
