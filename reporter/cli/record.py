"""`benchreport record`: the command line of the recorder (reporter.recorder does the work)."""

from __future__ import annotations

import json
import os
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import click

from reporter.cli.errors import ExitCode
from reporter.errors import UsageError
from reporter.safetext import echo

if TYPE_CHECKING:
    from reporter.recorder.run import RecordResult


def _ints(text: str, option: str) -> tuple[int, ...]:
    try:
        values = tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise UsageError(
            f"{option} {text!r}; expected whole numbers separated by commas, e.g. 1,2,4,8"
        ) from None
    if not values or any(v < 1 for v in values):
        raise UsageError(f"{option} {text!r}; expected numbers of at least 1, e.g. 1,2,4,8")
    return values


def _floats(text: str, option: str) -> tuple[float, ...]:
    try:
        values = tuple(float(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise UsageError(
            f"{option} {text!r}; expected requests per second separated by commas, e.g. 0.5,1,2"
        ) from None
    if not values or any(not v > 0 for v in values):
        raise UsageError(f"{option} {text!r}; expected rates above 0")
    return values


def _params(items: tuple[str, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--param {item!r}; expected KEY=VALUE, e.g. top_k=1")
        try:
            out[key.strip()] = json.loads(value)
        except ValueError:
            out[key.strip()] = value
        except RecursionError:
            raise UsageError(
                f"--param {key.strip()}: nested too deeply; expected a JSON value or text"
            ) from None
    return out


#: `record --help` in sections, each option under the question it answers.
HELP_SECTIONS: dict[str, tuple[str, ...]] = {
    "Workload (how much load, and of what length)": (
        "concurrency", "request_rate", "requests", "output_tokens", "natural_stop", "repeats",
        "pause", "temperature", "seed", "params", "timeout", "idle_timeout", "grace",
        "workers",
    ),
    "Prompts (what is sent; every prompt is distinct by default)": (
        "prompt_tokens", "dataset", "prompt", "prompt_file", "prompt_set", "same_prompt",
        "repeat_prompts", "salt", "content",
    ),
    "Server (what is measured, as the trace states it)": (
        "model", "api", "api_key_env", "metrics_url", "no_metrics", "server_log",
        "engine_name", "engine_flags", "hardware", "context_tokens", "speculative",
        "spec_method",
    ),
    "Output (the trace and what is printed)": (
        "out", "append", "group", "fsync", "audit_after", "json_out", "quiet", "debug",
    ),
}  # fmt: skip


class SectionedCommand(click.Command):
    """A command whose --help lists its options in named sections; options in no section
    (--help itself) close the last one."""

    sections: ClassVar[dict[str, tuple[str, ...]]] = {}

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows: dict[str, tuple[str, str]] = {}
        for param in self.get_params(ctx):
            row = param.get_help_record(ctx)
            if isinstance(param, click.Option) and row is not None and param.name is not None:
                rows[param.name] = row
        placed = {name for names in self.sections.values() for name in names}
        rest = [row for name, row in rows.items() if name not in placed]
        titles = list(self.sections)
        for title, names in self.sections.items():
            listed = [rows[n] for n in names if n in rows]
            if title == titles[-1]:
                listed += rest
            if listed:
                with formatter.section(title):
                    formatter.write_dl(listed)


class RecordCommand(SectionedCommand):
    sections = HELP_SECTIONS


@click.command(cls=RecordCommand, short_help="Record a load test of an OpenAI-compatible server.")
@click.argument("base_url")
@click.option("--model", "-m", required=True, help="The model name the server expects.")
@click.option(
    "--api",
    type=click.Choice(["completions", "chat"]),
    default="completions",
    show_default=True,
    help="/v1/completions or /v1/chat/completions.",
)
@click.option(
    "--concurrency",
    "-c",
    default="1,2,4,8",
    show_default=True,
    help="Closed loop: requests in flight, one run per value.",
)
@click.option(
    "--request-rate",
    default=None,
    help="Open loop instead: Poisson arrivals at these rates (requests/s), e.g. 1,2,4.",
)
@click.option(
    "--requests",
    "-n",
    type=click.IntRange(min=1),
    default=None,
    help="Requests per run [default: N in a closed loop, 4 × rate in an open one].",
)
@click.option(
    "--output-tokens",
    default="512",
    show_default=True,
    help="Tokens to ask for (forced: max_tokens + ignore_eos + min_tokens); N±SD (or N:SD) "
    "draws each request's length from a normal distribution.",
)
@click.option(
    "--prompt-tokens",
    default=None,
    help="Synthetic prompts of N (or N±SD, N:SD) tokens, counted by the server's own "
    "tokenizer (/tokenize) or, without one, estimated (the trace says which).",
)
@click.option(
    "--natural-stop", is_flag=True, help="Do not force the length: let the model stop on its own."
)
@click.option(
    "--repeats",
    "-r",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Repeat the whole sweep this many times.",
)
@click.option(
    "-o",
    "--output",
    "--out",
    "out",
    type=click.Path(dir_okay=False),
    default=None,
    help="The trace file [default: benchreport-<time>.jsonl].",
)
@click.option("--append", is_flag=True, help="Add to an existing trace file.")
@click.option("--prompt", default=None, help="The prompt text.")
@click.option(
    "--prompt-file",
    type=click.Path(dir_okay=False),
    default=None,
    help="Prompts from a file, separated by blank lines.",
)
@click.option(
    "--dataset",
    type=click.Path(dir_okay=False),
    default=None,
    help="Prompts from a JSON Lines file (a string, or an object with prompt or text) or "
    "ShareGPT conversations (the first human turn).",
)
@click.option(
    "--prompt-set",
    type=click.Choice(["code", "prose"]),
    default=None,
    help="A shipped prompt set (sets --content) [default: prose].",
)
@click.option(
    "--same-prompt",
    is_flag=True,
    help="Send identical prompts (by default each request gets a unique tag, so no "
    "two share a cached prefix).",
)
@click.option(
    "--repeat-prompts",
    is_flag=True,
    help="Send the same prompts in every run and invocation (no salt), to measure prefix "
    "caching on purpose; by default a random per-invocation salt starts every prompt.",
)
@click.option("--salt", default=None, help="The per-invocation salt [default: random].")
@click.option(
    "--content",
    type=click.Choice(["code", "prose", "json", "mixed", "unknown"]),
    default=None,
    help="What the answers are (speculative decoding depends on it).",
)
@click.option(
    "--speculative",
    type=click.Choice(["on", "off", "unknown"]),
    default="unknown",
    show_default=True,
    help="Was speculative decoding on in the server?",
)
@click.option("--spec-method", default=None, help="e.g. eagle, ngram, draft model name.")
@click.option(
    "--engine",
    "engine_name",
    default=None,
    help="Engine name for the trace [default: what the server says].",
)
@click.option(
    "--engine-flag",
    "engine_flags",
    multiple=True,
    help="A flag the server was started with (repeatable).",
)
@click.option("--hardware", default=None, help="The server's hardware, e.g. 'M1 Max 64GB'.")
@click.option(
    "--context-tokens",
    type=click.IntRange(min=0),
    default=None,
    help="Context length the figure is for [default: the prompt length].",
)
@click.option(
    "--param",
    "params",
    multiple=True,
    help="An extra request field, KEY=JSON (repeatable), e.g. top_k=1.",
)
@click.option(
    "--temperature",
    type=click.FloatRange(min=0),
    default=0.0,
    show_default=True,
    help="Sampling temperature (0: greedy, so every run decodes the same tokens).",
)
@click.option(
    "--seed",
    type=int,
    default=0,
    show_default=True,
    help="Seed of the synthetic prompts, the drawn lengths and the Poisson arrivals.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0.1),
    default=600.0,
    show_default=True,
    help="Seconds one request may take in all.",
)
@click.option(
    "--idle-timeout",
    type=click.FloatRange(min=0.1),
    default=120.0,
    show_default=True,
    help="Seconds without a byte before a request is given up.",
)
@click.option(
    "--grace",
    type=click.FloatRange(min=0),
    default=10.0,
    show_default=True,
    help="After Ctrl-C, seconds in-flight requests may take to finish.",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1, max=64),
    default=1,
    show_default=True,
    help="Processes that stream the requests, each with its own event loop and its share of "
    "the streams (one clock for all). More than one for hundreds of streams, when one loop "
    "lags (the run's client lag says so).",
)
@click.option(
    "--pause",
    type=click.FloatRange(min=0),
    default=1.0,
    show_default=True,
    help="Seconds between runs.",
)
@click.option(
    "--api-key-env",
    default="OPENAI_API_KEY",
    show_default=True,
    help="The environment variable holding the API key (sent as a bearer token).",
)
@click.option(
    "--metrics-url", default=None, help="Prometheus endpoint [default: BASE_URL/metrics]."
)
@click.option("--no-metrics", is_flag=True, help="Do not scrape /metrics.")
@click.option(
    "--server-log",
    type=click.Path(dir_okay=False),
    default=None,
    help="The server's log file: its lines are copied into the trace per run.",
)
@click.option("--group", default=None, help="The sweep's group name [default: sweep-<time>].")
@click.option("--fsync", is_flag=True, help="fsync after each line (survives power loss).")
@click.option("--audit", "audit_after", is_flag=True, help="Audit the trace when done.")
@click.option(
    "--json",
    "json_out",
    type=click.Path(dir_okay=False),
    default=None,
    help="With --audit: write the JSON verdict here.",
)
@click.option("-q", "--quiet", is_flag=True, help="No progress and no notes on stderr.")
def record_cmd(**options: Any) -> None:
    """Record a load test of the OpenAI-compatible server at BASE_URL into a trace.

    Each run sends equal, greedy, forced-length streaming requests, N at a time (or at a
    Poisson rate), and writes one line per finished request as it finishes. Ctrl-C stops
    sending, lets in-flight requests finish for --grace seconds and marks the run
    interrupted (exit code 130).
    """
    from reporter import terminal
    from reporter.cli.progress import summary

    result = _record(**options)  # the options, typed one by one, are _record's parameters
    terminal.show(summary(result))
    echo(f"wrote {result.path}", layout=False)
    if options["audit_after"]:
        from reporter import api as audit_api
        from reporter.render.text import summary as audit_summary

        verdict = audit_api.audit([result.path])  # errors: exit 2 (reporter.cli.errors)
        if options["json_out"]:
            audit_api.render_outputs(verdict, json=options["json_out"])
        terminal.show(audit_summary(verdict))
    if result.interrupted:
        sys.exit(ExitCode.INTERRUPTED)


def _record(
    *,
    base_url: str,
    model: str,
    api: str,
    concurrency: str,
    request_rate: str | None,
    requests: int | None,
    output_tokens: str,
    prompt_tokens: str | None,
    natural_stop: bool,
    repeats: int,
    out: str | None,
    append: bool,
    prompt: str | None,
    prompt_file: str | None,
    dataset: str | None,
    prompt_set: str | None,
    same_prompt: bool,
    repeat_prompts: bool,
    salt: str | None,
    content: str | None,
    speculative: str,
    spec_method: str | None,
    engine_name: str | None,
    engine_flags: tuple[str, ...],
    hardware: str | None,
    context_tokens: int | None,
    params: tuple[str, ...],
    temperature: float,
    seed: int,
    timeout: float,
    idle_timeout: float,
    grace: float,
    workers: int,
    pause: float,
    api_key_env: str,
    metrics_url: str | None,
    no_metrics: bool,
    server_log: str | None,
    group: str | None,
    fsync: bool,
    audit_after: bool,
    json_out: str | None,
    quiet: bool,
) -> RecordResult:
    # the recorder (httpx, numpy) is imported when a recording starts, not for --help
    from reporter.cli.progress import Progress
    from reporter.ingest.limits import require_regular
    from reporter.recorder.config import RecordConfig
    from reporter.recorder.lengths import parse_length
    from reporter.recorder.prompts import load_prompts
    from reporter.recorder.run import record
    from reporter.recorder.workload import load_dataset

    if not base_url.startswith(("http://", "https://")):
        raise UsageError(f"BASE_URL {base_url!r}; expected http://host:port")
    if json_out and not audit_after:
        raise UsageError("--json writes the audit's verdict; expected --audit with it")
    if server_log:  # before the server is asked anything: a FIFO would block the tail
        require_regular(server_log, "server log")
    output = parse_length(output_tokens, "--output-tokens")
    synthetic = parse_length(prompt_tokens, "--prompt-tokens") if prompt_tokens else None
    sources = {"--prompt": prompt, "--prompt-file": prompt_file, "--prompt-set": prompt_set,
               "--dataset": dataset, "--prompt-tokens": prompt_tokens}  # fmt: skip
    given = [name for name, value in sources.items() if value is not None]
    if len(given) > 1:
        raise UsageError(f"{' and '.join(given)} exclude each other; expected one prompt source")
    if repeat_prompts and same_prompt:
        raise UsageError("--repeat-prompts and --same-prompt exclude each other; expected one")
    if salt is not None and (repeat_prompts or same_prompt or not salt.strip()):
        raise UsageError("--salt is the tag's salt; expected some text, without --repeat-prompts")
    if dataset is not None:
        prompts, implied = load_dataset(dataset), "unknown"
        source = f"file:{Path(dataset).name}"
    else:
        prompts, implied = load_prompts(prompt, prompt_file, prompt_set)
        source = (
            "prompt" if prompt is not None
            else f"file:{Path(prompt_file).name}" if prompt_file is not None
            else f"prompt-set:{prompt_set or 'prose'}"
        )  # fmt: skip
    if synthetic is not None:
        implied = "prose"  # random common words: the answers are prose
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    cfg = RecordConfig(
        base_url=base_url.rstrip("/").removesuffix("/v1"), model=model,
        out=out or f"benchreport-{stamp}.jsonl",
        api="chat" if api == "chat" else "completions",
        concurrency=_ints(concurrency, "--concurrency"),
        request_rates=_floats(request_rate, "--request-rate") if request_rate else (),
        requests=requests, output_tokens=output.mean, output_tokens_sd=output.sd,
        prompt_tokens=synthetic, prompt_source=source, forced=not natural_stop,
        repeats=repeats, prompts=prompts, unique_prompts=not same_prompt,
        repeat_prompts=repeat_prompts, salt=salt,
        content=content or implied,
        speculative={"on": True, "off": False}.get(speculative), spec_method=spec_method,
        engine_name=engine_name, engine_flags=engine_flags, hardware=hardware,
        context_tokens=context_tokens, temperature=temperature, seed=seed,
        extra_params=_params(params), api_key=os.environ.get(api_key_env) or None,
        timeout_s=timeout, idle_timeout_s=idle_timeout, grace_s=grace, pause_s=pause,
        metrics_url=metrics_url, scrape_metrics=not no_metrics, server_log=server_log,
        append=append, group=group, fsync=fsync, workers=workers,
    )  # fmt: skip
    with Progress(quiet) as progress:
        return record(cfg, progress)


record_cmd.name = "record"
