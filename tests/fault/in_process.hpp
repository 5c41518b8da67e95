#pragma once
// Runs kmini's run_app in this process on a generated case, capturing
// everything it prints, with a watchdog for hangs and a note on crashes.
#include "bad_input_cases.hpp"
#include "core/environment.hpp"

#include <string>

namespace kmini::fault {

// Set once by the test's main(): MPI and Kokkos live for the whole run.
void set_environment(const Environment* env);
const Environment& environment();

// The directory the generated cases live in (KMINI_TEST_WORK/fault_generator).
std::string work_dir();

struct InProcessRun {
  int status = -1;
  std::string err;        // the `err` stream, std::cerr and file descriptor 2
  std::string out;        // the `out` stream, std::cout and file descriptor 1
  std::string exception;  // what escaped run_app, if anything
  double seconds = 0;
};

// Runs `kmini <arguments(c)>` in `dir` (the working directory meanwhile).
// A case that runs past c.time_limit_s ends the process (exit 124) after
// printing the case; a crash prints the case before the signal's default.
InProcessRun run_in_process(const BadCase& c, const std::string& dir);

// Registers one GoogleTest per in-process family (test_bad_input_generator.cpp).
void register_family_tests();

// Installs the crash handlers and starts the watchdog (once, from main).
void install_guards();

}  // namespace kmini::fault
