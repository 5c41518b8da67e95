#!/usr/bin/env python3
"""The users' rk4 program in numba: RK4 for the coupled fields F, G with delta = g * sum(F), written
by its author as numba kernels (stage and combine) called from a Python loop that
copies F and G out and sums F on the host every step (here on the CPU target:
numba njit kernels, the copies as the program made them), beside the one kmini call.
Prints both times; exit 1 if the delta histories disagree.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/rk4_numba.py [--n N --steps S]
"""
import argparse
import sys

import numpy as np

import kmini
from numba_common import best_of, numba_or_skip, report


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=256)
    ap.add_argument("--steps", type=int, default=200)
    args = ap.parse_args()
    numba = numba_or_skip()
    if numba is None:
        return 77
    njit = numba.njit

    n, steps, dt = args.n, args.steps, 1e-4
    g = 1.0 / (n * n)

    @njit(cache=False)
    def stage(F, G, Fin, Gin, kF, kG, Fout, Gout, d, h):
        for i in range(F.shape[0]):
            for j in range(F.shape[1]):
                f = Fin[i, j]
                gg = Gin[i, j]
                dF = -2j * f - 1j * d * (2 * gg - 1)
                dG = -1j * (d.conjugate() * f - d * f.conjugate())
                kF[i, j] = dF
                kG[i, j] = dG
                Fout[i, j] = F[i, j] + h * dF
                Gout[i, j] = G[i, j] + h * dG

    @njit(cache=False)
    def combine(F, G, k1F, k1G, k2F, k2G, k3F, k3G, k4F, k4G, dt):
        for i in range(F.shape[0]):
            for j in range(F.shape[1]):
                F[i, j] += dt / 6 * (k1F[i, j] + 2 * k2F[i, j] + 2 * k3F[i, j] + k4F[i, j])
                G[i, j] += dt / 6 * (k1G[i, j] + 2 * k2G[i, j] + 2 * k3G[i, j] + k4G[i, j])

    rng = np.random.default_rng(3)
    F0 = ((rng.random((n, n)) - 0.4) + 1j * (rng.random((n, n)) - 0.5)).astype(np.complex64)
    G0 = rng.random((n, n)).astype(np.complex64)

    def numba_loop(steps):
        F, G = F0.copy(), G0.copy()
        delta = np.complex64(1.0)
        hist = [complex(delta)]
        for _ in range(steps):
            dF, dG = F.copy(), G.copy()  # the program's per-step copies (to the device, there)
            ks = [np.empty((n, n), np.complex64) for _ in range(8)]
            Fs, Gs = np.empty((n, n), np.complex64), np.empty((n, n), np.complex64)
            for s, h in enumerate((dt / 2, dt / 2, dt, 0.0)):
                Fin, Gin = (dF, dG) if s == 0 else (Fs, Gs)  # element-wise: in place is safe
                stage(dF, dG, Fin, Gin, ks[2 * s], ks[2 * s + 1], Fs, Gs, np.complex64(delta), np.float32(h))
            combine(dF, dG, *ks, np.float32(dt))
            F, G = dF.copy(), dG.copy()  # and back to the host
            delta = np.complex64(g * F.sum())  # summed on the host, as the program did
            hist.append(complex(delta))
        return np.array(hist)

    numba_loop(1)  # compiles
    numba_hist = numba_loop(steps)
    t_numba = best_of(lambda: numba_loop(steps), 1)
    kmini.rk4(F0, G0, steps=1, dt=dt, g=g, delta0=1.0)  # starts Kokkos
    _, _, kmini_hist = kmini.rk4(F0, G0, steps=steps, dt=dt, g=g, coupling="per_step", delta0=1.0)
    t_kmini = best_of(lambda: kmini.rk4(F0, G0, steps=steps, dt=dt, g=g, coupling="per_step", delta0=1.0), 1)
    rel = float(np.max(np.abs(kmini_hist - numba_hist) / np.maximum(np.abs(numba_hist), 1e-30)))
    es = n * n * steps
    # Single precision, different summation orders: agreement within 1e-3.
    return report(f"rk4 n = {n}, {steps} steps, single precision, per_step coupling:", "numba per-step loop (cpu):",
                  t_numba, "kmini.rk4:", t_kmini, lambda t: f"{es / t:10.3e} element-steps/s",
                  f"delta histories agree within {rel:.1e} (relative)", rel < 1e-3)


if __name__ == "__main__":
    sys.exit(main())
