#!/usr/bin/env python3
"""The Python module against the CLI: the call overhead for tiny inputs,
and at the bench decks' sizes kmini.rk4 / kmini.discount against the CLI's timed
kernel (results.json: rk4 loop_seconds, discount kernel.best_seconds) run by this
script on the same machine, alternately. A benchmark, not a test.

  PYTHONPATH=build/python /usr/bin/python3 benchmarks/bench_python.py [--kmini build/bin/kmini] [--repeat 3]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

# kmini_results, the scripts' shared module, is in scripts/.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts"))
from kmini_results import timed_seconds  # noqa: E402

import kmini  # noqa: E402


def cli_seconds(exe, kernel, sets):
    with tempfile.TemporaryDirectory() as out:
        args = [exe, "--out", out, "--set", f"run.kernels=[{kernel}]", "--set", "run.verify=false"]
        for s in sets:
            args += ["--set", s]
        subprocess.run(args, check=True, capture_output=True)
        with open(os.path.join(out, "results.json")) as f:
            return timed_seconds(json.load(f)["kernels"][kernel], kernel)


def best(fn, repeat):
    t = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        t.append(time.perf_counter() - t0)
    return min(t)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kmini", default="build/bin/kmini")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--rk4-n", type=int, default=1024)
    ap.add_argument("--rk4-steps", type=int, default=1000)
    ap.add_argument("--dates", type=int, default=4000)
    ap.add_argument("--ids", type=int, default=4000)
    ap.add_argument("--terms", type=int, default=5)
    args = ap.parse_args()
    print(f"kmini {kmini.info()}")

    m, x, o = np.ones((1, 1)), np.ones((1, 1, 1)), np.empty((1, 1, 1))
    for _ in range(1000):
        kmini.discount(m, x, out=o)
    n = 20000
    t = time.perf_counter()
    for _ in range(n):
        kmini.discount(m, x, out=o)
    print(f"call overhead, 1-element discount with out=: {(time.perf_counter() - t) / n * 1e6:.1f} us")

    # rk4: the bench deck's problem (inputs/bench/rk4.yaml): single, per_step, delta0 = 1, G = 1.
    N, steps = args.rk4_n, args.rk4_steps
    F0 = (np.random.default_rng(1).uniform(-1, 1, (N, N)) + 1j * np.random.default_rng(2).uniform(-1, 1, (N, N)))
    F0 = F0.astype(np.complex64)
    G0 = np.ones((N, N), np.complex64)
    py = best(lambda: kmini.rk4(F0, G0, steps=steps, dt=1e-4, g=1 / (N * N), coupling="per_step", delta0=1.0),
              args.repeat)
    cli = min(cli_seconds(args.kmini, "rk4", [f"rk4.n={N}", f"rk4.steps={steps}", "rk4.dt=1e-4", "rk4.precision=single",
                                              "rk4.coupling=per_step", "rk4.delta0=[1.0, 0.0]",
                                              "rk4.init.G={fill: [1.0, 0.0]}"]) for _ in range(args.repeat))
    print(f"rk4 n = {N}, {steps} steps: python {py:.3f} s (whole call: copies in and out), CLI loop {cli:.3f} s: "
          f"{py / cli:.3f}x")

    D, M, O = args.dates, args.ids, args.terms
    mult = np.arange(M * O, dtype=np.float64).reshape(M, O)
    disc = np.arange(D * M * O, dtype=np.float64).reshape(D, M, O)
    out = np.empty_like(disc)
    kmini.discount(mult, disc, out=out)
    py = best(lambda: kmini.discount(mult, disc, out=out), max(args.repeat, 5))
    cli = min(cli_seconds(args.kmini, "discount", [f"discount.dates={D}", f"discount.ids={M}", f"discount.terms={O}",
                                                   "discount.reduce=none", "discount.repeat=5"])
              for _ in range(args.repeat))
    print(f"discount {D} x {M} x {O}: python {py * 1e3:.1f} ms (out=), CLI kernel {cli * 1e3:.1f} ms: {py / cli:.3f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
