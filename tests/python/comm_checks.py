"""What the comm= test scripts share: the communicator, one list of failed
checks, a rank's gram outputs against those rows of a one-process call, and
the exit (0 when every check passed on every rank; 77, skipped, without
mpi4py)."""
import sys

import numpy as np

try:
    from mpi4py import MPI
except ImportError:
    print("skipped: no mpi4py (Debian: python3-mpi4py)")
    sys.exit(77)

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


def same_rows(tag, one, got, sel, n, upper=False):
    """got (this rank's rows `sel` of A, n rows in all) against those rows of the one-process result."""
    if one.C is not None and upper:
        first = [i * n - i * (i - 1) // 2 for i in range(n + 1)]
        want = one.C[first[sel[0]]:first[sel[-1] + 1]] if len(sel) else one.C[:0]
        check(got.C.tobytes() == want.tobytes() and got.C.shape == want.shape, f"{tag}: C (upper)")
    elif one.C is not None:
        check(got.C.tobytes() == one.C[sel].tobytes() and got.C.shape == one.C[sel].shape, f"{tag}: C")
    if one.top_k is not None:
        check(got.top_k.tobytes() == one.top_k[sel].tobytes(), f"{tag}: top_k")
    if one.pairs is not None:
        check(got.pairs.tobytes() == one.pairs[np.isin(one.pairs["i"], sel)].tobytes(), f"{tag}: pairs")
    if one.counts is not None:
        check(np.array_equal(got.counts, one.counts), f"{tag}: counts {got.counts} vs {one.counts}")
    check(got.row_counts.tobytes() == one.row_counts[sel].tobytes(), f"{tag}: row_counts")


def same_files(tag, got, want):
    """The files of {output: path} `got`, byte for byte those of `want`."""
    for k in got:
        with open(got[k], "rb") as a, open(want[k], "rb") as b:
            check(a.read() == b.read(), f"{tag} {k}: not the one-process file")


def finish():
    for f in failures:
        print(f"rank {rank}: FAILED {f}", flush=True)
    ok = comm.allreduce(0 if failures else 1, op=MPI.MIN)
    if rank == 0:
        print(f"{size} ranks: {'all checks passed' if ok else 'failures'}", flush=True)
    sys.exit(0 if ok else 1)
