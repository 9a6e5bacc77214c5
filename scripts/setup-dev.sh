#!/usr/bin/env bash
# Install everything the test suite needs on a fresh Debian 12 machine with Python ≥ 3.11:
# Debian packages (headless Chromium for the HTML test, poppler for the PDF test, Pango for
# WeasyPrint), a virtualenv with the package and its dev tools in .venv/, and the real
# llama.cpp engines for the recorder's real-engine tests (built once, cached outside the
# checkout in $REALENGINE_BUILD, default ~/.cache/benchreport-realengine; ~20 min cold).
set -euo pipefail
cd "$(dirname "$0")/.."

apt_packages=(chromium poppler-utils libpango-1.0-0 libpangoft2-1.0-0 fonts-dejavu-core
              cmake ninja-build curl)
missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "== apt-get install ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

PY="${PYTHON:-python3}"
[ -x .venv/bin/python ] || "$PY" -m venv .venv
echo "== pip install -e .[dev] (chart stack pinned by .ci/constraints.txt)"
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -c .ci/constraints.txt -e '.[dev]'

if [ "${SKIP_REALENGINE:-0}" != 1 ] && [ -f tests/realengine/setup.sh ]; then
  echo "== real engines (llama.cpp server, llama-cpp-python, tiny model)"
  bash tests/realengine/setup.sh
fi
