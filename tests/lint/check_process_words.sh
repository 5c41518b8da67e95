#!/usr/bin/env bash
# The product speaks only of itself: no issue numbers in tracked files, except
# the measurement records as they came back (docs/results/) and the changelog.
# Usage: check_process_words.sh SOURCE_DIR
set -uo pipefail
root=${1:?usage: check_process_words.sh SOURCE_DIR}
if ! git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "not a git checkout: skipped"
  exit 77
fi
# Built from pieces so that this file does not match itself.
pattern='issue'' [0-9]'
hits=$(git -C "$root" grep -n -I -i -E "$pattern" -- . ':!docs/results/' ':!CHANGELOG.md')
if [[ -n "$hits" ]]; then
  echo "$hits"
  echo "check_process_words: $(wc -l <<<"$hits") line(s) name an issue number; say what the code does and why instead"
  exit 1
fi
echo "check_process_words: no issue numbers in tracked files"
