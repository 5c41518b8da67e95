#!/usr/bin/env bash
# No KOKKOS_LAMBDA (or KOKKOS_CLASS_LAMBDA) in a header: every kernel a header
# defines is a functor. On CUDA such a lambda in a header that two translation
# units instantiate can call address 0 (nvcc's per-unit lambda helper; see
# scripts/gpu/check_lambda_wrappers.py, which finds them in a built binary).
# Usage: check_header_lambdas.sh DIR...  Prints each use; exit 1 if any.
set -euo pipefail
(($#)) || { echo "usage: check_header_lambdas.sh DIR..."; exit 2; }
bad=0 checked=0
while IFS= read -r -d '' file; do
  checked=$((checked + 1))
  # The macro followed by its parameter list, in code: not after // on its
  # line, nor on a line of a /* */ comment (one that starts with /* or *).
  while IFS= read -r hit; do
    line=${hit#*:}
    before=${line%%KOKKOS_*LAMBDA*}
    [[ $before == *//* || $before =~ ^[[:space:]]*(/\*|\*) ]] && continue
    echo "check_header_lambdas: $file:${hit%%:*}: a KOKKOS_LAMBDA in a header: make the kernel a functor"
    bad=1
  done < <(grep -nE '\bKOKKOS_(CLASS_)?LAMBDA[[:space:]]*\(' "$file" || true)
done < <(find "$@" -name '*.hpp' -print0)
((checked > 0)) || { echo "check_header_lambdas: no headers under $*"; exit 2; }
((bad)) || echo "check_header_lambdas: $checked headers, no KOKKOS_LAMBDA"
exit $bad
