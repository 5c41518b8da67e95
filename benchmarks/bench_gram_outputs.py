#!/usr/bin/python3
"""What the sparse outputs cost on the gram bench deck: counts only vs
write.top_k (k = 16) vs write.pairs, run alternately in one script (same
machine state), no baseline, no verification.

  benchmarks/bench_gram_outputs.py [--kmini build/bin/kmini] [--runs 1] [--deck inputs/bench/gram.yaml] [--out DIR]

Prints, per variant, the median over runs of: compute_seconds (best slice
loop, the tile kernel alone), sparse_outputs_seconds (the outputs' device
kernels and writes, final pass), the kernel's wall seconds, and the
outputs' cost relative to the slice loop."""
import argparse
import os
import statistics
import subprocess
import sys

# kmini_results, the scripts' shared module, is in scripts/.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts"))
from kmini_results import kernel, load  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

VARIANTS = {
    "counts only": [],
    "top_k k=16": ["--set", "gram.write.top_k={path: top16.npy, k: 16}"],
    "top_k k=16, jaccard": ["--set", "gram.similarity=jaccard", "--set", "gram.write.top_k={path: top16.npy, k: 16}"],
    "pairs >= 4200": ["--set", "gram.write.pairs={path: pairs.npy, min: 4200}"],
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kmini", default=os.path.join(ROOT, "build", "bin", "kmini"))
    ap.add_argument("--deck", default=os.path.join(ROOT, "inputs", "bench", "gram.yaml"))
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--out", default="bench-gram-outputs")
    args = ap.parse_args()
    figures = {name: [] for name in VARIANTS}
    for run in range(args.runs):
        for name, extra in VARIANTS.items():
            out = os.path.join(args.out, "%s.%d" % (name.replace(" ", "_").replace(",", "").replace("=", ""), run))
            cmd = [args.kmini, args.deck, "--set", "gram.baseline=false", "--set", "run.verify=false",
                   "--out", out] + extra
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
            r = kernel(load(os.path.join(out, "results.json")), "gram")
            m = r
            figures[name].append((m["compute_seconds"], m.get("sparse_outputs_seconds", 0.0), r["seconds"],
                                  m.get("pairs_written")))
    print("%-22s %12s %14s %12s %10s %s" % ("variant", "slice loop s", "outputs s", "kernel s", "outputs/", "pairs"))
    for name, rows in figures.items():
        loop = statistics.median(x[0] for x in rows)
        sparse = statistics.median(x[1] for x in rows)
        total = statistics.median(x[2] for x in rows)
        print("%-22s %12.4f %14.4f %12.4f %9.1f%% %s" % (name, loop, sparse, total, 100 * sparse / loop,
                                                         rows[0][3] if rows[0][3] is not None else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
