#!/usr/bin/env bash
# Usage: scripts/gpu/bundle.sh OUTDIR [--backend cuda|hip|openmp] [--prefix DIR] [--no-build] [--jobs N]
#                               [--debug-copy BINARY] [--python-kit]
#
# Builds kmini and every test with the `cuda` (or `hip`, `openmp`) preset against the
# Kokkos + Kokkos Kernels at --prefix (default $Kokkos_ROOT; scripts/gpu/build_deps.sh
# makes one), on a machine that needs no GPU, and packs a relocatable bundle into
# OUTDIR (at most 60 MiB), for a GPU machine that has nvcc's driver, CMake and a
# python3 but none of Debian's development packages, and packs it as
# OUTDIR.tar.gz, what travels (at most 60 MiB; a CUDA build with its test
# binaries is about 68 MiB unpacked, 19 MiB packed):
#   OUTDIR/kmini/             the tracked source tree (decks, test data, scripts)
#   OUTDIR/kmini/build-<b>/   stripped binaries, the ctest files (relocated at run time);
#                             a CUDA build's bin/kmini_wgmma_probe (sm_90a) among them
#   OUTDIR/lib/               every non-glibc shared library the binaries need (ldd)
#   OUTDIR/libcxx/            the C++ runtime they were built with (libstdc++, libgcc_s),
#                             used only where the machine's is older
#   OUTDIR/mpi/usr/...        OpenMPI (orterun, orted, components, help files) and
#                             PMIx, in their own layout, relocated with OPAL_PREFIX
#   OUTDIR/run_gpu.sh         the runner (scripts/gpu/run_gpu.sh): suite, decks,
#                             bench decks, compute-sanitizer, one tar of results
#   OUTDIR/bundle_info.txt    where and from what it was built
# A hip bundle carries Debian's HIP runtime (libamdhip64.so.5, ROCr, the thunk) but not
# the code-object manager it loads at run time (libamd_comgr.so.2, 230 MiB with its
# LLVM): the AMD machine's ROCm provides that one (docs/amd.md).
# --debug-copy BINARY: also bin/BINARY.debug, unstripped, for a backtrace on
# the GPU machine (run_gpu.sh's KMINI_GPU_DEBUG).
# --python-kit: also OUTDIR/pykit/, what scripts/gpu/python_module.sh needs to
# build the Python module on the GPU machine for its own Python (the CUDA
# build's static libraries, Kokkos' headers and nvcc_wrapper, pybind11's and
# MPI's headers) and pytest, so that run_gpu.sh's step python runs
# tests/python there (CuPy arrays in place).
set -euo pipefail
die() { echo "bundle.sh: $*" >&2; exit 2; }
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

[[ $# -ge 1 && $1 != -* ]] || die "usage: bundle.sh OUTDIR [--backend cuda|hip|openmp] [--prefix DIR] [--no-build] [--jobs N]"
out=$1; shift
backend=cuda; prefix=${Kokkos_ROOT:-}; build=1; jobs=$(nproc); debug_copies=(); python_kit=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --backend) backend=${2:?}; shift 2 ;;
    --prefix) prefix=${2:?}; shift 2 ;;
    --no-build) build=0; shift ;;
    --jobs) jobs=${2:?}; shift 2 ;;
    --debug-copy) debug_copies+=("${2:?}"); shift 2 ;;
    --python-kit) python_kit=1; shift ;;
    *) die "unknown argument '$1' (expected --backend, --prefix, --no-build, --jobs, --debug-copy or --python-kit)" ;;
  esac
done
[[ $backend == cuda || $backend == hip || $backend == openmp ]] || die "--backend '$backend': expected cuda, hip or openmp"
[[ -n $prefix ]] || die "no Kokkos prefix: pass --prefix DIR or set Kokkos_ROOT (scripts/gpu/build_deps.sh builds one)"
[[ -d $prefix/lib || -d $prefix/lib64 ]] || die "--prefix '$prefix': expected a Kokkos install (lib/ or lib64/)"
prefix=$(cd "$prefix" && pwd)
bdir=$root/build-$backend
if [[ $backend == hip ]]; then
  # The GPU Kokkos was built for; hipcc asks a GPU-less machine's rocm_agent_enumerator otherwise.
  gfx=$(sed -n 's/^#define KOKKOS_ARCH_AMD_\(GFX[0-9A-F]*\)$/\1/p' "$prefix/include/KokkosCore_config.h" 2>/dev/null | head -1)
  [[ -n $gfx ]] || die "--prefix '$prefix': not a Kokkos with HIP for an AMD GPU (no KOKKOS_ARCH_AMD_GFX... in include/KokkosCore_config.h)"
  export HCC_AMDGPU_TARGET=${gfx,,}
fi

# --- build ------------------------------------------------------------------------
if ((build)); then
  export Kokkos_ROOT=$prefix KokkosKernels_ROOT=$prefix
  # No Python module: it would be built for this machine's Python, not the GPU machine's.
  # --python-kit: every layer position-independent, so the module (a shared
  # object) can link the static libraries on the GPU machine.
  pic=OFF
  ((python_kit)) && pic=ON
  (cd "$root" && cmake --preset "$backend" -DKMINI_NATIVE=OFF -DKMINI_PYTHON_MODULE=OFF \
     -DCMAKE_POSITION_INDEPENDENT_CODE=$pic >/dev/null)
  (cd "$root" && cmake --build --preset "$backend" -j "$jobs")
fi
[[ -f $bdir/CTestTestfile.cmake ]] || die "$bdir has no CTestTestfile.cmake: build first (drop --no-build)"

# --- extended lambdas that can call address 0 (nvcc's per-unit helpers) -----
# Read from the unstripped build before anything is packed: a bundle with one
# would crash on the GPU where a test happens to run that lambda's unit second.
if [[ $backend == cuda ]]; then
  py=$(command -v /usr/bin/python3 || command -v python3) || die "no python3 for check_lambda_wrappers.py"
  mapfile -d '' elves < <(find "$bdir" -type f \( -executable -o -name '*.so' \) ! -path '*/CMakeFiles/*' -print0)
  checked=()
  for f in "${elves[@]}"; do [[ $(head -c 4 "$f" | tr -d '\0') == $'\x7fELF' ]] && checked+=("$f"); done
  "$py" "$root/scripts/gpu/check_lambda_wrappers.py" "${checked[@]}" ||
    die "extended lambdas with per-unit helpers in the CUDA build (above): make those kernels functors"
  echo "bundle: ${#checked[@]} CUDA binaries, no extended lambda with per-unit helpers"
fi

# --- lay out ------------------------------------------------------------------------
mkdir -p "$out"
out=$(cd "$out" && pwd)
# Inside the checkout only where git ignores it (.gpu-bundle/ is): the device
# tool carries such a folder to the GPU machine, and it never gets committed.
case $out/ in
  "$root"/*) (cd "$root" && git check-ignore -q "${out#"$root"/}/") ||
               die "OUTDIR '$out' is inside the source tree and not git-ignored: use .gpu-bundle/NAME or a folder outside" ;;
esac
rm -rf "$out/kmini" "$out/lib" "$out/libcxx" "$out/mpi" "$out/pykit"
mkdir -p "$out/kmini" "$out/lib"
(cd "$root" && git ls-files -z | tar --null -T - -cf -) | tar -C "$out/kmini" -xf -
# Files the build generated and the tests read (ctest scripts, gtest discovery
# scripts, the tier labels of discovered tests; configured headers are compiled in), and the binaries.
(cd "$root" && find "build-$backend" \( -name CTestTestfile.cmake -o -name '*_include.cmake' -o -name '*_tests.cmake' \) -print0 |
  tar --null -T - -cf -) | tar -C "$out/kmini" -xf -
# The build tree's own shared libraries (the Kokkos Tools logger the tools
# tests load) and the inputs the configure step wrote into tests/work.
(cd "$root" && find "build-$backend" -name '*.so' ! -path '*/CMakeFiles/*' -print0 | tar --null -T - -cf -) |
  tar -C "$out/kmini" -xf -
mkdir -p "$out/kmini/build-$backend/tests/work"
find "$bdir/tests/work" -maxdepth 1 -type f -size -4M -exec cp {} "$out/kmini/build-$backend/tests/work/" \;
binaries=()
while IFS= read -r -d '' f; do
  [[ $(head -c 4 "$f" | tr -d '\0') == $'\x7fELF' ]] || continue  # programs, not scripts
  rel=${f#"$root"/}
  mkdir -p "$out/kmini/$(dirname "$rel")"
  cp "$f" "$out/kmini/$rel"
  strip --strip-unneeded "$out/kmini/$rel" 2>/dev/null || true
  binaries+=("$out/kmini/$rel")
done < <(find "$bdir" -type f -executable ! -name '*.so*' ! -path '*/CMakeFiles/*' -print0)

# The wgmma probe (CUDA builds, sm_90a): run_gpu.sh's probe step runs it.
probe_bin=none
[[ -f $out/kmini/build-$backend/bin/kmini_wgmma_probe ]] && probe_bin=build-$backend/bin/kmini_wgmma_probe
if [[ $backend == cuda ]]; then
  [[ $probe_bin != none ]] || echo "bundle: no bin/kmini_wgmma_probe (KMINI_WGMMA_PROBE=OFF): run_gpu.sh skips its probe step"
fi

for d in "${debug_copies[@]}"; do
  [[ -f $bdir/bin/$d ]] || die "--debug-copy '$d': no $bdir/bin/$d"
  cp "$bdir/bin/$d" "$out/kmini/build-$backend/bin/$d.debug"
done

if ((python_kit)); then
  [[ $backend == cuda ]] || die "--python-kit: for CUDA bundles (a CPU machine builds its own module)"
  kit=$out/pykit
  mkdir -p "$kit/lib" "$kit/kokkos/bin" "$kit/include" "$kit/mpi" "$kit/pylib"
  cp "$bdir"/src/libkmini_*.a "$kit/lib/"
  # Kokkos' libraries the binaries did not need (Kernels, Containers, SIMD), under their sonames.
  for l in "$prefix"/lib*/libkokkos*.so.*; do
    [[ -L $l ]] || continue
    [[ $(basename "$l") =~ \.so\.[0-9]+\.[0-9]+$ ]] && cp -L "$l" "$kit/lib/"
  done
  [[ -f $prefix/lib/libkokkoskernels.so ]] && cp -L "$prefix/lib/libkokkoskernels.so" "$kit/lib/"
  cp -r "$bdir/src/generated" "$kit/generated"
  cp -r "$prefix/include" "$kit/kokkos/include"
  cp "$prefix/bin/nvcc_wrapper" "$kit/kokkos/bin/"
  sed -n 's/.*-arch=\(sm_[0-9]*\).*/\1/p' "$bdir/build.ninja" | head -1 >"$kit/arch"
  [[ -s $kit/arch ]] || die "--python-kit: no -arch=sm_NN in $bdir/build.ninja"
  pybind=$(find /usr/include /usr/local/include -maxdepth 2 -name pybind11.h -path '*pybind11/*' 2>/dev/null | head -1)
  [[ -n $pybind ]] || die "--python-kit: pybind11's headers not found (Debian: pybind11-dev)"
  cp -r "$(dirname "$pybind")" "$kit/include/"
  mpi_inc=$(mpicxx --showme:incdirs | cut -d" " -f1)  # the second is its openmpi/ subfolder
  cp -r "$mpi_inc/." "$kit/mpi/"
  # pytest and what it imports, pure Python (the GPU machine's python3 has numpy, not pytest)
  for m in pytest _pytest pluggy iniconfig packaging py py.py; do
    [[ -e /usr/lib/python3/dist-packages/$m ]] && cp -r "/usr/lib/python3/dist-packages/$m" "$kit/pylib/"
  done
fi

# --- shared libraries -------------------------------------------------------------------
# Everything ldd resolves except glibc's own libraries and the CUDA driver (the
# GPU machine's, matched to its kernel module): libstdc++ and libgcc_s travel,
# since the GPU machine's may be older than the compiler's.
system_lib() {
  case $(basename "$1") in
    libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*|ld-linux*|libresolv.so.*|libutil.so.*|libcuda.so.*|linux-vdso*) return 0 ;;
  esac
  return 1
}
copy_deps() {
  local f lib
  for f in "$@"; do
    while read -r lib; do
      [[ -n $lib && -f $lib ]] || continue
      system_lib "$lib" && continue
      [[ -f $out/lib/$(basename "$lib") ]] && continue
      cp -L "$lib" "$out/lib/$(basename "$lib")"
      strip --strip-unneeded "$out/lib/$(basename "$lib")" 2>/dev/null || true
    done < <(LD_LIBRARY_PATH="$prefix/lib:$prefix/lib64:${LD_LIBRARY_PATH:-}" ldd "$f" 2>/dev/null |
             awk '/=> \// {print $3} /^\t\// {print $1}')
  done
}
missing=$(LD_LIBRARY_PATH="$prefix/lib:$prefix/lib64" ldd "${binaries[@]}" 2>/dev/null | grep 'not found' | grep -v libcuda | sort -u || true)
[[ -z $missing ]] || die "libraries not found by ldd: $missing"
copy_deps "${binaries[@]}"

# --- OpenMPI, relocatable -------------------------------------------------------------------
# OpenMPI finds its components, orted and help files under OPAL_PREFIX in its
# configure-time layout (ompi_info --path all); PMIx under PMIX_INSTALL_PREFIX.
# Components for fabrics a single GPU node does not use (UCX, libfabric, verbs,
# PSM, Portals) and any whose libraries are missing stay behind: OpenMPI skips
# a component it does not find, and shared memory + TCP cover one node.
ompi_path() { ompi_info --path "$1" --parsable | sed -n "s/^path:$1://p"; }
if command -v ompi_info >/dev/null; then
  opal_prefix=$(ompi_path prefix)
  pkglibdir=$(ompi_path pkglibdir)
  pkgdatadir=$(ompi_path pkgdatadir)
  bindir=$(ompi_path bindir)
  mpi=$out/mpi$opal_prefix
  mkdir -p "$mpi/bin" "$out/mpi$pkglibdir" "$out/mpi$pkgdatadir"
  for p in orterun orted mpiexec mpirun; do
    [[ -e $bindir/$p ]] || continue
    real=$(readlink -f "$bindir/$p")
    [[ $(basename "$real") == "$p" ]] && { cp "$real" "$mpi/bin/$p"; copy_deps "$real"; } || ln -sf "$(basename "$real")" "$mpi/bin/$p"
  done
  cp -r "$pkgdatadir/." "$out/mpi$pkgdatadir/"
  for c in "$pkglibdir"/*.so; do
    case $(basename "$c") in *ucx*|*ofi*|*verbs*|*openib*|*psm*|*portals*|*usnic*|*ucc*|*hcoll*|*fca*|*cuda*) continue ;; esac
    LD_LIBRARY_PATH="$out/lib" ldd "$c" | grep -q 'not found' && continue
    cp "$c" "$out/mpi$pkglibdir/"
    copy_deps "$c"
  done
  pmix_lib=$(ldd "$out/lib/libopen-pal.so"* 2>/dev/null | awk '/libpmix/ {print $3}' | head -1)
  [[ -z $pmix_lib ]] && pmix_lib=$(find /usr/lib -path '*pmix*' -name 'libpmix.so.*' 2>/dev/null | head -1)
  if [[ -n $pmix_lib ]]; then
    pmix_prefix=$(dirname "$(dirname "$(readlink -f "$pmix_lib")")")
    if [[ -d $pmix_prefix/lib/pmix ]]; then
      mkdir -p "$out/mpi$pmix_prefix/lib/pmix"
      cp "$pmix_prefix"/lib/pmix/*.so "$out/mpi$pmix_prefix/lib/pmix/" 2>/dev/null || true
      copy_deps "$out/mpi$pmix_prefix"/lib/pmix/*.so  # zlib for pcompress: else a warning on every start
      [[ -d $pmix_prefix/share ]] && cp -r "$pmix_prefix/share" "$out/mpi$pmix_prefix/"
    fi
    echo "pmix_prefix=$pmix_prefix" >>"$out/mpi/layout.txt"
  fi
  echo "opal_prefix=$opal_prefix" >>"$out/mpi/layout.txt"
fi

# The C++ runtime (libstdc++, libgcc_s) apart, in libcxx/: run_gpu.sh puts it on the
# library path only where the machine's own is older (a newer one serves both the
# bundle and what the machine's compiler builds there: the Python module).
mkdir -p "$out/libcxx"
for l in "$out"/lib/libstdc++.so.* "$out"/lib/libgcc_s.so.*; do
  if [[ -e $l ]]; then mv "$l" "$out/libcxx/"; fi
done

# CMake's own modules that the ctest files include (GoogleTestAddTests.cmake
# for the gtest discovery at test time): the GPU machine's CMake is another.
mkdir -p "$out/cmake-modules"
modules_dir=""
while IFS= read -r m; do
  cp "$m" "$out/cmake-modules/"
  modules_dir=$(dirname "$m")
done < <(grep -rhoE '/[^"; )]*/Modules/[A-Za-z]+\.cmake' "$bdir" --include='*.cmake' | sort -u)

# --- runner and provenance ---------------------------------------------------------------
cache_value() { sed -n "s/^$1:[A-Z]*=//p" "$bdir/CMakeCache.txt" | head -1; }
cp "$root/scripts/gpu/run_gpu.sh" "$out/run_gpu.sh"
chmod +x "$out/run_gpu.sh"
{
  echo "backend=$backend"
  echo "source_dir=$root"
  echo "build_dir=$bdir"
  echo "cmake=$(command -v cmake)"
  echo "cmake_modules=$modules_dir"
  echo "mpiexec=$(readlink -f "$(cache_value MPIEXEC_EXECUTABLE)" 2>/dev/null)"
  echo "mpiexec_configured=$(cache_value MPIEXEC_EXECUTABLE)"
  echo "python3_configured=$(cache_value KMINI_PYTHON3)"
  echo "python3_any_configured=$(cache_value KMINI_ANY_PYTHON)"
  echo "revision=$(sed -n 's/.*kGitRevision = "\(.*\)";/\1/p' "$bdir/src/generated/git_revision.hpp")"
  echo "commit=$(cd "$root" && git rev-parse HEAD)$(cd "$root" && git diff --quiet HEAD -- src tests || echo '+local changes')"
  echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n)"
  echo "kokkos_prefix=$prefix"
  echo "wgmma_probe=$probe_bin"
  [[ $backend == hip ]] && echo "amd_gpu=$HCC_AMDGPU_TARGET"
} >"$out/bundle_info.txt"

size=$(du -sm "$out" | cut -f1)
# What travels: one archive (tar -xzf on the GPU machine, anywhere).
tar -C "$out" -czf "$out.tar.gz" .
packed=$(du -m "$out.tar.gz" | cut -f1)
echo "bundle.sh: $out: ${#binaries[@]} binaries, $(ls "$out/lib" | wc -l) libraries, ${size} MiB; $out.tar.gz ${packed} MiB"
((packed <= 60)) || die "$out.tar.gz is ${packed} MiB, over the 60 MiB limit"
