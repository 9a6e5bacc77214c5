#!/usr/bin/env bash
# Build the real inference engines that tests/realengine records, from package registries
# only (PyPI), with a locally generated random-weight model. The build lives outside the
# checkout (REALENGINE_BUILD) so that CI can cache it; ~20 min on 2 cores the first time,
# a few seconds when everything is there (each step is skipped when its output exists).
#
#   bash tests/realengine/setup.sh
#
#   1. venv + llama-cpp-python[server] built from the PyPI sdist (CPU, GGML_NATIVE)
#   2. llama.cpp's C++ llama-server / llama-bench / llama-batched-bench, built from
#      the llama.cpp tree vendored inside that same sdist
#   3. tiny random-weight llama GGUF (make_tiny_gguf.py)
#
# Env overrides: REALENGINE_BUILD (default $HOME/.cache/benchreport-realengine),
# LLAMA_CPP_PYTHON_VERSION (default 0.3.36), JOBS (default 2), plus the model
# shape: TINY_N_EMBD TINY_N_LAYER TINY_N_HEAD TINY_N_FF TINY_DTYPE TINY_SEED.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
B="${REALENGINE_BUILD:-$HOME/.cache/benchreport-realengine}"
VER="${LLAMA_CPP_PYTHON_VERSION:-0.3.36}"
JOBS="${JOBS:-2}"
PY="${PYTHON:-python3}"
SDIST="$B/sdist/llama_cpp_python-$VER.tar.gz"
SRC="$B/src/llama_cpp_python-$VER"
LLAMA_SRC="$SRC/vendor/llama.cpp"
CPP_BUILD="$B/llama.cpp-build"
MODEL="$B/models/tiny.gguf"
TIMES="$B/setup_times.log"

mkdir -p "$B"
step() {  # step NAME CMD... : run, time, log
  local name="$1"; shift
  local s; s=$(date +%s)
  echo "== $name"
  "$@"
  local d=$(( $(date +%s) - s ))
  echo "$(date -u +%FT%TZ) $name ${d}s" | tee -a "$TIMES"
}

# ---- 1. venv + llama-cpp-python[server] -------------------------------------
do_venv() {
  [ -x "$B/venv/bin/python" ] || "$PY" -m venv "$B/venv"
  "$B/venv/bin/python" -m pip install -q --upgrade pip 2>&1 | grep -v "is ignored" || true
}
do_sdist() {
  mkdir -p "$B/sdist" "$B/src"
  # --no-binary limited to this package: with ':all:' pip also builds the sdist's own
  # build dependencies (scikit-build-core & co.) from source, ~7 min instead of ~1
  [ -f "$SDIST" ] || "$B/venv/bin/python" -m pip download --no-binary llama-cpp-python --no-deps \
      "llama-cpp-python==$VER" -d "$B/sdist"
  [ -d "$SRC" ] || tar -xzf "$SDIST" -C "$B/src"
}
do_llama_cpp_python() {
  # builds libllama/libggml with cmake+ninja inside pip (scikit-build-core); ~10 min on 2 cores
  CMAKE_ARGS="-DGGML_NATIVE=ON -DLLAMA_CURL=OFF" CMAKE_BUILD_PARALLEL_LEVEL="$JOBS" \
    "$B/venv/bin/python" -m pip install -v "$SDIST[server]" > "$B/pip_install.log" 2>&1 \
    || { tail -40 "$B/pip_install.log"; return 1; }
}
do_py_extras() {
  # the gguf writer from the same llama.cpp tree (make_tiny_gguf.py needs it)
  "$B/venv/bin/python" -m pip install -q "$LLAMA_SRC/gguf-py" 2>&1 | grep -v "is ignored" || true
}

step venv do_venv
# cmake >= 3.21 and ninja: use the system's when present, else PyPI's wheels inside the venv
export PATH="$B/venv/bin:$PATH"
if ! command -v ninja >/dev/null || ! command -v cmake >/dev/null; then
  step "cmake+ninja from PyPI" "$B/venv/bin/python" -m pip install -q cmake ninja
fi
step sdist do_sdist
if "$B/venv/bin/python" -c "import llama_cpp, sys; sys.exit(llama_cpp.__version__ != '$VER')" 2>/dev/null \
   && "$B/venv/bin/python" -c "import llama_cpp.server.app" 2>/dev/null; then
  echo "== llama-cpp-python $VER already installed"
else
  step "llama-cpp-python[server]==$VER pip build" do_llama_cpp_python
fi
if "$B/venv/bin/python" -c "import gguf" 2>/dev/null; then
  echo "== gguf already installed"
else
  step "gguf-py" do_py_extras
fi

# ---- 2. C++ llama-server / llama-bench / llama-batched-bench -----------------
do_cpp_configure() {
  cmake -S "$LLAMA_SRC" -B "$CPP_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DLLAMA_CURL=OFF -DGGML_NATIVE=ON -DLLAMA_BUILD_SERVER=ON \
    -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_OPENSSL=OFF \
    -DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
    > "$B/cmake_configure.log" 2>&1 || { tail -40 "$B/cmake_configure.log"; return 1; }
}
do_cpp_build() {
  cmake --build "$CPP_BUILD" --target llama-server llama-bench llama-batched-bench -j "$JOBS" \
    > "$B/cpp_build.log" 2>&1 || { tail -40 "$B/cpp_build.log"; return 1; }
}
[ -f "$CPP_BUILD/build.ninja" ] || step "cmake configure llama.cpp" do_cpp_configure
if [ -x "$CPP_BUILD/bin/llama-server" ] && [ -x "$CPP_BUILD/bin/llama-bench" ] && [ -x "$CPP_BUILD/bin/llama-batched-bench" ]; then
  echo "== C++ binaries already built (run 'cmake --build $CPP_BUILD ...' to refresh)"
else
  step "cmake build llama-server llama-bench llama-batched-bench" do_cpp_build
fi

# ---- 3. tiny random GGUF ----------------------------------------------------
do_model() {
  mkdir -p "$B/models"
  "$B/venv/bin/python" "$HERE/make_tiny_gguf.py" --out "$MODEL" \
    --n-embd "${TINY_N_EMBD:-768}" --n-layer "${TINY_N_LAYER:-8}" --n-head "${TINY_N_HEAD:-12}" \
    --n-head-kv "${TINY_N_HEAD:-12}" --n-ff "${TINY_N_FF:-2048}" --dtype "${TINY_DTYPE:-f16}" \
    --seed "${TINY_SEED:-1234}" --ctx 8192
}
[ -f "$MODEL" ] || step "make tiny gguf" do_model

echo
echo "llama-cpp-python: $("$B/venv/bin/python" -c 'import llama_cpp; print(llama_cpp.__version__)')"
echo "llama.cpp (vendored): $(git -C "$LLAMA_SRC" rev-parse --short HEAD 2>/dev/null || echo unknown)"
"$CPP_BUILD/bin/llama-server" --version 2>&1 | tail -2 || true
ls -la "$MODEL"
