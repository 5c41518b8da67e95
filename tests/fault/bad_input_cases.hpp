#pragma once
// Generated bad inputs for kmini: decks, --set/--out forms and
// mutated .npy files, each bad by construction, with what its one-line error
// must name. Plain C++ (no MPI, no Kokkos): the in-process GoogleTest and the
// subprocess driver share it, so a case fails the same way in both.
#include <cstdint>
#include <string>
#include <vector>

namespace kmini::fault {

// A file (or directory) a case needs in its directory before kmini runs.
struct CaseFile {
  std::string name;
  std::string bytes;
  bool directory = false;
  bool fifo = false;  // a named pipe (kmini must not block on it)
};

struct BadCase {
  std::string family;                        // "deck.wrong_type", "npy.truncate", ...
  std::string id;                            // family + ".NNN", unique
  std::string what;                          // what was made bad, one line
  std::vector<CaseFile> files;               // deck.yaml, inputs: written first
  std::vector<std::string> args;             // argv after "kmini", paths relative to the case directory
  std::vector<std::string> env;              // NAME=VALUE set for the run (subprocess families only)
  bool own_out = false;                      // args hold their own --out options
  std::vector<std::string> out_dirs{"out"};  // must be absent or empty afterwards
  // Substrings the error line must contain; "a||b" accepts either.
  std::vector<std::string> must_name;
  int expect_exit = 2;
  double time_limit_s = 20;  // a case running longer counts as a hang
};

enum class Where { InProcess, SubprocessOnly };

struct Family {
  std::string name;  // "deck.wrong_type"
  Where where;
  std::vector<BadCase> (*generate)(std::uint64_t seed);
};

// Every family, deck ones first. Generation is deterministic in the seed.
const std::vector<Family>& families();
const Family& family(const std::string& name);
std::vector<BadCase> generate(const Family& f, std::uint64_t seed);  // ids and family filled in

// The fixed seed, or KMINI_FAULT_SEED from the environment.
std::uint64_t seed_from_environment();

// Valid inputs built like the bad ones (the controls): each must exit 0 and
// write results.json, which shows the "nothing written" check can see writes.
std::vector<BadCase> controls();

// --- running a case, in or out of process ---------------------------------------

// The arguments after "kmini": the case's, then --out out unless it has its own.
std::vector<std::string> arguments(const BadCase& c);

// Creates `dir` afresh and writes the case's files into it.
void materialise(const BadCase& c, const std::string& dir);
// Removes `dir` and everything in it.
void remove_tree(const std::string& dir);

// Every problem with what one run left and printed ("" entries never).
// stderr_text is everything written to stderr during the run.
std::vector<std::string> check_run(const BadCase& c, const std::string& dir, int status,
                                   const std::string& stderr_text);
// The problems, unless the run printed exactly one `kmini: error:` line among
// other lines (mpiexec adds its own notices): used for multi-rank runs.
std::vector<std::string> check_mpi_run(const BadCase& c, const std::string& dir, int status,
                                       const std::string& stderr_text);

// How to reproduce a case with the real binary: the command, the deck text
// and which input files lie in the kept directory.
std::string describe(const BadCase& c, const std::string& dir);

// One failed case, for the report.
struct Failure {
  BadCase c;
  std::string dir;
  std::vector<std::string> problems;
  std::string stderr_text;
};
// A summary line, then the first failures in full (how to reproduce them with
// the real binary) and the rest one line each.
std::string report(const std::string& family, std::size_t cases, const std::vector<Failure>& failures,
                   std::uint64_t seed, double seconds);

// "a b 'c d'" for a shell.
std::string shell_join(const std::vector<std::string>& words);

}  // namespace kmini::fault
