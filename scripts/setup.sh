#!/usr/bin/env bash
# Shared set-up for scripts/run.sh and scripts/test.sh (source it, don't run it):
#  1. installs what kmini needs from Debian/Ubuntu packages when missing (idempotent;
#     sudo when not root);
#  2. configures and builds the `default` CMake preset when needed (build/).
# On a cluster, use Spack instead (see docs/install.md: spack env activate . && spack install).

KMINI_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

KMINI_APT_PACKAGES=(
  cmake ninja-build g++ pkg-config
  libtrilinos-kokkos-dev libtrilinos-kokkos-kernels-dev libblas-dev liblapack-dev
  libopenmpi-dev openmpi-bin
  libyaml-cpp-dev libgtest-dev
  python3-numpy python3-matplotlib python3-yaml
  python3-dev pybind11-dev python3-pytest python3-numba
  python3-pip python3-venv python3-mpi4py mypy
  clang-format ccache
)
# The HIP build (scripts/gpu/build_deps.sh --backend hip, docs/amd.md): Debian's ROCm
# compiler and runtime headers; installed only when asked for that backend.
KMINI_HIP_APT_PACKAGES=(hipcc libamdhip64-dev)
# gfx942 (MI300), which Debian's hipcc (clang 15) rejects: Debian's clang 19 with the same
# HIP headers and device libraries; installed only when that GPU is asked for.
KMINI_HIP_CLANG_APT_PACKAGES=(clang-19 lld-19 clang-tools-19 libclang-rt-19-dev hipcc libamdhip64-dev rocm-device-libs)

kmini_log() { echo "[kmini] $*" >&2; }

# ccache (when the build uses it) sees paths below the checkout as relative ones, so
# a second build directory beside build/ (the pip test's) reuses build/'s objects.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$KMINI_ROOT}"

# Thread placement for Kokkos' OpenMP backend (the openmp preset), which otherwise prints
# a four-line OMP_PROC_BIND warning on every run: threads spread over the cores, one per
# hardware thread. Only where the caller set nothing (a value of your own always wins).
export OMP_PROC_BIND="${OMP_PROC_BIND:-spread}" OMP_PLACES="${OMP_PLACES:-threads}"

kmini_install_packages() {  # [PACKAGE...]: these instead of KMINI_APT_PACKAGES
  local wanted=("$@") missing=() p
  ((${#wanted[@]})) || wanted=("${KMINI_APT_PACKAGES[@]}")
  for p in "${wanted[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]} == 0)) && return 0
  if ! command -v apt-get >/dev/null; then
    kmini_log "missing packages (${missing[*]}) and no apt-get: install them, or use the Spack environment (docs/install.md)"
    return 1
  fi
  local sudo=()
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || { kmini_log "need root or sudo to install: ${missing[*]}"; return 1; }
    sudo=(sudo)
  fi
  kmini_log "installing: ${missing[*]}"
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

kmini_build() (
  # A subshell: the caller's working directory (relative deck paths, --out) is kept.
  cd "$KMINI_ROOT" || exit 1
  if [[ ! -f build/CMakeCache.txt ]]; then
    kmini_log "configuring (cmake --preset default)"
    local launcher=()
    command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
    cmake --preset default "${launcher[@]}" >/dev/null || exit 1
  fi
  kmini_log "building (cmake --build --preset default)"
  cmake --build --preset default
)

kmini_setup() {
  kmini_install_packages && kmini_build
}
