// Output safety: bounded temporary names, the SIGTERM clean-up registry, and
// the checks every output path passes before a run.
#include "core/errors.hpp"
#include "core/termination.hpp"
#include "io/atomic_file.hpp"
#include "io/output_files.hpp"
#include "support/test_support.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>

namespace kmini {

TEST(OutputFiles, TemporaryNamesAreBoundedAndMarked) {
  const std::string dir = "/some/dir";
  const std::string long_name(250, 'c');
  const std::string t = temporary_name_for(dir + "/" + long_name);
  const std::string base = t.substr(dir.size() + 1);
  EXPECT_EQ(t.compare(0, dir.size() + 1, dir + "/"), 0) << t;
  EXPECT_EQ(base.rfind(std::string(48, 'c') + kTemporaryMarker, 0), 0u) << base;
  EXPECT_LT(base.size(), 48u + 40u) << base;
  // Short names are kept whole, and two names in one process differ.
  const std::string a = temporary_name_for("C.npy"), b = temporary_name_for("C.npy");
  EXPECT_EQ(a.rfind(std::string("C.npy") + kTemporaryMarker, 0), 0u) << a;
  EXPECT_NE(a, b);
}

TEST(OutputFiles, TemporariesAreRegisteredOnlyWhileInFlight) {
  const std::string dir = test::work_path("output_files_registry");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const int before = termination::registered_count();
  {
    AtomicFile f(dir + "/a.txt");
    EXPECT_EQ(termination::registered_count(), before + 1);
    f.write("hello\n");
    f.commit();
    EXPECT_EQ(termination::registered_count(), before);
  }
  {
    AtomicFile f(dir + "/b.txt");
    EXPECT_EQ(termination::registered_count(), before + 1);
  }  // abandoned: removed and unregistered
  EXPECT_EQ(termination::registered_count(), before);
  EXPECT_TRUE(std::filesystem::exists(dir + "/a.txt"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/b.txt"));
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) files += e.path().filename() == "a.txt" ? 0 : 1;
  EXPECT_EQ(files, 0) << "a temporary file was left behind";
}

// The handler itself, in a forked child (gtest death test): SIGTERM removes the
// registered temporary, prints one line and exits 143.
TEST(OutputFilesDeathTest, SigtermRemovesTemporariesAndSaysSoOnce) {
  const std::string dir = test::work_path("output_files_sigterm");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string tmp = dir + "/C.npy" + kTemporaryMarker + "1.0";
  std::ofstream(tmp) << "partial";
  EXPECT_EXIT(
      {
        termination::install_handlers(true);
        termination::TemporaryFile registered(tmp);
        std::raise(SIGTERM);
      },
      ::testing::ExitedWithCode(143),
      "^kmini: error: terminated by SIGTERM: temporary output files removed, previous outputs unchanged \\(exit "
      "143\\)\n$");
  EXPECT_FALSE(std::filesystem::exists(tmp));
}

// A temporary that MPI-IO opens: a signal while MPI_File_open runs also
// finds the file Open MPI's shared-file-pointer component creates beside it
// (PATH.locktest.RANK); the handler removes that too, and no other rank's.
TEST(OutputFilesDeathTest, SigtermRemovesMpiIoLockProbeBesideTheTemporary) {
  const std::string dir = test::work_path("output_files_sigterm_locktest");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string tmp = dir + "/pairs.npy" + kTemporaryMarker + "1.2";
  std::ofstream(tmp) << "partial";
  std::ofstream(tmp + ".locktest.3") << "";
  std::ofstream(tmp + ".locktest.4") << "";  // another rank's: that rank removes it
  EXPECT_EXIT(
      {
        termination::install_handlers(true);
        termination::TemporaryFile registered(tmp, 3);
        std::raise(SIGTERM);
      },
      ::testing::ExitedWithCode(143), "temporary output files removed");
  EXPECT_FALSE(std::filesystem::exists(tmp));
  EXPECT_FALSE(std::filesystem::exists(tmp + ".locktest.3"));
  EXPECT_TRUE(std::filesystem::exists(tmp + ".locktest.4"));
}

// Once the run's status is decided and reported, the teardown signal mpiexec
// sends to the remaining ranks is silent and keeps that status (CI found two
// 'kmini: error:' lines when rank 1 exited first under a full disk).
TEST(OutputFilesDeathTest, SignalAfterTheStatusIsDecidedIsSilent) {
  const std::string dir = test::work_path("output_files_decided");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string tmp = dir + "/C.npy" + kTemporaryMarker + "1.1";
  std::ofstream(tmp) << "partial";
  EXPECT_EXIT(
      {
        termination::install_handlers(true);
        termination::TemporaryFile registered(tmp);
        termination::status_decided(1);
        std::raise(SIGTERM);
      },
      ::testing::ExitedWithCode(1), "^$");
  EXPECT_FALSE(std::filesystem::exists(tmp));
}

TEST(OutputFiles, BadPathsAreUsageErrorsNamingOriginAndReason) {
  const std::string dir = test::work_path("output_files_checks");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/sub");
  const std::string origin = "deck.yaml:3: gram.write.C";
  KMINI_EXPECT_THROW_MSG(check_output_file({origin, dir + "/missing/C.npy"}), UsageError,
                         "deck.yaml:3: gram.write.C: cannot write '" + dir + "/missing/C.npy': directory '" + dir +
                             "/missing' does not exist");
  KMINI_EXPECT_THROW_MSG(check_output_file({origin, dir + "/sub"}), UsageError, "it is a directory");
  KMINI_EXPECT_THROW_MSG(check_output_file({origin, dir + "/" + std::string(300, 'x')}), UsageError,
                         "the file name has 300 characters, the file system allows 255");
  KMINI_EXPECT_THROW_MSG(check_output_file({origin, dir + "/"}), UsageError, "expected a file name");
  // A good path passes and leaves nothing behind (the probe file is removed).
  check_output_file({origin, dir + "/C.npy"});
  EXPECT_FALSE(std::filesystem::exists(dir + "/C.npy"));
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), {}), 1);  // only sub/
  // Two outputs naming the same file.
  KMINI_EXPECT_THROW_MSG(
      check_output_files(MPI_COMM_WORLD, {{"--out x", dir + "/C.npy"}, {origin, dir + "/sub/../C.npy"}}), UsageError,
      "it is also the output of --out x");
}

}  // namespace kmini
