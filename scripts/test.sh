#!/usr/bin/env bash
# Usage: scripts/test.sh [ctest options]
# Installs what is missing, builds the `default` preset when needed and runs the
# whole test suite: unit, CLI and MPI tests (1, 2 and 4 ranks).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
kmini_setup
cd "$KMINI_ROOT/build"
exec ctest --output-on-failure -j "$(nproc)" "$@"
