#pragma once
// Device kernels of the discount benchmark: cv[d][i][n] = multBy[i][n] * discount[d][i][n].
// Views are LayoutRight, so for one date the (i, n) pairs are contiguous: the
// kernels see them as one "row" r = i*O + n of length M*O, and multBy as one
// row of the same length that every date reuses (read, never expanded).
//
// Reductions use a fixed summation order defined here, the same on every
// backend and in the host reference (discount_reference.hpp), so device and
// reference agree bitwise. Products are accumulated with fma (one rounding),
// which every backend and the host implement identically.
#include "core/kokkos_compat.hpp"
#include "core/packs.hpp"
#include "core/random.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>

// Non-temporal (streaming) stores of cv on hosts whose target has them
// (AVX-512F: _mm512_stream_pd/ps, else AVX: _mm256_stream_pd/ps), never in a
// GPU build (host or device pass). cv is written, never read: a regular store
// first reads each line for ownership, 24 bytes per element where 16 (the
// inputs) + 8 (cv) are needed (double).
#if !defined(KOKKOS_ENABLE_CUDA) && !defined(KOKKOS_ENABLE_HIP) && !defined(KOKKOS_ENABLE_SYCL) && \
    !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__) && (defined(__AVX512F__) || defined(__AVX__))
#define KMINI_DISCOUNT_STREAMING 1
#include <immintrin.h>
#else
#define KMINI_DISCOUNT_STREAMING 0
#endif

namespace kmini::discount {

// Launch shapes per backend (not part of the numerical definition).
struct Tuning {
#if defined(KOKKOS_ENABLE_CUDA) || defined(KOKKOS_ENABLE_HIP) || defined(KOKKOS_ENABLE_SYCL)
  static constexpr int mdrange_tile_dates = 1;
  static constexpr int mdrange_tile_row = 256;  // one coalesced row segment per block: 8 warps, 4 wavefronts
  static constexpr bool flat_policy = true;     // policy auto (default_policy, discount_api.hpp)
#else
  static constexpr int mdrange_tile_dates = 1;
  static constexpr int mdrange_tile_row = 4096;  // a long, vectorisable inner loop
  static constexpr bool flat_policy = false;
#endif
  // loads auto (default_loads, discount_api.hpp): 16-byte packs where a GPU measured
  // them faster (CUDA: the H200 runs in docs/performance.md); scalar elsewhere.
#if defined(KOKKOS_ENABLE_CUDA)
  static constexpr bool vector_loads = true;
#else
  static constexpr bool vector_loads = false;
#endif
};

// The numerical definition of the per-date sum (fixed, backend independent):
// a date's row is cut into blocks of kBlock elements; inside a block, element
// t goes to lane t % kLanes, each lane accumulates acc = fma(m, x, acc) in
// increasing t; the lanes are added as a pairwise tree; the block sums are
// added in block order starting from zero.
constexpr std::int64_t kBlock = 1024;
constexpr int kLanes = 8;

template <class T>
KOKKOS_INLINE_FUNCTION T combine_lanes(const T (&acc)[kLanes]) {
  static_assert(kLanes == 8, "combine_lanes is written for 8 lanes");
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

template <class T>
using Row = Kokkos::View<T*, Kokkos::LayoutRight, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
template <class T>
using Rows = Kokkos::View<T**, Kokkos::LayoutRight, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

// The (D_local x M x O) view seen as D_local rows of M*O (same memory).
template <class View3>
Rows<typename View3::value_type> as_rows(const View3& v) {
  return Rows<typename View3::value_type>(v.data(), v.extent(0), v.extent(1) * v.extent(2));
}
template <class View2>
Row<typename View2::value_type> as_row(const View2& v) {
  return Row<typename View2::value_type>(v.data(), v.extent(0) * v.extent(1));
}

template <class T, class Flat>
struct FillArange {
  const Flat v;
  const std::uint64_t first_index;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t k) const { v(k) = static_cast<T>(first_index + k); }
};

// Input generators: value k of the global array depends only on (seed, k)
// (random) or k (arange), so any rank generates its slice on its own.
template <class T, class Exec, class Flat>
void fill_arange(const Exec& exec, const Flat& v, std::uint64_t first_index) {
  Kokkos::parallel_for("kmini::discount::fill_arange", Kokkos::RangePolicy<Exec>(exec, 0, v.extent(0)),
                       FillArange<T, Flat>{v, first_index});
}
template <class T>
KOKKOS_INLINE_FUNCTION T random_value(std::uint64_t seed, std::uint64_t k) {
  return static_cast<T>(random::uniform01(seed, k));
}
template <class T, class Flat>
struct FillRandom {
  const Flat v;
  const std::uint64_t seed, first_index;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t k) const { v(k) = random_value<T>(seed, first_index + k); }
};
template <class T, class Exec, class Flat>
void fill_random(const Exec& exec, const Flat& v, std::uint64_t seed, std::uint64_t first_index) {
  Kokkos::parallel_for("kmini::discount::fill_random", Kokkos::RangePolicy<Exec>(exec, 0, v.extent(0)),
                       FillRandom<T, Flat>{v, seed, first_index});
}

template <class MPtr, class XPtr, class YPtr>
struct MultiplyFlat {
  const MPtr m;
  const XPtr x;
  const YPtr y;
  const std::size_t row;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t k) const { y[k] = m[k % row] * x[k]; }
};

// cv = multBy * discount, one thread per output element over the flattened
// index k = d*M*O + r (r = k mod M*O: one integer division per element).
template <class Exec, class MultRow, class InRows, class OutRows>
void multiply_flat(const Exec& exec, const MultRow& mult, const InRows& disc, const OutRows& cv) {
  const std::size_t row = mult.extent(0);
  const std::size_t n = disc.extent(0) * row;
  if (n == 0) return;
  const auto* m = mult.data();
  const auto* x = disc.data();
  auto* y = cv.data();
  Kokkos::parallel_for("kmini::discount::multiply_flat", Kokkos::RangePolicy<Exec>(exec, 0, n),
                       MultiplyFlat<decltype(m), decltype(x), decltype(y)>{m, x, y, row});
}

// policy wave: one wave of threads (the backend's concurrency: every SM's
// full occupancy on a GPU, where the kernel takes at most 32 registers), thread
// t doing k = t, t + threads, ... of the flat index; r = k mod M*O advances by
// threads mod M*O per iteration, so the loop divides nothing.
template <class T>
struct MultiplyWave {
  const T* m;
  const T* x;
  T* y;
  const std::int64_t n, row, threads;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t t) const {
    const std::int64_t step = threads % row;
    std::int64_t r = t % row;
    for (std::int64_t k = t; k < n; k += threads) {
      y[k] = m[r] * x[k];
      r += step;
      if (r >= row) r -= row;
    }
  }
};

// discount.loads: vector: discount read and cv written as 16-byte packs of W =
// 16 / sizeof(T) consecutive elements of the flat index (x and y 16-byte
// aligned); multBy element by element (a date's row need not start on a pack
// boundary; multBy is small and stays in the caches). The n mod W last
// elements one by one. Flat: one pack (or tail element) per work item; Wave:
// one wave of threads striding over the packs, then over the tail.
template <class T, bool Wave>
struct MultiplyPacked {
  static constexpr int W = Pack16<T>::size;
  const T* m;
  const T* x;
  T* y;
  const std::int64_t n, row, threads;  // threads: Wave only
  KOKKOS_INLINE_FUNCTION std::int64_t packs() const { return n / W; }
  // Pack p, whose first element is r = p W mod row in multBy.
  KOKKOS_FORCEINLINE_FUNCTION void pack(const std::int64_t p, std::int64_t r) const {
    const Pack16<T> a = reinterpret_cast<const Pack16<T>*>(x)[p];
    Pack16<T> b;
    for (int j = 0; j < W; ++j) {
      b.v[j] = m[r] * a.v[j];
      if (++r == row) r = 0;
    }
    reinterpret_cast<Pack16<T>*>(y)[p] = b;
  }
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t t) const {
    const std::int64_t P = packs();
    if constexpr (Wave) {
      const std::int64_t step = (threads * W) % row;
      std::int64_t r = (t * W) % row;
      for (std::int64_t p = t; p < P; p += threads) {
        pack(p, r);
        r += step;
        if (r >= row) r -= row;
      }
      for (std::int64_t k = P * W + t; k < n; k += threads) y[k] = m[k % row] * x[k];
    } else if (t < P) {
      pack(t, (t * W) % row);
    } else {
      const std::int64_t k = P * W + (t - P);
      y[k] = m[k % row] * x[k];
    }
  }
};

// cv = multBy * discount with policy wave and/or 16-byte packs (above).
// Without 16-byte aligned arrays the packs run as policy flat or wave with
// scalar loads (the same products).
template <class Exec, class MultRow, class InRows, class OutRows>
void multiply_strided(const Exec& exec, const MultRow& mult, const InRows& disc, const OutRows& cv, bool wave,
                      bool vector) {
  using T = typename OutRows::non_const_value_type;
  const std::int64_t row = mult.extent(0);
  const std::int64_t n = disc.extent(0) * row;
  if (n == 0) return;
  const T* m = mult.data();
  const T* x = disc.data();
  T* y = cv.data();
  const std::int64_t threads = std::min<std::int64_t>(n, exec.concurrency());
  if (vector && aligned16(x) && aligned16(y)) {
    constexpr int W = Pack16<T>::size;
    if (wave) {
      Kokkos::parallel_for("kmini::discount::multiply_wave_vector", Kokkos::RangePolicy<Exec>(exec, 0, threads),
                           MultiplyPacked<T, true>{m, x, y, n, row, threads});
    } else {
      const std::int64_t items = n / W + n % W;
      Kokkos::parallel_for("kmini::discount::multiply_flat_vector", Kokkos::RangePolicy<Exec>(exec, 0, items),
                           MultiplyPacked<T, false>{m, x, y, n, row, 0});
    }
    return;
  }
  if (wave) {
    Kokkos::parallel_for("kmini::discount::multiply_wave", Kokkos::RangePolicy<Exec>(exec, 0, threads),
                         MultiplyWave<T>{m, x, y, n, row, threads});
    return;
  }
  multiply_flat(exec, mult, disc, cv);
}

template <class MultRow, class InRows, class OutRows>
struct MultiplyMdrange {
  const MultRow mult;
  const InRows disc;
  const OutRows cv;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t d, const std::int64_t r) const {
    cv(d, r) = mult(r) * disc(d, r);
  }
};

// The same, one thread per (d, r) through a 2-D MDRange (r fastest): no
// division, and the backend maps r to the contiguous/coalesced direction.
template <class Exec, class MultRow, class InRows, class OutRows>
void multiply_mdrange(const Exec& exec, const MultRow& mult, const InRows& disc, const OutRows& cv) {
  using Policy = Kokkos::MDRangePolicy<Exec, Kokkos::Rank<2, Kokkos::Iterate::Right, Kokkos::Iterate::Right>,
                                       Kokkos::IndexType<std::int64_t>>;
  const std::int64_t dates = disc.extent(0), row = disc.extent(1);
  if (dates == 0 || row == 0) return;
  Kokkos::parallel_for("kmini::discount::multiply_mdrange",
                       Policy(exec, {0, 0}, {dates, row}, {Tuning::mdrange_tile_dates, Tuning::mdrange_tile_row}),
                       MultiplyMdrange<MultRow, InRows, OutRows>{mult, disc, cv});
}

// Whether this build has the streaming-store kernel (multiply_streaming).
inline constexpr bool kStreamingStores = KMINI_DISCOUNT_STREAMING;

#if KMINI_DISCOUNT_STREAMING
// y[t] = m[t] * x[t], t < len, y written with non-temporal stores (a head up
// to y's first 64-byte boundary and the tail with regular ones), then
// _mm_sfence: the streaming stores of this thread are ordered before whatever
// it does next (the kernel's end, the fence, then the reads of cv). Products
// are the same IEEE multiplies as multiply_flat's: cv is bitwise the same.
namespace streaming {
KOKKOS_INLINE_FUNCTION void store_row(const double* m, const double* x, double* y, std::int64_t len) {
  std::int64_t t = 0;
#if defined(__AVX512F__)
  constexpr int kW = 8;
#else
  constexpr int kW = 4;
#endif
  for (; t < len && (reinterpret_cast<std::uintptr_t>(y + t) % (kW * sizeof(double))) != 0; ++t) y[t] = m[t] * x[t];
  for (; t + kW <= len; t += kW) {
#if defined(__AVX512F__)
    _mm512_stream_pd(y + t, _mm512_mul_pd(_mm512_loadu_pd(m + t), _mm512_loadu_pd(x + t)));
#else
    _mm256_stream_pd(y + t, _mm256_mul_pd(_mm256_loadu_pd(m + t), _mm256_loadu_pd(x + t)));
#endif
  }
  for (; t < len; ++t) y[t] = m[t] * x[t];
  _mm_sfence();
}
KOKKOS_INLINE_FUNCTION void store_row(const float* m, const float* x, float* y, std::int64_t len) {
  std::int64_t t = 0;
#if defined(__AVX512F__)
  constexpr int kW = 16;
#else
  constexpr int kW = 8;
#endif
  for (; t < len && (reinterpret_cast<std::uintptr_t>(y + t) % (kW * sizeof(float))) != 0; ++t) y[t] = m[t] * x[t];
  for (; t + kW <= len; t += kW) {
#if defined(__AVX512F__)
    _mm512_stream_ps(y + t, _mm512_mul_ps(_mm512_loadu_ps(m + t), _mm512_loadu_ps(x + t)));
#else
    _mm256_stream_ps(y + t, _mm256_mul_ps(_mm256_loadu_ps(m + t), _mm256_loadu_ps(x + t)));
#endif
  }
  for (; t < len; ++t) y[t] = m[t] * x[t];
  _mm_sfence();
}
}  // namespace streaming
#endif

// cv = multBy * discount with streaming stores of cv (host builds with
// kStreamingStores; elsewhere never called: compute() falls back to
// multiply_mdrange). One work item per (date, block of kStreamBlock
// elements of its row), each ending with its own sfence.
inline constexpr std::int64_t kStreamBlock = 1 << 16;
#if KMINI_DISCOUNT_STREAMING
template <class MPtr, class XPtr, class YPtr>
struct MultiplyStreaming {
  const MPtr m;
  const XPtr x;
  const YPtr y;
  const std::int64_t blocks, row;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t item) const {
    const std::int64_t d = item / blocks, begin = (item % blocks) * kStreamBlock;
    const std::int64_t len = row - begin < kStreamBlock ? row - begin : kStreamBlock;
    streaming::store_row(m + begin, x + d * row + begin, y + d * row + begin, len);
  }
};
#endif
template <class Exec, class MultRow, class InRows, class OutRows>
void multiply_streaming(const Exec& exec, const MultRow& mult, const InRows& disc, const OutRows& cv) {
#if KMINI_DISCOUNT_STREAMING
  const std::int64_t dates = disc.extent(0), row = disc.extent(1);
  if (dates == 0 || row == 0) return;
  const std::int64_t blocks = (row + kStreamBlock - 1) / kStreamBlock;
  const auto* m = mult.data();
  const auto* x = disc.data();
  auto* y = cv.data();
  Kokkos::parallel_for("kmini::discount::multiply_streaming", Kokkos::RangePolicy<Exec>(exec, 0, dates * blocks),
                       MultiplyStreaming<decltype(m), decltype(x), decltype(y)>{m, x, y, blocks, row});
#else
  multiply_mdrange(exec, mult, disc, cv);
#endif
}

// Sum of one block (see kBlock/kLanes), optionally writing cv on the way.
template <bool WriteCv, class T>
KOKKOS_INLINE_FUNCTION T block_sum(const T* m, const T* x, T* y, std::int64_t len) {
  T acc[kLanes];
  for (int l = 0; l < kLanes; ++l) acc[l] = T(0);
  std::int64_t t = 0;
  for (; t + kLanes <= len; t += kLanes) {
    for (int l = 0; l < kLanes; ++l) {
      if (WriteCv) y[t + l] = m[t + l] * x[t + l];
      acc[l] = compat::fma(m[t + l], x[t + l], acc[l]);
    }
  }
  for (int l = 0; t + l < len; ++l) {
    if (WriteCv) y[t + l] = m[t + l] * x[t + l];
    acc[l] = compat::fma(m[t + l], x[t + l], acc[l]);
  }
  return combine_lanes(acc);
}

template <bool WriteCv, class MultRow, class InRows, class OutRows, class Partial>
struct PerDateBlocks {
  const MultRow mult;
  const InRows disc;
  const OutRows cv;
  const Partial partial;
  const std::int64_t blocks, row;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t item) const {
    const std::int64_t d = item / blocks, b = item % blocks;
    const std::int64_t begin = b * kBlock;
    const std::int64_t len = row - begin < kBlock ? row - begin : kBlock;
    auto* y = WriteCv ? &cv(d, begin) : nullptr;
    partial(d, b) = block_sum<WriteCv>(&mult(begin), &disc(d, begin), y, len);
  }
};

template <class Partial, class Sums>
struct PerDateCombine {
  const Partial partial;
  const Sums sums;
  const std::int64_t blocks;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t d) const {
    typename Sums::non_const_value_type s = 0;
    for (std::int64_t b = 0; b < blocks; ++b) s += partial(d, b);
    sums(d) = s;
  }
};

// Fused per-date reduction: sums[d] = sum over r of multBy[r] * disc[d][r], and
// cv when WriteCv. One thread per (date, block), then one per date adds its
// block sums in order. `partial` is scratch of D_local x blocks.
template <bool WriteCv, class Exec, class MultRow, class InRows, class OutRows, class Partial, class Sums>
void reduce_per_date(const Exec& exec, const MultRow& mult, const InRows& disc, const OutRows& cv,
                     const Partial& partial, const Sums& sums) {
  const std::int64_t dates = disc.extent(0), row = disc.extent(1);
  if (dates == 0) return;
  const std::int64_t blocks = partial.extent(1);
  Kokkos::parallel_for("kmini::discount::per_date_blocks", Kokkos::RangePolicy<Exec>(exec, 0, dates * blocks),
                       PerDateBlocks<WriteCv, MultRow, InRows, OutRows, Partial>{mult, disc, cv, partial, blocks, row});
  Kokkos::parallel_for("kmini::discount::per_date_combine", Kokkos::RangePolicy<Exec>(exec, 0, dates),
                       PerDateCombine<Partial, Sums>{partial, sums, blocks});
}

template <bool WriteCv, class T, class Mult, class In, class Out, class Sums>
struct PerIdKernel {
  const Mult mult;
  const In disc;
  const Out cv;
  const Sums sums;
  const std::int64_t dates, terms;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i) const {
    T s = 0;
    for (std::int64_t d = 0; d < dates; ++d) {
      T q = 0;
      for (std::int64_t n = 0; n < terms; ++n) {
        if (WriteCv) cv(d, i, n) = mult(i, n) * disc(d, i, n);
        q = compat::fma(mult(i, n), disc(d, i, n), q);
      }
      s += q;
    }
    sums(i) = s;
  }
};

// Fused per-id reduction over this rank's dates: sums[i] = sum over local d
// (in date order) of q(d, i), q(d, i) = fma chain over n in term order.
// One thread per id; cv written when WriteCv.
template <bool WriteCv, class Exec, class Mult, class In, class Out, class Sums>
void reduce_per_id(const Exec& exec, const Mult& mult, const In& disc, const Out& cv, const Sums& sums) {
  const std::int64_t dates = disc.extent(0), ids = mult.extent(0), terms = mult.extent(1);
  using T = typename Sums::non_const_value_type;
  Kokkos::parallel_for("kmini::discount::per_id", Kokkos::RangePolicy<Exec>(exec, 0, ids),
                       PerIdKernel<WriteCv, T, Mult, In, Out, Sums>{mult, disc, cv, sums, dates, terms});
}

}  // namespace kmini::discount
