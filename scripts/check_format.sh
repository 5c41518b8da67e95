#!/usr/bin/env bash
# Checks that every C++ source under src/, tests/ and benchmarks/ is formatted by .clang-format
# (the style of the whole tree; Debian's clang-format 14). Exit 0: formatted;
# 1: lists the files that are not (fix: clang-format -i FILE); 77: no clang-format.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
tool=""
for c in clang-format clang-format-14; do
  if command -v "$c" >/dev/null; then tool=$c; break; fi
done
[[ -n $tool ]] || { echo "no clang-format: skipped"; exit 77; }
bad=()
while IFS= read -r -d '' f; do
  "$tool" --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done < <(find src tests benchmarks \( -name '*.cpp' -o -name '*.hpp' -o -name '*.cu' \) -print0 | sort -z)
if ((${#bad[@]})); then
  echo "not formatted by .clang-format ($tool): ${bad[*]}"
  exit 1
fi
echo "all C++ sources formatted ($tool)"
