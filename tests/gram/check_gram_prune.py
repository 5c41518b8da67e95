#!/usr/bin/python3
"""gram.prune: a threshold search of queries (A) against targets (B) with the
tiles below the outputs' minimum skipped gives the same bytes as without it.

A and B have rows of widely spread densities (popcounts from 0 to most of the
columns, so that sorted tiles part), duplicate rows (ties) and empty rows. For
every similarity (counts, tanimoto, dice, cosine, tversky 0.9/0.1) kmini runs
with gram.prune true and false, in slices of 105 rows, verified, at 1 and 2
ranks: pairs.npy, top.npy (top-k with a minimum) and count_at_least are
byte-identical, equal numpy's, and the pruned run skipped tiles. And one
slice with more hits than its views first hold: the same bytes.

usage: check_gram_prune.py KMINI MPIEXEC [MPIEXEC FLAGS...]
Exit 0 when all hold, 1 otherwise, 77 (skipped) without numpy."""
import json
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError:
    print("numpy is not available: skipped")
    sys.exit(77)

kmini, mpiexec, flags = sys.argv[1], sys.argv[2], sys.argv[3:]
COLS = 200
CASES = [("counts", None, 60), ("tanimoto", None, 0.45), ("dice", None, 0.6), ("cosine", None, 0.6),
         ("tversky", (0.9, 0.1), 0.47)]


def matrix(rng, rows):
    density = np.linspace(0.0, 0.9, rows)[rng.permutation(rows)]  # file order unsorted
    M = rng.random((rows, COLS)) < density[:, None]
    M[rng.integers(rows)] = False
    M[5] = M[17]
    return M


def values(kind, weights, A, B):
    c = (A.astype(np.int64) @ B.T.astype(np.int64)).astype(np.float64)
    na, nb = A.sum(1)[:, None].astype(np.float64), B.sum(1)[None, :].astype(np.float64)
    if kind == "counts":
        return c
    den = {"tanimoto": na + nb - c, "dice": (na + nb) / 2, "cosine": np.sqrt(na * nb)}.get(kind)
    if kind == "tversky":
        den = c + weights[0] * (na - c) + weights[1] * (nb - c)
    return np.where(den == 0, 0.0, c / np.where(den == 0, 1, den))


def run(ranks, out, args):
    cmd = ([mpiexec, *flags, "-n", str(ranks)] if ranks > 1 else []) + [kmini, "--quiet", "--out", out, *args]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, (cmd, p.stdout[-2000:], p.stderr[-2000:])
    with open(os.path.join(out, "results.json")) as f:
        return json.load(f)["kernels"]["gram"]


def main():
    rng = np.random.default_rng(3)
    A, B = matrix(rng, 210), matrix(rng, 330)
    with tempfile.TemporaryDirectory() as tmp:
        np.save(os.path.join(tmp, "A.npy"), A)
        np.save(os.path.join(tmp, "B.npy"), B)
        for kind, weights, least in CASES:
            V = values(kind, weights, A, B)
            deck = ["--set", "run.kernels=[gram]", "--set", "run.verify=true", "--set", "gram.row_slice=105",
                    "--set", f"gram.A={{file: {tmp}/A.npy}}", "--set", f"gram.B={{file: {tmp}/B.npy}}",
                    "--set", f"gram.similarity={kind}",
                    "--set", f"gram.write.pairs={{path: pairs.npy, min: {least}}}",
                    "--set", f"gram.write.top_k={{path: top.npy, k: 4, min: {least}}}",
                    "--set", f"gram.write.count_at_least=[{least}, {least * 1.3}]"]
            if weights:
                deck += ["--set", f"gram.tversky={{alpha: {weights[0]}, beta: {weights[1]}}}"]
            for ranks in (1, 2):
                outs = {}
                for prune in ("true", "false"):
                    out = os.path.join(tmp, f"{kind}_{ranks}_{prune}")
                    outs[prune] = (out, run(ranks, out, deck + ["--set", f"gram.prune={prune}"]))
                (on, k_on), (off, k_off) = outs["true"], outs["false"]
                assert k_on["verified"] and k_off["verified"], kind
                assert "pruning" not in k_off and k_on["pruning"]["tiles_skipped"] > 0, (kind, k_on.get("pruning"))
                assert k_on["count_at_least"] == k_off["count_at_least"], kind
                for name in ("pairs.npy", "top.npy"):
                    with open(os.path.join(on, name), "rb") as x, open(os.path.join(off, name), "rb") as y:
                        assert x.read() == y.read(), (kind, ranks, name)
                pairs = np.load(os.path.join(on, "pairs.npy"))
                i, j = np.nonzero(V >= least)
                assert len(pairs) > 0 and np.array_equal(pairs["i"], i) and np.array_equal(pairs["j"], j), kind
                p = k_on["pruning"]
                print(f"{kind} >= {least}, {ranks} rank(s): the same bytes with {p['tiles_skipped']} of {p['tiles']} "
                      f"tiles skipped, {len(pairs)} pairs as numpy's")
        hits_outgrow_their_views(tmp, rng)
    return 0


def hits_outgrow_their_views(tmp, rng):
    """One slice with more pairs at or above the minimum than a pruned slice's views first hold (65,536):
    they grow, the slice is computed again, and the pairs and counts are still those of the unpruned run."""
    A, B = matrix(rng, 420), matrix(rng, 330)
    np.save(os.path.join(tmp, "A2.npy"), A)
    np.save(os.path.join(tmp, "B2.npy"), B)
    V = values("counts", None, A, B)
    assert (V >= 1).sum() > 65536, (V >= 1).sum()
    deck = ["--set", "run.kernels=[gram]", "--set", "run.verify=true", "--set", "gram.row_slice=420",
            "--set", f"gram.A={{file: {tmp}/A2.npy}}", "--set", f"gram.B={{file: {tmp}/B2.npy}}",
            "--set", "gram.similarity=counts", "--set", "gram.write.pairs={path: pairs.npy, min: 1}",
            "--set", "gram.write.count_at_least=[1, 40]"]
    for ranks in (1, 2):  # at 2 ranks one rank grows its views, the other has no slice
        on, off = os.path.join(tmp, f"grow_on_{ranks}"), os.path.join(tmp, f"grow_off_{ranks}")
        k_on = run(ranks, on, deck + ["--set", "gram.prune=true"])
        k_off = run(ranks, off, deck + ["--set", "gram.prune=false"])
        assert k_on["slices"] == 1 and k_on["verified"] and k_on["count_at_least"] == k_off["count_at_least"]
        with open(os.path.join(on, "pairs.npy"), "rb") as x, open(os.path.join(off, "pairs.npy"), "rb") as y:
            assert x.read() == y.read(), ("pairs after the hits' views grew", ranks)
        assert k_on["pairs_written"] == int((V >= 1).sum()), k_on["pairs_written"]
        print(f"{k_on['pairs_written']} hits in one slice, {ranks} rank(s): the same bytes as unpruned")


if __name__ == "__main__":
    sys.exit(main())
