"""Under mpirun (3 ranks): MPI starts when kmini is imported, as mpi4py's
import starts it, so a rank's first call does not wait for the other ranks,
and a rank that never computes still ends normally. Rank 0 computes at once;
rank 1 only after 3 s; rank 2 never. Exit 0 when rank 0's first gram and rk4
took well under those 3 s and every rank ends."""
import os
import sys
import time

import numpy as np

import kmini

rank = int(os.environ.get("OMPI_COMM_WORLD_RANK", os.environ.get("PMI_RANK", "0")))
ok = True
if rank == 0:
    t = time.monotonic()
    C = kmini.gram(np.eye(4, dtype=bool)).C
    _, _, delta = kmini.rk4(np.ones(4, complex), np.zeros(4, complex), steps=3)
    seconds = time.monotonic() - t
    ok = seconds < 2.0 and C.trace() == 4 and delta.shape == (4,)
    print(f"rank 0: first gram and rk4 in {seconds:.2f} s (rank 1 starts computing after 3 s)", flush=True)
elif rank == 1:
    time.sleep(3)
    kmini.rk4(np.ones(4, complex), np.zeros(4, complex), steps=3)
    print("rank 1: computed after 3 s", flush=True)
else:
    print(f"rank {rank}: never computes", flush=True)
assert kmini.info()["mpi_launcher"]
sys.exit(0 if ok else 1)
