"""The server's identity and state: /v1/models, llama-server /props, vLLM /version, /metrics.

Each probe is best effort: an endpoint the server does not have is simply absent from the
trace. The engine is named from what answered (``guess_engine``), and only the Prometheus
families that an audit can use are kept (tokens, prefix cache, speculation, queue, finish
reasons), so a scrape stays small.
"""

from __future__ import annotations

import asyncio
import math
import re
from dataclasses import dataclass, field
from typing import Any

import httpx

from reporter.ingest.limits import too_deep
from reporter.recorder.client import parse_json, read_capped

#: Seconds one probe may take in all (not per read: a server that trickles bytes is cut off).
PROBE_TIMEOUT_S = 5.0
#: Largest probe answer read; a longer one is treated as no answer.
MAX_PROBE_BYTES = 8 << 20
#: Models kept from /v1/models, and the longest model name kept.
MAX_MODELS = 1000
MAX_MODEL_CHARS = 200
#: The deepest probe answer kept: it is copied into the run record a few levels down, and the
#: trace's lines may nest at most MAX_JSON_DEPTH (64) deep, or the audit refuses the trace.
MAX_PROBE_DEPTH = 16
#: Families kept from /metrics (histogram buckets are dropped, their _sum and _count kept).
KEEP = re.compile(
    r"generation_tokens|tokens_predicted|prompt_tokens|predicted_tokens|prefix_cache|cache_hit|"
    r"spec_decode|draft|accept|request_success|requests_running|requests_waiting|"
    r"requests_deferred|requests_processing|num_requests|kv_cache|preemption|busy_slots|"
    r"requests_completed|requests_received|n_decode|iteration_tokens|num_running|num_queue",
    re.I,
)
MAX_SAMPLES = 400
_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s+(\S+)(?:\s+\S+)?$")
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"')


def parse_prometheus(text: str, keep: re.Pattern[str] | None = KEEP) -> dict[str, float]:
    """Prometheus text → {'name{label="v"}': value}; labels sorted, comments skipped."""
    out: dict[str, float] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = _SAMPLE.match(line)
        if m is None:
            continue
        name, labels, raw = m.groups()
        if name.endswith("_bucket") or (keep is not None and not keep.search(name)):
            continue
        try:
            value = float(raw)
        except ValueError:
            continue
        if not math.isfinite(value):
            continue
        key = name
        if labels:
            pairs = sorted(_LABEL.findall(labels))
            if pairs:
                key += "{" + ",".join(f'{k}="{v}"' for k, v in pairs) + "}"
        out[key] = value
        if len(out) >= MAX_SAMPLES:
            break
    return out


def _sum(metrics: dict[str, float], pattern: str) -> float | None:
    rx = re.compile(pattern)
    values = [v for k, v in metrics.items() if rx.search(k.split("{", 1)[0])]
    return float(sum(values)) if values else None


def metrics_delta(
    before: dict[str, float] | None, after: dict[str, float] | None
) -> dict[str, Any] | None:
    """What the server counted during a run: tokens, finish reasons, cache and draft rates."""
    if not before or not after:
        return None

    def delta(pattern: str) -> float | None:
        a, b = _sum(after, pattern), _sum(before, pattern)
        return None if a is None or b is None else a - b

    out: dict[str, Any] = {
        "generation_tokens": delta(r"(generation_tokens|tokens_predicted)_total$"),
        "prompt_tokens": delta(r"prompt_tokens_total$"),
        "prefix_cache_queries": delta(r"prefix_cache_queries_total$"),
        "prefix_cache_hits": delta(r"prefix_cache_hits_total$"),
        "spec_draft_tokens": delta(r"spec_decode_num_draft_tokens_total$"),
        "spec_accepted_tokens": delta(r"spec_decode_num_accepted_tokens_total$"),
    }
    reasons: dict[str, float] = {}
    for key, value in after.items():
        m = re.match(r'^[^{]*request_success_total\{.*finished_reason="([^"]+)"', key)
        if m:
            reasons[m.group(1)] = value - before.get(key, 0.0)
    if reasons:
        out["finished_reasons"] = reasons
    q, h = out["prefix_cache_queries"], out["prefix_cache_hits"]
    out["prefix_cache_hit_rate"] = h / q if q and h is not None else None
    d, a = out["spec_draft_tokens"], out["spec_accepted_tokens"]
    out["spec_acceptance"] = a / d if d and a is not None else None
    return {k: v for k, v in out.items() if v is not None}


@dataclass
class ServerInfo:
    """What the server said about itself before the sweep."""

    base_url: str
    models: list[str] = field(default_factory=list)
    engine: str | None = None
    version: str | None = None
    props: dict[str, Any] | None = None
    raw_version: dict[str, Any] | None = None
    slots: int | None = None
    answered: list[str] = field(default_factory=list)

    def to_record(self) -> dict[str, Any]:
        return {
            "base_url": self.base_url, "models": self.models, "engine": self.engine,
            "version": self.version, "slots": self.slots, "props": self.props,
            "version_endpoint": self.raw_version, "answered": self.answered,
        }  # fmt: skip


async def _get(client: httpx.AsyncClient, url: str) -> bytes | None:
    """The body of a 200 answer, read within PROBE_TIMEOUT_S in all and MAX_PROBE_BYTES."""
    try:
        async with asyncio.timeout(PROBE_TIMEOUT_S):
            async with client.stream("GET", url, timeout=PROBE_TIMEOUT_S) as resp:
                if resp.status_code != 200:
                    return None
                raw, cut = await read_capped(resp, MAX_PROBE_BYTES)
    except (TimeoutError, httpx.HTTPError):
        return None
    return None if cut else raw


async def _get_json(client: httpx.AsyncClient, url: str) -> Any:
    """A probe's JSON answer; None when absent, too slow, too big, not JSON or too deep."""
    raw = await _get(client, url)
    if raw is None or too_deep(raw, MAX_PROBE_DEPTH) is not None:
        return None
    return parse_json(raw)


_PROPS_KEEP = ("build_info", "total_slots", "model_path", "model_alias", "n_ctx", "is_sleeping")


async def identify(client: httpx.AsyncClient, base_url: str) -> ServerInfo:
    """Ask the server who it is, by every endpoint an OpenAI-compatible engine may have."""
    info = ServerInfo(base_url=base_url)
    models = await _get_json(client, f"{base_url}/v1/models")
    owners: list[str] = []
    if isinstance(models, dict) and isinstance(models.get("data"), list):
        info.answered.append("/v1/models")
        for m in models["data"][:MAX_MODELS]:
            if isinstance(m, dict) and isinstance(m.get("id"), str | int | float):
                info.models.append(str(m["id"])[:MAX_MODEL_CHARS])
                owners.append(str(m.get("owned_by") or "")[:MAX_MODEL_CHARS])
    props = await _get_json(client, f"{base_url}/props")
    if isinstance(props, dict) and ("build_info" in props or "total_slots" in props):
        info.answered.append("/props")
        keep = {k: props[k] for k in _PROPS_KEEP if k in props}
        gen = props.get("default_generation_settings")
        if isinstance(gen, dict) and "n_ctx" in gen:
            keep["n_ctx"] = gen["n_ctx"]
        info.props = keep
        info.engine = "llama.cpp"
        info.version = str(props["build_info"]) if "build_info" in props else None
        if isinstance(props.get("total_slots"), int):
            info.slots = props["total_slots"]
        return info
    version = await _get_json(client, f"{base_url}/version")
    if isinstance(version, dict) and "version" in version:
        info.answered.append("/version")
        info.raw_version = version
        info.version = str(version["version"])
        info.engine = str(version.get("engine") or "vllm")
        return info
    ollama = await _get_json(client, f"{base_url}/api/version")
    if isinstance(ollama, dict) and "version" in ollama:
        info.answered.append("/api/version")
        info.engine, info.version = "ollama", str(ollama["version"])
        return info
    sglang = await _get_json(client, f"{base_url}/get_server_info")
    if isinstance(sglang, dict) and ("version" in sglang or "model_path" in sglang):
        info.answered.append("/get_server_info")
        info.engine = "sglang"
        info.version = str(sglang.get("version")) if sglang.get("version") else None
        return info
    openapi = await _get_json(client, f"{base_url}/openapi.json")
    if isinstance(openapi, dict) and isinstance(openapi.get("info"), dict):
        title = str(openapi["info"].get("title") or "")
        info.answered.append("/openapi.json")
        if "llama.cpp python" in title.lower() or "llama-cpp-python" in title.lower():
            info.engine = "llama-cpp-python"
            version = openapi["info"].get("version")
            info.version = str(version) if version else None
    if info.engine is None and any(o in ("llamacpp", "llama.cpp") for o in owners):
        info.engine = "llama.cpp"
    return info


async def scrape(client: httpx.AsyncClient, url: str | None) -> dict[str, float] | None:
    """The kept families of one /metrics scrape, or None when there is no such endpoint."""
    if not url:
        return None
    raw = await _get(client, url)
    if raw is None:
        return None
    text = raw.decode("utf-8", "replace")
    if "<html" in text[:200].lower():
        return None
    parsed = parse_prometheus(text)
    return parsed or None
