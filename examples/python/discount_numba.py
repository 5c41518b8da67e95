#!/usr/bin/env python3
"""The users' discount program in numba: cv[d, i, n] = multBy[i, n] * discount[d, i, n], written by
its author as a numba guvectorize over the dates (here on the CPU target), beside
the one kmini call on the same data. Prints both times; exit 1 if they disagree.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/discount_numba.py [--dates D --ids M --terms O]
"""
import argparse
import sys

import numpy as np

import kmini
from numba_common import best_of, numba_or_skip, report


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dates", type=int, default=400)
    ap.add_argument("--ids", type=int, default=4000)
    ap.add_argument("--terms", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    numba = numba_or_skip()
    if numba is None:
        return 77
    guvectorize = numba.guvectorize

    # The program's kernel: one date per call, every (i, n) of it.
    @guvectorize(["void(f8[:, :], f8[:, :], f8[:, :])"], "(m,o),(m,o)->(m,o)", target="cpu", nopython=True)
    def discount_numba(mult_by, discount, cv):
        for i in range(mult_by.shape[0]):
            for n in range(mult_by.shape[1]):
                cv[i, n] = mult_by[i, n] * discount[i, n]

    r = np.random.default_rng(1)
    mult_by = r.random((args.ids, args.terms))
    discount = r.random((args.dates, args.ids, args.terms))
    numba_out = np.empty_like(discount)
    kmini_out = np.empty_like(discount)
    discount_numba(mult_by, discount, numba_out)  # compiles
    kmini.discount(mult_by, discount, out=kmini_out)

    t_numba = best_of(lambda: discount_numba(mult_by, discount, numba_out), args.repeat)
    t_kmini = best_of(lambda: kmini.discount(mult_by, discount, out=kmini_out), args.repeat)
    gb = 3 * discount.nbytes / 1e9
    return report(f"discount {args.dates} x {args.ids} x {args.terms} (float64, {gb:.2f} GB moved per call), "
                  f"best of {args.repeat}:", "numba guvectorize (cpu):", t_numba, "kmini.discount:", t_kmini,
                  lambda t: f"{gb / t:6.2f} GB/s", "results identical", np.array_equal(numba_out, kmini_out))


if __name__ == "__main__":
    sys.exit(main())
