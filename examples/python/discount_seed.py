#!/usr/bin/env python3
"""The discount seed: cv[d, i, n] = multBy[i, n] * discount[d, i, n], written by
its author as a numba guvectorize over the dates (here on the CPU target), beside
the one kmini call on the same data. Prints both times; exit 1 if they disagree.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/discount_seed.py [--dates D --ids M --terms O]
"""
import argparse
import sys
import time

import numpy as np

import kmini


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dates", type=int, default=400)
    ap.add_argument("--ids", type=int, default=4000)
    ap.add_argument("--terms", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    try:
        from numba import guvectorize
    except ImportError:
        print("skipped: no numba (Debian: python3-numba)")
        return 77

    # The seed's kernel: one date per call, every (i, n) of it.
    @guvectorize(["void(f8[:, :], f8[:, :], f8[:, :])"], "(m,o),(m,o)->(m,o)", target="cpu", nopython=True)
    def discount_seed(mult_by, discount, cv):
        for i in range(mult_by.shape[0]):
            for n in range(mult_by.shape[1]):
                cv[i, n] = mult_by[i, n] * discount[i, n]

    r = np.random.default_rng(1)
    mult_by = r.random((args.ids, args.terms))
    discount = r.random((args.dates, args.ids, args.terms))
    seed_out = np.empty_like(discount)
    kmini_out = np.empty_like(discount)
    discount_seed(mult_by, discount, seed_out)  # compiles
    kmini.discount(mult_by, discount, out=kmini_out)

    def best(fn):
        times = []
        for _ in range(args.repeat):
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
        return min(times)

    t_seed = best(lambda: discount_seed(mult_by, discount, seed_out))
    t_kmini = best(lambda: kmini.discount(mult_by, discount, out=kmini_out))
    agree = np.array_equal(seed_out, kmini_out)
    gb = 3 * discount.nbytes / 1e9
    print(f"discount {args.dates} x {args.ids} x {args.terms} (float64, {gb:.2f} GB moved per call), best of {args.repeat}:")
    print(f"  numba guvectorize (cpu): {t_seed * 1e3:8.2f} ms  {gb / t_seed:6.2f} GB/s")
    print(f"  kmini.discount:          {t_kmini * 1e3:8.2f} ms  {gb / t_kmini:6.2f} GB/s  ({t_seed / t_kmini:.2f}x)")
    print(f"  results {'identical' if agree else 'DIFFER'}")
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
