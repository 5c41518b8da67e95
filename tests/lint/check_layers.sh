#!/usr/bin/env bash
# The layers of src/: a file may include only from its own layer and
# the layers below it, and a kernel never from another kernel:
#   core <- io <- deck <- kernel <- {stream, rk4, discount, gram} <- results <- {driver, python}
# The CMake libraries (src/CMakeLists.txt) enforce the same at link time; this
# catches a header-only include that the linker cannot see.
# Usage: check_layers.sh SRC_DIR. Prints every offending include; exit 1 if any.
set -euo pipefail
src="${1:?usage: check_layers.sh SRC_DIR}"
declare -A allowed=(
  [core]="core"
  [io]="core io"
  [deck]="core io deck"
  [kernel]="core io deck kernel"
  [stream]="core io deck kernel stream"
  [rk4]="core io deck kernel rk4"
  [discount]="core io deck kernel discount"
  [gram]="core io deck kernel gram"
  [results]="core io deck kernel results"
  [driver]="core io deck kernel stream rk4 discount gram results driver"
  [python]="core io deck kernel stream rk4 discount gram results python"
)
# Front ends call the kernels' light public headers, never their device code.
front_ends=" driver python "
bad=0
checked=0
for dir in "$src"/*/; do
  layer=$(basename "$dir")
  if [[ -z "${allowed[$layer]+x}" ]]; then
    echo "check_layers: src/$layer/ is in no layer (add it to tests/lint/check_layers.sh and src/CMakeLists.txt)"
    bad=1
    continue
  fi
  while IFS= read -r -d '' file; do
    checked=$((checked + 1))
    while IFS= read -r target; do
      [[ " ${allowed[$layer]} " == *" $target "* ]] && continue
      echo "check_layers: ${file#"$src"/} includes $target/ (layer $layer may include only: ${allowed[$layer]})"
      bad=1
    done < <(sed -n 's|^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([A-Za-z0-9_]*\)/.*|\1|p' "$file" | sort -u)
    if [[ "$front_ends" == *" $layer "* ]]; then
      while IFS= read -r inc; do
        echo "check_layers: ${file#"$src"/} includes $inc (a front end includes no kernel's impl/ headers)"
        bad=1
      done < <(sed -n 's|^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([A-Za-z0-9_]*/impl/[^"]*\)".*|\1|p' "$file")
    fi
  done < <(find "$dir" -type f \( -name '*.hpp' -o -name '*.cpp' \) -print0)
done
echo "check_layers: $checked files checked"
exit "$bad"
