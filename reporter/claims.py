"""Claims: published figures to check, from `claim` records or `--claim` on the command line."""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import pandas as pd

from reporter.config import threshold
from reporter.errors import UsageError
from reporter.grouping import unrecorded
from reporter.model import ClaimCheck, Reading, rate_digits
from reporter.numbers import fmt
from reporter.table import Tables
from reporter.values import number, number_or_nan

CLAIM_TOLERANCE = threshold(
    "claim_tolerance",
    0.10,
    "a claim within 10% of the recomputed figure is supported: repeated single runs differ "
    "by ~5% (METHOD §7), so a tighter bound would convict noise",
)

_METRICS = {
    "aggregate": "aggregate_tps",
    "aggregate_tps": "aggregate_tps",
    "stream": "stream_tps",
    "stream_tps": "stream_tps",
    "speedup": "speedup",
    "scaling": "scaling",
}
#: The largest N a --claim may state (no server runs a million requests at once).
MAX_CLAIM_N = 1_000_000
_UNITS = {"tok/s", "tokens/s", "t/s", "x", "×"}
#: The metrics that are rates (tok/s), as against ratios (speed-up, scaling).
_RATES = ("aggregate_tps", "stream_tps")
#: A claimed figure, with a unit written against it or not ("195.65t/s", "2.65x").
_FIGURE = re.compile(r"^([0-9]*\.?[0-9]+(?:[eE][-+]?\d+)?)(x|×|tok/s|tokens/s|t/s)?$")


#: A lone surrogate: how Python spells a byte of the command line that is not UTF-8.
_SURROGATE = re.compile("[\ud800-\udfff]")


def parse_claim_option(text: str, index: int) -> dict[str, Any]:
    """`aggregate=350 tok/s N=4 method=sum [run=ID] [group=G] [runs=A,B]` → a claim row."""
    row: dict[str, Any] = {
        "claim": f"cli-{index}", "metric": None, "value": None, "concurrency": None,
        "method": "unknown", "run": None, "group": None, "runs": None,
        "source": f"--claim {text}", "source_path": "--claim", "source_line": None,
    }  # fmt: skip
    expected = (
        'expected "aggregate=350 tok/s N=4 method=sum" (metric aggregate|stream|speedup|'
        "scaling; optional N=, method=sum|wall|unknown, run=, group=, runs=A,B, id=)"
    )
    bad = _SURROGATE.search(text)
    if bad is not None:
        # bytes of the command line that are not UTF-8 reach Python as lone surrogates,
        # which no table, file or terminal can encode
        raise UsageError(
            f"--claim {text!r}: holds a byte that is not UTF-8 (\\x{ord(bad.group()) & 0xFF:02x} "
            "at character " + str(bad.start() + 1) + "); expected UTF-8 text"
        )
    for token in _tokens(text):
        if token in _UNITS:
            continue
        if "=" not in token:
            raise UsageError(f"--claim {text!r}: cannot read {token!r}; {expected}")
        key, _, value = token.partition("=")
        key = key.strip().lower()
        if key in _METRICS:
            number = _FIGURE.match(value)
            if not number:
                raise UsageError(f"--claim {text!r}: {key}={value!r} is not a number; {expected}")
            figure = float(number.group(1))
            if not math.isfinite(figure) or figure <= 0:  # 1e309 reads as inf
                raise UsageError(
                    f"--claim {text!r}: {key}={value!r}; expected a finite number above 0"
                )
            row["metric"], row["value"] = _METRICS[key], figure
        elif key in ("n", "concurrency", "c"):
            digits = re.fullmatch(r"[0-9]{1,9}", value)  # ASCII only: int("²") raises
            if not digits or not 1 <= int(value) <= MAX_CLAIM_N:
                raise UsageError(
                    f"--claim {text!r}: N={value!r}; "
                    f"expected a whole number from 1 to {MAX_CLAIM_N:,}"
                )
            row["concurrency"] = int(value)
        elif key == "method":
            if value not in ("sum", "wall", "unknown"):
                raise UsageError(
                    f"--claim {text!r}: method={value!r}; expected sum, wall or unknown"
                )
            row["method"] = value
        elif key in ("run", "group", "id"):
            row["claim" if key == "id" else key] = value
        elif key == "runs":
            row["runs"] = value.split(",")
        else:
            raise UsageError(f"--claim {text!r}: unknown key {key!r}; {expected}")
    if row["metric"] is None:
        raise UsageError(f"--claim {text!r}: no figure; {expected}")
    if row["runs"] is not None and (len(row["runs"]) != 2 or not all(row["runs"])):
        raise UsageError(
            f"--claim {text!r}: runs={','.join(row['runs'])!r} does not name two runs; "
            "expected two run ids: runs=A,B"
        )
    return row


def _tokens(text: str) -> list[str]:
    """The `key=value` words of a --claim: `runs=A,B` (also `runs=A, B`) stays one word,
    while a comma before another `key=` separates, as in `aggregate=350,N=4`."""
    joined = re.sub(r"\s*,\s*", ",", text.strip())
    out: list[str] = []
    for word in joined.split():
        out.extend(p for p in re.split(r",(?=[A-Za-z_]+=)", word) if p)
    return [w.rstrip(",") or w for w in out]


def matching(readings: list[Reading], value: float, tol: float) -> Reading | None:
    """The reading closest to `value` that lies within the tolerance of it, if any."""
    near = [r for r in readings if r.value > 0 and abs(value / r.value - 1) <= tol]
    return min(near, key=lambda r: abs(math.log(value / r.value)), default=None)


def _target_runs(
    claim: pd.Series, tables: Tables, stats: pd.DataFrame, tol: float
) -> tuple[list[str], str | None, list[str]]:
    """The runs a claim is about, or why none; plus notes on how they were chosen."""
    runs = tables.runs
    if claim["run"] is not None:
        wanted = str(claim["run"])
        if wanted not in set(runs["run"].astype(str)):
            return [], f"names run {wanted!r}, which is not in the trace", []
        return [wanted], None, []
    pool, notes = runs, []
    # a claim record of no run is about the runs of its own file (Tables.run_files); a
    # --claim option, from no file, is about every run audited
    claim_path = str(claim["source_path"])
    pool = runs[
        runs["source_path"].astype(str).map(lambda p: tables.speaks_for(claim_path, p)).astype(bool)
    ]
    if claim["group"] is not None:
        pool = runs[runs["group"].astype(str) == str(claim["group"])]
        if pool.empty:
            return [], f"names group {claim['group']!r}, which is not in the trace", []
    claimed_n = number(claim["concurrency"])
    if claimed_n is not None:
        at_n = pool[pool["concurrency"] == claimed_n]
        if at_n.empty and not pool.empty and pool["concurrency"].isna().all():
            # the trace does not say N (an AIPerf records file): the claim's N is taken as said
            notes.append(
                f"the trace does not state N; the claim's N={claimed_n:g} is taken as said"
            )
        elif at_n.empty:
            return [], f"no run at concurrency {claimed_n:g}", []
        else:
            pool = at_n
    if pool.empty:
        return [], "no run to check it against", []
    if pool["group"].nunique() > 1:
        agreeing = _agreeing_runs(pool, stats, tol, str(claim["metric"]))
        if agreeing is None:
            names = ", ".join(sorted(map(str, pool["run"]))[:6])
            differ = " whose figures differ" if claim["metric"] in _RATES else ""
            return (
                [],
                (
                    f"matches {len(pool)} runs in {pool['group'].nunique()} groups ({names})"
                    f"{differ}; name one with run= or group="
                ),
                [],
            )
        notes.append(agreeing)
    elif claimed_n is None and pool["concurrency"].nunique() > 1:
        return [], "the group has several concurrency levels; say which with N=", []
    return [str(r) for r in pool["run"]], None, notes


def _agreeing_runs(pool: pd.DataFrame, stats: pd.DataFrame, tol: float, metric: str) -> str | None:
    """Runs of several groups (files) that one claim matches can stand for one figure only when
    their figures agree within the tolerance: then whichever was meant, the verdict is the same.
    Returns the note saying so, or None when they disagree (or the metric is a ratio)."""
    if metric not in _RATES or pool["concurrency"].nunique() > 1:
        return None
    column = "aggregate_tps" if metric == "aggregate_tps" else "median_decode_tps"
    ids = [str(r) for r in pool["run"]]
    if len({_prompt_test(stats, r) for r in ids}) > 1:
        return None
    values = [
        _run_rate(stats, r)[0] if metric == "aggregate_tps" else number_or_nan(stats.at[r, column])
        for r in ids
    ]
    if any(not (v > 0) for v in values):
        return None
    low, high = min(values), max(values)
    if high / low - 1 > tol:
        return None
    return (
        f"the claim matches {len(ids)} runs in {pool['group'].nunique()} groups; their figures "
        f"agree within {high / low - 1:.1%} ({fmt(low)}–{fmt(high)}), so their median stands "
        "for all of them"
    )


def _prompt_test(stats: pd.DataFrame, run_id: str) -> bool:
    """A prompt-processing test (llama-bench `pp512`): no output, only prompt tokens timed."""
    tokens = number_or_nan(stats.at[run_id, "output_tokens"])
    prompt = number_or_nan(stats.at[run_id, "prompt_tokens_total"])
    return tokens == 0 and prompt > 0


def _run_rate(stats: pd.DataFrame, run_id: str) -> tuple[float, str | None]:
    """The run's tokens ÷ wall with its arithmetic: output tokens, or prompt tokens for a
    prompt-processing test (its output rate is 0 by construction, its claim is about prefill)."""
    wall = number_or_nan(stats.at[run_id, "wall_s"])
    if _prompt_test(stats, run_id):
        prompt = number_or_nan(stats.at[run_id, "prompt_tokens_total"])
        if not wall > 0:
            return float("nan"), None
        rate = prompt / wall
        return rate, (
            f"run {run_id} (prompt processing): {fmt(prompt, 0)} prompt tokens ÷ "
            f"{fmt(wall, 4)} s = {fmt(rate)} tok/s"
        )
    agg, tokens = (number_or_nan(stats.at[run_id, c]) for c in ("aggregate_tps", "output_tokens"))
    if math.isnan(agg):
        return agg, None
    return agg, (
        f"run {run_id}: {fmt(tokens, 0)} tokens ÷ {fmt(wall, 2)} s = {fmt(agg, rate_digits(agg))} "
        "tok/s"
    )


def _repeats_for_certain(runs: pd.DataFrame) -> bool:
    """Whether the runs of one group are repeats as far as anything is recorded: each states
    its load (a concurrency or a request rate; runs that do not may be the points of a
    sweep), and their files name the model, engine and hardware (a client's result file
    names no server: two servers measured with one command read alike)."""
    stated = runs["concurrency"].notna() | runs["request_rate"].notna()
    return bool(stated.all()) and not unrecorded(runs.to_dict("records"))


def _aggregate(
    stats: pd.DataFrame, run_ids: list[str], what: str = "repeats"
) -> tuple[float | None, list[str]]:
    rates = [_run_rate(stats, r) for r in run_ids]
    values = [v for v, _ in rates if not math.isnan(v)]
    if not values:
        return None, []
    lines = [line for _, line in rates if line is not None]
    value = float(np.median(values))
    if len(values) > 1:
        lines.append(f"median of {len(values)} {what} = {fmt(value, rate_digits(value))} tok/s")
    return value, lines


def evaluate(
    tables: Tables, stats: pd.DataFrame, tol: float = CLAIM_TOLERANCE.default
) -> list[ClaimCheck]:
    """Recompute every claim the honest way (the verdict on each is taken later)."""
    out = []
    for _, row in tables.claims.iterrows():
        # a field one claim leaves out is NaN where another claim of the table gives it
        # (run= on one --claim only): None, as if the table held that claim alone
        claim = row.astype(object).where(row.notna(), None)
        check = ClaimCheck(
            claim=str(claim["claim"] or f"claim@{claim['source_line']}"),
            metric=str(claim["metric"]),
            value=float(claim["value"]),
            concurrency=None if pd.isna(claim["concurrency"]) else int(claim["concurrency"]),
            method=str(claim["method"] or "unknown"),
            runs=[],
            recomputed=None,
            factor=None,
            source=claim["source"],
            ref=_ref(claim),
        )
        if check.metric == "speedup":
            _speedup(check, claim, tables, stats)
        else:
            runs, problem, notes = _target_runs(claim, tables, stats, tol)
            check.runs, check.problem = runs, problem
            kinds = {_prompt_test(stats, r) for r in runs}
            if len(kinds) > 1:
                check.runs, check.problem = (
                    [],
                    (
                        f"matches {len(runs)} runs that mix prompt-processing and generation "
                        f"tests ({', '.join(sorted(runs)[:6])}); name one with run="
                    ),
                )
            elif runs:
                if check.metric == "aggregate_tps":
                    several_groups = tables.runs[tables.runs["run"].astype(str).isin(runs)]
                    what = (
                        "runs"
                        if several_groups["group"].nunique() > 1
                        else "repeats"
                        if _repeats_for_certain(several_groups)
                        else "runs the files record alike"
                    )
                    check.recomputed, check.arithmetic = _aggregate(stats, runs, what)
                    check.per_request = per_request_rates(tables, stats, runs)
                    check.windows = _windows(tables, stats, runs)
                    check.mixed = _mixed_rates(tables, stats, runs)
                    if several_groups["group"].nunique() == 1:
                        check.alike = _alike(stats, runs)
                elif check.metric == "stream_tps":
                    _stream(check, stats, runs)
                elif check.metric == "scaling":
                    _scaling(check, tables, stats)
                if check.recomputed is None and check.problem is None:
                    check.problem = "the runs it refers to have no recomputable figure"
                check.arithmetic = [*notes, *check.arithmetic]
        if check.problem is None and check.recomputed is not None:
            if check.recomputed > 0 and math.isfinite(check.recomputed):
                check.factor = check.value / check.recomputed
            else:
                check.problem = (
                    f"the recomputed figure is {fmt(check.recomputed)}, so no claim can be "
                    "compared with it"
                )
        if check.factor is None and check.problem is None:
            check.problem = "the runs it refers to have no recomputable figure"
        out.append(check)
    return out


def _ref(claim: pd.Series) -> str:
    """Where the claim was written: `path:line`, or `--claim` for the command line."""
    line = number(claim["source_line"])
    return f"{claim['source_path']}:{int(line)}" if line is not None else str(claim["source_path"])


def _stream(check: ClaimCheck, stats: pd.DataFrame, runs: list[str]) -> None:
    values = stats.loc[runs, "median_decode_tps"].dropna()
    if values.empty and all(_prompt_test(stats, r) for r in runs):
        check.problem = (
            f"run {runs[0]} is a prompt-processing test: it decodes nothing, so it has no "
            "stream rate (its prompt rate is checked with aggregate=)"
        )
        return
    if values.empty:
        check.problem = "no first-token times, so no per-request decode rate"
        return
    check.recomputed = float(np.median(values))
    check.arithmetic = [
        f"median per-request decode rate = output tokens ÷ (t_end − t_first) "
        f"= {fmt(check.recomputed)} tok/s"
    ]


def _scaling(check: ClaimCheck, tables: Tables, stats: pd.DataFrame) -> None:
    runs = tables.runs.set_index("run", drop=False)
    group = str(runs.at[check.runs[0], "group"])
    members = runs[runs["group"].astype(str) == group]
    base = members[members["concurrency"] == members["concurrency"].min()]
    if set(map(str, base["run"])) & set(check.runs):
        # a run divided by itself is 1×, whatever the claim: that is no scaling figure
        lowest = number(members["concurrency"].min())
        check.problem = (
            f"run {check.runs[0]} is the lowest N of its sweep ({group}"
            + (f", N={lowest:g}" if lowest is not None else "")
            + "): no lower-N run to scale from; name the sweep's files together (or "
            "--group-by settings), or the base run as a speed-up: "
            f"speedup={check.value:g} runs={check.runs[0]},BASE"
        )
        return
    base_value, base_lines = _aggregate(stats, [str(r) for r in base["run"]])
    top, top_lines = _aggregate(stats, check.runs)
    if base_value is None or top is None:
        check.problem = "the sweep lacks a recomputable lowest-N or claimed-N run"
        return
    check.recomputed = top / base_value
    check.compared = [str(r) for r in base["run"]]
    check.arithmetic = [
        *top_lines,
        *base_lines,
        f"scaling = {fmt(top)} ÷ {fmt(base_value)} = {fmt(check.recomputed, 2)}×",
    ]


def _speedup(check: ClaimCheck, claim: pd.Series, tables: Tables, stats: pd.DataFrame) -> None:
    pair = claim["runs"]
    if not pair:
        check.problem = "a speed-up claim needs runs: [a, b]"
        return
    known = set(tables.runs["run"].astype(str))
    missing = [r for r in pair if r not in known]
    if missing:
        check.problem = f"names run {missing[0]!r}, which is not in the trace"
        return
    check.runs = list(pair)
    if _prompt_test(stats, pair[0]) != _prompt_test(stats, pair[1]):
        check.problem = (
            "one of the two runs is a prompt-processing test and the other a generation "
            "test: their rates count different tokens"
        )
        return
    (a, line_a), (b, line_b) = (_run_rate(stats, r) for r in pair)
    if math.isnan(a) or math.isnan(b) or b <= 0:
        check.problem = "one of the two runs has no recomputable aggregate"
        return
    check.recomputed = float(a / b)
    check.arithmetic = [
        *(line for line in (line_a, line_b) if line is not None),
        f"speed-up = {fmt(a)} ÷ {fmt(b)} = {fmt(check.recomputed, 2)}×",
    ]


def per_request_rates(tables: Tables, stats: pd.DataFrame, runs: list[str]) -> list[Reading]:
    """What a per-request "tok/s" of these runs can be: the requests' own reported rates,
    output ÷ end-to-end time, the decode rate (over completed requests), or the summary's mean
    per-request rate and 1 ÷ TPOT when the file has no request rows."""
    out: list[Reading] = []
    rows = tables.rows_of(runs)
    rows = rows[rows["ok"].astype(bool)]
    n = len(rows)
    per_e2e = rows["output_tokens"] / rows["e2e"].where(rows["e2e"] > 0)
    for label, series in (
        ("the requests' own reported tok/s", rows["reported_tps"]),
        ("output tokens ÷ end-to-end time", per_e2e),
        ("output tokens ÷ decode time", rows["decode_tps"]),
    ):
        values = pd.to_numeric(series, errors="coerce").replace([np.inf, -np.inf], np.nan).dropna()
        if values.empty:
            continue
        median, mean = float(values.median()), float(values.mean())
        both = f"median {fmt(median)}, mean {fmt(mean)} over {len(values):,} completed requests"
        for value in (median, mean):
            out.append(Reading(value, f"{both}: {label}", f"per request, {label}: {both} tok/s"))
    if n:
        return out
    summaries = tables.runs.set_index("run", drop=False)
    for run_id in runs:
        summary: object = summaries.at[run_id, "summary"] if run_id in summaries.index else None
        if not isinstance(summary, dict):
            continue
        mean_rate = number(summary.get("mean_reported_tps"))
        if mean_rate is not None and mean_rate > 0:
            out.append(
                Reading(
                    mean_rate,
                    f"mean {fmt(mean_rate)} per request, from the file's summary",
                    f"per request, the summary's mean rate = {fmt(mean_rate)} tok/s",
                )
            )
        tpot = number(summary.get("mean_tpot_s"))
        if tpot is not None and tpot > 0:
            out.append(
                Reading(
                    1 / tpot,
                    f"one stream's decode rate, 1 ÷ mean TPOT = {fmt(1 / tpot)}",
                    f"per request, 1 ÷ mean TPOT {fmt(tpot * 1000, 2)} ms = {fmt(1 / tpot)} tok/s",
                )
            )
    return out


def _alike(stats: pd.DataFrame, runs: list[str]) -> list[Reading]:
    """Each run's aggregate, where a claim that names no run matches several runs of one
    group: the files record them alike, so the claim may be any one of them."""
    if len(runs) < 2:
        return []
    out = []
    for run_id in runs:
        if _prompt_test(stats, run_id):
            continue  # an output aggregate only: a prompt test's claim is about prefill
        rate, line = _run_rate(stats, run_id)
        if rate > 0 and line is not None:
            out.append(
                Reading(
                    rate, f"run {run_id}, one of the {len(runs)} runs the files record alike", line
                )
            )
    return out


def _windows(tables: Tables, stats: pd.DataFrame, runs: list[str]) -> list[Reading]:
    """The aggregate from the first send to the last successful end, for a run whose last
    requests failed: some tools (AIPerf's Benchmark Duration) end their window there."""
    if len(runs) != 1:
        return []
    run_id = runs[0]
    rows = tables.rows_of([run_id])
    ok = rows[rows["ok"].astype(bool)]
    tokens, wall = (number_or_nan(stats.at[run_id, c]) for c in ("output_tokens", "wall_s"))
    if ok.empty or not tokens > 0 or not wall > 0:
        return []
    start, last_ok = rows["t_send"].min(), ok["t_end"].max()
    window = number_or_nan(last_ok - start)
    if not 0 < window < wall or len(ok) == len(rows):
        return []
    failed_after = int((rows.loc[~rows["ok"].astype(bool), "t_end"] > last_ok).sum())
    if not failed_after:
        return []
    rate = tokens / window
    return [
        Reading(
            rate,
            f"the window from the first start to the last successful end ({fmt(window, 2)} s; "
            f"{_requests(failed_after, 'failed request')} ended after it)",
            f"{fmt(tokens, 0)} tokens ÷ {fmt(window, 2)} s (first start → last successful end) "
            f"= {fmt(rate, rate_digits(rate) + 1)} tok/s",
        )
    ]


def _mixed_rates(tables: Tables, stats: pd.DataFrame, runs: list[str]) -> list[Reading]:
    """(prompt + generated tokens) ÷ time of a test that times both phases together (phase
    "prompt+generation": llama-bench pp512+tg128, whose t/s counts both)."""
    phases = tables.runs.set_index("run")["phase"] if "phase" in tables.runs else None
    out: list[Reading] = []
    for run_id in runs:
        if phases is None or run_id not in phases.index or phases[run_id] != "prompt+generation":
            continue
        tokens, prompt, wall = (
            number_or_nan(stats.at[run_id, c])
            for c in ("output_tokens", "prompt_tokens_total", "wall_s")
        )
        if not wall > 0 or math.isnan(tokens + prompt):
            continue
        rate = (prompt + tokens) / wall
        out.append(
            Reading(
                rate,
                "llama-bench's rate for a prompt+generation test, which counts prompt and "
                "generated tokens together",
                f"({fmt(prompt, 0)} prompt + {fmt(tokens, 0)} generated tokens) ÷ "
                f"{fmt(wall, 2)} s = {fmt(rate, rate_digits(rate) + 1)} tok/s",
            )
        )
    return out


def _requests(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"
