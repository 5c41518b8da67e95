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
# and without the ROCm TPLs of Kokkos Kernels (rocBLAS, rocSPARSE, rocSOLVER). Where
# that hipcc cannot compile gfx942 (Debian's HIP 5.2, clang 15), --arch AMD_GFX942
# compiles with Debian's clang++-19 against the same HIP headers and device
# libraries, code object v4 (a device-library folder PREFIX/amdgcn/bitcode with
# the gfx942 ISA file Debian lacks), from a copy of Kokkos (PREFIX/src/kokkos) whose
# HIP scan does not call HIP 5.2's atomicInc. See docs/amd.md.
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

# --- The CUDA 13 and clang 19 fixes, on a copy of Kokkos ------------------------
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
  [[ $(md5sum <"$1") == "$before" ]] || echo "build_deps.sh: patched $4 in the copy $1"
}

# copy_kokkos: PREFIX/src/kokkos, a copy of the source given (made once per source).
copy_kokkos() {
  copy=$prefix/src/kokkos
  mkdir -p "$prefix/src"
  if [[ ! -f $copy/.kmini-source ]] || [[ $(cat "$copy/.kmini-source") != "$kokkos_src" ]]; then
    rm -rf "$copy"
    cp -a "$kokkos_src" "$copy"
    echo "$kokkos_src" >"$copy/.kmini-source"
  fi
}

fix_kokkos_copy() {
  local copy
  copy_kokkos
  local inst=$copy/core/src/Cuda/Kokkos_Cuda_Instance.hpp
  # The develop snapshot's forms, then the 4.5/4.6 releases' (the stream
  # through get_input_stream, and cudaMemAdvise, which CUDA 13 also moved to a
  # cudaMemLocation).
  if [[ -f $inst ]]; then
    patch_once "$inst" 'return cudaGraphAddDependencies(graph, from, to, numDependencies);' \
      's/(?<!#else\n)    return cudaGraphAddDependencies\(graph, from, to, numDependencies\);/#if CUDART_VERSION >= 13000 \/\/ kmini build_deps: CUDA 13 added edge data\n    return cudaGraphAddDependencies(graph, from, to, nullptr, numDependencies);\n#else\n    return cudaGraphAddDependencies(graph, from, to, numDependencies);\n#endif/' \
      'cudaGraphAddDependencies for CUDA 13'
    patch_once "$inst" 'return cudaMemPrefetchAsync(devPtr, count, dstDevice, m_stream);' \
      's/(?<!#else\n)    return cudaMemPrefetchAsync\(devPtr, count, dstDevice, m_stream\);/#if CUDART_VERSION >= 13000 \/\/ kmini build_deps: CUDA 13 takes a cudaMemLocation and flags\n    cudaMemLocation location{};\n    location.type = cudaMemLocationTypeDevice;\n    location.id   = dstDevice;\n    return cudaMemPrefetchAsync(devPtr, count, location, 0, m_stream);\n#else\n    return cudaMemPrefetchAsync(devPtr, count, dstDevice, m_stream);\n#endif/' \
      'cudaMemPrefetchAsync for CUDA 13'
    patch_once "$inst" '^    return cudaMemAdvise(devPtr, count, advice, device);' \
      's/(?<!#else\n)    return cudaMemAdvise\(devPtr, count, advice, device\);/#if CUDART_VERSION >= 13000 \/\/ kmini build_deps: CUDA 13 takes a cudaMemLocation\n    cudaMemLocation location{};\n    location.type = cudaMemLocationTypeDevice;\n    location.id   = device;\n    return cudaMemAdvise(devPtr, count, advice, location);\n#else\n    return cudaMemAdvise(devPtr, count, advice, device);\n#endif/' \
      'cudaMemAdvise for CUDA 13'
    patch_once "$inst" '^    return cudaMemPrefetchAsync(devPtr, count, dstDevice,$' \
      's/(?<!#else\n)    return cudaMemPrefetchAsync\(devPtr, count, dstDevice,\n\s*get_input_stream\(stream\)\);/#if CUDART_VERSION >= 13000 \/\/ kmini build_deps: CUDA 13 takes a cudaMemLocation and flags\n    cudaMemLocation location{};\n    location.type = cudaMemLocationTypeDevice;\n    location.id   = dstDevice;\n    return cudaMemPrefetchAsync(devPtr, count, location, 0,\n                                get_input_stream(stream));\n#else\n    return cudaMemPrefetchAsync(devPtr, count, dstDevice,\n                                get_input_stream(stream));\n#endif/' \
      'cudaMemPrefetchAsync (stream form) for CUDA 13'
  fi
  local wrapper=$copy/bin/nvcc_wrapper
  if [[ -f $wrapper ]] && grep -q '^default_arch="sm_70"' "$wrapper"; then
    sed -i "s/^default_arch=\"sm_70\"/default_arch=\"$sm\" # kmini build_deps: was sm_70/" "$wrapper"
    echo "build_deps.sh: nvcc_wrapper's default architecture sm_70 -> $sm in the copy"
  fi
  kokkos_src=$copy
}

# HIP 5.2's atomicInc calls the intrinsic llvm.amdgcn.atomic.inc by name, which LLVM 17
# removed (an undefined symbol at the device link with clang 19): Kokkos' HIP scan calls
# the builtin that replaced it instead.
fix_kokkos_copy_hip_clang() {
  local copy
  copy_kokkos
  local scan=$copy/core/src/HIP/Kokkos_HIP_ReduceScan.hpp
  [[ -f $scan ]] && patch_once "$scan" ': (1 + atomicInc(global_flags, block_count - 1) < block_count));' \
    's/(?<!#else\n)          : \(1 \+ atomicInc\(global_flags, block_count - 1\) < block_count\)\);/#if defined(__clang_major__) && __clang_major__ >= 17 \/\/ kmini build_deps: LLVM 17 removed the intrinsic HIP 5.2 names\n          : (1 + __builtin_amdgcn_atomic_inc32(global_flags, block_count - 1,\n                                               __ATOMIC_RELAXED, "agent") < block_count));\n#else\n          : (1 + atomicInc(global_flags, block_count - 1) < block_count));\n#endif/' \
    'atomicInc for clang 19'
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
  # shellcheck source=../setup.sh
  source "$(dirname "${BASH_SOURCE[0]}")/../setup.sh"
  # gfx942 without a hipcc that knows it falls back to clang++-19 below.
  if [[ $arch != AMD_GFX942 ]]; then
    command -v hipcc >/dev/null ||
      kmini_install_packages "${KMINI_HIP_APT_PACKAGES[@]}" || die "--backend hip: hipcc missing and not installed (Debian: hipcc libamdhip64-dev)"
    command -v hipcc >/dev/null || die "--backend hip: hipcc not found on PATH"
  fi
  # hipcc asks rocm_agent_enumerator for the GPU whenever a command names none
  # (CMake's compiler checks, links), which prints a traceback where there is no GPU.
  gfx=${arch#AMD_}
  gfx=${gfx,,}
  export HCC_AMDGPU_TARGET=${HCC_AMDGPU_TARGET:-$gfx}
  # hipcc_compiles GFX: whether hipcc compiles for GFX (an older hipcc rejects a newer
  # GPU at the first compile: Debian's HIP 5.2, clang 15, knows gfx940 but not gfx942).
  hipcc_log=""
  hipcc_compiles() {
    command -v hipcc >/dev/null || { hipcc_log="hipcc not found"; return 1; }
    local probe status=0
    probe=$(mktemp -d)
    echo 'int main() { return 0; }' >"$probe/probe.cpp"
    (cd "$probe" && hipcc --offload-arch="$1" -c probe.cpp -o probe.o >probe.log 2>&1) || status=$?
    hipcc_log=$(grep -m1 -i 'error' "$probe/probe.log" | sed 's/;.*//' || true)
    rm -rf "$probe"
    return "$status"
  }
  hip_flags=()
  if hipcc_compiles "$gfx"; then
    hip_cxx=$(command -v hipcc)
  elif [[ $arch == AMD_GFX942 ]]; then
    # Debian's clang 19 knows gfx942 and compiles HIP against Debian's HIP 5.2 headers.
    debian_bc=/usr/lib/x86_64-linux-gnu/amdgcn/bitcode
    if ! command -v clang++-19 >/dev/null || [[ ! -f $debian_bc/ocml.bc ]]; then
      kmini_install_packages "${KMINI_HIP_CLANG_APT_PACKAGES[@]}" ||
        die "--arch $arch: clang++-19 or the device libraries missing and not installed (Debian: ${KMINI_HIP_CLANG_APT_PACKAGES[*]})"
    fi
    hip_cxx=$(command -v clang++-19) || die "--arch $arch: clang++-19 not found on PATH"
    echo "build_deps.sh: hipcc cannot compile for $gfx${hipcc_log:+ ($hipcc_log)}; compiling with $hip_cxx"
    fix_kokkos_copy_hip_clang
    # Debian's device libraries (ROCm 5.2) have no gfx942 ISA file: a folder of links
    # to them plus that one file, which only holds the ISA version (9.4.2).
    bc=$prefix/amdgcn/bitcode
    mkdir -p "$bc"
    ln -sf "$debian_bc"/*.bc "$bc"/
    rm -f "$bc/oclc_isa_version_942.bc"
    printf '%s\n' 'target triple = "amdgcn-amd-amdhsa"' \
      '@__oclc_ISA_version = linkonce_odr protected local_unnamed_addr addrspace(4) constant i32 9402, align 4' >"$bc/isa942.ll"
    "$hip_cxx" --target=amdgcn-amd-amdhsa -nogpulib -c -emit-llvm "$bc/isa942.ll" -o "$bc/oclc_isa_version_942.bc"
    rm -f "$bc/isa942.ll"
    # Another ROCm's headers must not mix with Debian's device libraries.
    unset ROCM_PATH HIP_PATH
    # Code object v4, as Debian's 5.2 device libraries and runtime expect; clang 19 defaults to v5.
    # Kokkos exports these flags through its target, so kmini compiles with them too.
    hip_flags=("-DKokkos_IMPL_AMDGPU_FLAGS=--offload-arch=$gfx;--rocm-device-lib-path=$bc;-mcode-object-version=4")
  else
    die "--arch $arch: this hipcc ($(hipcc --version 2>/dev/null | sed -n 's/^HIP version: //p' | head -1)) cannot compile for $gfx${hipcc_log:+ ($hipcc_log)}: this GPU needs a newer ROCm's hipcc, see docs/amd.md"
  fi
  # rocThrust only speeds up Kokkos' sort; Debian ships none.
  kokkos_opts+=(-DKokkos_ENABLE_HIP=ON -DKokkos_ARCH_${arch}=ON -DKokkos_ENABLE_ROCTHRUST=OFF
                -DCMAKE_CXX_COMPILER="$hip_cxx" "${hip_flags[@]}")
else
  kokkos_opts+=(-DKokkos_ENABLE_OPENMP=ON -DKokkos_ARCH_NATIVE=OFF)
fi

build=$prefix/build
mkdir -p "$build"
# A build folder configured from other sources (the folder given, or the copy) is
# refused by cmake: it starts afresh.
for sub in "kokkos:$kokkos_src" "kokkos-kernels:$kk_src"; do
  dir=$build/${sub%%:*}
  if [[ -f $dir/CMakeCache.txt ]] && ! grep -qxF "CMAKE_HOME_DIRECTORY:INTERNAL=${sub#*:}" "$dir/CMakeCache.txt"; then
    rm -rf "$dir"
  fi
done
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
[[ $backend == hip ]] && kk_cxx=(-DCMAKE_CXX_COMPILER="$hip_cxx" -DKokkosKernels_ENABLE_TPL_ROCBLAS=OFF
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
