"""Why two figures differ: the factors two runs differ in, and the ratio split into them.

METHOD.md §5 splits 606 ÷ 171 = 3.54 into stop mode (171.2 → 359.3, 2.10×) and content
(359.3 → 606.1, 1.69×) through a run that differs from each end in one factor; §6 splits a
2.36× speed-up into bytes read per token (1.52×) and achieved bandwidth (1.56×). This module
does both for any two runs of an audit: `compare()` lists every factor, `chain()` finds the
finest path of runs from one end to the other in which each step changes some of the
differing factors and nothing else, and `bandwidth_split()` divides a decode-rate ratio into
bytes per token × bandwidth when both runs carry the model's bytes per token.

BR012 (incomparable-runs) and `benchreport compare` read it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from reporter import features
from reporter.bandwidth import bytes_per_token, gb
from reporter.config import threshold
from reporter.errors import UsageError
from reporter.numbers import fmt, listed
from reporter.values import number

if TYPE_CHECKING:
    from rich.console import RenderableType

#: Lengths (prompt, context, requested output) within this fraction of each other are the same
#: (one threshold for `benchreport compare` and BR012, overridden by the same --config).
LENGTH_TOLERANCE = threshold(
    "comparable_length_tolerance",
    0.10,
    "prompt, context and output lengths within 10% change prefill and decode by a few "
    "percent, the run-to-run noise of METHOD §7; beyond it they change what is measured",
)

CONDITION = "condition"
SETUP = "setup"

#: A run's record as the factors read it: a Series of the run table, or a dict of the same
#: values (`fields`).
Record = pd.Series | Mapping[str, Any]


class _LazyRow:
    """A run's row of figures, looked up when first read (only a run that states no prompt
    length reads it, and a pandas row lookup costs more than every factor of a run)."""

    def __init__(self, frame: pd.DataFrame, key: str) -> None:
        self._frame, self._key = frame, key
        self._row: pd.Series | None = None

    def get(self, name: str, default: Any = None) -> Any:
        if self._row is None:
            self._row = row(self._frame, self._key)
        return self._row.get(name, default)


#: A run's row of figures (`stats`), or None when it has none.
StatsRow = pd.Series | Mapping[str, Any] | _LazyRow | None


@dataclass(frozen=True)
class Factor:
    """Something a measurement depends on.

    Conditions (stop mode, lengths, content, sampling) must match for two figures to be
    compared at all; setups (engine, hardware, speculation, N, model) are what a comparison is
    usually about, and one category of them may differ.
    """

    key: str
    label: str
    kind: str
    category: str
    get: Callable[[Record, StatsRow], Any]
    numeric: bool = False


def _str(value: Any) -> str | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    text = str(value)
    return None if text in ("", "unknown", "None", "nan") else text


def row(frame: pd.DataFrame, key: str) -> pd.Series:
    """One row of a frame indexed by run id, typed as a Series."""
    out = frame.loc[key]
    assert isinstance(out, pd.Series), f"{key!r} is not a unique index"
    return out


def cell(frame: pd.DataFrame, key: str, column: str) -> float:
    """A number of a frame indexed by run id; NaN when absent or not a number."""
    if key not in frame.index:
        return math.nan
    value = number(frame.at[key, column])
    return math.nan if value is None else value


class Cells:
    """`cell` of one frame, for many reads: its rows' and columns' positions taken once (a
    label looked up in an Arrow-backed index costs ~100 µs, more than a rule's arithmetic).
    Read only while the frame does not change."""

    def __init__(self, frame: pd.DataFrame) -> None:
        self.frame = frame
        unique = frame.index.is_unique and frame.columns.is_unique
        # labels repeated: `cell` reads them as it does
        self.rows = {k: i for i, k in enumerate(frame.index)} if unique else None
        self.columns = {c: i for i, c in enumerate(frame.columns)} if unique else {}

    def __call__(self, key: str, column: str) -> float:
        """`cell(frame, key, column)`."""
        if self.rows is None or column not in self.columns:
            return cell(self.frame, key, column)
        at = self.rows.get(key)
        if at is None:
            return math.nan
        # iat reads the column's array at the row as `at` does, without the label lookups
        value = number(self.frame.iat[at, self.columns[column]])
        return math.nan if value is None else value


def _prompt(run: Record, stats: StatsRow) -> float | None:
    """The stated prompt length, else the measured mean (a summary's prompt tokens over its
    completed requests, as BR017 takes them)."""
    given = number(run.get("prompt_tokens"))
    if given is None and stats is not None:
        given = number(stats.get("prompt_tokens_mean"))
        total, done = number(stats.get("prompt_tokens_total")), number(stats.get("ok"))
        if given is None and total is not None and done:
            given = total / done
    return given


def _requested(run: Record, _: StatsRow) -> float | None:
    """The requested output length; none at all for a prompt-processing test (llama-bench
    `pp512` writes `"n_gen": 0`), which is a length, not an undisclosed one."""
    given = number(run.get("output_tokens_requested"))
    if given is None and run.get("phase") == "prompt":
        return 0.0
    return given


def _flags(run: Record, _: StatsRow) -> str | None:
    """The engine's flags; an empty list says "(none)" only in the native schema, where
    `engine.flags` is written for the run. Other tools' files either carry the server's
    flags (llama-bench, SGLang's server_info) or none at all: not recorded, not empty."""
    flags = run.get("engine_flags")
    if not isinstance(flags, list | tuple):
        return None
    if flags:
        return " ".join(str(f) for f in flags)
    from reporter.adapters.native import NAME as NATIVE

    return "(none)" if run.get("format") == NATIVE else None


def _spec(run: Record, _: StatsRow) -> str | None:
    state, _why = speculation_state(run)
    if state is None:
        return None
    if not state:
        return "off"
    method = _str(run.get("spec_method"))
    return f"on ({method})" if method else "on"


def _bpt(run: Record, _: StatsRow) -> float | None:
    return number(run.get("bytes_per_token"))


def _rate(run: Record, _: StatsRow) -> str | None:
    """The open-loop request rate ("inf": every request sent at once, paced by N only)."""
    rate = number(run.get("request_rate"))
    if rate is not None and math.isfinite(rate):
        return f"{rate:g} req/s"
    from reporter.facts import unpaced

    return "inf" if unpaced(run.get("extra")) else None


def _extra(name: str) -> Callable[[Record, StatsRow], str | None]:
    def get(run: Record, _: StatsRow) -> str | None:
        from reporter.grouping import unused_keys  # grouping imports this module

        extra = run.get("extra")
        if not isinstance(extra, dict):
            return None
        if name in unused_keys(extra):  # written, but the dataset draws no lengths
            return f"not used ({extra.get('dataset_name')})"
        return _str(extra.get(name))

    return get


class Settings(tuple[tuple[str, str], ...]):
    """(key, value) pairs a tool recorded beside a run, printed `k=v; k=v`."""

    def __str__(self) -> str:
        return "; ".join(f"{k}={v}" for k, v in self)


def _deployment(run: Record, _: StatsRow) -> Settings | None:
    """Settings a tool recorded beside the run (vLLM --metadata pairs: deployment, gpu, …)."""
    from reporter.grouping import tool_settings

    # the record itself: tool_settings reads `extra` and `format`, which a dict of the
    # Series (to_dict, ~100 µs a run) holds as the same objects
    items = tool_settings(run)
    return Settings(items) if items else None


def differing_settings(values: Sequence[Any]) -> list[str]:
    """Each value printed with only the settings that differ among `values`.

    Runs that share ten settings and differ in one (`deployment=base` vs `kvcache`) are told
    apart by that one; a key one run lacks prints as `(not set)`.
    """
    known = [dict(v) for v in values if isinstance(v, Settings)]
    keys = sorted({k for d in known for k in d})
    differ = [k for k in keys if len({d.get(k) for d in known}) > 1]
    out = []
    for v in values:
        if not isinstance(v, Settings):
            out.append(show(v))
            continue
        pairs = dict(v)
        out.append("; ".join(f"{k}={pairs.get(k, '(not set)')}" for k in differ) or str(v))
    return out


FACTORS: tuple[Factor, ...] = (
    Factor("stop", "stop mode", CONDITION, "stop", lambda r, s: _str(r.get("stop"))),
    Factor("prompt_tokens", "prompt length", CONDITION, "prompt", _prompt, numeric=True),
    Factor(
        "output_tokens_requested",
        "requested output length",
        CONDITION,
        "output",
        _requested,
        numeric=True,
    ),
    Factor("content", "content", CONDITION, "content", lambda r, s: _str(r.get("content"))),
    Factor(
        "context_tokens",
        "context length",
        CONDITION,
        "context",
        lambda r, s: number(r.get("context_tokens")),
        numeric=True,
    ),
    Factor(
        "temperature",
        "temperature",
        CONDITION,
        "sampling",
        lambda r, s: number(r.get("temperature")),
    ),
    Factor("dataset", "dataset", CONDITION, "prompt", _extra("dataset_name")),
    Factor("range_ratio", "length range ratio", CONDITION, "output", _extra("random_range_ratio")),
    Factor("speculation", "speculation", SETUP, "speculation", _spec),
    Factor("concurrency", "N", SETUP, "concurrency", lambda r, s: number(r.get("concurrency"))),
    Factor("request_rate", "request rate", SETUP, "concurrency", _rate),
    Factor("deployment", "deployment settings", SETUP, "deployment", _deployment),
    Factor("hardware", "hardware", SETUP, "hardware", lambda r, s: _str(r.get("hardware_name"))),
    Factor("model", "model", SETUP, "model", lambda r, s: _str(r.get("model_name"))),
    Factor("engine", "engine", SETUP, "engine", lambda r, s: _str(r.get("engine_name"))),
    Factor(
        "engine_version",
        "engine version",
        SETUP,
        "engine",
        lambda r, s: _str(r.get("engine_version")),
    ),
    Factor("engine_flags", "engine flags", SETUP, "engine", _flags),
    Factor("quant", "quantization", SETUP, "engine", lambda r, s: _str(r.get("quant"))),
    Factor("bytes_per_token", "bytes per token", SETUP, "engine", _bpt, numeric=True),
)
FACTOR_BY_KEY = {f.key: f for f in FACTORS}
#: Factors only some tools record (a dataset name, a length range, an open-loop rate, the
#: deployment pairs of vLLM --metadata): compared when known, never listed as undisclosed.
OPTIONAL_FACTORS = frozenset({"dataset", "range_ratio", "request_rate", "deployment"})

SAME, DIFFERS, ONE_SIDED, UNKNOWN = "same", "differs", "one-sided", "unknown"


def speculation_state(run: Record) -> tuple[bool | None, str]:
    """Whether speculative decoding was on, and what says so.

    `workload.speculative.enabled` when written; otherwise a speculative method or acceptance
    rate, an engine flag that asks for a draft (`--speculative-config`, `-md`, …), or draft
    counters that rose during the run. None when nothing tells.
    """
    enabled = features.as_bool(run.get("spec_enabled"))
    if enabled is not None:
        # an adapter that read the switch off another tool's file says where
        source = _str(run.get("spec_source"))
        return enabled, source or "workload.speculative.enabled"
    if _str(run.get("spec_method")):
        return True, f"workload.speculative.method {run.get('spec_method')!r}"
    if number(run.get("spec_acceptance")) is not None:
        return True, "workload.speculative.acceptance"
    flags = features.requested(features.parse_flags(run.get("engine_flags") or []))
    if "speculation" in flags:
        return True, f"engine flag {flags['speculation'][0].text}"
    drafts = features.counter_delta(run.get("extra"), features.SPEC_DRAFT_COUNTERS)
    if drafts is not None and drafts.delta > 0:
        return True, f"draft counter {drafts.names[0]} rose by {drafts.delta:,.0f}"
    return None, ""


def show(value: Any, key: str = "") -> str:
    """A factor value as printed (bytes per token in GB)."""
    if value is None:
        return "undisclosed"
    if key == "bytes_per_token" and isinstance(value, float):
        return f"{gb(value)} GB"
    if isinstance(value, float):
        return f"{value:,.0f}" if value >= 100 or value == int(value) else f"{value:g}"
    return str(value)


def _same(f: Factor, a: Any, b: Any, tolerance: float) -> bool:
    if f.numeric and isinstance(a, float) and isinstance(b, float):
        if a == b:
            return True
        return abs(a - b) <= tolerance * max(abs(a), abs(b))
    return bool(a == b)


@dataclass(frozen=True)
class FactorDiff:
    """One factor of two runs: both values and whether they differ."""

    key: str
    label: str
    kind: str
    category: str
    a: Any
    b: Any
    state: str

    def text(self) -> str:
        a, b = self.shown()
        return f"{self.label} {a} vs {b}"

    def shown(self) -> tuple[str, str]:
        """Both values as printed; settings lists reduced to the pairs that differ."""
        if isinstance(self.a, Settings) or isinstance(self.b, Settings):
            a, b = differing_settings([self.a, self.b])
            return a, b
        return show(self.a, self.key), show(self.b, self.key)


#: The last index `fields` listed, with its labels: every row of the run table shares its
#: columns' Index, and listing an Arrow-backed one costs more than all the factors of a run.
_listed: list[tuple[pd.Index, list[Any]]] = []


def _labels(index: pd.Index) -> list[Any]:
    """The index's labels, in order (listed once for a run table's rows)."""
    if _listed and _listed[0][0] is index:
        return _listed[0][1]
    labels = list(index)
    _listed[:] = [(index, labels)]
    return labels


def fields(run: Record) -> Record:
    """The run's record as a dict of the very objects `run.get` returns; the record itself
    when it is a dict already, or a Series a dict cannot stand for (repeated labels, values
    not held in a numpy array)."""
    if not isinstance(run, pd.Series):
        return run
    if not isinstance(run.dtype, np.dtype) or not run.index.is_unique:
        return run
    # a numpy-backed Series gives the items of its array for a label: a dict of them answers
    # `get` alike, in well under a microsecond where pandas takes several
    return dict(zip(_labels(run.index), run.to_numpy(), strict=True))


def stats_row(stats: pd.DataFrame, key: str) -> StatsRow:
    """`row(stats, key)` for `values`, taken only if a factor reads it (a frame with repeated
    run ids is looked up at once, to fail as `row` does)."""
    if not stats.index.is_unique:
        return row(stats, key)
    return _LazyRow(stats, key)


def values(run: Record, stats: StatsRow) -> dict[str, Any]:
    """Every factor's value for one run (None when undisclosed)."""
    record = fields(run)
    return {f.key: f.get(record, stats) for f in FACTORS}


def diff(
    va: dict[str, Any], vb: dict[str, Any], tolerance: float = LENGTH_TOLERANCE.default
) -> list[FactorDiff]:
    """Factor by factor: same, differs, known on one side only, or unknown on both."""
    out = []
    for f in FACTORS:
        a, b = va[f.key], vb[f.key]
        if a is None and b is None:
            state = UNKNOWN
        elif a is None or b is None:
            state = ONE_SIDED
        else:
            state = SAME if _same(f, a, b, tolerance) else DIFFERS
        out.append(FactorDiff(f.key, f.label, f.kind, f.category, a, b, state))
    return out


@dataclass
class Judgement:
    """Whether two runs can be compared, given what the comparison is about."""

    comparable: bool | None
    differing: list[FactorDiff]
    one_sided: list[FactorDiff]
    unknown: list[FactorDiff]
    compared: list[FactorDiff]
    reason: str


def judge(diffs: Sequence[FactorDiff], compared: frozenset[str] = frozenset()) -> Judgement:
    """Comparable when no condition differs and at most one category of setup does.

    `compared` names factors the comparison is about (N for a scaling factor); they may differ
    and no other setup may. Without it, one setup category (the engine, the hardware,
    speculation, N or the model) may differ: that is what a speed-up compares.
    Returns comparable None (cannot tell) when nothing differs but some factor is known for
    one run only.
    """
    mine = [d for d in diffs if d.key not in compared]
    differing = [d for d in mine if d.state == DIFFERS]
    one_sided = [d for d in mine if d.state == ONE_SIDED]
    unknown = [d for d in mine if d.state == UNKNOWN]
    about = [d for d in diffs if d.key in compared and d.state == DIFFERS]
    conditions = [d for d in differing if d.kind == CONDITION]
    categories = sorted({d.category for d in differing if d.kind == SETUP})
    allowed = 0 if compared else 1
    if conditions or len(categories) > allowed:
        parts = []
        if conditions:
            parts.append("conditions differ (" + ", ".join(d.label for d in conditions) + ")")
        if len(categories) > allowed:
            # each category by the factors that differ in it ("request rate", not the
            # category's name "concurrency")
            named = [
                ", ".join(d.label for d in differing if d.kind == SETUP and d.category == c)
                for c in categories
            ]
            parts.append(f"{len(categories)} setups differ at once (" + "; ".join(named) + ")")
        return Judgement(False, differing, one_sided, unknown, about, "; ".join(parts))
    if one_sided:
        return Judgement(
            None,
            differing,
            one_sided,
            unknown,
            about,
            "known for one run only: " + ", ".join(d.label for d in one_sided),
        )
    if differing:
        why = (
            f"only the {categories[0]} setup differs ("
            + ", ".join(d.label for d in differing)
            + "), which is what the comparison is about"
        )
    elif about:
        why = "they differ only in " + ", ".join(d.label for d in about)
    else:
        why = "they differ in nothing disclosed"
    return Judgement(True, differing, one_sided, unknown, about, why)


@dataclass
class Point:
    """A run (or several repeats of one setting) as a node of a decomposition chain."""

    runs: list[str]
    value: float
    values: dict[str, Any]


@dataclass
class Step:
    """One step of a chain: from one run to the next, and the factors it changes."""

    src: str
    dst: str
    src_value: float
    dst_value: float
    factors: list[str]
    #: Factors the step moves that one of its two runs does not state: no known difference.
    one_sided: list[str] = field(default_factory=list)

    @property
    def ratio(self) -> float:
        return self.dst_value / self.src_value

    def named(self) -> str:
        """The step's factors as printed: the ones that differ, then the ones stated for one
        of its runs only, which are not said to differ."""
        known = ", ".join(self.factors)
        if not self.one_sided:
            return known
        partly = "known for one run only: " + ", ".join(self.one_sided)
        return f"{known}; {partly}" if known else partly


def chain(
    points: Sequence[Point], start: Point, end: Point, tolerance: float = LENGTH_TOLERANCE.default
) -> list[Step]:
    """The finest path of runs from `start` to `end` (≥ 2 steps), or [] when there is none.

    Each run on the path agrees with both ends on every factor they share and takes, on each
    factor they differ in, one end's value or the other; each step moves some factors from
    the start's value to the end's and moves none back. Of the possible paths, the one with
    the most steps is taken (ties: file order). The step ratios multiply to end ÷ start.
    """
    d = [x for x in diff(start.values, end.values, tolerance) if x.state in (DIFFERS, ONE_SIDED)]
    keys = [x.key for x in d]
    if len(keys) < 2:
        return []

    def moved(p: Point) -> frozenset[str] | None:
        out = set()
        for f in FACTORS:
            v = p.values[f.key]
            a, b = start.values[f.key], end.values[f.key]
            if f.key not in keys:
                if not (v == a or (v is not None and a is not None and _same(f, v, a, tolerance))):
                    return None
                continue
            at_a = v == a or (v is not None and a is not None and _same(f, v, a, tolerance))
            at_b = v == b or (v is not None and b is not None and _same(f, v, b, tolerance))
            if at_b and not at_a:
                out.add(f.key)
            elif not at_a:
                return None
        return frozenset(out)

    full = frozenset(keys)
    nodes: list[tuple[frozenset[str], Point]] = []
    seen: set[frozenset[str]] = set()
    for p in points:
        if p is start or p is end or p.value <= 0 or math.isnan(p.value):
            continue
        m = moved(p)
        if m is None or not m or m == full or m in seen:
            continue
        seen.add(m)
        nodes.append((m, p))
    if not nodes:
        return []
    # Longest chain of strictly growing sets: a small DAG, solved by sorting on set size.
    nodes.sort(key=lambda n: len(n[0]))
    best: list[list[int]] = []
    for i, (m, _) in enumerate(nodes):
        prev = [best[j] for j in range(i) if nodes[j][0] < m]
        best.append([*max(prev, key=len, default=[]), i])
    path = max(best, key=len)
    sequence = [start, *(nodes[i][1] for i in path), end]
    sets = [frozenset[str](), *(nodes[i][0] for i in path), full]
    steps = []
    for (p, q), (m0, m1) in zip(pairwise(sequence), pairwise(sets), strict=True):
        moved_keys = [k for k in keys if k in m1 - m0]
        # a factor one of the two runs does not state moves, but is not known to differ
        partly = [k for k in moved_keys if p.values[k] is None or q.values[k] is None]
        steps.append(
            Step(
                _name(p),
                _name(q),
                p.value,
                q.value,
                [FACTOR_BY_KEY[k].label for k in moved_keys if k not in partly],
                [FACTOR_BY_KEY[k].label for k in partly],
            )
        )
    return steps


def _name(p: Point) -> str:
    return p.runs[0] if len(p.runs) == 1 else f"{p.runs[0]} (+{len(p.runs) - 1} repeats)"


def run_values(runs: pd.DataFrame, stats: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """Every factor's value for each run that has figures, by run id, in file order."""
    return values_by_run((run for _, run in runs.iterrows()), stats)


def values_by_run(runs: Iterable[pd.Series], stats: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """`run_values` of the run table's rows, as Series (in file order)."""
    out = {}
    for run in runs:
        record = fields(run)
        run_id = str(record["run"])
        if run_id in stats.index:
            out[run_id] = values(record, stats_row(stats, run_id))
    return out


def points(
    runs: pd.DataFrame,
    stats: pd.DataFrame,
    metric: str = "aggregate_tps",
    by_run: dict[str, dict[str, Any]] | None = None,
) -> list[Point]:
    """One point per setting (repeats folded by their median), in file order. `by_run`: the
    runs' factor values (`run_values`), when already taken."""
    groups: dict[tuple[Any, ...], Point] = {}
    collected: dict[tuple[Any, ...], list[float]] = {}
    for run_id, vals in (run_values(runs, stats) if by_run is None else by_run).items():
        value = cell(stats, run_id, metric)
        if math.isnan(value) or value <= 0:
            continue
        key = tuple(show(vals[f.key]) for f in FACTORS)
        if key in groups:
            groups[key].runs.append(run_id)
            collected[key].append(value)
        else:
            groups[key] = Point([run_id], value, vals)
            collected[key] = [value]
    for key, point in groups.items():
        point.value = float(pd.Series(collected[key]).median())
    return list(groups.values())


@dataclass
class BandwidthSplit:
    """A decode-rate ratio as bytes per token × achieved bandwidth (METHOD §6)."""

    rate_a: float
    rate_b: float
    bytes_a: float
    bytes_b: float
    source_a: str
    source_b: str

    @property
    def bytes_ratio(self) -> float:
        return self.bytes_b / self.bytes_a

    @property
    def gbps_a(self) -> float:
        return self.rate_a * self.bytes_a / 1e9

    @property
    def gbps_b(self) -> float:
        return self.rate_b * self.bytes_b / 1e9

    @property
    def bandwidth_ratio(self) -> float:
        return self.gbps_a / self.gbps_b

    @property
    def ratio(self) -> float:
        return self.rate_a / self.rate_b

    def lines(self, a: str, b: str) -> list[str]:
        return [
            f"decode {a}: {self.rate_a:,.2f} tok/s × {gb(self.bytes_a)} GB/token = "
            f"{self.gbps_a:,.1f} GB/s ({self.source_a})",
            f"decode {b}: {self.rate_b:,.2f} tok/s × {gb(self.bytes_b)} GB/token = "
            f"{self.gbps_b:,.1f} GB/s ({self.source_b})",
            f"bytes per token {gb(self.bytes_b)} ÷ {gb(self.bytes_a)} = {self.bytes_ratio:.2f}× "
            f"× bandwidth {self.gbps_a:,.1f} ÷ {self.gbps_b:,.1f} GB/s = "
            f"{self.bandwidth_ratio:.2f}× → {self.bytes_ratio:.2f} × {self.bandwidth_ratio:.2f} "
            f"= {self.ratio:.2f} = {self.rate_a:,.2f} ÷ {self.rate_b:,.2f} tok/s",
        ]


def bandwidth_split(
    run_a: pd.Series, run_b: pd.Series, stats_a: pd.Series, stats_b: pd.Series
) -> BandwidthSplit | None:
    """Split the decode-rate ratio of a over b when both runs know their bytes per token."""
    ra, rb = number(stats_a.get("median_decode_tps")), number(stats_b.get("median_decode_tps"))
    if ra is None or rb is None or ra <= 0 or rb <= 0:
        return None
    ba, bb = bytes_per_token(run_a), bytes_per_token(run_b)
    if ba.value is None or bb.value is None:
        return None
    if abs(bb.value / ba.value - 1) < 0.01:
        return None  # the same bytes: the split says nothing the rates do not
    return BandwidthSplit(ra, rb, ba.value, bb.value, ba.source, bb.source)


@dataclass
class Side:
    """One of the two runs compared."""

    run: str
    aggregate_tps: float | None
    output_tokens: float | None
    wall_s: float | None
    decode_tps: float | None
    ref: str


@dataclass
class Comparison:
    """Two runs side by side: the ratio, every factor, the decomposition where one exists."""

    a: Side
    b: Side
    ratio: float | None
    factors: list[FactorDiff]
    judgement: Judgement
    chain: list[Step] = field(default_factory=list)
    bandwidth: BandwidthSplit | None = None

    def chain_lines(self) -> list[str]:
        if not self.chain:
            return []
        lines = [
            f"{s.src} {s.src_value:,.1f} → {s.dst} {s.dst_value:,.1f} tok/s: {s.ratio:.2f}× "
            f"({s.named()})"
            for s in self.chain
        ]
        product = math.prod(s.ratio for s in self.chain)
        first, last = self.chain[0].src_value, self.chain[-1].dst_value
        lines.append(
            " × ".join(f"{s.ratio:.2f}" for s in self.chain)
            + f" = {product:.2f} = {last:,.1f} ÷ {first:,.1f}"
        )
        return lines

    def to_dict(self) -> dict[str, Any]:
        def side(s: Side) -> dict[str, Any]:
            return {
                "run": s.run,
                "aggregate_tps": s.aggregate_tps,
                "output_tokens": s.output_tokens,
                "wall_s": s.wall_s,
                "decode_tps": s.decode_tps,
                "ref": s.ref,
            }

        out: dict[str, Any] = {
            "a": side(self.a),
            "b": side(self.b),
            "ratio": self.ratio,
            "comparable": self.judgement.comparable,
            "reason": self.judgement.reason,
            "factors": [
                {"factor": d.label, "a": d.shown()[0], "b": d.shown()[1], "state": d.state}
                for d in self.factors
            ],
            "chain": [
                {
                    "from": s.src,
                    "to": s.dst,
                    "from_tps": s.src_value,
                    "to_tps": s.dst_value,
                    "ratio": s.ratio,
                    "factors": s.factors,
                    "one_sided": s.one_sided,
                }
                for s in self.chain
            ],
        }
        if self.bandwidth is not None:
            bw = self.bandwidth
            out["bandwidth"] = {
                "decode_a": bw.rate_a,
                "decode_b": bw.rate_b,
                "bytes_per_token_a": bw.bytes_a,
                "bytes_per_token_b": bw.bytes_b,
                "gbps_a": bw.gbps_a,
                "gbps_b": bw.gbps_b,
                "bytes_ratio": bw.bytes_ratio,
                "bandwidth_ratio": bw.bandwidth_ratio,
                "ratio": bw.ratio,
            }
        return out


def _side(runs: pd.DataFrame, stats: pd.DataFrame, run_id: str) -> Side:
    r = row(runs, run_id)
    s = row(stats, run_id)
    line = number(r["source_line"])
    ref = f"{r['source_path']}:{int(line)}" if line is not None else str(r["source_path"] or "")
    return Side(
        run_id,
        number(s["aggregate_tps"]),
        number(s["output_tokens"]),
        number(s["wall_s"]),
        number(s["median_decode_tps"]),
        ref,
    )


def compare(
    runs: pd.DataFrame,
    stats: pd.DataFrame,
    a: str,
    b: str,
    compared: frozenset[str] = frozenset(),
    tolerance: float = LENGTH_TOLERANCE.default,
    by_run: dict[str, dict[str, Any]] | None = None,
) -> Comparison:
    """Run a against run b: ratio a ÷ b of their aggregates, factors, chain from b to a.
    `by_run`: every run's factor values (`run_values`), when already taken."""
    indexed = runs.set_index("run", drop=False) if "run" in runs.columns else runs
    indexed.index = indexed.index.astype(str)
    ra, rb = row(indexed, a), row(indexed, b)
    sa, sb = row(stats, a), row(stats, b)
    if by_run is None:
        by_run = run_values(indexed, stats)
    va, vb = by_run[a], by_run[b]
    diffs = diff(va, vb, tolerance)
    side_a, side_b = _side(indexed, stats, a), _side(indexed, stats, b)
    ratio = None
    if side_a.aggregate_tps and side_b.aggregate_tps:
        ratio = side_a.aggregate_tps / side_b.aggregate_tps
    result = Comparison(side_a, side_b, ratio, diffs, judge(diffs, compared))
    if ratio is not None:
        pts = points(indexed, stats, by_run=by_run)
        start = Point([b], float(side_b.aggregate_tps or 0), vb)
        end = Point([a], float(side_a.aggregate_tps or 0), va)
        pts = [p for p in pts if a not in p.runs and b not in p.runs]
        result.chain = chain(pts, start, end, tolerance)
    result.bandwidth = bandwidth_split(ra, rb, sa, sb)
    return result


def resolve(runs: pd.DataFrame, name: str) -> str:
    """A run named as `ID` or `FILE:ID` → its id in the tables (ids shared by two files are
    qualified with the file's name)."""
    ids = [str(r) for r in runs["run"]]
    if name in ids:
        return name
    path, sep, run_id = name.rpartition(":")
    if sep:
        qualified = f"{Path(path).name}:{run_id}"
        if qualified in ids:
            return qualified
        here = runs[
            (runs["run"].astype(str) == run_id)
            & (runs["source_path"].astype(str).map(lambda p: Path(p).name) == Path(path).name)
        ]
        if len(here):
            return str(here["run"].iloc[0])
    shown = listed(ids, 12)
    raise UsageError(f"no run {name!r} in the traces; expected one of {shown}")


def split_name(name: str) -> tuple[str | None, str]:
    """`FILE:ID` → (FILE, ID) when FILE is a file on disk; else (None, name)."""
    path, sep, run_id = name.rpartition(":")
    if sep and path and Path(path).is_file():
        return path, run_id
    return None, name


def text_lines(c: Comparison) -> list[RenderableType]:
    """The comparison as terminal lines, the factors that differ as a table (factor, A, B).

    A str is one line laid out here; the CLI prints it escaped (reporter.terminal.show).
    """
    from reporter import terminal

    def figure(s: Side) -> str:
        if s.aggregate_tps is None:
            return "no aggregate (no wall clock)"
        return (
            f"{fmt(s.aggregate_tps)} tok/s ({fmt(s.output_tokens or 0, 0)} tokens ÷ "
            f"{fmt(s.wall_s or 0, 2)} s)"
        )

    lines: list[RenderableType] = [
        f"A  {c.a.run}: {figure(c.a)}  {c.a.ref}",
        f"B  {c.b.run}: {figure(c.b)}  {c.b.ref}",
    ]
    if c.ratio is not None:
        lines.append(
            f"A ÷ B = {fmt(c.a.aggregate_tps)} ÷ {fmt(c.b.aggregate_tps)} = {fmt(c.ratio, 2)}×"
        )
    differ = [d for d in c.factors if d.state in (DIFFERS, ONE_SIDED)]
    if differ:
        lines.append("They differ in:")
        columns = (
            terminal.Column("factor"),
            terminal.Column("A", wrap=True),
            terminal.Column("B", wrap=True),
        )
        rows = [(d.label, *d.shown()) for d in differ]
        lines.append(terminal.indented(terminal.table(columns, rows)))
    same = [d for d in c.factors if d.state == SAME]
    if same:
        lines.append("They agree in: " + "; ".join(f"{d.label} {show(d.a, d.key)}" for d in same))
    unknown = [d for d in c.factors if d.state == UNKNOWN and d.key not in OPTIONAL_FACTORS]
    if unknown:
        lines.append("Undisclosed for both: " + ", ".join(d.label for d in unknown))
    verdict = {True: "comparable", False: "not comparable", None: "cannot tell"}
    lines.append(f"Verdict: {verdict[c.judgement.comparable]}: {c.judgement.reason}")
    if c.chain:
        lines.append("Decomposition (each step changes only the factors named):")
        lines.extend(f"  {x}" for x in c.chain_lines())
    elif c.ratio is not None and len(differ) > 1 and c.judgement.comparable is not True:
        lines.append(
            "Decomposition: none; no run in the traces changes only some of these "
            "factors (add a run that differs from each end in fewer factors)"
        )
    if c.bandwidth is not None:
        lines.append("Bandwidth (decode rate = bandwidth ÷ bytes per token):")
        lines.extend(f"  {x}" for x in c.bandwidth.lines(c.a.run, c.b.run))
    return lines
