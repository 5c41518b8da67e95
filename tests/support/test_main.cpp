// GoogleTest main for kmini's unit tests: MPI and Kokkos live for the whole run.
#include "core/environment.hpp"
#include "support/private_tmpdir.hpp"
#include "support/segv_trace.hpp"

#include <gtest/gtest.h>
#include "support/relocated_path.hpp"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  kmini::test::use_private_tmpdir(kmini::test::relocated(KMINI_TEST_TMP));
  kmini::Environment env(argc, argv);
  kmini::test::install_segv_trace();
  return RUN_ALL_TESTS();
}
