#!/usr/bin/python3
"""Runs kmini's discount bench deck and numpy's broadcast multiply on the same
arrays (the deck's arange inputs), checks that cv agrees bitwise, and prints
the time ratio.

usage: benchmarks/compare_numpy_discount.py [--kmini build/bin/kmini]
           [--deck inputs/bench/discount.yaml] [--out DIR] [--set KEY=VALUE]...

Timings are best-of-`repeat` for both sides: kmini's kernel-only time
(results.json kernels.discount.kernel.best_seconds) against
np.multiply(mult_by, discount, out=cv) with a preallocated output, and, for
reference, the allocating expression mult_by * discount.
Exit status: 0 agreement, 1 disagreement or kmini failure, 2 bad usage.
"""
import argparse
import os
import sys
import tempfile
import time

import numpy as np

# kmini_results, the scripts' shared module, is in scripts/.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts"))
from kmini_results import SPEEDUP_LINE, get, load, run_kmini  # noqa: E402


def arange(n, dtype, shape):
    # int64 -> float conversion rounds like kmini's static_cast<T>(index).
    return np.arange(n, dtype=np.int64).astype(dtype).reshape(shape)


def best_of(repeat, fn):
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kmini", default="build/bin/kmini")
    p.add_argument("--deck", default="inputs/bench/discount.yaml")
    p.add_argument("--out", default=None, help="output folder (default: a temporary one)")
    p.add_argument("--set", action="append", default=[], help="extra kmini --set overrides")
    a = p.parse_args()
    if not os.access(a.kmini, os.X_OK) or not os.path.isfile(a.deck):
        print(f"compare_numpy_discount: need an executable {a.kmini} and a deck {a.deck}", file=sys.stderr)
        return 2

    with tempfile.TemporaryDirectory(prefix="kmini-numpy-") as tmp:
        out = a.out or tmp
        cmd = [a.kmini, a.deck, "--out", out, "--set", "discount.write.cv=cv.npy"]
        for s in a.set:
            cmd += ["--set", s]
        if not run_kmini(cmd, "compare_numpy_discount"):
            return 1
        results = load(os.path.join(out, "results.json"))
        deck = results["deck"]["discount"]
        k = get(results, "kernels", "discount")
        if k["inputs"] != {"mult_by": "arange", "discount": "arange"}:
            print("the deck's inputs must be arange for numpy to rebuild them", file=sys.stderr)
            return 2
        if deck.get("reduce", "none") != "none" or results["mpi"]["ranks"] != 1:
            print("compare a single-rank run with reduce: none", file=sys.stderr)
            return 2
        D, M, O, repeat = deck["dates"], deck["ids"], deck["terms"], deck["repeat"]
        dtype = np.float32 if deck["precision"] == "single" else np.float64

        mult_by = arange(M * O, dtype, (M, O))
        discount = arange(D * M * O, dtype, (D, M, O))
        cv = np.empty_like(discount)
        np_out = best_of(repeat, lambda: np.multiply(mult_by, discount, out=cv))
        np_alloc = best_of(min(repeat, 3), lambda: mult_by * discount)
        np.multiply(mult_by, discount, out=cv)
        kmini_cv = np.load(os.path.join(out, "cv.npy"), mmap_mode="r")
        same = kmini_cv.shape == cv.shape and kmini_cv.dtype == cv.dtype and np.array_equal(kmini_cv, cv)
        del kmini_cv

    nbytes = discount.nbytes * 2 + mult_by.nbytes
    kernel = k["kernel"]["best_seconds"]
    roof = k["kernel"]["roof_bandwidth_bytes_per_s"]
    print(f"arrays: D x M x O = {D} x {M} x {O} {np.dtype(dtype).name}, {nbytes / 2**20:.0f} MiB moved per pass, "
          f"best of {repeat}")
    print(f"stream roof (kmini, same run):      {roof / 1e9:8.2f} GB/s")
    print(f"kmini kernel-only:                  {kernel:8.4f} s  {nbytes / kernel / 1e9:6.2f} GB/s  "
          f"({k['kernel']['fraction_of_roof'] * 100:.0f}% of roof)")
    print(f"kmini end-to-end (with transfers):  {k['end_to_end']['best_seconds']:8.4f} s")
    print(f"numpy np.multiply(out=cv):          {np_out:8.4f} s  {nbytes / np_out / 1e9:6.2f} GB/s  "
          f"({nbytes / np_out / roof * 100:.0f}% of roof)")
    print(f"numpy mult_by * discount (allocs):  {np_alloc:8.4f} s  {nbytes / np_alloc / 1e9:6.2f} GB/s")
    print(f"ratio numpy(out=) / kmini kernel:   {np_out / kernel:8.3f}  (> 1: kmini faster)")
    print(f"ratio numpy(alloc) / kmini kernel:  {np_alloc / kernel:8.3f}")
    print(f"{SPEEDUP_LINE} {np_out / kernel:.4g}")
    print(f"cv agrees bitwise with numpy:       {'yes' if same else 'NO'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
