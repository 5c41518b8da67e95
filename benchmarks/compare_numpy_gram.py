#!/usr/bin/python3
"""The gram outside baseline: numpy's float32 GEMM (OpenBLAS, one thread) on the
same 0/1 matrix as kmini's bit-packed Gram product, with an exact check.

usage: benchmarks/compare_numpy_gram.py [--kmini build/bin/kmini]
           [--deck inputs/bench/gram.yaml] [--panel 512] [--out DIR]

numpy draws A (rows x cols of the deck's `gram.A: {random: ...}`, its density)
as uint8 and saves it; kmini runs the deck on that file (no baseline, verified,
write.C); numpy times A[:panel] @ A.T in float32 (best of 3) and the rows of
kmini's C.npy must equal it exactly (counts below 2^24 are exact in float32).
Figures: kmini's useful bit-ops/s (rows x rows x cols / its slice loop) and
numpy's multiply-adds/s (one useful bit-op is one multiply-add of the GEMM);
the ratio is kmini / numpy.

The BLAS: numpy links libblas.so.3. Where an OpenBLAS is found ($KMINI_OPENBLAS_DIR,
else Debian's libopenblas0-serial, else libopenblas0-pthread, each a folder
holding libblas.so.3), the script runs itself with it first on LD_LIBRARY_PATH,
single-threaded, whatever the system default; otherwise numpy's default BLAS is
used and named in the output. The numpy process runs as a user's machine would:
without OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE (set on the development machines
to force the Haswell kernels; kmini itself keeps them), with OPENBLAS_VERBOSE=2,
and prints the OpenBLAS core that ran (openblas_get_corename).
Exit status: 0 agreement, 1 disagreement or kmini failure, 2 bad usage, 77 skipped (no
numpy/yaml, or A above 2^28 cells).
"""
import argparse
import os
import sys
import tempfile
import time

# kmini_results, the scripts' shared module, is in scripts/.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts"))
from kmini_results import OPENBLAS_FORCING, SPEEDUP_LINE, baseline_env, kernel, load, run_kmini  # noqa: E402

OPENBLAS_DIRS = [d for d in (os.environ.get("KMINI_OPENBLAS_DIR"), "/usr/lib/x86_64-linux-gnu/openblas-serial",
                             "/usr/lib/x86_64-linux-gnu/openblas-pthread") if d]
OPENBLAS_DIR = next((d for d in OPENBLAS_DIRS if os.path.isfile(os.path.join(d, "libblas.so.3"))), None)

if os.environ.get("KMINI_GRAM_BLAS_SET") != "1":
    # The loader reads LD_LIBRARY_PATH, and OpenBLAS its variables, at start-up
    # only: run again with them (the forcing variables cleared for this process).
    # --keep-openblas-forcing: OpenBLAS forced onto the kernel the calling environment names, for comparison only.
    keep = "--keep-openblas-forcing" in sys.argv
    env = dict(os.environ if keep else baseline_env(), KMINI_GRAM_BLAS_SET="1", OPENBLAS_NUM_THREADS="1",
               OPENBLAS_VERBOSE="2")
    if OPENBLAS_DIR:
        env["LD_LIBRARY_PATH"] = OPENBLAS_DIR + os.pathsep + os.environ.get("LD_LIBRARY_PATH", "")
    sys.stdout.flush()
    os.execve(sys.executable, [sys.executable] + sys.argv, env)

try:
    import numpy as np
    import yaml
except ImportError as e:
    print(f"compare_numpy_gram: skipped, {e} (run with /usr/bin/python3)")
    sys.exit(77)

kMaxCells = 1 << 28


def blas_in_use():
    # The BLAS library this process actually mapped (after a first GEMM).
    with open("/proc/self/maps") as f:
        libs = sorted({line.split()[-1] for line in f if "blas" in line.lower() and ".so" in line})
    return ", ".join(os.path.basename(l) + " (" + os.path.dirname(l) + ")" for l in libs) or "unknown"


def openblas_core():
    # The core OpenBLAS chose (or was forced to) in this process, from the loaded library itself.
    import ctypes
    with open("/proc/self/maps") as f:
        libs = sorted({line.split()[-1] for line in f if "openblas" in line.lower() and ".so" in line})
    for lib in libs:
        try:
            fn = ctypes.CDLL(lib).openblas_get_corename
        except (OSError, AttributeError):
            continue
        fn.restype = ctypes.c_char_p
        return fn().decode()
    return "not OpenBLAS"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kmini", default="build/bin/kmini")
    p.add_argument("--deck", default="inputs/bench/gram.yaml")
    p.add_argument("--panel", type=int, default=512, help="rows of A timed against all of A in numpy")
    p.add_argument("--out", default=None, help="output folder (default: a temporary one)")
    p.add_argument("--keep-openblas-forcing", action="store_true",
                   help="leave OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE set for numpy (comparison only)")
    a = p.parse_args()
    if not os.access(a.kmini, os.X_OK) or not os.path.isfile(a.deck) or a.panel < 1:
        print(f"compare_numpy_gram: need an executable {a.kmini}, a deck {a.deck} and --panel >= 1", file=sys.stderr)
        return 2
    with open(a.deck) as f:
        spec = (yaml.safe_load(f).get("gram") or {}).get("A") or {}
    rnd = spec.get("random") if isinstance(spec, dict) else None
    if not rnd:
        print(f"compare_numpy_gram: {a.deck}: gram.A is not {{random: ...}}", file=sys.stderr)
        return 2
    rows, cols, density = int(rnd["rows"]), int(rnd["cols"]), float(rnd.get("density", 0.5))
    panel = min(a.panel, rows)
    if rows * cols > kMaxCells:
        print(f"compare_numpy_gram: skipped, A of {rows} x {cols} is above the numpy baseline's {kMaxCells} cells "
              "(float32 A alone would take more than 1 GiB)")
        return 77

    with tempfile.TemporaryDirectory(prefix="kmini-numpy-gram-") as tmp:
        out = a.out or tmp
        os.makedirs(out, exist_ok=True)
        A = (np.random.default_rng(int(rnd.get("seed", 1))).random((rows, cols)) < density).astype(np.uint8)
        a_path = os.path.join(out, "A.npy")
        np.save(a_path, A)
        kout = os.path.join(out, "kmini")
        cmd = [a.kmini, a.deck, "--out", kout, "--set", "gram.A={file: %s}" % a_path, "--set", "gram.baseline=false",
               "--set", "run.verify=true", "--set", "gram.write.C=C.npy"]
        if not run_kmini(cmd, "compare_numpy_gram"):
            return 1
        m = kernel(load(os.path.join(kout, "results.json")), "gram")
        kmini_rate = m["useful_bit_ops_per_s"]

        Af = A.astype(np.float32)
        best, P = float("inf"), None
        for _ in range(3):
            t = time.perf_counter()
            P = Af[:panel] @ Af.T
            best = min(best, time.perf_counter() - t)
        numpy_rate = panel * rows * cols / best
        C = np.load(os.path.join(kout, "C.npy"), mmap_mode="r")
        same = np.array_equal(np.asarray(C[:panel], dtype=np.int64), P.astype(np.int64))

    print(f"A: {rows} x {cols}, density {density}; numpy panel {panel} rows x all {rows}")
    print(f"BLAS: {blas_in_use()}, OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}")
    forced = {n: os.environ.get("KMINI_SAVED_" + n) for n in OPENBLAS_FORCING if os.environ.get("KMINI_SAVED_" + n)}
    if a.keep_openblas_forcing:
        print(f"OpenBLAS core: {openblas_core()} (FORCED: OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE')}, "
              f"OPENBLAS_L2_SIZE={os.environ.get('OPENBLAS_L2_SIZE')}; --keep-openblas-forcing)")
    else:
        print(f"OpenBLAS core: {openblas_core()} (chosen by OpenBLAS for this CPU; cleared for numpy only: "
              f"{', '.join(f'{n}={v}' for n, v in forced.items()) or 'none was set'})")
    if not OPENBLAS_DIR:
        print("  (not OpenBLAS: for the OpenBLAS baseline, apt-get install libopenblas0-serial, or set "
              "KMINI_OPENBLAS_DIR to a folder with OpenBLAS's libblas.so.3; the script then uses it for numpy only)")
    print(f"kmini gram: {kmini_rate:.3e} useful bit-ops/s (slice loop, verified: {m.get('verified')})")
    print(f"numpy float32 GEMM: {numpy_rate:.3e} multiply-adds/s ({best:.3f} s for the panel)")
    print(f"C rows 0..{panel - 1} equal to numpy's: {same}")
    print(f"ratio kmini / numpy: {kmini_rate / numpy_rate:.2f}x")
    print(f"{SPEEDUP_LINE} {kmini_rate / numpy_rate:.4g}")
    return 0 if same and m.get("verified") else 1


if __name__ == "__main__":
    sys.exit(main())
