#!/usr/bin/env bash
# Usage (inside a bundle made by scripts/gpu/bundle.sh): ./run_gpu.sh RESULTS_DIR [--only STEPS]
#
# One command on the GPU machine, bounded by KMINI_GPU_BUDGET, steps in order of value:
#   smi: nvidia-smi (-q too: form factor, clocks; rocm-smi and rocminfo for a hip bundle)
#   probe: on an sm_90 GPU, bin/kmini_wgmma_probe (about 5 s): Hopper's wgmma 1-bit MMA
#      against the mma.sync the tensor-core engine issues, one line in summary.txt with
#      both rates and their ratio, the JSON inside the tar (runs/probe/wgmma_probe.json)
#   device: the device tier (ctest -L device, about 3 minutes on an H200): the tests whose
#      code paths differ on a device (ctest-device.log)
#   python (bundles made with --python-kit): the module built for this machine's python3
#      (scripts/gpu/python_module.sh, in the background from the start), then tests/python
#      with pytest (CuPy arrays in and out, in place) and comm= at 2 ranks (python.txt)
#   decks, bench: the default deck at 1 and 2 ranks, every bench deck (inputs/bench/*.yaml;
#      gram's probes run inside each gram deck)
#   peers: benchmarks/peers.py (numba-cuda, CuPy and a PyTorch pipeline on the same data,
#      checked; the PyTorch one at the users' 10^4 x 10^5 Jaccard size, phase by phase
#      beside kmini's phases; peers.json)
#   gpu_decks: the GPU sizes and variants (inputs/gpu/*.yaml), then every
#      gram.tensor_core_tile on the tensor-core decks
#   tests: the rest of the ctest suite (ctest -LE device), relocated into this folder, with
#      the time left; tests that need what the machine lacks are listed as skipped with
#      the reason (never dropped); a run stopped at its limit says how many tests ran
#   profile: Nsight Systems and Compute on rk4's and discount's step kernels (profile.txt)
#   sanitizer: compute-sanitizer memcheck and racecheck on each kernel's small run (its
#      declaration's small_run, read through `kmini describe --json`; sanitizer.log)
# and leaves at most 8 files in RESULTS_DIR: summary.txt, results.tar.gz (every
# results.json and log), ctest-device.log, ctest-rest.log, python.txt, peers.json,
# profile.txt, sanitizer.log.
# STEPS (comma-separated, --only): smi,probe,device,python,decks,bench,peers,gpu_decks,tests,profile,sanitizer.
# KMINI_DEVICE_TIMEOUT, KMINI_CTEST_TIMEOUT: seconds for the device tier (200) and the rest
# of the suite (300; a 2-core CPU bundle needs more).
# KMINI_GPU_BUDGET: seconds for the whole run (480): each step gets at most what is left,
# less a reserve for packing, and a step with too little left is skipped with a line
# saying so, so that a lent GPU's limited time never ends before the results are packed.
# KMINI_GPU_DEBUG="BINARY FILTER": first, one gtest test of bin/BINARY (the
# unstripped BINARY.debug where the bundle has one) run alone and under gdb or
# cuda-gdb, whichever the machine has, for a backtrace (debug.txt).
set -uo pipefail
B=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
res=${1:?usage: run_gpu.sh RESULTS_DIR [--only STEPS]}
shift
steps=smi,probe,device,python,decks,bench,peers,gpu_decks,tests,profile,sanitizer
[[ ${1:-} == --only ]] && steps=${2:?}
want() { [[ ,$steps, == *",$1,"* ]]; }
mkdir -p "$res"
res=$(cd "$res" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/kmini-gpu.XXXXXX")
trap 'rm -rf "$work"' EXIT
log=$work/logs
mkdir -p "$log"
t_start=$(date +%s)
info() { sed -n "s/^$1=//p" "${2:-$B/bundle_info.txt}" 2>/dev/null | head -1; }  # KEY [FILE]
backend=$(info backend)
src_from=$(info source_dir)
summary=$res/summary.txt
: >"$summary"
say() { echo "$*" | tee -a "$summary"; }
elapsed() { echo $(($(date +%s) - t_start)); }
budget=${KMINI_GPU_BUDGET:-480}
left() { local l=$((budget - 15 - $(elapsed))); ((l > 0)) && echo "$l" || echo 0; }  # 15 s to pack
cap() { local l; l=$(left); ((l < $1)) && echo "$l" || echo "$1"; }                 # min(N, left)
enough() {  # SECONDS STEP: is there time for it? else say it was skipped
  (($(left) >= $1)) && return 0
  say "skipped: $2: $(left) s of the ${budget} s budget left"
  return 1
}

# --- environment: the bundle's libraries and OpenMPI, relocated -----------------------
export LD_LIBRARY_PATH="$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# The C++ runtime: the machine's where it is at least as new as the bundle's (libcxx/,
# bundle.sh), since what the machine's compiler builds here (the Python module) may
# need the newer one; else the bundle's. Compared by the newest GLIBCXX_ version each defines.
glibcxx() { grep -ao 'GLIBCXX_3\.4\.[0-9]*' "$1" 2>/dev/null | sed 's/.*\.//' | sort -n | tail -1; }
machine_cxx=$(ldconfig -p 2>/dev/null | awk '/libstdc\+\+\.so\.6 .*x86-64/ {print $NF; exit}')
bundle_cxx=$(ls "$B"/libcxx/libstdc++.so.6* 2>/dev/null | head -1)
cxx_runtime="the machine's ($machine_cxx)"
if [[ -n $bundle_cxx ]] && { [[ -z $machine_cxx ]] || (($(glibcxx "$machine_cxx") < $(glibcxx "$bundle_cxx"))); }; then
  export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$B/libcxx"
  cxx_runtime="the bundle's (GLIBCXX_3.4.$(glibcxx "$bundle_cxx"); the machine's: ${machine_cxx:-none})"
fi
opal_prefix=$(info opal_prefix "$B/mpi/layout.txt")
pmix_prefix=$(info pmix_prefix "$B/mpi/layout.txt")
mpiexec=$B/mpi$opal_prefix/bin/mpiexec
export OPAL_PREFIX=$B/mpi$opal_prefix
[[ -n $pmix_prefix ]] && export PMIX_INSTALL_PREFIX=$B/mpi$pmix_prefix
export PATH="$B/mpi$opal_prefix/bin:$PATH"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# Fabrics' components were left out of the bundle: one node, shared memory.
export OMPI_MCA_mca_base_component_show_load_errors=0 OMPI_MCA_btl=self,vader,tcp OMPI_MCA_pml=ob1
export OMPI_MCA_btl_vader_single_copy_mechanism=none PMIX_MCA_pcompress_base_silence_warning=1
# One node: no remote shell to look for (a minimal system has no ssh, and OpenMPI
# refuses to start even local ranks without one).
export OMPI_MCA_plm_rsh_agent=false
# Kokkos' OpenMP backend (an openmp bundle) warns on stderr at every start without these.
export OMP_PROC_BIND="${OMP_PROC_BIND:-spread}" OMP_PLACES="${OMP_PLACES:-threads}"
python=$(command -v python3 || true)
cmake_bin=$(command -v cmake || true)
ctest_bin=$(command -v ctest || true)
export KMINI_RELOCATE="$src_from=$B/kmini;$(info mpiexec_configured)=$mpiexec;$(info mpiexec)=$mpiexec"
kmini=$B/kmini/build-$backend/bin/kmini
export KMINI_BUNDLE_REVISION="$(info revision)"  # what results.json must name (tests/driver/check_records.cmake)
say "kmini GPU bundle run: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n); bundle: $(info commit), built $(info built)"

# The kernels' own run settings (`kmini describe --json`, src/<kernel>/<kernel>_declaration.cpp):
#   declared FIELD         the kernels that declare FIELD (small_run, profile_run), one a line
#   declared FIELD KERNEL  that kernel's --set values of FIELD, one a line
# (kmini asked once: each start costs about half a second of the budget).
declared() {
  [[ -s $work/describe.json ]] || "$kmini" describe --json >"$work/describe.json" 2>/dev/null
  "${python:-python3}" -c '
import json, sys
field, kernel = sys.argv[1], (sys.argv[2:] or [None])[0]
for k in json.load(sys.stdin)["kernels"]:
    if kernel is None and k.get(field):
        print(k["name"])
    elif k["name"] == kernel:
        for s in k.get(field) or []:
            print(s)' "$@" <"$work/describe.json"
}
# settings NAME FIELD KERNEL: the array NAME = --set run.kernels=[KERNEL] and the kernel's FIELD as --set's.
settings() {
  local -n into=$1
  local s
  into=(--set "run.kernels=[$3]")
  while IFS= read -r s; do into+=(--set "$s"); done < <(declared "$2" "$3")
}

# --- relocation of the ctest files (from pristine copies, so it can run again) --------------
relocate() {
  local f from to
  while IFS= read -r -d '' f; do
    [[ -f $f.orig ]] || cp "$f" "$f.orig"
    cp "$f.orig" "$f"
    for pair in "$src_from=$B/kmini" "$(info cmake_modules)=$B/cmake-modules" "$(info mpiexec_configured)=$mpiexec" "$(info mpiexec)=$mpiexec" \
                "$(info python3_configured)=${python:-/nonexistent/python3}" \
                "$(info python3_any_configured)=${python:-/nonexistent/python3}" \
                "$(info cmake)=${cmake_bin:-cmake}" "$(dirname "$(info cmake)")/ctest=${ctest_bin:-ctest}"; do
      from=${pair%%=*}; to=${pair#*=}
      [[ -n $from ]] || continue
      sed -i "s|$(printf '%s' "$from" | sed 's/[.[\*^$|]/\\&/g')|$(printf '%s' "$to" | sed 's/[&|\\]/\\&/g')|g" "$f"
    done
  done < <(find "$B/kmini/build-$backend" -name '*.cmake' -print0)
}
relocate

if want smi && [[ $backend == hip ]]; then
  # AMD: ROCm's tools; the bundle's HIP runtime loads the machine's libamd_comgr.so.2.
  { rocm-smi; rocminfo; ldconfig -p | grep -i comgr; } >"$log/rocm-smi.txt" 2>&1
  say "gpu: $(rocminfo 2>&1 | sed -n 's/^ *Marketing Name: *//p' | grep -vi cpu | head -1) (bundle built for $(info amd_gpu))"
  { echo "python3: $python ($($python --version 2>&1))"; uname -a; nproc; ldd "$kmini" | grep -i "not found"; } >>"$log/rocm-smi.txt" 2>&1
elif want smi; then
  { nvidia-smi; nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem,driver_version --format=csv; nvidia-smi -q; } \
    >"$log/nvidia-smi.txt" 2>&1
  say "gpu: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 | head -1)"
  # The form factor and clocks, for comparing rates with other machines' (results.json names the device too).
  say "gpu clocks: $(nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,power.limit,power.max_limit,pcie.link.gen.max \
    --format=csv,noheader 2>&1 | head -1) (sm, sm max, mem, mem max, power limit, max limit, PCIe gen); $(nvidia-smi -q 2>/dev/null |
    grep -E '^\s*(Product Name|Product Architecture|Board Part Number|Module ID)' | sed 's/  */ /g' | tr '\n' ';')"
  say "C++ runtime: ${cxx_runtime}"
  { echo "python3: $python ($($python --version 2>&1))"; echo "cmake: $cmake_bin"; $python -c 'import numpy, sys; print("numpy", numpy.__version__)' 2>&1
    $python -c 'import yaml; print("yaml", yaml.__version__)' 2>&1; uname -a; nproc; ldd "$kmini" | grep -i "not found"; } >>"$log/nvidia-smi.txt" 2>&1
fi

# --- probe: wgmma against mma.sync, before anything else loads the GPU or the CPUs --------
# Exit 77: not an sm_90 GPU (the probe is built for sm_90a only); 3: measured, but a
# wgmma result was not exact (the rates are then those of a misread layout).
if want probe && [[ $backend == cuda ]] && enough 30 "probe"; then
  probe=$B/kmini/build-$backend/bin/kmini_wgmma_probe
  if [[ ! -x $probe ]]; then
    say "skipped: probe: the bundle has no bin/kmini_wgmma_probe (built with KMINI_WGMMA_PROBE=OFF)"
  else
    mkdir -p "$work/runs/probe"
    t0=$(date +%s)
    timeout "$(cap 60)" "$probe" --json "$work/runs/probe/wgmma_probe.json" 2>"$log/wgmma_probe.log"
    rc=$?
    line=$(tail -1 "$log/wgmma_probe.log" | sed 's/^kmini_wgmma_probe: //')
    if ((rc == 77)); then
      say "skipped: probe: $line"
    else
      say "probe: exit $rc in $(($(date +%s) - t0)) s: $line"
    fi
    # The instructions ptxas chose, where the machine has cuobjdump.
    cuobjdump_bin=$(command -v cuobjdump || ls /usr/local/cuda/bin/cuobjdump 2>/dev/null | head -1)
    if [[ -n $cuobjdump_bin ]]; then
      "$cuobjdump_bin" --dump-sass "$probe" >"$work/runs/probe/wgmma_probe.sass" 2>&1
      say "probe SASS: $(grep -oE '\b[A-Z0-9]*MMA(\.[A-Za-z0-9_]+)*' "$work/runs/probe/wgmma_probe.sass" | sort | uniq -c |
        awk '{printf "%s%s x%s", (NR > 1 ? ", " : ""), $2, $1}')"
    fi
  fi
fi

py_build_pid=""
if want python && [[ -d $B/pykit ]]; then  # compiles on the CPUs while the GPU runs the suite
  bash "$B/kmini/scripts/gpu/python_module.sh" "$B" "${python:-python3}" >"$log/python_build.log" 2>&1 &
  py_build_pid=$!
fi

if [[ -n ${KMINI_GPU_DEBUG:-} ]]; then
  read -r dbin dfilter <<<"$KMINI_GPU_DEBUG"
  dexe=$B/kmini/build-$backend/bin/$dbin
  [[ -f $dexe.debug ]] && dexe=$dexe.debug
  {
    echo "debuggers: $(command -v gdb cuda-gdb /usr/local/cuda/bin/cuda-gdb 2>/dev/null | tr '\n' ' ')"
    (cd "$B/kmini/build-$backend" && KMINI_TEST_SEGV_TRACE=1 timeout 60 "$dexe" --gtest_filter="$dfilter"); echo "alone: exit $?"
    (cd "$B/kmini/build-$backend" && CUDA_LAUNCH_BLOCKING=1 timeout 60 "$dexe" --gtest_filter="$dfilter"); echo "CUDA_LAUNCH_BLOCKING=1: exit $?"
    for dbg in gdb cuda-gdb /usr/local/cuda/bin/cuda-gdb; do
      command -v "$dbg" >/dev/null || continue
      (cd "$B/kmini/build-$backend" && timeout 150 "$dbg" -batch -ex run -ex bt -ex 'info registers rip rsp' -ex 'x/24a $sp' \
        -ex 'info symbol *(void**)$sp' --args "$dexe" --gtest_filter="$dfilter")
      break
    done
  } >"$res/debug.txt" 2>&1
  say "debug $KMINI_GPU_DEBUG: $(grep -E '^alone' "$res/debug.txt")"
fi

# --- the test suite: the device tier first, the rest after the benchmarks ----------------------
# Skipped, each with its reason (ctest -E): what this machine cannot do.
declare -A skip=()
command -v clang-format >/dev/null || skip[lint.clang_format]="no clang-format on the GPU machine (a formatting check, not a GPU one)"
# Configuring the presets needs the Kokkos install the bundle was built against.
skip['project\.preset\.']="configures kmini's CMake presets: needs the source tree's Kokkos install, which is not in the bundle"
exclude=""
for k in "${!skip[@]}"; do exclude+="${exclude:+|}$k"; done
skips_said=0
# run_ctest NAME SECONDS [ctest selection...]: one ctest run, its tally and failures in summary.txt.
run_ctest() {
  local name=$1 limit=$2 t0 rc jobs
  shift 2
  if ((!skips_said)); then
    for k in "${!skip[@]}"; do say "skipped: $k: ${skip[$k]}"; done
    skips_said=1
  fi
  cd "$B/kmini/build-$backend" || exit 1
  t0=$(date +%s)
  jobs=$(nproc); ((jobs > 12)) && jobs=12
  timeout "$(cap "$limit")" "$ctest_bin" -j "$jobs" --timeout 150 ${exclude:+-E "$exclude"} "$@" --output-on-failure \
    --output-junit "$log/ctest-$name-junit.xml" >"$log/ctest-$name.log" 2>&1
  rc=$?
  local tally
  tally=$(grep -E 'tests passed|tests failed' "$log/ctest-$name.log" | tail -1)
  ((rc == 124)) && tally="stopped at its limit after $(grep -cE '^ *[0-9]+/[0-9]+ Test' "$log/ctest-$name.log") tests"
  say "ctest $name: exit $rc in $(($(date +%s) - t0)) s: $tally"
  grep -E '^\s+[0-9]+ - .*\((Failed|Timeout|SEGFAULT|Subprocess|Not Run|Exception)' "$log/ctest-$name.log" | head -60 | tee -a "$summary"
  grep -E '\*\*\*Skipped|Not Run' "$log/ctest-$name.log" | head -20 >>"$summary"
  tail -c 100000 "$log/ctest-$name.log" >"$res/ctest-$name.log"  # now: a later step that overruns must not lose it
  cd "$B/kmini" || exit 1
}
# The device tier (ctest -L device, cmake/KminiTestHarness.cmake): the tests whose code paths
# differ on a device, about 3 minutes on an H200.
device_ran=0
if want device && enough 60 "the device tier"; then
  run_ctest device "${KMINI_DEVICE_TIMEOUT:-200}" -L device
  device_ran=1
fi

if want python; then
  if [[ -z $py_build_pid ]]; then
    say "skipped: python: the bundle has no pykit/ (bundle.sh --python-kit)"
  elif enough 30 "python"; then
    wait "$py_build_pid"
    say "python: module build exit $?: $(tail -1 "$log/python_build.log")"
    if [[ -n $(ls "$B"/pykit/python/kmini/_kmini*.so 2>/dev/null) ]]; then
      t0=$(date +%s)
      # The machine's own pytest where it has one (its plugins need it: an
      # older pytest fails on pytest-timeout's options), else the kit's.
      pypath=$B/pykit/python
      "$python" -c 'import pytest' 2>/dev/null || pypath+=:$B/pykit/pylib
      {
        echo "=== versions"
        "$python" -c 'import sys, numpy; print(sys.version.split()[0], "numpy", numpy.__version__)'
        "$python" -c 'import cupy; print("cupy", cupy.__version__)' 2>&1 | tail -1
        "$python" -c 'import mpi4py; from mpi4py import MPI; print("mpi4py", mpi4py.__version__, MPI.Get_library_version().rstrip("\0").splitlines()[0])' 2>&1 | tail -1
        grep -E '^python_module.sh: Python' "$log/python_build.log"
        echo "=== pytest tests/python"
        (cd "$B/kmini" && PYTHONPATH="$pypath" KMINI_BINARY="$kmini" \
          timeout "$(cap 240)" "$python" -m pytest -q -p no:cacheprovider -rs tests/python)
        echo "pytest: exit $?"
        # comm=: one problem over 2 ranks of an mpi4py communicator sharing the GPU
        # (the ctest python.kmini_comm*_np2 of a source build).
        for script in mpi_comm.py mpi_comm_ring.py; do
          echo "=== $script at 2 ranks"
          (cd "$B/kmini" && PYTHONPATH="$pypath" timeout "$(cap 60)" "$mpiexec" -n 2 "$python" "tests/python/$script")
          echo "$script: exit $?"
        done
      } >"$res/python.txt" 2>&1
      say "python: $(grep -aE '^=== versions' -A4 "$res/python.txt" | tail -4 | tr '\n' ';')"
      say "python: pytest exit $(sed -n 's/^pytest: exit //p' "$res/python.txt") in $(($(date +%s) - t0)) s: $(grep -aE '(passed|failed|error)' "$res/python.txt" | grep -aE ' in [0-9.]+s' | tail -1)"
      say "python: comm= at 2 ranks: $(grep -aE '^mpi_comm(_ring)?\.py: exit' "$res/python.txt" | tr '\n' ' ')"
    else
      tail -40 "$log/python_build.log" >"$res/python.txt"
    fi
  fi
fi

# --- 2. the default deck at 1 and 2 ranks, every bench deck -----------------------------------
run_deck() {  # name np deck-or-empty [kmini args...]
  local name=$1 np=$2 deck=$3; shift 3
  local dir=$work/runs/$name t0 rc
  enough 10 "deck $name" || return 0
  mkdir -p "$dir"
  t0=$(date +%s)
  (cd "$B/kmini" && timeout "$(cap 150)" "$mpiexec" -n "$np" "$kmini" $deck --out "$dir" "$@") >"$log/$name.log" 2>&1
  rc=$?
  local verified
  verified=$(grep -o '"verified": *[a-z]*' "$dir/results.json" 2>/dev/null | sort | uniq -c | tr -s ' ' | tr '\n' ',')
  say "deck $name (np $np): exit $rc in $(($(date +%s) - t0)) s; verified counts: ${verified:-no results.json}"
  # gram with its roof: the engine, the kernel and the fraction of the probe of the instruction it issued.
  local fom
  fom=$("${python:-python3}" - "$dir/results.json" 2>/dev/null <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))["kernels"].get("gram") or {}
if g.get("fraction_of_peak") is not None:
    kernel = " ".join(k for k in (g.get("engine"), g.get("tensor_core_tile")) if k)
    print("gram %s: %.3g useful bit-ops/s, %.1f %% of the %s probe" % (
        kernel, g["useful_bit_ops_per_s"], 100 * g["fraction_of_peak"],
        g.get("probe_tensor_core_instruction") or ("tensor-core" if g.get("engine") == "tensor_core" else "AND+popcount")))
PY
)
  [[ -n $fom ]] && say "  $fom"
  return 0
}
if want decks; then
  run_deck default_np1 1 ""
  run_deck default_np2 2 ""
fi
if want bench; then
  for d in "$B"/kmini/inputs/bench/*.yaml; do
    rel=${d#"$B"/kmini/}
    run_deck "bench_$(basename "$d" .yaml)" 1 "$rel"
  done
fi

if want peers && [[ $backend == hip ]]; then
  say "skipped: peers: numba-cuda, CuPy and PyTorch on CUDA are the peers; none for a hip bundle"
elif want peers && enough 30 "peers"; then
  t0=$(date +%s)
  (cd "$B/kmini" && timeout "$(cap 300)" "$python" benchmarks/peers.py --kmini "$kmini" --out "$work/runs/peers") \
    >"$log/peers.log" 2>&1
  say "peers: exit $? in $(($(date +%s) - t0)) s"
  cp "$work/runs/peers/peers.json" "$res/peers.json" 2>/dev/null
  rm -f "$work/runs/peers"/*.npy "$work/runs/peers"/*/*.npy
fi


# --- gpu_decks: the GPU sizes and variants (inputs/gpu/*.yaml), then every tensor-core tile --------
if want gpu_decks; then
  for d in "$B"/kmini/inputs/gpu/*.yaml; do
    rel=${d#"$B"/kmini/}
    run_deck "gpu_$(basename "$d" .yaml)" 1 "$rel"
  done
  # The tensor-core engine's kernels side by side on the tensor-core decks: every
  # gram.tensor_core_tile choice that `kmini describe --json` declares.
  if [[ $backend == cuda ]]; then
    tiles=$("$kmini" describe gram --json 2>/dev/null | "${python:-python3}" -c '
import json, sys
keys = json.load(sys.stdin)["kernels"][0]["keys"]
print(" ".join(o for k in keys if k["key"] == "gram.tensor_core_tile" for o in k["options"] if o != "auto"))')
    for t in $tiles; do
      for d in "$B"/kmini/inputs/gpu/gram*tensor_core*.yaml; do
        rel=${d#"$B"/kmini/}
        run_deck "gpu_$(basename "$d" .yaml)_$t" 1 "$rel" --set "gram.tensor_core_tile=$t"
      done
    done
  fi
fi

# --- the rest of the suite, with the time that is left ------------------------------------------
if want tests && enough 60 "the rest of the test suite"; then
  if ((device_ran)); then
    run_ctest rest "${KMINI_CTEST_TIMEOUT:-300}" -LE device
  else
    run_ctest all "${KMINI_CTEST_TIMEOUT:-300}"
  fi
fi

# --- profile: why rk4 and discount stop short of the stream roof
# (docs/performance.md): Nsight Systems' kernel trace (durations and the gaps between a
# step's launches) and Nsight Compute's throughput, occupancy and launch sections of the
# step kernels (kernel names are the functors', kmini::...). profile.txt; either tool
# missing or refused (performance counters) is said there. --------------------------------
if want profile && [[ $backend == cuda ]] && enough 40 "profile"; then
  find_tool() { command -v "$1" || ls /usr/local/cuda/bin/"$1" /opt/nvidia/nsight-*/*/"$1" /usr/local/cuda/nsight-*/"$1" 2>/dev/null | head -1; }
  nsys_bin=$(find_tool nsys); ncu_bin=$(find_tool ncu)
  prof=$work/runs/profile
  mkdir -p "$prof"
  # The kernels with a profile setting in their declaration (profile_run), unverified: the
  # profile reads the kernels, not the host reference.
  mapfile -t prof_kernels < <(declared profile_run)
  {
    echo "nsys: ${nsys_bin:-not found}"
    echo "ncu: ${ncu_bin:-not found}"
    echo "kernels with a profile setting: ${prof_kernels[*]:-none (kmini describe --json gave none)}"
    for k in "${prof_kernels[@]}"; do
      settings args profile_run "$k"
      args+=(--set run.verify=false)
      if [[ -n $nsys_bin ]] && enough 20 "profile nsys $k"; then
        echo "=== nsys $k"
        (cd "$B/kmini" && timeout "$(cap 60)" "$nsys_bin" profile -t cuda -o "$prof/$k" --force-overwrite true \
          "$kmini" "${args[@]}" --out "$prof/out_$k" >/dev/null 2>&1 &&
          timeout "$(cap 40)" "$nsys_bin" stats -q --report cuda_gpu_kern_sum --report cuda_api_sum --format csv \
            "$prof/$k.nsys-rep" 2>&1 | head -60
          timeout "$(cap 20)" "$nsys_bin" stats -q --report cuda_gpu_trace --format csv "$prof/$k.nsys-rep" 2>&1 |
            grep -E 'kmini|Name' | tail -40)
        echo "nsys $k: exit $?"
      fi
      if [[ -n $ncu_bin ]] && enough 30 "profile ncu $k"; then
        echo "=== ncu $k"
        (cd "$B/kmini" && timeout "$(cap 90)" "$ncu_bin" --kernel-name-base demangled -k "regex:kmini::$k" \
          --launch-skip 4 --launch-count 4 --section SpeedOfLight --section MemoryWorkloadAnalysis \
          --section Occupancy --section LaunchStats "$kmini" "${args[@]}" --out "$prof/ncu_$k" 2>&1 |
          grep -vE '^\s*$' | tail -150)
        echo "ncu $k: exit $?"
      fi
    done
  } >"$res/profile.txt" 2>&1
  say "profile: $(grep -cE '^(nsys|ncu) [a-z0-9]+: exit 0' "$res/profile.txt") of $((2 * ${#prof_kernels[@]})) profiles ran (profile.txt)"
  rm -f "$prof"/*.sqlite
fi

# --- 3. compute-sanitizer on a short deck of each kernel (the probes excluded: they
# only measure, and gram's took racecheck past 150 s on a 70 x 300 deck) ---------------------------------------
if want sanitizer && [[ $backend == cuda ]]; then
  cs=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null | head -1)
  if [[ -z $cs ]]; then
    say "skipped: compute-sanitizer: not found on the GPU machine"
  else
    # Each kernel at the small size its declaration gives (small_run): the sanitizers slow a
    # run a hundredfold.
    mapfile -t short_kernels < <(declared small_run)
    ((${#short_kernels[@]})) || say "skipped: compute-sanitizer: no kernel declares a small run (kmini describe --json)"
    for tool in memcheck racecheck; do
      for k in "${short_kernels[@]}"; do
        enough 20 "compute-sanitizer $tool $k" || continue
        settings args small_run "$k"
        dir=$work/runs/sanitizer_${tool}_$k
        mkdir -p "$dir"
        (cd "$B/kmini" && timeout "$(cap 150)" "$cs" --tool "$tool" --error-exitcode 99 --kernel-name-exclude kns=probe "$kmini" "${args[@]}" --out "$dir") \
          >"$log/sanitizer_${tool}_$k.log" 2>&1
        rc=$?
        say "compute-sanitizer $tool $k: exit $rc; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log/sanitizer_${tool}_$k.log" | tail -1)"
      done
    done
    cat "$log"/sanitizer_*.log | grep -E 'SUMMARY|Invalid|Race|error' | head -80 >"$res/sanitizer.log"
  fi
fi

# --- pack -----------------------------------------------------------------------------------------
say "total: $(elapsed) s"
find "$work/runs" -name '*.npy' -size +1M -delete 2>/dev/null
tar -C "$work" -czf "$res/results.tar.gz" logs runs 2>/dev/null
ls -la "$res" >>"$summary"
# The results name the bundle <bundle>, not this machine's path to it (they get committed).
for f in "$res"/*.txt "$res"/*.log; do
  if [[ -f $f ]]; then sed -i "s|$B/|<bundle>/|g" "$f"; fi
done
