#!/usr/bin/env bash
# Set up (if needed) and run the embedded demo: no camera needed.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/tableref demo "$@"
