#!/usr/bin/env bash
# Usage: scripts/bench.sh [bench.py options]
# Builds kmini like scripts/run.sh, then runs the benchmark suite (scripts/bench.py).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
kmini_setup
exec /usr/bin/python3 "$KMINI_ROOT/scripts/bench.py" "$@"
