#!/usr/bin/env bash
# Install what the real-browser test of the umpire page needs: Debian's chromium (+ driver) and Playwright's
# Python package, which drives that chromium via executable_path. No browser download (no `playwright install`).
# Safe to run again. Needs root (or sudo) for apt-get.
set -euo pipefail
cd "$(dirname "$0")/.."
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
if [ ! -x /usr/bin/chromium ]; then
  $SUDO apt-get update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends chromium chromium-driver
fi
if [ -x .venv/bin/python ]; then PY=.venv/bin/python; else PY=${PYTHON:-python3}; fi
"$PY" -m pip install --quiet "playwright>=1.40"
/usr/bin/chromium --version
"$PY" -c "from importlib.metadata import version; print('playwright', version('playwright'))"
