// GoogleTest main for kmini's MPI tests: MPI and Kokkos live for the whole run.
#include "core/environment.hpp"

#include <gtest/gtest.h>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  kmini::Environment env(argc, argv);
  // Only rank 0 reports; every rank's failures still fail the run.
  if (!env.is_root()) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int failed = RUN_ALL_TESTS();
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, env.comm());
  return failed;
}
