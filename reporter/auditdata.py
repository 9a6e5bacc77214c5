"""What a rule reads: the tables, each run's figures, the thresholds and the facts.

Below the analysis layer (reporter.facts, ladder, slope read it) and the rules; the facts are
filled in once by `reporter.facts.audit_data`, so that this module imports no reader of it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from reporter.config import Config
from reporter.decision import Facts
from reporter.features import servers
from reporter.medians import median
from reporter.table import Tables, one_of
from reporter.values import number, number_or_nan


@dataclass
class AuditData:
    """Everything a rule may read: the tables, the per-run figures, the thresholds."""

    tables: Tables
    stats: pd.DataFrame
    config: Config = field(default_factory=Config)
    #: The claims, recomputed (reporter.claims.ClaimCheck), for the rules about claims.
    claim_checks: list[Any] = field(default_factory=list)
    #: What is known of each run and each sweep (reporter.facts), computed once after the
    #: figures by `reporter.facts.audit_data`; rules and the verdict read it.
    facts: Facts = field(init=False, repr=False)

    #: Columns a rule never reads per run: leaving them out makes taking a run's rows cheap.
    _HEAVY = ("id", "error", "token_times")

    @cached_property
    def _by_run(self) -> tuple[pd.DataFrame, dict[str, slice]]:
        """The request rows grouped by run (file order within a run), and each run's slice.

        Taking a run's rows is then a view, not a copy: rules read them many times.
        """
        req = self.tables.requests
        slim = req.drop(columns=[c for c in self._HEAVY if c in req.columns])
        if not len(slim):
            return slim, {}
        codes = slim["run"].cat.codes.to_numpy()
        if len(codes) > 1 and (np.diff(codes) < 0).any():
            order = np.argsort(codes, kind="stable")
            slim, codes = slim.take(order), codes[order]
        bounds = np.flatnonzero(np.diff(codes)) + 1
        starts = np.concatenate(([0], bounds))
        stops = np.concatenate((bounds, [len(codes)]))
        names = slim["run"].cat.categories
        return slim, {
            str(names[codes[a]]): slice(int(a), int(b)) for a, b in zip(starts, stops, strict=True)
        }

    def requests_of(self, run: str) -> pd.DataFrame:
        """The request rows of one run, in file order (without ids, errors, chunk times)."""
        if self.tables.store is not None:  # a streamed audit: read from the store
            return self.tables.store.slim_rows_of(run)
        frames = self._run_frames
        if run not in frames:  # a view, taken once: rules ask for a run's rows many times
            slim, slices = self._by_run
            frames[run] = slim.iloc[slices.get(run, slice(0, 0))]
        return frames[run]

    @cached_property
    def _run_frames(self) -> dict[str, pd.DataFrame]:
        return {}

    def values_of(self, run: str, column: str) -> np.ndarray:
        """One numeric or flag column of a run's request rows, in file order, as an array (a
        view of the whole column, not to be written: no frame is taken per run)."""
        if self.tables.store is not None:
            return self.requests_of(run)[column].to_numpy()
        slim, slices = self._by_run
        if column not in self._columns:
            self._columns[column] = slim[column].to_numpy()
        return self._columns[column][slices.get(run, slice(0, 0))]

    @cached_property
    def _columns(self) -> dict[str, np.ndarray]:
        return {}

    def median_of(self, run: str, column: str) -> float:
        """The median of a run's column, NaN left out (reporter.medians.median), taken once
        for every reader: the ladder and BR004 both read a run's median decode time."""
        key = (run, column)
        if key not in self._medians:
            self._medians[key] = median(self.values_of(run, column))
        return self._medians[key]

    @cached_property
    def _medians(self) -> dict[tuple[str, str], float]:
        return {}

    def refs_of(self, run: str, rows: np.ndarray | None = None, limit: int = 8) -> list[str]:
        """path:line of a run's first `limit` request rows, or of the first `limit` of those
        at `rows` (positions among the run's rows), as `request_refs` writes them."""
        columns = self._ref_columns
        if columns is None:  # a streamed audit, or columns of other types: from the frame
            frame = self.requests_of(run)
            return request_refs(frame if rows is None else frame.iloc[rows[:limit]], limit)
        names, codes, lines = columns
        where = self._by_run[1].get(run, slice(0, 0))
        picked = slice(0, limit) if rows is None else rows[:limit]
        return [
            f"{'nan' if c < 0 else names[c]}:{int(n)}"
            for c, n in zip(
                codes[where][picked].tolist(), lines[where][picked].tolist(), strict=True
            )
        ]

    @cached_property
    def _ref_columns(self) -> tuple[list[str], np.ndarray, np.ndarray] | None:
        """The source paths' category names, each row's code and its line, for `refs_of`;
        None where `request_refs` must read the frame (a streamed audit, paths that are not
        categories of text, lines that are not int64). A categorical read row by row takes
        its categories' values, and pandas' row access costs more than the refs."""
        if self.tables.store is not None:
            return None
        slim, _ = self._by_run
        if "source_path" not in slim.columns or "source_line" not in slim.columns:
            return None
        path, line = slim["source_path"], slim["source_line"]
        if not isinstance(path.dtype, pd.CategoricalDtype) or line.dtype != np.int64:
            return None
        names = path.cat.categories.tolist()
        if not all(type(name) is str for name in names):
            return None
        return names, path.cat.codes.to_numpy(), line.to_numpy()

    def finish_reason_is(self, run: str, reason: str) -> np.ndarray:
        """Where a run's rows, in file order, end with finish reason `reason` (False where
        none is recorded), as `finish_reason_is` reads the run's rows."""
        codes = self._finish_codes(run)
        if codes is None:
            return finish_reason_is(self.requests_of(run), reason)
        if reason not in self._reason_codes:
            self._reason_codes[reason] = self._codes_of_reason(reason)
        # as reporter.table.one_of compares a categorical's codes, on the whole column's
        # codes taken once (a run's rows cost more to take than to compare)
        found = np.zeros(len(codes), dtype=bool)
        for code in self._reason_codes[reason]:
            found |= codes == code
        return found

    def finish_reason_known(self, run: str) -> np.ndarray:
        """Where a run's rows, in file order, record a finish reason (as
        `finish_reason_known` reads the run's rows)."""
        codes = self._finish_codes(run)
        if codes is None:
            return finish_reason_known(self.requests_of(run))
        return np.asarray(codes >= 0)

    def _finish_codes(self, run: str) -> np.ndarray | None:
        """The category codes of a run's finish reasons (a view), or None where the column is
        not categorical or the audit is streamed: those are read from the run's rows."""
        codes = self._finish_reason_codes
        if codes is None:
            return None
        return codes[self._by_run[1].get(run, slice(0, 0))]

    @cached_property
    def _finish_reason_codes(self) -> np.ndarray | None:
        if self.tables.store is not None:
            return None
        column = self._by_run[0]["finish_reason"]
        if not isinstance(column.dtype, pd.CategoricalDtype):
            return None
        return column.cat.codes.to_numpy()

    @cached_property
    def _reason_codes(self) -> dict[str, list[int]]:
        return {}

    def _codes_of_reason(self, reason: str) -> list[int]:
        """The codes of the finish-reason categories equal to `reason` (as `isin` finds them)."""
        categories = self._reason_categories
        if isinstance(categories, list):
            # text compared in Python: an Arrow-backed isin costs ~150 µs a call
            return [code for code, name in enumerate(categories) if name == reason]
        return np.flatnonzero(categories.isin([reason])).tolist()

    @cached_property
    def _reason_categories(self) -> list[str] | pd.Index:
        """The finish reasons' categories: as a list when every one is text, else the Index."""
        categories = self._by_run[0]["finish_reason"].cat.categories
        names = categories.tolist()
        return names if all(type(name) is str for name in names) else categories

    def sorted_ends(self, run: str) -> np.ndarray:
        """The end times of a run's successful requests in ascending order (NaN last), sorted
        once for the ladder, the admission-queue rule and the completions chart (not to be
        written)."""

        def make() -> np.ndarray:
            end = np.asarray(self.values_of(run, "t_end"), dtype="float64")
            ok = np.asarray(self.values_of(run, "ok"), dtype=bool)
            # a trace lists its requests nearly in time order: a stable sort merges the
            # ordered stretches (3× faster there than the default), and sorted values are
            # the same whichever sort made them. Every request served (the usual case): the
            # column itself sorted into the copy, not a copy of it first.
            return np.sort(end if ok.all() else end[ok], kind="stable")

        return self._once_per_run(self._sorted_ends, run, make)

    def _once_per_run(
        self, kept: dict[str, np.ndarray], run: str, make: Callable[[], np.ndarray]
    ) -> np.ndarray:
        """`make()` for `run`, kept in `kept` for the next reader, unless the audit is
        streamed: it keeps no array per row. Read-only: every reader shares the one array, and
        one that wrote into it would change what the others read."""
        if run in kept:
            return kept[run]
        value = make()
        value.flags.writeable = False
        if self.tables.store is None:
            kept[run] = value
        return value

    @cached_property
    def _sorted_ends(self) -> dict[str, np.ndarray]:
        return {}

    def same_server(self, run: str) -> list[str]:
        """The runs served by the same server configuration as `run`, itself included
        (reporter.features.same_server), for every run in one pass over the run table."""
        return self._servers.get(run, [run])

    @cached_property
    def _servers(self) -> dict[str, list[str]]:
        return servers(self.tables.runs)

    def send_order(self, run: str) -> np.ndarray:
        """The positions of a run's request rows in order of send time (a stable sort, NaN
        last), sorted once for the prefill window and the timeline chart (not to be written)."""

        def make() -> np.ndarray:
            send = np.asarray(self.values_of(run, "t_send"), dtype="float64")
            return np.argsort(send, kind="stable")

        return self._once_per_run(self._send_orders, run, make)

    @cached_property
    def _send_orders(self) -> dict[str, np.ndarray]:
        return {}

    def figures(self, run_id: str) -> RunFigures:
        """One run's recomputed figures (reporter.metrics), read as plain numbers."""
        return RunFigures(self._stats_rows[run_id])

    @cached_property
    def _stats_rows(self) -> dict[str, dict[str, Any]]:
        """Each run's row of `stats` as a dict, taken once: rules read figures per run many
        times, and a pandas row lookup costs more than the rule's own arithmetic."""
        assert self.stats.index.is_unique, "one row of figures per run"
        stats = self.stats
        if not stats.columns.is_unique or not len(stats.columns):
            return {
                str(k): {str(c): x for c, x in v.items()} for k, v in stats.to_dict("index").items()
            }
        # the values `to_dict("index")` gives (a numpy column's as Python scalars, any
        # other's boxed), taken a column at a time rather than a row at a time: half the cost
        columns = [list(column.to_dict().values()) for _, column in stats.items()]
        names = [str(c) for c in stats.columns]
        return {
            str(k): dict(zip(names, row, strict=True))
            for k, row in zip(stats.index, zip(*columns, strict=True), strict=True)
        }

    def run_field(self, run_id: str, name: str) -> Any:
        """One field of a run's record, as flattened in the run table (None when unset)."""
        value = self._run_columns[name][self._run_positions[run_id]]
        if isinstance(value, float) and value != value:
            return None
        return value

    def summary(self, run_id: str) -> dict[str, Any]:
        """The figures the run's tool stated (`summary`, table.SUMMARY_KEYS); empty when none."""
        value = self.run_field(run_id, "summary")
        return value if isinstance(value, dict) else {}

    @cached_property
    def _run_positions(self) -> dict[str, int]:
        """Each run id's row in the run table (a label lookup in pandas costs more than the
        rules' own arithmetic, thousands of times)."""
        assert self.runs.index.is_unique, "one record per run id"
        return {str(k): i for i, k in enumerate(self.runs.index)}

    @cached_property
    def _run_columns(self) -> _RunColumns:
        """The run table's columns as arrays (the values `.at` gives), each taken when first
        read: the run table has dozens of columns, and a rule reads a few."""
        return _RunColumns(self.runs)

    @cached_property
    def runs(self) -> pd.DataFrame:
        """The run table indexed by run id."""
        return self.tables.runs.set_index("run", drop=False)

    def run(self, run_id: str) -> pd.Series:
        """One run's record, flattened (reporter.table.RUN_COLUMNS)."""
        return self._run_rows[run_id]

    def run_rows(self) -> list[pd.Series]:
        """Every run's record in file order, the Series taken once for every rule and the
        verdict (a pass of iterrows builds one Series per run, each time). Read only."""
        return list(self._run_rows.values())

    @cached_property
    def _run_rows(self) -> dict[str, pd.Series]:
        """Each run's record as a Series, taken once (rules ask for it per finding)."""
        assert self.runs.index.is_unique, "one record per run id"
        return {str(k): row for k, row in self.runs.iterrows()}

    def groups(self) -> dict[str, list[str]]:
        """Group name → run ids in it, ordered by concurrency then repeat (read only: the
        same lists are handed to every caller)."""
        return self._groups

    @cached_property
    def _groups(self) -> dict[str, list[str]]:
        # taken once: rules ask per run, and 5,000 runs made a sort and a walk per run
        out: dict[str, list[str]] = {}
        ordered = self.tables.runs.sort_values(["concurrency", "repeat"], na_position="first")
        for group, run in zip(ordered["group"], ordered["run"], strict=True):
            out.setdefault(str(group), []).append(str(run))
        return out

    def lone_requests(self, group: str) -> tuple[list[str], float]:
        """The group's runs of a single request at concurrency 1 (in `groups()` order) and
        the median of their wall clocks (NaN if none): one request's duration alone. Taken
        once per group: every run of the group asks, and a walk of the group per run made a
        sweep of thousands of runs quadratic."""
        if group not in self._lone_requests:
            lone = [
                r
                for r in self.groups().get(group, [])
                if self.concurrency(r) == 1 and self.figures(r)["requests"] == 1
            ]
            walls = [self.figures(r)["wall_s"] for r in lone]
            self._lone_requests[group] = (lone, float(np.median(walls)) if lone else math.nan)
        return self._lone_requests[group]

    @cached_property
    def _lone_requests(self) -> dict[str, tuple[list[str], float]]:
        return {}

    def group_reason(self, group: str) -> str:
        """Why the runs of a group were put together (the fields they share)."""
        return self.tables.group_reasons.get(group, "")

    def concurrency(self, run_id: str) -> float:
        """The run's concurrency as written (NaN when not stated)."""
        return number_or_nan(self._run_columns["concurrency"][self._run_positions[run_id]])


class _RunColumns(dict[str, np.ndarray]):
    """A run table's columns by name as arrays, each taken from the table when first read
    (as `{str(c): runs[c].to_numpy() for c in runs.columns}` holds them)."""

    def __init__(self, runs: pd.DataFrame) -> None:
        super().__init__()
        self._names = {str(c): c for c in runs.columns}
        self._runs = runs

    def __missing__(self, name: str) -> np.ndarray:
        if name not in self._names:
            raise KeyError(name)
        value = self[name] = self._runs[self._names[name]].to_numpy()
        return value


class RunFigures:
    """One run's row of `AuditData.stats`, read as floats (NaN when unknown)."""

    def __init__(self, row: pd.Series | dict[str, Any]) -> None:
        self._row = row

    def __getitem__(self, name: str) -> float:
        return number_or_nan(self._row[name])

    def flag(self, name: str) -> bool:
        return bool(self._row[name])

    def text(self, name: str) -> str | None:
        value = self._row[name]
        return None if value is None or number(value) is not None or value != value else str(value)


def ref(row: pd.Series | dict[str, Any]) -> str:
    line = row["source_line"]
    if line is None or (isinstance(line, float) and math.isnan(line)):
        return str(row["source_path"])
    return f"{row['source_path']}:{int(line)}"


def request_refs(rows: pd.DataFrame, limit: int = 8) -> list[str]:
    """path:line of the first rows, for a finding's evidence pointers."""
    # the two columns' first values, not the rows' frame, each path as astype(str) writes it
    # ("nan" when missing): a frame and a categorical's astype cost more than the refs
    paths = ["nan" if pd.isna(p) else str(p) for p in rows["source_path"].iloc[:limit]]
    lines = rows["source_line"].iloc[:limit].to_numpy()
    return [f"{p}:{int(n)}" for p, n in zip(paths, lines, strict=True)]


def run_ref(data: AuditData, run_id: str) -> list[str]:
    row = data.run(run_id)
    return [ref(row)] if row["source_path"] else []


def finish_reason_is(rows: pd.DataFrame, reason: str) -> np.ndarray:
    """Where the rows' finish reason is `reason` (False where none is recorded), as an array
    (reporter.table.one_of: a categorical column by its codes)."""
    return one_of(rows["finish_reason"], (reason,))


def finish_reason_known(rows: pd.DataFrame) -> np.ndarray:
    """Where the rows record a finish reason, as an array (read as `finish_reason_is`)."""
    column = rows["finish_reason"]
    values = column.array
    if not isinstance(values, pd.Categorical):
        return column.notna().to_numpy(dtype=bool)
    return np.asarray(values.codes >= 0)
