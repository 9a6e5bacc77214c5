"""What to record: the options of ``benchreport record`` as one typed value."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from reporter.recorder.lengths import Length

Api = Literal["completions", "chat"]


@dataclass
class RecordConfig:
    """A sweep: every concurrency (or request rate) × every repeat is one run."""

    base_url: str
    model: str
    out: str
    api: Api = "completions"
    concurrency: tuple[int, ...] = (1, 2, 4, 8)
    #: Open loop instead of closed loop: Poisson arrivals at each of these rates (requests/s).
    request_rates: tuple[float, ...] = ()
    #: Requests per run; None means one per concurrent slot (N requests sent at once) in a
    #: closed loop, and 4 × the rate (four seconds of arrivals) in an open loop.
    requests: int | None = None
    output_tokens: int = 512
    #: Standard deviation of each request's output length (drawn around output_tokens).
    output_tokens_sd: float = 0.0
    #: Synthetic prompts of this many tokens (by the server's tokenizer) instead of `prompts`.
    prompt_tokens: Length | None = None
    #: Where `prompts` came from, for the trace: "prompt-set:prose", "file:NAME", "prompt".
    prompt_source: str = "prompt-set:prose"
    forced: bool = True
    repeats: int = 1
    prompts: tuple[str, ...] = ("Write about the model server.",)
    #: Prefix each prompt with a request tag, so that no two prompts share a cached prefix.
    unique_prompts: bool = True
    #: The tag's per-invocation salt (None: a random one), so that no two invocations share a
    #: cached prefix either.
    salt: str | None = None
    #: Leave the salt and the run out of the tag: every run and every invocation sends the same
    #: prompts (to measure prefix caching on purpose).
    repeat_prompts: bool = False
    content: str = "unknown"
    speculative: bool | None = None
    spec_method: str | None = None
    engine_name: str | None = None
    engine_flags: tuple[str, ...] = ()
    hardware: str | None = None
    context_tokens: int | None = None
    temperature: float = 0.0
    seed: int = 0
    extra_params: dict[str, Any] = field(default_factory=dict)
    api_key: str | None = None
    timeout_s: float = 600.0
    idle_timeout_s: float = 120.0
    connect_timeout_s: float = 10.0
    grace_s: float = 10.0
    pause_s: float = 1.0
    warmup: bool = True
    metrics_url: str | None = None
    scrape_metrics: bool = True
    server_log: str | None = None
    append: bool = False
    group: str | None = None
    fsync: bool = False
    max_in_flight: int = 4096
    #: The streaming client: "lean" (asyncio protocol, a few µs a chunk) or "httpx".
    client: Literal["lean", "httpx"] = "lean"
    #: Processes that stream the requests (lean client): each has its own event loop and takes
    #: its share of the streams; 1 streams in the recorder's own loop.
    workers: int = 1

    @property
    def mode(self) -> str:
        return "poisson" if self.request_rates else "closed"
