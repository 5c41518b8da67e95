// GoogleTest main for kmini's unit tests: MPI and Kokkos live for the whole run.
#include "core/environment.hpp"

#include <gtest/gtest.h>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  kmini::Environment env(argc, argv);
  return RUN_ALL_TESTS();
}
