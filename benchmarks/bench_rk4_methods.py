#!/usr/bin/python3
"""rk4: method stages against method affine, per_step against per_stage, single against double,
at a cache-resident size (n = 1024) and a memory-resident one (n = 4096), in one invocation.

Usage: benchmarks/bench_rk4_methods.py [--kmini build/bin/kmini] [--deck inputs/bench/rk4.yaml]
                                    [--sizes 1024 4096] [--precisions single double]
                                    [--element-steps 3.4e8] [--repeat 3] [--out DIR]

Each (n, precision) group runs its cases interleaved `repeat` times, so that every method sees the
same machine load, and keeps each case's best loop time (results.json `loop_seconds`; the stream
roof is the same run's best op, `roof_bandwidth_bytes_per_s`). The number of steps is chosen so
that each run does about `element-steps` element-steps. Prints one markdown row per case:
element-steps/s, the bytes each element-step moves, the effective bandwidth, the fraction of the
stream roof measured in the same run, and the ratio to affine per_step of the same group.
Timings come from kmini's own results.json; there is no timing in unit tests.
"""
import argparse
import os
import subprocess
import sys

# kmini_results, the scripts' shared module, is in scripts/.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts"))
from kmini_results import kernel, load  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--kmini", default="build/bin/kmini")
ap.add_argument("--deck", default="inputs/bench/rk4.yaml")
ap.add_argument("--sizes", type=int, nargs="+", default=[1024, 4096])
ap.add_argument("--precisions", nargs="+", default=["single", "double"])
ap.add_argument("--element-steps", type=float, default=3.4e8)
ap.add_argument("--repeat", type=int, default=3)
ap.add_argument("--out", default="kmini-out/bench_rk4_methods")
args = ap.parse_args()

# (coupling, method, kerr): the linear model with both methods, and the Kerr model (stages only).
CASES = [("per_step", "affine", 0.0), ("per_step", "stages", 0.0), ("per_stage", "affine", 0.0),
         ("per_stage", "stages", 0.0), ("per_step", "stages", 0.5), ("per_stage", "stages", 0.5)]

print("| n | precision | coupling | method | kerr | element-steps/s | bytes/element-step | GB/s | "
      "of stream roof | vs affine per_step |")
print("|---|---|---|---|---|---|---|---|---|---|")
for n in args.sizes:
    steps = max(2, int(args.element_steps / (n * n)))
    for precision in args.precisions:
        best = {}
        for r in range(args.repeat):
            for coupling, method, kerr in CASES:
                out = os.path.join(args.out, f"{n}_{precision}_{coupling}_{method}_{kerr}_{r}")
                cmd = [args.kmini, args.deck, "--out", out, "--set", f"rk4.n={n}", "--set", f"rk4.steps={steps}",
                       "--set", f"rk4.precision={precision}", "--set", f"rk4.coupling={coupling}",
                       "--set", f"rk4.method={method}", "--set", f"rk4.kerr={kerr}", "--set", "run.verify=false"]
                done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                if done.returncode != 0:
                    sys.exit(f"bench_rk4_methods.py: {' '.join(cmd)} failed (exit {done.returncode}):\n"
                             f"{done.stdout[-2000:]}")
                k = kernel(load(os.path.join(out, "results.json")), "rk4")
                key = (coupling, method, kerr)
                if key not in best or k["loop_seconds"] < best[key]["loop_seconds"]:
                    best[key] = k
        base = best[("per_step", "affine", 0.0)]["loop_seconds"]
        for coupling, method, kerr in CASES:
            k = best[(coupling, method, kerr)]
            bw = k["effective_bandwidth_bytes_per_s_per_rank"]
            print(f"| {n} | {precision} | {coupling} | {method} | {kerr:g} | {k['element_steps_per_s']:.3g} | "
                  f"{k['bytes_per_element_step']:.0f} | {bw / 1e9:.1f} | "
                  f"{100 * bw / k['roof_bandwidth_bytes_per_s']:.0f}% | {base / k['loop_seconds']:.2f}x |",
                  flush=True)
