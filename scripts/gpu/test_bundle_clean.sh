#!/usr/bin/env bash
# Usage: scripts/gpu/test_bundle_clean.sh BUNDLE ROOTFS [run_gpu.sh options]
#
# Runs a bundle (scripts/gpu/bundle.sh) where nothing of the build machine is:
# a copy of BUNDLE inside ROOTFS, a minimal Debian made by
#   debootstrap --variant=minbase --include=cmake,python3-minimal,python3-numpy bookworm ROOTFS
# (CMake and a python3 with numpy, as on the GPU machine; no compiler, MPI, yaml-cpp,
# GoogleTest, Kokkos or PyYAML), entered with chroot and an empty environment
# (env -i). Needs root (chroot, mounts). Results land in ROOTFS/results.
set -euo pipefail
bundle=${1:?usage: test_bundle_clean.sh BUNDLE ROOTFS [run_gpu.sh options]}
rootfs=${2:?usage: test_bundle_clean.sh BUNDLE ROOTFS [run_gpu.sh options]}
shift 2
[[ -x $bundle/run_gpu.sh ]] || { echo "test_bundle_clean.sh: $bundle is no bundle (no run_gpu.sh)" >&2; exit 2; }
[[ -x $rootfs/usr/bin/cmake ]] || { echo "test_bundle_clean.sh: $rootfs has no cmake (see the usage above)" >&2; exit 2; }
# The bundle's own folder name must not matter: another one.
rm -rf "$rootfs/opt/kmini-bundle" "$rootfs/results"
mkdir -p "$rootfs/opt"
cp -a "$bundle" "$rootfs/opt/kmini-bundle"
mounted=()
cleanup() { for m in "${mounted[@]}"; do umount -l "$m" 2>/dev/null || true; done; }
trap cleanup EXIT
for m in proc sys dev dev/shm; do
  mkdir -p "$rootfs/$m"
  case $m in
    proc) mount -t proc proc "$rootfs/proc" ;;
    dev/shm) mount -t tmpfs tmpfs "$rootfs/dev/shm" ;;
    *) mount --rbind "/$m" "$rootfs/$m" ;;
  esac
  mounted=("$rootfs/$m" "${mounted[@]}")
done
chroot "$rootfs" /usr/bin/env -i PATH=/usr/bin:/bin HOME=/root TMPDIR=/tmp \
  KMINI_CTEST_TIMEOUT="${KMINI_CTEST_TIMEOUT:-1500}" \
  /bin/bash /opt/kmini-bundle/run_gpu.sh /results "$@"
