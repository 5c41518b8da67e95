"""Under mpirun, each rank imports kmini and computes on its own (MPI_COMM_SELF):
run by ctest at 2 ranks (python.kmini_mpi_np2). Exit 0 when every rank's result
equals numpy's."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kmini  # noqa: E402
from rk4_numpy import rk4 as numpy_rk4, start  # noqa: E402

rank = int(os.environ.get("OMPI_COMM_WORLD_RANK", os.environ.get("PMI_RANK", "0")))
F0, G0 = start((6, 6), seed=10 + rank)  # a different problem per rank
F, G, delta = kmini.rk4(F0, G0, steps=10, dt=0.01, g=1 / 36, coupling="per_stage")
Fr, Gr, dr = numpy_rk4(F0, G0, 10, 0.01, 1 / 36, 0.0, True)
err = max(np.abs(F - Fr).max(), np.abs(delta - dr).max() / np.abs(dr).max())
m = np.random.default_rng(rank).uniform(size=(3, 4))
x = np.random.default_rng(rank + 7).uniform(size=(2, 3, 4))
exact = np.array_equal(kmini.discount(m, x), m * x)
print(f"rank {rank}: rk4 error {err:.2e}, discount exact {exact}")
sys.exit(0 if err < 1e-12 and exact else 1)
