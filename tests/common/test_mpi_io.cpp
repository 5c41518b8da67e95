// MPI pieces at any rank count: the distributed .npy write and status agreement.
#include "core/collective.hpp"
#include "core/environment.hpp"
#include "io/npy.hpp"

#include "support/mpi_test_support.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <numeric>
#include "support/relocated_path.hpp"

namespace kmini {

using mpi_test::rank;
using mpi_test::size;

TEST(MpiIo, DistributedWriteEqualsSerialWrite) {
  // Uneven row blocks: rank r holds r+1 rows of 3 values.
  const int p = size(), r = rank();
  std::int64_t rows = 0, first_row = 0;
  for (int k = 0; k < p; ++k) {
    if (k < r) first_row += k + 1;
    rows += k + 1;
  }
  std::vector<double> mine(static_cast<std::size_t>(3 * (r + 1)));
  std::iota(mine.begin(), mine.end(), 3.0 * first_row);
  const std::string dir = kmini::test::relocated(KMINI_TEST_WORK) + "/mpi_np" + std::to_string(p);
  if (r == 0) std::filesystem::create_directories(dir);
  MPI_Barrier(MPI_COMM_WORLD);
  const std::string path = dir + "/dist.npy";
  npy::write_distributed(MPI_COMM_WORLD, path, npy::DType::F8, {rows, 3}, 3 * first_row, mine.size(), mine.data());

  const auto info = npy::read_info(path);  // strict: exact size, valid header
  EXPECT_EQ(info.shape, (npy::Shape{rows, 3}));
  const auto all = npy::read_all<double>(info);
  for (std::size_t i = 0; i < all.size(); ++i) ASSERT_EQ(all[i], static_cast<double>(i));
  for (const auto& e : std::filesystem::directory_iterator(dir))
    EXPECT_EQ(e.path().filename().string().find(".kmini-tmp."), std::string::npos) << e.path();
}

TEST(MpiIo, AgreeOnStatusTakesTheWorstAndItsMessage) {
  const int p = size(), r = rank();
  std::string msg = (r == p - 1) ? "last rank failed" : "";
  const int status = agree_on_status(MPI_COMM_WORLD, r == p - 1 ? 2 : 0, msg);
  EXPECT_EQ(status, 2);
  EXPECT_EQ(msg, "last rank failed");
  std::string none;
  EXPECT_EQ(agree_on_status(MPI_COMM_WORLD, 0, none), 0);
}

// An error only one rank sees (a failed write on rank 0, a bad read on the
// last rank) becomes the same exception on every rank: nobody is left
// waiting in a collective the others never reach.
TEST(MpiIo, OneRanksFailureIsEveryRanksException) {
  const int p = size(), r = rank();
  std::string what;
  try {
    collectively(MPI_COMM_WORLD, [&] {
      if (r == p - 1) throw RuntimeFailure("disk error on rank " + std::to_string(r));
    });
  } catch (const RuntimeFailure& e) {
    what = e.what();
  }
  EXPECT_EQ(what, "disk error on rank " + std::to_string(p - 1));
  bool usage = false;
  try {
    on_root_collectively(MPI_COMM_WORLD, [] { throw UsageError("summary.json: bad path"); });
  } catch (const UsageError& e) {
    usage = std::string(e.what()) == "summary.json: bad path";
  }
  EXPECT_TRUE(usage) << "rank " << r;
  // And no exception where no rank failed.
  EXPECT_NO_THROW(collectively(MPI_COMM_WORLD, [] {}));
}

}  // namespace kmini
