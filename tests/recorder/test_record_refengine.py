"""Record the reference engine in each of its behaviours, audit the trace, check the verdict.

Every test talks HTTP to a real server process on loopback; nothing is mocked. The engine's
step clock makes the right answers known: with ``--step-ms 5`` one request of 32 tokens takes
0.16 s, so a serial server delivers ~200 tok/s at any N and a batching one more.
"""

from __future__ import annotations

import itertools

import pytest

from reporter.recorder.schedule import poisson_offsets
from tests.conftest import finding, run_of

pytestmark = pytest.mark.slow

C1, C2, C4 = "g-c1-r0", "g-c2-r0", "g-c4-r0"


def requests_of(trace, run):
    return [r for r in trace if r["kind"] == "request" and r["run"] == run]


def only(trace, kind, run=None):
    found = [r for r in trace if r["kind"] == kind and (run is None or r.get("run") == run)]
    assert len(found) == 1, found
    return found[0]


def assert_slope_judged(v):
    """BR005 judges the aggregates the sweep measured: flat (fired) below 1.2× from the least
    to the most concurrent run. Runs a second apart on a shared machine may differ by more
    than batching gains (a loaded N=1 run made a serial sweep 'rise'), so the rule is held to
    the numbers; serial or batched is shown within each run, where the figures share a load."""
    aggs = [run_of(v, r)["aggregate_tps"] for r in (C1, C2, C4)]
    slope = finding(v, "BR005", "g")
    assert slope["numbers"]["aggregate_tps"] == pytest.approx(aggs)
    growth = slope["numbers"]["growth"]
    assert growth == pytest.approx(aggs[2] / aggs[0], rel=1e-3)
    assert slope["outcome"] == ("fired" if growth < 1.2 else "passed"), slope["message"]


def test_serial_server_is_a_ladder_and_flat(engine, rec):
    with engine("--slots", "1", "--step-ms", "5", "--timings") as eng:
        result, trace, v = rec(eng.url)
    assert [r.ok for r in result.runs] == [1, 2, 4]
    for run in (C2, C4):
        assert finding(v, "BR003", run)["outcome"] == "fired"
        assert run_of(v, run)["verdict"] == "serial"
    assert_slope_judged(v)
    n4 = run_of(v, C4)
    assert n4["output_tokens"] == 128
    # flat within the run: the aggregate is one stream's worth (batching would be several)
    assert n4["aggregate_tps"] < 1.2 * n4["median_decode_tps"]
    assert n4["overlap"] == pytest.approx(1.0, abs=0.05)
    # one 32-token request takes 32 steps of 5 ms; four in a row take four times as long.
    # The engine's steps are sleeps, never shorter than asked and longer on a loaded machine:
    # the wall and the rate are bounded on the side load cannot reach.
    assert n4["wall_s"] >= 0.95 * 4 * 0.16
    assert n4["aggregate_tps"] <= 1.05 * 200
    # the engine's own per-request rates exclude the wait: their sum is ~4× the aggregate
    assert n4["sum_reported_tps"] / n4["aggregate_tps"] == pytest.approx(4.0, rel=0.15)
    assert finding(v, "BR001", C4)["outcome"] == "fired"
    # the ladder: a request's first token comes only after the one before it has ended (the
    # engine takes a step of 5 ms in between; 5 ms of slack for the order in which the
    # client's loop reads two sockets ready at once). The gaps between completions are the
    # client's readings, late by whatever the machine's load delays it, so no bound on them.
    reqs = sorted(requests_of(trace, C4), key=lambda r: r["t_end"])
    for before, after in itertools.pairwise(reqs):
        assert after["t_first"] >= before["t_end"] - 0.005


def test_batching_server_clusters_and_rises(engine, rec):
    with engine("--slots", "8", "--step-ms", "5", "--step-ms-per-seq", "0.5") as eng:
        _result, _trace, v = rec(eng.url)
    for run in (C2, C4):
        assert finding(v, "BR003", run)["outcome"] == "passed"
        assert run_of(v, run)["verdict"] == "supported"
    assert_slope_judged(v)
    # four slots at 5.0 + 0.5 ms a step give each stream 5.0 / 6.5 of its lone rate, 3.1×
    # in all: the aggregate is several streams' worth of the same run (serial: one)
    n4 = run_of(v, C4)
    assert n4["aggregate_tps"] > 2.0 * n4["median_decode_tps"]
    assert n4["overlap"] > 0.6 * 4  # serial would be 1.0
    assert v["verdict"] != "serial"


def test_admission_limit_shows_k_of_n(engine, rec):
    with engine("--slots", "2", "--step-ms", "5") as eng:
        # 64 tokens: a hand-over within 10% of a request's time is a 32 ms window, wide
        # enough for a loaded machine's jitter
        _, trace, v = rec(eng.url, concurrency=(1, 4), output_tokens=64)
    f = finding(v, "BR004", C4)
    assert f["outcome"] == "fired"
    assert (f["numbers"]["k"], f["numbers"]["n"]) == (2, 4)
    first = sorted(r["t_first"] - r["t_send"] for r in requests_of(trace, C4))
    # two start at once; two wait a whole request (64 steps of 5 ms) for a slot
    assert first[1] < 0.1
    assert first[2] == pytest.approx(0.32, rel=0.3)


def test_ignored_forced_length_is_recorded_and_fires_br007(engine, rec):
    args = ("--slots", "4", "--step-ms", "3", "--eos-after", "10",
            "--ignore-eos", "ignore", "--min-tokens", "ignore")  # fmt: skip
    with engine(*args) as eng:
        result, trace, v = rec(eng.url, concurrency=(2,))
    run = "g-c2-r0"
    assert [(r["output_tokens"], r["finish_reason"]) for r in requests_of(trace, run)] == [
        (10, "stop"), (10, "stop")]  # fmt: skip
    end = only(trace, "run_end", run)
    assert end["forced_length"] | {"count_source": None} == {
        "requested": 32, "checked": 2, "honoured": 0, "not_honoured": 2, "min": 10, "max": 10,
        "count_source": None, "message": end["forced_length"]["message"],
    }  # fmt: skip
    warning = only(trace, "log", run)
    assert warning["level"] == "warning"
    assert "forced length not honoured: 2 of 2 requests returned 10 tokens" in warning["text"]
    assert result.runs[0].not_honoured == 2
    assert finding(v, "BR007", run)["outcome"] == "fired"


def test_min_tokens_alone_forces_the_length(engine, rec):
    # llama-cpp-python's dialect: ignore_eos ignored, min_tokens honoured
    with engine(
        "--slots", "2", "--step-ms", "3", "--eos-after", "10", "--ignore-eos", "ignore"
    ) as eng:
        _, trace, v = rec(eng.url, concurrency=(2,))
    assert {r["output_tokens"] for r in requests_of(trace, "g-c2-r0")} == {32}
    assert finding(v, "BR007", "g-c2-r0")["outcome"] == "passed"


def test_several_tokens_per_chunk_counted_from_usage(engine, rec):
    with engine("--slots", "4", "--step-ms", "3", "--chunk-tokens", "4") as eng:
        _, trace, v = rec(eng.url, concurrency=(2,))
    reqs = requests_of(trace, "g-c2-r0")
    assert [(r["output_tokens"], r["n_chunks"], len(r["token_times"])) for r in reqs] == [
        (32, 8, 8), (32, 8, 8)]  # fmt: skip
    assert {r["output_tokens_source"] for r in reqs} == {"usage"}
    assert {r["chunk_tokens"] for r in reqs} == {None}
    assert run_of(v, "g-c2-r0")["output_tokens"] == 64


def test_mid_stream_error_fires_br019_and_is_not_counted(engine, rec):
    with engine("--slots", "4", "--step-ms", "3", "--error-every", "2") as eng:
        _, trace, v = rec(eng.url, concurrency=(4,))
    reqs = requests_of(trace, "g-c4-r0")
    failed = [r for r in reqs if r["finish_reason"] == "error"]
    assert len(failed) == 2
    assert all(r["error"].startswith("error event after") for r in failed)
    assert {r["output_tokens"] for r in failed} == {16}  # half of 32, counted from chunks
    assert {r["output_tokens_source"] for r in failed} == {"chunks"}
    assert finding(v, "BR019", "g-c4-r0")["outcome"] == "fired"
    assert run_of(v, "g-c4-r0")["output_tokens"] == 64  # only the two that finished
    assert only(trace, "run_end", "g-c4-r0")["requests_ok"] == 2


def test_interrupting_server_cut_streams_are_not_throughput(engine, rec):
    # llama-cpp-python's default: a waiting request cuts the running stream short
    # 20 ms a step: a stream lasts 0.64 s, so no stream ends before the next of the four
    # requests, sent together, reaches the server, however loaded the machine (at 5 ms a
    # client delayed by 160 ms between sends would see none cut)
    with engine("--slots", "1", "--step-ms", "20", "--interrupt") as eng:
        _, trace, v = rec(eng.url, concurrency=(4,))
    reqs = requests_of(trace, "g-c4-r0")
    cut = [r for r in reqs if r["finish_reason"] == "abort"]
    whole = [r for r in reqs if r["finish_reason"] == "length"]
    # Which streams the server cut, and after how many tokens, depends on how fast the client
    # sent the four requests (all but the last cut after one step when idle). The server's
    # properties: every stream is cut before its length or whole, and the last one is never
    # cut.
    assert len(cut) + len(whole) == 4 and cut and whole, [r["finish_reason"] for r in reqs]
    assert all(1 <= r["output_tokens"] < 32 for r in cut), [r["output_tokens"] for r in cut]
    assert all("without a finish reason" in r["error"] for r in cut)
    assert finding(v, "BR019", "g-c4-r0")["outcome"] == "fired"
    run = run_of(v, "g-c4-r0")
    assert run["output_tokens"] == 32 * len(whole)  # the whole requests only, not 4 × 32
    assert run["aggregate_tps"] == pytest.approx(32 * len(whole) / run["wall_s"], rel=1e-3)


def test_refused_parameter_is_dropped_and_said(engine, rec):
    with engine("--slots", "2", "--step-ms", "3", "--reject-param", "min_tokens") as eng:
        result, trace, _ = rec(eng.url, concurrency=(2,))
    header = next(r for r in trace if r["kind"] == "run")
    assert header["dropped_params"] == ["min_tokens"]
    assert "min_tokens" not in header["params_sent"]
    assert header["workload"]["min_tokens"] is None
    assert header["workload"]["ignore_eos"] is True
    assert only(trace, "run_end", "g-c2-r0")["dropped_params"] == ["min_tokens"]
    assert result.dropped_params == ["min_tokens"]
    assert {r["output_tokens"] for r in requests_of(trace, "g-c2-r0")} == {32}


def test_prefill_heavy_run_fires_br008(engine, rec):
    # 1,100 prompt tokens at 20,000 tok/s: 0.055 s each; the lone N=1 request measures the
    # rate (BR008 trusts a lone request only with a prompt of 1,024 tokens or more)
    prompt = " ".join(["word"] * 1100)
    with engine("--slots", "4", "--step-ms", "3", "--prefill-tps", "20000") as eng:
        _, trace, v = rec(eng.url, concurrency=(1, 4), output_tokens=8, prompts=(prompt,))
    n4 = run_of(v, C4)
    assert n4["prefill_share"] > 0.3
    assert finding(v, "BR008", C4)["outcome"] == "fired"
    # the lone request's first token waits for its prefill (a sleep of 0.055 s, longer only
    # on a loaded machine) and its first step
    ttft = sorted(r["t_first"] - r["t_send"] for r in requests_of(trace, C1))
    assert ttft[0] >= 0.055


def test_server_metrics_match_the_recorded_tokens(engine, rec):
    with engine("--slots", "4", "--step-ms", "3") as eng:
        _, trace, _ = rec(eng.url, concurrency=(4,))
    header = next(r for r in trace if r["kind"] == "run")
    assert header["server"]["engine"] == "refengine"
    assert header["server"]["models"] == ["ref"]
    assert "refengine:generation_tokens_total" in header["metrics_before"]
    delta = only(trace, "run_end", "g-c4-r0")["metrics_delta"]
    recorded = sum(r["output_tokens"] for r in requests_of(trace, "g-c4-r0"))
    assert delta["generation_tokens"] == recorded == 128
    assert delta["finished_reasons"]["length"] == 4


def test_chat_api_times_the_first_content_not_the_role_chunk(engine, rec):
    with engine("--slots", "4", "--step-ms", "5") as eng:
        _, trace, v = rec(eng.url, api="chat", concurrency=(2,))
    reqs = requests_of(trace, "g-c2-r0")
    assert [(r["output_tokens"], r["n_chunks"], r["finish_reason"]) for r in reqs] == [
        (32, 32, "length"), (32, 32, "length")]  # fmt: skip
    for r in reqs:
        assert r["t_first"] == r["token_times"][0]
        assert r["t_first"] - r["t_send"] >= 0.004  # one 5 ms step, not the instant role chunk
    assert run_of(v, "g-c2-r0")["output_tokens"] == 64


def test_poisson_open_loop_sends_on_the_seeded_schedule(engine, rec):
    with engine("--slots", "8", "--step-ms", "3") as eng:
        _, trace, v = rec(eng.url, request_rates=(20.0,), requests=10, output_tokens=8, seed=7)
    run = "g-rate20-r0"
    header = next(r for r in trace if r["kind"] == "run")
    assert header["workload"]["request_rate"] == 20.0
    assert header["workload"]["concurrency"] is None
    assert header["schedule"] == {"mode": "poisson", "requests": 10, "seed": 7}
    sends = [r["t_send"] for r in sorted(requests_of(trace, run), key=lambda r: r["id"])]
    expected = poisson_offsets(20.0, 10, 7)
    assert len(sends) == 10
    # request i goes at the seeded schedule's i-th offset from the run's start: never before
    # it, in order, each a wait of its own (a loaded machine only sends late, by up to
    # ~35 ms measured, so no upper bound)
    assert sends == sorted(sends)
    assert all(s >= float(e) - 1e-6 for s, e in zip(sends, expected, strict=True)), [
        round(s - float(e), 4) for s, e in zip(sends, expected, strict=True)
    ]
    assert run_of(v, run)["output_tokens"] == 80


def test_server_log_lines_are_copied_into_the_trace(engine, rec):
    with engine(
        "--slots",
        "1",
        "--step-ms",
        "3",
        "--warn",
        "continuous batching is not supported for this model",
    ) as eng:
        _, trace, _ = rec(eng.url, concurrency=(2,), server_log=str(eng.log))
    logs = [r for r in trace if r["kind"] == "log"]
    startup = [r for r in logs if r["run"] is None]
    assert any(r["level"] == "warning" and "continuous batching is not supported" in r["text"]
               for r in startup)  # fmt: skip
    during = [r["text"] for r in logs if r["run"] == "g-c2-r0"]
    assert sum(" done: 32 tokens, finish length" in t for t in during) == 2


def test_api_key_is_sent_and_never_written(engine, rec, tmp_path):
    from reporter.recorder.run import RecordError, record
    from tests.recorder.conftest import base_config

    with engine("--slots", "2", "--step-ms", "3", "--api-key", "s3cret-key") as eng:
        _, trace, _ = rec(eng.url, concurrency=(1,), api_key="s3cret-key")
        with pytest.raises(RecordError, match=r"HTTP 401.*expected an API key"):
            record(base_config(eng.url, tmp_path / "nokey.jsonl", concurrency=(1,)))
    assert len(requests_of(trace, C1)) == 1
    assert not any("s3cret" in str(r) for r in trace)


def test_a_client_that_blocks_its_loop_is_seen_by_br018(engine, tmp_path):
    import time

    from reporter import api
    from reporter.recorder.run import Observer, record
    from tests.recorder.conftest import base_config, read_trace

    class Tokenizer(Observer):
        """Work in the streaming loop, as a client that re-tokenizes each answer does."""

        def request_done(self, run_id, state):
            time.sleep(0.03)

    out = tmp_path / "busy.jsonl"
    with engine("--slots", "16", "--step-ms", "2") as eng:
        record(base_config(eng.url, out, concurrency=(16,), requests=64), Tokenizer())
    end = next(r for r in read_trace(out) if r["kind"] == "run_end")
    assert end["client"]["loop_lag_max_ms"] >= 25
    assert end["client"]["loop_lag_p99_ms"] > 10
    v = api.audit([out]).to_dict()
    assert finding(v, "BR018", "g-c16-r0")["outcome"] == "fired"


def test_the_client_health_is_recorded_and_judged_and_latencies_reported(engine, rec):
    # what the machine's load cannot change: the recorder writes its own loop lag and CPU,
    # BR018 judges exactly those against its limits, and no latency beats the server's pace
    with engine("--slots", "4", "--step-ms", "5") as eng:
        _, trace, v = rec(eng.url, concurrency=(4,))
    client = only(trace, "run_end", "g-c4-r0")["client"]
    lag, cpu = client["loop_lag_p99_ms"], client["cpu_percent"]
    assert 0 <= lag <= client["loop_lag_max_ms"] and cpu >= 0
    br018 = finding(v, "BR018", "g-c4-r0")
    assert br018["numbers"]["loop_lag_p99_ms"] == pytest.approx(lag)
    busy = lag > 10.0 or cpu >= 90.0  # the rule's default limits
    assert br018["outcome"] == ("fired" if busy else "passed")
    lat = run_of(v, "g-c4-r0")["latency"]
    # one token a 5 ms step: a request, from its send to its last token, can be slower on a
    # loaded machine, never faster. A gap between two tokens is the client's reading: a client
    # the machine delays reads several tokens at once (a gap of 0), so gaps are only ordered.
    assert lat["e2e_s"]["p50"] >= 32 * 0.005 * 0.9
    assert 0 <= lat["itl_s"]["p50"] <= lat["itl_s"]["p99"]
    assert 0 <= lat["tpot_s"]["p50"] <= lat["tpot_s"]["p99"] < lat["e2e_s"]["p99"]
    assert 0 < lat["ttft_s"]["p50"] <= lat["ttft_s"]["p99"] < lat["e2e_s"]["p99"]


@pytest.mark.parametrize(("same", "hits"), [(False, 0), (True, 4 * 14)])
def test_prefix_cache_counters_follow_the_prompts(engine, rec, same, hits):
    # tagged prompts share no prefix; identical ones all hit the cache (the recorder's first,
    # short request before the runs sent the same prompt)
    with engine("--slots", "4", "--step-ms", "3", "--prefix-cache") as eng:
        _, trace, _ = rec(eng.url, concurrency=(4,), unique_prompts=not same,
                          prompts=("one two three four five six seven eight nine ten eleven "
                                   "twelve thirteen fourteen",))  # fmt: skip
    delta = only(trace, "run_end", "g-c4-r0")["metrics_delta"]
    assert delta["prefix_cache_hits"] == hits
    assert delta["prefix_cache_queries"] == (56 if same else 4 * 15)  # the tag is one word
    cached = sorted(r["cached_tokens"] for r in requests_of(trace, "g-c4-r0"))
    assert cached == ([14, 14, 14, 14] if same else [0, 0, 0, 0])


def test_metrics_url_and_no_metrics(engine, rec):
    with engine("--slots", "2", "--step-ms", "3") as eng:
        _, off, _ = rec(eng.url, concurrency=(1,), scrape_metrics=False)
        _, wrong, _ = rec(eng.url, concurrency=(1,), metrics_url=eng.url + "/nothing-here")
        _, named, _ = rec(eng.url, concurrency=(1,), metrics_url=eng.url + "/metrics")
    for trace in (off, wrong):
        assert next(r for r in trace if r["kind"] == "run")["metrics_before"] is None
        end = only(trace, "run_end", C1)
        assert (end["metrics_after"], end["metrics_delta"]) == (None, None)
    assert only(named, "run_end", C1)["metrics_delta"]["generation_tokens"] == 32
