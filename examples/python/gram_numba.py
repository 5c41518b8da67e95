#!/usr/bin/env python3
"""The users' gram program in numba: C = A A^T of a 0/1 matrix, written by its author as numba's
documented shared-memory float32 matrix product (here its CPU form: the same
16 x 16 tiles, in njit loops over a float32 copy of A), beside the one kmini call
on the packed bits. Prints both times; exit 1 if C differs.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/gram_numba.py [--rows R --cols K]
"""
import argparse
import sys

import numpy as np

import kmini
from numba_common import best_of, numba_or_skip, report


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1000)
    ap.add_argument("--cols", type=int, default=4096)
    ap.add_argument("--density", type=float, default=0.3)
    args = ap.parse_args()
    numba = numba_or_skip()
    if numba is None:
        return 77
    njit = numba.njit
    prange = numba.prange

    TPB = 16

    @njit(parallel=True)
    def tiled_matmul(A, B, C):
        # The program's kernel, one 16 x 16 tile of C per iteration, A and B^T in 16 x 16 blocks.
        rows, k, cols = A.shape[0], A.shape[1], B.shape[1]
        tiles_i, tiles_j = (rows + TPB - 1) // TPB, (cols + TPB - 1) // TPB
        for t in prange(tiles_i * tiles_j):
            ti, tj = t // tiles_j, t % tiles_j
            acc = np.zeros((TPB, TPB), np.float32)
            for k0 in range(0, k, TPB):
                for y in range(TPB):
                    i = ti * TPB + y
                    if i >= rows:
                        continue
                    for x in range(TPB):
                        j = tj * TPB + x
                        if j >= cols:
                            continue
                        s = np.float32(0)
                        for kk in range(k0, min(k0 + TPB, k)):
                            s += A[i, kk] * B[kk, j]
                        acc[y, x] += s
            for y in range(TPB):
                for x in range(TPB):
                    i, j = ti * TPB + y, tj * TPB + x
                    if i < rows and j < cols:
                        C[i, j] = acc[y, x]

    A = np.random.default_rng(7).random((args.rows, args.cols)) < args.density
    A32 = A.astype(np.float32)
    AT32 = np.ascontiguousarray(A32.T)
    C32 = np.empty((args.rows, args.rows), np.float32)
    # Compiles (for the same array types: C-contiguous 2-D float32).
    tiled_matmul(A32[:TPB].copy(), np.ascontiguousarray(AT32[:, :TPB]), np.empty((TPB, TPB), np.float32))
    t_numba = best_of(lambda: tiled_matmul(A32, AT32, C32), 1)
    packed = np.packbits(A, axis=1)
    kmini.gram(packed[:2], cols=args.cols)  # starts Kokkos
    result = []
    t_kmini = best_of(lambda: result.append(kmini.gram(packed, cols=args.cols).C), 1)
    useful = args.rows * args.rows * args.cols
    return report(f"gram {args.rows} x {args.cols}, density {args.density}:", "numba 16x16-tiled float32 (cpu):",
                  t_numba, "kmini.gram (packed bits):", t_kmini, lambda t: f"{useful / t:10.3e} useful bit-ops/s",
                  "C identical", np.array_equal(result[0], C32.astype(np.int64)))


if __name__ == "__main__":
    sys.exit(main())
