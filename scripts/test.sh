#!/usr/bin/env bash
# Set up (if needed) and run the whole test suite. With TABLEREF_BROWSER=1 (CI sets it) the real-browser test's
# chromium and playwright are installed first; without them that one test skips.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
if [ "${TABLEREF_BROWSER:-0}" = "1" ]; then
  bash scripts/install-browser.sh || echo "warning: browser install failed; the browser test will skip" >&2
fi
exec .venv/bin/python -m pytest "$@"
