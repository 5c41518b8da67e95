#!/bin/bash
# kmini's Spack recipe installed and tested by a real Spack, offline: Spack 1.1 and
# spack/spack-packages, clingo and Kokkos from the scripts in ../shared/spack-offline/
# (beside the checkout; or KMINI_SPACK_OFFLINE=DIR), Debian's compilers, CMake, Open MPI,
# yaml-cpp, GoogleTest, Python and numpy as externals. kmini itself is built from this
# working tree as it is (copied, then `spack develop`), so any checkout works.
#
# Steps (each timed; logs in $OFF/logs-check): set up Spack if $OFF has none (02-04 of the
# offline scripts), `spack audit packages / packages-https / configs`, then for kmini,
# kmini +openmp and kmini +python: concretize, install (kmini and kmini +python with
# --test=root: the recipe's ctest subset), `spack test run kmini`, and the installed deck through `spack load` and
# `kmini --data-dir`; last `kmini +cuda cuda_arch=90` against CUDA at $KMINI_SPACK_CUDA
# (default /usr/local/cuda) as an external: concretized, and built with --cuda-build. For
# CUDA 13, which Spack's Kokkos recipe refuses for Kokkos <= 4.7.0, KMINI_SPACK_KOKKOS_CUDA
# names a Kokkos that scripts/gpu/build_deps.sh built, declared as an external.
# KMINI_SPACK_CCACHE=1 compiles through ccache (Spack's config:ccache, base directory $OFF, so
# that the variants' spack-build-* folders share objects); every step prints its wall time and
# the load average (uptime) before and after.
#
# usage: check_spack.sh [--only serial,openmp,python,cuda] [--cuda-build] [--no-test-root] [--ctest ENABLED]
#   --no-test-root   install kmini without --test=root (the unit tests' build doubles kmini's)
#   --ctest ENABLED  (project.spack_install) exit 77 unless ENABLED or $KMINI_SPACK_CHECK is 1
# Exit 0 all passed, 1 a step failed, 77 skipped (the reason printed).
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
ONLY=serial,openmp,python,cuda CUDA_BUILD=0 TEST_ROOT=--test=root
while [ $# -gt 0 ]; do
  case $1 in
    --only) ONLY=$2; shift 2 ;;
    --cuda-build) CUDA_BUILD=1; shift ;;
    --no-test-root) TEST_ROOT=; shift ;;
    --ctest)
      if [ "${2:-}" != 1 ] && [ "${KMINI_SPACK_CHECK:-}" != 1 ]; then
        echo "skipped: set KMINI_SPACK_CHECK=1 to install kmini with Spack (about an hour on 2 cores)"; exit 77
      fi
      shift 2 ;;
    *) echo "usage: $0 [--only serial,openmp,python,cuda] [--cuda-build] [--no-test-root] [--ctest ENABLED]"; exit 2 ;;
  esac
done
OFFLINE=${KMINI_SPACK_OFFLINE:-$ROOT/../shared/spack-offline}
if [ ! -f "$OFFLINE/env.sh" ]; then
  echo "skipped: no $OFFLINE/env.sh (the offline Spack scripts; set KMINI_SPACK_OFFLINE)"; exit 77
fi
# The Kokkos release the recipe is pinned to is the one the mirror gets.
KOKKOS_REF=$(sed -n 's/^TESTED_KOKKOS = "\(.*\)"/\1/p' "$ROOT/spack/spack_repo/kmini/packages/kmini/package.py")
export KOKKOS_REF
. "$OFFLINE/env.sh"
LOG=$OFF/logs-check; mkdir -p "$LOG"
failed=()
load() { cut -d' ' -f1-3 /proc/loadavg; }
step() {  # step NAME COMMAND...: run, log, print rc, wall time and the load average before/after
  local name=$1; shift; local t0=$SECONDS l0; l0=$(load)
  echo "==> $name: $*"
  "$@" > "$LOG/$name.log" 2>&1; local rc=$?
  echo "    rc=$rc wall=$((SECONDS - t0))s load=[$l0]->[$(load)] (log: $LOG/$name.log)"
  [ $rc = 0 ] || { tail -n 25 "$LOG/$name.log"; failed+=("$name"); }
  return $rc
}
want() { [[ ",$ONLY," == *",$1,"* ]]; }
CCACHE=()
if [ "${KMINI_SPACK_CCACHE:-}" = 1 ]; then CCACHE=(-c config:ccache:true); export CCACHE_BASEDIR=$OFF; fi

# --- Spack itself --------------------------------------------------------------------
if ! [ -x "$SPACK_ROOT/bin/spack" ] || ! "$SPACK_PYTHON" -c 'import clingo' 2> /dev/null; then
  step sources bash "$OFFLINE/02-sources.sh" || exit 1
  step clingo bash "$OFFLINE/03-clingo.sh" || exit 1
fi
if ! [ -f "$SPACK_ROOT/etc/spack/site/packages.yaml" ]; then
  # 04 adds a clone of $GITS/kmini.git as the kmini repository; replaced below by this checkout's.
  gits=$(mktemp -d); for g in "$GITS"/*; do ln -s "$g" "$gits/"; done; ln -sfn "$ROOT" "$gits/kmini.git"
  GITS=$gits step configure bash "$OFFLINE/04-configure.sh" || exit 1
fi
site=$SPACK_ROOT/etc/spack/site
if ! grep -q '^  python:' "$site/packages.yaml"; then
  cuda_prefix=${KMINI_SPACK_CUDA:-/usr/local/cuda}
  cuda_version=$("$cuda_prefix/bin/nvcc" --version 2> /dev/null | sed -n 's/.*release [0-9.]*, V\([0-9.]*\).*/\1/p')
  py=$(/usr/bin/python3 -c 'import platform; print(platform.python_version())')
  np=$(/usr/bin/python3 -c 'import numpy; print(numpy.__version__)')
  pb=$(/usr/bin/python3 -c 'import pybind11; print(pybind11.__version__)' 2> /dev/null \
       || sed -n 's/.*PYBIND11_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\).*/\2/p' /usr/include/pybind11/detail/common.h \
       | paste -sd.)
  cat >> "$site/packages.yaml" <<YAML
  # Debian's Python stack (kmini +python): python3, python3-numpy, pybind11-dev.
  python:
    externals:
    - spec: python@$py
      prefix: /usr
    buildable: false
  py-numpy:
    externals:
    - spec: py-numpy@$np
      prefix: /usr
    buildable: false
  py-pybind11:
    externals:
    - spec: py-pybind11@$pb
      prefix: /usr
    buildable: false
YAML
  [ -n "$cuda_version" ] && cat >> "$site/packages.yaml" <<YAML
  cuda:
    externals:
    - spec: cuda@$cuda_version
      prefix: $cuda_prefix
    buildable: false
  kokkos-nvcc-wrapper:
    require: '@$KOKKOS_REF'
YAML
fi
# `spack external find openmpi` (04) can miss Debian's Open MPI; then Spack would build its own.
if ! grep -q '^  openmpi:' "$site/packages.yaml" && command -v ompi_info > /dev/null; then
  ompi=$(ompi_info --version | sed -n 's/^Open MPI v\([0-9.]*\).*/\1/p')
  printf "  openmpi:\n    externals:\n    - spec: openmpi@%s\n      prefix: %s\n    buildable: false\n" \
    "$ompi" "$(dirname "$(dirname "$(command -v ompi_info)")")" >> "$site/packages.yaml"
fi
spack repo remove --scope site kmini > /dev/null 2>&1
spack repo add --scope site "$ROOT/spack/spack_repo/kmini" > /dev/null || exit 1
# The nvcc wrapper's recipe pins the Kokkos release tarball's sha256 too: the same git archive.
sha=$(spack python -c "import spack.repo, spack.version as v; print(spack.repo.PATH.get_pkg_class(\
'kokkos-nvcc-wrapper').versions[v.Version('$KOKKOS_REF')]['sha256'])")
mkdir -p "$OFF/mirror/_source-cache/archive/${sha:0:2}"
ln -sfn "$OFF/mirror/kokkos/kokkos-$KOKKOS_REF.tar.gz" "$OFF/mirror/_source-cache/archive/${sha:0:2}/$sha.tar.gz"

step audit-packages spack audit packages kmini
step audit-packages-https spack audit packages-https kmini
step audit-configs spack audit configs

# --- kmini from this working tree -------------------------------------------------------
# A copy of the tracked and untracked-but-not-ignored files: Spack's develop build writes
# spack-build-* into the source, and the checkout may be on any branch or commit.
SRC=$OFF/kmini-src; rm -rf "$SRC"; mkdir -p "$SRC"
(cd "$ROOT" && git ls-files -co --exclude-standard -z | xargs -0 tar -cf - 2> /dev/null) | tar -xf - -C "$SRC"

check_variant() {  # NAME SPEC [install flags]: concretize, install, spack test run, the deck after spack load
  local name=$1 spec=$2; shift 2
  local env=$OFF/check-envs/$name; rm -rf "$env"; mkdir -p "$env"
  cat > "$env/spack.yaml" <<YAML
spack:
  specs: ['$spec']
  develop:
    kmini: {spec: kmini@=develop, path: $SRC}
  view: false
  concretizer: {unify: true}
YAML
  # --test=root at install needs the test dependencies (googletest) in the concretized spec.
  local tests=(); [[ " $* " == *" --test=root "* ]] && tests=(--test=root)
  step "$name-concretize" nice -n 10 spack -e "$env" concretize -f "${tests[@]}" || return
  grep -E '[ ^](kmini|kokkos|kokkos-kernels|openmpi|python)@' "$LOG/$name-concretize.log" | sed 's/^/    /' | cut -c1-160
  step "$name-install" nice -n 10 spack "${CCACHE[@]}" -e "$env" install --no-checksum --show-log-on-error "$@" || return
  local suite="check-$name-$(date +%Y%m%d-%H%M%S)"
  step "$name-test-run" spack -e "$env" test run --alias "$suite" kmini
  spack -e "$env" test results -l "$suite" > "$LOG/$name-test-results.log" 2>&1
  grep -E 'PASSED|FAILED|SKIPPED' "$LOG/$name-test-results.log" | sed 's/^/    /' | head -8
  step "$name-load-and-run" run_loaded "$env"
  grep -E '^(kmini [0-9]|data-dir )' "$LOG/$name-load-and-run.log" | sed 's/^/    /'
}
run_loaded() {  # ENV: after spack load, the installed deck named through kmini --data-dir verifies (run in ENV)
  ( eval "$(spack -e "$1" load --sh kmini)" && kmini --version && d=$(kmini --data-dir) && echo "data-dir $d" &&
    cd "$1" && kmini "$d/inputs/bench/stream.yaml" --set stream.n=100000 --out out &&
    python3 -c 'import json; k = json.load(open("out/results.json"))["kernels"]
assert k and all(v["verified"] is True for v in k.values()), k' )
}
want serial && check_variant serial "kmini" $TEST_ROOT
want openmp && check_variant openmp "kmini +openmp"
want python && check_variant python "kmini +python" $TEST_ROOT
if want cuda; then
  # Spack's Kokkos recipe refuses CUDA 13 for Kokkos <= 4.7.0 (conflicts("^cuda@13:")). With
  # KMINI_SPACK_KOKKOS_CUDA=PREFIX (a Kokkos + Kokkos Kernels that scripts/gpu/build_deps.sh
  # built for HOPPER90, patched for CUDA 13) they are declared as externals of this environment.
  env=$OFF/check-envs/cuda; rm -rf "$env"; mkdir -p "$env"
  printf "spack:\n  specs: ['kmini +cuda cuda_arch=90']\n  develop:\n    kmini: {spec: kmini@=develop, path: %s}\n  view: false\n" \
    "$SRC" > "$env/spack.yaml"
  kc=${KMINI_SPACK_KOKKOS_CUDA:-}
  if [ -n "$kc" ]; then
    kv=$(sed -n 's/.*PACKAGE_VERSION "\([0-9]*\)\.\([0-9]*\)\.\([0-9]*\)".*/\1 \2 \3/p' \
         "$kc"/lib*/cmake/Kokkos/KokkosConfigVersion.cmake 2> /dev/null | head -1)
    [ -n "$kv" ] || { echo "KMINI_SPACK_KOKKOS_CUDA=$kc: no lib/cmake/Kokkos/KokkosConfigVersion.cmake"; exit 1; }
    kv=$(printf '%d.%d.%02d' $kv)
    cat >> "$env/spack.yaml" <<YAML
  packages:
    kokkos:
      externals:
      - spec: kokkos@$kv +cuda +wrapper +cuda_lambda +serial +shared +pic cuda_arch=90 cxxstd=17
        prefix: $kc
      buildable: false
    kokkos-kernels:
      externals:
      - spec: kokkos-kernels@$kv +cuda +shared cuda_arch=90
        prefix: $kc
      buildable: false
YAML
  fi
  cuda_major=$("${KMINI_SPACK_CUDA:-/usr/local/cuda}/bin/nvcc" --version 2> /dev/null | sed -n 's/.*release \([0-9]*\)\..*/\1/p')
  if [ -z "$kc" ] && [ "${cuda_major:-0}" -ge 13 ]; then
    echo "==> cuda: skipped: CUDA $cuda_major, which Spack's Kokkos recipe refuses for Kokkos <= 4.7.0;" \
         "set KMINI_SPACK_KOKKOS_CUDA to a Kokkos built by scripts/gpu/build_deps.sh"
  elif step cuda-concretize nice -n 10 spack -e "$env" concretize -f; then
    grep -E '[ ^](kmini|kokkos|kokkos-kernels|kokkos-nvcc-wrapper|cuda)@' "$LOG/cuda-concretize.log" | cut -c1-160
    [ "$CUDA_BUILD" = 1 ] && step cuda-install nice -n 10 spack "${CCACHE[@]}" -e "$env" install --no-checksum --show-log-on-error
  else
    grep -iE 'conflict|cuda@' "$LOG/cuda-concretize.log" | head -5
  fi
fi
if [ ${#failed[@]} -gt 0 ]; then echo "FAILED: ${failed[*]}"; exit 1; fi
echo "all Spack checks passed"
