"""BR017 context-undisclosed, and decode speed against context where a sweep exists."""

from __future__ import annotations

import json

from reporter import api
from tests.conftest import FIXTURES, finding


def test_no_context_fires():
    v = api.audit([FIXTURES / "BR017" / "fires_no_context.jsonl"], select=["BR017"])
    f = finding(v, "BR017", "nc-n1")
    assert f["outcome"] == "fired"
    assert f["severity"] == "info"
    assert f["message"] == (
        "the decode rate 98.0 tok/s comes without a context length: no workload.context_tokens, no "
        "workload.prompt_tokens and no prompt_tokens on the requests"
    )


def test_method_6_decode_falls_with_context():
    """~98 tok/s at short context, 34 tok/s with a 43k-token prompt."""
    v = api.audit([FIXTURES / "BR017" / "fires_context_sweep.jsonl"], select=["BR017"])
    f = finding(v, "BR017", "audit")
    assert f["outcome"] == "fired"
    assert f["numbers"]["context_tokens"] == [536, 43512]
    assert [round(x, 2) for x in f["numbers"]["decode_tps"]] == [97.83, 34.0]
    assert round(f["numbers"]["drop"], 2) == 0.65
    assert finding(v, "BR017", "long-n1")["outcome"] == "passed"


def test_context_stated_passes():
    v = api.audit([FIXTURES / "BR017" / "passes_context_stated.jsonl"], select=["BR017"])
    f = finding(v, "BR017", "c-n1")
    assert f["outcome"] == "passed"
    assert f["message"] == "context 272 tokens (workload.context_tokens)"


def _sweep_trace(tmp_path, runs, name="sweep.jsonl"):
    """A trace of single-stream runs, one after another, each decoding its requests at `rate`.

    Each run is a dict: id, prompt and context (tokens), outs (output tokens per request),
    rate (tok/s), stop ("forced" or "natural"), spec (None: off; else the acceptance rate, or
    "unstated"). Prompts are of one pattern: the prompt length names the text.
    """
    import json
    from hashlib import sha256

    lines = []
    for r in runs:
        spec = r.get("spec")
        speculative = (
            {"enabled": False}
            if spec is None
            else {"enabled": True, "method": "draft model"}
            | ({} if spec == "unstated" else {"acceptance": spec})
        )
        forced = r.get("stop", "forced") == "forced"
        workload = {
            "concurrency": 1,
            "output_tokens": max(r["outs"]) if forced else 256,
            "stop": r.get("stop", "forced"),
            "ignore_eos": forced,
            "temperature": 0,
            "prompt_tokens": r["prompt"],
            "context_tokens": r["context"],
            "content": "prose",
            "speculative": speculative,
        }
        lines.append({
            "kind": "run", "schema": "benchreport/1", "id": r["id"],
            "tool": {"name": "benchreport", "version": "0.1.0"},
            "engine": {"name": "llama.cpp", "version": "b5606", "flags": []},
            "model": {"name": "8B dense", "params_total": 8.0e9, "quant": "bf16"},
            "hardware": {"name": "1 × H100 80GB SXM"},
            "workload": workload,
        })  # fmt: skip
        t = 0.0
        for i, out in enumerate(r["outs"]):
            end = round(t + 0.1 + out / r["rate"], 6)
            lines.append({
                "kind": "request", "run": r["id"], "id": f"{r['id']}-{i}", "t_send": t,
                "t_first": round(t + 0.1, 6), "t_end": end, "output_tokens": out,
                "finish_reason": "length" if forced else "stop", "prompt_tokens": r["prompt"],
                "prompt_sha256": sha256(f"prompt {r['prompt']} #{i}".encode()).hexdigest(),
            })  # fmt: skip
            t = end
    path = tmp_path / name
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def _sweep(tmp_path, runs):
    return finding(api.audit([_sweep_trace(tmp_path, runs)], select=["BR017"]), "BR017", "audit")


def test_context_alone_still_fires(tmp_path):
    """Forced lengths, speculation off, prompts of one pattern: only the context differs."""
    f = _sweep(
        tmp_path,
        [
            {"id": "short", "prompt": 40, "context": 296, "outs": [256, 256], "rate": 52.5},
            {"id": "long", "prompt": 352, "context": 608, "outs": [256, 256], "rate": 40.8},
        ],
    )
    assert f["outcome"] == "fired"
    assert f["message"] == (
        "decode falls from 52.5 tok/s at 296 tokens of context to 40.8 at 608 (22% slower): a "
        "decode figure holds only at its context length"
    )
    assert f["arithmetic"] == [
        "decode at context 296 tokens: 52.5 tok/s; 608 tokens: 40.8 tok/s (runs long, short)"
    ]


def test_context_alone_fires_with_speculation_of_one_acceptance_and_equal_answers(tmp_path):
    """Natural stop with answers of one length, speculation on at one stated acceptance: the
    file shows nothing but the context that differs."""
    f = _sweep(
        tmp_path,
        [
            {"id": "short", "prompt": 40, "context": 296, "outs": [60, 62], "rate": 52.5,
             "stop": "natural", "spec": 0.305},
            {"id": "long", "prompt": 352, "context": 608, "outs": [58, 61], "rate": 40.8,
             "stop": "natural", "spec": 0.31},
        ],
    )  # fmt: skip
    assert f["outcome"] == "fired"
    assert f["message"].startswith("decode falls from 52.5 tok/s at 296 tokens of context")


def test_natural_stop_answers_of_other_lengths_are_not_put_on_context(tmp_path):
    """Case B's queue and QA runs: 218 and 57 tokens a request, natural stop. Answers of other
    lengths are other answers: the fall is not the context's alone."""
    f = _sweep(
        tmp_path,
        [
            {"id": "queue", "prompt": 40, "context": 296, "outs": [232, 204], "rate": 52.5,
             "stop": "natural", "spec": 0.305},
            {"id": "qa", "prompt": 352, "context": 608, "outs": [50, 64], "rate": 40.8,
             "stop": "natural", "spec": 0.305},
        ],
    )  # fmt: skip
    assert f["outcome"] == "undecidable"
    assert f["message"] == (
        "decode is 52.5 tok/s at 296 tokens of context and 40.8 at 608, 22% slower, but the "
        "runs differ in more than context: natural-stop answers of 218.0 and 57.0 tokens a "
        "request; the file cannot tell the context's share"
    )
    assert f["arithmetic"] == [
        "decode at context 296 tokens: 52.5 tok/s; 608 tokens: 40.8 tok/s (runs qa, queue); "
        "not put on context: natural-stop answers of 218.0 and 57.0 tokens a request"
    ]
    assert f["numbers"]["answer_tokens"] == [218.0, 57.0]
    assert f["numbers"]["differs"] == ["answer length"]


def test_answers_of_other_lengths_that_decode_alike_do_not_pass_either(tmp_path):
    """No fall seen, but other answers: whether context slows decode is not measured."""
    f = _sweep(
        tmp_path,
        [
            {"id": "a", "prompt": 352, "context": 608, "outs": [61, 61], "rate": 40.9,
             "stop": "natural"},
            {"id": "b", "prompt": 5634, "context": 5890, "outs": [160, 160], "rate": 42.0,
             "stop": "natural"},
        ],
    )  # fmt: skip
    assert f["outcome"] == "undecidable"
    assert f["message"].startswith(
        "decode is 40.9 tok/s at 608 tokens of context and 42.0 at 5,890, 3% faster, but the "
        "runs differ in more than context: natural-stop answers of 61.0 and 160.0 tokens"
    )


def test_a_longer_sweep_gives_what_else_differs_as_a_range(tmp_path):
    f = _sweep(
        tmp_path,
        [
            {"id": "a", "prompt": 40, "context": 296, "outs": [220], "rate": 52.5,
             "stop": "natural", "spec": 0.305},
            {"id": "b", "prompt": 352, "context": 608, "outs": [60], "rate": 45.0,
             "stop": "natural", "spec": 0.305},
            {"id": "c", "prompt": 2000, "context": 2256, "outs": [100], "rate": 40.0,
             "stop": "natural", "spec": 0.305},
        ],
    )  # fmt: skip
    assert f["outcome"] == "undecidable"
    assert f["message"] == (
        "decode is 52.5 tok/s at 296 tokens of context and 40.0 at 2,256, 24% slower, but the "
        "runs differ in more than context: natural-stop answers of 60.0 to 220.0 tokens a "
        "request; the file cannot tell the context's share"
    )
    assert f["numbers"]["answer_tokens"] == [220.0, 60.0, 100.0]


def test_speculation_without_acceptance_is_not_put_on_context(tmp_path):
    """Speculation on, other prompts: how often the draft is accepted depends on the text."""
    f = _sweep(
        tmp_path,
        [
            {"id": "short", "prompt": 16, "context": 528, "outs": [512], "rate": 115.3,
             "spec": "unstated"},
            {"id": "long", "prompt": 4096, "context": 4608, "outs": [512], "rate": 80.0,
             "spec": 0.305},
        ],
    )  # fmt: skip
    assert f["outcome"] == "undecidable"
    assert "speculation on with no acceptance rate for short" in f["message"]
    assert f["numbers"]["differs"] == ["speculation acceptance"]


def test_speculation_of_other_acceptance_is_not_put_on_context(tmp_path):
    f = _sweep(
        tmp_path,
        [
            {"id": "short", "prompt": 16, "context": 528, "outs": [512], "rate": 143.0,
             "spec": 0.689},
            {"id": "long", "prompt": 4096, "context": 4608, "outs": [512], "rate": 115.3,
             "spec": 0.305},
        ],
    )  # fmt: skip
    assert f["outcome"] == "undecidable"
    assert "speculation on with acceptance 68.9% and 30.5%" in f["message"]


def test_a_clean_sweep_decides_and_a_confounded_one_is_shown_not_counted(tmp_path):
    runs = [
        {"id": "f-short", "prompt": 40, "context": 296, "outs": [256], "rate": 52.5},
        {"id": "f-long", "prompt": 352, "context": 608, "outs": [256], "rate": 51.0},
        {"id": "n-short", "prompt": 40, "context": 296, "outs": [220], "rate": 52.5,
         "stop": "natural"},
        {"id": "n-long", "prompt": 352, "context": 608, "outs": [57], "rate": 30.0,
         "stop": "natural"},
    ]  # fmt: skip
    f = _sweep(tmp_path, runs)
    assert f["outcome"] == "passed"
    assert f["message"] == "decode holds across context: 52.5 tok/s at 296 tokens, 51.0 at 608"
    assert f["arithmetic"] == [
        "decode at context 296 tokens: 52.5 tok/s; 608 tokens: 51.0 tok/s (runs f-long, f-short)",
        "decode at context 296 tokens: 52.5 tok/s; 608 tokens: 30.0 tok/s (runs n-long, n-short); "
        "not put on context: natural-stop answers of 220.0 and 57.0 tokens a request",
    ]


def test_shipped_traces_put_no_decode_change_on_context(traces_verdict):
    """b-queue-n16 against b-natural-n16 (and b-natural-n8 against b-long-n8): natural-stop
    runs whose answers differ four-fold; neither sweep measures context alone."""
    f = finding(traces_verdict, "BR017", "audit")
    assert f["outcome"] == "undecidable"
    assert f["message"] == (
        "decode is 52.5 tok/s at 296 tokens of context and 40.8 at 608, 22% slower, but the "
        "runs differ in more than context: natural-stop answers of 218.3 and 56.6 tokens a "
        "request; the file cannot tell the context's share"
    )
    assert f["arithmetic"] == [
        "decode at context 608 tokens: 40.9 tok/s; 5,890 tokens: 42.0 tok/s (runs b-long-n8, "
        "b-natural-n8); not put on context: natural-stop answers of 60.8 and 160.0 tokens a "
        "request",
        "decode at context 296 tokens: 52.5 tok/s; 608 tokens: 40.8 tok/s (runs b-natural-n16, "
        "b-queue-n16); not put on context: natural-stop answers of 218.3 and 56.6 tokens a "
        "request",
    ]


def _depth(text: str) -> int:
    """How deep the parentheses of `text` nest."""
    deepest = level = 0
    for c in text:
        level += (c == "(") - (c == ")")
        deepest = max(deepest, level)
    return deepest


def test_a_context_from_the_prompt_length_is_said_without_nested_parentheses(tmp_path):
    # "context 24 tokens (workload.prompt_tokens (context at the first decoded token))"
    run = {"kind": "run", "schema": "benchreport/1", "id": "r", "engine": {"name": "e"},
           "workload": {"concurrency": 1, "prompt_tokens": 24}}  # fmt: skip
    request = {"kind": "request", "run": "r", "id": 0, "t_send": 0.0, "t_first": 0.1,
               "t_end": 1.1, "prompt_tokens": 24, "output_tokens": 100}  # fmt: skip
    stated = tmp_path / "stated.jsonl"
    stated.write_text(json.dumps(run) + "\n" + json.dumps(request) + "\n")
    del run["workload"]["prompt_tokens"]
    counted = tmp_path / "counted.jsonl"
    counted.write_text(json.dumps(run) + "\n" + json.dumps(request) + "\n")
    for path, source in ((stated, "workload.prompt_tokens"), (counted, "mean prompt_tokens")):
        f = finding(api.audit([path], select=["BR017"]).to_dict(), "BR017", "r")
        assert f["outcome"] == "passed" and source in f["message"]
        assert _depth(f["message"]) == 1, f["message"]
