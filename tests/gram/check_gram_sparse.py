#!/usr/bin/python3
"""Checks a gram run's outputs against numpy (the independent reference):
the dense C (counts or similarity), write.pairs, write.top_k and the summary's
count_at_least, computed here from the input .npy files with A @ B.T.

usage: check_gram_sparse.py --dir RUN --a A.npy [--b B.npy] --kind KIND [--tversky ALPHA BETA] --min X --k K
Exit 0 when every value matches exactly, 1 otherwise, 77 (skipped) without numpy."""
import argparse
import json
import os
import sys

try:
    import numpy as np
except ImportError:
    print("numpy is not available: skipped")
    sys.exit(77)


def similarity(kind, c, na, nb, tversky=(1.0, 1.0)):
    """Values in double from the definitions; 0 where the denominator is 0."""
    c = c.astype(np.int64)
    na = na.astype(np.int64)[:, None]
    nb = nb.astype(np.int64)[None, :]
    if kind == "counts":
        return c.astype(np.float64)
    if kind == "jaccard":
        den = (na + nb - c).astype(np.float64)
        num = c.astype(np.float64)
    elif kind == "dice":
        den = (na + nb).astype(np.float64)
        num = 2.0 * c
    elif kind == "cosine":
        den = np.sqrt(na.astype(np.float64) * nb.astype(np.float64))
        num = c.astype(np.float64)
    elif kind == "tversky":  # c / (c + alpha |a \\ b| + beta |b \\ a|)
        alpha, beta = tversky
        den = c.astype(np.float64) + alpha * (na - c).astype(np.float64) + beta * (nb - c).astype(np.float64)
        num = c.astype(np.float64)
    else:
        raise SystemExit("unknown kind " + kind)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den == 0, 0.0, num / np.where(den == 0, 1.0, den))


def stored(kind, v):
    return v.astype(np.int32) if kind == "counts" else v.astype(np.float32)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--a", required=True)
    ap.add_argument("--b")
    ap.add_argument("--kind", required=True)
    ap.add_argument("--min", type=float, required=True)
    ap.add_argument("--k", type=int, required=True)
    ap.add_argument("--tversky", type=float, nargs=2, default=(1.0, 1.0), metavar=("ALPHA", "BETA"))
    args = ap.parse_args()

    a = np.load(args.a).astype(np.int64)
    b = np.load(args.b).astype(np.int64) if args.b else a
    one = args.b is None
    c = a @ b.T
    v = similarity(args.kind, c, a.sum(axis=1), b.sum(axis=1), args.tversky)
    rows, targets = v.shape
    problems = []

    def check(name, ok):
        print(("ok:   " if ok else "FAIL: ") + name)
        if not ok:
            problems.append(name)

    dense = np.load(os.path.join(args.dir, "C.npy"))
    check("C.npy dtype and shape", dense.dtype == stored(args.kind, v).dtype and dense.shape == v.shape)
    check("C.npy values", dense.shape == v.shape and np.array_equal(dense, stored(args.kind, v)))

    # Pairs: with one input each unordered pair once (i < j).
    mask = np.ones(v.shape, dtype=bool)
    if one:
        mask = np.triu(mask, 1)
    i, j = np.nonzero(mask & (v >= args.min))  # row-major: sorted by (i, j)
    pairs = np.load(os.path.join(args.dir, "pairs.npy"))
    want_dtype = np.dtype([("i", "<i8"), ("j", "<i8"), ("value", "<i4" if args.kind == "counts" else "<f4")])
    check("pairs.npy dtype %s" % pairs.dtype, pairs.dtype == want_dtype)
    check("pairs.npy count %d (numpy %d)" % (pairs.shape[0], i.size), pairs.shape == (i.size,))
    if pairs.shape == (i.size,):
        check("pairs.npy i, j", np.array_equal(pairs["i"], i) and np.array_equal(pairs["j"], j))
        check("pairs.npy values", np.array_equal(pairs["value"], stored(args.kind, v[i, j])))
    check("pairs above the minimum exist (a test that can fail)", i.size > 0)

    # Top-k: value descending, then j ascending; the row itself excluded with one input.
    top = np.load(os.path.join(args.dir, "top.npy"))
    check("top.npy dtype and shape", top.dtype == np.dtype([("j", "<i8"), ("value", want_dtype["value"])])
          and top.shape == (rows, args.k))
    want_j = np.empty((rows, args.k), dtype=np.int64)
    for r in range(rows):
        js = np.array([t for t in range(targets) if not (one and t == r)], dtype=np.int64)
        order = np.lexsort((js, -v[r, js]))[: args.k]
        want_j[r] = js[order]
    if top.shape == (rows, args.k):
        check("top.npy partners", np.array_equal(top["j"], want_j))
        check("top.npy values", np.array_equal(top["value"], stored(args.kind, np.take_along_axis(v, want_j, 1))))
    ties = sum(len(set(v[r, want_j[r]])) < args.k for r in range(rows))
    check("top-k rows with tied values exist (%d)" % ties, ties > 0)

    # Counts at thresholds, from the summary.
    with open(os.path.join(args.dir, "summary.json")) as f:
        summary = json.load(f)
    got = summary.get("count_at_least", [])
    check("summary has count_at_least", len(got) > 0)
    for e in got:
        n = int(np.count_nonzero(mask & (v >= e["min"])))
        check("count_at_least %g: %d (numpy %d)" % (e["min"], e["pairs"], n), e["pairs"] == n)

    if problems:
        print("%d check(s) failed" % len(problems))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
