#!/usr/bin/env python3
"""rk4: method stages against method affine on the bench deck, in one invocation.

Usage: scripts/bench_rk4_methods.py [--kmini build/bin/kmini] [--deck inputs/bench/rk4.yaml]
                                    [--steps N] [--repeat R] [--out DIR]

Runs the deck (n = 1024, complex64 by default) for each (coupling, method, kerr) row,
interleaved R times so that both methods see the same machine load, and prints one
markdown row per case: best loop time, element-steps/s, and the stages/affine ratio.
Timings come from kmini's own results.json (`loop_seconds`); no timing in unit tests.
"""
import argparse
import json
import os
import subprocess

ap = argparse.ArgumentParser()
ap.add_argument("--kmini", default="build/bin/kmini")
ap.add_argument("--deck", default="inputs/bench/rk4.yaml")
ap.add_argument("--steps", type=int, default=1000)
ap.add_argument("--repeat", type=int, default=3)
ap.add_argument("--out", default="kmini-out/bench_rk4_methods")
args = ap.parse_args()

cases = [("per_step", "affine", 0.0), ("per_step", "stages", 0.0), ("per_step", "stages", 0.5),
         ("per_stage", "affine", 0.0), ("per_stage", "stages", 0.0), ("per_stage", "stages", 0.5)]
best = {}
for r in range(args.repeat):
    for coupling, method, kerr in cases:
        out = os.path.join(args.out, f"{coupling}_{method}_{kerr}_{r}")
        cmd = [args.kmini, args.deck, "--set", f"rk4.steps={args.steps}", "--set", f"rk4.coupling={coupling}",
               "--set", f"rk4.method={method}", "--set", f"rk4.kerr={kerr}", "--out", out]
        subprocess.run(cmd, check=True, capture_output=True)
        k = json.load(open(os.path.join(out, "results.json")))["kernels"]["rk4"]
        key = (coupling, method, kerr)
        if key not in best or k["loop_seconds"] < best[key]["loop_seconds"]:
            best[key] = k

print("| coupling | method | kerr | best loop s | element-steps/s | bytes/element-step | GB/s effective | vs affine |")
print("|---|---|---|---|---|---|---|---|")
for coupling, method, kerr in cases:
    k = best[(coupling, method, kerr)]
    base = best[(coupling, "affine", 0.0)]["loop_seconds"]
    print(f"| {coupling} | {method} | {kerr:g} | {k['loop_seconds']:.3f} | {k['element_steps_per_s']:.3g} | "
          f"{k['bytes_per_element_step']:.0f} | {k['effective_bandwidth_bytes_per_s_per_rank'] / 1e9:.1f} | "
          f"{base / k['loop_seconds']:.2f}x |")
