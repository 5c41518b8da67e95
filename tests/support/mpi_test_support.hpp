#pragma once
// What the MPI tests share: this process's rank and the rank count of MPI_COMM_WORLD.
#include <mpi.h>

namespace kmini::mpi_test {

inline int rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

inline int size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

}  // namespace kmini::mpi_test
