"""The sweep: identify the server, check the request dialect, then one run per concurrency
(or rate) and repeat, each written as run header → one line per finished request → run end.

After each run it checks that the forced length was honoured (by the server's own counts) and
says so in the trace; it scrapes /metrics before and after, copies the server log lines
written during the run, and records the client's own loop lag and CPU.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import signal
import stat
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from reporter.errors import BenchreportError, UsageError
from reporter.ingest.limits import MAX_BYTES
from reporter.numbers import counted
from reporter.recorder import client as rc
from reporter.recorder import schedule
from reporter.recorder import workload as wl
from reporter.recorder.config import RecordConfig
from reporter.recorder.health import ClientHealth, HealthMonitor
from reporter.recorder.lengths import Length
from reporter.recorder.server import ServerInfo, identify, metrics_delta, scrape
from reporter.recorder.stream import LeanClient
from reporter.recorder.workers import WorkerPool
from reporter.recorder.writer import TraceWriter
from reporter.serverlog import level_of

#: Lengths within this many tokens of the requested one count as honoured: some servers
#: stop at max_tokens − 1 or + 1 (LM Studio, mistral.rs; FORMATS.md §11.6).
LENGTH_SLACK = 1
PREFLIGHT_TOKENS = 8
#: Hex digits of the tag that starts every prompt.
TAG_HEX = 12
#: Server-log lines copied into the trace per run (warnings and errors are always kept).
MAX_LOG_LINES = 500


class RecordError(BenchreportError):
    """The server cannot be recorded (unreachable, refuses every request)."""

    slug = "record"


class Observer:
    """Progress callbacks; the CLI draws a progress bar from them. Defaults do nothing."""

    def sweep_started(self, runs: list[tuple[str, int]]) -> None: ...
    def run_started(self, run_id: str, total: int) -> None: ...
    def request_done(self, run_id: str, state: rc.RequestState) -> None: ...
    def run_finished(self, result: RunResult) -> None: ...
    def note(self, text: str) -> None: ...


@dataclass
class RunResult:
    """One run as the recorder saw it (the summary printed at the end)."""

    id: str
    concurrency: int | None
    rate: float | None
    repeat: int
    sent: int
    finished: int
    ok: int
    output_tokens: int
    wall_s: float | None
    aggregate_tps: float | None
    ttft_p50_s: float | None
    forced_requested: int | None
    not_honoured: int
    health: ClientHealth | None
    interrupted: bool
    server_generation_tokens: float | None = None


@dataclass
class RecordResult:
    path: str
    server: ServerInfo
    runs: list[RunResult] = field(default_factory=list)
    interrupted: bool = False
    dropped_params: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


class _LogTail:
    """New complete lines of a growing log file, from where the last read stopped."""

    def __init__(self, path: str) -> None:
        self.path = Path(path)
        self.offset = 0

    def read(self) -> list[str]:
        try:
            if not stat.S_ISREG(self.path.stat().st_mode):  # a FIFO blocks, /dev/zero never ends
                return []
            with self.path.open("rb") as f:
                f.seek(self.offset)
                data = f.read(MAX_BYTES["server log"])  # the rest at the next read
        except OSError:
            return []
        cut = data.rfind(b"\n")
        if cut < 0:
            return []
        self.offset += cut + 1
        return data[: cut + 1].decode("utf-8", "replace").splitlines()


def _log_records(lines: list[str], run_id: str | None, t: float | None) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    plain = 0
    omitted = 0
    for line in lines:
        if not line.strip():
            continue
        level = level_of(line)
        if level not in ("warning", "error"):
            plain += 1
            if plain > MAX_LOG_LINES:
                omitted += 1
                continue
        records.append(
            {
                "kind": "log",
                "run": run_id,
                "level": level,
                "text": line.rstrip(),
                "t": t,
                "source": "server_log",
            }
        )
    if omitted:
        records.append(
            {
                "kind": "log",
                "run": run_id,
                "level": "info",
                "t": t,
                "text": f"benchreport record: {counted(omitted, 'more server-log line')} "
                "without a warning or error were not copied",
                "source": "recorder",
            }
        )
    return records


class Recorder:
    """One sweep against one server, writing one trace file."""

    def __init__(self, cfg: RecordConfig, observer: Observer | None = None) -> None:
        self.cfg = cfg
        self.obs = observer or Observer()
        self.base = cfg.base_url.rstrip("/")
        self.url = rc.endpoint(self.base, cfg.api)
        self.headers = {"Authorization": f"Bearer {cfg.api_key}"} if cfg.api_key else {}
        self.stop = asyncio.Event()
        self.hard_stop = False
        self.stop_reason: str | None = None
        self.dropped: list[str] = []
        self.engine: str | None = None
        self.prompt_tokens: int | None = None
        # no salt when prompts repeat on purpose, or are identical anyway
        self.salt = (
            None if cfg.repeat_prompts or not cfg.unique_prompts else (cfg.salt or wl.new_salt())
        )
        self.tokenizer: wl.ServerTokenizer | None = None
        #: Tokens the server adds around a prompt's own (BOS, chat template): usage − /tokenize.
        self.added_tokens: int | None = None
        self.preflight_prompt = ""
        self.lean: LeanClient | None = None
        self.pool: WorkerPool | None = None
        self.group = cfg.group or ""
        self._current: asyncio.Task[int] | None = None
        self._main: asyncio.Task[Any] | None = None
        self._in_sweep = False
        self._warned_counts = False

    # ---- interruption ----------------------------------------------------------------------

    def interrupt(self, reason: str = "interrupted (SIGINT)") -> None:
        """First call: stop sending, let in-flight requests finish; second: cancel them.
        Before the first run (asking the server who it is) there is nothing to keep: stop."""
        if not self._in_sweep and self._main is not None:
            self.stop_reason = reason
            self.hard_stop = True
            self.stop.set()
            self._main.cancel()
            return
        if self.stop.is_set():
            self.hard_stop = True
            if self._current is not None:
                self._current.cancel()
            return
        self.stop_reason = reason
        self.stop.set()
        self.obs.note(
            f"{reason}: no new requests; waiting up to {self.cfg.grace_s:g} s "
            "for those in flight (again to stop now)"
        )

    # ---- prompts and bodies ----------------------------------------------------------------

    def tag(self, run_index: int, index: int) -> str:
        """What makes a prompt unique, at its very front: a hash of the salt, the run and the
        request, so two prompts share no more than a token or two of prefix (a readable
        counter would share its first characters with the next request's)."""
        if not self.cfg.unique_prompts:
            return ""
        key = f"{index}" if self.salt is None else f"{self.salt}:{run_index}:{index}"
        return f"[{hashlib.sha256(key.encode()).hexdigest()[:TAG_HEX]}] "

    def prompt(self, run_index: int, index: int) -> tuple[str, str]:
        cfg = self.cfg
        text = self.tag(run_index, index) + cfg.prompts[index % len(cfg.prompts)]
        return text, self.sha(text)

    def sha(self, text: str) -> str:
        return rc.prompt_hash(
            text if self.cfg.api == "completions" else [{"role": "user", "content": text}]
        )

    async def prepare(self, run_index: int, total: int) -> tuple[list[wl.Prompt], list[int]]:
        """Every request's prompt and output length, before the run's clock starts."""
        cfg = self.cfg
        key = 0 if self.salt is None else run_index + 1  # repeated prompts: one draw for all
        outputs = Length(cfg.output_tokens, cfg.output_tokens_sd).draw(
            np.random.default_rng([cfg.seed, 1, key]), total
        )
        if cfg.prompt_tokens is None:
            return [wl.Prompt(self.prompt(run_index, i)[0]) for i in range(total)], outputs
        rng = np.random.default_rng([cfg.seed, 2, key])
        targets = cfg.prompt_tokens.draw(rng, total)
        added = self.added_tokens or 0
        prompts = []
        for i, target in enumerate(targets):
            head = self.tag(run_index, i)
            if self.tokenizer is None:
                prompts.append(wl.estimated(head, rng, target))
                continue
            try:
                p = await wl.fit(self.tokenizer, head, rng, max(target - added, 1))
            except (RuntimeError, httpx.HTTPError, TimeoutError) as exc:
                raise RecordError(f"{self.tokenizer.endpoint}: building prompts: {exc}") from None
            prompts.append(wl.Prompt(p.text, (p.tokens or 0) + added, target))
        return prompts, outputs

    def params(self, length: int) -> dict[str, Any]:
        wanted = rc.forced_params(self.engine, length, self.cfg.forced)
        return {k: v for k, v in wanted.items() if k not in self.dropped}

    def body(self, prompt: str, length: int) -> dict[str, Any]:
        cfg = self.cfg
        return rc.build_body(
            cfg.api,
            cfg.model,
            prompt,
            length,
            cfg.temperature,
            self.params(length),
            cfg.extra_params,
        )

    async def send(
        self, client: httpx.AsyncClient, body: dict[str, Any], state: rc.RequestState, t0: float
    ) -> None:
        """One streamed request, by the lean client (httpx when asked for)."""
        if self.pool is not None:
            await self.pool.send(self.url, body, {}, state, t0, timeout_s=self.cfg.timeout_s)
        elif self.lean is not None:
            await self.lean.send(self.url, body, {}, state, t0, timeout_s=self.cfg.timeout_s)
        else:
            await rc.send(client, self.url, body, {}, state, t0, timeout_s=self.cfg.timeout_s)

    def drop(self, names: list[str], why: str) -> None:
        for name in names:
            if name not in self.dropped:
                self.dropped.append(name)
                self.obs.note(f"the server refused {name!r} ({why}); sending without it")

    # ---- the sweep -------------------------------------------------------------------------

    async def run(self) -> RecordResult:
        cfg = self.cfg
        if cfg.workers > 1 and cfg.client != "lean":
            raise UsageError(f"{cfg.workers} workers stream with the lean client only, not httpx")
        if not cfg.append and Path(cfg.out).exists():  # say so before asking the server
            raise UsageError(
                f"{cfg.out}: the file exists; expected a new path, or --append to add to it"
            )
        limits = httpx.Limits(
            max_connections=cfg.max_in_flight + 8, max_keepalive_connections=cfg.max_in_flight + 8
        )
        timeout = httpx.Timeout(cfg.idle_timeout_s, connect=cfg.connect_timeout_s)
        async with httpx.AsyncClient(
            limits=limits, timeout=timeout, headers=self.headers, trust_env=False
        ) as client:
            if cfg.client == "lean" and cfg.workers > 1:
                self.pool = WorkerPool(
                    cfg.workers,
                    connect_timeout_s=cfg.connect_timeout_s,
                    idle_timeout_s=cfg.idle_timeout_s,
                    headers=self.headers,
                )
            elif cfg.client == "lean":
                self.lean = LeanClient(
                    connect_timeout_s=cfg.connect_timeout_s,
                    idle_timeout_s=cfg.idle_timeout_s,
                    headers=self.headers,
                )
            try:
                if self.pool is not None:
                    await self.pool.start()
                return await self._sweep(client)
            finally:
                if self.lean is not None:
                    await self.lean.aclose()
                if self.pool is not None:
                    await self.pool.aclose()

    async def _sweep(self, client: httpx.AsyncClient) -> RecordResult:
        cfg = self.cfg
        info = await identify(client, self.base)
        self.engine = info.engine
        if cfg.model not in info.models and info.models:
            self.obs.note(
                f"model {cfg.model!r} is not among the server's models "
                f"({', '.join(info.models[:5])}); sending it anyway"
            )
        await self._preflight(client)
        if cfg.prompt_tokens is not None:
            await self._find_tokenizer(client)
        result = RecordResult(path=cfg.out, server=info)
        self._in_sweep = True
        tail = _LogTail(cfg.server_log) if cfg.server_log else None
        plan = self._plan()
        self.obs.sweep_started([(p["id"], p["requests"]) for p in plan])
        with TraceWriter(cfg.out, append=cfg.append, fsync=cfg.fsync) as writer:
            startup = tail.read() if tail else []
            for i, spec in enumerate(plan):
                if self.stop.is_set():
                    break
                if i and cfg.pause_s > 0:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self.stop.wait(), cfg.pause_s)
                    if self.stop.is_set():
                        break
                run = await self._run_one(
                    client, writer, info, spec, i, tail, startup if i == 0 else []
                )
                result.runs.append(run)
                self.obs.run_finished(run)
        result.interrupted = self.stop.is_set()
        result.dropped_params = list(self.dropped)
        return result

    def _plan(self) -> list[dict[str, Any]]:
        cfg = self.cfg
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
        self.group = cfg.group or f"sweep-{stamp}"
        plan = []
        for rep in range(cfg.repeats):
            if cfg.request_rates:
                for rate in cfg.request_rates:
                    total = cfg.requests or max(round(4 * rate), 1)
                    plan.append(
                        {
                            "id": f"{self.group}-rate{rate:g}-r{rep}",
                            "rate": rate,
                            "concurrency": None,
                            "repeat": rep,
                            "requests": total,
                        }
                    )
            else:
                for n in cfg.concurrency:
                    plan.append(
                        {
                            "id": f"{self.group}-c{n}-r{rep}",
                            "rate": None,
                            "concurrency": n,
                            "repeat": rep,
                            "requests": cfg.requests or n,
                        }
                    )
        return plan

    async def _preflight(self, client: httpx.AsyncClient) -> None:
        """One short request: is the server there, which fields does it refuse, how long is
        the prompt. Refused optional fields are dropped one at a time until it answers."""
        length = min(self.cfg.output_tokens, PREFLIGHT_TOKENS)
        prompt, sha = self.prompt(-1, 0)  # its own tag: no run's prompt is cached by it
        self.preflight_prompt = prompt
        last = ""
        for _ in range(len(rc.OPTIONAL_PARAMS) + 1):
            body = self.body(prompt, length)
            state = rc.RequestState(-1, sha)
            await self.send(client, body, state, time.perf_counter())
            if state.http_status is None:
                raise RecordError(
                    f"{self.url}: cannot reach the server: {state.error or state.aborted}"
                )
            if state.http_status < 400 and state.error is None:
                self.prompt_tokens = state.usage_prompt
                if self.prompt_tokens is None:
                    self.prompt_tokens = await self._prompt_length(client, body)
                return
            last = state.error or f"HTTP {state.http_status}"
            if state.http_status in (401, 403):
                raise RecordError(
                    f"{self.url}: {last}; expected an API key "
                    "(set --api-key-env to the variable that holds it)"
                )
            if state.http_status not in (400, 422):
                raise RecordError(f"{self.url}: the first request failed: {last}")
            named = state.refused
            if not named:
                remaining = [p for p in reversed(rc.OPTIONAL_PARAMS) if p in body]
                if not remaining:
                    break
                named = [remaining[0]]
            self.drop(named, f"HTTP {state.http_status}")
        raise RecordError(
            f"{self.url}: the server refuses the request even without the optional fields: {last}"
        )

    async def _find_tokenizer(self, client: httpx.AsyncClient) -> None:
        """The server's tokenizer, and what the server adds to a prompt's own tokens."""
        tok = await wl.find_tokenizer(client, self.base, self.cfg.model, self.engine)
        if tok is not None:
            ids = await tok.tokens(self.preflight_prompt)
            if ids is not None and self.prompt_tokens is not None:
                self.tokenizer = tok
                self.added_tokens = max(self.prompt_tokens - len(ids), 0)
                return
        self.obs.note(
            "the server has no tokenizer endpoint (/tokenize, /v1/tokenize) or no prompt "
            f"count in its answers: prompt lengths are estimated at {wl.CHARS_PER_TOKEN} "
            "characters a token, and the trace says so"
        )

    async def _prompt_length(self, client: httpx.AsyncClient, body: dict[str, Any]) -> int | None:
        """A server that streams no usage (llama-cpp-python) may still count the prompt in a
        whole response: one non-streamed request for a single token."""
        whole = {k: v for k, v in body.items() if k != "stream_options"} | {"stream": False}
        whole.update({k: 1 for k in ("max_tokens", "min_tokens", "n_predict") if k in whole})
        try:
            # --timeout bounds the whole request: a server that trickles bytes forever for
            # a non-streamed request is cut off, not waited for read after read
            async with asyncio.timeout(self.cfg.timeout_s):
                async with client.stream("POST", self.url, json=whole) as resp:
                    if resp.status_code != 200:
                        return None
                    raw, cut = await rc.read_capped(resp, rc.MAX_BODY_BYTES)
        except (TimeoutError, httpx.HTTPError):
            self.obs.note(
                f"the prompt-length request got no answer within {self.cfg.timeout_s:g} s; "
                "prompt length unknown"
            )
            return None
        answer = None if cut else rc.parse_json(raw)
        usage = answer.get("usage") if isinstance(answer, dict) else None
        return rc.count(usage.get("prompt_tokens")) if isinstance(usage, dict) else None

    async def _run_one(
        self,
        client: httpx.AsyncClient,
        writer: TraceWriter,
        info: ServerInfo,
        spec: dict[str, Any],
        run_index: int,
        tail: _LogTail | None,
        startup: list[str],
    ) -> RunResult:
        cfg = self.cfg
        run_id: str = spec["id"]
        metrics_url = cfg.metrics_url or (f"{self.base}/metrics" if cfg.scrape_metrics else None)
        total: int = spec["requests"]
        prompts, outputs = await self.prepare(run_index, total)
        before = await scrape(client, metrics_url) if cfg.scrape_metrics else None
        params = self.params(cfg.output_tokens)
        writer.write(self._header(info, spec, params, before, prompts, outputs))
        for rec in _log_records(startup, None, None):
            writer.write(rec)
        varied = cfg.output_tokens_sd > 0
        self.obs.run_started(run_id, total)
        states: list[rc.RequestState] = []
        dropped_at_start = list(self.dropped)
        t0 = time.perf_counter()

        async def fire(index: int) -> None:
            prompt = prompts[index].text
            length = outputs[index]
            sha = self.sha(prompt)
            extra: dict[str, Any] = {}
            if prompts[index].target is not None:
                extra["prompt_tokens_target"] = prompts[index].target
            if varied:
                extra["output_tokens_requested"] = length
            state = rc.RequestState(index, sha, requested=length, extra=extra)
            try:
                await self.send(client, self.body(prompt, length), state, t0)
                if state.refused and state.http_status in (400, 422):
                    self.drop(state.refused, f"HTTP {state.http_status} during the run")
                    retry = rc.RequestState(
                        index, sha, retried_without=list(state.refused), requested=length,
                        extra=extra,
                    )  # fmt: skip
                    state = retry
                    await self.send(client, self.body(prompt, length), state, t0)
            except asyncio.CancelledError:
                state.aborted = (
                    f"cancelled by the recorder ({self.stop_reason or 'stopped'}) "
                    f"after {counted(state.n_chunks, 'chunk')}"
                )
                state.t_end = time.perf_counter() - t0
                writer.write(state.to_record(run_id))
                states.append(state)
                raise
            writer.write(state.to_record(run_id))
            self._bad_counts(writer, run_id, state)
            states.append(state)
            self.obs.request_done(run_id, state)

        monitor = HealthMonitor()
        monitor.start()
        if self.pool is not None:
            await self.pool.health("start")
        if spec["rate"] is not None:
            coro = schedule.open_loop(
                spec["rate"],
                total,
                cfg.seed + run_index,
                fire,
                self.stop,
                cfg.max_in_flight,
                time.perf_counter,
            )
        else:
            coro = schedule.closed_loop(spec["concurrency"], total, fire, self.stop)
        task = asyncio.get_running_loop().create_task(coro)
        self._current = task
        sent = await self._wait(task, states, total)
        self._current = None
        others = await self.pool.health("stop") if self.pool is not None else []
        health = await monitor.stop(others)
        t_end = time.perf_counter() - t0
        after = await scrape(client, metrics_url) if cfg.scrape_metrics else None
        interrupted = self.stop.is_set()
        forced = self._forced_check(states)
        delta = metrics_delta(before, after)
        if forced["not_honoured"]:
            writer.write(
                {
                    "kind": "log",
                    "run": run_id,
                    "level": "warning",
                    "t": round(t_end, 6),
                    "text": forced["message"],
                    "source": "recorder",
                }
            )
        if tail is not None:
            for rec in _log_records(tail.read(), run_id, round(t_end, 6)):
                writer.write(rec)
        newly = [p for p in self.dropped if p not in dropped_at_start]
        end: dict[str, Any] = {
            "kind": "run_end", "run": run_id, "interrupted": interrupted,
            "reason": self.stop_reason if interrupted else "completed",
            "requests_sent": sent, "requests_finished": len(states),
            "requests_ok": sum(1 for s in states if s.finish()[0] in ("length", "stop")),
            "t_end": round(t_end, 6), "client": health.to_record(),
            "dropped_params": list(self.dropped), "dropped_during_run": newly,
            "metrics_after": after, "metrics_delta": delta, "forced_length": forced,
        }  # fmt: skip
        writer.write(end)
        return self._summary(spec, states, sent, health, interrupted, forced, delta)

    def _bad_counts(self, writer: TraceWriter, run_id: str, state: rc.RequestState) -> None:
        """A warning in the trace for counts the server sent that are not counts."""
        if not state.bad_counts:
            return
        text = (
            f"benchreport record: request {state.index}: the server sent "
            f"{'; '.join(state.bad_counts)}; expected whole numbers ≥ 0, recorded as null"
        )
        t = None if state.t_end is None else round(state.t_end, 6)
        writer.write(
            {"kind": "log", "run": run_id, "level": "warning", "t": t, "text": text,
             "source": "recorder"}
        )  # fmt: skip
        if not self._warned_counts:
            self._warned_counts = True
            self.obs.note(text + " (further ones are in the trace only)")

    async def _wait(
        self, task: asyncio.Task[int], states: list[rc.RequestState], total: int
    ) -> int:
        """Until the schedule ends, or after a stop, for the grace period at most."""
        stop_wait = asyncio.ensure_future(self.stop.wait())
        try:
            await asyncio.wait({task, stop_wait}, return_when=asyncio.FIRST_COMPLETED)
            if not task.done() and not self.hard_stop:
                await asyncio.wait({task}, timeout=self.cfg.grace_s)
            if not task.done():
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                return await task
            return len(states)
        finally:
            stop_wait.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await stop_wait

    def _header(
        self,
        info: ServerInfo,
        spec: dict[str, Any],
        params: dict[str, Any],
        before: dict[str, float] | None,
        prompts: list[wl.Prompt],
        outputs: list[int],
    ) -> dict[str, Any]:
        from reporter.version import __version__

        cfg = self.cfg
        varied = cfg.output_tokens_sd > 0
        counted = [p.tokens for p in prompts if p.tokens is not None]
        prompt_tokens = self.prompt_tokens
        if cfg.prompt_tokens is not None:
            prompt_tokens = round(float(np.mean(counted))) if counted else cfg.prompt_tokens.mean
        if cfg.prompt_tokens is None:
            how = "server usage (preflight request)" if self.prompt_tokens is not None else None
        elif self.tokenizer is not None:
            how = f"server tokenizer ({self.tokenizer.endpoint})"
        else:
            how = f"estimated ({wl.CHARS_PER_TOKEN} characters a token)"
        prompt_block = {
            "source": "synthetic" if cfg.prompt_tokens is not None else cfg.prompt_source,
            "seed": cfg.seed, "salt": self.salt,
            "repeated": self.salt is None and cfg.unique_prompts,
            "identical": not cfg.unique_prompts,
            "tag": None if not cfg.unique_prompts
            else f"[sha256('REQUEST')[:{TAG_HEX}]]" if self.salt is None
            else f"[sha256('SALT:RUN:REQUEST')[:{TAG_HEX}]]",
            "requested": cfg.prompt_tokens.text() if cfg.prompt_tokens is not None else None,
            "tokens_counted": how, "estimated": cfg.prompt_tokens is not None
            and self.tokenizer is None,
            "added_tokens": self.added_tokens,
            "tokens": wl.length_stats(counted)
            or wl.length_stats([p.target for p in prompts if p.target is not None]),
        }  # fmt: skip
        forced = cfg.forced
        spec_block = {"enabled": cfg.speculative, "method": cfg.spec_method, "acceptance": None}
        return {
            "kind": "run", "schema": "benchreport/1", "id": spec["id"],
            "tool": {"name": "benchreport", "version": __version__, "command": "record",
                     "client": cfg.client},
            "engine": {"name": cfg.engine_name or info.engine, "version": info.version,
                       "flags": list(cfg.engine_flags)},
            "model": {"name": cfg.model},
            "hardware": {"name": cfg.hardware},
            "workload": {
                "concurrency": spec["concurrency"],
                "output_tokens": max(outputs) if varied and outputs else cfg.output_tokens,
                "output_tokens_min": min(outputs) if varied and outputs else None,
                "output_tokens_sd": cfg.output_tokens_sd if varied else None,
                "dataset": prompt_block["source"], "prompts": prompt_block,
                "stop": "forced" if forced else "natural",
                "ignore_eos": bool(forced and "ignore_eos" in params),
                "min_tokens": params.get("min_tokens"), "temperature": cfg.temperature,
                "prompt_tokens": prompt_tokens,
                # the context decoding starts from is the prompt, unless the user says more
                "context_tokens": cfg.context_tokens
                if cfg.context_tokens is not None else prompt_tokens,
                "content": cfg.content, "request_rate": spec["rate"],
                "speculative": spec_block,
            },
            "repeat": spec["repeat"], "group": self.group, "interrupted": False,
            "started_at": datetime.now(UTC).isoformat(timespec="milliseconds"),
            "clock": "seconds on a monotonic clock from this run's start",
            "api": cfg.api, "endpoint": self.url,
            "schedule": {"mode": "poisson" if spec["rate"] is not None else "closed",
                         "requests": spec["requests"], "seed": cfg.seed},
            "params_sent": dict(params) | dict(cfg.extra_params),
            "dropped_params": list(self.dropped),
            "server": info.to_record(), "metrics_before": before,
            "server_log": cfg.server_log,
        }  # fmt: skip

    def _forced_check(self, states: list[rc.RequestState]) -> dict[str, Any]:
        """Did every request that ended normally get the length asked for (by the server's
        own count)? Requests that failed are counted by the failed-requests rule instead."""
        cfg = self.cfg
        ended = [s for s in states if s.finish()[0] in ("length", "stop")]
        counts = [(s.output_tokens()[0] or 0, s.finish()[0], s.output_tokens()[1]) for s in ended]
        if not cfg.forced:
            return {"requested": None, "checked": len(ended), "not_honoured": 0}
        want = cfg.output_tokens
        wants = [s.requested or want for s in ended]
        short = [c for c, w in zip(counts, wants, strict=True) if abs(c[0] - w) > LENGTH_SLACK]
        out: dict[str, Any] = {
            "requested": want,
            "checked": len(ended),
            "honoured": len(ended) - len(short),
            "not_honoured": len(short),
            "min": min((c[0] for c in counts), default=None),
            "max": max((c[0] for c in counts), default=None),
            "count_source": sorted({c[2] for c in counts}),
        }
        if short:
            stops = sum(1 for c in short if c[1] == "stop")
            lo, hi = min(c[0] for c in short), max(c[0] for c in short)
            span = f"{lo}" if lo == hi else f"{lo}–{hi}"
            out["message"] = (
                f"benchreport record: forced length not honoured: {len(short)} of {len(ended)} "
                f"requests returned {span} tokens, not the "
                + (f"{want} asked for " if len(set(wants)) < 2 else "lengths asked for ")
                + f"({stops} ended with finish_reason stop); fields sent: "
                f"{', '.join(sorted(self.params(want))) or 'none'}"
                + (f"; refused and dropped: {', '.join(self.dropped)}" if self.dropped else "")
            )
        return out

    def _summary(
        self,
        spec: dict[str, Any],
        states: list[rc.RequestState],
        sent: int,
        health: ClientHealth,
        interrupted: bool,
        forced: dict[str, Any],
        delta: dict[str, Any] | None,
    ) -> RunResult:
        ok = [s for s in states if s.finish()[0] in ("length", "stop")]
        tokens = sum(s.output_tokens()[0] or 0 for s in ok)
        sends = [s.t_send for s in states]
        ends = [s.t_end for s in states if s.t_end is not None]
        wall = max(ends) - min(sends) if sends and ends else None
        ttfts = [s.t_first - s.t_send for s in ok if s.t_first is not None]
        return RunResult(
            id=spec["id"],
            concurrency=spec["concurrency"],
            rate=spec["rate"],
            repeat=spec["repeat"],
            sent=sent,
            finished=len(states),
            ok=len(ok),
            output_tokens=tokens,
            wall_s=wall,
            aggregate_tps=tokens / wall if wall else None,
            ttft_p50_s=float(np.median(ttfts)) if ttfts else None,
            forced_requested=forced.get("requested"),
            not_honoured=forced["not_honoured"],
            health=health,
            interrupted=interrupted,
            server_generation_tokens=(delta or {}).get("generation_tokens"),
        )


async def record_async(
    cfg: RecordConfig, observer: Observer | None = None, recorder: Recorder | None = None
) -> RecordResult:
    """Record a sweep; SIGINT and SIGTERM stop it gracefully when run in the main thread."""
    rec = recorder or Recorder(cfg, observer)
    loop = asyncio.get_running_loop()
    installed: list[signal.Signals] = []
    if threading.current_thread() is threading.main_thread():
        for sig, name in ((signal.SIGINT, "SIGINT"), (signal.SIGTERM, "SIGTERM")):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, rec.interrupt, f"interrupted ({name})")
                installed.append(sig)
    rec._main = asyncio.current_task()
    try:
        return await rec.run()
    except asyncio.CancelledError:
        if not rec.hard_stop:
            raise
        raise RecordError(f"{rec.stop_reason} before the first run; no trace written") from None
    finally:
        rec._main = None
        for sig in installed:
            loop.remove_signal_handler(sig)


def record(cfg: RecordConfig, observer: Observer | None = None) -> RecordResult:
    """The blocking form of `record_async`."""
    return asyncio.run(record_async(cfg, observer))
