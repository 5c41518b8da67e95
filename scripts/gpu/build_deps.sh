#!/usr/bin/env bash
# Usage: scripts/gpu/build_deps.sh PREFIX --kokkos DIR --kokkos-kernels DIR
#                                  [--arch HOPPER90|AMD_GFX90A|...] [--backend cuda|hip|openmp] [--jobs N]
#
# Builds Kokkos (CUDA + Serial host, HIP + Serial, or OpenMP + Serial) and Kokkos
# Kernels (BLAS component, the scalar/ordinal/layout types kmini uses) from source
# folders into PREFIX: for a GPU machine without Spack (and for cluster users in the
# same place). Shared libraries, position-independent, so that the Python module links.
#
# --backend hip compiles with hipcc (Debian: hipcc and libamdhip64-dev, installed
# through scripts/setup.sh when missing) for one AMD GPU, --arch AMD_GFX90A (MI250X,
# the default for hip) or AMD_GFX942 (MI300A/X); without rocThrust (Debian has none)
# and without the ROCm TPLs of Kokkos Kernels (rocBLAS, rocSPARSE, rocSOLVER). See
# docs/amd.md.
#
# A Kokkos source older than CUDA 13 does not compile against it: two runtime calls
# changed signature (cudaGraphAddDependencies gained an edge-data argument,
# cudaMemPrefetchAsync takes a cudaMemLocation and flags) and nvcc_wrapper defaults
# to sm_70. The script then patches a COPY of the source (PREFIX/src/kokkos), never the
# folder given, with guards on CUDART_VERSION so the copy still builds with CUDA 12.
# Re-running is idempotent: patched lines are recognised and left alone.
set -euo pipefail

die() { echo "build_deps.sh: $*" >&2; exit 2; }
[[ $# -ge 1 && $1 != -* ]] || die "usage: build_deps.sh PREFIX --kokkos DIR --kokkos-kernels DIR [--arch HOPPER90|AMD_GFX90A|...] [--backend cuda|hip|openmp] [--jobs N]"
prefix=$1; shift
kokkos_src=""; kk_src=""; arch=""; backend=cuda; jobs=$(nproc)
while [[ $# -gt 0 ]]; do
  case $1 in
    --kokkos) kokkos_src=${2:?}; shift 2 ;;
    --kokkos-kernels) kk_src=${2:?}; shift 2 ;;
    --arch) arch=${2:?}; shift 2 ;;
    --backend) backend=${2:?}; shift 2 ;;
    --jobs) jobs=${2:?}; shift 2 ;;
    *) die "unknown argument '$1' (expected --kokkos, --kokkos-kernels, --arch, --backend or --jobs)" ;;
  esac
done
[[ -f $kokkos_src/CMakeLists.txt && -d $kokkos_src/core ]] || die "--kokkos '$kokkos_src': expected a Kokkos source folder (CMakeLists.txt and core/)"
[[ -f $kk_src/CMakeLists.txt && -d $kk_src/blas ]] || die "--kokkos-kernels '$kk_src': expected a Kokkos Kernels source folder (CMakeLists.txt and blas/)"
[[ $backend == cuda || $backend == hip || $backend == openmp ]] || die "--backend '$backend': expected cuda, hip or openmp"
if [[ $backend == hip ]]; then
  arch=${arch:-AMD_GFX90A}
  [[ $arch =~ ^AMD_GFX[0-9A-F]+$ ]] || die "--arch '$arch': expected a Kokkos_ARCH_ suffix of an AMD GPU such as AMD_GFX90A (MI250X) or AMD_GFX942 (MI300A/X)"
else
  arch=${arch:-HOPPER90}
  [[ $arch =~ ^[A-Z0-9_]+$ && $arch != AMD_* ]] || die "--arch '$arch': expected a Kokkos_ARCH_ suffix such as HOPPER90, AMPERE80, VOLTA70"
fi
command -v cmake >/dev/null || die "cmake not found"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)

mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)
kokkos_src=$(cd "$kokkos_src" && pwd)
kk_src=$(cd "$kk_src" && pwd)

# --- The CUDA 13 fixes, on a copy of Kokkos --------------------------------------
# sm_NN for nvcc_wrapper's default, from the Kokkos_ARCH_ name's trailing digits.
sm="sm_${arch//[!0-9]/}"
# patch_once FILE LINE PERL WHAT: the substitution PERL where FILE has LINE
# (a line of the unpatched source). Each substitution keeps the old call after
# an #else, and matches only where the line does not follow one, so a second
# run changes nothing.
patch_once() {
  grep -q -- "$2" "$1" || return 0
  local before
  before=$(md5sum <"$1")
  perl -0pi -e "$3" "$1"
  [[ $(md5sum <"$1") == "$before" ]] || echo "build_deps.sh: patched $4 for CUDA 13 in the copy $1"
}

fix_kokkos_copy() {
  local copy=$prefix/src/kokkos
  mkdir -p "$prefix/src"
  if [[ ! -f $copy/.kmini-source ]] || [[ $(cat "$copy/.kmini-source") != "$kokkos_src" ]]; then
    rm -rf "$copy"
    cp -a "$kokkos_src" "$copy"
    echo "$kokkos_src" >"$copy/.kmini-source"
  fi
  local inst=$copy/core/src/Cuda/Kokkos_Cuda_Instance.hpp
  # The develop snapshot's forms, then the 4.5/4.6 releases' (the stream
  # through get_input_stream, and cudaMemAdvise, which CUDA 13 also moved to a
  # cudaMemLocation).
  if [[ -f $inst ]]; then
    patch_once "$inst" 'return cudaGraphAddDependencies(graph, from, to, numDependencies);' \
      's/(?<!#else\n)    return cudaGraphAddDependencies\(graph, from, to, numDependencies\);/#if CUDART_VERSION >= 13000 \/\/ kmini build_deps: CUDA 13 added edge data\n    return cudaGraphAddDependencies(graph, from, to, nullptr, numDependencies);\n#else\n    return cudaGraphAddDependencies(graph, from, to, numDependencies);\n#endif/' \
      'cudaGraphAddDependencies'
    patch_once "$inst" 'return cudaMemPrefetchAsync(devPtr, count, dstDevice, m_stream);' \
      's/(?<!#else\n)    return cudaMemPrefetchAsync\(devPtr, count, dstDevice, m_stream\);/#if CUDART_VERSION >= 13000 \/\/ kmini build_deps: CUDA 13 takes a cudaMemLocation and flags\n    cudaMemLocation location{};\n    location.type = cudaMemLocationTypeDevice;\n    location.id   = dstDevice;\n    return cudaMemPrefetchAsync(devPtr, count, location, 0, m_stream);\n#else\n    return cudaMemPrefetchAsync(devPtr, count, dstDevice, m_stream);\n#endif/' \
      'cudaMemPrefetchAsync'
    patch_once "$inst" '^    return cudaMemAdvise(devPtr, count, advice, device);' \
      's/(?<!#else\n)    return cudaMemAdvise\(devPtr, count, advice, device\);/#if CUDART_VERSION >= 13000 \/\/ kmini build_deps: CUDA 13 takes a cudaMemLocation\n    cudaMemLocation location{};\n    location.type = cudaMemLocationTypeDevice;\n    location.id   = device;\n    return cudaMemAdvise(devPtr, count, advice, location);\n#else\n    return cudaMemAdvise(devPtr, count, advice, device);\n#endif/' \
      'cudaMemAdvise'
    patch_once "$inst" '^    return cudaMemPrefetchAsync(devPtr, count, dstDevice,$' \
      's/(?<!#else\n)    return cudaMemPrefetchAsync\(devPtr, count, dstDevice,\n\s*get_input_stream\(stream\)\);/#if CUDART_VERSION >= 13000 \/\/ kmini build_deps: CUDA 13 takes a cudaMemLocation and flags\n    cudaMemLocation location{};\n    location.type = cudaMemLocationTypeDevice;\n    location.id   = dstDevice;\n    return cudaMemPrefetchAsync(devPtr, count, location, 0,\n                                get_input_stream(stream));\n#else\n    return cudaMemPrefetchAsync(devPtr, count, dstDevice,\n                                get_input_stream(stream));\n#endif/' \
      'cudaMemPrefetchAsync (stream form)'
  fi
  local wrapper=$copy/bin/nvcc_wrapper
  if [[ -f $wrapper ]] && grep -q '^default_arch="sm_70"' "$wrapper"; then
    sed -i "s/^default_arch=\"sm_70\"/default_arch=\"$sm\" # kmini build_deps: was sm_70/" "$wrapper"
    echo "build_deps.sh: nvcc_wrapper's default architecture sm_70 -> $sm in the copy"
  fi
  kokkos_src=$copy
}

kokkos_opts=(-DKokkos_ENABLE_SERIAL=ON -DKokkos_ENABLE_TESTS=OFF -DKokkos_ENABLE_EXAMPLES=OFF
             -DCMAKE_CXX_STANDARD=17 -DBUILD_SHARED_LIBS=ON -DCMAKE_POSITION_INDEPENDENT_CODE=ON)
if [[ $backend == cuda ]]; then
  command -v nvcc >/dev/null || die "--backend cuda: nvcc not found on PATH"
  fix_kokkos_copy
  kokkos_opts+=(-DKokkos_ENABLE_CUDA=ON -DKokkos_ENABLE_CUDA_LAMBDA=ON -DKokkos_ARCH_${arch}=ON
                -DCMAKE_CXX_COMPILER="$kokkos_src/bin/nvcc_wrapper")
elif [[ $backend == hip ]]; then
  if ! command -v hipcc >/dev/null; then
    # shellcheck source=../setup.sh
    source "$(dirname "${BASH_SOURCE[0]}")/../setup.sh"
    kmini_install_packages "${KMINI_HIP_APT_PACKAGES[@]}" || die "--backend hip: hipcc missing and not installed (Debian: hipcc libamdhip64-dev)"
  fi
  hipcc=$(command -v hipcc) || die "--backend hip: hipcc not found on PATH"
  # hipcc asks rocm_agent_enumerator for the GPU whenever a command names none
  # (CMake's compiler checks, links), which prints a traceback where there is no GPU.
  gfx=${arch#AMD_}
  gfx=${gfx,,}
  export HCC_AMDGPU_TARGET=${HCC_AMDGPU_TARGET:-$gfx}
  # An older hipcc rejects a newer GPU at the first compile (Debian's HIP 5.2,
  # clang 15, knows gfx90a and gfx940 but not gfx942): say so before Kokkos builds.
  probe=$(mktemp -d)
  echo 'int main() { return 0; }' >"$probe/probe.cpp"
  if ! (cd "$probe" && hipcc --offload-arch="$gfx" -c probe.cpp -o probe.o >probe.log 2>&1); then
    reason=$(grep -m1 -i 'error' "$probe/probe.log" || true)
    rm -rf "$probe"
    die "--arch $arch: this hipcc ($(hipcc --version 2>/dev/null | sed -n 's/^HIP version: //p' | head -1)) cannot compile for $gfx${reason:+ ($reason)}: MI300 (gfx942) needs ROCm 6's compiler, see docs/amd.md"
  fi
  rm -rf "$probe"
  # rocThrust only speeds up Kokkos' sort; Debian ships none.
  kokkos_opts+=(-DKokkos_ENABLE_HIP=ON -DKokkos_ARCH_${arch}=ON -DKokkos_ENABLE_ROCTHRUST=OFF
                -DCMAKE_CXX_COMPILER="$hipcc")
else
  kokkos_opts+=(-DKokkos_ENABLE_OPENMP=ON -DKokkos_ARCH_NATIVE=OFF)
fi

build=$prefix/build
mkdir -p "$build"
echo "build_deps.sh: Kokkos ($backend + Serial) from $kokkos_src into $prefix"
cmake -S "$kokkos_src" -B "$build/kokkos" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_INSTALL_PREFIX="$prefix" "${kokkos_opts[@]}"
cmake --build "$build/kokkos" -j "$jobs"
cmake --install "$build/kokkos"

# Kokkos Kernels: BLAS component only, without its default explicit instantiations
# (ETI): kmini's one call site (gram_gemm.cpp: gemm of float and double Views)
# instantiates what it uses, and the library builds in about a minute instead of
# 10-30 on two cores. No TPLs (cuBLAS, rocBLAS, host BLAS) so the bundle carries no BLAS.
echo "build_deps.sh: Kokkos Kernels (BLAS) from $kk_src into $prefix"
kk_cxx=()
[[ $backend == cuda ]] && kk_cxx=(-DCMAKE_CXX_COMPILER="$prefix/bin/nvcc_wrapper")
[[ $backend == hip ]] && kk_cxx=(-DCMAKE_CXX_COMPILER="$hipcc" -DKokkosKernels_ENABLE_TPL_ROCBLAS=OFF
                                 -DKokkosKernels_ENABLE_TPL_ROCSPARSE=OFF -DKokkosKernels_ENABLE_TPL_ROCSOLVER=OFF)
cmake -S "$kk_src" -B "$build/kokkos-kernels" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_INSTALL_PREFIX="$prefix" -DKokkos_ROOT="$prefix" "${kk_cxx[@]}" \
  -DBUILD_SHARED_LIBS=ON -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DKokkosKernels_ENABLE_COMPONENT_BLAS=ON \
  -DKokkosKernels_ENABLE_ALL_COMPONENTS=OFF \
  -DKokkosKernels_ADD_DEFAULT_ETI=OFF \
  -DKokkosKernels_ENABLE_TESTS=OFF -DKokkosKernels_ENABLE_EXAMPLES=OFF \
  -DKokkosKernels_ENABLE_PERFTESTS=OFF -DKokkosKernels_ENABLE_TPL_BLAS=OFF \
  -DKokkosKernels_ENABLE_TPL_CUBLAS=OFF -DKokkosKernels_ENABLE_TPL_CUSPARSE=OFF \
  -DKokkosKernels_ENABLE_TPL_CUSOLVER=OFF -DKokkosKernels_ENABLE_TPL_LAPACK=OFF
cmake --build "$build/kokkos-kernels" -j "$jobs"
cmake --install "$build/kokkos-kernels"
echo "build_deps.sh: done. Kokkos_ROOT=$prefix KokkosKernels_ROOT=$prefix"
