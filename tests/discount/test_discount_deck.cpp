// The discount deck section and the date split over ranks: no device work,
// so in the backend-free test executable.
#include "deck/deck.hpp"
#include "discount/discount.hpp"
#include "discount/impl/discount_kernels.hpp"
#include "support/test_support.hpp"

#include <gtest/gtest.h>

#include <string>
#include "support/relocated_path.hpp"

namespace kmini {
namespace {

using discount::Reduce;

TEST(Discount, DateSlicesCoverAllDatesOnce) {
  for (int ranks : {1, 2, 3, 4, 7})
    for (std::int64_t dates : {1, 2, 5, 100}) {
      std::int64_t next = 0;
      for (int r = 0; r < ranks; ++r) {
        const auto s = discount::date_slice(dates, r, ranks);
        EXPECT_EQ(s.first, next);
        EXPECT_LE(s.count, (dates + ranks - 1) / ranks);
        next += s.count;
      }
      EXPECT_EQ(next, dates);
    }
}

// --- deck validation -------------------------------------------------------------
std::string data(const std::string& f) { return kmini::test::relocated(KMINI_TEST_DATA) + "/discount/" + f; }

discount::Config configure(const std::string& yaml) {
  Deck deck = Deck::from_text(yaml, "t.yaml");
  auto c = discount::read_config(deck.root().child("discount"), MPI_COMM_WORLD);
  deck.check_all_keys_known();
  return c;
}

TEST(DiscountDeck, DefaultsAreTheOriginalExample) {
  const auto c = configure("discount: {}\n");
  EXPECT_EQ(c.dates, 100);
  EXPECT_EQ(c.ids, 4000);
  EXPECT_EQ(c.terms, 5);
  EXPECT_FALSE(c.single);
  EXPECT_EQ(c.reduce, Reduce::None);
  EXPECT_TRUE(c.computes_cv());
}

TEST(DiscountDeck, SizesComeFromFiles) {
  const auto c = configure("discount:\n  init:\n    mult_by: {file: " + data("mult_by_3x4_f8.npy") +
                           "}\n    discount: {file: " + data("discount_5x3x4_f4.npy") + "}\n");
  EXPECT_EQ(c.dates, 5);
  EXPECT_EQ(c.ids, 3);
  EXPECT_EQ(c.terms, 4);
}

TEST(DiscountDeck, ReduceWithoutCvDoesNotComputeCv) {
  const auto c = configure("discount: {reduce: per_id, write: {reduced: s.npy}}\n");
  EXPECT_EQ(c.reduce, Reduce::PerId);
  EXPECT_FALSE(c.computes_cv());
  EXPECT_TRUE(configure("discount: {reduce: per_date, write: {cv: cv.npy}}\n").computes_cv());
}

// discount.stores: auto by default; streaming only where this
// build has it, and only without a reduction; one-line errors otherwise.
TEST(DiscountDeck, StoresAreChosenOrRefused) {
  EXPECT_EQ(configure("discount: {}\n").stores, discount::Stores::Auto);
  EXPECT_EQ(configure("discount: {stores: regular}\n").stores, discount::Stores::Regular);
  if (discount::kStreamingStores) {
    EXPECT_EQ(configure("discount: {stores: streaming}\n").stores, discount::Stores::Streaming);
    KMINI_EXPECT_THROW_MSG(configure("discount: {stores: streaming, reduce: per_date}\n"), UsageError,
                           "discount.stores: got 'streaming', expected auto or regular with discount.reduce per_date");
  } else {
    KMINI_EXPECT_THROW_MSG(configure("discount: {stores: streaming}\n"), UsageError,
                           "this build has no streaming stores");
  }
  KMINI_EXPECT_THROW_MSG(configure("discount: {stores: nt}\n"), UsageError, "auto | regular | streaming");
}

// discount.stores: auto decides by timing both store kinds, never by the
// cache size the machine reports (a VM can be shown its host's whole L3, far
// more than its process can use). Here the "measurements" are given, so the
// rule itself is checked: a 256 MiB cv, below a claimed 320 MiB L3, is timed.
TEST(DiscountStores, AutoTakesTheFasterMeasuredKindWhateverTheCacheSays) {
  const std::int64_t mib = std::int64_t(1) << 20;
  int passes = 0;
  auto streaming_faster = [&](bool streaming) {
    ++passes;
    return streaming ? 0.010 : 0.015;
  };
  auto regular_faster = [&](bool streaming) {
    ++passes;
    return streaming ? 0.020 : 0.015;
  };
  // 256 MiB of cv, below a claimed 320 MiB L3: measured, streaming wins.
  auto c = discount::choose_stores(256 * mib, 8, streaming_faster, false);
  EXPECT_TRUE(c.measured);
  EXPECT_TRUE(c.streaming);
  EXPECT_EQ(passes, 2 * discount::kStorePairs);
  EXPECT_DOUBLE_EQ(c.streaming_seconds, 0.010);
  EXPECT_DOUBLE_EQ(c.regular_seconds, 0.015);
  // 1 GiB where regular stores ran faster: regular.
  c = discount::choose_stores(1024 * mib, 8, regular_faster, false);
  EXPECT_TRUE(c.measured);
  EXPECT_FALSE(c.streaming);
  // The best pass of each kind decides, not the first: one slow regular pass among fast ones.
  int call = 0;
  c = discount::choose_stores(
      64 * mib, 4, [&](bool streaming) { return streaming ? 0.012 : (call++ == 0 ? 0.050 : 0.011); }, false);
  EXPECT_FALSE(c.streaming);
  EXPECT_DOUBLE_EQ(c.regular_seconds, 0.011);
  // A cv that fits any cache is not timed: regular.
  passes = 0;
  c = discount::choose_stores(discount::kMeasureStoresAbove, 8, streaming_faster, false);
  EXPECT_FALSE(c.measured);
  EXPECT_FALSE(c.streaming);
  EXPECT_EQ(passes, 0);
}

// Remembered per process and size class: the second call of a class reuses
// the first's answer without timing; another class (size or element) is timed.
TEST(DiscountStores, AutoIsMeasuredOncePerSizeClass) {
  const std::int64_t mib = std::int64_t(1) << 20;
  int passes = 0;
  auto streaming_faster = [&](bool streaming) {
    ++passes;
    return streaming ? 0.010 : 0.015;
  };
  auto regular_faster = [&](bool streaming) {
    ++passes;
    return streaming ? 0.020 : 0.015;
  };
  // Sizes no other test uses (the memory is per process).
  auto first = discount::choose_stores(96 * mib + 3, 8, streaming_faster, true);
  EXPECT_TRUE(first.measured && first.streaming);
  EXPECT_EQ(passes, 2 * discount::kStorePairs);
  auto again = discount::choose_stores(127 * mib, 8, regular_faster, true);  // same power of two: remembered
  EXPECT_TRUE(again.remembered);
  EXPECT_FALSE(again.measured);
  EXPECT_TRUE(again.streaming);
  EXPECT_EQ(passes, 2 * discount::kStorePairs);
  auto other = discount::choose_stores(96 * mib, 4, regular_faster, true);  // float: its own class
  EXPECT_TRUE(other.measured);
  EXPECT_FALSE(other.streaming);
  auto larger = discount::choose_stores(129 * mib, 8, regular_faster, true);  // the next power of two
  EXPECT_TRUE(larger.measured);
  EXPECT_FALSE(larger.streaming);
  EXPECT_EQ(passes, 6 * discount::kStorePairs);
}

TEST(DiscountDeck, BadInputsAreUsageErrors) {
  KMINI_EXPECT_THROW_MSG(
      configure("discount:\n  ids: 4\n  init:\n    mult_by: {file: " + data("mult_by_3x4_f8.npy") + "}\n"), UsageError,
      "discount.init.mult_by.file: got '");
  KMINI_EXPECT_THROW_MSG(
      configure("discount:\n  ids: 4\n  init:\n    mult_by: {file: " + data("mult_by_3x4_f8.npy") + "}\n"), UsageError,
      "expected shape (4, 4) (ids, terms from the deck); ");
  KMINI_EXPECT_THROW_MSG(configure("discount:\n  init:\n    mult_by: {file: " + data("mult_by_3x4_f8.npy") +
                                   "}\n    discount: {file: " + data("discount_5x3x3_f8.npy") + "}\n"),
                         UsageError, "has shape (5, 3, 3)");
  KMINI_EXPECT_THROW_MSG(configure("discount:\n  init:\n    mult_by: {file: " + data("mult_by_3x4_i4.npy") + "}\n"),
                         UsageError, "an f8 or f4 .npy file; it holds i4");
  KMINI_EXPECT_THROW_MSG(configure("discount:\n  init:\n    mult_by: {file: " + data("mult_by_12_f8.npy") + "}\n"),
                         UsageError, "a 2-D array (ids x terms); it has shape (12,)");
  KMINI_EXPECT_THROW_MSG(configure("discount:\n  init:\n    mult_by: {file: no/such.npy}\n"), UsageError,
                         "no/such.npy: cannot open");
  KMINI_EXPECT_THROW_MSG(configure("discount:\n  init:\n    mult_by: {arange: {}, random: {}}\n"), UsageError,
                         "expected exactly one of file | arange | random");
  KMINI_EXPECT_THROW_MSG(configure("discount:\n  init:\n    discount: {random: {seed: -1}}\n"), UsageError,
                         "discount.init.discount.random.seed: got '-1'");
  KMINI_EXPECT_THROW_MSG(configure("discount: {terms: 0}\n"), UsageError, "discount.terms: got '0'");
  KMINI_EXPECT_THROW_MSG(configure("discount: {precision: half}\n"), UsageError, "double | single");
  KMINI_EXPECT_THROW_MSG(configure("discount: {write: {reduced: s.npy}}\n"), UsageError,
                         "no reduced output while discount.reduce is none");
  KMINI_EXPECT_THROW_MSG(configure("discount: {dates: 4000000000000, ids: 4000000000}\n"), UsageError,
                         "below 2^63 bytes");
  KMINI_EXPECT_THROW_MSG(configure("discount: {tile: 4}\n"), UsageError, "unknown key 'discount.tile'");
}

}  // namespace
}  // namespace kmini
