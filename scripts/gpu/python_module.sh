#!/usr/bin/env bash
# Usage (on the GPU machine, inside a bundle made with bundle.sh --python-kit):
#   scripts/gpu/python_module.sh BUNDLE [PYTHON]
#
# Builds the Python package kmini for PYTHON (default: python3) from the bundle's
# pykit/: the CUDA build's static libraries, Kokkos' headers and nvcc_wrapper,
# pybind11's and MPI's headers. The module cannot be built on the machine that
# makes the bundle, which may have another Python than the GPU machine.
# Needs nvcc (on PATH) and the interpreter's Python.h.
# Leaves BUNDLE/pykit/python/kmini/ (the package: _kmini<EXT_SUFFIX> and its
# Python files; PYTHONPATH=BUNDLE/pykit/python); prints one line on success.
set -euo pipefail
B=$(cd "${1:?usage: python_module.sh BUNDLE [PYTHON]}" && pwd)
py=${2:-python3}
kit=$B/pykit
die() { echo "python_module.sh: $*" >&2; exit 2; }
[[ -d $kit ]] || die "$B has no pykit/ (bundle.sh --python-kit)"
command -v nvcc >/dev/null || die "nvcc not on PATH"
pyinc=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
suffix=$("$py" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
[[ -f $pyinc/Python.h ]] || die "$py has no Python.h under $pyinc (its development headers)"
# pybind11: the interpreter's own where it has one (pip's pybind11 follows numpy's
# releases), else the kit's. pybind11 before 2.12 reads numpy 2's dtype records in
# numpy 1's layout (every item size wrong): refused here with numpy 2, not built.
pybind_inc=$("$py" -c 'import pybind11; print(pybind11.get_include())' 2>/dev/null || true)
[[ -f $pybind_inc/pybind11/pybind11.h ]] || pybind_inc=$kit/include
pybind_version=$(sed -n 's/^#define PYBIND11_VERSION_\(MAJOR\|MINOR\) \([0-9]*\).*/\2/p' "$pybind_inc/pybind11/detail/common.h" | paste -sd.)
numpy_version=$("$py" -c 'import numpy; print(numpy.__version__)' 2>/dev/null) || die "$py has no numpy (the module is built against its C API)"
if [[ ${numpy_version%%.*} -ge 2 ]] && { IFS=. read -r major minor <<<"$pybind_version"; ((major * 100 + minor < 212)); }; then
  die "pybind11 $pybind_version ($pybind_inc) supports numpy 1.x only and $py has numpy $numpy_version: install pybind11 >= 2.12 for $py"
fi
echo "python_module.sh: $("$py" --version 2>&1), numpy $numpy_version, pybind11 $pybind_version ($pybind_inc)"
src=$B/kmini/src
wrapper=$kit/kokkos/bin/nvcc_wrapper
arch=$(cat "$kit/arch")
flags=(-DKOKKOS_DEPENDENCE -Dkmini_python_EXPORTS -I"$src" -I"$kit/generated" -isystem "$pyinc"
       -isystem "$pybind_inc" -isystem "$kit/include" -isystem "$kit/kokkos/include" -isystem "$kit/mpi" -isystem "$kit/mpi/openmpi"
       -O3 -DNDEBUG -fPIC -fvisibility=hidden -extended-lambda -Wext-lambda-captures-this "-arch=$arch" -std=c++17)
obj=$(mktemp -d)
trap 'rm -rf "$obj"' EXIT
# The module's files (kmini_python's sources in src/CMakeLists.txt), half the cores
# at a time (the GPU run's tests use the other half meanwhile), at least two.
jobs=$(($(nproc) / 2)); ((jobs < 2)) && jobs=2
objects=()
pids=()
for f in "$src"/python/*.cpp; do
  o=$obj/$(basename "$f" .cpp).o
  objects+=("$o")
  "$wrapper" "${flags[@]}" -c "$f" -o "$o" &
  pids+=($!)
  if (( ${#pids[@]} == jobs )); then wait "${pids[0]}" || die "compiling $f failed"; pids=("${pids[@]:1}"); fi
done
for p in "${pids[@]}"; do wait "$p" || die "compiling the module failed"; done
mkdir -p "$kit/python/kmini"
cp "$src"/python/kmini/*.py "$src"/python/kmini/*.pyi "$src"/python/kmini/py.typed "$kit/python/kmini/"
# The layers in link order (kmini_python's in src/CMakeLists.txt), then the
# shared libraries: Kokkos' from the kit, the rest from the bundle's lib/.
shopt -s nullglob
shared=("$kit"/lib/libkokkoskernels.so "$kit"/lib/libkokkoscontainers.so.* "$kit"/lib/libkokkoscore.so.*
        "$kit"/lib/libkokkossimd.so.* "$B"/lib/libyaml-cpp.so.* "$B"/lib/libmpi.so.*)
"$wrapper" -fPIC -O3 -DNDEBUG "-arch=$arch" -shared -o "$kit/python/kmini/_kmini$suffix" "${objects[@]}" \
  -Wl,-rpath,"$kit/lib:$B/lib" "$kit"/lib/libkmini_gram.a "$kit"/lib/libkmini_rk4.a "$kit"/lib/libkmini_discount.a \
  "$kit"/lib/libkmini_kernel.a \
  "$kit"/lib/libkmini_deck.a "$kit"/lib/libkmini_io.a "$kit"/lib/libkmini_core.a "${shared[@]}" -ldl
echo "python_module.sh: $kit/python/kmini/_kmini$suffix for $("$py" --version 2>&1)"
