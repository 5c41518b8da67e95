// The Gram outputs on the category's execution space against the host
// reference: similarities, pairs, top-k (with ties), counts at thresholds,
// A B^T, the top-k merge, plan rounds and the output files.
#include "gram/gram_api.hpp"
#include "gram/gram_test_support.hpp"
#include "gram/impl/gram_compute.hpp"

namespace kmini {

namespace {

using IntView = Kokkos::View<std::int32_t*, MemSpace>;
constexpr const char* kKinds[] = {"counts", "jaccard", "dice", "cosine"};
Similarity kind_of(const std::string& k) {
  for (Similarity s : {Similarity::Counts, Similarity::Jaccard, Similarity::Dice, Similarity::Cosine})
    if (k == similarity_name(s)) return s;
  return Similarity::Counts;
}

// A (and B) packed on the device from the random source, with `empty` rows cleared.
struct Inputs {
  Source a, b;
  bool two = false;
  PackedView<MemSpace> pa, pb;
  IntView ones_a, ones_b;
  reference::HostGram ref;
};
Inputs make_inputs(const Source& a, const Source* b, const std::vector<std::int64_t>& empty_a) {
  Inputs in;
  in.a = a;
  in.two = b != nullptr;
  if (b) in.b = *b;
  in.pa = PackedView<MemSpace>("a", a.rows, words_allocated(a.cols));
  pack_random(Exec(), in.pa, a.rows, a.cols, a.density, a.seed);
  auto host_a = host_rows(a, 0, a.rows);
  for (std::int64_t r : empty_a) {
    clear_row(in.pa, r);
    std::fill(host_a.begin() + r * a.cols, host_a.begin() + (r + 1) * a.cols, 0);
  }
  const auto ref_a = reference::pack(host_a, a.rows, a.cols);
  in.ones_a = IntView("ones_a", a.rows);
  row_ones(Exec(), in.pa, in.ones_a);
  if (b) {
    in.pb = PackedView<MemSpace>("b", b->rows, words_allocated(b->cols));
    pack_random(Exec(), in.pb, b->rows, b->cols, b->density, b->seed);
    in.ones_b = IntView("ones_b", b->rows);
    row_ones(Exec(), in.pb, in.ones_b);
    in.ref = reference::gram(ref_a, reference::pack(host_rows(*b, 0, b->rows), b->rows, b->cols), false);
  } else {
    in.pb = in.pa;
    in.ones_b = in.ones_a;
    in.ref = reference::gram(ref_a, ref_a, true);
  }
  return in;
}

// A slice's pairs, counted per row, then collected in pieces of 7 records (pieces split rows).
template <class Values, class I64>
void collect_all_pairs(const Values& values, const SliceGeometry& g, double min, const I64& per_row, const I64& offsets,
                       std::vector<reference::Pair>& out) {
  pairs_per_row(Exec(), values, g, min, per_row);
  auto hp = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), per_row);
  auto ho = Kokkos::create_mirror_view(offsets);
  ho(0) = 0;
  for (std::int64_t li = 0; li < g.height(); ++li) ho(li + 1) = ho(li) + hp(li);
  Kokkos::deep_copy(offsets, ho);
  const std::int64_t total = ho(g.height()), piece = 7;
  Kokkos::View<std::int64_t*, MemSpace> pi("pi", piece), pj("pj", piece);
  Kokkos::View<double*, MemSpace> pv("pv", piece);
  for (std::int64_t at = 0; at < total; at += piece) {
    const std::int64_t n = std::min(piece, total - at);
    collect_pairs(Exec(), values, g, min, offsets, at, n, pi, pj, pv);
    auto hi = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), pi);
    auto hj = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), pj);
    auto hv = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), pv);
    for (std::int64_t e = 0; e < n; ++e) out.push_back({hi(e), hj(e), hv(e)});
  }
}

// The sparse outputs through the device kernels, slice by slice (height h).
struct SparseResult {
  std::vector<reference::Pair> pairs, top_k;  // top_k: rows x k
  std::vector<std::int64_t> at_least;         // for the thresholds as given
};
// lanes: the columns an iteration of the mirror's top-k scan (kTopKColLanes:
// 256 on hosts, 1 on devices); 0 takes the backend's.
SparseResult run_sparse(const Inputs& in, Similarity kind, std::int64_t h, double min, int k,
                        const std::vector<double>& thresholds, int lanes = 0) {
  const std::int64_t rows = in.a.rows, targets = in.two ? in.b.rows : rows;
  IntView counts("c", h * targets);
  std::vector<double> sorted = thresholds;
  std::sort(sorted.begin(), sorted.end());
  Kokkos::View<double*, MemSpace> thr("thr", static_cast<std::int64_t>(sorted.size()));
  auto hthr = Kokkos::create_mirror_view(thr);
  for (std::size_t t = 0; t < sorted.size(); ++t) hthr(static_cast<std::int64_t>(t)) = sorted[t];
  Kokkos::deep_copy(thr, hthr);
  Kokkos::View<std::int64_t*, MemSpace> bins("bins", static_cast<std::int64_t>(sorted.size()) + 1);
  Kokkos::View<std::int64_t*, MemSpace> best_j("bj", rows * k), per_row("pr", h), offsets("off", h + 1);
  Kokkos::View<double*, MemSpace> best_v("bv", rows * k);
  clear_top_k(Exec(), best_j, best_v);
  SparseResult out;
  for (std::int64_t r0 = 0; r0 < rows; r0 += h) {
    const SliceGeometry g{rows, r0, std::min(rows, r0 + h), in.two ? targets : 0};
    Kokkos::deep_copy(counts, -7);
    gram_slice(Exec(), in.pa, in.pb, g, counts);
    with_similarity(kind, [&](auto kind_constant) {
      const SliceValues<IntView, IntView, decltype(kind_constant)::value> values(counts, in.ones_a, in.ones_b, g);
      count_at_least(Exec(), values, g, thr, bins);
      using Values = std::decay_t<decltype(values)>;
      if (lanes == 1)
        top_k_slice<Exec, Values, decltype(best_j), decltype(best_v), 1>(Exec(), values, g, k, best_j, best_v);
      else if (lanes == 256)
        top_k_slice<Exec, Values, decltype(best_j), decltype(best_v), 256>(Exec(), values, g, k, best_j, best_v);
      else top_k_slice(Exec(), values, g, k, best_j, best_v);
      collect_all_pairs(values, g, min, per_row, offsets, out.pairs);
    });
  }

  auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), bins);
  for (double x : thresholds) {
    const auto below = std::lower_bound(sorted.begin(), sorted.end(), x) - sorted.begin();
    std::int64_t n = 0;
    for (std::int64_t b = below + 1; b < static_cast<std::int64_t>(hb.extent(0)); ++b) n += hb(b);
    out.at_least.push_back(n);
  }
  auto hj = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), best_j);
  auto hv = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), best_v);
  for (std::int64_t e = 0; e < rows * k; ++e) out.top_k.push_back({e / k, hj(e), hj(e) < 0 ? 0.0 : hv(e)});
  return out;
}

void expect_sparse_matches_reference(const Inputs& in, const std::string& kind, std::int64_t h, double min, int k,
                                     const std::vector<double>& thresholds) {
  SCOPED_TRACE(kind + " slice " + std::to_string(h) + " k " + std::to_string(k) + " " + std::to_string(in.a.rows) +
               "x" + std::to_string(in.a.cols) + (in.two ? " B " + std::to_string(in.b.rows) : ""));
  const auto got = run_sparse(in, kind_of(kind), h, min, k, thresholds);
  const auto want_pairs = reference::pairs(in.ref, kind, min);
  ASSERT_EQ(got.pairs.size(), want_pairs.size());
  for (std::size_t p = 0; p < want_pairs.size(); ++p) {
    EXPECT_EQ(got.pairs[p].i, want_pairs[p].i);
    EXPECT_EQ(got.pairs[p].j, want_pairs[p].j);
    EXPECT_EQ(got.pairs[p].value, want_pairs[p].value);
  }
  EXPECT_EQ(got.at_least, reference::count_at_least(in.ref, kind, thresholds));
  for (std::int64_t i = 0; i < in.a.rows; ++i) {
    const auto want = reference::top_k(in.ref, kind, i, k);
    for (int t = 0; t < k; ++t) {
      const auto& g = got.top_k[static_cast<std::size_t>(i * k + t)];
      ASSERT_EQ(g.j, want[static_cast<std::size_t>(t)].j) << "row " << i << " rank " << t;
      ASSERT_EQ(g.value, want[static_cast<std::size_t>(t)].value) << "row " << i << " rank " << t;
    }
  }
}

}  // namespace

TEST(TEST_CATEGORY, Gram_SimilaritiesMatchTheirDefinitionsWithEmptyRows) {
  const Inputs in = make_inputs(random_source(20, 90, 0.3, 4), nullptr, {2, 5});
  const std::int64_t rows = 20;
  IntView counts("c", rows * rows);
  Kokkos::View<float*, MemSpace> sim("s", rows * rows);
  const SliceGeometry g{rows, 0, rows};
  gram_slice(Exec(), in.pa, g, counts);
  for (const char* kind : kKinds) {
    similarity_slice(Exec(), kind_of(kind), counts, in.ones_a, in.ones_a, g, sim);
    auto hs = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sim);
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < rows; ++j)
        ASSERT_EQ(hs(i * rows + j), static_cast<float>(reference::value(in.ref, kind, i, j))) << kind << i << "," << j;
    EXPECT_EQ(hs(2 * rows + 5), 0.0f) << kind;  // two empty rows
    EXPECT_EQ(hs(2 * rows + 7), 0.0f) << kind;  // one empty row
  }
  // Spot values from the definitions: |a| = 3, |b| = 5, c = 2.
  EXPECT_DOUBLE_EQ(similarity_value(Similarity::Jaccard, 2, 3, 5), 2.0 / 6);
  EXPECT_DOUBLE_EQ(similarity_value(Similarity::Dice, 2, 3, 5), 4.0 / 8);
  EXPECT_DOUBLE_EQ(similarity_value(Similarity::Cosine, 2, 3, 5), 2.0 / std::sqrt(15.0));
  EXPECT_EQ(similarity_value(Similarity::Cosine, 0, 0, 5), 0.0);
  EXPECT_EQ(similarity_value(Similarity::Counts, 7, 9, 9), 7.0);
  // Tversky from its definition, c / (c + alpha |a - b| + beta |b - a|): 2 / (2 + 0.9 + 0.3).
  EXPECT_DOUBLE_EQ(similarity_value(Similarity::Tversky, 2, 3, 5, {0.0, 0.9, 0.1}), 2.0 / 3.2);
  EXPECT_DOUBLE_EQ(similarity_value(Similarity::Tversky, 2, 3, 5, {0.0, 1.0, 0.0}), 2.0 / 3);  // c / |a|
  // 0/0 with a zero weight, an empty row against a non-empty one: `empty`, as RDKit's 1.0.
  EXPECT_EQ(similarity_value(Similarity::Tversky, 0, 0, 5, {0.0, 1.0, 0.0}), 0.0);
  EXPECT_EQ(similarity_value(Similarity::Tversky, 0, 0, 5, {1.0, 1.0, 0.0}), 1.0);
  EXPECT_EQ(similarity_value(Similarity::Tversky, 0, 0, 5, {1.0, 0.0, 1.0}), 0.0);  // 0 / 5
  EXPECT_EQ(similarity_value(Similarity::Tversky, 0, 0, 0, {1.0, 0.7, 0.3}), 1.0);  // two empty rows
}

// Tversky with alpha = beta = 1 is Jaccard and with 1/2 Dice, in every bit of
// the double (both divide the same exact integers or halves), empty rows included.
TEST(TEST_CATEGORY, Gram_TverskyWithEqualWeightsIsJaccardAndDiceExactly) {
  for (std::int64_t na = 0; na <= 40; ++na)
    for (std::int64_t nb = 0; nb <= 40; ++nb)
      for (std::int64_t c = 0; c <= (na < nb ? na : nb); ++c)
        for (double empty : {0.0, 1.0}) {
          ASSERT_EQ(similarity_value(Similarity::Tversky, c, na, nb, {empty, 1.0, 1.0}),
                    similarity_value(Similarity::Jaccard, c, na, nb, {empty}))
              << c << " " << na << " " << nb;
          ASSERT_EQ(similarity_value(Similarity::Tversky, c, na, nb, {empty, 0.5, 0.5}),
                    similarity_value(Similarity::Dice, c, na, nb, {empty}))
              << c << " " << na << " " << nb;
        }
}

// Pairs, top-k (with many ties: few columns) and counts at thresholds from
// the device kernels, slice by slice, against the host reference: odd shapes,
// empty rows, slice heights below and above the tile, every similarity.
TEST(TEST_CATEGORY, Gram_SparseOutputsMatchHostReferenceOnOneInput) {
  const std::vector<double> thresholds_c{3, 0, 5, 3, 100};
  const std::vector<double> thresholds_s{0.5, 0.0, 0.25, 1.0, 0.3333333333333333};
  for (const auto& [rows, cols] : std::vector<std::pair<std::int64_t, std::int64_t>>{{37, 9}, {70, 130}, {5, 1}}) {
    const Inputs in = make_inputs(random_source(rows, cols, 0.4, 11), nullptr, {0, rows / 2});
    for (const char* kind : kKinds) {
      const bool counts = std::string(kind) == "counts";
      for (std::int64_t h : {std::int64_t(1), std::int64_t(5), std::int64_t(64), rows}) {
        expect_sparse_matches_reference(in, kind, h, counts ? 2.0 : 0.3,
                                        static_cast<int>(std::min<std::int64_t>(4, rows - 1)),
                                        counts ? thresholds_c : thresholds_s);
      }
    }
  }
  // k = rows - 1: every partner, in order.
  const Inputs in = make_inputs(random_source(13, 7, 0.5, 2), nullptr, {});
  expect_sparse_matches_reference(in, "jaccard", 4, 0.0, 12, {0.0});
}

TEST(TEST_CATEGORY, Gram_SparseOutputsMatchHostReferenceOnTwoInputs) {
  for (const auto& [ra, rb] : std::vector<std::pair<std::int64_t, std::int64_t>>{{37, 70}, {70, 9}, {3, 1}}) {
    const Source b = random_source(rb, 75, 0.3, 5);
    const Inputs in = make_inputs(random_source(ra, 75, 0.45, 6), &b, {1});
    for (const char* kind : kKinds) {
      const bool counts = std::string(kind) == "counts";
      for (std::int64_t h : {std::int64_t(1), std::int64_t(7), std::int64_t(64), ra})
        expect_sparse_matches_reference(in, kind, h, counts ? 8.0 : 0.2,
                                        static_cast<int>(std::min<std::int64_t>(5, rb)),
                                        counts ? std::vector<double>{0, 8, 20} : std::vector<double>{0.1, 0.2, 0.5});
    }
  }
}

// Rows of at least 256 columns take the top-k scan's group bound (k <= 64):
// few columns (many ties at the bound), k = 1, 16, 64 and 65 (no bound),
// empty rows, one slice and slices whose later rows are shorter than 256.
TEST(TEST_CATEGORY, Gram_TopKOfLongRowsMatchesHostReference) {
  const Inputs in = make_inputs(random_source(300, 20, 0.3, 17), nullptr, {0, 150, 299});
  for (const char* kind : {"counts", "jaccard"})
    for (int k : {1, 16, 64, 65})
      for (std::int64_t h : {std::int64_t(300), std::int64_t(64)})
        expect_sparse_matches_reference(in, kind, h, std::string(kind) == "counts" ? 9.0 : 0.6, k, {0.5});
  const Source b = random_source(300, 24, 0.35, 18);
  const Inputs ab = make_inputs(random_source(40, 24, 0.4, 19), &b, {3});
  for (int k : {16, 64})
    for (std::int64_t h : {std::int64_t(40), std::int64_t(7)})
      expect_sparse_matches_reference(ab, "counts", h, 10.0, k, {4.0});
}

// The mirror's top-k scan a column at a time (the device path) and 256
// columns at a time (the host path) fill every list with the same partners in
// the same order, ties included: mirrors narrower and wider than a chunk, not
// multiples of its 16 lanes, starting anywhere; k above and below the group
// bound's.
TEST(TEST_CATEGORY, Gram_TopKColumnLanesAgree) {
  for (std::int64_t rows : {std::int64_t(37), std::int64_t(300), std::int64_t(601)}) {
    const Inputs in = make_inputs(random_source(rows, 20, 0.3, 23), nullptr, {0, rows / 2});
    for (const Similarity kind : {Similarity::Counts, Similarity::Jaccard, Similarity::Cosine})
      for (int k : {1, 5, 16, 65})
        for (std::int64_t h : {std::int64_t(7), std::int64_t(64), rows}) {
          const SparseResult one = run_sparse(in, kind, h, 2.0, k, {}, 1),
                             blocks = run_sparse(in, kind, h, 2.0, k, {}, 256);
          ASSERT_EQ(one.top_k.size(), blocks.top_k.size());
          for (std::size_t e = 0; e < one.top_k.size(); ++e) {
            const auto &a = one.top_k[e], &b = blocks.top_k[e];
            ASSERT_TRUE(a.i == b.i && a.j == b.j && a.value == b.value)
                << "rows " << rows << " k " << k << " h " << h << " entry " << e << ": (" << a.j << ", " << a.value
                << ") against (" << b.j << ", " << b.value << ")";
          }
        }
  }
}

TEST(TEST_CATEGORY, Gram_ABTransposeMatchesHostReference) {
  for (const auto& [ra, rb, cols] : std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>>{
           {1, 1, 1}, {37, 70, 130}, {130, 9, 65}, {65, 129, 2049}}) {
    const Source sa = random_source(ra, cols, 0.37, 3), sb = random_source(rb, cols, 0.6, 4);
    const Inputs in = make_inputs(sa, &sb, {});
    for (std::int64_t h : {std::int64_t(1), std::int64_t(5), std::int64_t(64), std::int64_t(100)}) {
      IntView out("out", h * rb);
      for (std::int64_t r0 = 0; r0 < ra; r0 += h) {
        const SliceGeometry g{ra, r0, std::min(ra, r0 + h), rb};
        ASSERT_EQ(g.width(), rb);
        Kokkos::deep_copy(out, -7);
        gram_slice(Exec(), in.pa, in.pb, g, out);
        auto ho = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
        for (std::int64_t i = g.r0; i < g.r1; ++i)
          for (std::int64_t j = 0; j < rb; ++j)
            ASSERT_EQ(ho((i - r0) * rb + j), in.ref.c[i * rb + j]) << ra << "x" << rb << "x" << cols << " h " << h;
      }
    }
  }
}

TEST(TEST_CATEGORY, Gram_SummaryOfTwoInputsCoversEveryElementOnce) {
  const Source sa = random_source(45, 100, 0.5, 1), sb = random_source(30, 100, 0.5, 2);
  const Inputs in = make_inputs(sa, &sb, {});
  for (std::int64_t h : {7, 45}) {
    IntView counts("c", h * 30);
    Kokkos::View<std::int64_t*, MemSpace> sums("sums", 45);
    Kokkos::View<std::uint64_t*, MemSpace> hist("hist", 64);
    std::uint64_t checksum = 0, expect_checksum = 0;
    for (std::int64_t r0 = 0; r0 < 45; r0 += h) {
      const SliceGeometry g{45, r0, std::min<std::int64_t>(45, r0 + h), 30};
      gram_slice(Exec(), in.pa, in.pb, g, counts);
      checksum += summarise_slice(Exec(), counts, g, 100, sums, hist);
    }
    auto hs = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sums);
    auto hh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), hist);
    std::uint64_t total = 0;
    for (std::int64_t i = 0; i < 45; ++i) {
      std::int64_t row = 0;
      for (std::int64_t j = 0; j < 30; ++j) {
        row += in.ref.c[i * 30 + j];
        expect_checksum += static_cast<std::uint64_t>(in.ref.c[i * 30 + j]) * checksum_weight(i, j);
      }
      EXPECT_EQ(hs(i), row);
    }
    for (int b = 0; b < 64; ++b) total += hh(b);
    EXPECT_EQ(total, 45u * 30u);
    EXPECT_EQ(checksum, expect_checksum);
  }
}

// gram::compute's dense C written where it lives (dense_on_device: a device
// array from Python; one kernel per slice) holds the same bytes as the host
// copy: one and two inputs, full and packed upper, counts and similarities,
// one slice (counts: C itself is the slice) and slices of 7 rows.
TEST(TEST_CATEGORY, Gram_ComputeWritesDenseCInPlaceAsOnTheHost) {
  using gram::ApiMatrix;
  const std::int64_t rows = 45, rows_b = 30, cols = 100;
  std::vector<std::uint8_t> a_bytes(rows * cols), b_bytes(rows_b * cols);
  for (std::size_t e = 0; e < a_bytes.size(); ++e) a_bytes[e] = random::uniform01(3, e) < 0.4 ? 1 : 0;
  for (std::size_t e = 0; e < b_bytes.size(); ++e) b_bytes[e] = random::uniform01(4, e) < 0.5 ? 1 : 0;
  ApiMatrix a, b;
  a.data = a_bytes.data(), a.rows = rows, a.cols = cols;
  b.data = b_bytes.data(), b.rows = rows_b, b.cols = cols;
  const gram::ApiExec exec;
  for (const bool two : {false, true})
    for (const bool upper : {false, true})
      for (const Similarity kind : {Similarity::Counts, Similarity::Jaccard})
        for (const std::int64_t h : {std::int64_t(0), std::int64_t(7)}) {
          if (two && upper) continue;
          gram::ComputeParams p;
          p.similarity = kind;
          p.upper = upper;
          p.slice_rows = h;
          const ApiMatrix* bp = two ? &b : nullptr;
          const std::int64_t bytes = 4 * gram::dense_elements(a, bp, p);
          std::vector<char> on_host(static_cast<std::size_t>(bytes), 0);
          gram::compute(exec, a, bp, p, on_host.data());
          Kokkos::View<char*, gram::ApiExec::memory_space> in_place("in_place", bytes);
          p.dense_on_device = true;
          gram::compute(exec, a, bp, p, in_place.data());
          auto back = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), in_place);
          const std::string what = std::string(two ? "A B^T" : "A A^T") + (upper ? " upper " : " full ") +
                                   similarity_name(kind) + " slice " + std::to_string(h);
          ASSERT_EQ(std::memcmp(back.data(), on_host.data(), static_cast<std::size_t>(bytes)), 0) << what;
          std::int64_t nonzero = 0;  // not a comparison of two empty matrices
          for (char c : on_host) nonzero += c != 0;
          EXPECT_GT(nonzero, bytes / 8) << what;
        }
}

TEST(TEST_CATEGORY, Gram_TopKMergeKeepsTheBestOfBothInOrder) {
  // Two rows of k = 3: ties by value go to the smaller j; padding (-1, -1) last.
  const std::vector<TopKEntry> in{{0.5, 4}, {0.25, 1}, {-1.0, -1}, {1.0, 9}, {0.5, 2}, {0.5, 8}};
  std::vector<TopKEntry> inout{{0.5, 3}, {0.5, 7}, {0.1, 0}, {0.75, 1}, {-1.0, -1}, {-1.0, -1}};
  merge_top_k_rows(in.data(), inout.data(), 2, 3);
  const std::vector<std::pair<double, std::int64_t>> want{{0.5, 3}, {0.5, 4}, {0.5, 7}, {1.0, 9}, {0.75, 1}, {0.5, 2}};
  for (std::size_t e = 0; e < want.size(); ++e) {
    EXPECT_EQ(inout[e].value, want[e].first) << e;
    EXPECT_EQ(inout[e].j, want[e].second) << e;
  }
}

TEST(TEST_CATEGORY, Gram_PlanRoundsAreConsecutiveSlicesOnePerRank) {
  Config c;
  c.a = random_source(10000, 640, 0.5, 1);
  c.row_slice = 300;
  for (int ranks : {1, 2, 3, 4}) {
    const Plan p = make_plan(c, ranks);
    EXPECT_EQ(p.rounds(), (34 + ranks - 1) / ranks);
    for (std::size_t i = 0; i < p.slices.size(); ++i) {
      EXPECT_EQ(p.slices[i].round, static_cast<std::int64_t>(i) / ranks);
      for (std::size_t k = i + 1; k < p.slices.size() && p.slices[k].round == p.slices[i].round; ++k)
        EXPECT_NE(p.slices[k].rank, p.slices[i].rank);
    }
  }
}

// The files of write.pairs and write.top_k through SparseOutputs (this
// process's ranks), against the host reference: records, order, header.
// SparseOutputs is the app's, bound to the default execution space: only the
// default backend's category has this test (KMINI_TEST_DEFAULT_BACKEND).
#ifdef KMINI_TEST_DEFAULT_BACKEND
namespace {
std::string slurp_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
// The records of a structured .npy written by kmini: header length from the file.
std::string npy_data(const std::string& file) {
  const std::size_t len = static_cast<unsigned char>(file[8]) | (static_cast<unsigned char>(file[9]) << 8);
  return file.substr(10 + len);
}
template <class T>
T field(const std::string& data, std::size_t at) {
  T v;
  std::memcpy(&v, data.data() + at, sizeof(T));
  return v;
}
}  // namespace

TEST(TEST_CATEGORY, Gram_SparseOutputFilesHoldTheReferenceRecords) {
  for (const char* kind : {"counts", "cosine"}) {
    Config c;
    c.a = random_source(77, 50, 0.3, 12);
    c.similarity = kind_of(kind);
    c.row_slice = 16;
    c.write_pairs = "p";
    c.pairs_min = std::string(kind) == "counts" ? 6 : 0.4;
    c.write_top_k = "t";
    c.top_k = 3;
    c.count_at_least = {c.pairs_min, 0};
    int ranks = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    const Plan plan = make_plan(c, ranks);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const Inputs in = make_inputs(c.a, nullptr, {3});
    const std::string pairs_path = test::work_path(std::string("sparse_pairs_") + kind + ".npy");
    const std::string top_path = test::work_path(std::string("sparse_top_") + kind + ".npy");
    IntView counts("c", plan.height * 77);
    Json m = Json::object();
    {
      const auto files = detail::record_files(MPI_COMM_WORLD, c, pairs_path, top_path);
      SparseOutputs sparse(Exec(), c, plan, MPI_COMM_WORLD, files.get());
      for (std::int64_t round = 0; round < plan.rounds(); ++round) {
        const Slice* mine = nullptr;
        for (const auto& s : plan.slices)
          if (s.round == round && s.rank == rank) mine = &s;
        if (mine) gram_slice(Exec(), in.pa, plan.geometry(*mine, false), counts);
        sparse.add_round(mine, counts, in.ones_a, in.ones_a);
      }
      sparse.finish(m, nullptr);
    }
    const auto want = reference::pairs(in.ref, kind, c.pairs_min);
    EXPECT_EQ(m["pairs_written"].as_int(), static_cast<std::int64_t>(want.size()));
    EXPECT_EQ(m["count_at_least"].items()[0].find("pairs")->as_int(), static_cast<std::int64_t>(want.size()));
    EXPECT_EQ(m["count_at_least"].items()[1].find("pairs")->as_int(), 77 * 76 / 2);
    const std::string file = slurp_file(pairs_path);
    EXPECT_EQ(file.substr(
                  0, npy::make_header(pair_record_type(c.similarity), {static_cast<std::int64_t>(want.size())}).size()),
              npy::make_header(pair_record_type(c.similarity), {static_cast<std::int64_t>(want.size())}));
    const std::string data = npy_data(file);
    ASSERT_EQ(data.size(), want.size() * 20);
    for (std::size_t p = 0; p < want.size(); ++p) {
      EXPECT_EQ(field<std::int64_t>(data, p * 20), want[p].i);
      EXPECT_EQ(field<std::int64_t>(data, p * 20 + 8), want[p].j);
      if (c.similarity == Similarity::Counts)
        EXPECT_EQ(field<std::int32_t>(data, p * 20 + 16), static_cast<std::int32_t>(want[p].value));
      else EXPECT_EQ(field<float>(data, p * 20 + 16), static_cast<float>(want[p].value));
    }
    const std::string top = slurp_file(top_path);
    EXPECT_EQ(top.substr(0, 128), npy::make_header(top_k_record_type(c.similarity), {77, 3}).substr(0, 128));
    const std::string tdata = npy_data(top);
    ASSERT_EQ(tdata.size(), 77u * 3 * 12);
    for (std::int64_t i = 0; i < 77; ++i) {
      const auto w = reference::top_k(in.ref, kind, i, 3);
      for (std::size_t t = 0; t < 3; ++t) {
        const std::size_t at = (static_cast<std::size_t>(i) * 3 + t) * 12;
        EXPECT_EQ(field<std::int64_t>(tdata, at), w[t].j);
        if (c.similarity == Similarity::Counts)
          EXPECT_EQ(field<std::int32_t>(tdata, at + 8), static_cast<std::int32_t>(w[t].value));
        else EXPECT_EQ(field<float>(tdata, at + 8), static_cast<float>(w[t].value));
      }
    }
  }
}

// One orchestration, two kinds of sinks: gram::compute on arrays (memory,
// this process alone without MPI) and detail::compute with the CLI's record
// files (MPI_COMM_SELF) give the same records and counts, for one and two
// inputs, in slices, against the reference's pair count.
TEST(TEST_CATEGORY, Gram_LibraryCallAndFilesHoldTheSameRecords) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (const bool two : {false, true}) {
    Config c;
    c.a = random_source(61, 130, 0.35, 21);
    if (two) c.b = random_source(37, 130, 0.5, 22);
    c.similarity = Similarity::Jaccard;
    c.row_slice = 16;
    c.write_pairs = "p";
    c.pairs_min = 0.3;
    c.write_top_k = "t";
    c.top_k = 4;
    c.count_at_least = {0.3, 0.5};
    const Inputs in = make_inputs(c.a, two ? &c.b : nullptr, {});
    const std::string tag = std::string(two ? "two_" : "one_") + std::to_string(rank);
    const std::string pairs_path = test::work_path("orchestration_pairs_" + tag + ".npy");
    const std::string top_path = test::work_path("orchestration_top_" + tag + ".npy");
    detail::Inputs packed;
    packed.a = in.pa;
    packed.b = two ? in.pb : PackedView<MemSpace>();
    packed.two = two;
    const auto files = detail::record_files(MPI_COMM_SELF, c, pairs_path, top_path);
    detail::Outputs out;
    out.records = files.get();
    const detail::Outcome o =
        detail::compute(detail::Team{MPI_COMM_SELF, Exec(), false}, c, make_plan(c, 1), packed, out);

    const auto a_bytes = host_rows(c.a, 0, c.a.rows);
    const auto b_bytes = two ? host_rows(c.b, 0, c.b.rows) : std::vector<std::uint8_t>();
    gram::ApiMatrix a, b;
    a.data = a_bytes.data(), a.rows = c.a.rows, a.cols = c.a.cols;
    b.data = b_bytes.data(), b.rows = c.b.rows, b.cols = c.b.cols;
    gram::ComputeParams p;
    p.similarity = c.similarity;
    p.dense = false;
    p.slice_rows = c.row_slice;
    p.top_k = c.top_k;
    p.pairs = true;
    p.pairs_min = c.pairs_min;
    p.count_at_least = c.count_at_least;
    const gram::ComputeResult r = gram::compute(gram::ApiExec(), a, two ? &b : nullptr, p, nullptr);

    const std::string what = two ? "A B^T" : "A A^T";
    const auto want = reference::pairs(in.ref, "jaccard", c.pairs_min);
    ASSERT_GT(want.size(), 10u) << what;  // not a comparison of two empty lists
    EXPECT_EQ(r.pair_count, static_cast<std::int64_t>(want.size())) << what;
    EXPECT_EQ(npy_data(slurp_file(pairs_path)), std::string(r.pairs.begin(), r.pairs.end())) << what;
    EXPECT_EQ(npy_data(slurp_file(top_path)), std::string(r.top_k.begin(), r.top_k.end())) << what;
    EXPECT_EQ(o.counts, r.counts) << what;
    EXPECT_EQ(r.counts[0], static_cast<std::int64_t>(want.size())) << what;
    EXPECT_EQ(r.slices, (c.a.rows + c.row_slice - 1) / c.row_slice) << what;
  }
}
#endif  // KMINI_TEST_DEFAULT_BACKEND

// The roof is the best of the compiled-in micro-kernels, each measured.
TEST(TEST_CATEGORY, Gram_PeakProbeIsTheBestOfTheCompiledInMicroKernels) {
  const ProbeResult p = probe_and_popcount_peak(Exec(), 1, 10);
  EXPECT_GT(p.peak, 0.0);
  for (std::size_t i = 0; i < std::size(kMicroKernels); ++i) {
    if (Tuning::staged) break;
    EXPECT_EQ(p.rate[i] > 0, micro_kernel_compiled(kMicroKernels[i])) << micro_kernel_name(kMicroKernels[i]);
    EXPECT_LE(p.rate[i], p.peak);
  }
  EXPECT_EQ(p.peak, p.rate[static_cast<int>(p.best)]);
}

#if KMINI_GRAM_HOST_SIMD  // host builds (GPU builds have the staged probe)
// The host probe checked against what it must have done (a positive
// number alone would pass a probe that did nothing): its checksum equals a plain bit
// loop's over the same block (the work was done, by a correct micro-kernel),
// its count of bit-ops is the test's own, its best run is at most a third of
// the whole call as the test's clock times it (3 timed runs and a warm-up),
// and no core does more than 1e13 bit-ops/s (64 AND+popcount word pairs per
// cycle at 5 GHz: above any x86 core's peak, so a timer that stopped early
// fails).
TEST(TEST_CATEGORY, Gram_PeakProbeDoesAndTimesTheWorkItCounts) {
  constexpr std::int64_t workers = 2;
  constexpr int repeats = 50, words = Tuning::chunk, rows = 8;
  std::uint64_t want = 0;
  for (std::int64_t w = 0; w < workers; ++w)
    for (int r = 0; r < 4; ++r)
      for (int s = 0; s < 4; ++s) {
        std::uint64_t ones = 0;
        for (int k = 0; k < words; ++k) {
          std::uint64_t x = random::hash(7, static_cast<std::uint64_t>((w * rows + r) * words + k)) &
                            random::hash(7, static_cast<std::uint64_t>((w * rows + 4 + s) * words + k));
          for (; x; x &= x - 1) ++ones;  // Kernighan: no popcount instruction
        }
        want += std::uint64_t(std::uint32_t(ones * repeats)) * (r * 4 + s + 1);
      }
  for (const MicroKernel mk : kMicroKernels) {
    if (!micro_kernel_compiled(mk)) continue;
    Kokkos::Timer wall;
    const HostProbeRun run =
        with_micro_kernel(mk, [&](auto k) { return probe_host_run<decltype(k)::value>(Exec(), workers, repeats); });
    const double whole_call = wall.seconds();
    SCOPED_TRACE(micro_kernel_name(mk));
    EXPECT_EQ(run.checksum, want);
    EXPECT_EQ(run.bit_ops, double(workers) * repeats * words * 16 * 64);
    EXPECT_GT(run.seconds, 0.0);
    EXPECT_LE(run.seconds, whole_call / 3);
    EXPECT_LE(run.rate(), 1e13 * Exec().concurrency());
  }
}
#endif

}  // namespace kmini
