#pragma once
// Device kernels of the sparse outputs, one slice of C at a time, from the
// slice's counts and the rows' counts of ones (values compared in double):
// the number of pairs at or above thresholds, the pairs at or above a minimum
// (counted per row, then collected in (i, j) order into a bounded buffer);
// every row's k best partners are gram_top_k.hpp's.
//
// Pairs: with one input each unordered pair once, i < j (a slice row i holds
// its partners j > i); with two inputs every (i, j).
#include "gram/impl/gram_kernels.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace kmini::gram {

// At most this many count_at_least thresholds (a per-row array on the device).
constexpr int kMaxThresholds = 64;
// Columns per run of the scans over a slice row (top-k, pairs): a fixed
// count, which compilers vectorise; and column groups of a row (see
// top_k_slice).
constexpr std::int64_t kTopKBlock = 16;
constexpr int kTopKGroups = 64;

// The index of the lowest set bit of `mask` (not 0), cleared from it: how the
// scans visit a run's candidates, lowest column first.
KOKKOS_INLINE_FUNCTION int take_lowest_bit(std::uint32_t& mask) {
  const std::uint32_t lowest = mask & (0u - mask);
  mask ^= lowest;
  return static_cast<int>(compat::popcount64(lowest - 1));
}

// Value of element (li, j) of a slice (row r0 + li, column j of C). The
// similarity is a compile-time constant so the scans below vectorise
// (with_similarity turns the run-time choice into one).
template <class Counts, class Ones, Similarity Kind>
struct SliceValues {
  using SelfCols = Kokkos::View<const std::int64_t*, typename Ones::memory_space>;
  Counts counts;
  Ones ones_a, ones_b;  // ones of A's rows, of the columns' rows (B's, or A's)
  std::int64_t r0, col0, width;
  SimilarityParams params;  // two empty rows' score (gram.empty_similarity), Tversky's weights
  // gram.exclude_self: row i's own column (B's row with i's ID, -1: none),
  // which no sparse output lists or counts; empty: none excluded.
  SelfCols self_cols;

  SliceValues(const Counts& c, const Ones& a, const Ones& b, const OutputWindow& g, const SimilarityParams& p = {},
              const SelfCols& self = SelfCols())
      : counts(c), ones_a(a), ones_b(b), r0(g.r0), col0(g.col0()), width(g.width()), params(p), self_cols(self) {}
  // The column of row i (of A) that the outputs leave out, or -1.
  KOKKOS_INLINE_FUNCTION std::int64_t self_of(std::int64_t i) const {
    return self_cols.extent(0) > 0 ? self_cols(i) : -1;
  }
  static constexpr bool is_count = Kind == Similarity::Counts;
  // Row li's counts from column j on.
  KOKKOS_INLINE_FUNCTION const std::int32_t* row_counts(std::int64_t li, std::int64_t j) const {
    return counts.data() + li * width + (j - col0);
  }
  KOKKOS_INLINE_FUNCTION std::int32_t count(std::int64_t li, std::int64_t j) const {
    return counts(li * width + (j - col0));
  }
  KOKKOS_INLINE_FUNCTION double operator()(std::int64_t li, std::int64_t j) const {
    const std::int64_t c = counts(li * width + (j - col0));
    if constexpr (Kind == Similarity::Counts) return double(c);
    return similarity_value(Kind, c, ones_a(r0 + li), ones_b(j), params);
  }
};

// Calls f(std::integral_constant<Similarity, kind>{}).
template <class F>
void with_similarity(Similarity kind, F&& f) {
  switch (kind) {
    case Similarity::Jaccard: f(std::integral_constant<Similarity, Similarity::Jaccard>{}); break;
    case Similarity::Dice: f(std::integral_constant<Similarity, Similarity::Dice>{}); break;
    case Similarity::Cosine: f(std::integral_constant<Similarity, Similarity::Cosine>{}); break;
    case Similarity::Tversky: f(std::integral_constant<Similarity, Similarity::Tversky>{}); break;
    default: f(std::integral_constant<Similarity, Similarity::Counts>{}); break;
  }
}

// The bin of value v among `nt` thresholds sorted ascending: how many of
// them are <= v (count_at_least's bins, on the device and from a pruned
// run's hits on the host).
KOKKOS_INLINE_FUNCTION int threshold_bin(double v, const double* thresholds, int nt) {
  int b = 0;
  while (b < nt && v >= thresholds[b]) ++b;
  return b;
}

template <class Values, class Thresholds, class Bins>
struct CountAtLeast {
  Values values;
  Thresholds thresholds;
  Bins bins;
  std::int64_t r0, col0, cols;
  bool symmetric;
  int nt;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t li) const {
    std::int64_t local[kMaxThresholds + 1] = {};
    const auto bin = [&](const double v) { return threshold_bin(v, thresholds.data(), nt); };
    const std::int64_t first = symmetric ? r0 + li + 1 : col0, self = symmetric ? -1 : values.self_of(r0 + li);
    for (std::int64_t j = first; j < cols; ++j) ++local[bin(values(li, j))];
    if (self >= first && self < cols) --local[bin(values(li, self))];  // counted above: taken back
    for (int b = 0; b <= nt; ++b)
      if (local[b]) Kokkos::atomic_add(&bins(b), local[b]);
  }
};

// bins(b) += number of pairs of the slice with exactly b thresholds <= value
// (thresholds sorted ascending, at most kMaxThresholds), so the pairs at or
// above thresholds[t] are the sum of bins(b) for b > t.
template <class Exec, class Values, class Thresholds, class Bins>
void count_at_least(const Exec& exec, const Values& values, const OutputWindow& g, const Thresholds& thresholds,
                    const Bins& bins) {
  Kokkos::parallel_for("kmini::gram::count_at_least", Kokkos::RangePolicy<Exec>(exec, 0, g.height()),
                       CountAtLeast<Values, Thresholds, Bins>{values, thresholds, bins, g.r0, g.col0(), g.cols(),
                                                              g.symmetric(), static_cast<int>(thresholds.extent(0))});
}

template <class Values, class PerRow>
struct PairsPerRow {
  Values values;
  PerRow per_row;
  double min;
  std::int64_t r0, col0, cols;
  bool symmetric;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t li) const {
    std::int64_t n = 0;
    const std::int64_t first = symmetric ? r0 + li + 1 : col0, self = symmetric ? -1 : values.self_of(r0 + li);
    for (std::int64_t j = first; j < cols; ++j) n += values(li, j) >= min ? 1 : 0;
    if (self >= first && self < cols && values(li, self) >= min) --n;  // counted above: taken back
    per_row(li) = n;
  }
};

// per_row(li) = pairs of slice row li with value >= min.
template <class Exec, class Values, class PerRow>
void pairs_per_row(const Exec& exec, const Values& values, const OutputWindow& g, double min, const PerRow& per_row) {
  Kokkos::parallel_for("kmini::gram::pairs_per_row", Kokkos::RangePolicy<Exec>(exec, 0, g.height()),
                       PairsPerRow<Values, PerRow>{values, per_row, min, g.r0, g.col0(), g.cols(), g.symmetric()});
}

template <class PerRow, class Offsets>
struct PairOffsets {
  PerRow per_row;
  Offsets offsets;
  std::int64_t rows;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t li, std::int64_t& partial, const bool final) const {
    const std::int64_t n = per_row(li);
    if (final) offsets(li) = partial;
    partial += n;
    if (final && li + 1 == rows) offsets(rows) = partial;
  }
};

// offsets(0 .. rows) = the exclusive scan of per_row(0 .. rows - 1), on the
// device; returns offsets(rows), the slice's pairs: the one value the host
// needs (the file offsets of the ranks' slices).
template <class Exec, class PerRow, class Offsets>
std::int64_t pair_offsets(const Exec& exec, const PerRow& per_row, const Offsets& offsets, std::int64_t rows) {
  if (rows == 0) return 0;
  Kokkos::parallel_scan("kmini::gram::pair_offsets", Kokkos::RangePolicy<Exec>(exec, 0, rows),
                        PairOffsets<PerRow, Offsets>{per_row, offsets, rows});
  std::int64_t total = 0;
  Kokkos::deep_copy(exec, Kokkos::View<std::int64_t, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(&total),
                    Kokkos::subview(offsets, rows));
  exec.fence();
  return total;
}

template <class Values, class Offsets, class OutI, class OutV>
struct CollectPairs {
  Values values;
  Offsets offsets;
  OutI out_i, out_j;
  OutV out_v;
  double min;
  std::int64_t first, end, r0, col0, cols;
  bool symmetric;
  KOKKOS_INLINE_FUNCTION void keep(std::int64_t li, std::int64_t j, double v, std::int64_t& at) const {
    if (at >= first) {
      out_i(at - first) = r0 + li;
      out_j(at - first) = j;
      out_v(at - first) = v;
    }
    ++at;
  }
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t li) const {
    std::int64_t at = offsets(li);
    if (offsets(li + 1) <= first || at >= end) return;  // none of this row's pairs in the range
    std::int64_t j = symmetric ? r0 + li + 1 : col0;
    const std::int64_t self = symmetric ? -1 : values.self_of(r0 + li);
    // Runs of kTopKBlock values (they vectorise), then the pairs among them in order.
    static_assert(kTopKBlock <= 32, "a run's pairs are bits of a 32-bit mask");
    for (; j + kTopKBlock <= cols && at < end; j += kTopKBlock) {
      double v[kTopKBlock];
      for (int q = 0; q < kTopKBlock; ++q) v[q] = values(li, j + q);
      std::uint32_t hits = 0;
      for (int q = 0; q < kTopKBlock; ++q) hits |= std::uint32_t(v[q] >= min ? 1 : 0) << q;
      if (self >= j && self < j + kTopKBlock) hits &= ~(std::uint32_t(1) << (self - j));
      while (hits != 0 && at < end) {
        const int q = take_lowest_bit(hits);
        keep(li, j + q, v[q], at);
      }
    }
    for (; j < cols && at < end; ++j) {
      const double v = values(li, j);
      if (v >= min && j != self) keep(li, j, v, at);
    }
  }
};

// Pairs [first, first + count) of the slice, in (i, j) order, into out_*(0 ..
// count): `offsets` (height + 1 entries) is the exclusive scan of pairs_per_row.
template <class Exec, class Values, class Offsets, class OutI, class OutV>
void collect_pairs(const Exec& exec, const Values& values, const OutputWindow& g, double min, const Offsets& offsets,
                   std::int64_t first, std::int64_t count, const OutI& out_i, const OutI& out_j, const OutV& out_v) {
  Kokkos::parallel_for(
      "kmini::gram::collect_pairs", Kokkos::RangePolicy<Exec>(exec, 0, g.height()),
      CollectPairs<Values, Offsets, OutI, OutV>{values, offsets, out_i, out_j, out_v, min, first, first + count, g.r0,
                                                g.col0(), g.cols(), g.symmetric()});
}

}  // namespace kmini::gram
