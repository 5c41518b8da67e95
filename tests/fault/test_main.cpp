// GoogleTest main for the in-process bad-input tests: MPI and Kokkos live for
// the whole run, and run_app is called once per generated case.
#include "../support/private_tmpdir.hpp"
#include "core/environment.hpp"
#include "core/kokkos_compat.hpp"
#include "deck_key_rules_writer.hpp"
#include "in_process.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <string>
#include "../support/relocated_path.hpp"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  kmini::test::use_private_tmpdir(
      kmini::test::relocated(KMINI_TEST_TMP));  // before MPI_Init: its session directory goes there
  // A case kmini wrongly accepts must not take the shared machine's memory.
  // Not on GPU builds: the CUDA runtime reserves more address space than any
  // such limit at its first call (cudaGetDeviceCount: out of memory, H100).
  if (kmini::compat::device_is_host_accessible) {
    const rlim_t limit = rlim_t(8) << 30;
    rlimit rl{limit, limit};
    setrlimit(RLIMIT_AS, &rl);
  }
  kmini::Environment env(argc, argv);
  kmini::fault::set_environment(&env);
  // The fixture fault.deck_key_rules: writes the keys' rules and exits.
  if (argc == 3 && std::string(argv[1]) == "--write-deck-key-rules") return kmini::fault::write_deck_key_rules(argv[2]);
  kmini::fault::install_guards();
  kmini::fault::register_family_tests();
  return RUN_ALL_TESTS();
}
