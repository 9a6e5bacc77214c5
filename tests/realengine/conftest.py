"""Real inference engines on free loopback ports: llama.cpp's llama-server and
llama-cpp-python's server, from the build that ``tests/realengine/setup.sh`` makes.

The build lives in ``REALENGINE_BUILD`` (default ``~/.cache/benchreport-realengine``); the
tests skip, saying so, when it is absent. ``REALENGINE_THREADS`` sets the engines' threads
(default 2, as in the recipe's measurements). The engines' OpenMP threads wait passively
(``OMP_WAIT_POLICY=PASSIVE``; ``REALENGINE_OMP_WAIT_POLICY`` overrides it): spinning threads
of an engine that shares its two cores with anything else run up to ten times slower and far
less evenly, and even timing is what the audits rely on.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

BUILD = Path(
    os.environ.get("REALENGINE_BUILD") or Path.home() / ".cache" / "benchreport-realengine"
)
THREADS = os.environ.get("REALENGINE_THREADS", "2")
WAIT_POLICY = os.environ.get("REALENGINE_OMP_WAIT_POLICY", "PASSIVE")
LLAMA_SERVER = BUILD / "llama.cpp-build" / "bin" / "llama-server"
MODEL = BUILD / "models" / "tiny.gguf"
VENV_PYTHON = BUILD / "venv" / "bin" / "python"
SETUP_HINT = "run: bash tests/realengine/setup.sh (REALENGINE_BUILD sets where it builds)"


@dataclass
class Served:
    name: str
    url: str
    log: Path


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _command(name: str, port: int) -> tuple[list[str], str]:
    """The server's command line and the path that answers once it is ready."""
    host = ["--host", "127.0.0.1", "--port", str(port)]
    if name.startswith("cpp-"):
        if not LLAMA_SERVER.exists() or not MODEL.exists():
            pytest.skip(f"no llama-server or model in {BUILD}; {SETUP_HINT}")
        slots = ["--parallel", "1", "-c", "4096"] if name == "cpp-serial" else [
            "--parallel", "4", "-cb", "-c", "8192"]  # fmt: skip
        return [str(LLAMA_SERVER), "-m", str(MODEL), *host, *slots, "-t", THREADS,
                "-tb", THREADS, "--metrics", "--no-webui", "-a", "tiny"], "/health"  # fmt: skip
    if not VENV_PYTHON.exists() or not MODEL.exists():
        pytest.skip(f"no llama-cpp-python or model in {BUILD}; {SETUP_HINT}")
    cmd = [str(VENV_PYTHON), "-m", "llama_cpp.server", "--model", str(MODEL), "--model_alias",
           "tiny", *host, "--n_ctx", "4096", "--n_threads", THREADS, "--n_threads_batch",
           THREADS]  # fmt: skip
    if name == "py":
        cmd += ["--interrupt_requests", "False"]
    return cmd, "/v1/models"


@contextmanager
def serve(name: str, tmp: Path) -> Iterator[Served]:
    """Start one engine (cpp-serial, cpp-parallel, py, py-interrupt); stop it after."""
    port = _free_port()
    cmd, ready = _command(name, port)
    url = f"http://127.0.0.1:{port}"
    log_path = tmp / f"{name}.log"
    with log_path.open("wb") as log:
        env = os.environ | {"OMP_WAIT_POLICY": WAIT_POLICY}
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, env=env)  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                tail = log_path.read_text(errors="replace")[-3000:]
                pytest.fail(f"{name} exited with {proc.returncode} before it was ready:\n{tail}")
            try:
                if httpx.get(url + ready, timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"{name} was not ready within 120 s")
            time.sleep(0.25)
        yield Served(name, url, log_path)
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
