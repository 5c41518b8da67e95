"""The PyTorch peer's numpy parts (benchmarks/peers.py) against kmini's own
outputs on a small matrix with ties in every similarity and empty rows: the
padding for torch._int_mm, the Jaccard from counts and ones, the pairs and the
top-k comparison (partners in another tie order agree, a wrong value or
partner does not). torch and a GPU are not needed; numpy is (exit 77 without).

usage: check_torch_peer.py KMINI
"""
import importlib.util
import os
import pathlib
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError:
    print("no numpy: skipped")
    sys.exit(77)

root = pathlib.Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("peers", root / "benchmarks/peers.py")
peers = importlib.util.module_from_spec(spec)
spec.loader.exec_module(peers)

kmini = sys.argv[1]
a_path = root / "tests/data/gram/A_41x70_ties.npy"
K, MIN = 6, 0.25

with tempfile.TemporaryDirectory() as out:
    cmd = [kmini, "--out", out, "--set", "run.kernels=[gram]", "--set", f"gram.A={{file: {a_path}}}",
           "--set", "gram.similarity=jaccard", "--set", "gram.row_slice=5", "--set", "gram.write.C=C.npy",
           "--set", f"gram.write.top_k={{path: top.npy, k: {K}}}",
           "--set", f"gram.write.pairs={{path: pairs.npy, min: {MIN}}}"]
    run = subprocess.run(cmd, capture_output=True, text=True)
    assert run.returncode == 0, (cmd, run.stdout, run.stderr)
    kC = np.load(os.path.join(out, "C.npy"))
    ktop = np.load(os.path.join(out, "top.npy"))
    kpairs = np.load(os.path.join(out, "pairs.npy"))

A = np.load(a_path).astype(np.uint8)
rows, cols = A.shape

# Padding: the shape _int_mm takes, zeros outside A, the same counts once cut.
P = peers.pad(A)
assert P.shape == peers.padded_shape(rows, cols) == (48, 72), P.shape
assert P.shape[0] > 16 and P.shape[0] % 8 == 0 and P.shape[1] % 8 == 0
assert not P[rows:].any() and not P[:, cols:].any()
assert peers.padded_shape(5, 3) == (24, 8)
C = (P.astype(np.int64) @ P.T.astype(np.int64))[:rows, :rows]
assert np.array_equal(C, A.astype(np.int64) @ A.T.astype(np.int64))
check = peers.checked_rows(rows)
assert check[0] == 0 and check[-1] == rows - 1 and len(check) == 16
assert np.array_equal(peers.reference_counts(A, check), C[check])

# Jaccard from the counts and the rows' ones: kmini's dense C exactly (float32 as written).
ones = A.sum(axis=1).astype(np.float64)
assert (ones == 0).any(), "the matrix has empty rows (the zero denominator)"
J = peers.jaccard(C.astype(np.float64), ones, ones)
assert np.array_equal(J.astype(np.float32), kC), np.max(np.abs(J.astype(np.float32) - kC))

# Pairs i < j at or above the minimum, row-major: kmini's file record by record.
idx = np.arange(rows)
pi, pj = np.nonzero(peers.pair_mask(J, MIN, idx, idx))
pv = J[pi, pj].astype(np.float32)
assert peers.compare_pairs(kpairs, pi, pj, pv)["agree"]
assert len(kpairs) > 0
assert not peers.compare_pairs(kpairs[1:], pi, pj, pv)["agree"]
wrong = kpairs.copy()
wrong["value"][0] = np.nextafter(wrong["value"][0], np.float32(2))
assert not peers.compare_pairs(wrong, pi, pj, pv)["agree"]

# Top-k as torch.topk gives it, in a tie order unlike kmini's (larger j first
# among equal values), the diagonal masked to -inf.
masked = J.copy()
np.fill_diagonal(masked, -np.inf)
order = np.lexsort((-idx[None, :].repeat(rows, 0), -masked), axis=1)[:, :K]
tv = np.take_along_axis(masked, order, axis=1)
tj, tv = peers.top_k_as_kmini(tv, order)
J32 = J.astype(np.float32)
got = peers.compare_top_k(ktop["j"], ktop["value"], tj, tv, J32)
assert got["agree"], got
assert got["rows_with_identical_indices"] < 1, "ties change the order of partners"
bad = ktop.copy()
bad["value"][3, 0] = np.nextafter(bad["value"][3, 0], np.float32(-1))
assert not peers.compare_top_k(bad["j"], bad["value"], tj, tv, J32)["agree"]
bad = ktop.copy()
row = 3  # a partner swapped for one whose value differs
other = next(j for j in range(rows) if j != row and J32[row, j] != bad["value"][row, 0])
bad["j"][row, 0] = other
assert not peers.compare_top_k(bad["j"], bad["value"], tj, tv, J32)["agree"]
bad = ktop.copy()
bad["j"][row, 0] = row  # itself
assert not peers.compare_top_k(bad["j"], bad["value"], tj, tv, J32)["agree"]
print(f"torch peer's numpy parts agree with kmini on {rows}x{cols}: {len(kpairs)} pairs, top-{K}")
