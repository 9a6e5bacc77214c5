"""Limits on what is read, so that no input can crash, hang or exhaust the machine.

- Only regular files are read (no character device, FIFO or socket: /dev/zero never ends,
  a FIFO blocks); the kind is checked before the file is opened, and the file is opened
  non-blocking in case it was swapped in between.
- Each kind of file has a size cap (`MAX_BYTES`), checked before the bytes are read.
- JSON nesting is at most `MAX_JSON_DEPTH` levels, checked on the bytes before any JSON reader
  sees a line long enough to nest dangerously deep (pyarrow's reader takes about 1.1 KB of a
  thread's C stack a level, and overflows it: 500 levels on macOS's 512 KiB); a shorter line
  is checked on the types pyarrow inferred for it (`shallow_line_bytes`).
- YAML is at most `MAX_YAML_DEPTH` levels deep, and its aliases may repeat at most
  `MAX_YAML_ALIAS_NODES` nodes in all (an 817-byte alias bomb otherwise grows without end).

Every refusal is a `path[:line]: what; expected what` error (exit 2).
"""

from __future__ import annotations

import io
import os
import stat
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from reporter.errors import Problem, TraceError

#: The largest file of each kind that is read (whole, into memory).
MAX_BYTES = {
    "trace": 2 << 30,
    "server log": 64 << 20,  # each line becomes a row of Python objects: ~10× its bytes
    "mapping": 1 << 20,
    "config": 1 << 20,
    "prompt file": 64 << 20,
    "dataset": 1 << 30,  # ShareGPT's conversations are 0.7 GB
}
#: What a file of each kind should be, for "expected ..." in a refusal.
EXPECTED = {
    "trace": "a trace file",
    "server log": "a server log file",
    "mapping": "a YAML mapping file",
    "config": "a TOML config file",
    "prompt file": "a text file of prompts",
    "dataset": "a JSON Lines or JSON file of prompts",
}
#: The deepest JSON nesting accepted: real records nest 3 or 4 levels.
MAX_JSON_DEPTH = 64
#: The deepest YAML nesting accepted.
MAX_YAML_DEPTH = 64
#: The most nodes that YAML aliases may repeat, over a whole document.
MAX_YAML_ALIAS_NODES = 100_000

_CHUNK = 1 << 20
#: Bytes measured at once by json_depth (its temporary arrays take ~40 bytes per byte).
_BLOCK = 1 << 20


def size_text(n: float) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:,.0f} {unit}" if unit == "bytes" else f"{n:,.1f} {unit}".replace(".0 ", " ")
        n /= 1024
    raise AssertionError("unreachable")


def _kind_of(mode: int) -> str:
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a directory"
    return "not a regular file"


def _refuse(path: str, message: str, kind: str, *, capped: bool = False) -> TraceError:
    expected = EXPECTED[kind]
    if capped:
        expected += f" of at most {size_text(MAX_BYTES[kind])}"
    return TraceError([Problem(path, None, message, expected)])


def require_regular(path: str, kind: str) -> None:
    """Refuse a path that exists and is not a regular file (a file still to be created, such
    as a server log the server has not written yet, passes)."""
    try:
        mode = Path(path).stat().st_mode
    except OSError:
        return
    if not stat.S_ISREG(mode):
        raise _refuse(path, f"not a regular file ({_kind_of(mode)})", kind)


def read_bytes(path: str, kind: str) -> bytes:
    """The bytes of a regular file of at most `MAX_BYTES[kind]`; anything else is refused.

    OSError (no such file, permission) is left to the caller, which words it for its file.
    """
    limit = MAX_BYTES[kind]
    if not path:  # Path("") is the current directory
        raise _refuse("''", "the path is empty", kind)
    mode = Path(path).stat().st_mode  # before open: opening a FIFO for reading blocks
    if not stat.S_ISREG(mode):
        raise _refuse(path, f"not a regular file ({_kind_of(mode)})", kind)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb", buffering=0) as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode):  # swapped after the stat
            raise _refuse(path, f"not a regular file ({_kind_of(info.st_mode)})", kind)
        if info.st_size > limit:
            raise _refuse(path, f"the file is {size_text(info.st_size)}", kind, capped=True)
        parts: list[bytes] = []
        total = 0
        want = info.st_size or _CHUNK  # the stat'ed size at once, then what it grew by
        if want >= HUGE_READ_BYTES and (whole := _read_into_huge_pages(f, want)) is not None:
            parts.append(whole)
            total, want = len(whole), _CHUNK
        while chunk := f.read(want):
            total += len(chunk)
            if total > limit:  # a file that grows while read (a trace being recorded)
                raise _refuse(path, "the file grew while read", kind, capped=True)
            parts.append(chunk)
            want = _CHUNK
    return parts[0] if len(parts) == 1 else b"".join(parts)


#: The size of a transparent huge page (x86-64 and most arm64 kernels).
HUGE_PAGE = 2 << 20
#: Files at least this large are read into memory backed by huge pages where the kernel
#: offers them on request (_read_into_huge_pages).
HUGE_READ_BYTES = 4 * HUGE_PAGE
_MADV_HUGEPAGE = 14  # Linux's madvise() advice for transparent huge pages


def _read_into_huge_pages(f: io.RawIOBase, size: int) -> bytes | None:
    """Up to `size` bytes of `f` (fewer where it ends sooner), read into a fresh bytes object
    whose memory is first advised to be backed by huge pages; None where that cannot be
    done (not Linux and CPython), and the caller reads the plain way.

    The kernel spends most of a plain read of a large file faulting in the fresh object's
    4 KiB pages one by one (about 140 ms for 200 MB; 60 ms with 2 MiB pages). The object is
    filled before anyone else holds it, as CPython's own read() fills the one it returns.
    """
    if not sys.platform.startswith("linux") or sys.implementation.name != "cpython":
        return None
    try:
        import ctypes

        new_bytes = ctypes.pythonapi.PyBytes_FromStringAndSize
        new_bytes.restype = ctypes.py_object
        new_bytes.argtypes = [ctypes.c_char_p, ctypes.c_ssize_t]
        address_of = ctypes.pythonapi.PyBytes_AsString
        address_of.restype = ctypes.c_void_p
        address_of.argtypes = [ctypes.py_object]
        madvise = ctypes.CDLL(None).madvise
        madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    except (OSError, AttributeError):
        return None
    data = new_bytes(None, size)
    start = address_of(data)
    if not isinstance(data, bytes) or not isinstance(start, int):
        return None
    first = -(-start // HUGE_PAGE) * HUGE_PAGE  # the whole huge pages within the object
    last = (start + size) // HUGE_PAGE * HUGE_PAGE
    if last > first:
        madvise(first, last - first, _MADV_HUGEPAGE)  # advice only: a refusal changes nothing
    target = memoryview((ctypes.c_char * size).from_address(start)).cast("B")
    filled = _fill(f, target)
    target.release()
    return data if filled == size else data[:filled]


#: Files from this size on are read by two threads, a half each: the kernel's copy into
#: fresh memory, and its faults, then run on two cores (a 200 MB trace: ~40 ms, against
#: 60-300 ms for one read, measured on a 2-core virtual machine). The native reader scans
#: them for newlines on two threads too.
PARALLEL_READ_BYTES = 1 << 25


def _fill(f: io.RawIOBase, target: memoryview) -> int:
    """Read `f` from where it stands into `target`; how many bytes were read (fewer where the
    file ends sooner), the file left just after them."""
    size = len(target)
    try:
        fd = f.fileno()
    except (OSError, AttributeError, io.UnsupportedOperation):
        fd = -1
    if fd < 0 or size < PARALLEL_READ_BYTES or not hasattr(os, "preadv"):
        filled = 0
        while filled < size and (got := f.readinto(target[filled:])):
            filled += got
        return filled
    offset = f.tell()
    half = size // 2 // HUGE_PAGE * HUGE_PAGE  # (each thread's pages its own)

    def part(a: int, b: int) -> int:
        got = 0
        while a + got < b and (n := os.preadv(fd, [target[a + got : b]], offset + a + got)):
            got += n
        return got

    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="read") as pool:
        first, second = pool.map(part, (0, half), (half, size))
    # a first half cut short ends what was read (a file that shrank while read)
    filled = first if first < half else half + second
    f.seek(offset + filled)
    return filled


# --------------------------------------------------------------------------- JSON nesting


def json_depth(text: bytes) -> int:
    """The deepest nesting of `[` and `{` in JSON text, outside strings.

    Vectorised, in blocks (bounded memory on a long line): a quote preceded by an odd run of
    backslashes is escaped; the others toggle "inside a string"; brackets outside strings
    step the depth up and down. Newlines do not reset it: call it on one line of JSON Lines.
    """
    deepest = depth = 0
    inside = False
    slashes_before = 0  # the run of backslashes that ended the previous block
    for begin in range(0, len(text), _BLOCK):
        a = np.frombuffer(text, np.uint8, count=min(_BLOCK, len(text) - begin), offset=begin)
        step = ((a == 0x5B) | (a == 0x7B)).astype(np.int32)
        step -= (a == 0x5D) | (a == 0x7D)
        quotes = a == 0x22
        slashes = a == 0x5C
        if slashes.any():
            index = np.arange(len(a), dtype=np.int64)
            last_other = np.maximum.accumulate(np.where(slashes, -1 - slashes_before, index))
            at = np.flatnonzero(quotes)
            run = (at - 1) - last_other[np.maximum(at - 1, 0)]
            run[at == 0] = slashes_before
            quotes[at[run % 2 == 1]] = False
            slashes_before = len(a) - 1 - int(last_other[-1])
        else:
            if slashes_before % 2 and quotes[0]:
                quotes[0] = False
            slashes_before = 0
        within = (np.cumsum(quotes, dtype=np.int64) + inside) % 2 == 1
        step[within] = 0
        levels = np.cumsum(step, dtype=np.int64) + depth
        deepest = max(deepest, int(levels.max()))
        depth = int(levels[-1])
        inside = bool(within[-1])
    return deepest


def too_deep(text: bytes, limit: int = MAX_JSON_DEPTH) -> int | None:
    """The nesting of a JSON line when it exceeds `limit`, else None (cheap when it cannot)."""
    if text.count(b"[") + text.count(b"{") <= limit:
        return None
    depth = json_depth(text)
    return depth if depth > limit else None


#: Bytes looked at at once by deep_lines: its temporary arrays are a few times this, reused
#: from block to block instead of a fresh array the size of the file.
SCAN_BLOCK = 1 << 18


def deep_lines(
    data: bytes, newlines: np.ndarray, limit: int = MAX_JSON_DEPTH, block: int = SCAN_BLOCK
) -> dict[int, int]:
    """{line number: depth} of the lines nested deeper than `limit`, given the offsets of the
    file's newlines.

    A line can only be nested deeper than `limit` if it holds more than `limit` opening
    brackets: the brackets before each newline are counted a block at a time, and those
    (rare) lines are measured exactly by `json_depth`.
    """
    size = len(data)
    opens_before = np.empty(len(newlines), dtype=np.int64)  # opening brackets before each
    opens = 0
    # the temporary arrays, allocated once and reused from block to block
    folded = np.empty(min(block, size), dtype=np.uint8)
    hits = np.empty(min(block, size), dtype=bool)
    first = 0  # the first newline of the block
    for begin in range(0, size, block):
        part = np.frombuffer(data, np.uint8, count=min(block, size - begin), offset=begin)
        n = len(part)
        np.bitwise_or(part, 0x20, out=folded[:n])  # "[" is 0x5B, "{" is 0x7B
        at = np.flatnonzero(np.equal(folded[:n], 0x7B, out=hits[:n]))
        stop = int(np.searchsorted(newlines, begin + n))
        opens_before[first:stop] = np.searchsorted(at, newlines[first:stop] - begin) + opens
        opens += len(at)
        first = stop
    deep: dict[int, int] = {}
    if opens > limit:
        # each line's count: between the newline before it and its own (or the end)
        counts = np.diff(np.concatenate(([0], opens_before, [opens])))
        starts = np.concatenate(([0], newlines + 1))
        stops = np.concatenate((newlines, [size]))
        for index in np.flatnonzero(counts > limit):
            depth = json_depth(data[int(starts[index]) : int(stops[index])])
            if depth > limit:
                deep[int(index) + 1] = depth
    return deep


#: Bytes looked at at once by find_newlines: its temporary arrays, reused from block to
#: block, are a little more.
NEWLINE_BLOCK = 1 << 20


def newline_blocks(
    data: bytes, block: int = NEWLINE_BLOCK, blocks: range | None = None
) -> Iterator[np.ndarray]:
    """Offsets of the b"\n" bytes, a block at a time (those of `blocks`, the blocks' starts,
    if given; else every block): a caller can look at the lines that begin in a block while
    its bytes are still in cache.

    The bytes equal to b"\n" are marked, then the marks are looked for 8 at a time (as
    words): a newline is about one byte in a hundred, and finding the few words that hold
    one costs much less than finding the bytes among all the others.
    """
    size = len(data)
    capacity = -(-min(block, size) // 8) * 8  # whole words
    hits = np.zeros(capacity, dtype=bool)
    word_hits = np.empty(capacity // 8, dtype=bool)
    for begin in range(0, size, block) if blocks is None else blocks:
        part = np.frombuffer(data, np.uint8, count=min(block, size - begin), offset=begin)
        used = -(-len(part) // 8) * 8
        np.equal(part, 0x0A, out=hits[: len(part)])
        hits[len(part) : used] = False  # the last word's bytes past the end
        marks = hits[:used].view(np.uint64)
        words = np.flatnonzero(np.not_equal(marks, 0, out=word_hits[: used // 8]))
        within = np.flatnonzero(marks[words].view(bool))  # each word's 8 marks in a row
        yield (words[within >> 3] * 8 + (within & 7) + begin).astype(np.int64, copy=False)


def find_newlines(data: bytes, block: int = NEWLINE_BLOCK) -> np.ndarray:
    """Offsets of the b"\n" bytes (newline_blocks)."""
    found = list(newline_blocks(data, block))
    return np.concatenate(found) if found else np.zeros(0, np.int64)


#: C stack pyarrow's JSON reader takes for each level of nesting: a 512 KiB thread stack holds
#: a line 400 deep and overflows at 500 (measured with pyarrow 26 on Linux, where threads get
#: the stack limit as their size).
STACK_BYTES_PER_LEVEL = 1200


#: What glibc gives a thread when the stack limit is unlimited (2 MiB on x86-64; a line 2,500
#: deep overflows it, 1,500 does not).
UNLIMITED_STACK = 2 << 20


def thread_stack_bytes() -> int:
    """The C stack a new thread gets here: glibc gives it the soft stack limit (8 MiB by
    default; 2 MiB when unlimited, on x86-64), macOS 512 KiB, Windows 1 MiB; anywhere else
    (musl: 128 KiB) the least of these is assumed."""
    try:
        libc = os.confstr("CS_GNU_LIBC_VERSION") or ""
    except (ValueError, OSError):  # no such name (macOS, musl)
        libc = ""
    if sys.platform.startswith("linux") and libc.startswith("glibc"):
        import resource

        soft = resource.getrlimit(resource.RLIMIT_STACK)[0]
        return UNLIMITED_STACK if soft == resource.RLIM_INFINITY else int(soft)
    return {"darwin": 512 << 10, "win32": 1 << 20}.get(sys.platform, 128 << 10)


def shallow_line_bytes(stack: int | None = None) -> int:
    """The longest line pyarrow may read before its brackets are counted: a line of N bytes
    is nested at most N deep, and half of a thread's `stack` is kept spare (about 3,500 bytes
    with Linux's 8 MiB, 218 with macOS's 512 KiB)."""
    return (thread_stack_bytes() if stack is None else stack) // (2 * STACK_BYTES_PER_LEVEL)


def type_depth(kind: Any) -> int:
    """How many lists, structs and maps nest in a pyarrow type (0 for a scalar), walked
    without recursion: pyarrow infers a JSON value nested N deep as a type N deep (`{}` as
    an empty struct, `[]` as a list of nulls)."""
    import pyarrow as pa

    containers = (pa.ListType, pa.LargeListType, pa.FixedSizeListType, pa.MapType, pa.StructType)
    deepest = 0
    stack = [(kind, 1)]  # each type with the depth it has if it is a container
    while stack:
        current, depth = stack.pop()
        if not isinstance(current, containers):
            continue
        deepest = max(deepest, depth)
        if isinstance(current, pa.MapType):
            stack.extend([(current.key_type, depth + 1), (current.item_type, depth + 1)])
        elif isinstance(current, pa.StructType):
            stack.extend((current.field(i).type, depth + 1) for i in range(current.num_fields))
        else:
            stack.append((current.value_type, depth + 1))
    return deepest


def depth_problem(path: str, line: int | None, depth: int) -> Problem:
    return Problem(
        path, line, f"nested {depth} deep", f"at most {MAX_JSON_DEPTH} levels of [ and {{"
    )


# --------------------------------------------------------------------------- YAML


def check_yaml(text: str, path: str, loader_class: Any = yaml.SafeLoader) -> None:
    """Refuse YAML nested deeper than `MAX_YAML_DEPTH`, or whose aliases repeat more than
    `MAX_YAML_ALIAS_NODES` nodes, before any loader builds it.

    Walks the parser's events (no recursion, no objects built; `loader_class` is the loader
    whose syntax errors the caller words), keeping the size of every anchored node, so an
    alias costs its size once, not its expansion. yaml.YAMLError is left to the caller.
    """
    loader = loader_class(text)
    sizes: dict[str, int] = {}
    stack: list[list[Any]] = []  # [size so far, anchor] of each open collection
    repeated = 0
    try:
        while loader.check_event():
            event = loader.get_event()
            if isinstance(event, yaml.CollectionStartEvent):
                if len(stack) >= MAX_YAML_DEPTH:
                    raise _yaml_problem(
                        path, event, f"nested more than {MAX_YAML_DEPTH} deep",
                        f"at most {MAX_YAML_DEPTH} levels",
                    )  # fmt: skip
                stack.append([1, event.anchor])
                continue
            if isinstance(event, yaml.CollectionEndEvent):
                size, anchor = stack.pop()
            elif isinstance(event, yaml.ScalarEvent):
                size, anchor = 1, event.anchor
            elif isinstance(event, yaml.AliasEvent):
                if any(open_anchor == event.anchor for _, open_anchor in stack):
                    cycle = f"the alias *{event.anchor} is inside its own anchor (a cycle)"
                    raise _yaml_problem(path, event, cycle, "a document without recursive aliases")
                size, anchor = sizes.get(event.anchor or "", 1), None
                repeated += size
                if repeated > MAX_YAML_ALIAS_NODES:
                    raise _yaml_problem(
                        path, event, f"aliases repeat more than {MAX_YAML_ALIAS_NODES:,} nodes",
                        "a document without an alias bomb",
                    )  # fmt: skip
            else:
                continue
            if anchor:
                sizes[anchor] = size
            if stack:
                stack[-1][0] += size
    finally:
        loader.dispose()


def _yaml_problem(path: str, event: Any, message: str, expected: str) -> TraceError:
    mark = getattr(event, "start_mark", None)
    line = mark.line + 1 if mark is not None else None
    return TraceError([Problem(path, line, message, expected)])
