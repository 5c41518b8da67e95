// Sizes: overflow-checked arithmetic, the device memory query, each kernel's
// memory plan, and how allocation failures become one-line errors.
#include "core/checked_size.hpp"
#include "core/collective.hpp"
#include "core/device_memory.hpp"
#include "core/format.hpp"
#include "core/kokkos_compat.hpp"
#include "discount/discount.hpp"
#include "gram/gram.hpp"
#include "rk4/rk4.hpp"
#include "stream/stream.hpp"
#include "support/test_support.hpp"

#include <Kokkos_Core.hpp>

#include <new>
#include <stdexcept>
#include <vector>

namespace kmini {
namespace {

constexpr std::uint64_t kMax = 9223372036854775807ull;  // 2^63 - 1

TEST(CheckedSize, MultiplyAtTheEdges) {
  EXPECT_EQ(checked_mul(0, 0), 0u);
  EXPECT_EQ(checked_mul(0, kMax), 0u);
  EXPECT_EQ(checked_mul(kMax, 0), 0u);
  EXPECT_EQ(checked_mul(1, kMax), kMax);
  EXPECT_EQ(checked_mul(kMax, 1), kMax);
  // 3 * 3074457345618258602 = 2^63 - 2 fits; one more in either factor does not.
  EXPECT_EQ(checked_mul(3, 3074457345618258602ull), kMax - 1);
  EXPECT_FALSE(checked_mul(3, 3074457345618258603ull));
  EXPECT_EQ(checked_mul(1ull << 62, 1), 1ull << 62);
  EXPECT_FALSE(checked_mul(1ull << 62, 2));  // 2^63: one past the limit
  EXPECT_FALSE(checked_mul(4, 1ull << 62));  // 2^64: wraps to 0 unchecked
  EXPECT_FALSE(checked_mul(kMax, kMax));
  // Operands above the limit (a negative int64 cast to unsigned) are overflow, even times 1.
  EXPECT_FALSE(checked_mul(kMax + 1, 1));
  EXPECT_FALSE(checked_mul(static_cast<std::uint64_t>(std::int64_t(-1)), 1));
}

TEST(CheckedSize, AddAtTheEdges) {
  EXPECT_EQ(checked_add(0, 0), 0u);
  EXPECT_EQ(checked_add(kMax, 0), kMax);
  EXPECT_EQ(checked_add(kMax - 1, 1), kMax);
  EXPECT_FALSE(checked_add(kMax, 1));
  EXPECT_FALSE(checked_add(1, kMax));
  EXPECT_FALSE(checked_add(kMax + 1, 0));
}

TEST(CheckedSize, ProductsOfShapes) {
  EXPECT_EQ(checked_product({}), 1u);
  EXPECT_EQ(checked_product({2, 3, 4}), 24u);
  EXPECT_EQ(checked_product({1ull << 31, 1ull << 31}), 1ull << 62);
  EXPECT_FALSE(checked_product({1ull << 31, 1ull << 31, 2}));  // 2^63
  EXPECT_FALSE(checked_product({4, 1ull << 62}));
  EXPECT_FALSE(checked_product({kMax, kMax, 1}));
  // A zero anywhere makes the product 0, even after factors that overflow.
  EXPECT_EQ(checked_product({kMax, kMax, 0}), 0u);
  EXPECT_EQ(checked_product(std::vector<std::int64_t>{3, 0, 4611686018427387904}), 0u);
  EXPECT_EQ(checked_product(std::vector<std::int64_t>{3, 5}), 15u);
  EXPECT_FALSE(checked_product(std::vector<std::int64_t>{3, -5}));
  EXPECT_EQ(product_or_throw({1000, 1000}, "x"), 1000000u);
  KMINI_EXPECT_THROW_MSG(product_or_throw({1ull << 62, 2}, "shape (2, 2^62)"), UsageError,
                         "shape (2, 2^62) is too large (overflows 64-bit byte count)");
}

TEST(CheckedSize, ByteCountKeepsAnApproximationPastTheLimit) {
  const ByteCount small = ByteCount::of(1000, 24);
  EXPECT_TRUE(small.fits());
  EXPECT_EQ(small.exact(), 24000u);
  EXPECT_TRUE(small.within(24000));
  EXPECT_FALSE(small.within(23999));
  const ByteCount huge = ByteCount::of(1ull << 62, 24);  // stream.n = 2^62: 96 EiB
  EXPECT_FALSE(huge.fits());
  EXPECT_FALSE(huge.within(kMax));
  EXPECT_DOUBLE_EQ(huge.approx(), 96.0 * 1152921504606846976.0);
  // Sums overflow too, and stay overflowed.
  const ByteCount half(1ull << 62);
  EXPECT_TRUE(half.fits());
  EXPECT_FALSE((half + half).fits());
  EXPECT_TRUE((half + ByteCount(kMax - (1ull << 62))).fits());
  EXPECT_FALSE((huge + small).fits());
  EXPECT_EQ(max(small, ByteCount(10)).exact(), 24000u);
  EXPECT_FALSE(max(small, huge).fits());
  EXPECT_FALSE(max(huge, small).fits());
}

TEST(DeviceMemory, FormatsBinaryUnits) {
  EXPECT_EQ(format_bytes(0), "0 B");
  EXPECT_EQ(format_bytes(1023), "1023 B");
  EXPECT_EQ(format_bytes(1024), "1 KiB");
  EXPECT_EQ(format_bytes(1.5 * (1 << 30)), "1.5 GiB");
  EXPECT_EQ(format_bytes(23.1 * (1 << 30)), "23.1 GiB");
  EXPECT_EQ(format_bytes(96.0 * 1152921504606846976.0), "96 EiB");
  EXPECT_EQ(format_bytes(1e22), "8674 EiB");
}

TEST(DeviceMemory, ShortfallNamesNeedAndAvailability) {
  RankMemory m;
  m.per_rank = m.device_available = 23ull << 30;
  EXPECT_EQ(memory_shortfall(ByteCount(23ull << 30), m), "");
  EXPECT_EQ(memory_shortfall(ByteCount((23ull << 30) + 1), m),
            "needs 23 GiB of device memory per rank, the device has 23 GiB available");
  EXPECT_EQ(memory_shortfall(ByteCount::of(1ull << 62, 24), m),
            "needs 96 EiB of device memory per rank, the device has 23 GiB available");
  m.per_rank = 23ull << 29;
  m.sharing_ranks = 2;
  EXPECT_EQ(memory_shortfall(ByteCount(12ull << 30), m),
            "needs 12 GiB of device memory per rank, the device has 23 GiB available, 11.5 GiB per rank for the 2 "
            "ranks sharing it");
}

TEST(DeviceMemory, QueryAgreesWithItself) {
  const DeviceMemory local = query_device_memory();
  EXPECT_GT(local.available, 0u);
  EXPECT_GT(local.total, 0u);
  EXPECT_LE(local.available, local.total);
  const RankMemory rank = device_memory_per_rank(MPI_COMM_WORLD);
  EXPECT_GT(rank.per_rank, 0u);
  EXPECT_GE(rank.sharing_ranks, 1);
  EXPECT_LE(rank.per_rank, rank.device_available);
  EXPECT_LT(rank.device_available, 1ull << 60);  // "far less than 1 EiB"
}

// --- plans ------------------------------------------------------------------------

TEST(MemoryPlan, StreamCountsTheLargestOp) {
  stream::Config c;
  EXPECT_EQ(stream::bytes_per_element(c), 24u);  // add: a, b, c of float64
  c.ops = {"exp"};
  EXPECT_EQ(stream::bytes_per_element(c), 8u);  // exp: a, c of float32
}

TEST(MemoryPlan, Rk4CountsFieldsHistoryAndVerification) {
  rk4::Config c;
  c.problem.n = 1000;
  c.problem.steps = 99;
  c.single = true;
  c.verify_steps = 0;
  // Device backend: F and G of 8 bytes (updated in place) + the invariant per element, 100 deltas, fixed buffers.
  const auto gpu = rk4::memory_per_rank(c, 1, true, false);
  EXPECT_EQ(gpu.fields.exact(), 1000000u * 16);
  EXPECT_EQ(gpu.history.exact(), 100u * 16);
  EXPECT_EQ(gpu.total.exact(), 1000000u * 24 + 1600 + (64 << 10));
  // Host backend: the host copy of the history too.
  EXPECT_EQ(rk4::memory_per_rank(c, 1, true, true).total.exact(), 1000000u * 24 + 3200 + (64 << 10));
  // Rows split over ranks: the largest block (rank 0: 334 rows of 3).
  EXPECT_EQ(rk4::memory_per_rank(c, 3, false, false).fields.exact(), 334000u * 16);
  // Verification on a host backend: the host reference's six states dominate.
  c.verify_steps = 10;
  EXPECT_EQ(rk4::memory_per_rank(c, 1, true, true).total.exact(), 1000000u * (16 + 96) + 11 * 16 + (64 << 10));
  EXPECT_EQ(rk4::memory_per_rank(c, 1, false, true).total.exact(), 1000000u * 24 + 3200 + (64 << 10));
  // Writing G on a host backend: G (stored as Re G, Im G) joined into complex values for its file.
  c.write_g = "G.npy";
  EXPECT_EQ(rk4::memory_per_rank(c, 1, false, true).total.exact(), 1000000u * (24 + 8) + 3200 + (64 << 10));
  EXPECT_EQ(rk4::memory_per_rank(c, 1, false, false).total.exact(), 1000000u * 24 + 1600 + (64 << 10));
  c.write_g.clear();
  // steps = 2^60: 2^60 + 1 deltas of 16 bytes overflow; the plan says so instead of wrapping.
  c.problem.steps = 1ll << 60;
  const auto big = rk4::memory_per_rank(c, 1, true, false);
  EXPECT_FALSE(big.history.fits());
  EXPECT_FALSE(big.total.fits());
  EXPECT_GT(big.history.approx(), big.fields.approx());
  c.problem.steps = std::numeric_limits<std::int64_t>::max();
  EXPECT_FALSE(rk4::memory_per_rank(c, 1, true, false).total.fits());
}

TEST(MemoryPlan, GramCountsPackedSliceAndExtras) {
  gram::Config c;
  c.a.rows = 1000;
  c.a.cols = 640;  // 10 words, padded per backend
  c.row_slice = 100;
  const gram::Plan p = gram::make_plan(c, 1);
  ASSERT_EQ(p.height, 100);
  const std::uint64_t packed = 1000 * std::uint64_t(p.words) * 8;
  const std::uint64_t fixed = 1000 * 12 + 64 * 8;  // ones and row sums, histogram
  // Device backend, no verification: packed A + a counts slice + row buffers.
  EXPECT_EQ(gram::device_bytes(c, p, false, false).exact(), packed + 100 * 1000 * 4 + fixed);
  // Host backend: the slice's host copy shares the memory (two with write.C).
  EXPECT_EQ(gram::device_bytes(c, p, false, true).exact(), packed + 100 * 1000 * 8 + fixed);
  c.write_c = "C.npy";
  EXPECT_EQ(gram::device_bytes(c, p, false, true).exact(), packed + 100 * 1000 * 12 + fixed);
  c.write_c.clear();
  // Verification of a small matrix: the double gemm check's matrices.
  EXPECT_EQ(gram::device_bytes(c, p, true, false).exact(),
            packed + 100 * 1000 * 4 + fixed + (1000 * 640 + 64 * 640 + 64 * 1000) * 8);
  // The budget covers the slice as the plan counts it.
  EXPECT_DOUBLE_EQ(gram::slice_bytes_per_row(c, false), 4000.0);
  // A float similarity needs its own slice only when written densely.
  c.similarity = gram::Similarity::Jaccard;
  EXPECT_DOUBLE_EQ(gram::slice_bytes_per_row(c, false), 4000.0);
  c.write_c = "J.npy";
  EXPECT_DOUBLE_EQ(gram::slice_bytes_per_row(c, false), 8000.0);
  EXPECT_DOUBLE_EQ(gram::slice_bytes_per_row(c, true), 16000.0);
  c.write_c.clear();
  // The pairs buffer: a sixteenth of the slice, 24 bytes a record on the device (+ 20 on the host).
  c.write_pairs = "p.npy";
  EXPECT_DOUBLE_EQ(gram::slice_bytes_per_row(c, false), 1000 * (4 + 1.5));
  EXPECT_DOUBLE_EQ(gram::slice_bytes_per_row(c, true), 1000 * (4 + 1.5 + 1.25 + 4));
  c.write_pairs.clear();
  // Top-k lists: rows x k x 16 bytes (host backends: + their host copy and records), beside packed A.
  c.write_top_k = "t.npy";
  c.top_k = 8;
  const gram::Plan tk = gram::make_plan(c, 1);
  EXPECT_EQ(gram::device_bytes(c, tk, false, false).exact(), packed + 100 * 1000 * 4 + fixed + 1000 * 8 * 16);
  // Two inputs: packed B and B's ones; slices as wide as B has rows.
  c.write_top_k.clear();
  c.b.kind = gram::Source::Kind::Random;
  c.b.rows = 300;
  c.b.cols = 640;
  const gram::Plan ab = gram::make_plan(c, 1);
  EXPECT_EQ(ab.targets, 300);
  EXPECT_EQ(gram::device_bytes(c, ab, false, false).exact(),
            1300 * std::uint64_t(p.words) * 8 + 100 * 300 * 4 + fixed + 300 * 4);
  c.b = gram::Source{};
  // The largest matrix the deck allows, in one slice: the bytes overflow, no wrap.
  c.a.rows = c.a.cols = std::numeric_limits<std::int32_t>::max();
  c.row_slice = c.a.rows;
  EXPECT_FALSE(gram::device_bytes(c, gram::make_plan(c, 1), true, true).fits());
}

TEST(MemoryPlan, DiscountCountsTheLargestSlice) {
  discount::Config c;
  c.dates = 10;
  c.ids = 100;
  c.terms = 5;
  EXPECT_EQ(discount::bytes_per_rank(c, 10).exact(), (500u + 2 * 10 * 500) * 8);
  c.dates = 1000000000;
  c.ids = 1000000;
  EXPECT_NEAR(discount::bytes_per_rank(c, c.dates).approx(), 8e16, 1e12);
  c.ids = 4000000000;
  EXPECT_FALSE(discount::bytes_per_rank(c, c.dates).fits());
}

// --- allocation failures --------------------------------------------------------

TEST(AllocationFailure, RecognisesWhatEachKokkosThrows) {
  // Kokkos 3.4 (and 4.0-4.3 without the traceback line).
  const auto v34 = compat::allocation_failure(std::runtime_error(
      "Kokkos failed to allocate memory for label \"kmini::stream::a\".  Allocation using MemorySpace named \"Host\" "
      "failed with the following error:  Allocation of size 7.451e+09 G failed, likely due to insufficient memory.  "
      "(The allocation mechanism was standard malloc().)\n\nTraceback functionality not available\n"));
  ASSERT_TRUE(v34);
  EXPECT_EQ(v34->label, "kmini::stream::a");
  EXPECT_NEAR(v34->bytes, 7.451e9 * (1 << 30), 1e15);
  EXPECT_EQ(v34->reason,
            "Allocation of size 7.451e+09 G failed, likely due to insufficient memory. (The allocation mechanism was "
            "standard malloc().)");
  // Kokkos 4.4+.
  const auto v44 = compat::allocation_failure(
      std::runtime_error("Kokkos ERROR: Cuda memory space failed to allocate 1.5 G (label=\"kmini::rk4::F\")."));
  ASSERT_TRUE(v44);
  EXPECT_EQ(v44->label, "kmini::rk4::F");
  EXPECT_DOUBLE_EQ(v44->bytes, 1.5 * (1 << 30));
  EXPECT_EQ(v44->reason, "Kokkos ERROR: Cuda memory space failed to allocate 1.5 G (label=\"kmini::rk4::F\").");
  // Any bad_alloc (Kokkos' RawMemoryAllocationFailure is one).
  const auto raw = compat::allocation_failure(std::bad_alloc());
  ASSERT_TRUE(raw);
  EXPECT_EQ(raw->label, "");
  EXPECT_LT(raw->bytes, 0);
  // Not allocation failures.
  EXPECT_FALSE(compat::allocation_failure(std::runtime_error("x.npy: cannot open")));
  EXPECT_FALSE(compat::allocation_failure(UsageError("deck.yaml:3: stream.n: got 'x'")));
}

TEST(AllocationFailure, AFailedViewBecomesOneLine) {
  // 2^60 bytes: more than any machine's address space allows, on every backend.
  try {
    Kokkos::View<char*, Kokkos::DefaultExecutionSpace::memory_space> v("kmini::test::huge", std::int64_t(1) << 60);
    FAIL() << "the allocation of 1 EiB succeeded";
  } catch (const std::exception& e) {
    std::string message;
    EXPECT_EQ(describe_failure(e, "stream", message), kExitFailure);
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_EQ(message.rfind("stream: device allocation of kmini::test::huge (1 EiB) failed: ", 0), 0u) << message;
  }
}

TEST(AllocationFailure, CollectivelyRethrowsAsOneLineOnEveryRank) {
  const auto phase = [] {
    Kokkos::View<char*, Kokkos::DefaultExecutionSpace::memory_space> v("kmini::test::huge", std::int64_t(1) << 60);
    return v.extent(0);
  };
  KMINI_EXPECT_THROW_MSG(collectively(MPI_COMM_WORLD, "gram", phase), RuntimeFailure,
                         "gram: device allocation of kmini::test::huge (1 EiB) failed: ");
  // Errors that are not allocations keep their type and message.
  KMINI_EXPECT_THROW_MSG(collectively(MPI_COMM_WORLD, "rk4", [] { throw UsageError("a.npy: cannot open"); }),
                         UsageError, "a.npy: cannot open");
  KMINI_EXPECT_THROW_MSG(collectively(MPI_COMM_WORLD, "rk4", [] { throw std::logic_error("two\nlines"); }),
                         RuntimeFailure, "rk4: two");
  EXPECT_EQ(collectively(MPI_COMM_WORLD, "rk4", [] { return 7; }), 7);
}

}  // namespace
}  // namespace kmini
