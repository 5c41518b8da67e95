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
src=$B/kmini/src
wrapper=$kit/kokkos/bin/nvcc_wrapper
arch=$(cat "$kit/arch")
flags=(-DKOKKOS_DEPENDENCE -Dkmini_python_EXPORTS -I"$src" -I"$kit/generated" -isystem "$pyinc"
       -isystem "$kit/include" -isystem "$kit/kokkos/include" -isystem "$kit/mpi" -isystem "$kit/mpi/openmpi"
       -O3 -DNDEBUG -fPIC -fvisibility=hidden -extended-lambda -Wext-lambda-captures-this "-arch=$arch" -std=c++17)
obj=$(mktemp -d)
trap 'rm -rf "$obj"' EXIT
# The module's files (kmini_python's sources in src/CMakeLists.txt), two at a time.
objects=()
pids=()
for f in "$src"/python/*.cpp; do
  o=$obj/$(basename "$f" .cpp).o
  objects+=("$o")
  "$wrapper" "${flags[@]}" -c "$f" -o "$o" &
  pids+=($!)
  if (( ${#pids[@]} == 2 )); then wait "${pids[0]}" || die "compiling $f failed"; pids=("${pids[1]}"); fi
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
