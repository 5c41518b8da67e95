#pragma once
// The similarity values of a slice from its counts, a checked column gathered
// for the host, and the summary of the full symmetric matrix accumulated slice
// by slice (counts of C are the tile kernels', gram_kernels.hpp).
#include "core/kokkos_compat.hpp"
#include "core/random.hpp"
#include "gram/gram_params.hpp"
#include "gram/gram_similarity.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace kmini::gram {

template <class Counts, class Ones, class Sim>
struct SimilarityKernel {
  Counts counts;
  Ones ones_a, ones_b;
  Sim sim;
  Similarity kind;
  std::int64_t r0, col0, width;
  SimilarityParams params;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t e) const {
    const std::int64_t i = r0 + e / width, j = col0 + e % width;
    sim(e) = static_cast<float>(similarity_value(kind, counts(e), ones_a(i), ones_b(j), params));
  }
};

// The similarity values of a slice as stored (float32) from its counts and
// the rows' counts of ones (ones_b: of B's rows, or A's with one input);
// `params`: the score of two empty rows, Tversky's weights.
template <class Exec, class Counts, class Ones, class Sim>
void similarity_slice(const Exec& exec, Similarity kind, const Counts& counts, const Ones& ones_a, const Ones& ones_b,
                      const SliceGeometry& g, const Sim& sim, const SimilarityParams& params = {}) {
  Kokkos::parallel_for(
      "kmini::gram::similarity", Kokkos::RangePolicy<Exec>(exec, 0, g.height() * g.width()),
      SimilarityKernel<Counts, Ones, Sim>{counts, ones_a, ones_b, sim, kind, g.r0, g.col0(), g.width(), params});
}

// Column `col` of a window's counts (rows [0, rows) of `width` values) into
// out(first ..): a checked row's values that a mirrored window holds as a
// column, gathered so that only they go to the host.
template <class Counts, class Out>
struct CountsColumn {
  Counts counts;
  Out out;
  std::int64_t width, col, first;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t r) const { out(first + r) = counts(r * width + col); }
};

template <class Exec, class Counts, class Out>
void gather_column(const Exec& exec, const Counts& counts, std::int64_t width, std::int64_t col, std::int64_t rows,
                   const Out& out, std::int64_t first) {
  Kokkos::parallel_for("kmini::gram::checked_column", Kokkos::RangePolicy<Exec>(exec, 0, rows),
                       CountsColumn<Counts, Out>{counts, out, width, col, first});
}

// ---------------------------------------------------------------------------
// Summary of the full symmetric matrix, accumulated slice by slice.

// Order-independent weight of element (i, j) in the checksum.
KOKKOS_INLINE_FUNCTION std::uint64_t checksum_weight(std::int64_t i, std::int64_t j) {
  return random::hash(0x6772616dull + static_cast<std::uint64_t>(i), static_cast<std::uint64_t>(j));
}

// The checksum is added to a device scalar (atomically, once per row; the sum
// is mod 2^64, so the order does not matter), so the slice loop never waits
// for a reduction's result on the host.
template <class Counts, class Sums, class Hist, class Checksum>
struct SummaryRows {
  Counts counts;
  Sums row_sums;
  Hist histogram;
  Checksum checksum;
  std::int64_t r0, c0, c1, width, cols, bins;
  bool triangular, mirror;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i) const {
    std::uint64_t sum = 0;
    std::int64_t row = 0;
    for (std::int64_t j = triangular ? i : c0; j < c1; ++j) {
      const std::int64_t c = counts((i - r0) * width + (j - c0));
      row += c;
      // One input: the pair's weight is its upper element's (a mirrored
      // rectangle below the diagonal holds C(j, i) of pairs j < i).
      sum += static_cast<std::uint64_t>(c) * (mirror && j < i ? checksum_weight(j, i) : checksum_weight(i, j));
      Kokkos::atomic_add(&histogram(c * bins / (cols + 1)), std::uint64_t(j == i || !mirror ? 1 : 2));
    }
    row_sums(i) += row;
    Kokkos::atomic_add(&checksum(), sum);
  }
};

// Column j of the window is row j's C(j, i) (triangular: i < j).
template <class Counts, class Sums>
struct SummaryCols {
  Counts counts;
  Sums row_sums;
  std::int64_t r0, r1, c0, width;
  bool triangular;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t j) const {
    std::int64_t col = 0;
    const std::int64_t end = triangular && j < r1 ? j : r1;
    for (std::int64_t i = r0; i < end; ++i) col += counts((i - r0) * width + (j - c0));
    row_sums(j) += col;
  }
};

// row_sums(i) += sum_j C(i, j) for the part of the full matrix this window
// determines (triangular: C(i, j >= i) for its rows, and with `mirror`
// C(j, i) = C(i, j) for the columns j > i; a mirrored rectangle: its rows and
// its columns; else its rows); histogram of those elements of the full matrix
// (bin = c * bins / (cols + 1)); adds to `checksum` (a device scalar) the sum
// over the unordered pairs it holds, i <= j (all i, j with two inputs), of
// C(i, j) * checksum_weight(i, j) (mod 2^64). A replicated slice: the triangle
// from its first row on. Asynchronous on `exec`.
template <class Exec, class Counts, class Sums, class Hist, class Checksum>
void summarise_slice(const Exec& exec, const Counts& counts, const OutputWindow& g, std::int64_t cols,
                     const Sums& row_sums, const Hist& histogram, const Checksum& checksum) {
  const std::int64_t bins = histogram.extent(0);
  Kokkos::parallel_for("kmini::gram::summary_rows", Kokkos::RangePolicy<Exec>(exec, g.r0, g.r1),
                       SummaryRows<Counts, Sums, Hist, Checksum>{counts, row_sums, histogram, checksum, g.r0, g.c0,
                                                                 g.c1, g.width(), cols, bins, g.triangular, g.mirror});
  if (!g.mirror) return;
  const std::int64_t first = g.triangular ? g.r0 + 1 : g.c0;
  Kokkos::parallel_for("kmini::gram::summary_cols", Kokkos::RangePolicy<Exec>(exec, first, g.c1),
                       SummaryCols<Counts, Sums>{counts, row_sums, g.r0, g.r1, g.c0, g.width(), g.triangular});
}

// The same, returning the window's checksum (waits for it).
template <class Exec, class Counts, class Sums, class Hist>
std::uint64_t summarise_slice(const Exec& exec, const Counts& counts, const OutputWindow& g, std::int64_t cols,
                              const Sums& row_sums, const Hist& histogram) {
  Kokkos::View<std::uint64_t, typename Sums::memory_space> sum("kmini::gram::checksum");
  summarise_slice(exec, counts, g, cols, row_sums, histogram, sum);
  std::uint64_t value = 0;
  Kokkos::deep_copy(exec, Kokkos::View<std::uint64_t, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(&value), sum);
  exec.fence();
  return value;
}

}  // namespace kmini::gram
