"""Workloads: lengths N±sd, synthetic prompts of exact token counts, datasets, cache salts."""

from __future__ import annotations

import json

import click
import numpy as np
import pytest
from click.testing import CliRunner

from reporter.cli import main
from reporter.errors import UsageError
from reporter.recorder.lengths import Length, parse_length
from reporter.recorder.workload import load_dataset
from tests.conftest import finding
from tests.recorder.conftest import read_trace


@pytest.mark.parametrize(
    ("text", "length"),
    [("256", Length(256)), ("256±32", Length(256, 32)), ("256:32", Length(256, 32)),
     (" 64 +- 8.5 ", Length(64, 8.5)), ("10+/-0", Length(10))],
)  # fmt: skip
def test_parse_length(text, length):
    assert parse_length(text, "--prompt-tokens") == length


@pytest.mark.parametrize(
    ("text", "message"),
    [("0", "--x '0'; expected from 1 to 1,000,000 tokens"),
     ("ten", "--x 'ten'; expected tokens, or tokens±sd, e.g. 256 or 256:32"),
     ("10±20", "--x '10±20'; expected a standard deviation of at most 10"),
     ("-5", "--x '-5'; expected tokens, or tokens±sd, e.g. 256 or 256:32")],
)  # fmt: skip
def test_parse_length_refuses(text, message):
    with pytest.raises(UsageError) as err:
        parse_length(text, "--x")
    assert str(err.value) == message


def test_drawn_lengths_are_seeded_and_at_least_one():
    draw = Length(5, 5).draw(np.random.default_rng(1), 2000)
    assert draw == Length(5, 5).draw(np.random.default_rng(1), 2000)
    assert min(draw) == 1
    assert np.mean(Length(100, 10).draw(np.random.default_rng(2), 2000)) == pytest.approx(100, 0.02)
    assert Length(7).draw(np.random.default_rng(3), 3) == [7, 7, 7]


def test_dataset_jsonl_and_sharegpt(tmp_path):
    jsonl = tmp_path / "p.jsonl"
    jsonl.write_text(
        '"plain string"\n\n{"prompt": "a prompt"}\n{"text": "a text"}\n'
        '{"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]}\n',
        encoding="utf-8",
    )
    assert load_dataset(str(jsonl)) == ("plain string", "a prompt", "a text", "u")
    share = tmp_path / "sharegpt.json"
    share.write_text(json.dumps([
        {"id": "1", "conversations": [{"from": "human", "value": "first question"},
                                      {"from": "gpt", "value": "answer"}]},
        {"id": "2", "conversations": [{"from": "system", "value": "x"},
                                      {"from": "human", "value": "second question"}]},
    ]), encoding="utf-8")  # fmt: skip
    assert load_dataset(str(share)) == ("first question", "second question")


@pytest.mark.parametrize(
    ("content", "where", "what"),
    [('{"prompt": "ok"}\n{"prompt": \n', ":2: not JSON", "one per line"),
     ('{"prompt": "ok"}\n{"answer": "x"}\n', ":2: no prompt", "(role: user)"),
     ('[{"conversations": [{"from": "gpt", "value": "x"}]}]', " entry 0: no prompt", "user)"),
     ("", ": no prompt in the dataset", "user)")],
)  # fmt: skip
def test_dataset_errors_name_the_line(tmp_path, content, where, what):
    path = tmp_path / "bad.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(UsageError) as err:
        load_dataset(str(path))
    message = str(err.value)
    assert message.startswith(f"{path}{where}; expected a JSON string"), message
    assert message.endswith(what)


def _requests(trace):
    return [r for r in trace if r["kind"] == "request"]


@pytest.mark.slow
def test_synthetic_prompts_are_exact_by_the_servers_tokenizer(engine, rec):
    with engine("--slots", "4", "--step-ms", "1") as eng:
        _, trace, verdict = rec(
            eng.url, concurrency=(4,), requests=8, output_tokens=12, output_tokens_sd=3.0,
            prompt_tokens=Length(30, 6), seed=7,
        )  # fmt: skip
    header = trace[0]
    reqs = _requests(trace)
    assert len(reqs) == 8
    # the engine's own count (usage) is the target, request by request
    assert [r["prompt_tokens"] for r in reqs] == [r["prompt_tokens_target"] for r in reqs]
    assert len({r["prompt_tokens"] for r in reqs}) > 1  # drawn, not all 30
    # each request got the length drawn for it, and the header states the range
    assert [r["output_tokens"] for r in reqs] == [r["output_tokens_requested"] for r in reqs]
    lengths = [r["output_tokens"] for r in reqs]
    wl = header["workload"]
    assert (wl["output_tokens_min"], wl["output_tokens"]) == (min(lengths), max(lengths))
    assert wl["output_tokens_sd"] == 3.0
    prompts = wl["prompts"]
    assert prompts["source"] == "synthetic" == wl["dataset"]
    assert prompts["requested"] == "30±6"
    assert prompts["tokens_counted"] == "server tokenizer (/tokenize)"
    assert prompts["estimated"] is False
    assert prompts["seed"] == 7
    assert len(prompts["salt"]) == 8
    counted = [r["prompt_tokens"] for r in reqs]
    assert prompts["tokens"]["min"] == min(counted)
    assert prompts["tokens"]["max"] == max(counted)
    assert wl["prompt_tokens"] == round(np.mean(counted))
    assert wl["context_tokens"] == wl["prompt_tokens"]  # decoding starts from the prompt
    # drawn lengths below the maximum are not a forced length ignored
    assert finding(verdict, "BR007", "g-c4-r0")["outcome"] == "passed"
    end = next(r for r in trace if r["kind"] == "run_end")
    assert end["forced_length"]["not_honoured"] == 0


@pytest.mark.slow
def test_without_a_tokenizer_the_lengths_are_estimated_and_say_so(engine, rec):
    with engine("--slots", "2", "--step-ms", "1", "--no-tokenize") as eng:
        _, trace, _ = rec(eng.url, concurrency=(2,), output_tokens=4, prompt_tokens=Length(40))
    prompts = trace[0]["workload"]["prompts"]
    assert prompts["estimated"] is True
    assert prompts["tokens_counted"] == "estimated (4 characters a token)"
    assert prompts["tokens"] == {"mean": 40, "sd": 0, "min": 40, "max": 40}
    assert all(r["prompt_tokens_target"] == 40 for r in _requests(trace))


@pytest.mark.slow
def test_every_invocation_and_run_gets_new_prompts_unless_repeated(engine, rec):
    def shas(trace):
        return sorted((r["run"], r["id"], r["prompt_sha256"]) for r in _requests(trace))

    with engine("--slots", "4", "--step-ms", "1") as eng:
        kw = {"concurrency": (2,), "output_tokens": 2, "repeats": 2}
        first, second = (rec(eng.url, **kw)[1] for _ in range(2))
        again = rec(eng.url, salt=first[0]["workload"]["prompts"]["salt"], **kw)[1]
        repeated = [rec(eng.url, repeat_prompts=True, **kw)[1] for _ in range(2)]
    every = {sha for _, _, sha in shas(first) + shas(second)}
    assert len(every) == 8  # 2 invocations × 2 repeats × 2 requests, no prompt twice
    assert shas(again) == shas(first)  # the salt is all that differs
    assert first[0]["workload"]["prompts"]["salt"] != second[0]["workload"]["prompts"]["salt"]
    assert shas(repeated[0]) == shas(repeated[1])
    assert {sha for _, _, sha in shas(repeated[0])} == {sha for _, _, sha in shas(repeated[0])[:2]}
    block = repeated[0][0]["workload"]["prompts"]
    assert (block["salt"], block["repeated"]) == (None, True)


@pytest.mark.parametrize(
    ("args", "message"),
    [(["--prompt-tokens", "10", "--prompt", "hi"],
      "--prompt and --prompt-tokens exclude each other; expected one prompt source\n"),
     (["--output-tokens", "5±9"],
      "--output-tokens '5±9'; expected a standard deviation of at most 5\n"),
     (["--repeat-prompts", "--same-prompt"],
      "--repeat-prompts and --same-prompt exclude each other; expected one\n"),
     (["--repeat-prompts", "--salt", "x"],
      "--salt is the tag's salt; expected some text, without --repeat-prompts\n")],
)  # fmt: skip
def test_cli_workload_usage_errors(args, message, tmp_path):
    result = CliRunner().invoke(
        main, ["record", "http://127.0.0.1:9", "-m", "m", "--out", str(tmp_path / "t.jsonl"),
               *args])  # fmt: skip
    assert (result.exit_code, result.output) == (2, message)


@pytest.mark.slow
def test_cli_dataset_is_recorded_by_name(engine, tmp_path):
    data = tmp_path / "prompts.jsonl"
    data.write_text('{"prompt": "one two three"}\n{"prompt": "four five"}\n', encoding="utf-8")
    out = tmp_path / "d.jsonl"
    with engine("--slots", "2", "--step-ms", "1") as eng:
        result = CliRunner().invoke(main, [
            "record", eng.url, "-m", "ref", "-c", "2", "--output-tokens", "3", "--pause", "0",
            "--dataset", str(data), "--out", str(out), "-q", "--seed", "5",
        ])  # fmt: skip
    assert result.exit_code == 0, result.output
    trace = read_trace(out)
    assert trace[0]["workload"]["dataset"] == "file:prompts.jsonl"
    assert trace[0]["workload"]["prompts"]["seed"] == 5
    # the salted tag (one word to the engine) + the dataset's prompts, in order
    assert [r["prompt_tokens"] for r in sorted(_requests(trace), key=lambda r: r["id"])] == [4, 3]


def test_record_help_lists_every_option_in_a_section_with_help():
    from reporter.cli.record import HELP_SECTIONS, record_cmd

    options = [p for p in record_cmd.params if isinstance(p, click.Option)]
    placed = [name for names in HELP_SECTIONS.values() for name in names]
    assert sorted(placed) == sorted(p.name for p in options)  # each option, once
    assert all(p.help for p in options), [p.name for p in options if not p.help]
    text = CliRunner().invoke(main, ["record", "--help"]).output
    titles = [t for t in HELP_SECTIONS if f"\n{t}:\n" in text]
    assert titles == list(HELP_SECTIONS)
    workload = text.split("\nPrompts")[0]
    assert "--concurrency" in workload and "--prompt-tokens" not in workload
    assert text.rstrip().endswith("Show this message and exit.")
