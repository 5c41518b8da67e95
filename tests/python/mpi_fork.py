"""A forked child under mpirun, with MPI started by mpi4py's import (not by
kmini): every call that would use MPI is a RuntimeError in the child, whose
collectives would otherwise meet the other ranks' parents; the parents still
compute together afterwards."""
import os
import sys
import tempfile

from mpi4py import MPI  # starts MPI before kmini is imported
import numpy as np

import kmini

COMM = MPI.COMM_WORLD
RANK = COMM.Get_rank()


def child():
    calls = {
        "rk4": lambda: kmini.rk4(np.ones(4, complex), np.zeros(4, complex), steps=2),
        "rk4(comm=)": lambda: kmini.rk4(np.ones(4, complex), np.zeros(4, complex), steps=2, comm=COMM),
        "gram(comm=)": lambda: kmini.gram(np.eye(3, dtype=bool), comm=COMM),
        "gram(write=)": lambda: kmini.gram(np.eye(3, dtype=bool),
                                           write={"C": os.path.join(tempfile.mkdtemp(), "C.npy")}),
    }
    bad = []
    for name, call in calls.items():
        try:
            call()
            bad.append(f"{name} ran")
        except RuntimeError as e:
            if "forked" not in str(e) or "spawn" not in str(e):
                bad.append(f"{name}: {e}")
        except Exception as e:  # noqa: BLE001 - reported
            bad.append(f"{name}: {type(e).__name__}: {e}")
    print(f"[rank {RANK} child]", "; ".join(bad) or "every MPI call refused", flush=True)
    os._exit(1 if bad else 0)


def main():
    kmini.gram(np.eye(2, dtype=bool), comm=COMM)  # the parents have used MPI through kmini
    pid = os.fork()
    if pid == 0:
        child()
    _, status = os.waitpid(pid, 0)
    ok = os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    assert all(COMM.allgather(ok)), "a child ran an MPI call"
    A = np.random.default_rng(RANK).random((5, 70)) < 0.5
    res = kmini.gram(A, comm=COMM)
    whole = np.concatenate(COMM.allgather(A)).astype(np.int32)
    np.testing.assert_array_equal(res.C, (whole @ whole.T)[5 * RANK:5 * (RANK + 1)])
    print(f"[rank {RANK}] done", flush=True)


if __name__ == "__main__":
    main()
