// The generated bad inputs through the real kmini binary: a sample of the
// in-process families (the binary behaves as run_app does: exit 2, one
// `kmini: error:` line, nothing written), two of them at 2 MPI ranks, and the
// families that would crash or hang a process on a regression (oversize values, malformed
// Kokkos flags), which only a separate process can survive.
#include "bad_input_cases.hpp"
#include "case_support.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <thread>
#include "../support/relocated_path.hpp"

namespace kmini::fault {
namespace {

std::string work_dir() { return kmini::test::relocated(KMINI_TEST_WORK) + "/fault_binary"; }

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string p; std::getline(ss, p, sep);)
    if (!p.empty()) out.push_back(p);
  return out;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

struct ProcessRun {
  int status = -1;  // exit status, 128 + signal, or 124 when killed at the time limit
  std::string out, err;
};

// Runs argv in dir with a private TMPDIR (concurrent OpenMPI jobs clash in
// /tmp), at most 8 GiB of address space per process and a time limit.
// `scratch` holds the captured output and the TMPDIR, outside `dir`.
ProcessRun run_process(const std::vector<std::string>& argv, const std::string& dir, const std::string& scratch,
                       double limit_s, const std::vector<std::string>& env = {}) {
  // A fresh TMPDIR per run, never reused: the singleton's orted outlives
  // kmini for a moment, and removing its session directory under it while
  // the next run creates one at the same path made OpenMPI print "PMIX ERROR:
  // NO-PERMISSIONS ... dstore_base.c" into the next run's stderr (once in
  // three suite runs under load).
  static int runs = 0;
  const std::string tmp = scratch + "/tmp." + std::to_string(++runs);
  const std::string out_path = scratch + "/stdout", err_path = scratch + "/stderr";
  remove_tree(tmp);
  std::filesystem::create_directories(tmp);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    if (::chdir(dir.c_str()) != 0) ::_exit(126);
    const int o = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(o, 1);
    ::dup2(e, 2);
    ::setenv("TMPDIR", tmp.c_str(), 1);
    for (const auto& e : env) ::putenv(const_cast<char*>(e.c_str()));  // the child's own copy of env
#if !KMINI_TEST_DEVICE_BACKEND  // the CUDA runtime's start needs more address space than any such limit
    const rlim_t limit = rlim_t(8) << 30;
    rlimit rl{limit, limit};
    ::setrlimit(RLIMIT_AS, &rl);
#endif
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ProcessRun r;
  int wstatus = 0;
  const auto start = std::chrono::steady_clock::now();
  while (true) {
    const pid_t done = ::waitpid(pid, &wstatus, WNOHANG);
    if (done == pid) break;
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > limit_s) {
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, &wstatus, 0);
      r.status = 124;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (r.status != 124) r.status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
  r.out = slurp(out_path);
  r.err = slurp(err_path);
  return r;
}

std::vector<std::string> kmini_command(const BadCase& c, int ranks) {
  std::vector<std::string> cmd;
  if (ranks > 0) {
    cmd.push_back(kmini::test::relocated(KMINI_MPIEXEC));
    for (auto& f : split(KMINI_MPIEXEC_FLAGS, ';')) cmd.push_back(f == "NP" ? std::to_string(ranks) : f);
  }
  cmd.push_back(kmini::test::relocated(KMINI_EXE));
  const auto a = arguments(c);
  cmd.insert(cmd.end(), a.begin(), a.end());
  return cmd;
}

// Runs the cases through the binary (at `ranks` MPI ranks through mpiexec
// when > 0) and reports them as one group.
void run_group(const std::string& group, const std::vector<BadCase>& cases, int ranks) {
  const std::uint64_t seed = seed_from_environment();
  const std::string root = work_dir() + "/" + group;
  remove_tree(root);
  std::vector<Failure> failures;
  const auto start = std::chrono::steady_clock::now();
  for (const auto& c : cases) {
    const std::string dir = root + "/" + c.id;
    materialise(c, dir);
    const double limit = ranks > 0 ? c.time_limit_s + 30 : c.time_limit_s;
    const auto command = kmini_command(c, ranks);
    const ProcessRun r = run_process(command, dir, root + ".scratch", limit, c.env);
    std::cout << "  " << c.id << " [" << c.what.substr(0, 100) << "]: " << shell_join(command).substr(0, 300) << " -> "
              << r.status << "\n";
    auto problems = ranks > 0 ? check_mpi_run(c, dir, r.status, r.err) : check_run(c, dir, r.status, r.err);
    if (r.status == 124)
      problems.insert(problems.begin(), "killed after " + std::to_string(int(limit)) + " s (a hang)");
    else if (r.status > 128) problems.insert(problems.begin(), "died of signal " + std::to_string(r.status - 128));
    if (problems.empty()) remove_tree(dir);
    else failures.push_back(Failure{c, dir, problems, r.err});
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << report(group, cases.size(), failures, seed, seconds) << std::flush;
  remove_tree(root + ".scratch");
  if (failures.empty()) remove_tree(root);
  EXPECT_TRUE(failures.empty()) << group << ": " << failures.size() << " of " << cases.size()
                                << " case(s) failed through the binary (listed above)";
}

// One case from each of `count` families whose name starts with `prefix`
// (seeded picks), in family order.
std::vector<BadCase> sample(const std::string& prefix, std::size_t count) {
  const std::uint64_t seed = seed_from_environment();
  std::vector<const Family*> matching;
  for (const auto& f : families())
    if (f.where == Where::InProcess && f.name.rfind(prefix, 0) == 0) matching.push_back(&f);
  Rng rng(seed ^ hash_name("binary sample " + prefix));
  std::vector<BadCase> out;
  for (std::size_t i : rng.sample(matching.size(), count)) {
    const auto cases = generate(*matching[i], seed);
    out.push_back(cases[rng.below(cases.size())]);
  }
  return out;
}

TEST(BadInputBinary, SampleOfGeneratedDecks) { run_group("binary.decks", sample("deck.", 10), 0); }

TEST(BadInputBinary, SampleOfMutatedNpyFiles) { run_group("binary.npy", sample("npy.", 10), 0); }

// The first case of `family` whose description contains `what`.
BadCase find_case(const std::string& family_name, const std::string& what) {
  for (const auto& c : generate(family(family_name), seed_from_environment()))
    if (c.what.find(what) != std::string::npos) return c;
  throw std::invalid_argument("no case '" + what + "' in " + family_name);
}

// Where ranks must agree: rank 0 alone finds the --out problem, and every
// rank finds the bad matrix element while the kernel runs.
TEST(BadInputBinary, TwoRanks) {
  run_group("binary.np2", {find_case("deck.cli_args", "--out names an existing file"), find_case("npy.values", "")}, 2);
}

TEST(BadInputBinary, OversizeValues) {
  run_group("deck.oversize", generate(family("deck.oversize"), seed_from_environment()), 0);
}

TEST(BadInputBinary, MalformedKokkosFlags) {
  run_group("deck.kokkos_flags", generate(family("deck.kokkos_flags"), seed_from_environment()), 0);
}

// Files that are not regular files, or cannot be read (a hang or a
// 4 GB read is a failure), at 1 rank; at 2 ranks a sample of them, of Kokkos'
// environment and tools, and of the sizes with units.
TEST(BadInputBinary, SpecialFiles) {
  run_group("deck.special_files", generate(family("deck.special_files"), seed_from_environment()), 0);
}

TEST(BadInputBinary, KokkosEnvironmentAndTools) {
  run_group("deck.kokkos_environment", generate(family("deck.kokkos_environment"), seed_from_environment()), 0);
}

TEST(BadInputBinary, SpecialFilesAndKokkosEnvironmentTwoRanks) {
  run_group("binary.special_files_np2",
            {find_case("deck.special_files", "a named pipe as the deck"), find_case("deck.special_files", "(EIO)"),
             find_case("deck.kokkos_environment", "KOKKOS_NUM_THREADS=abc"),
             find_case("deck.kokkos_environment", "--kokkos-tools-libs naming a missing library"),
             find_case("deck.byte_sizes", "12 furlongs")},
            2);
}

}  // namespace
}  // namespace kmini::fault

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
