#!/bin/bash
# cmake --install of a build tree into a fresh prefix, then the installed kmini alone:
# `kmini --data-dir` is PREFIX/share/kmini, which holds the decks, examples, scripts and benchmarks,
# and a deck from there runs and verifies (results.json). The prefix is also moved, to
# check the executable-relative lookup (a relocated install still finds its decks).
# usage: check_install.sh BUILD_DIR WORK_DIR [MPIEXEC FLAGS...]
set -euo pipefail
build=$1 work=$2
rm -rf "$work"; mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }
cmake --install "$build" --prefix "$work/prefix" > "$work/install.log" || { cat "$work/install.log"; fail "cmake --install"; }
kmini=$work/prefix/bin/kmini
[ -x "$kmini" ] || fail "no $kmini"
dir=$("$kmini" --data-dir)
[ "$dir" = "$work/prefix/share/kmini" ] || fail "--data-dir printed '$dir', expected $work/prefix/share/kmini"
for f in inputs/default.yaml inputs/bench/gram.yaml examples/python/gram_numba.py scripts/bench.py \
         scripts/slurm/kmini.sbatch scripts/slurm/scaling.sbatch; do
  [ -f "$dir/$f" ] || fail "$dir/$f not installed"
done
[ -x "$dir/scripts/bench.sh" ] || fail "$dir/scripts/bench.sh is not executable"
for f in benchmarks/README.md benchmarks/compare_numpy_gram.py benchmarks/peers.py; do
  [ -f "$dir/$f" ] || fail "$dir/$f not installed"
done
# bench.py's baselines are installed where it looks (ROOT/benchmarks), and a
# benchmark finds the scripts' shared module (scripts/kmini_results.py) from there.
python3 "$dir/benchmarks/bench_rk4_methods.py" --help > /dev/null || fail "$dir/benchmarks/bench_rk4_methods.py --help"
# A small run of an installed deck: every kernel verified.
"$kmini" "$dir/inputs/bench/stream.yaml" --set stream.n=100000 --out "$work/run" > "$work/run.log" 2>&1 \
  || { cat "$work/run.log"; fail "kmini $dir/inputs/bench/stream.yaml"; }
python3 - "$work/run/results.json" <<'PY' || fail "results.json"
import json, sys
kernels = json.load(open(sys.argv[1]))["kernels"]
bad = [k for k, v in kernels.items() if v.get("verified") is not True]
assert kernels and not bad, f"not verified: {bad or 'no kernels'}"
print("verified:", ", ".join(kernels))
PY
# Relocated: the prefix moved, --data-dir follows the executable.
mv "$work/prefix" "$work/moved"
dir=$("$work/moved/bin/kmini" --data-dir)
[ "$dir" = "$work/moved/share/kmini" ] || fail "moved prefix: --data-dir printed '$dir', expected $work/moved/share/kmini"
echo "installed kmini finds its data in share/kmini, also after the prefix moved"
