"""Synthetic workloads against a real llama-server: prompts of exact token counts by its own
tokenizer (completions and chat), and no prompt-cache hit between two invocations unless
prompts are repeated on purpose.

Short on purpose (a 1-slot server, 48-token prompts, 4 output tokens).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reporter.recorder import RecordConfig, record
from reporter.recorder.lengths import Length
from tests.realengine.conftest import serve
from tests.recorder.conftest import read_trace

# one engine at a time, on one worker: the servers and the sweeps share two cores
pytestmark = [pytest.mark.realengine, pytest.mark.slow, pytest.mark.xdist_group("realengine")]

PROMPT = 48


def _requests(url: str, out: Path, **kw: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    cfg = RecordConfig(base_url=url, model="tiny", out=str(out), concurrency=(2,),
                       output_tokens=4, pause_s=0.0, group=out.stem,
                       prompt_tokens=Length(PROMPT, 6), **kw)  # fmt: skip
    record(cfg)
    trace = read_trace(out)
    return trace[0], [r for r in trace if r["kind"] == "request"]


def test_prompts_are_exact_and_not_cached_across_invocations(tmp_path):
    with serve("cpp-serial", tmp_path) as eng:
        header, first = _requests(eng.url, tmp_path / "first.jsonl", seed=3)
        _, second = _requests(eng.url, tmp_path / "second.jsonl", seed=3)
        chat_header, chat = _requests(eng.url, tmp_path / "chat.jsonl", api="chat")
        _, repeat1 = _requests(eng.url, tmp_path / "repeat1.jsonl", repeat_prompts=True)
        _, repeat2 = _requests(eng.url, tmp_path / "repeat2.jsonl", repeat_prompts=True)
    prompts = header["workload"]["prompts"]
    assert prompts["tokens_counted"] == "server tokenizer (/tokenize)"
    assert prompts["added_tokens"] == 1  # the BOS token
    for reqs in (first, second, chat, repeat1, repeat2):
        # the server's own count of every prompt is the length drawn for it
        assert [r["prompt_tokens"] for r in reqs] == [r["prompt_tokens_target"] for r in reqs]
    assert chat_header["workload"]["prompts"]["added_tokens"] > 1  # the chat template's
    # same seed, same lengths; a new salt: the second invocation evaluates its prompts whole
    assert sorted(r["prompt_tokens"] for r in second) == sorted(r["prompt_tokens"] for r in first)
    for r in second:
        timings = r["server_timings"]
        # BOS, the leading space and "[" are shared; a hex digit of the tag 1 time in 16
        assert timings["cache_n"] <= 5, r
        assert timings["prompt_n"] >= r["prompt_tokens"] - 5
    # repeated on purpose: the second invocation finds whole prompts in the server's cache
    assert [r["prompt_sha256"] for r in sorted(repeat1, key=lambda r: r["id"])] == [
        r["prompt_sha256"] for r in sorted(repeat2, key=lambda r: r["id"])
    ]
    assert max(r["server_timings"]["cache_n"] for r in repeat2) >= PROMPT // 2
