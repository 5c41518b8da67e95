"""gram(comm=, distribution='ring' or 'auto'), run by ctest at 1, 2 and 3 ranks:
each rank passes its contiguous block of the rows of A and of B, holds about
1/P of the packed rows while the others pass by (the CLI's ring plan), and
gets its own rows of every output, byte for byte those rows of a one-process
call. Both schedules (slices: every output; circulant: top-k and counts),
blocks of every size (a rank without rows), slice heights from 1 row to the
budget's, 'auto' choosing by memory_budget, write= files, and the arguments
the ring refuses. Exit 0 when every check passes on every rank."""
import os
import shutil
import tempfile

import numpy as np

import kmini
from comm_checks import check, comm, finish, rank, same_files, same_rows, size


def block(n, empty_first=False):
    """This rank's contiguous rows of n, in rank order (rank 0 none when asked, with 2 ranks or more)."""
    edges = np.linspace(0, n, size + 1).astype(int)
    if empty_first and size > 1:
        edges[1] = 0
    return np.arange(edges[rank], edges[rank + 1])


def compare(tag, A, sel, B=None, sel_b=None, schedule=None, **kw):
    """The ring's call of this rank's rows against those rows of a one-process call."""
    one = kmini.gram(A, B, **kw)
    got = kmini.gram(A[sel], None if B is None else B[sel_b], comm=comm, distribution="ring", **kw)
    if size > 1:
        check(got.distribution == "ring", f"{tag}: planned {got.distribution}")
        if schedule:
            check(got.ring_schedule == schedule, f"{tag}: schedule {got.ring_schedule}, expected {schedule}")
    same_rows(tag, one, got, sel, A.shape[0], kw.get("triangle") == "upper")


rg = np.random.default_rng(2026)
A = rg.random((41, 150)) < 0.3
A[5] = False  # an empty row, and ties
A[9] = A[3]
B = rg.random((23, 150)) < 0.45

# slices: every output, with and without B, every similarity, heights 1 .. all
for empty_first in (False, True):
    sel, sel_b = block(41, empty_first), block(23, empty_first)
    for h in (1, 5, 64, None):
        for sim, tri, with_b in (("counts", "full", False), ("jaccard", "full", False), ("counts", "upper", False),
                                 ("dice", "full", True), ("counts", "full", True)):
            kw = dict(similarity=sim, triangle=tri, slice_rows=h, top_k=3,
                      pairs_min=30 if sim == "counts" else 0.3,
                      count_at_least=[10, 25] if sim == "counts" else [0.1, 0.3])
            compare(f"ring slices {sim} {tri} B={with_b} slice_rows={h} empty_first={empty_first}", A, sel,
                    B if with_b else None, sel_b, schedule="slices", **kw)
    # circulant: the outputs that reduce per row (auto picks it without C and pairs)
    for sim, with_b in (("counts", False), ("cosine", False), ("jaccard", True)):
        for schedule in ("auto", "circulant"):
            compare(f"ring circulant {sim} B={with_b} ({schedule}) empty_first={empty_first}", A, sel,
                    B if with_b else None, sel_b, schedule="circulant", ring_schedule=schedule, dense=False,
                    similarity=sim, top_k=4, count_at_least=[5, 20] if sim == "counts" else [0.2])
# more ranks than rows, and no rows at all
compare("ring: 2 rows", A[:2], block(2), top_k=1, pairs_min=1)
compare("ring: no rows", A[:0], block(0), count_at_least=[1], top_k=1)

# auto: replicated while packed A fits the budget, else the ring with 1/P of it
big = rg.random((600, 4096)) < 0.2
mine = block(600)
one = kmini.gram(big, top_k=5, dense=False)
packed = 600 * 4096 // 8
# (3 ranks: a 1/3 share and two pieces fit where all of A does not)
for budget, want in ((64 * packed, "replicated"),) + (((packed * 5 // 6, "ring"),) if size == 3 else ()):
    got = kmini.gram(big[mine], top_k=5, dense=False, comm=comm, distribution="auto", memory_budget=budget)
    if size > 1:
        check(got.distribution == want, f"auto with {budget} bytes: {got.distribution}, expected {want}")
    check(got.top_k.tobytes() == one.top_k[mine].tobytes(), f"auto with {budget} bytes: top_k")
if size > 1:  # a budget no share fits: MemoryError on every rank, naming the budget
    try:
        kmini.gram(big[mine], top_k=5, dense=False, comm=comm, distribution="ring", memory_budget=packed // 8)
        check(False, "ring: a budget below a share did not raise")
    except MemoryError as e:
        check("memory_budget" in str(e) and "cannot hold" in str(e), f"ring budget: {e}")
    try:  # replicated: every rank holds all of packed A, as the CLI's plan says
        kmini.gram(big[mine], top_k=5, dense=False, comm=comm, memory_budget=packed // 2)
        check(False, "replicated: a budget below packed A did not raise")
    except MemoryError as e:
        check("cannot hold packed A" in str(e), f"replicated budget: {e}")
    try:  # an explicit height beyond the budget names slice_rows
        kmini.gram(big[mine], dense=False, pairs_min=1e9, comm=comm, distribution="ring", memory_budget=packed,
                   slice_rows=600)
        check(False, "ring: slice_rows beyond the budget did not raise")
    except ValueError as e:
        check(str(e).startswith("slice_rows: got 600"), f"ring slice_rows: {e}")

# write=: the ring's files are the one-process files, byte for byte
where = comm.bcast(tempfile.mkdtemp(prefix="kmini_ring_") if rank == 0 else None)
names = {k: os.path.join(where, f"{k}_{size}.npy") for k in ("C", "pairs", "top_k")}
kw = dict(similarity="jaccard", top_k=3, pairs_min=0.3)
kmini.gram(A[block(41)], B[block(23)], write=names, comm=comm, distribution="ring", **kw)
if rank == 0:
    ones = {k: os.path.join(where, f"{k}_one.npy") for k in names}
    kmini.gram(A, B, write=ones, **kw)
    same_files("ring write", names, ones)
comm.Barrier()
if rank == 0:
    shutil.rmtree(where)

# refusals, the same on every rank
try:
    kmini.gram(A[block(41)], comm=comm, distribution="ring", ring_schedule="circulant")
    check(False, "ring: circulant with dense C did not raise")
except ValueError as e:
    check("ring_schedule: got 'circulant' with dense=True" in str(e), f"ring circulant: {e}")
try:
    kmini.gram(A[block(41)], comm=comm, distribution="rings")
    check(False, "ring: an unknown distribution did not raise")
except ValueError as e:
    check("distribution" in str(e) and "ring" in str(e), f"distribution: {e}")
if size > 1:  # B whole on every rank (the replicated form) would count its rows once per rank
    try:
        kmini.gram(A[block(41)], B, comm=comm, distribution="ring")
        check(False, "ring: B whole on every rank did not raise")
    except ValueError as e:
        check("expected each rank's own block of B's rows" in str(e), f"ring B whole: {e}")
if size > 1:  # B's columns must agree; its rows are each rank's own
    try:
        kmini.gram(A[block(41)], B[block(23)][:, :149] if rank == size - 1 else B[block(23)], comm=comm,
                   distribution="ring")
        check(False, "ring: B columns differing between ranks did not raise")
    except ValueError as e:
        check("B:" in str(e), f"ring B columns: {e}")
    except RuntimeError as e:
        check(rank != size - 1 and "refused its arguments" in str(e), f"ring B columns: {e}")

finish()
