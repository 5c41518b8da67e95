#!/usr/bin/python3
"""Runs kmini's rk4 bench deck and the same problem as a plain numpy RK4 loop
(the original formulation's CPU baseline), checks that the delta histories
agree, and prints the time ratio.

usage: benchmarks/compare_numpy.py rk4 [--kmini build/bin/kmini]
           [--deck inputs/bench/rk4.yaml] [--n 1024] [--steps 100]
           [--precision single|double] [--out DIR] [--set KEY=VALUE]...

Both sides start from the same initial fields: this script writes F0.npy
(random complex, non-zero mean) and G0.npy (random real) and passes them to kmini as
rk4.init.F/G files. dt, g, delta0 and the coupling mode come from the deck
(kmini's results.json), and so does the model: a deck with rk4.kerr != 0 is
compared with a numpy RK4 of the Kerr model. Timings: kmini's time loop (results.json
kernels.rk4.loop_seconds) against numpy's time loop, both excluding setup.
Exit status: 0 agreement, 1 disagreement or kmini failure, 2 bad usage.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

# kmini_results, the scripts' shared module, is in scripts/.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts"))
from kmini_results import SPEEDUP_LINE, kernel, load  # noqa: E402


def rhs(F, G, d, kerr):
    dF = -2j * F - 1j * d * (2 * G - 1)
    if kerr:
        dF = dF - 1j * kerr * (F.real ** 2 + F.imag ** 2) * F
    dG = -1j * (np.conj(d) * F - d * np.conj(F))
    return dF, dG


def numpy_rk4(F, G, steps, dt, g, delta0, per_stage, ctype, kerr=0.0):
    """Classical RK4 on numpy arrays; delta = g * sum(F), per step or per stage;
    the Kerr term -i kappa |F|^2 F when kerr != 0."""
    rtype = np.float32 if ctype == np.complex64 else np.float64
    dt = rtype(dt)
    g = rtype(g)
    kerr = rtype(kerr)
    delta = ctype(g * F.sum()) if per_stage else ctype(delta0)
    history = [delta]
    for _ in range(steps):
        d1 = delta
        k1F, k1G = rhs(F, G, d1, kerr)
        F2, G2 = F + dt / 2 * k1F, G + dt / 2 * k1G
        d2 = ctype(g * F2.sum()) if per_stage else delta
        k2F, k2G = rhs(F2, G2, d2, kerr)
        F3, G3 = F + dt / 2 * k2F, G + dt / 2 * k2G
        d3 = ctype(g * F3.sum()) if per_stage else delta
        k3F, k3G = rhs(F3, G3, d3, kerr)
        F4, G4 = F + dt * k3F, G + dt * k3G
        d4 = ctype(g * F4.sum()) if per_stage else delta
        k4F, k4G = rhs(F4, G4, d4, kerr)
        F = F + dt / 6 * (k1F + 2 * k2F + 2 * k3F + k4F)
        G = G + dt / 6 * (k1G + 2 * k2G + 2 * k3G + k4G)
        delta = ctype(g * F.sum())
        history.append(delta)
    return np.array(history), F, G


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kmini", default="build/bin/kmini")
    ap.add_argument("--deck", default="inputs/bench/rk4.yaml")
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--precision", choices=["single", "double"], default="single")
    ap.add_argument("--out", default=None)
    ap.add_argument("--set", action="append", default=[], dest="sets")
    args = ap.parse_args()
    if args.n < 1 or args.steps < 1:
        ap.error("--n and --steps must be >= 1")
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        return compare(args, args.out)
    # Inputs and kmini's outputs in a folder removed on every exit, Ctrl-C included.
    with tempfile.TemporaryDirectory(prefix="kmini_rk4_numpy_") as out:
        return compare(args, out)


def compare(args, out):
    ctype = np.complex64 if args.precision == "single" else np.complex128
    rng = np.random.default_rng(2024)
    shape = (args.n, args.n)
    # A non-zero mean so that delta = g * sum(F) is O(1) and the coupling matters.
    F0 = (0.5 + 0.3j + 0.5 * (rng.uniform(-1, 1, shape) + 1j * rng.uniform(-1, 1, shape))).astype(ctype)
    G0 = rng.uniform(0, 1, shape).astype(ctype)  # real G: the invariant holds
    f_path, g_path = os.path.join(out, "F0.npy"), os.path.join(out, "G0.npy")
    np.save(f_path, F0)
    np.save(g_path, G0)

    cmd = [args.kmini, args.deck, "--out", out,
           "--set", "run.kernels=[rk4]",
           "--set", "rk4.n=%d" % args.n, "--set", "rk4.steps=%d" % args.steps,
           "--set", "rk4.precision=" + args.precision,
           "--set", "rk4.init.F={file: %s}" % f_path, "--set", "rk4.init.G={file: %s}" % g_path,
           "--set", "rk4.write.delta=delta.npy"]
    for s in args.sets:
        cmd += ["--set", s]
    print("kmini: " + " ".join(cmd), flush=True)
    run = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if run.returncode != 0:
        sys.stderr.write(run.stdout + "kmini failed with exit status %d\n" % run.returncode)
        return 1
    results = load(os.path.join(out, "results.json"))
    rk4 = kernel(results, "rk4")
    deck = results["deck"]["rk4"]
    per_stage = rk4["coupling"] == "per_stage"
    delta0 = complex(*deck.get("delta0", [0, 0]))  # per_stage decks record none
    kmini_delta = np.load(os.path.join(out, "delta.npy"))

    print("numpy: %d steps of RK4 on %dx%d %s fields (%s, kerr = %g; kmini method %s) ..." % (
          args.steps, args.n, args.n, np.dtype(ctype).name, rk4["coupling"], rk4.get("kerr", 0.0),
          rk4.get("method", "affine")), flush=True)
    t = time.perf_counter()
    kerr = float(rk4.get("kerr", 0.0))
    np_delta, _, _ = numpy_rk4(F0.copy(), G0.copy(), args.steps, rk4["dt"], rk4["g"], delta0, per_stage, ctype, kerr)
    np_seconds = time.perf_counter() - t

    scale = max(np.max(np.abs(np_delta)), np.finfo(np.float64).tiny)
    err = float(np.max(np.abs(kmini_delta.astype(np.complex128) - np_delta.astype(np.complex128))) / scale)
    tol = (1e-4 if ctype == np.complex64 else 1e-10)
    kmini_seconds = rk4["loop_seconds"]
    print("delta history: max |kmini - numpy| / max |numpy| = %.3g (tolerance %.1g)" % (err, tol))
    print("kmini loop: %.4f s (%.3g element-steps/s, %.3g GB/s, %.0f%% of stream)" % (
        kmini_seconds, rk4["element_steps_per_s"], rk4["effective_bandwidth_bytes_per_s_per_rank"] / 1e9,
        100 * rk4.get("fraction_of_roof", float("nan"))))
    print("numpy loop: %.4f s (%.3g element-steps/s)" % (np_seconds, args.n * args.n * args.steps / np_seconds))
    print("ratio numpy / kmini: %.1fx" % (np_seconds / kmini_seconds))
    print(f"{SPEEDUP_LINE} {np_seconds / kmini_seconds:.4g}")
    if not err <= tol:
        print("DISAGREE")
        return 1
    print("agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
