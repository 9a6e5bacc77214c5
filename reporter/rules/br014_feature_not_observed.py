"""A feature was switched on, and the trace shows it did nothing.

## What it checks
For each run whose engine flags ask for continuous batching, prefix caching or speculative
decoding (the flag table of BR013; prefix caching also when a scraped
`vllm:cache_config_info` sample says `enable_prefix_caching="True"`, vLLM's default), whether
the trace shows the feature at work:

- batching: requests decode together (overlap of decode intervals above `serial_overlap`,
  1.15) and the sweep's aggregate grows with N (by `flat_growth`, 1.2×, from the lowest N to
  at least twice it);
- prefix caching: a prompt sent again (same `prompt_sha256`) after the first one's prefill
  finished gets its first token sooner (by at least `cache_ttft_drop`, 20%), and the server's
  cache-hit counter rises;
- speculative decoding (also when `workload.speculative.enabled` is true): the server's
  draft counter rises.

## Why it matters
A flag accepted is not a feature enabled (METHOD.md §3). Case A: `--continuous-batching 4`,
then a staircase of completions and a flat sweep; a `--prefix-cache` flag, then one
6,000-token prompt sent three times with the time to first token stuck at 6.8 s and the
cache-hit counter at 0. Throughput "with batching" or "with caching" means nothing if the
trace shows neither.

## How it decides
Batching is not observed when the run's decode intervals do not overlap (overlap ≤
`serial_overlap`; without first-token times, when its completions form BR003's ladder) or
its sweep is flat (growth < `flat_growth`); observed when they overlap or the sweep rises.

Prefix caching: the requests of the runs served by the same server configuration (same
file, engine, version, flags, model, hardware), in file order; for each prompt sent more
than once, the first request's time to first token against the median of the later ones
sent after its prefill ended (a request's `prompt_tokens`, else the run's). Not
observed when the counter stayed at zero, or (without counters) when the later requests are
less than 20% faster to the first token; only prompts of at least `cache_min_prompt_tokens`
(256) count, since a short prefill hides any saving. Speculation: not observed when the draft
counters did not rise.

Counters are read from the run record's `metrics_before` / `metrics_after` (Prometheus
samples `{"name{labels}": value}`, nested dicts, or the text format), or the same keys or
`metrics_delta` in its `run_end` record. Prefix-cache hits, first family present:
`vllm:prefix_cache_hits_total` (and `vllm:gpu_prefix_cache_hits_total`),
`vllm:prompt_tokens_by_source_total{source="local_cache_hit"}`,
`vllm:prompt_tokens_cached_total`, `vllm:external_prefix_cache_hits_total`, `sglang:*cache*hit*`,
`llamacpp:*cache*hit*`, then any `*cache*hit*` counter (not `*_rate`, multimodal or encoder
caches). Drafts: `vllm:spec_decode_num_drafts_total`, `vllm:spec_decode_num_draft_tokens_total`,
`sglang:*spec*`/`*draft*`, then any `*spec*draft*` or `*draft*tokens*` counter.

A run whose every flagged feature is observed passes; one feature not observed fires.

## Worked example
METHOD.md §3: prefix caching on (`--prefix-cache`), one 6,000-token prompt sent three times:
time to first token 6.8 s each time (0% drop), `prefix_cache_hits` 0 before and after:
fired. The same case's batching flag with completions at 5.5 / 11.1 / 16.8 / 22.5 s
(overlap 1.0): fired.

## When it cannot decide
No flag asking for these features: not applicable. Batching at N=1 with no sweep; prefix
caching with no prompt sent twice (or no `prompt_sha256`), or prompts too short; speculation
without draft counters: undecidable for that feature.

## What to do
Read the startup log (BR013); rerun with the flag off and on and compare; for a cache, send
one long prompt several times one after the other and scrape `/metrics` before and after.

## References
METHOD.md §3 "Slope with N"; seed 000 §3, §5; FORMATS.md §5.2 (prefix cache and spec decode
counters).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from reporter import compare, features
from reporter.config import threshold
from reporter.facts import SERIAL_OVERLAP
from reporter.numbers import fmt
from reporter.rules.base import AuditData, Finding, Rule, request_refs, run_ref
from reporter.slope import FLAT_GROWTH, levels
from reporter.types import Outcome, Severity
from reporter.values import number, number_or_nan

CACHE_TTFT_DROP = threshold(
    "cache_ttft_drop",
    0.20,
    "a cache hit skips the cached prefill: on a long prompt the time to first token falls by "
    "far more than its ~5% run-to-run noise (METHOD §7); less than 20% is no hit",
    high=1.0,
)
CACHE_MIN_PROMPT = threshold(
    "cache_min_prompt_tokens",
    256,
    "below a few hundred tokens prefill takes milliseconds, and a cache hit cannot show in "
    "the time to first token",
)

OBSERVED, NOT_OBSERVED, CANNOT = "observed", "not observed", "cannot tell"
#: Times to first token listed in a message and in the numbers (the median takes them all).
MAX_SHOWN = 16


@dataclass
class Verdict:
    feature: str
    flag: str
    state: str
    why: str
    arithmetic: list[str] = field(default_factory=list)
    numbers: dict[str, Any] = field(default_factory=dict)
    refs: list[str] = field(default_factory=list)


def check(data: AuditData) -> list[Finding]:
    repeats: dict[tuple[str, ...], _Repeats] = {}
    sweeps: dict[str, pd.Series] = {}
    return [_check_run(data, str(r["run"]), r, repeats, sweeps) for r in data.run_rows()]


def _cache_config(run: Any) -> str | None:
    """`enable_prefix_caching="True"` in a scraped `vllm:cache_config_info` sample, if any."""
    before, after, _ = features.run_metrics(run.get("extra"))
    for samples in (before or {}, after or {}):
        for key in samples:
            if "cache_config_info" in key and re.search(
                r'enable_prefix_caching="(true|1)"', key, re.I
            ):
                return 'vllm:cache_config_info{enable_prefix_caching="True"}'
    return None


def _check_run(
    data: AuditData,
    run_id: str,
    run: Any,
    repeats: dict[tuple[str, ...], _Repeats],
    sweeps: dict[str, pd.Series],
) -> Finding:
    wanted = features.requested(features.parse_flags(run.get("engine_flags") or []))
    config = _cache_config(run)
    if config is not None and "prefix_cache" not in wanted:
        wanted["prefix_cache"] = [features.Flag(config, "prefix-cache", "true")]
    if features.as_bool(run.get("spec_enabled")) and "speculation" not in wanted:
        # where the switch was read: the run record, or another tool's file
        said = compare.speculation_state(run)[1]
        wanted["speculation"] = [features.Flag(said, "speculative", "true")]
    checks = []
    if "batching" in wanted:
        checks.append(_batching(data, run_id, wanted["batching"][0].text, sweeps))
    if "prefix_cache" in wanted:
        checks.append(_prefix_cache(data, run_id, run, wanted["prefix_cache"][0].text, repeats))
    if "speculation" in wanted:
        checks.append(_speculation(run, wanted["speculation"][0].text))
    if not checks:
        return RULE.finding(
            run_id,
            Outcome.NOT_APPLICABLE,
            "no flag asking for batching, prefix caching or speculative decoding (engine.flags, "
            "or the server's cache_config_info)",
        )
    arithmetic = [line for c in checks for line in c.arithmetic]
    numbers: dict[str, Any] = {c.feature: c.state for c in checks}
    for c in checks:
        numbers |= c.numbers
    refs = [*run_ref(data, run_id), *(r for c in checks for r in c.refs)][:8]
    missing = [c for c in checks if c.state == NOT_OBSERVED]
    if missing:
        text = "; ".join(f"{c.feature} flagged on ({c.flag}), but {c.why}" for c in missing)
        return RULE.finding(
            run_id,
            Outcome.FIRED,
            text,
            arithmetic=arithmetic,
            numbers=numbers,
            refs=refs,
            evidence=[
                {"feature": c.feature, "flag": c.flag, "state": c.state, "why": c.why}
                for c in checks
            ],
            help="do not credit the figure to this feature; read the server log for a refusal "
            "(BR013) and measure with the flag off and on",
        )
    seen = [c for c in checks if c.state == OBSERVED]
    if not seen:
        text = "; ".join(f"{c.feature} ({c.flag}): {c.why}" for c in checks)
        return RULE.finding(
            run_id,
            Outcome.UNDECIDABLE,
            f"cannot tell whether the flagged features worked: {text}",
            arithmetic=arithmetic,
            numbers=numbers,
            refs=refs,
        )
    text = "; ".join(f"{c.feature} ({c.flag}): {c.why}" for c in checks)
    return RULE.finding(
        run_id, Outcome.PASSED, text, arithmetic=arithmetic, numbers=numbers, refs=refs
    )


def _batching(data: AuditData, run_id: str, flag: str, sweeps: dict[str, pd.Series]) -> Verdict:
    """`sweeps`: each group's aggregate per level (slope.levels), taken once for all its runs."""
    n = data.concurrency(run_id)
    limit = data.config[SERIAL_OVERLAP]
    growth_limit = data.config[FLAT_GROWTH]
    lines: list[str] = []
    numbers: dict[str, Any] = {}
    states: list[tuple[str, str]] = []
    overlap = compare.cell(data.stats, run_id, "overlap")
    ok = int(compare.cell(data.stats, run_id, "ok"))
    if not math.isnan(n) and n > 1 and ok >= 2 and not math.isnan(overlap):
        numbers["overlap"] = overlap
        lines.append(
            f"overlap of decode intervals at N={n:g}: {fmt(overlap, 2)} (serial ≤ {fmt(limit, 2)})"
        )
        if overlap <= limit:
            states.append(
                (
                    NOT_OBSERVED,
                    f"its {ok} requests decoded one at a time (overlap {fmt(overlap, 2)})",
                )
            )
        else:
            states.append((OBSERVED, f"requests decoded together (overlap {fmt(overlap, 2)})"))
    elif not math.isnan(n) and n > 1 and ok >= 2:
        # no first-token times: the completion-time ladder of BR003 decides
        ladder = data.facts.runs[run_id].ladder
        if ladder.outcome in (Outcome.FIRED, Outcome.PASSED):
            lines += [f"completion times (BR003): {ladder.message}"]
            if ladder.outcome is Outcome.FIRED:
                states.append((NOT_OBSERVED, f"its completions form a ladder ({ladder.message})"))
            else:
                states.append((OBSERVED, f"its completions cluster ({ladder.message})"))
    group = str(data.runs.at[run_id, "group"])
    members = data.groups().get(group)
    if members is None:
        table = levels(data, [run_id])
    else:
        if group not in sweeps:
            sweeps[group] = levels(data, members)
        table = sweeps[group]
    if len(table) >= 2 and float(table.index[-1]) >= 2 * float(table.index[0]):
        growth = float(table.iloc[-1] / table.iloc[0])
        series = " / ".join(fmt(v) for v in table.to_numpy())
        ns = "/".join(f"{x:g}" for x in table.index)
        numbers["growth"] = growth
        lines.append(
            f"sweep {group}: {series} tok/s at N={ns}, growth {fmt(growth, 2)}× "
            f"(flat < {fmt(growth_limit, 2)}×)"
        )
        if growth < growth_limit:
            states.append((NOT_OBSERVED, f"the sweep is flat ({series} tok/s at N={ns})"))
        else:
            states.append(
                (
                    OBSERVED,
                    f"the sweep grows {fmt(growth, 2)}× from N="
                    f"{table.index[0]:g} to {table.index[-1]:g}",
                )
            )
    bad = [w for st, w in states if st == NOT_OBSERVED]
    good = [w for st, w in states if st == OBSERVED]
    if bad:
        return Verdict("batching", flag, NOT_OBSERVED, " and ".join(bad), lines, numbers)
    if good:
        return Verdict("batching", flag, OBSERVED, " and ".join(good), lines, numbers)
    return Verdict(
        "batching",
        flag,
        CANNOT,
        "one request at a time and no sweep over N to show batching",
        lines,
        numbers,
    )


def _ordered_requests(data: AuditData, runs: list[str]) -> pd.DataFrame:
    frames = []
    for order, r in enumerate(runs):
        rows = data.requests_of(r)
        if len(rows):
            frames.append(rows.assign(_order=order))
    if not frames:
        return data.tables.requests.iloc[0:0].assign(_order=0)
    req = pd.concat(frames)
    return req.sort_values(["_order", "t_send", "source_line"], kind="stable")


def _prefix_cache(
    data: AuditData,
    run_id: str,
    run: Any,
    flag: str,
    memo: dict[tuple[str, ...], _Repeats],
) -> Verdict:
    # The runs of the same server in file order: a prompt cached by one is there for the next.
    runs = data.same_server(run_id)
    key = tuple(runs)
    if key not in memo:
        req = _ordered_requests(data, runs)
        memo[key] = _Repeats(req[req["ok"] & req["prompt_sha256"].notna()])
    tab = memo[key]
    counter = features.counter_delta(run.get("extra"), features.CACHE_HIT_COUNTERS)
    lines: list[str] = []
    numbers: dict[str, Any] = {}
    refs: list[str] = []
    if counter is not None:
        before = "absent" if counter.before is None else fmt(counter.before, 0)
        lines.append(
            f"cache-hit counter {counter.names[0]} ({counter.where}): before {before}, "
            f"after {fmt(counter.after, 0)}, rise {fmt(counter.delta, 0)}"
        )
        numbers["cache_hits"] = counter.delta
    best = tab.best(run_id, number_or_nan(run.get("prompt_tokens")))
    repeats = [best] if best is not None else []
    min_prompt = data.config[CACHE_MIN_PROMPT]
    drop_limit = data.config[CACHE_TTFT_DROP]
    ttft_state: tuple[str, str] | None = None
    if repeats:
        rep = repeats[0]
        numbers |= {
            "prompt_tokens": rep["prompt_tokens"],
            "sends": rep["sends"],
            "ttft_first_s": rep["first"],
            "ttft_later_s": rep["later"],
            "ttft_drop": rep["drop"],
        }
        refs = rep["refs"]
        shown = _ttfts(rep)
        lines.append(
            f"prompt {rep['sha'][:12]}… ({fmt(rep['prompt_tokens'], 0)} tokens) sent "
            f"{rep['sends']} times: time to first token {shown} s; later median "
            f"{fmt(rep['later_median'], 2)} s vs first {fmt(rep['first'], 2)} s = "
            f"{fmt(rep['drop'] * 100, 0)}% drop (a hit needs ≥ {drop_limit:.0%})"
        )
        long_enough = (
            rep["prompt_tokens"] >= min_prompt
            if not math.isnan(rep["prompt_tokens"])
            else rep["first"] >= 0.2
        )
        if not long_enough:
            ttft_state = (
                CANNOT,
                f"the repeated prompt has {fmt(rep['prompt_tokens'], 0)} "
                f"tokens (< {fmt(min_prompt, 0)}): too short for a hit to show",
            )
        elif rep["drop"] < drop_limit:
            ttft_state = (
                NOT_OBSERVED,
                f"the same {fmt(rep['prompt_tokens'], 0)}-token prompt sent "
                f"{rep['sends']} times kept its time to first token ({shown} s)",
            )
        else:
            ttft_state = (
                OBSERVED,
                f"the repeated prompt's time to first token fell "
                f"{fmt(rep['drop'] * 100, 0)}% ({shown} s)",
            )
    if counter is not None and counter.delta > 0:
        why = f"the cache-hit counter rose by {fmt(counter.delta, 0)}"
        if ttft_state is not None and ttft_state[0] == OBSERVED:
            why = f"{ttft_state[1]} and {why}"
        return Verdict("prefix caching", flag, OBSERVED, why, lines, numbers, refs)
    if counter is not None and repeats:
        why = f"the cache-hit counter stayed at {fmt(counter.after, 0)}"
        if ttft_state is not None and ttft_state[0] != OBSERVED:
            why = (
                f"the same {fmt(repeats[0]['prompt_tokens'], 0)}-token prompt sent "
                f"{repeats[0]['sends']} times kept its time to first token "
                f"({_ttfts(repeats[0])}"
                f" s) and {why}"
            )
        return Verdict("prefix caching", flag, NOT_OBSERVED, why, lines, numbers, refs)
    if ttft_state is not None:
        return Verdict("prefix caching", flag, ttft_state[0], ttft_state[1], lines, numbers, refs)
    if not tab.has_sha:
        why = "no prompt_sha256 on the requests, so no repeated prompt to test the cache with"
    else:
        why = "no prompt was sent twice (prompt_sha256), so there was nothing to hit"
    if counter is not None:
        why += f"; the cache-hit counter stayed at {fmt(counter.after, 0)}"
    return Verdict("prefix caching", flag, CANNOT, why, lines, numbers, refs)


class _Repeats:
    """Prompts sent more than once by the runs of one server, tabulated once (vectorised).

    The first send of each prompt is set against the later ones that could hit the cache:
    within a run, those sent after the first one's first token (its prefill was done); across
    runs, every later send.
    """

    def __init__(self, req: pd.DataFrame) -> None:
        self.has_sha = bool(len(req))
        req = req[req["prompt_sha256"].duplicated(keep=False)].reset_index(drop=True)
        sha = req["prompt_sha256"].astype(object).astype(str)
        runs = req["run"].astype(object).astype(str)
        is_first = (req.groupby(sha, sort=False).cumcount() == 0).to_numpy(dtype=bool)
        first = req[is_first].set_index(sha[is_first])
        first_run = sha.map(first["run"].astype(object).astype(str)).to_numpy(dtype=object)
        first_t = sha.map(first["t_first"]).to_numpy(dtype="float64")
        t_send = req["t_send"].to_numpy(dtype="float64")
        with np.errstate(invalid="ignore"):
            after = (runs.to_numpy(dtype=object) != first_run) | (t_send >= first_t)
        later = ~is_first & after & req["ttft"].notna().to_numpy(dtype=bool)
        self.req, self.sha, self.later = req, sha, later
        lsha = sha[later]
        table = pd.DataFrame(
            {
                "sends": req[later].groupby(lsha).size() + 1,
                "later_median": req.loc[later, "ttft"].groupby(lsha).median(),
            }
        )
        table = table.join(first[["ttft", "prompt_tokens", "run"]], how="inner")
        self.table = table[table["ttft"].notna()]
        pairs = pd.DataFrame({"sha": lsha, "run": runs[later]}).drop_duplicates()
        own = pd.DataFrame(
            {"sha": self.table.index, "run": self.table["run"].astype(object).astype(str)}
        )
        self.pairs = pd.concat([pairs, own], ignore_index=True).drop_duplicates()

    def best(self, run_id: str, run_prompt: float) -> dict[str, Any] | None:
        """The repeated prompt that shows a hit best (the longest) among those of `run_id`."""
        shas = list(self.pairs.loc[self.pairs["run"] == run_id, "sha"].unique())
        rows = self.table.loc[self.table.index.intersection(shas)]
        if not len(rows):
            return None
        tokens = rows["prompt_tokens"].fillna(run_prompt)
        order = pd.DataFrame({"t": tokens.fillna(-1.0), "f": rows["ttft"]})
        sha = str(order.sort_values(["t", "f"], ascending=False, kind="stable").index[0])
        mask = (self.sha == sha).to_numpy(dtype=bool)
        first_row = self.req[mask & ~self.later].iloc[:1]
        later_rows = self.req[mask & self.later]
        first_ttft = compare.cell(rows, sha, "ttft")
        median = compare.cell(rows, sha, "later_median")
        return {
            "sha": sha,
            "sends": int(compare.cell(rows, sha, "sends")),
            "first": first_ttft,
            "later": [float(x) for x in later_rows["ttft"].to_numpy()[:MAX_SHOWN]],
            "later_median": median,
            "drop": 1 - median / first_ttft if first_ttft > 0 else 0.0,
            "prompt_tokens": compare.cell(pd.DataFrame({"t": tokens}), sha, "t"),
            "refs": request_refs(pd.concat([first_row, later_rows.iloc[:7]])),
        }


def _ttfts(rep: dict[str, Any]) -> str:
    """The times to first token of a repeated prompt, first send first (a few of them)."""
    values = [rep["first"], *rep["later"]][:8]
    text = ", ".join(fmt(x, 2) for x in values)
    return text if rep["sends"] <= len(values) else f"{text}, … ({rep['sends']:,} sends)"


def _speculation(run: Any, flag: str) -> Verdict:
    drafts = features.counter_delta(run.get("extra"), features.SPEC_DRAFT_COUNTERS)
    if drafts is None:
        counted = _tool_drafts(run, flag)
        if counted is not None:
            return counted
        extra = run.get("extra")
        accepted = number(extra.get("accept_length")) if isinstance(extra, dict) else None
        return Verdict(
            "speculative decoding",
            flag,
            CANNOT,
            "no draft counter was scraped (metrics_before / metrics_after)"
            + (
                f"; the server's accept_length {fmt(accepted, 2)} shows drafts accepted, but "
                "over all its traffic, not this run's alone"
                if accepted is not None
                else " and the tool counted no drafts"
            ),
        )
    before = "absent" if drafts.before is None else fmt(drafts.before, 0)
    lines = [
        f"draft counter {drafts.names[0]} ({drafts.where}): before {before}, after "
        f"{fmt(drafts.after, 0)}, rise {fmt(drafts.delta, 0)}"
    ]
    numbers = {"drafts": drafts.delta}
    if drafts.delta > 0:
        return Verdict(
            "speculative decoding",
            flag,
            OBSERVED,
            f"the draft counter rose by {fmt(drafts.delta, 0)}",
            lines,
            numbers,
        )
    return Verdict(
        "speculative decoding",
        flag,
        NOT_OBSERVED,
        f"the draft counter {drafts.names[0]} stayed at {fmt(drafts.after, 0)}",
        lines,
        numbers,
    )


def _tool_drafts(run: Any, flag: str) -> Verdict | None:
    """The drafts a benchmark tool counted over the run from the server's counters (vLLM's
    spec_decode_num_drafts, draft and accepted tokens)."""
    summary = run.get("summary")
    if not isinstance(summary, dict):
        return None
    drafts = number(summary.get("spec_drafts"))
    if drafts is None:
        return None
    proposed = number(summary.get("spec_draft_tokens"))
    accepted = number(summary.get("spec_accepted_tokens"))
    line = f"the tool counted {fmt(drafts, 0)} drafts during the run" + (
        f", {fmt(accepted, 0)} of {fmt(proposed, 0)} draft tokens accepted"
        if proposed and accepted is not None
        else ""
    )
    numbers = {"drafts": drafts}
    if drafts > 0:
        why = f"the tool counted {fmt(drafts, 0)} drafts"
        return Verdict("speculative decoding", flag, OBSERVED, why, [line], numbers)
    why = "the tool counted no drafts during the run"
    return Verdict("speculative decoding", flag, NOT_OBSERVED, why, [line], numbers)


RULE = Rule(
    code="BR014",
    name="feature-not-observed",
    severity=Severity.WARNING,
    summary="a feature is claimed on (batching, prefix cache) but the trace shows it off",
    check=check,
    doc=__doc__ or "",
)
