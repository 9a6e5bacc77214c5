"""BR013 feature-refused-in-log: a warning or error refusing a flag that was passed."""

from __future__ import annotations

import pytest

from reporter import api, features
from tests.conftest import FIXTURES, TRACES, finding


def test_method_3_refused_continuous_batching():
    """The closed engine took --continuous-batching 4 and logged that it refused it."""
    v = api.audit([TRACES / "case-a-ladder.jsonl"], select=["BR013"]).to_dict()
    f = finding(v, "BR013", "a-retest-n4")
    assert f["outcome"] == "fired"
    assert f["severity"] == "warning"
    assert f["message"].startswith(
        "the server log refuses a feature that was asked for: continuous batching (asked for "
        "with --continuous-batching 4) at "
    )
    assert f["numbers"]["refused"] == ["batching"]
    assert f["refs"][0].endswith("case-a-ladder.jsonl:12")
    # the startup log concerns every run the server served
    assert finding(v, "BR013", "a-retest-n1")["outcome"] == "fired"


def test_refusal_in_a_log_record():
    v = api.audit([FIXTURES / "BR013" / "fires_refused_batching.jsonl"], select=["BR013"])
    f = finding(v, "BR013", "a-n4")
    assert f["outcome"] == "fired"
    assert f["numbers"]["refused"] == ["batching"]
    assert f["refs"][0].endswith("fires_refused_batching.jsonl:7")


def test_error_level_prefix_cache_refusal():
    v = api.audit([FIXTURES / "BR013" / "fires_prefix_cache_disabled.jsonl"], select=["BR013"])
    f = finding(v, "BR013", "pc-n1")
    assert f["outcome"] == "fired"
    assert f["numbers"]["refused"] == ["prefix_cache"]
    assert "prefix caching (asked for with --enable-prefix-caching)" in f["message"]


def test_server_log_file_with_another_engines_wording():
    v = api.audit(
        [FIXTURES / "BR014" / "fires_batching_ladder.jsonl"],
        select=["BR013"],
        server_logs=[FIXTURES / "BR013" / "startup-refused.log"],
    )
    f = finding(v, "BR013", "a-n4")
    assert f["outcome"] == "fired"
    assert f["refs"] == [f"{FIXTURES / 'BR013' / 'startup-refused.log'}:4"]
    assert "continuous batching (asked for with --parallel 4)" in f["message"]


def test_clean_server_log_passes():
    v = api.audit(
        [FIXTURES / "BR014" / "fires_batching_ladder.jsonl"],
        select=["BR013"],
        server_logs=[FIXTURES / "BR013" / "startup-clean.log"],
    )
    f = finding(v, "BR013", "a-n4")
    assert f["outcome"] == "passed"
    assert f["message"] == (
        "no refusal of continuous batching (--parallel 4), forced output length "
        "(workload.ignore_eos) in 7 log lines, 1 at warning or error level"
    )


def test_no_log_is_not_applicable():
    v = api.audit([FIXTURES / "BR014" / "fires_batching_ladder.jsonl"], select=["BR013"])
    f = finding(v, "BR013", "a-n4")
    assert f["outcome"] == "not-applicable"
    assert f["message"] == "no server log: no log records and no --server-log FILE"


def test_refusal_without_a_recorded_flag_is_undecidable():
    v = api.audit(
        [FIXTURES / "BR013" / "undecidable_refusal_without_flags.jsonl"], select=["BR013"]
    )
    assert finding(v, "BR013", "nf-n1")["outcome"] == "undecidable"


WANT = features.requested(
    features.parse_flags(
        [
            "--continuous-batching",
            "4",
            "--enable-prefix-caching",
            "-md",
            "draft.gguf",
            "--flash-attn",
            "on",
        ]
    )
)


@pytest.mark.parametrize(
    ("level", "text", "refused"),
    [
        (
            "warning",
            "Continuous batching is not available for this model; falling back",
            ["batching"],
        ),
        ("WARN", "[engine] continuous-batching: unsupported with recurrent layers", ["batching"]),
        (
            "error",
            "speculative decoding disabled: draft model vocabulary mismatch",
            ["speculation"],
        ),
        (
            "warning",
            "Prefix caching is not supported for hybrid models; disabling it.",
            ["prefix_cache"],
        ),
        (
            "warning",
            "flash_attn requested but not available on this GPU, falling back to SDPA",
            ["flash_attention"],
        ),
        (
            "warning",
            "--enable-prefix-caching ignored: cache disabled by --no-kv-offload",
            ["prefix_cache"],
        ),
        # not a refusal: an info line, or a warning about something else
        ("info", "Continuous batching disabled", []),
        ("warning", "continuous batching enabled with 4 slots", []),
        ("warning", "speculative decoding enabled. batching queue is full", []),
        ("warning", "slow step detected; falling back to eager for this batch", []),
    ],
)
def test_refusal_matching_is_by_feature_words(level, text, refused):
    got = features.refusals(text, features.normalise_level(level, text), WANT, "log:1")
    assert [r.feature for r in got] == refused


def test_flags_that_ask_for_nothing():
    flags = features.parse_flags(
        [
            "--parallel",
            "1",
            "--no-cont-batching",
            "--cache-reuse=0",
            "enable_prefix_caching=false",
            "--flash-attn",
            "off",
        ]
    )
    assert features.requested(flags) == {}


def test_a_refusal_clause_refers_back_to_the_feature_named_before():
    text = (
        "WARNING: Continuous batching (--continuous-batching 4) requested. This model does "
        "not support it; falling back to serial execution."
    )
    got = features.refusals(text, "warning", WANT, "log:1")
    assert [r.feature for r in got] == ["batching"]


def test_a_log_record_of_no_run_is_of_its_own_files_server(tmp_path):
    """Audited beside another file, the first file's log lines (which name no run) do not
    speak for the second file's server: the same run, written again without the log, is not
    said to have had prefix caching refused."""
    source = FIXTURES / "BR013" / "fires_prefix_cache_disabled.jsonl"
    lines = [x for x in source.read_text().splitlines() if '"kind":"log"' not in x]
    assert '"run"' not in next(x for x in source.read_text().splitlines() if '"log"' in x)
    other = tmp_path / "other-server.jsonl"
    other.write_text("\n".join(x.replace('"pc-n1', '"other-n1') for x in lines) + "\n")
    v = api.audit([source, other], select=["BR013"])
    assert finding(v, "BR013", "pc-n1")["outcome"] == "fired"
    b = finding(v, "BR013", "other-n1")
    assert b["outcome"] == "not-applicable"
    assert b["message"].startswith("no server log lines for this run")
    # a log given with --server-log (a file that holds no run) is of every run audited
    log = tmp_path / "server.log"
    log.write_text(
        "WARNING 11-29 08:14:02 [config.py:1210] Prefix caching is not supported for hybrid "
        "models; disabling it.\n"
    )
    v = api.audit([other], server_logs=[log], select=["BR013"])
    assert finding(v, "BR013", "other-n1")["outcome"] == "fired"


#: llama-server's startup under journald, as a router spawned it: each line prefixed by the
#: date, host and process, and the child's lines by its port, before llama.cpp's own
#: `elapsed level` prefix; the router echoes the child's arguments one per line.
_JOURNAL = "Jun 23 23:54:06 host llama-server[264894]: "
JOURNALD_LLAMA_SERVER = [
    _JOURNAL + "21.04.414.555 I srv          load: spawning server instance with args:",
    _JOURNAL + "21.04.414.557 I srv          load:   --cache-reuse",
    _JOURNAL + "21.04.414.558 I srv          load:   8192",
    _JOURNAL + "21.04.414.566 I srv          load:   --cont-batching",
    _JOURNAL + "[48045] 0.02.529.790 W llama_context: n_ctx_seq (110592) < n_ctx_train (262144) "
    "-- the full capacity of the model will not be utilized",
    _JOURNAL + "[48045] 0.02.746.380 W srv    load_model: cache_reuse is not supported by this "
    "context, it will be disabled",
    _JOURNAL + "[48045] 0.02.883.611 I srv    load_model: prompt cache is enabled, size limit: "
    "16192 MiB",
]


def test_llama_server_levels_behind_a_journald_prefix(tmp_path):
    """llama.cpp's level letter follows its elapsed time, wherever the line's prefix puts it:
    the cache_reuse warning refuses the --cache-reuse the router passed."""
    log = tmp_path / "llama-server.log"
    log.write_text("\n".join(JOURNALD_LLAMA_SERVER) + "\n")
    v = api.audit(
        [FIXTURES / "BR014" / "fires_batching_ladder.jsonl"],
        select=["BR013"],
        server_logs=[log],
    )
    f = finding(v, "BR013", "a-n4")
    assert f["outcome"] == "fired"
    # the chunk reuse is refused, not the prefix cache: "prompt cache is enabled" two lines on
    assert f["numbers"]["refused"] == ["cache_reuse"]
    assert f["message"].startswith(
        "the server log refuses a feature that was asked for: KV cache reuse by shifting "
        "(asked for with --cache-reuse (echoed"
    )
    assert "prefix caching" not in f["message"]
    assert f["refs"] == [f"{log}:6"]


def test_server_log_lines_are_numbered_at_newlines_only(tmp_path):
    """A form feed or a U+2028 inside a log line (journald keeps what the process wrote) is
    no line break: the refusal is cited at the line the file numbers it."""
    log = tmp_path / "llama-server.log"
    lines = list(JOURNALD_LLAMA_SERVER)
    lines[0] = lines[0] + " \x0c page \u2028 args"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    v = api.audit(
        [FIXTURES / "BR014" / "fires_batching_ladder.jsonl"],
        select=["BR013"],
        server_logs=[log],
    )
    assert finding(v, "BR013", "a-n4")["refs"] == [f"{log}:6"]


@pytest.mark.parametrize(
    ("text", "level"),
    [
        (_JOURNAL + "[48045] 0.02.746.380 W srv    load_model: cache_reuse is off", "warning"),
        ("[58527] 0.06.080.972 W srv    load_model: swa_full is not supported", "warning"),
        ("2026-05-17 11:03:17.897 | 0.00.973.999 I srv          main: n_parallel", "info"),
        ("0.19.473.910 E srv    load_model: failed to load draft model", "error"),
        # the letter decides, not a word of the message
        ("0.11.300.052 W srv    load_model: [spec] failed to measure: error", "warning"),
        # llama.cpp without timestamps: the letter opens the line
        ("W llama_context: n_ctx_seq (32768) < n_ctx_train (262144)", "warning"),
        ("I srv  llama_server: model loaded", "info"),
    ],
)
def test_llama_cpp_level_letters(text, level):
    from reporter.serverlog import level_of

    assert level_of(text) == level
