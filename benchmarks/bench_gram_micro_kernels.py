#!/usr/bin/python3
"""gram per host micro-kernel: runs a gram deck once per micro-kernel each kmini build
contains (gram.micro_kernel) and prints useful bit-ops/s, the fraction of the
probe (the best micro-kernel of that build on L1-resident data) and the speed-up over the
portable micro-kernel of the same build.

  benchmarks/bench_gram_micro_kernels.py [--deck inputs/bench/gram.yaml] [--runs 3] [--out DIR]
                                      KMINI [KMINI ...]

Each figure is the best of --runs kmini runs (each already the best of the deck's
`repeat`); the deck's float gemm baseline is switched off (not what is compared here).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

KERNELS = ["portable", "avx2", "avx512bw", "avx512_vpopcntdq"]


def run(kmini, deck, out, kernel):
    cmd = [kmini, deck, "--out", out, "--set", "gram.baseline=false", "--set", f"gram.micro_kernel={kernel}"]
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if done.returncode == 2 and "gram.micro_kernel" in done.stdout:
        return None  # not in this build
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed (exit {done.returncode}):\n{done.stdout[-2000:]}")
    with open(os.path.join(out, "results.json")) as f:
        r = json.load(f)
    return r, r["kernels"]["gram"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("kmini", nargs="+")
    ap.add_argument("--deck", default=os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                                   "inputs", "bench", "gram.yaml"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    out = a.out or tempfile.mkdtemp(prefix="kmini-gram-mk-")
    rows = []
    for kmini in a.kmini:
        build = {}
        for kernel in KERNELS:
            best = None
            for i in range(a.runs):
                got = run(kmini, a.deck, os.path.join(out, f"{len(rows)}-{kernel}-{i}"), kernel)
                if got is None:
                    break
                r, m = got
                if best is None or m["useful_bit_ops_per_s"] > best[1]["useful_bit_ops_per_s"]:
                    best = (r, m)
            if best is None:
                continue
            r, m = best
            assert m["micro_kernel"] == kernel and m.get("verified", True) is not False, m.get("micro_kernel")
            build[kernel] = m
            flags = " ".join(r.get("build", {}).get("cxx_flags", "").split()) or "?"
            print(f"{kmini} {kernel}: {m['useful_bit_ops_per_s']:.3e} useful bit-ops/s, "
                  f"{m['fraction_of_peak'] * 100:.0f}% of the probe {m['probe_and_popcount_peak_bit_ops_per_s']:.3e} "
                  f"(set by {m['probe_micro_kernel']}; all: "
                  + ", ".join(f"{k} {v:.3e}" for k, v in m["probe_bit_ops_per_s_by_micro_kernel"].items())
                  + f"), verified {m.get('verified')}", flush=True)
        port = build.get("portable", {}).get("useful_bit_ops_per_s")
        for kernel, m in build.items():
            rows.append((kmini, kernel, m["useful_bit_ops_per_s"], m["fraction_of_peak"], m["probe_micro_kernel"],
                         m["useful_bit_ops_per_s"] / port if port else None))
    print("\n| build | micro-kernel | useful bit-ops/s | of probe | probe set by | vs portable (same build) |")
    print("|---|---|---|---|---|---|")
    for kmini, kernel, rate, frac, probe_by, speedup in rows:
        print(f"| {kmini} | {kernel} | {rate:.3g} | {frac * 100:.0f}% | {probe_by} | "
              f"{'%.2f×' % speedup if speedup else '-'} |")


if __name__ == "__main__":
    main()
