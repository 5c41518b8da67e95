#!/usr/bin/env python3
"""Similarity search on real fingerprints: kmini against RDKit's BulkTanimotoSimilarity.

Morgan fingerprints (radius 2, 2048 bits) of a molecule file (default: rdkit-data's NCI set) are
written as an FPS file. Exactness: kmini's top-k lists (tanimoto, empty_similarity=1, RDKit's score
of two empty fingerprints) and its pairs at or above --min, read back from its text outputs with
IDs, against BulkTanimotoSimilarity row by row, ties ordered by row number. Speed: the fingerprints
tiled to --rows rows (each copy with one bit flipped at random, so copies are not duplicates),
kmini's all-pairs top-k at each --ranks (seconds of the whole process, and its phases from
results.json) against RDKit's BulkTanimotoSimilarity on --rdkit-queries rows, scaled to all
rows (RDKit's time per query row is flat in the row: each row scans every target). One process, one
core for RDKit; the machine's load (uptime) is printed with the figures. Pruning's ceiling: the share
of pairs, and of --tile x --tile tiles of rows sorted by popcount, whose Tanimoto bound from the
popcounts alone (min/max) reaches each threshold: what an exact popcount-bound search must still
compute; then the tiled rows' threshold search at each --prune-min with gram.prune on and off, and
the one-input search (each pair once): the seconds of the tiles and the outputs (a pruned run's
tiles hand their pairs to the outputs) and of the whole process.

usage: bench_gram_fps.py --kmini build/bin/kmini [--rows 20000] [--k 10] [--ranks 1 2] [--mpiexec mpirun]
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time

from rdkit import Chem, DataStructs, RDLogger
from rdkit.Chem import AllChem

NCI = "/usr/share/RDKit/Data/NCI/first_5K.smi"


def fingerprints(path, bits):
    out = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            fields = line.split()
            mol = Chem.MolFromSmiles(fields[0]) if fields else None
            if mol is not None:
                out.append((f"NSC{fields[1]}" if len(fields) > 1 else f"line{n}",
                            AllChem.GetMorganFingerprintAsBitVect(mol, 2, nBits=bits)))
    return out


def write_fps(path, records, bits):
    with open(path, "w") as f:
        f.write(f"#FPS1\n#num_bits={bits}\n#type=RDKit-Morgan/1 radius=2 fpSize={bits}\n")
        for ident, fp in records:
            f.write(f"{DataStructs.BitVectToFPSText(fp)}\t{ident}\n")


def kmini_run(a, ranks, fps, out, extra):
    cmd = ([a.mpiexec, "-n", str(ranks)] if ranks > 1 else []) + [
        a.kmini, "--set", "run.kernels=[gram]", "--set", "run.verify=false", "--set", f"gram.A={{file: {fps}}}",
        "--set", "gram.similarity=tanimoto", "--set", "gram.empty_similarity=1", *extra, "--out", out]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stderr[-3000:]}")
    with open(os.path.join(out, "results.json")) as f:
        gram = json.load(f)["kernels"]["gram"]
    return seconds, gram


def read_tsv(path):
    with open(path) as f:
        return [line.rstrip("\n").split("\t") for line in f][1:]


def exactness(a, recs, tmp):
    fps = os.path.join(tmp, "nci.fps")
    write_fps(fps, recs, a.bits)
    out = os.path.join(tmp, "exact")
    kmini_run(a, 1, fps, out, ["--set", f"gram.write.top_k={{path: top.npy, k: {a.k}, text: top.tsv}}",
                               "--set", f"gram.write.pairs={{path: pairs.npy, min: {a.min}, text: pairs.tsv}}"])
    ids, vecs = [r[0] for r in recs], [r[1] for r in recs]
    top = {}
    for q, rank, t, score in read_tsv(os.path.join(out, "top.tsv")):
        top.setdefault(q, []).append(t)
    pairs = {(q, t) for q, t, _ in read_tsv(os.path.join(out, "pairs.tsv"))}
    t0, rows_equal, want_pairs = time.perf_counter(), 0, set()
    for i, v in enumerate(vecs):
        s = DataStructs.BulkTanimotoSimilarity(v, vecs)
        order = sorted((j for j in range(len(vecs)) if j != i), key=lambda j: (-s[j], j))[:a.k]
        rows_equal += top.get(ids[i], []) == [ids[j] for j in order]
        want_pairs.update((ids[i], ids[j]) for j in range(i + 1, len(vecs)) if s[j] >= a.min)
    rdkit_seconds = time.perf_counter() - t0
    print(f"exactness, {len(vecs)} molecules: top-{a.k} lists equal to RDKit's on {rows_equal} of {len(vecs)} rows "
          f"(ties by lower row number); pairs >= {a.min}: kmini {len(pairs)}, RDKit {len(want_pairs)}, "
          f"equal: {pairs == want_pairs}; RDKit all rows {rdkit_seconds:.3g} s")
    return rows_equal == len(vecs) and pairs == want_pairs


def tiled_fps(a, recs, tmp):
    """The fingerprints tiled to a.rows rows, copies with one bit set or cleared at random."""
    rng = random.Random(7)
    tiled = []
    for n in range(a.rows):
        ident, fp = recs[n % len(recs)]
        fp = DataStructs.ExplicitBitVect(fp.ToBinary())  # a copy
        if n >= len(recs):
            fp.SetBit(rng.randrange(a.bits)) if rng.random() < 0.5 else fp.UnSetBit(rng.randrange(a.bits))
        tiled.append((f"{ident}_{n // len(recs)}", fp))
    fps = os.path.join(tmp, "tiled.fps")
    write_fps(fps, tiled, a.bits)
    return fps, tiled


def speed(a, recs, tmp):
    fps, tiled = tiled_fps(a, recs, tmp)
    vecs = [fp for _, fp in tiled]
    t0 = time.perf_counter()
    for i in range(a.rdkit_queries):
        DataStructs.BulkTanimotoSimilarity(vecs[i * (len(vecs) // a.rdkit_queries)], vecs)
    per_row = (time.perf_counter() - t0) / a.rdkit_queries
    print(f"speed, {a.rows} rows x {a.bits} bits, all-pairs top-{a.k}: RDKit BulkTanimotoSimilarity "
          f"{per_row * 1e3:.3g} ms per query row, {per_row * a.rows:.4g} s for all rows (from {a.rdkit_queries} rows)")
    for ranks in a.ranks:
        seconds, gram = kmini_run(a, ranks, fps, os.path.join(tmp, f"speed{ranks}"),
                                  ["--set", f"gram.write.top_k={{path: top.npy, k: {a.k}}}"])
        ph = gram["phases"]
        print(f"  kmini {ranks} rank(s): {seconds:.4g} s the whole process (startup with the FPS index "
              f"{ph['startup']:.3g} s, read + pack {ph['pack']:.3g} s, tiles {gram['compute_seconds']:.3g} s, top-k "
              f"scan and merge {gram['sparse_outputs_seconds']:.3g} s); RDKit / kmini: "
              f"{per_row * a.rows / seconds:.3g} x the whole process, {per_row * a.rows / gram['compute_seconds']:.3g}"
              " x the tiles")


def pruning(a, recs, tmp):
    """The threshold search of every row against every row at --prune-min: the file as queries and as targets
    (gram.B) with gram.prune on and off, and the one-input search (each pair once, not pruned), at each --ranks:
    the tiles' seconds and the tiles skipped; the pairs are checked to be the same."""
    fps, _ = tiled_fps(a, recs, tmp)
    for least in a.prune_min:
        for ranks in a.ranks:
            pairs = ["--set", f"gram.write.pairs={{path: pairs.npy, min: {least}}}"]
            runs = {}
            # The pruned search holds no slice of C, so its slices are as tall as the budget allows
            # (row_slice auto); the dense ones keep the default deck's 256 rows, which suit them best
            # here (a 20000-row slice of C is 1.6 GB of memory to first touch).
            for name, extra in (("pruned", ["--set", f"gram.B={{file: {fps}}}", "--set", "gram.prune=true",
                                            "--set", "gram.row_slice=auto"]),
                                ("not pruned", ["--set", f"gram.B={{file: {fps}}}", "--set", "gram.prune=false"]),
                                ("one input", [])):
                out = os.path.join(tmp, f"prune_{least}_{ranks}_{len(runs)}")
                runs[name] = (out, *kmini_run(a, ranks, fps, out, pairs + extra))
            with open(os.path.join(runs["pruned"][0], "pairs.npy"), "rb") as x, \
                    open(os.path.join(runs["not pruned"][0], "pairs.npy"), "rb") as y:
                same = x.read() == y.read()
            p = runs["pruned"][2]["pruning"]
            # The tiles and the outputs they feed: a pruned run hands its pairs to the outputs from the tiles.
            sec = {k: v[2]["compute_seconds"] + v[2]["sparse_outputs_seconds"] for k, v in runs.items()}
            whole = {k: v[1] for k, v in runs.items()}
            print(f"  pairs >= {least}, {ranks} rank(s), {a.rows} x {a.rows}: tiles + outputs pruned "
                  f"{sec['pruned']:.3g} s ({p['tiles_skipped']} of {p['tiles']} tiles skipped), not pruned "
                  f"{sec['not pruned']:.3g} s ({sec['not pruned'] / sec['pruned']:.3g}x), one input "
                  f"{sec['one input']:.3g} s ({sec['one input'] / sec['pruned']:.3g}x); the whole process "
                  f"{whole['pruned']:.3g} s, {whole['not pruned']:.3g} s, {whole['one input']:.3g} s; "
                  f"the same pairs: {same}")


def popcount_bound(recs, tile, thresholds=(0.5, 0.6, 0.7, 0.8, 0.9)):
    """The share of pairs (i < j) and of tile x tile blocks of popcount-sorted rows whose Tanimoto
    bound min(|a|, |b|) / max(|a|, |b|) is at least each threshold: the part an exact search pruned by
    popcounts still computes (the rest it may skip)."""
    import numpy as np
    p = np.sort(np.array([bv.GetNumOnBits() for _, bv in recs], dtype=np.float64))
    n = len(p)
    edges = [(p[i], p[min(i + tile, n) - 1]) for i in range(0, n, tile)]
    print(f"popcounts of {n} fingerprints: min {p[0]:g}, median {np.median(p):g}, max {p[-1]:g}")
    for t in thresholds:
        lo, hi = np.searchsorted(p, p * t, side="left"), np.searchsorted(p, p / t, side="right")
        pairs = (hi - lo - 1).sum() / 2 / (n * (n - 1) / 2)
        kept = sum(1 for a0, a1 in edges for b0, b1 in edges
                   if (a1 / b0 if a1 < b0 else b1 / a0 if b1 < a0 else 1.0) >= t)
        print(f"  Tanimoto >= {t}: a popcount bound keeps {pairs:.1%} of the pairs, {kept / len(edges) ** 2:.1%} of "
              f"the {tile} x {tile} tiles (at most {1 / max(pairs, 1e-12):.2f}x fewer pair computations)")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kmini", required=True)
    p.add_argument("--mpiexec", default="mpirun")
    p.add_argument("--molecules", default=NCI)
    p.add_argument("--bits", type=int, default=2048)
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--min", type=float, default=0.7)
    p.add_argument("--rows", type=int, default=20000)
    p.add_argument("--rdkit-queries", type=int, default=200)
    p.add_argument("--ranks", type=int, nargs="+", default=[1, 2])
    p.add_argument("--no-exactness", action="store_true", help="the speed part only")
    p.add_argument("--tile", type=int, default=64, help="rows per tile side for the pruning ceiling (kmini's hosts: 64)")
    p.add_argument("--prune-min", type=float, nargs="*", default=[0.7, 0.8],
                   help="the pruned threshold searches' minimums (none: no pruning runs)")
    a = p.parse_args()
    RDLogger.DisableLog("rdApp.*")
    print("load:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    recs = fingerprints(a.molecules, a.bits)
    popcount_bound(recs, a.tile)
    with tempfile.TemporaryDirectory() as tmp:
        exact = a.no_exactness or exactness(a, recs, tmp)
        speed(a, recs, tmp)
        pruning(a, recs, tmp)
    print("load:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    sys.exit(0 if exact else 1)


if __name__ == "__main__":
    main()
