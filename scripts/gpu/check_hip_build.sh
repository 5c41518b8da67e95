#!/usr/bin/env bash
# Usage: scripts/gpu/check_hip_build.sh [--prefix DIR] [--build-dir DIR] [--jobs N]
#
# The HIP build, checked without an AMD GPU: configures the `hip` preset against
# the Kokkos + Kokkos Kernels with HIP at --prefix (default $Kokkos_ROOT; made by
# scripts/gpu/build_deps.sh PREFIX --backend hip --arch AMD_GFX90A|AMD_GFX942),
# compiled by the compiler that Kokkos was built with (hipcc, or Debian's clang++-19
# for gfx942), into --build-dir (default build-hip/), builds every target (kmini, every test,
# the Python module where pybind11 is found), and fails where kmini's own sources
# (src/, tests/, examples/) draw a compiler warning. Nothing is run: building is
# what this machine can check (docs/amd.md).
#
# Exit 0: built, no warning from kmini's sources; 1: the build failed or warned;
# 2: bad arguments, or --prefix is a Kokkos without HIP; 77: skipped, one line
# saying why (no Kokkos at the prefix, or not its compiler), as ctest's SKIP_RETURN_CODE.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
die() { echo "check_hip_build.sh: $*" >&2; exit 2; }
skip() { echo "check_hip_build.sh: skipped: $*"; exit 77; }

prefix=${Kokkos_ROOT:-}; bdir=$root/build-hip; jobs=$(nproc)
while [[ $# -gt 0 ]]; do
  case $1 in
    --prefix) prefix=${2?}; shift 2 ;;
    --build-dir) bdir=${2:?}; shift 2 ;;
    --jobs) jobs=${2:?}; shift 2 ;;
    *) die "unknown argument '$1' (expected --prefix, --build-dir or --jobs)" ;;
  esac
done

[[ -n $prefix ]] || skip "no HIP Kokkos given (--prefix, Kokkos_ROOT, or ctest: -DKMINI_HIP_KOKKOS_ROOT=PREFIX; scripts/gpu/build_deps.sh PREFIX --backend hip makes one)"
[[ -f $prefix/include/KokkosCore_config.h ]] || skip "no Kokkos at '$prefix' (scripts/gpu/build_deps.sh $prefix --backend hip makes one)"
grep -q '^#define KOKKOS_ENABLE_HIP$' "$prefix/include/KokkosCore_config.h" ||
  die "--prefix '$prefix': a Kokkos without HIP ($prefix/include/KokkosCore_config.h)"
arch=$(sed -n 's/^#define KOKKOS_ARCH_AMD_\(GFX[0-9A-F]*\)$/\1/p' "$prefix/include/KokkosCore_config.h" | head -1)
[[ -n $arch ]] || die "--prefix '$prefix': no KOKKOS_ARCH_AMD_GFX... in its KokkosCore_config.h"
# The compiler Kokkos was built with (its KokkosConfigCommon.cmake names it), as the
# hip preset picks it (cmake/KminiBackend.cmake); hipcc on the PATH where it names none.
compiler=$(sed -n 's/^set(Kokkos_CXX_COMPILER "\([^"]*\)")$/\1/p' "$prefix"/lib*/cmake/Kokkos/KokkosConfigCommon.cmake 2>/dev/null | head -1 || true)
[[ -n $compiler ]] || compiler=$(command -v hipcc) ||
  skip "hipcc not found (Debian: apt-get install hipcc libamdhip64-dev)"
[[ -x $compiler ]] || skip "$compiler, which Kokkos at '$prefix' was built with, not found (Debian: hipcc; for gfx942 clang-19, see docs/amd.md)"
case ${compiler##*/} in
  hipcc*) ;;
  # Debian's clang++-19 (gfx942): another ROCm's headers must not mix with the device
  # libraries that Kokkos names (--rocm-device-lib-path in its exported flags).
  clang++*) unset ROCM_PATH HIP_PATH ;;
  *) die "--prefix '$prefix': Kokkos was built with $compiler, expected hipcc or clang++" ;;
esac
# hipcc asks rocm_agent_enumerator for the GPU on every command that names none
# (links), which prints a traceback on a machine without one: name Kokkos' target.
export HCC_AMDGPU_TARGET=${arch,,}
export Kokkos_ROOT=$prefix KokkosKernels_ROOT=$prefix

mkdir -p "$bdir"
bdir=$(cd "$bdir" && pwd)
log=$bdir/check_hip_build.log
start=$SECONDS
echo "check_hip_build.sh: the hip preset against $prefix (${arch,,}, ${compiler##*/}) in $bdir"
# A fresh configuration: a cache from another prefix or compiler would be reused silently.
rm -f "$bdir/CMakeCache.txt"
(cd "$root" && cmake --preset hip -B "$bdir" >"$log" 2>&1) || { cat "$log"; echo "check_hip_build.sh: configuring failed"; exit 1; }
picked=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$bdir/CMakeCache.txt" | head -1)
[[ -n $picked && $(realpath -m "$picked") == "$(realpath -m "$compiler")" ]] ||
  { echo "check_hip_build.sh: the hip preset did not pick $compiler (CMAKE_CXX_COMPILER=$picked)"; exit 1; }
status=0
cmake --build "$bdir" -j "$jobs" >>"$log" 2>&1 || status=$?
# Warnings located in kmini's own files (paths as the compiler printed them,
# relative to the build folder or absolute); Kokkos' and the system's are not ours.
warnings=$(cd "$bdir" && { grep -E '^[^ :]+:[0-9]+:[0-9]+: warning:' "$log" || true; } | while IFS=: read -r file rest; do
  real=$(realpath -m "$file")
  case $real in
    "$bdir"/*) ;;
    "$root"/src/* | "$root"/tests/* | "$root"/examples/*) echo "${real#"$root"/}:$rest" ;;
  esac
done | sort -u)
if ((status != 0)); then
  tail -60 "$log"
  echo "check_hip_build.sh: the build failed (exit $status; whole log: $log)"
  exit 1
fi
elapsed=$((SECONDS - start))
if [[ -n $warnings ]]; then
  echo "$warnings"
  echo "check_hip_build.sh: $(wc -l <<<"$warnings") warnings from kmini's sources (above; whole log: $log)"
  exit 1
fi
echo "check_hip_build.sh: built every target for ${arch,,} with ${compiler##*/} in ${elapsed} s, no warning from kmini's sources (log: $log)"
