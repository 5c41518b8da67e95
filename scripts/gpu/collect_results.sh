#!/usr/bin/env bash
# Usage: scripts/gpu/collect_results.sh RESULTS_DIR DEST
# Keeps what a run_gpu.sh run says for the record: every results.json (as
# DEST/<run>.json), summary.txt, peers.json, sanitizer.log, debug.txt and
# python.txt; logs and the ctest output stay in RESULTS_DIR.
set -euo pipefail
src=${1:?usage: collect_results.sh RESULTS_DIR DEST}
dest=${2:?usage: collect_results.sh RESULTS_DIR DEST}
[[ -f $src/results.tar.gz ]] || { echo "collect_results.sh: $src has no results.tar.gz (a run_gpu.sh output folder?)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tar -C "$tmp" -xzf "$src/results.tar.gz"
mkdir -p "$dest"
for r in "$tmp"/runs/*/results.json; do
  name=$(basename "$(dirname "$r")")
  [[ $name == sanitizer_* ]] && continue  # short decks under the sanitizer: not measurements
  cp "$r" "$dest/$name.json"
done
for f in summary.txt peers.json sanitizer.log debug.txt python.txt; do
  [[ -f $src/$f ]] && cp "$src/$f" "$dest/$f"
done
ls "$dest"
