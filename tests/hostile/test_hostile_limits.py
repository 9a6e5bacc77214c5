"""Hostile input through the real command line: exit 0/1/2, never a traceback, a signal,
a hang or unbounded memory; refusals say `path: what; expected what` (exit 2).

The regression files are read in place from ../shared/hostile (its README says how each is
run); the tests skip when the folder is absent.
"""

from __future__ import annotations

import json
import os
import random
import resource
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import orjson
import pyarrow as pa
import pyarrow.json as pj
import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from reporter import api
from reporter.cli import main
from reporter.config import THRESHOLDS
from reporter.ingest.limits import (
    MAX_JSON_DEPTH,
    UNLIMITED_STACK,
    deep_lines,
    find_newlines,
    json_depth,
    shallow_line_bytes,
    type_depth,
)
from tests.conftest import FIXTURES, ROOT, TRACES

#: The regression inputs, read in place (never copied into the repository).
HOSTILE = Path(__file__).resolve().parents[2] / ".." / "shared" / "hostile"
LADDER = str(TRACES / "case-a-ladder.jsonl")
CUSTOM_LOG = str(FIXTURES / "adapters" / "bench-log.csv")
#: Generous bounds for one command on a busy machine: a hang or a blow-up is far beyond.
TIMEOUT_S = 30
MEMORY_CAP = 2 << 30


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def _explode(*args: object, **kwargs: object) -> None:
    raise RuntimeError("unexpected\nstate \x1b[2J")


def test_an_unexpected_error_is_exit_2_on_one_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(api, "audit", _explode)
    config = tmp_path / "t.toml"
    config.write_text("[thresholds]\n", encoding="utf-8")
    code, out, err = invoke(
        "audit", "--no-html", LADDER, "--claim", "aggregate=40 N=2", "--config", str(config)
    )
    assert code == 2  # never 1, which means "audited, and a finding fired"
    assert "Traceback" not in out + err
    assert err.count("\n") == 1
    assert err.startswith(
        f"benchreport: internal error while auditing {LADDER} "
        f"(--config {config}, --claim 'aggregate=40 N=2'): "
    )
    assert "RuntimeError: unexpected state \\x1b[2J" in err  # one line, no raw escape
    assert "--debug" in err


def test_debug_shows_the_traceback_and_keeps_exit_2(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(api, "audit", _explode)
    code, _, err = invoke("audit", "--no-html", LADDER, "--debug")
    assert code == 2
    assert "Traceback (most recent call last)" in err
    assert "in _explode" in err


def test_an_expected_error_with_debug_is_still_exit_2() -> None:
    code, _, err = invoke("audit", "--no-html", "missing.jsonl", "--debug")
    assert code == 2
    assert "Traceback" in err
    assert err.rstrip().endswith("missing.jsonl: cannot read the file: No such file or directory")


def test_every_command_shares_the_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(api, "load", _explode)
    code, _, err = invoke("compare", "-t", LADDER, "a", "b")
    assert code == 2
    assert "Traceback" not in err
    assert err.startswith(f"benchreport: internal error while comparing runs of {LADDER}")


def test_an_interrupt_is_exit_130(monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupt(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(api, "audit", interrupt)
    code, _, err = invoke("audit", "--no-html", LADDER)
    assert code == 130
    assert "interrupted" in err
    assert "Traceback" not in err


# --------------------------------------------------------------------------- the real CLI


def _cap_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def _cap_memory_and_stack(stack: int) -> None:
    _cap_memory()
    resource.setrlimit(resource.RLIMIT_STACK, (stack, resource.getrlimit(resource.RLIMIT_STACK)[1]))


#: A macOS worker thread's stack: on Linux, threads get the stack limit as their size.
SMALL_STACK = 512 << 10


def run_cli(*args: str, stack: int | None = None) -> tuple[int, str]:
    """`python -m reporter ARGS` in a child with a memory cap and a deadline: (code, output).
    `stack`: the child's stack limit (resource.RLIM_INFINITY for none), which sets the size
    of its threads' stacks.

    A signal (SIGSEGV) shows as a negative code; a hang as a TimeoutExpired failure.
    """
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "reporter", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=TIMEOUT_S,
        preexec_fn=_cap_memory if stack is None else lambda: _cap_memory_and_stack(stack),
        check=False,
    )
    assert time.monotonic() - started < TIMEOUT_S
    return done.returncode, done.stdout + done.stderr


def assert_refused(code: int, output: str, path: str, expected: str) -> None:
    __tracebackhide__ = True
    assert code == 2, output
    assert "Traceback" not in output
    assert "internal error" not in output
    assert f"{path}" in output
    assert f"; expected {expected}" in output


@pytest.fixture
def hostile() -> Path:
    if not HOSTILE.is_dir():
        pytest.skip("../shared/hostile is absent")
    return HOSTILE


@pytest.fixture
def fifo(tmp_path: Path) -> Iterator[str]:
    path = tmp_path / "fifo"
    os.mkfifo(path)
    yield str(path)


@pytest.mark.slow
def test_deep_nesting_is_refused_before_the_json_reader(hostile: Path) -> None:
    path = str(hostile / "crash01-segfault-deep-nesting-in-6th-line.jsonl")
    code, output = run_cli("audit", path, "--no-html")
    assert_refused(code, output, f"{path}:7: nested 20001 deep", "at most 64 levels")


@pytest.mark.slow
def test_a_yaml_alias_bomb_is_refused(hostile: Path) -> None:
    path = str(hostile / "hang01-mapping-alias-bomb-of-mappings.yaml")
    started = time.monotonic()
    code, output = run_cli(
        "audit", CUSTOM_LOG, "--format", "custom", "--mapping", path, "--no-html"
    )
    assert_refused(code, output, f"{path}:5: aliases repeat more than 100,000 nodes", "a document")
    assert time.monotonic() - started < TIMEOUT_S


@pytest.mark.slow
def test_deeply_nested_yaml_is_refused(hostile: Path) -> None:
    path = str(hostile / "tb-mapping-deep-nesting.yaml")
    code, out, err = invoke(
        "audit", CUSTOM_LOG, "--format", "custom", "--mapping", path, "--no-html"
    )
    assert_refused(code, out + err, f"{path}:1: nested more than 64 deep", "at most 64 levels")


#: How each option is given a special file, and what it then expected.
SPECIAL_USES = {
    "trace": (lambda f: ["audit", f, "--no-html"], "a trace file"),
    "config": (lambda f: ["audit", LADDER, "--no-html", "--config", f], "a TOML config file"),
    "mapping": (
        lambda f: ["audit", CUSTOM_LOG, "--format", "custom", "--mapping", f, "--no-html"],
        "a YAML mapping file",
    ),
    "server-log": (
        lambda f: ["audit", LADDER, "--no-html", "--server-log", f],
        "a server log file",
    ),
}


def test_a_special_file_is_refused_in_process() -> None:
    # the quick lane's check; the fresh-interpreter cases below (each use, /dev/zero, a FIFO)
    # run in the full lane. /dev/null cannot hang the test run if the check regresses.
    code, out, err = invoke("audit", "/dev/null", "--no-html")
    assert_refused(
        code, out + err, "/dev/null: not a regular file (a character device)", "a trace file"
    )


@pytest.mark.slow  # a fresh interpreter per case
@pytest.mark.parametrize("use", list(SPECIAL_USES))
@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_character_device_is_refused(device: str, use: str) -> None:
    if not Path(device).exists():
        pytest.skip(f"{device} is absent")
    args, expected = SPECIAL_USES[use]
    code, output = run_cli(*args(device))
    assert_refused(code, output, f"{device}: not a regular file (a character device)", expected)


@pytest.mark.slow  # a fresh interpreter per case
@pytest.mark.parametrize("use", list(SPECIAL_USES))
def test_a_fifo_is_refused_without_blocking(fifo: str, use: str) -> None:
    args, expected = SPECIAL_USES[use]
    code, output = run_cli(*args(fifo))
    assert_refused(code, output, f"{fifo}: not a regular file (a FIFO)", expected)


# --------------------------------------------------------------------------- in process


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("tb-config-thresholds-not-a-table.toml", ": thresholds is a list"),
        ("tb-config-invalid-utf8.toml", ":2: byte 0xff is not UTF-8"),
        ("tb-config-deep-array.toml", ": not valid TOML: nested too deeply"),
        ("tb-config-400-digit-int.toml", ": threshold flat_growth is a 400-digit number"),
        ("tb-config-5000-digit-int.toml", ": not valid TOML: a number too long to read"),
    ],
)
def test_a_hostile_config_is_refused(hostile: Path, name: str, message: str) -> None:
    path = str(hostile / name)
    code, out, err = invoke("audit", LADDER, "--no-html", "--config", path)
    assert_refused(code, out + err, path + message, "")
    assert err.count("\n") == 1


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("nan", "nan"),
        ("inf", "inf"),
        ("-1", "-1"),
        ("0", "0"),
        ("0.0", "0.0"),
        ("1.5", "1.5"),  # a share above 1
    ],
)
def test_a_threshold_must_be_finite_and_in_range(tmp_path: Path, value: str, shown: str) -> None:
    config = tmp_path / "t.toml"
    config.write_text(f"[thresholds]\nfailed_share = {value}\n", encoding="utf-8")
    code, out, err = invoke("audit", LADDER, "--no-html", "--config", str(config))
    expected = "a finite number above 0 and at most 1"
    assert_refused(code, out + err, f"{config}: threshold failed_share is {shown}", expected)


def test_every_default_threshold_is_in_its_own_range() -> None:
    import reporter.rules  # noqa: F401  (declares every threshold)

    assert len(THRESHOLDS) >= 20
    for t in THRESHOLDS.values():
        assert t.valid(t.default), t.name
        assert not t.valid(float("nan")) and not t.valid(float("inf")) and not t.valid(0.0)


@pytest.mark.parametrize(
    ("claim", "message"),
    [
        ("aggregate=1e309", "aggregate='1e309'; expected a finite number above 0"),
        ("aggregate=0", "aggregate='0'; expected a finite number above 0"),
        ("aggregate=nan", "aggregate='nan' is not a number"),
        ("aggregate=-40", "aggregate='-40' is not a number"),
        ("aggregate=40 N=" + "9" * 5000, "; expected a whole number from 1 to 1,000,000"),
        ("aggregate=40 N=\u00b2", "N='\u00b2'; expected a whole number from 1 to 1,000,000"),
    ],
)
def test_a_claim_must_be_finite_and_positive(claim: str, message: str) -> None:
    code, out, err = invoke("audit", LADDER, "--no-html", "--claim", claim)
    assert code == 2
    assert "Traceback" not in out + err and "internal error" not in err
    assert err.startswith("--claim ")
    assert message in err


def test_a_file_above_its_size_cap_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reporter.ingest import limits

    config = tmp_path / "t.toml"
    config.write_text("[thresholds]\nfailed_share = 0.2\n" + "#" * 100 + "\n", encoding="utf-8")
    monkeypatch.setitem(limits.MAX_BYTES, "config", 64)
    code, out, err = invoke("audit", LADDER, "--no-html", "--config", str(config))
    assert_refused(code, out + err, f"{config}: the file is 133 bytes", "a TOML config file")
    assert "of at most 64 bytes" in err
    monkeypatch.setitem(limits.MAX_BYTES, "trace", 1024)
    code, out, err = invoke("audit", LADDER, "--no-html")
    assert_refused(
        code, out + err, f"{LADDER}: the file is 4.5 KiB", "a trace file of at most 1 KiB"
    )


def test_a_deep_line_is_refused_on_every_json_path(tmp_path: Path) -> None:
    deep = b"[" * 65 + b"]" * 65
    request = b'{"kind":"request","run":"r","id":9,"t_send":0,"t_end":1,"output_tokens":4,"x":'
    lines = Path(LADDER).read_bytes().splitlines()
    trace = tmp_path / "deep.jsonl"
    trace.write_bytes(b"\n".join([*lines[:3], request + deep + b"}", *lines[3:]]) + b"\n")
    code, out, err = invoke("audit", str(trace), "--no-html")
    assert_refused(code, out + err, f"{trace}:4: nested 66 deep", "at most 64 levels")
    # 64 levels are read (and then judged on their content, not their depth)
    ok = tmp_path / "ok.jsonl"
    ok.write_bytes(b"\n".join([*lines[:3], request + deep[2:-2] + b"}", *lines[3:]]) + b"\n")
    _, _, err = invoke("audit", str(ok), "--no-html")
    assert "nested" not in err


def test_a_long_deep_line_is_counted_before_pyarrow_and_a_short_one_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The two ways the fast reader finds deep request lines give the same refusal: brackets
    counted first when a line is longer than shallow_line_bytes() (one parse), the inferred
    types after (a second parse, with the deep line kept out)."""
    from reporter.adapters import native

    parses: list[int] = []
    parse = native._parse_segments
    monkeypatch.setattr(native, "_parse_segments", lambda *a: parses.append(1) or parse(*a))
    # an id written as its neighbours' are, so that pyarrow reads the line with them
    request = b'{"kind":"request","run":"r","id":"r-9","t_send":0,"t_end":1,"output_tokens":4,"x":'
    lines = Path(LADDER).read_bytes().splitlines()
    for padding, parsed in ((0, 2), (shallow_line_bytes(), 1)):
        parses.clear()
        # 71 levels: the record, 68 lists, an object, and an empty one at the bottom
        value = b"[" * 68 + b'{"pad":"' + b"p" * padding + b'","y":{}}' + b"]" * 68
        trace = tmp_path / f"deep-{padding}.jsonl"
        trace.write_bytes(b"\n".join([*lines[:3], request + value + b"}", *lines[3:]]) + b"\n")
        code, out, err = invoke("audit", str(trace), "--no-html")
        assert_refused(code, out + err, f"{trace}:4: nested 71 deep", "at most 64 levels")
        assert len(parses) == parsed


@pytest.mark.slow
@pytest.mark.parametrize(
    ("stack", "length"),
    [
        (SMALL_STACK, shallow_line_bytes(SMALL_STACK)),
        (SMALL_STACK, 2000),
        (resource.RLIM_INFINITY, shallow_line_bytes(UNLIMITED_STACK)),
        (resource.RLIM_INFINITY, 6000),
    ],
    ids=["512KiB-uncounted", "512KiB-counted", "unlimited-uncounted", "unlimited-counted"],
)
def test_no_request_line_overflows_the_thread_stack(
    tmp_path: Path, stack: int, length: int
) -> None:
    """A request line of nested brackets as long as a line pyarrow reads uncounted, and one
    far longer (counted first): refused, not a crash, with 512 KiB stacks (macOS threads')
    and with an unlimited stack limit (glibc's threads then get 2 MiB). pyarrow builds the
    nested type of a line recursively: 500 levels overflow 512 KiB, 2,500 overflow 2 MiB."""
    request = b'{"kind":"request","run":"a-retest-n1","id":"q%d","t_send":0,"t_end":1,'
    request += b'"output_tokens":4}'
    run = Path(LADDER).read_bytes().splitlines()[0]
    short = [request % i for i in range(6)]  # short enough not to be counted either
    levels = (length - len(b'{"kind":"request","x":}')) // 2
    deep = b'{"kind":"request","x":' + b"[" * levels + b"]" * levels + b"}"
    assert length - 1 <= len(deep) <= length
    trace = tmp_path / "deep.jsonl"
    trace.write_bytes(b"\n".join([run, *short[:3], deep, *short[3:]]) + b"\n")
    code, output = run_cli("audit", str(trace), "--no-html", stack=stack)
    assert code == 2, output
    assert f"{trace}:5: nested {levels + 1} deep" in output


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-9, 9) | st.floats(allow_nan=False) | st.text("[{a"),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text("ab", max_size=2), inner),
    max_leaves=12,
)


@pytest.mark.slow
@given(record=st.dictionaries(st.text("xyz", min_size=1, max_size=2), json_values, min_size=1))
def test_the_depth_of_pyarrow_types_is_the_depth_of_the_json(record: dict[str, object]) -> None:
    """What lets the fast reader skip counting brackets: the type pyarrow infers for a line
    nests exactly as deep as the line (when pyarrow reads it at all)."""
    line = orjson.dumps(record)
    try:
        table = pj.read_json(pa.BufferReader(line))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return  # a line pyarrow refuses goes to the line-by-line reader, which counts
    assert type_depth(pa.struct(list(table.schema))) == json_depth(line)


def test_find_newlines_across_blocks() -> None:
    text = b"\n".join([b"", b"ab", b"", b"c" * 9, b""]) + b"x"
    for block in (1, 2, 3, 5, 8, 64):
        assert find_newlines(text, block=block).tolist() == [0, 3, 4, 14]
    assert find_newlines(b"").tolist() == []
    for text in (b"\n", b"x", b"abc\r\n", b"a\nb", b"\n" * 17, b"x" * 15 + b"\n"):
        expected = [i for i, c in enumerate(text) if c == 10]
        for block in (1, 3, 8, 9, 1 << 20):
            assert find_newlines(text, block=block).tolist() == expected, (text, block)


def test_json_depth_ignores_brackets_in_strings() -> None:
    assert json_depth(b'{"a":[1,[2,{"b":"[[[\\"[["}]]]}') == 4
    assert json_depth(b'["\\\\"]') == 1  # an escaped backslash, then the closing quote
    assert json_depth(b'["' + b"[" * 500 + b'"]') == 1
    assert json_depth(b"") == 0
    text = b'{"x":"' + b"[" * 100 + b'"}\n{"y":[[[1]]]}\n' + b"[" * 70 + b"]" * 70 + b"\n"
    assert deep_lines(text, find_newlines(text)) == {3: 70}
    assert MAX_JSON_DEPTH == 64


def test_deep_lines_is_the_same_whatever_the_block_size() -> None:
    """Lines, brackets and deep lines that straddle the blocks deep_lines reads at a time."""
    deep = b'{"x":' + b"[" * 70 + b"]" * 70 + b"}"
    text = b"\n".join([b'{"a":1}', b"", deep, '{"é":[[1]]}'.encode(), deep[:-1] + b"}"])
    newlines = find_newlines(text)
    assert deep_lines(text, newlines, block=len(text) + 1) == {3: 71, 5: 71}
    for block in (1, 2, 3, 7, 64):
        assert deep_lines(text, newlines, block=block) == {3: 71, 5: 71}
    assert deep_lines(b"", find_newlines(b"")) == {}
    assert deep_lines(b"[" * 65, find_newlines(b"")) == {1: 65}


@given(
    text=st.lists(st.sampled_from([b"{", b"[", b"]", b"\n", b'"', b"\\", b"a", "é".encode()])).map(
        b"".join
    ),
    block=st.integers(1, 9),
)
def test_deep_lines_is_json_depth_line_by_line(text: bytes, block: int) -> None:
    """The deep lines, whatever the blocks, are those `json_depth` finds reading each line
    alone (with a limit of 2, so that deep lines are common)."""
    newlines = find_newlines(text, block=block)
    assert newlines.tolist() == [i for i, c in enumerate(text) if c == 10]
    expected = {
        number: json_depth(line)
        for number, line in enumerate(text.split(b"\n"), start=1)
        if json_depth(line) > 2
    }
    assert deep_lines(text, newlines, limit=2, block=block) == expected


@pytest.mark.slow
@pytest.mark.parametrize("threads", [1, 2])
def test_request_lines_are_found_as_line_by_line(
    threads: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The native reader's scan (the lines' numbers, which begin with a request prefix, whether
    the bytes are all ASCII) agrees with splitting the file into lines, whatever the blocks:
    blank lines, CRLF, no final newline, a last line shorter than a word or than a prefix;
    scanned on one thread, or on two (a half each, as a large file is)."""
    from reporter.adapters import native

    if threads == 2:
        monkeypatch.setattr(native, "PARALLEL_READ_BYTES", 0)
    from reporter.adapters.native import (
        REQUEST_PREFIXES,
        _line_lengths,
        _line_numbers,
        _scan_lines,
    )

    rng = random.Random(7)
    pieces = [*REQUEST_PREFIXES, b'{"kind":"reques', b'{"kind":"run"', b'","x":1}', b"x"]
    pieces.append("é".encode())
    pieces += [b"\n", b"\r\n", b"\n\n", b"\r", b"\n\r\n"]
    width = max(len(p) for p in REQUEST_PREFIXES)
    for _ in range(3000):
        text = b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 8)))
        kept = [
            (number, line)
            for number, line in enumerate(text.split(b"\n"), start=1)
            if line not in (b"", b"\r")
        ]
        for block in (1, 3, 8, 1 << 20):
            newlines, begins, ascii_only = _scan_lines(text, REQUEST_PREFIXES, block)
            assert ascii_only is text.isascii()
            assert newlines.tolist() == [i for i, c in enumerate(text) if c == 10]
            starts = [0, *(newlines + 1).tolist()]
            stops = [*newlines.tolist(), len(text)]
            lengths = _line_lengths(newlines, len(text))
            assert lengths.tolist() == [b - a for a, b in zip(starts, stops, strict=True)]
            lines = _line_numbers(text, newlines, lengths).tolist()
            assert lines == [number for number, _ in kept], (text, block)
            is_request = [bool(begins[n - 1]) and lengths[n - 1] >= width for n in lines]
            # a line shorter than the longer prefix is parsed alone
            expected = [s.startswith(REQUEST_PREFIXES) and len(s) >= width for _, s in kept]
            assert is_request == expected, (text, block)


def test_utf8_check_by_chunks_is_the_strict_decoding() -> None:
    """The native reader's UTF-8 check skips chunks of ASCII: a character cut by a chunk's end
    is still whole, one cut short by an ASCII byte or the end of the file is not."""
    from reporter.adapters.native import _is_utf8

    rng = random.Random(4)
    pieces = [b"x", b"\n", "é".encode(), "€".encode(), "😀".encode(), b"\xc3", b"\xa9"]
    pieces += [b"\xe2\x82", b"\xff", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc0\xaf"]
    checked = {True: 0, False: 0}
    for _ in range(3000):
        text = b"".join(
            rng.choice(pieces) if rng.random() < 0.3 else b"x" for _ in range(rng.randint(0, 20))
        )
        try:
            text.decode("utf-8")
            want = True
        except UnicodeDecodeError:
            want = False
        checked[want] += 1
        for chunk in (1, 2, 3, 5, 1 << 20):
            assert _is_utf8(text, chunk) is want, (text, chunk)
    assert min(checked.values()) > 50


def _alias_bomb(levels: int) -> str:
    """Each level names the previous one nine times: 9**levels nodes once expanded."""
    lines = ["m0: &m0 {" + ", ".join(f"k{i}: x" for i in range(9)) + "}"]
    for n in range(1, levels):
        lines.append(f"m{n}: &m{n} {{" + ", ".join(f"k{i}: *m{n - 1}" for i in range(9)) + "}")
    return "\n".join(lines) + "\n"


def test_a_guidellm_yaml_report_is_bounded_too(tmp_path: Path) -> None:
    head = "---\nbenchmarks:\n- type_: generative_benchmark\n  x: *m5\n"
    bomb = tmp_path / "benchmarks.yaml"
    bomb.write_text(_alias_bomb(6) + head)
    code, out, err = invoke("audit", str(bomb), "--no-html")
    assert_refused(code, out + err, "aliases repeat more than 100,000 nodes", "a document")
    deep = tmp_path / "deep.yaml"
    deep.write_text("---\nbenchmarks:\n- type_: generative_benchmark\n  x: " + "[" * 70 + "]" * 70)
    code, out, err = invoke("audit", str(deep), "--no-html")
    assert_refused(code, out + err, f"{deep}:4: nested more than 64 deep", "at most 64 levels")


def test_a_mapping_may_use_a_few_aliases(tmp_path: Path) -> None:
    # four levels: 16,551 nodes repeated, within the budget
    mapping = tmp_path / "m.yaml"
    mapping.write_text(_alias_bomb(4))
    code, out, err = invoke(
        "audit", CUSTOM_LOG, "--format", "custom", "--mapping", str(mapping), "--no-html"
    )
    assert code == 2
    assert "alias" not in err and "Traceback" not in out + err  # refused for its content only


@pytest.mark.slow  # a fresh interpreter per case
@pytest.mark.parametrize("option", ["--server-log", "--prompt-file"])
def test_the_recorder_refuses_special_files_before_it_starts(fifo: str, option: str) -> None:
    code, output = run_cli(
        "record", "http://127.0.0.1:9", "--model", "m", option, fifo, "--out", fifo + ".jsonl"
    )
    kind = "a server log file" if option == "--server-log" else "a text file of prompts"
    assert_refused(code, output, f"{fifo}: not a regular file (a FIFO)", kind)


MAPPING = FIXTURES / "adapters" / "bench-log.yaml"


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("a: x", "a: x", None),  # unchanged: audited
        ("concurrency: 4", "concurrency: 1" + "0" * 5000, ": a value cannot be read: a number"),
        ("concurrency: 4", "concurrency: 1" + "0" * 400, ':17: "run.concurrency" is a 401-digit'),
        ("output_tokens: 512", "output_tokens: 99999999999999999999999", ':19: "run.output_tok'),
        ("id: laptop-n4", "id: !!timestamp 2020-99-99", ": a value cannot be read: month must"),
        ("id: laptop-n4", 'id: "\\ud800"', ": a string holds a lone surrogate \\ud800"),
        ("t_send: ms", "t_send: [ms]", ":12: \"units.t_send\" is ['ms']"),
        ("columns:\n", "columns: &c\n  x: *c\n", ":5: the alias *c is inside its own anchor"),
    ],
)
def test_a_hostile_mapping_is_refused_cleanly(
    tmp_path: Path, old: str, new: str, message: str | None
) -> None:
    text = MAPPING.read_text(encoding="utf-8")
    assert old in text or message is None
    mapping = tmp_path / "m.yaml"
    mapping.write_text(text.replace(old, new, 1), encoding="utf-8")
    code, out, err = invoke(
        "audit", CUSTOM_LOG, "--format", "custom", "--mapping", str(mapping), "--no-html"
    )
    if message is None:
        assert code in (0, 1) and err == ""
        return
    assert_refused(code, out + err, f"{mapping}{message}", "")


def test_an_empty_path_is_not_the_current_directory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Path("") is ".": with a Parquet file anywhere below (a checkout's virtualenv has some),
    # the empty argument was read as a folder of Parquet parts
    nested = tmp_path / "lib" / "data"
    nested.mkdir(parents=True)
    (nested / "x.parquet").write_bytes(b"PAR1")
    monkeypatch.chdir(tmp_path)
    code, out, err = invoke("audit", "", "--no-html")
    assert_refused(code, out + err, "'': the path is empty", "a trace file")


def test_deep_json_inside_a_json_string_is_not_an_internal_error(tmp_path: Path) -> None:
    doc = json.loads((FIXTURES / "adapters" / "genai-perf-profile_export.json").read_text())
    requests = doc["experiments"][0]["requests"]
    requests[0]["request_inputs"]["payload"] = "[" * 100_000  # the request body, a JSON string
    requests[1]["response_outputs"][0]["response"] = "data: " + "[" * 100_000 + "\n\n"
    path = tmp_path / "profile_export.json"
    path.write_text(json.dumps(doc))
    code, out, err = invoke("audit", str(path), "--no-html")
    assert code in (0, 1, 2)
    assert "internal error" not in err and "Traceback" not in out + err
    code, out, err = invoke(
        "record", "http://127.0.0.1:9", "--model", "m", "--param", "x=" + "[" * 100_000
    )
    assert_refused(code, out + err, "--param x: nested too deeply", "a JSON value or text")


def _nested(depth: int, width: int) -> object:
    """A JSON value nested `depth` deep: lists and objects in turn, `width` items at the top."""
    value: object = 1
    for level in range(depth):
        value = [value] * (width if level == depth - 1 else 1) if level % 2 else {"k": value}
    return value


@pytest.mark.slow
@given(
    depth=st.integers(0, 70),
    width=st.integers(1, 3),
    copies=st.integers(1, 3),
    at=st.integers(0, 4),
)
def test_counting_brackets_first_or_reading_types_after_gives_the_same_outcome(
    depth: int, width: int, copies: int, at: int
) -> None:
    """Whatever nests in the request lines, the audit says the same (verdict or refusal)
    whether the native reader counts every line's brackets first or reads the depth off the
    types pyarrow inferred. `copies` lines hold the same nested value (so that pyarrow reads
    them together), from line `at` of the requests on."""
    import tempfile

    from reporter.adapters import native
    from reporter.errors import BenchreportError
    from reporter.render.json import render_json

    run = Path(LADDER).read_bytes().splitlines()[0]
    fields = {"kind": "request", "run": "a-retest-n1", "output_tokens": 4}
    requests = [
        orjson.dumps(
            fields
            | {"id": f"q{i}", "t_send": i, "t_first": i + 0.5, "t_end": i + 1}
            | ({"x": _nested(depth, width)} if at <= i < at + copies else {})
        )
        for i in range(6)
    ]
    outcomes = []
    with tempfile.TemporaryDirectory() as folder:
        trace = Path(folder) / "t.jsonl"
        trace.write_bytes(b"\n".join([run, *requests]) + b"\n")
        for threshold in (0, 1 << 30):  # every line counted first; none
            original = native.shallow_line_bytes
            native.shallow_line_bytes = lambda threshold=threshold: threshold  # type: ignore[assignment]
            try:
                outcomes.append(render_json(api.audit([trace])))
            except BenchreportError as exc:
                outcomes.append(f"{type(exc).__name__}: {exc}")
            finally:
                native.shallow_line_bytes = original
    assert outcomes[0] == outcomes[1]
