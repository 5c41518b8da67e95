// Allocation failures on some ranks only: every rank gets the same one-line
// error and the ranks stay in step (no rank waits in a collective the others
// skipped), and the device memory every rank plans with is the same.
#include "core/collective.hpp"
#include "core/device_memory.hpp"

#include "support/mpi_test_support.hpp"

#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

#include <string>

namespace kmini {

using mpi_test::rank;
using mpi_test::size;

TEST(MpiSizes, AnAllocationFailingOnTheLastRankStopsEveryRank) {
  const int last = size() - 1;
  std::string message;
  try {
    collectively(MPI_COMM_WORLD, "stream", [&] {
      // 1 EiB on the last rank only: more than any address space.
      Kokkos::View<char*, Kokkos::DefaultExecutionSpace::memory_space> v("kmini::test::huge",
                                                                         rank() == last ? std::int64_t(1) << 60 : 16);
    });
    ADD_FAILURE() << "rank " << rank() << " did not throw";
  } catch (const RuntimeFailure& e) {
    message = e.what();
  }
  EXPECT_EQ(message.rfind("stream: device allocation of kmini::test::huge (1 EiB) failed: ", 0), 0u) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos);
  // Still in step: a collective right after sees every rank.
  int ranks = 1;
  MPI_Allreduce(MPI_IN_PLACE, &ranks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(ranks, size());
}

TEST(MpiSizes, TheLowestFailingRanksMessageWins) {
  std::string message;
  try {
    collectively(MPI_COMM_WORLD, "gram", [&] {
      if (rank() > 0 || size() == 1) throw RuntimeFailure("rank " + std::to_string(rank()) + " failed");
    });
  } catch (const RuntimeFailure& e) {
    message = e.what();
  }
  EXPECT_EQ(message, size() == 1 ? "rank 0 failed" : "rank 1 failed");
}

TEST(MpiSizes, EveryRankPlansWithTheSameMemory) {
  const RankMemory m = device_memory_per_rank(MPI_COMM_WORLD);
  std::uint64_t v[2] = {m.per_rank, m.device_available}, lo[2], hi[2];
  MPI_Allreduce(v, lo, 2, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(v, hi, 2, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_EQ(lo[0], hi[0]);
  EXPECT_EQ(lo[1], hi[1]);
  // Ranks of one node share its memory on host backends: each plans with its share.
  EXPECT_LE(m.per_rank * std::uint64_t(m.sharing_ranks), m.device_available);
}

}  // namespace kmini
