"""llama.cpp's server for the benchmarks that measure against a real engine.

peers.py and recorder_overhead.py both run the tiny random-weight model that
tests/realengine/setup.sh builds (``REALENGINE_BUILD``, default
~/.cache/benchreport-realengine), each with its own flags. This module holds what they share:
where the binary and the model are, a free port, starting the server and waiting until
/health answers, and stopping it (terminate, then kill if it does not end). `start` and
`running` serve any server with a /health route, the reference engine too.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

BUILD = Path(
    os.environ.get("REALENGINE_BUILD") or Path.home() / ".cache" / "benchreport-realengine"
)
#: Seconds a server may take to load the model and answer /health.
READY_TIMEOUT = 180.0
#: Loopback is never reached through a proxy named in the environment.
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def binary_and_model(build: Path = BUILD) -> tuple[Path, Path]:
    """llama-server and the tiny model under `build`; exits with how to build them if absent."""
    binary = build / "llama.cpp-build" / "bin" / "llama-server"
    model = build / "models" / "tiny.gguf"
    if not binary.exists() or not model.exists():
        raise SystemExit(
            f"no llama-server or model under {build}: run bash tests/realengine/setup.sh first"
        )
    return binary, model


def free_port() -> int:
    """A port no one listens on now (the kernel's choice)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(
    cmd: list[str],
    url: str,
    log: Path,
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = READY_TIMEOUT,
) -> subprocess.Popen[bytes]:
    """Start `cmd` (its output to `log`) and return once `url`/health answers 200.

    Exits with the end of the log if the server ends first, or is not ready in `timeout`."""
    with log.open("wb") as out:
        proc = subprocess.Popen(
            cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=cwd, env=env
        )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = log.read_text(errors="replace")[-2000:]
            raise SystemExit(f"the server exited ({proc.returncode}) before it was ready:\n{tail}")
        try:
            with _DIRECT.open(url + "/health", timeout=2) as answer:
                if answer.status == 200:
                    return proc
        except OSError:
            pass  # not listening yet, or 503 while the model loads
        time.sleep(0.25)
    stop(proc)
    raise SystemExit(f"the server was not ready on {url} within {timeout:.0f} s; see {log}")


def stop(proc: subprocess.Popen[bytes], grace: float = 15.0) -> None:
    """Ask the server to end; kill it if it has not within `grace` seconds."""
    proc.terminate()
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@contextmanager
def running(
    cmd: list[str],
    url: str,
    log: Path,
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> Iterator[subprocess.Popen[bytes]]:
    """The server of `start`, stopped on the way out."""
    proc = start(cmd, url, log, env=env, cwd=cwd)
    try:
        yield proc
    finally:
        stop(proc)
