#pragma once
// A team of one process may run without MPI: MPI_COMM_NULL stands for it (a
// library call in a process that has not started MPI, or cannot use it, such
// as a forked child). These are MPI's calls for every team, each giving the
// one-rank result on such a team without calling MPI.
#include <mpi.h>

namespace kmini::mpi {

inline bool solo(MPI_Comm comm) { return comm == MPI_COMM_NULL; }

inline int rank(MPI_Comm comm) {
  int r = 0;
  if (!solo(comm)) MPI_Comm_rank(comm, &r);
  return r;
}

inline int size(MPI_Comm comm) {
  int n = 1;
  if (!solo(comm)) MPI_Comm_size(comm, &n);
  return n;
}

inline void barrier(MPI_Comm comm) {
  if (!solo(comm)) MPI_Barrier(comm);
}

// In place: `data` becomes the reduction over the ranks.
inline void allreduce(MPI_Comm comm, void* data, int count, MPI_Datatype type, MPI_Op op) {
  if (!solo(comm)) MPI_Allreduce(MPI_IN_PLACE, data, count, type, op, comm);
}

}  // namespace kmini::mpi
