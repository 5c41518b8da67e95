"""One problem over the ranks of an mpi4py communicator (comm=), run by ctest
at 1, 2 and 3 ranks: each rank passes its contiguous block of the elements
(rk4) or of the rows of A (gram), and gets its own part of the result.
rk4: delta = g * the sum over every rank, matching a one-process call of the
whole problem as the CLI's rank-count tests do (relative 1e-12), the same
delta history on every rank. Arguments one rank refuses stop every rank with
an error, none waits. Exit 0 when every check passes on every rank."""
import numpy as np

import kmini
from comm_checks import check, comm, finish, rank, same_files, same_rows, size


def rel(a, b):
    return np.abs(a - b).max() / max(np.abs(b).max(), 1e-300)


# --- rk4: 61 elements (not a multiple of the rank count), every coupling -----
r = np.random.default_rng(4)
F_all = (r.standard_normal(61) + 1j * r.standard_normal(61)) * 0.3
G_all = 0.5 + 0.1j * r.standard_normal(61)
blocks = np.array_split(np.arange(61), size)
mine = blocks[rank]
for kw in (dict(), dict(coupling="per_step", delta0=0.1 + 0.2j), dict(kerr=0.7, method="stages"),
           dict(precision="double", g=0.02, dt=5e-3, steps=40)):
    F, G, delta = kmini.rk4(F_all[mine], G_all[mine], comm=comm, **kw)
    F1, G1, delta1 = kmini.rk4(F_all, G_all, **kw)  # the whole problem in this process
    check(rel(F, F1[mine]) < 1e-12 and rel(G, G1[mine]) < 1e-12, f"rk4 {kw}: fields")
    check(rel(delta, delta1) < 1e-12, f"rk4 {kw}: delta {rel(delta, delta1):.2e}")
    same = comm.allgather(delta.tobytes())
    check(all(d == same[0] for d in same), f"rk4 {kw}: delta differs between ranks")

# g='auto' is 1 / the number of elements over every rank
_, _, d_auto = kmini.rk4(F_all[mine], G_all[mine], steps=0, comm=comm)
check(abs(d_auto[0] - F_all.sum() / 61) < 1e-14, "rk4: g auto over the communicator")

# one rank's bad arguments: an error on every rank, no rank left waiting
bad = rank == size - 1
try:
    kmini.rk4(F_all[mine], G_all[mine][: len(mine) - 1] if bad else G_all[mine], steps=2, comm=comm)
    check(False, "rk4: bad arguments on one rank did not raise")
except ValueError as e:
    check(bad and "G0: shape" in str(e), f"rk4: {e}")
except RuntimeError as e:
    check(not bad and f"rank {size - 1} refused its arguments" in str(e), f"rk4: {e}")

try:
    kmini.rk4(F_all[mine], G_all[mine], steps=2, dt=-1.0 if bad else 1e-3, comm=comm)
    check(False, "rk4: a bad dt on one rank did not raise")
except ValueError as e:
    check(bad and str(e).startswith("dt: got -1.0"), f"rk4: {e}")
except RuntimeError as e:
    check(not bad and f"rank {size - 1} refused its arguments" in str(e), f"rk4: {e}")

# arguments that differ between the ranks: a ValueError on every rank naming
# the argument (not another number of steps, nor mismatched collectives)
if size > 1:
    for name, mine_v, theirs in (("steps", 5, 6), ("dt", 1e-3, 2e-3), ("g", 0.1, "auto"), ("kerr", 0.0, 0.5),
                                 ("coupling", "per_step", "per_stage"), ("method", "stages", "auto"),
                                 ("delta0", 1j, 0j), ("precision", "double", "single")):
        try:
            kmini.rk4(F_all[mine], G_all[mine], comm=comm, **{name: mine_v if bad else theirs})
            check(False, f"rk4: {name} differing between ranks did not raise")
        except ValueError as e:
            check(str(e).startswith(name) and f"rank {size - 1} passed another value" in str(e), f"rk4 {name}: {e}")

# a communicator of its own
sub = comm.Split(rank % 2, rank)
F, _, delta = kmini.rk4(F_all[mine], G_all[mine], steps=5, comm=sub)
group = [i for i in range(size) if i % 2 == rank % 2]
idx = np.concatenate([blocks[i] for i in group])
_, _, dref = kmini.rk4(F_all[idx], G_all[idx], steps=5)
check(rel(delta, dref) < 1e-12, "rk4: a split communicator")
sub.Free()

# --- gram: 37 rows of A, each rank's block in a different input form --------
rg = np.random.default_rng(8)
A_all = rg.random((37, 150)) < 0.35
A_all[5] = A_all[9]  # equal rows: ties in the top-k lists
A_all[12] = False    # an empty row
B_all = rg.random((11, 150)) < 0.5
rows = np.array_split(np.arange(37), size)[rank]
r0 = rows[0] if len(rows) else 0


def form(M, r):
    """Rank r's rows in its own input form: elements, packbits bytes, big-endian words."""
    if r % 3 == 0:
        return M, None
    if r % 3 == 1:
        return np.packbits(M, axis=1), M.shape[1]
    W = np.zeros((M.shape[0], (M.shape[1] + 63) // 64), dtype=np.uint64)
    for c in range(M.shape[1]):
        W[:, c // 64] |= M[:, c].astype(np.uint64) << np.uint64(c % 64)
    return W.astype(">u8"), M.shape[1]


mine_a, mine_cols = form(A_all[rows], rank)
for sim in ("counts", "jaccard", "cosine"):
    kw = dict(similarity=sim, top_k=4, pairs_min=40 if sim == "counts" else 0.3,
              count_at_least=[30, 45] if sim == "counts" else [0.2, 0.4], slice_rows=5)
    one = kmini.gram(A_all, **kw)
    got = kmini.gram(mine_a, cols=mine_cols, comm=comm, **kw)
    check(got.C.tobytes() == one.C[rows].tobytes(), f"gram {sim}: C rows")
    check(got.top_k.tobytes() == one.top_k[rows].tobytes(), f"gram {sim}: top_k rows")
    want_pairs = one.pairs[np.isin(one.pairs["i"], rows)]
    check(got.pairs.tobytes() == want_pairs.tobytes(), f"gram {sim}: pairs")
    check(np.array_equal(got.counts, one.counts), f"gram {sim}: counts {got.counts} vs {one.counts}")
    check(got.row_counts.tobytes() == one.row_counts[rows].tobytes(), f"gram {sim}: row_counts")
    # with B, whole on every rank
    one_b = kmini.gram(A_all, B_all, **dict(kw, top_k=3))
    got_b = kmini.gram(mine_a, B_all, cols=mine_cols, comm=comm, **dict(kw, top_k=3)) if mine_cols is None else \
        kmini.gram(mine_a, np.packbits(B_all, axis=1), cols=mine_cols, comm=comm, **dict(kw, top_k=3))
    check(got_b.C.tobytes() == one_b.C[rows].tobytes(), f"gram {sim} with B: C rows")
    check(got_b.top_k.tobytes() == one_b.top_k[rows].tobytes(), f"gram {sim} with B: top_k")
    check(got_b.pairs.tobytes() == one_b.pairs[np.isin(one_b.pairs["i"], rows)].tobytes(), f"gram {sim} B: pairs")
    check(np.array_equal(got_b.counts, one_b.counts), f"gram {sim} with B: counts")
up_one = kmini.gram(A_all, triangle="upper")
up = kmini.gram(mine_a, cols=mine_cols, triangle="upper", comm=comm)
starts = [i * 37 - i * (i - 1) // 2 for i in range(38)]
lo, hi = (starts[rows[0]], starts[rows[-1] + 1]) if len(rows) else (0, 0)
check(up.C.tobytes() == up_one.C[lo:hi].tobytes(), "gram: the upper triangle's rows")
# --- uneven blocks: rank 0 holds no rows (with two ranks or more) -------------
def compare(tag, A_rows, sel, B=None, **kw):
    """kmini.gram of this rank's rows `sel` of A_rows (comm=) against those rows of one process."""
    one = kmini.gram(A_rows, B, **kw)
    got = kmini.gram(A_rows[sel], B, comm=comm, **kw)
    same_rows(tag, one, got, sel, A_rows.shape[0], kw.get("triangle", "full") == "upper")


edges = np.linspace(0, 37, size + 1).astype(int)
if size > 1:
    edges[1] = 0  # rank 0: no rows
sel = np.arange(edges[rank], edges[rank + 1])
for h in (1, 3, 8, None):
    for sim, tri, B in (("counts", "full", None), ("jaccard", "full", None), ("counts", "upper", None),
                        ("dice", "upper", None), ("cosine", "full", B_all), ("counts", "full", B_all)):
        kw = dict(similarity=sim, triangle=tri, slice_rows=h, top_k=2,
                  pairs_min=35 if sim == "counts" else 0.25,
                  count_at_least=[20, 40] if sim == "counts" else [0.1, 0.3])
        compare(f"gram uneven {sim} {tri} B={B is not None} slice_rows={h}", A_all, sel, B, **kw)
compare("gram uneven, sparse outputs only", A_all, sel, dense=False, top_k=5, pairs_min=30, slice_rows=4)
# no rows anywhere, and no targets
compare("gram: no rows", A_all[:0], np.arange(0), count_at_least=[1], pairs_min=1, top_k=1)
compare("gram: B without rows", A_all, sel, B_all[:0], count_at_least=[1], pairs_min=1)

# write=: the files of N ranks are those of one process, byte for byte (and
# those are the CLI's: tests/python/test_kmini_gram.py)
import os  # noqa: E402
import tempfile  # noqa: E402

where = comm.bcast(tempfile.mkdtemp(prefix="kmini_comm_") if rank == 0 else None)
kw = dict(similarity="dice", top_k=3, pairs_min=0.3, count_at_least=[0.2])
for tri in ("full", "upper"):
    names = {k: os.path.join(where, f"{k}_{tri}_{size}.npy") for k in ("C", "pairs", "top_k")}
    names["summary"] = os.path.join(where, f"summary_{tri}_{size}.json")  # the whole problem's, from rank 0
    kmini.gram(mine_a, cols=mine_cols, triangle=tri, write=names, comm=comm, **kw)
    if rank == 0:
        ones = {k: os.path.join(where, f"{k}_{tri}_one" + os.path.splitext(names[k])[1]) for k in names}
        kmini.gram(A_all, triangle=tri, write=ones, **kw)
        same_files(f"gram write ({tri})", names, ones)
comm.Barrier()
if rank == 0:
    import shutil  # noqa: E402
    shutil.rmtree(where)

try:
    kmini.gram(mine_a, cols=mine_cols, top_k=0 if rank == size - 1 else 2, comm=comm)
    check(False, "gram: a bad top_k on one rank did not raise")
except ValueError as e:
    check(rank == size - 1 and "top_k" in str(e), f"gram: {e}")
except RuntimeError as e:
    check(rank != size - 1 and f"rank {size - 1} refused its arguments" in str(e), f"gram: {e}")

# a value that is not 0 or 1 on one rank (checked where the values are)
elements = A_all[rows].astype(np.uint8)
if bad:
    elements[0, 0] = 2
try:
    kmini.gram(elements, comm=comm)
    check(False, "gram: a bad value on one rank did not raise")
except ValueError as e:
    check(bad and f"element ({r0}, 0) is 2" in str(e), f"gram: {e} (rows from {r0})")
except RuntimeError as e:
    check(not bad and f"rank {size - 1} refused its arguments" in str(e), f"gram: {e}")

# arguments that differ between the ranks: a ValueError on every rank naming the
# argument (not a rank waiting in a collective the others skip, nor another C)
if size > 1:
    last = rank == size - 1
    for name, mine, theirs in (("similarity", "jaccard", "counts"), ("dense", False, True),
                               ("triangle", "upper", "full"), ("top_k", 3, 2), ("pairs_min", 20, 30),
                               ("count_at_least", [20], [10]), ("slice_rows", 5, 3),
                               ("distribution", "ring", "replicated")):
        kw = {name: mine if last else theirs}
        try:
            kmini.gram(A_all[rows], comm=comm, **kw)
            check(False, f"gram: {name} differing between ranks did not raise")
        except ValueError as e:
            check(str(e).startswith(f"{name}: rank {size - 1} passed another value"), f"gram {name}: {e}")
    # write= on one rank only, or other paths: the ranks write the files together
    for w in ({"top_k": "/tmp/top_other.npy"}, None):
        try:
            kmini.gram(A_all[rows], top_k=2, write=w if last else {"top_k": "/tmp/top.npy"}, comm=comm)
            check(False, f"gram: write={w} on one rank did not raise")
        except ValueError as e:
            check(str(e).startswith(f"write: rank {size - 1} passed"), f"gram write: {e}")
    try:  # a write= one rank refuses: its own error there, a RuntimeError naming it on the others
        kmini.gram(A_all[rows], top_k=2, write={"bogus": "x.npy"} if last else None, comm=comm)
        check(False, "gram: write= refused on one rank did not raise")
    except ValueError as e:
        check(last and "write: got key 'bogus'" in str(e), f"gram write refused: {e}")
    except RuntimeError as e:
        check(not last and f"rank {size - 1} refused its arguments" in str(e), f"gram write refused: {e}")
    try:  # B in blocks with replicated: not B whole
        kmini.gram(A_all[rows], B_all[np.array_split(np.arange(11), size)[0]] if last else B_all[:len(
            np.array_split(np.arange(11), size)[0])][::-1], comm=comm)
        check(False, "gram: B differing between ranks with replicated did not raise")
    except ValueError as e:
        check("B: not the same on every rank with distribution='replicated'" in str(e), f"gram B: {e}")

# Fingerprints (kmini.read_fps's form) over ranks: each rank its block of records; its ids, B's target_ids;
# tanimoto with empty_similarity=1 (row 12 is empty) and top_k_min, as one process gives them.
def as_words(M):
    words = np.zeros((len(M), 3), np.uint64)
    for i, k in zip(*np.nonzero(M)):
        words[i, k // 64] |= np.uint64(1) << np.uint64(k % 64)
    return words


fp_mine = kmini.Fingerprints([f"m{i}" for i in rows], as_words(A_all)[rows], 150, "", "")
fp_b = kmini.Fingerprints([f"t{j}" for j in range(11)], as_words(B_all), 150, "", "")
kw = dict(similarity="tanimoto", top_k=4, top_k_min=0.2, empty_similarity=1.0)
whole = kmini.gram(A_all, **kw)
got = kmini.gram(fp_mine, comm=comm, **kw)
check(got.ids == fp_mine.ids and got.target_ids is None, "gram Fingerprints over ranks: ids")
check(np.array_equal(got.top_k, whole.top_k[rows]) and np.array_equal(got.C, whole.C[rows]),
      "gram Fingerprints over ranks: top_k_min, empty_similarity")
got_b = kmini.gram(fp_mine, fp_b, comm=comm, **kw)
check(got_b.target_ids == fp_b.ids and np.array_equal(got_b.top_k, kmini.gram(A_all, B_all, **kw).top_k[rows]),
      "gram Fingerprints against B over ranks")

# the whole file on every rank (each molecule would meet its copies): the same error on every rank
if size > 1:
    fp_all = kmini.Fingerprints([f"m{i}" for i in range(len(A_all))], as_words(A_all), 150, "", "")
    try:
        kmini.gram(fp_all, comm=comm, **kw)
        check(False, "gram: the whole Fingerprints on every rank did not raise")
    except ValueError as e:
        check("A: ID 'm0' on ranks 0 and 1, expected each rank's own block of records" in str(e), f"gram ids: {e}")

# columns that differ between the ranks: every rank sees it and raises the same error
if size > 1:
    try:
        kmini.gram(A_all[rows][:, :149] if bad else A_all[rows], comm=comm)
        check(False, "gram: different columns did not raise")
    except ValueError as e:
        check("columns, expected the same on every rank" in str(e), f"gram: {e}")

finish()
