#pragma once
// Device kernels of the sparse outputs, one slice of C at a time, from the
// slice's counts and the rows' counts of ones (values compared in double):
// the number of pairs at or above thresholds, the pairs at or above a minimum
// (counted per row, then collected in (i, j) order into a bounded buffer),
// and every row's k best partners (a sorted array of k per row of A).
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
// Columns per block of the top-k scan, and column groups of a row (see
// top_k_slice).
constexpr std::int64_t kTopKBlock = 16;
constexpr int kTopKGroups = 64;

// Value of element (li, j) of a slice (row r0 + li, column j of C). The
// similarity is a compile-time constant so the scans below vectorise
// (with_similarity turns the run-time choice into one).
template <class Counts, class Ones, Similarity Kind>
struct SliceValues {
  Counts counts;
  Ones ones_a, ones_b;  // ones of A's rows, of the columns' rows (B's, or A's)
  std::int64_t r0, col0, width;
  double empty;  // the similarity of two empty rows (gram.empty_similarity)

  SliceValues(const Counts& c, const Ones& a, const Ones& b, const OutputWindow& g, double empty_ = 0.0)
      : counts(c), ones_a(a), ones_b(b), r0(g.r0), col0(g.col0()), width(g.width()), empty(empty_) {}
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
    return similarity_value(Kind, c, ones_a(r0 + li), ones_b(j), empty);
  }
};

// Calls f(std::integral_constant<Similarity, kind>{}).
template <class F>
void with_similarity(Similarity kind, F&& f) {
  switch (kind) {
    case Similarity::Jaccard: f(std::integral_constant<Similarity, Similarity::Jaccard>{}); break;
    case Similarity::Dice: f(std::integral_constant<Similarity, Similarity::Dice>{}); break;
    case Similarity::Cosine: f(std::integral_constant<Similarity, Similarity::Cosine>{}); break;
    default: f(std::integral_constant<Similarity, Similarity::Counts>{}); break;
  }
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
    for (std::int64_t j = symmetric ? r0 + li + 1 : col0; j < cols; ++j) {
      const double v = values(li, j);
      int b = 0;
      while (b < nt && v >= thresholds(b)) ++b;
      ++local[b];
    }
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
    for (std::int64_t j = symmetric ? r0 + li + 1 : col0; j < cols; ++j) n += values(li, j) >= min ? 1 : 0;
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
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t li) const {
    std::int64_t at = offsets(li);
    if (offsets(li + 1) <= first || at >= end) return;  // none of this row's pairs in the range
    for (std::int64_t j = symmetric ? r0 + li + 1 : col0; j < cols && at < end; ++j) {
      const double v = values(li, j);
      if (v < min) continue;
      if (at >= first) {
        out_i(at - first) = r0 + li;
        out_j(at - first) = j;
        out_v(at - first) = v;
      }
      ++at;
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

// The order of partners in a top-k list: larger value first, then smaller j.
KOKKOS_INLINE_FUNCTION bool ranks_before(double v, std::int64_t j, double w, std::int64_t k) {
  return v > w || (v == w && j < k);
}

// Inserts partner (j, v), which ranks before the list's last entry, into the
// sorted list of k entries at best_*(base ..).
template <class BestJ, class BestV>
KOKKOS_INLINE_FUNCTION void offer(const BestJ& best_j, const BestV& best_v, std::int64_t base, int k, std::int64_t j,
                                  double v) {
  int p = k - 1;
  while (p > 0 && ranks_before(v, j, best_v(base + p - 1), best_j(base + p - 1))) {
    best_j(base + p) = best_j(base + p - 1);
    best_v(base + p) = best_v(base + p - 1);
    --p;
  }
  best_j(base + p) = j;
  best_v(base + p) = v;
}

// An empty list: j = -1 and a value below every similarity (all are >= 0).
template <class BestJ, class BestV>
struct ClearTopK {
  BestJ best_j;
  BestV best_v;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t e) const {
    best_j(e) = -1;
    best_v(e) = -1.0;
  }
};

template <class Exec, class BestJ, class BestV>
void clear_top_k(const Exec& exec, const BestJ& best_j, const BestV& best_v) {
  Kokkos::parallel_for("kmini::gram::clear_top_k", Kokkos::RangePolicy<Exec>(exec, 0, best_j.extent(0)),
                       ClearTopK<BestJ, BestV>{best_j, best_v});
}

// A double's bit pattern and back (memcpy: defined behaviour, on devices too).
KOKKOS_INLINE_FUNCTION std::int64_t bits_of(double v) {
  std::int64_t b;
  memcpy(&b, &v, sizeof b);
  return b;
}
KOKKOS_INLINE_FUNCTION double double_of(std::int64_t b) {
  double v;
  memcpy(&v, &b, sizeof v);
  return v;
}

// The largest value of slice row li over columns [a, b) (b > a).
template <class Values>
KOKKOS_INLINE_FUNCTION double max_over(const Values& values, std::int64_t li, std::int64_t a, std::int64_t b) {
  if constexpr (Values::is_count) {
    std::int32_t m = values.count(li, a);
    for (std::int64_t j = a + 1; j < b; ++j) {
      const std::int32_t c = values.count(li, j);
      m = c > m ? c : m;
    }
    return m;
  } else {
    // Similarities are >= 0 and never NaN, and non-negative doubles order as
    // their bit patterns do: an integer max, which vectorises (a double max
    // does not without fast-math).
    std::int64_t m = bits_of(values(li, a));
    for (std::int64_t j = a + 1; j < b; ++j) {
      const std::int64_t v = bits_of(values(li, j));
      m = v > m ? v : m;
    }
    return double_of(m);
  }
}

// The largest value of slice row li over columns [a, b) but `self` (the row
// itself with one input, else -1); [a, b) holds at least 2 other columns.
template <class Values>
KOKKOS_INLINE_FUNCTION double max_without(const Values& values, std::int64_t li, std::int64_t a, std::int64_t b,
                                          std::int64_t self) {
  if (self < a || self >= b) return max_over(values, li, a, b);
  if (self == a) return max_over(values, li, a + 1, b);
  if (self == b - 1) return max_over(values, li, a, b - 1);
  const double m1 = max_over(values, li, a, self), m2 = max_over(values, li, self + 1, b);
  return m1 > m2 ? m1 : m2;
}

// Offers columns [a, b) of slice row li (row i of A; not column i with one
// input) to its list (best_*(base ..)), values below `bound` left out.
// Blocks of kTopKBlock columns with no value at or above the list's last
// entry and the bound are skipped after one vectorised pass that only compares.
template <class Values, class BestJ, class BestV>
KOKKOS_INLINE_FUNCTION void offer_range(const Values& values, std::int64_t li, std::int64_t i, bool symmetric,
                                        std::int64_t a, std::int64_t b, double bound, const BestJ& best_j,
                                        const BestV& best_v, std::int64_t base, int k, double& worst_v,
                                        std::int64_t& worst_j) {
  static_assert(kTopKBlock <= 32, "a block's candidates are bits of a 32-bit mask");
  for (std::int64_t j0 = a; j0 < b; j0 += kTopKBlock) {
    const int n = b - j0 < kTopKBlock ? static_cast<int>(b - j0) : static_cast<int>(kTopKBlock);
    const double at_least = worst_v > bound ? worst_v : bound;
    // Bit q: column j0 + q may enter the list (one vectorised compare);
    // only those columns are visited.
    std::uint32_t candidates = 0;
    if constexpr (Values::is_count) {
      // Counts compare as integers (16 per AVX-512 vector, no conversions);
      // at_least is a count or -1 here, so the cast is exact.
      const auto least = static_cast<std::int32_t>(at_least);
      const std::int32_t* row = values.row_counts(li, j0);
      for (int q = 0; q < n; ++q) candidates |= std::uint32_t(row[q] >= least ? 1 : 0) << q;
    } else {
      for (int q = 0; q < n; ++q) candidates |= std::uint32_t(values(li, j0 + q) >= at_least ? 1 : 0) << q;
    }
    while (candidates != 0) {
      const std::uint32_t lowest = candidates & (0u - candidates);
      candidates ^= lowest;
      const std::int64_t j = j0 + compat::popcount64(lowest - 1);
      const double v = values(li, j);
      if (v < bound || !ranks_before(v, j, worst_v, worst_j) || (symmetric && j == i)) continue;
      offer(best_j, best_v, base, k, j, v);
      worst_v = best_v(base + k - 1);
      worst_j = best_j(base + k - 1);
    }
  }
}

// One window row's offers (see top_k_window).
template <class Values, class BestJ, class BestV>
struct TopKRows {
  Values values;
  BestJ best_j;
  BestV best_v;
  int k;
  std::int64_t r0, col0, cols, row_list0, bound_cols;
  bool symmetric;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t li) const {
    const std::int64_t i = r0 + li, base = (i - row_list0) * k, self = symmetric ? i : -1, n = cols - col0;
    double worst_v = best_v(base + k - 1);
    std::int64_t worst_j = best_j(base + k - 1);
    if (k > kTopKGroups || n < bound_cols) {
      offer_range(values, li, i, symmetric, col0, cols, -1.0, best_j, best_v, base, k, worst_v, worst_j);
      return;
    }
    const auto edge = [&](int g) { return col0 + n * g / kTopKGroups; };  // group g: [edge(g), edge(g + 1))
    double group_max[kTopKGroups];
    for (int g = 0; g < kTopKGroups; ++g) group_max[g] = max_without(values, li, edge(g), edge(g + 1), self);
    // The k-th largest group maximum (k groups hold a value >= it): the
    // k largest kept sorted, descending.
    double largest[kTopKGroups];
    int held = 0;
    for (int g = 0; g < kTopKGroups; ++g) {
      const double m = group_max[g];
      if (held == k && m <= largest[k - 1]) continue;
      int p = held < k ? held++ : k - 1;
      for (; p > 0 && largest[p - 1] < m; --p) largest[p] = largest[p - 1];
      largest[p] = m;
    }
    const double bound = largest[k - 1];
    for (int g = 0; g < kTopKGroups; ++g)
      if (group_max[g] >= bound && group_max[g] >= worst_v)
        offer_range(values, li, i, symmetric, edge(g), edge(g + 1), bound, best_j, best_v, base, k, worst_v, worst_j);
  }
};

// One column's offers of the window's rows (C(j, i) = C(i, j)).
template <class Values, class BestJ, class BestV>
struct TopKCols {
  Values values;
  BestJ col_j;
  BestV col_v;
  int k;
  std::int64_t r0, height, col_list0;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t j) const {
    const std::int64_t base = (j - col_list0) * k;
    double worst_v = col_v(base + k - 1);
    std::int64_t worst_j = col_j(base + k - 1);
    for (std::int64_t l0 = 0; l0 < height; l0 += kTopKBlock) {
      const std::int64_t l1 = l0 + kTopKBlock < height ? l0 + kTopKBlock : height;
      int candidates = 0;
      for (std::int64_t li = l0; li < l1; ++li) candidates |= values(li, j) >= worst_v ? 1 : 0;
      if (!candidates) continue;
      for (std::int64_t li = l0; li < l1; ++li) {
        const double v = values(li, j);
        if (!ranks_before(v, r0 + li, worst_v, worst_j)) continue;
        offer(col_j, col_v, base, k, r0 + li, v);
        worst_v = col_v(base + k - 1);
        worst_j = col_j(base + k - 1);
      }
    }
  }
};

// Offers every partner the window holds to the lists of k: row i's list is
// row_*((i - row_list0) * k ..), each window row gets its columns (not
// itself); with `mirror` the columns' rows (col_*((j - col_list0) * k ..))
// get the window's rows (C(j, i) = C(i, j)), past the rows when triangular.
// A replicated slice (top_k_slice): over all slices every row sees every
// partner exactly once; the circulant: over all windows of all ranks, once
// in some list, merged under the same total order. Rows of at least
// bound_cols columns take the group-maxima bound below (its cost, ~64 k per
// row, is paid per window: the circulant's windows of 512 columns took twice
// the top-k time with it at 256, 40 000 x 16 384 on one rank).
template <class Exec, class Values, class BestJ, class BestV>
void top_k_window(const Exec& exec, const Values& values, const OutputWindow& g, int k, const BestJ& best_j,
                  const BestV& best_v, std::int64_t row_list0, const BestJ& col_j, const BestV& col_v,
                  std::int64_t col_list0, std::int64_t bound_cols = 4 * kTopKGroups) {
  const bool symmetric = g.symmetric();
  // Rows of at least 4 x kTopKGroups columns and k <= kTopKGroups: one pass
  // takes the maxima of kTopKGroups column groups; k groups each hold a value
  // >= the k-th largest maximum, so it bounds the row's k-th best from below,
  // and a group whose maximum is below the bound or the list's last entry is
  // not read again. Bench deck, k = 16: without a bound a list of 16 took
  // ~100 insertions per row of 4096 (k + k ln(n/k)) and the scan ~38 ms; with
  // the smallest of k union maxima as the bound ~34 offers per row and ~12 ms;
  // with the k-th largest group maximum ~8.5 ms, of which the maxima pass is
  // ~2.6 ms.
  Kokkos::parallel_for("kmini::gram::top_k_rows", Kokkos::RangePolicy<Exec>(exec, 0, g.height()),
                       TopKRows<Values, BestJ, BestV>{values, best_j, best_v, k, g.r0, g.col0(), g.cols(), row_list0,
                                                      bound_cols, symmetric});
  const std::int64_t mirror_begin = g.mirror_begin(), cols = g.cols();
  if (!g.mirror || mirror_begin >= cols) return;
  Kokkos::parallel_for("kmini::gram::top_k_cols", Kokkos::RangePolicy<Exec>(exec, mirror_begin, cols),
                       TopKCols<Values, BestJ, BestV>{values, col_j, col_v, k, g.r0, g.height(), col_list0});
}

// Every partner a replicated slice holds, into the lists of every row of A
// (best_*(i * k ..)): each slice row gets its columns (not itself); with one
// input the rows past the slice get the slice rows too (C(j, i) = C(i, j)),
// so over all slices every row sees every partner exactly once.
template <class Exec, class Values, class BestJ, class BestV>
void top_k_slice(const Exec& exec, const Values& values, const SliceGeometry& g, int k, const BestJ& best_j,
                 const BestV& best_v) {
  top_k_window(exec, values, OutputWindow(g), k, best_j, best_v, 0, best_j, best_v, 0);
}

}  // namespace kmini::gram
