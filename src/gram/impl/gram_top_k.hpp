#pragma once
// Device kernels of the top-k output, one window of C at a time: every row's
// k best partners (a sorted list of k per row), offered row by row and, for
// the columns' rows (C(j, i) = C(i, j)), column by column, with bounds that
// skip what cannot enter a list.
#include "gram/impl/gram_outputs.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <cstring>

namespace kmini::gram {

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
    // does not without fast-math). Runs of kTopKBlock columns first, each
    // lane its own maximum (no dependence between lanes: they vectorise,
    // where a run-time loop into one maximum stayed scalar).
    std::int64_t m = bits_of(values(li, a));
    std::int64_t j = a + 1;
    if (j + kTopKBlock <= b) {
      std::int64_t lane[kTopKBlock];
      for (int q = 0; q < kTopKBlock; ++q) lane[q] = m;
      for (; j + kTopKBlock <= b; j += kTopKBlock) {
        double v[kTopKBlock];
        for (int q = 0; q < kTopKBlock; ++q) v[q] = values(li, j + q);
        for (int q = 0; q < kTopKBlock; ++q) lane[q] = bits_of(v[q]) > lane[q] ? bits_of(v[q]) : lane[q];
      }
      for (int q = 0; q < kTopKBlock; ++q) m = lane[q] > m ? lane[q] : m;
    }
    for (; j < b; ++j) {
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

// Offers columns [a, b) of slice row li (row i of A; not column `self`: i
// with one input, the excluded one or -1 with two) to its list (best_*(base
// ..)), values below `bound` left out.
// Blocks of kTopKBlock columns with no value at or above the list's last
// entry and the bound are skipped after one vectorised pass that only compares.
template <class Values, class BestJ, class BestV>
KOKKOS_INLINE_FUNCTION void offer_range(const Values& values, std::int64_t li, std::int64_t self, std::int64_t a,
                                        std::int64_t b, double bound, const BestJ& best_j, const BestV& best_v,
                                        std::int64_t base, int k, double& worst_v, std::int64_t& worst_j) {
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
      const std::int64_t j = j0 + take_lowest_bit(candidates);
      const double v = values(li, j);
      if (v < bound || !ranks_before(v, j, worst_v, worst_j) || j == self) continue;
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
    const std::int64_t i = r0 + li, base = (i - row_list0) * k, self = symmetric ? i : values.self_of(i),
                       n = cols - col0;
    double worst_v = best_v(base + k - 1);
    std::int64_t worst_j = best_j(base + k - 1);
    if (k > kTopKGroups || n < bound_cols) {
      offer_range(values, li, self, col0, cols, -1.0, best_j, best_v, base, k, worst_v, worst_j);
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
        offer_range(values, li, self, edge(g), edge(g + 1), bound, best_j, best_v, base, k, worst_v, worst_j);
  }
};

// One column's offers of the window's rows (C(j, i) = C(i, j)): a column
// a thread, the device path (adjacent threads read adjacent columns).
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

// The same offers, the host path: kChunk adjacent columns an iteration,
// their lists' last entries kept in two local arrays, and the window read row
// by row, each row's values of the chunk in runs of kLanes (contiguous: the
// similarities vectorise, and one compare a lane finds the columns whose list
// a row may enter). A column at a time, the window is read down a column:
// one cache line and, in rows of 4 KiB or more, one page a value. Each
// column's list gets the same rows in the same order as through TopKCols.
template <class Values, class BestJ, class BestV>
struct TopKColBlocks {
  static constexpr int kLanes = 16, kChunk = 256;
  Values values;
  BestJ col_j;
  BestV col_v;
  int k;
  std::int64_t r0, height, col_list0, begin, end;

  KOKKOS_INLINE_FUNCTION void offer_lanes(std::int64_t li, std::int64_t j0, int n, double* worst_v,
                                          std::int64_t* worst_j) const {
    static_assert(kLanes <= 32, "a run's candidates are bits of a 32-bit mask");
    double v[kLanes];
    if (n == kLanes) {
      for (int q = 0; q < kLanes; ++q) v[q] = values(li, j0 + q);
    } else {
      for (int q = 0; q < n; ++q) v[q] = values(li, j0 + q);
    }
    std::uint32_t candidates = 0;
    for (int q = 0; q < n; ++q) candidates |= std::uint32_t(v[q] >= worst_v[q] ? 1 : 0) << q;
    const std::int64_t i = r0 + li;
    while (candidates != 0) {
      const int q = take_lowest_bit(candidates);
      if (!ranks_before(v[q], i, worst_v[q], worst_j[q])) continue;
      const std::int64_t base = (j0 + q - col_list0) * k;
      offer(col_j, col_v, base, k, i, v[q]);
      worst_v[q] = col_v(base + k - 1);
      worst_j[q] = col_j(base + k - 1);
    }
  }
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t chunk) const {
    const std::int64_t j0 = begin + chunk * kChunk;
    const int n = end - j0 < kChunk ? static_cast<int>(end - j0) : kChunk;
    double worst_v[kChunk];
    std::int64_t worst_j[kChunk];
    for (int q = 0; q < n; ++q) {
      const std::int64_t last = (j0 + q - col_list0) * k + k - 1;
      worst_v[q] = col_v(last);
      worst_j[q] = col_j(last);
    }
    for (std::int64_t li = 0; li < height; ++li)
      for (int s = 0; s < n; s += kLanes)
        offer_lanes(li, j0 + s, n - s < kLanes ? n - s : kLanes, worst_v + s, worst_j + s);
  }
};

// Columns an iteration of the mirror's top-k scan: TopKColBlocks' chunk on
// host backends, one (TopKCols) on devices.
template <class Exec>
inline constexpr int kTopKColLanes =
    Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Exec::memory_space>::accessible ? 256 : 1;

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
template <class Exec, class Values, class BestJ, class BestV, int ColLanes = kTopKColLanes<Exec>>
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
  if constexpr (ColLanes > 1) {
    using Blocks = TopKColBlocks<Values, BestJ, BestV>;
    static_assert(ColLanes == Blocks::kChunk, "top_k_window: host lanes are TopKColBlocks::kChunk");
    const std::int64_t blocks = (cols - mirror_begin + ColLanes - 1) / ColLanes;
    Kokkos::parallel_for("kmini::gram::top_k_col_blocks", Kokkos::RangePolicy<Exec>(exec, 0, blocks),
                         Blocks{values, col_j, col_v, k, g.r0, g.height(), col_list0, mirror_begin, cols});
  } else {
    Kokkos::parallel_for("kmini::gram::top_k_cols", Kokkos::RangePolicy<Exec>(exec, mirror_begin, cols),
                         TopKCols<Values, BestJ, BestV>{values, col_j, col_v, k, g.r0, g.height(), col_list0});
  }
}

// Every partner a replicated slice holds, into the lists of every row of A
// (best_*(i * k ..)): each slice row gets its columns (not itself); with one
// input the rows past the slice get the slice rows too (C(j, i) = C(i, j)),
// so over all slices every row sees every partner exactly once.
template <class Exec, class Values, class BestJ, class BestV, int ColLanes = kTopKColLanes<Exec>>
void top_k_slice(const Exec& exec, const Values& values, const SliceGeometry& g, int k, const BestJ& best_j,
                 const BestV& best_v) {
  top_k_window<Exec, Values, BestJ, BestV, ColLanes>(exec, values, OutputWindow(g), k, best_j, best_v, 0, best_j,
                                                     best_v, 0);
}

}  // namespace kmini::gram
