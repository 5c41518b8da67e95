#!/usr/bin/python3
"""The users' Gram job end to end, from a file: A A^T of a 0/1 matrix read
from an unpacked A.npy (uint8) and from its np.packbits form, Jaccard, every
row's 16 best partners and the pairs at Jaccard >= 0.058, no verification.
Prints each phase of kmini's time to solution (results.json `phases`), the raw
read of the same file in 8 MiB blocks measured here (the file in the page
cache: read once before), read + pack against it, and the share of everything
but the computation.

  benchmarks/bench_time_to_solution.py [--kmini build/bin/kmini] [--rows 5000] [--cols 50000]
      [--density 0.1] [--dir bench-tts] [--runs 3] [--launcher "taskset -c 0"] [--np 1]

The users' size is --rows 10000 --cols 100000 (a 1 GB A.npy); the default runs
in about ten seconds on one core. The files are made with numpy once per
shape, seed and density and kept in --dir. Phases are the median over --runs."""
import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BLOCK = 8 << 20
PHASE_ORDER = ["startup", "read", "pack", "probe", "compute", "sparse_outputs", "summary", "similarity", "write",
               "verification"]


def make_inputs(d, rows, cols, density, seed):
    """A.npy (uint8 0/1) and A_packed.npy (np.packbits along rows) in d, made once."""
    import numpy as np
    stem = os.path.join(d, "A_%dx%d_d%g_s%d" % (rows, cols, density, seed))
    unpacked, packed = stem + ".npy", stem + "_packed.npy"
    if os.path.exists(unpacked) and os.path.exists(packed):
        return unpacked, packed
    rng = np.random.default_rng(seed)
    a = np.lib.format.open_memmap(unpacked + ".tmp", mode="w+", dtype=np.uint8, shape=(rows, cols))
    p = np.lib.format.open_memmap(packed + ".tmp", mode="w+", dtype=np.uint8, shape=(rows, (cols + 7) // 8))
    step = max(1, (64 << 20) // (4 * cols))
    for r in range(0, rows, step):
        block = (rng.random((min(step, rows - r), cols), dtype=np.float32) < density).astype(np.uint8)
        a[r:r + len(block)] = block
        p[r:r + len(block)] = np.packbits(block, axis=1)
    del a, p
    os.replace(unpacked + ".tmp", unpacked)
    os.replace(packed + ".tmp", packed)
    return unpacked, packed


def raw_read_seconds(path, runs):
    """The best of `runs` sequential reads of the whole file in 8 MiB blocks (after one to warm the cache)."""
    buf = bytearray(BLOCK)
    view = memoryview(buf)
    best = float("inf")
    for i in range(runs + 1):
        fd = os.open(path, os.O_RDONLY)
        t = time.perf_counter()
        while os.readv(fd, [view]) > 0:
            pass
        seconds = time.perf_counter() - t
        os.close(fd)
        if i > 0:
            best = min(best, seconds)
    return best


def declared_keys(kmini):
    """gram's deck keys as this kmini declares them (an older build may lack gram.probe)."""
    out = subprocess.run([kmini, "describe", "gram", "--json"], check=True, capture_output=True, text=True).stdout
    return {k["key"] for k in json.loads(out)["kernels"][0]["keys"]}


def deck(path, packed, cols, keys):
    """The users' job on the built-in deck's run section: no verification, no roof probe."""
    a = "{file: %s, packed: true, cols: %d}" % (path, cols) if packed else "{file: %s}" % path
    probe = ["--set", "gram.probe=false"] if "gram.probe" in keys else []
    return ["--set", "run.kernels=[gram]", "--set", "run.verify=false", *probe, "--set", "gram.A=" + a,
            "--set", "gram.similarity=jaccard", "--set", "gram.memory_budget=536870912",
            "--set", "gram.write={top_k: {path: top16.npy, k: 16}, pairs: {path: pairs.npy, min: 0.058}}"]


def run_kmini(args, path, packed, out):
    cmd = shlex.split(args.launcher) if args.launcher else []
    if args.np > 1:
        cmd += ["mpirun", "--allow-run-as-root", "--oversubscribe", "-n", str(args.np)]
    cmd += [args.kmini, *deck(path, packed, args.cols, args.keys), "--out", out, "--quiet" if args.quiet else None]
    cmd = [c for c in cmd if c is not None]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(out, "results.json")) as f:
        return json.load(f)["kernels"]["gram"]


def report(name, runs, raw):
    phases = {}
    for r in runs:
        for k, v in r["phases"].items():
            phases.setdefault(k, []).append(v)
    med = {k: statistics.median(v) for k, v in phases.items()}
    tts = statistics.median(r["time_to_solution_seconds"] for r in runs)
    order = [k for k in PHASE_ORDER if k in med] + sorted(k for k in med if k not in PHASE_ORDER)
    print("\n%s" % name)
    for k in order:
        print("  %-16s %8.3f s  %5.1f %%" % (k, med[k], 100 * med[k] / tts))
    print("  %-16s %8.3f s" % ("time to solution", tts))
    read_pack = med.get("read", 0) + med.get("pack", 0)
    compute = med.get("compute", 0)
    print("  raw read, 8 MiB blocks (here)  %.3f s" % raw)
    print("  read + pack                    %.3f s = %.2f x the raw read" % (read_pack, read_pack / raw))
    roof = runs[-1].get("read_roof")
    if isinstance(roof, dict) and roof.get("read_and_pack_over_raw_read") is not None:
        print("  read roof in results.json      %.3f s raw, read + pack %.2f x it" %
              (roof["raw_read_seconds"], roof["read_and_pack_over_raw_read"]))
    print("  everything but compute         %.3f s = %.1f %% of the time to solution (compute %.3f s, ratio %.2f)" %
          (tts - compute, 100 * (tts - compute) / tts, compute, (tts - compute) / compute if compute else 0))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kmini", default=os.path.join(ROOT, "build", "bin", "kmini"))
    ap.add_argument("--rows", type=int, default=5000)
    ap.add_argument("--cols", type=int, default=50000)
    ap.add_argument("--density", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--dir", default="bench-tts")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--launcher", default="", help='a command before kmini, e.g. "taskset -c 0"')
    ap.add_argument("--np", type=int, default=1, help="ranks (mpirun)")
    args = ap.parse_args()
    args.keys = declared_keys(args.kmini)
    args.quiet = "--quiet" in subprocess.run([args.kmini, "--help"], capture_output=True, text=True).stdout
    os.makedirs(args.dir, exist_ok=True)
    unpacked, packed = make_inputs(args.dir, args.rows, args.cols, args.density, args.seed)
    print("kmini %s, A %d x %d (density %g), load %s" % (args.kmini, args.rows, args.cols, args.density,
                                                       " ".join("%.2f" % x for x in os.getloadavg())))
    for name, path, is_packed in (("unpacked A.npy", unpacked, False), ("packed A.npy (np.packbits)", packed, True)):
        raw = raw_read_seconds(path, args.runs)
        runs = [run_kmini(args, path, is_packed, os.path.join(args.dir, "out_%s_%d" % ("packed" if is_packed else
                                                                                       "unpacked", i)))
                for i in range(args.runs)]
        report("%s, %.3g MB" % (name, os.path.getsize(path) / 1e6), runs, raw)
    return 0


if __name__ == "__main__":
    sys.exit(main())
