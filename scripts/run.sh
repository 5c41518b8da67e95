#!/usr/bin/env bash
# Usage: scripts/run.sh [DECK.yaml] [kmini options]
# Installs what is missing, builds the `default` preset when needed and runs kmini
# (the built-in default deck when no deck is given).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
kmini_setup
exec "$KMINI_ROOT/build/bin/kmini" "$@"
