"""Performance features, the flags that ask for them and the log lines that refuse them.

One small table (``FEATURES``) names each feature the method cares about (batching, prefix
cache, speculative decoding, forced length, and two common kernel switches), the flag names
that turn it on or off, and the words a log line uses for it. Matching is by flag name and
feature word, never by one engine's wording, so a refusal is recognised whichever engine
wrote it. BR013 (refused in the log), BR014 (not observed) and BR010/BR011 (speculation)
read it.

Server metrics (``/metrics`` scrapes kept by the recorder, or written by hand) are read here
too: ``counter_value`` sums the samples of the counters a feature leaves behind.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

#: Words that say a feature was refused, switched off or replaced.
REFUSAL = re.compile(
    r"not supported|unsupported|not (yet )?implemented|not available|unavailable|"
    r"\bdisabl(ed|ing|e)\b|\brefus(ed|ing|e)\b|\bignor(ed|ing|e)\b|fall(ing)?[ -]?back|"
    r"not enabled|cannot (be )?(enabled?|used?|support)|can't (be )?(enabled?|used?)|"
    r"could not|couldn't|incompatible|not compatible|no effect|does not support|"
    r"doesn't support|not support|will not|won't|\bskipp(ed|ing)\b|turn(ed|ing)? off|"
    r"deactivat|overrid(den|ing|e)|reverting|forc(ed|ing) to (1|one|serial|off)|"
    r"only (supports?|works?|available)",
    re.I,
)

#: Levels at which a log line counts as a complaint.
COMPLAINT_LEVELS = ("warning", "error")


@dataclass(frozen=True)
class Feature:
    """A performance feature: how a flag asks for it and how a log line names it."""

    key: str
    label: str
    #: Matched against a flag's normalised name (no dashes in front, `_` → `-`, lower case).
    flag: re.Pattern[str]
    #: Flags that name the feature but turn it off (`--no-cont-batching`, `--disable-radix-cache`).
    off_flag: re.Pattern[str]
    #: Matched against log text.
    words: re.Pattern[str]
    #: A flag whose value is a number asks for the feature only above this value
    #: (`--parallel 1` is one slot: no batching).
    above: float | None = None
    #: Flag values that mean "off".
    off_values: tuple[str, ...] = ("0", "false", "off", "no", "none", "disabled")


def _re(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.I)


FEATURES: tuple[Feature, ...] = (
    Feature(
        "batching",
        "continuous batching",
        flag=_re(
            r"^(enable-)?cont(inuous)?-?batch(ing)?$|^cb$|^parallel$|^np$|^n-parallel$|"
            r"^max-num-seqs$|^max-running-requests$|^max-batch-size$|^num-slots$|"
            r"^max-concurrent(-requests|-seqs)?$"
        ),
        off_flag=_re(r"^no-cont(inuous)?-?batch|^disable-cont(inuous)?-?batch"),
        words=_re(
            r"continuous[ _-]?batch|cont[ _-]batch|\bbatching\b|max[ _-]num[ _-]seqs|"
            r"\bn[ _-]parallel\b|--parallel\b|parallel (slots|sequences|requests)|"
            r"multiple sequences|more than one sequence|concurrent (requests|sequences)"
        ),
        above=1,
    ),
    Feature(
        "prefix_cache",
        "prefix caching",
        flag=_re(
            r"^(enable-)?prefix-cach(e|ing)$|^cache-prompt$|^prompt-cache(-all)?$|"
            r"^enable-radix-cache$|^radix-cache$|^kv-cache-reuse$"
        ),
        off_flag=_re(r"^no-(enable-)?prefix-cach|^disable-(radix|prefix)-cach|^no-cache-prompt"),
        words=_re(
            r"prefix[ _-]?cach|prompt[ _-]?cach|radix[ _-]?cache|"
            r"cache_prompt|kv[ _-]?cache[ _-]reuse|automatic prefix"
        ),
        above=0,
    ),
    # llama.cpp's --cache-reuse N: reuse of cached chunks past the common prefix, by shifting
    # the KV cache. Refused ("cache_reuse is not supported by this context"), the prefix cache
    # itself stays on ("prompt cache is enabled"): its own feature, not prefix caching
    Feature(
        "cache_reuse",
        "KV cache reuse by shifting",
        flag=_re(r"^cache-reuse$"),
        off_flag=_re(r"^no-cache-reuse$"),
        words=_re(r"\bcache_reuse\b|--cache-reuse\b"),
        above=0,
    ),
    Feature(
        "speculation",
        "speculative decoding",
        flag=_re(
            r"^speculative(-[a-z-]+)?$|^spec-decod(e|ing)$|^num-speculative-tokens$|"
            r"^(model-)?draft(-model)?(-path)?$|^md$|^draft-(max|min|n)$|^spec-[a-z-]+$|"
            r"^lookup(-decoding)?$|^ngram(-[a-z-]+)?$|^mtp$|^eagle[0-9]?$|^medusa$"
        ),
        off_flag=_re(r"^no-spec|^disable-spec"),
        words=_re(
            r"speculat|\bspec(ulative)?[ _-]?decod|draft[ _-]?model|\bdraft(ing)?\b|"
            r"\bmtp\b|\beagle[0-9]?\b|\bmedusa\b|\bngram\b|lookahead"
        ),
        above=0,
    ),
    Feature(
        "forced_length",
        "forced output length",
        flag=_re(r"^ignore-eos$|^min-tokens$|^ignore-eos-token$"),
        off_flag=_re(r"^no-ignore-eos"),
        words=_re(r"ignore[ _-]?eos|min[ _-]?tokens|eos[ _-]?token.*ignor"),
        above=0,
    ),
    Feature(
        "flash_attention",
        "flash attention",
        flag=_re(r"^flash-attn$|^fa$|^flash-attention$|^use-flash-attn$|^enable-flash-attn$"),
        off_flag=_re(r"^no-flash-attn|^disable-flash"),
        words=_re(r"flash[ _-]?att(n|ention)?"),
    ),
    Feature(
        "chunked_prefill",
        "chunked prefill",
        flag=_re(r"^(enable-)?chunked-prefill(-size)?$"),
        off_flag=_re(r"^no-(enable-)?chunked-prefill|^disable-chunked-prefill"),
        words=_re(r"chunked[ _-]?prefill"),
        above=0,
    ),
)

BY_KEY: dict[str, Feature] = {f.key: f for f in FEATURES}


@dataclass(frozen=True)
class Flag:
    """One flag as passed: its spelling, its normalised name and its value (if any)."""

    text: str
    name: str
    value: str | None


_FLAG_TOKEN = re.compile(r"^--?[A-Za-z][\w.-]*$")


def _norm(name: str) -> str:
    return name.lstrip("-").replace("_", "-").lower()


def parse_flags(flags: Iterable[str] | None) -> list[Flag]:
    """Flags as written in `engine.flags` → names and values.

    Takes `["--parallel", "4"]`, `["--parallel 4"]`, `["--parallel=4"]`, `["-cb"]` and
    `key=value` settings (`enable_prefix_caching=true`) alike.
    """
    tokens: list[str] = []
    for item in flags or []:
        tokens.extend(str(item).split())
    out: list[Flag] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if _FLAG_TOKEN.match(token.split("=", 1)[0]) and not _is_number(token):
            name, eq, value = token.partition("=")
            if (
                not eq
                and i + 1 < len(tokens)
                and not _FLAG_TOKEN.match(tokens[i + 1].split("=")[0])
            ):
                value = tokens[i + 1]
                i += 1
                out.append(Flag(f"{name} {value}", _norm(name), value))
            else:
                out.append(Flag(token, _norm(name), value if eq else None))
        elif "=" in token:
            name, _, value = token.partition("=")
            out.append(Flag(token, _norm(name), value))
        i += 1
    return out


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _numeric(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        return float(value.strip("'\""))
    except ValueError:
        return None


def requested(flags: Iterable[Flag]) -> dict[str, list[Flag]]:
    """Feature key → the flags that ask for it (flags that turn it off are left out)."""
    out: dict[str, list[Flag]] = {}
    for flag in flags:
        for feature in FEATURES:
            if feature.off_flag.search(flag.name):
                continue
            if not feature.flag.search(flag.name):
                continue
            value = (flag.value or "").strip("'\"").lower()
            if value in feature.off_values:
                continue
            number = _numeric(flag.value)
            if feature.above is not None and number is not None and number <= feature.above:
                continue
            out.setdefault(feature.key, []).append(flag)
    return out


def flag_pattern(flag: Flag) -> re.Pattern[str] | None:
    """A log pattern for the flag's own name (`--cont-batching` ~ "cont_batching"), or None
    for names too short to search for safely (`-cb`, `-np`)."""
    if len(flag.name) < 5:
        return None
    parts = [re.escape(p) for p in flag.name.split("-") if p]
    return re.compile(r"(?<![\w])-{0,2}" + r"[-_ ]?".join(parts) + r"(?![\w])", re.I)


def normalise_level(level: Any, text: str) -> str | None:
    """A log level as one of error, warning, info, debug (None when unknown)."""
    if isinstance(level, str) and level.strip():
        word = level.strip().lower()
        if word[0] in ("e", "c", "f") or word in ("severe", "err"):
            return "error"
        if word[0] == "w":
            return "warning"
        if word[0] in ("i", "n"):
            return "info"
        if word[0] in ("d", "t", "v"):
            return "debug"
    from reporter.serverlog import level_of

    return level_of(text)


_CLAUSE = re.compile(r"[;!?]|\.(?:\s|$)|\s[-–—]\s")


@dataclass(frozen=True)
class Refusal:
    """A log line that refuses a feature (or a flag by its name)."""

    feature: str
    label: str
    level: str
    text: str
    ref: str


def refusals(
    text: str, level: str | None, wanted: Mapping[str, list[Flag]], ref: str
) -> list[Refusal]:
    """The features among `wanted` that this log line refuses.

    A refusal is a warning- or error-level line with a clause that has a refusal word and
    names the feature (one of its words, or the passed flag's own name). A refusal clause
    that names no feature ("This model does not support it") refers to the features of the
    clause before it that named one.
    """
    if level not in COMPLAINT_LEVELS:
        return []
    patterns = {
        key: [BY_KEY[key].words, *(p for p in map(flag_pattern, flags) if p is not None)]
        for key, flags in wanted.items()
    }
    refused: list[str] = []
    previous: list[str] = []
    for clause in (c for c in _CLAUSE.split(text) if c and c.strip()):
        named = [k for k, ps in patterns.items() if any(p.search(clause) for p in ps)]
        if REFUSAL.search(clause):
            refused += [k for k in (named or previous) if k not in refused]
        if named:
            previous = named
    return [Refusal(k, BY_KEY[k].label, level, text.strip(), ref) for k in refused]


# ---------------------------------------------------------------------------------------------
# Server metrics (Prometheus samples)

#: Counters of prefix-cache hits, most specific first (the first family present is used, so
#: one hit is not counted under two names): vLLM (current and pre-0.9.2 names, prompt tokens
#: by source, KV connectors), SGLang, llama.cpp builds, then any other `*cache*hit*` counter.
CACHE_HIT_COUNTERS: tuple[re.Pattern[str], ...] = (
    _re(r"^vllm:(gpu_)?prefix_cache_hits(_total)?$"),
    _re(r'^vllm:prompt_tokens_by_source(_total)?\{.*source="local_cache_hit"'),
    _re(r"^vllm:prompt_tokens_cached(_total)?$"),
    _re(r"^vllm:external_prefix_cache_hits(_total)?$"),
    _re(r"^sglang:.*cache.*hit|^llamacpp:.*cache.*(hit|reuse|n\b)"),
    _re(r"^(?!.*(mm_cache|encoder_cache|_rate|_ratio|quer)).*(cache.*hit|hit.*cache)"),
)
#: Counters of speculative drafts: vLLM (drafts, draft tokens), SGLang, llama.cpp `draft_n`,
#: then any `*spec*draft*` or `*draft*` token counter.
SPEC_DRAFT_COUNTERS: tuple[re.Pattern[str], ...] = (
    _re(r"^vllm:spec_decode_num_drafts(_total)?$"),
    _re(r"^vllm:spec_decode_num_draft_tokens(_total)?$"),
    _re(r"^sglang:.*(spec|draft)"),
    _re(r"^(?!.*(accept|_rate|_ratio)).*(spec.*draft|draft.*(tokens|total|_n\b))"),
)
_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s+(\S+)")


def _parse_text(text: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for line in text.splitlines():
        m = _SAMPLE.match(line.strip())
        if m is None or line.lstrip().startswith("#"):
            continue
        try:
            value = float(m.group(3))
        except ValueError:
            continue
        if math.isfinite(value):
            out[m.group(1) + (m.group(2) or "")] = value
    return out


def metric_samples(value: Any) -> dict[str, float]:
    """A scrape as written in a trace → {'name{labels}': value}.

    Accepts a dict of samples (`{"vllm:prefix_cache_hits_total": 0}`), nested per-label dicts
    or lists of `{labels, value}`, and the Prometheus text format as a string.
    """
    out: dict[str, float] = {}
    if isinstance(value, str):
        return _parse_text(value)
    if not isinstance(value, Mapping):
        return out
    for name, sample in value.items():
        if isinstance(sample, bool):
            continue
        if isinstance(sample, int | float):
            if math.isfinite(sample):
                out[str(name)] = float(sample)
        elif isinstance(sample, Mapping):
            if "value" in sample and isinstance(sample["value"], int | float):
                out[str(name)] = float(sample["value"])
            else:
                for labels, v in sample.items():
                    if isinstance(v, int | float) and not isinstance(v, bool):
                        out[f"{name}{{{labels}}}"] = float(v)
        elif isinstance(sample, list):
            for i, item in enumerate(sample):
                if isinstance(item, Mapping) and isinstance(item.get("value"), int | float):
                    out[f"{name}{{#{i}}}"] = float(item["value"])
    return out


def counter_value(
    samples: Mapping[str, float], patterns: tuple[re.Pattern[str], ...]
) -> tuple[float, list[str]] | None:
    """The sum of the samples of the first family that matches, and their names; None when
    no sample matches."""
    for pattern in patterns:
        names = []
        total = 0.0
        for key, value in samples.items():
            base = key.split("{", 1)[0]
            if base.endswith(("_created", "_bucket")):
                continue
            if pattern.search(key if "{" in pattern.pattern else base):
                names.append(key)
                total += value
        if names:
            return total, sorted(names)
    return None


@dataclass(frozen=True)
class CounterDelta:
    """What a counter did during a run."""

    before: float | None
    after: float
    names: list[str]
    where: str

    @property
    def delta(self) -> float:
        return self.after - (self.before or 0.0)


def run_metrics(
    extra: Mapping[str, Any] | None,
) -> tuple[dict[str, float] | None, dict[str, float] | None, str]:
    """(before, after, where) scrapes of a run, from the run record or its `run_end`.

    Read from `metrics_before` / `metrics_after` on the run record, or the same keys (and
    `metrics_delta`, a ready difference) in the `run_end` record.
    """
    if not extra:
        return None, None, ""
    places: list[tuple[Mapping[str, Any], str]] = [(extra, "run")]
    end = extra.get("run_end")
    if isinstance(end, Mapping):
        places.append((end, "run_end"))
    before: dict[str, float] | None = None
    after: dict[str, float] | None = None
    where = ""
    for place, name in places:
        if before is None and place.get("metrics_before") is not None:
            before = metric_samples(place["metrics_before"])
        if after is None and place.get("metrics_after") is not None:
            after = metric_samples(place["metrics_after"])
            where = f"{name}.metrics_after"
        if after is None and isinstance(place.get("metrics_delta"), Mapping):
            after = metric_samples(place["metrics_delta"])
            before = {}
            where = f"{name}.metrics_delta"
    return before, after, where


def counter_delta(
    extra: Mapping[str, Any] | None, patterns: tuple[re.Pattern[str], ...]
) -> CounterDelta | None:
    """How much the counters matching `pattern` rose during a run (None when not scraped)."""
    before, after, where = run_metrics(extra)
    if after is None:
        return None
    got = counter_value(after, patterns)
    if got is None:
        return None
    total, names = got
    prior = counter_value(before, patterns) if before else None
    return CounterDelta(None if prior is None else prior[0], total, names, where)


def as_bool(value: Any) -> bool | None:
    """A true/false field as read from a table (numpy booleans included); None otherwise."""
    if isinstance(value, bool | np.bool_):
        return bool(value)
    return None


def same_server(runs: Any, run_id: str) -> list[str]:
    """The runs served by the same server configuration as `run_id` (itself included): same
    file, engine, version, flags, model and hardware. A startup log line or a prompt cached by
    one of them concerns them all."""
    return servers(runs).get(run_id, [run_id])


def servers(runs: Any) -> dict[str, list[str]]:
    """`same_server` of every run at once: each run's configuration is read once, so a sweep
    of many runs costs one pass, not one pass per run."""
    if "run" not in runs.columns:
        runs = runs.reset_index(names="run")
    columns = ("source_path", "engine_name", "engine_version", "model_name", "hardware_name")
    # each value as str() gives it (a missing one "None" or "nan"), as the rows were compared
    texts = [
        [str(v) for v in runs[c].astype(object)] if c in runs.columns else ["None"] * len(runs)
        for c in columns
    ]
    flags = runs["engine_flags"].tolist() if "engine_flags" in runs.columns else [None] * len(runs)
    flag_texts = [" ".join(map(str, f)) if isinstance(f, list | tuple) else "" for f in flags]
    by_key: dict[tuple[str, ...], list[str]] = {}
    ids = [str(r) for r in runs["run"]]
    keys = [
        (*head[:3], flag, *head[3:])
        for head, flag in zip(zip(*texts, strict=True), flag_texts, strict=True)
    ]
    for run_id, key in zip(ids, keys, strict=True):
        by_key.setdefault(key, []).append(run_id)
    return {run_id: by_key[key] for run_id, key in zip(ids, keys, strict=True)}
