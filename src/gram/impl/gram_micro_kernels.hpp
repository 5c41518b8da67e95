#pragma once
// The AND+popcount micro-kernels of the Gram tile kernel (the peak probe that
// runs them with operands in L1: gram_probe.hpp): the staged micro-tile (GPUs:
// panels in shared memory) and the row blocks read in place (hosts), whose
// AVX-512 VPOPCNTDQ version sits beside the portable one behind rows_block().
#include "core/kokkos_compat.hpp"
#include "core/random.hpp"
#include "gram/gram_params.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <type_traits>

// Unrolling hints: the device pass of nvcc/hipcc and clang take `unroll`; the
// host pass of a GPU compiler gets none (gcc behind nvcc warns on either form).
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define KMINI_GRAM_UNROLL _Pragma("unroll")
#elif defined(__CUDACC__) || defined(__HIPCC__)
#define KMINI_GRAM_UNROLL
#elif defined(__clang__)
#define KMINI_GRAM_UNROLL _Pragma("unroll")
#elif defined(__GNUC__)
#define KMINI_GRAM_UNROLL _Pragma("GCC unroll 16")
#else
#define KMINI_GRAM_UNROLL
#endif

namespace kmini::gram {

using Word = std::uint64_t;

// Index of (row, k) in a staged panel.
template <class P>
KOKKOS_FORCEINLINE_FUNCTION constexpr int panel_index(int row, int k) {
  return P::word_major ? k * (P::tile + P::pad) + row : row * (P::chunk + P::pad) + k;
}
// Row of a panel used as row r of micro-tile m.
template <class P, int M>
KOKKOS_FORCEINLINE_FUNCTION constexpr int micro_row(int m, int r) {
  return P::interleaved ? m + r * (P::tile / M) : m * M + r;
}
template <class P>
KOKKOS_INLINE_FUNCTION constexpr std::size_t panel_words() {
  return P::word_major ? std::size_t(P::chunk) * (P::tile + P::pad) : std::size_t(P::tile) * (P::chunk + P::pad);
}
// Row length of the C tile in scratch.
template <class P>
KOKKOS_INLINE_FUNCTION constexpr int ct_stride() {
  return P::tile + P::ct_pad;
}
template <class P>
KOKKOS_INLINE_FUNCTION constexpr std::size_t ct_bytes() {
  return std::size_t(P::tile) * ct_stride<P>() * sizeof(std::uint32_t);
}
template <class P>
KOKKOS_INLINE_FUNCTION constexpr std::size_t team_scratch_bytes() {
  return (P::staged ? 2 * panel_words<P>() * sizeof(Word) : 0) + ct_bytes<P>();
}

// Copies n words from src (nullptr: a row past the end, zeros) to panel row
// `row` from word k on.
template <class P>
KOKKOS_FORCEINLINE_FUNCTION void stage_run(Word* KOKKOS_RESTRICT panel, int row, int k, int n,
                                           const Word* KOKKOS_RESTRICT src) {
  if (src) {
    for (int q = 0; q < n; ++q) panel[panel_index<P>(row, k + q)] = src[q];
  } else {
    for (int q = 0; q < n; ++q) panel[panel_index<P>(row, k + q)] = 0;
  }
}

// The micro-tile's sums: adds sum_k popcount(ra[r][k * KStride] &
// rb[s][k * KStride]), k < nk, to c[r * c_row + s * c_col]. Full chunks use
// the compile-time count (FixedK = P::chunk, 50% faster on an AVX-512 host
// than a runtime count); the last chunk of a row uses FixedK = 0 and the
// runtime nk. Rows read in place (hosts) have KStride 1 and go through the
// dispatch rows_block below; staged panels (micro_tile, GPUs) are word-major,
// KStride words apart. Plain C++: GCC vectorises the unit-stride k loop, but
// reloads both operands for each of the 16 AND+popcount+add (32 loads per 48
// vector ops: load-bound).
template <class P, int FixedK, int KStride = 1>
KOKKOS_FORCEINLINE_FUNCTION void rows_block_portable(const Word* const* ra, const Word* const* rb, int runtime_nk,
                                                     std::uint32_t* KOKKOS_RESTRICT c, int c_row, int c_col) {
  const int nk = FixedK > 0 ? FixedK : runtime_nk;
  const Word* KOKKOS_RESTRICT a[P::mr];
  const Word* KOKKOS_RESTRICT b[P::nr];
  KMINI_GRAM_UNROLL
  for (int r = 0; r < P::mr; ++r) a[r] = ra[r];
  KMINI_GRAM_UNROLL
  for (int s = 0; s < P::nr; ++s) b[s] = rb[s];
  typename P::acc_type acc[P::mr][P::nr];
  KMINI_GRAM_UNROLL
  for (int r = 0; r < P::mr; ++r) {
    KMINI_GRAM_UNROLL
    for (int s = 0; s < P::nr; ++s) acc[r][s] = 0;
  }
  for (int k = 0; k < nk; ++k) {
    KMINI_GRAM_UNROLL
    for (int r = 0; r < P::mr; ++r) {
      const Word x = a[r][k * KStride];
      KMINI_GRAM_UNROLL
      for (int s = 0; s < P::nr; ++s)
        acc[r][s] += static_cast<typename P::acc_type>(compat::popcount64(x & b[s][k * KStride]));
    }
  }
  KMINI_GRAM_UNROLL
  for (int r = 0; r < P::mr; ++r) {
    KMINI_GRAM_UNROLL
    for (int s = 0; s < P::nr; ++s) c[r * c_row + s * c_col] += static_cast<std::uint32_t>(acc[r][s]);
  }
}

// ct(rows of micro-tile mi, cols of micro-tile ni) += its sums over the nk
// staged words: rows_block_portable on the panels' rows, with the panels'
// word stride and the micro-tile's row and column steps in ct (interleaved
// on GPUs).
template <class P, int FixedK>
KOKKOS_FORCEINLINE_FUNCTION void micro_tile(const Word* KOKKOS_RESTRICT pa, const Word* KOKKOS_RESTRICT pb,
                                            std::uint32_t* KOKKOS_RESTRICT ct, int mi, int ni, int runtime_nk) {
  constexpr int k_stride = panel_index<P>(0, 1) - panel_index<P>(0, 0);
  constexpr int row_step = micro_row<P, P::mr>(0, 1) - micro_row<P, P::mr>(0, 0);
  constexpr int col_step = micro_row<P, P::nr>(0, 1) - micro_row<P, P::nr>(0, 0);
  const Word* ra[P::mr];
  const Word* rb[P::nr];
  KMINI_GRAM_UNROLL
  for (int r = 0; r < P::mr; ++r) ra[r] = pa + panel_index<P>(micro_row<P, P::mr>(mi, r), 0);
  KMINI_GRAM_UNROLL
  for (int s = 0; s < P::nr; ++s) rb[s] = pb + panel_index<P>(micro_row<P, P::nr>(ni, s), 0);
  std::uint32_t* c = ct + micro_row<P, P::mr>(mi, 0) * ct_stride<P>() + micro_row<P, P::nr>(ni, 0);
  rows_block_portable<P, FixedK, k_stride>(ra, rb, runtime_nk, c, row_step * ct_stride<P>(), col_step);
}

// A team's share of the tile's micro-tiles over one staged chunk of nk words:
// thread t takes micro-tiles t, t + team_size, ... (the tiles and the probe).
template <class P, int FixedK, class Member>
KOKKOS_FORCEINLINE_FUNCTION void team_micro_tiles(const Member& team, const Word* pa, const Word* pb, std::uint32_t* ct,
                                                  int nk) {
  constexpr int micro_cols = P::tile / P::nr, micro_count = (P::tile / P::mr) * micro_cols;
  for (int mt = team.team_rank(); mt < micro_count; mt += team.team_size())
    micro_tile<P, FixedK>(pa, pb, ct, mt / micro_cols, mt % micro_cols, nk);
}

#if KMINI_GRAM_AVX512_POPCOUNT
// rows_block on AVX-512 VPOPCNTDQ hosts; nk: a multiple of 8 (rows are padded to Tuning::granule = 8 words).
template <class P>
inline void rows_block_avx512(const Word* const* ra, const Word* const* rb, int nk, std::uint32_t* c, int stride) {
  static_assert(P::mr == 4 && P::nr == 4 && P::granule % 8 == 0 && P::chunk % 8 == 0, "4 x 4 of whole zmm words");
  const Word *a0 = ra[0], *a1 = ra[1], *a2 = ra[2], *a3 = ra[3];
  const Word *b0 = rb[0], *b1 = rb[1], *b2 = rb[2], *b3 = rb[3];
  __m512i acc[4][4];
  for (auto& row : acc)
    for (auto& v : row) v = _mm512_setzero_si512();
  for (int k = 0; k < nk; k += 8) {
    const __m512i b[4] = {_mm512_loadu_si512(b0 + k), _mm512_loadu_si512(b1 + k), _mm512_loadu_si512(b2 + k),
                          _mm512_loadu_si512(b3 + k)};
    const __m512i a[4] = {_mm512_loadu_si512(a0 + k), _mm512_loadu_si512(a1 + k), _mm512_loadu_si512(a2 + k),
                          _mm512_loadu_si512(a3 + k)};
    for (int r = 0; r < 4; ++r)
      for (int s = 0; s < 4; ++s)
        acc[r][s] = _mm512_add_epi64(acc[r][s], _mm512_popcnt_epi64(_mm512_and_si512(a[r], b[s])));
  }
  // Each row's 4 horizontal sums at once (a transpose-and-add tree; 16
  // separate _mm512_reduce_add_epi64 cost more). The maskz forms with every
  // lane set are the plain instructions; GCC 12's unmasked forms start from an
  // "undefined" vector and warn (-Wuninitialized) wherever they are inlined.
  constexpr __mmask8 kAll = 0xFF;
  for (int r = 0; r < 4; ++r) {
    const __m512i* v = acc[r];
    // per 128-bit lane q: [v0 pair q, v1 pair q], [v2 pair q, v3 pair q]
    const __m512i t0 =
        _mm512_add_epi64(_mm512_maskz_unpacklo_epi64(kAll, v[0], v[1]), _mm512_maskz_unpackhi_epi64(kAll, v[0], v[1]));
    const __m512i t1 =
        _mm512_add_epi64(_mm512_maskz_unpacklo_epi64(kAll, v[2], v[3]), _mm512_maskz_unpackhi_epi64(kAll, v[2], v[3]));
    // lanes: t0 L0+L1, t0 L2+L3, t1 L0+L1, t1 L2+L3
    const __m512i u = _mm512_add_epi64(_mm512_maskz_shuffle_i64x2(kAll, t0, t1, _MM_SHUFFLE(2, 0, 2, 0)),
                                       _mm512_maskz_shuffle_i64x2(kAll, t0, t1, _MM_SHUFFLE(3, 1, 3, 1)));
    // lane 0: [sum v0, sum v1], lane 2: [sum v2, sum v3]
    const __m512i w = _mm512_add_epi64(u, _mm512_maskz_shuffle_i64x2(kAll, u, u, _MM_SHUFFLE(2, 3, 0, 1)));
    alignas(64) std::uint64_t lanes[8];
    _mm512_store_si512(lanes, w);
    c[r * stride + 0] += static_cast<std::uint32_t>(lanes[0]);
    c[r * stride + 1] += static_cast<std::uint32_t>(lanes[1]);
    c[r * stride + 2] += static_cast<std::uint32_t>(lanes[4]);
    c[r * stride + 3] += static_cast<std::uint32_t>(lanes[5]);
  }
}
#endif

#if KMINI_GRAM_AVX2
// Harley-Seal on AVX2 (Mula, Kurz and Lemire, "Faster Population Counts Using
// AVX2 Instructions"): the 16 streams a[r] & b[s] are summed one at a time,
// 16 vectors at once through a tree of carry-save adders (ones, twos, fours,
// eights), so only one vector in 16 (the sixteens) goes through the vpshufb
// nibble-table popcount: about 6 vector ops per 256 bits where a popcount of
// each vector takes 8. AVX2 has no 64-bit popcount, so the portable kernel
// on an x86-64-v3 target runs scalar POPCNT.
namespace avx2 {
inline __m256i popcount_bytes(__m256i v) {
  const __m256i table =
      _mm256_setr_epi8(0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4, 0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4);
  const __m256i low = _mm256_set1_epi8(0x0f);
  return _mm256_add_epi8(_mm256_shuffle_epi8(table, _mm256_and_si256(v, low)),
                         _mm256_shuffle_epi8(table, _mm256_and_si256(_mm256_srli_epi16(v, 4), low)));
}
// Per 64-bit lane: the popcount of v.
inline __m256i popcount_lanes(__m256i v) { return _mm256_sad_epu8(popcount_bytes(v), _mm256_setzero_si256()); }
// Carry-save adder: h:l = a + b + c, bit by bit.
inline void csa(__m256i& h, __m256i& l, __m256i a, __m256i b, __m256i c) {
  const __m256i u = _mm256_xor_si256(a, b);
  h = _mm256_or_si256(_mm256_and_si256(a, b), _mm256_and_si256(u, c));
  l = _mm256_xor_si256(u, c);
}
// sum over k < nk of popcount(a[k] & b[k]), in the 4 lanes; nk a multiple of 4.
inline __m256i stream_sum(const Word* a, const Word* b, int nk) {
  const auto d = [&](int k) {
    return _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + k)),
                            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + k)));
  };
  __m256i total = _mm256_setzero_si256(), ones = total, twos = total, fours = total, eights = total;
  int k = 0;
  for (; k + 64 <= nk; k += 64) {
    __m256i twos_a, twos_b, fours_a, fours_b, eights_a, eights_b, sixteens;
    csa(twos_a, ones, ones, d(k + 0), d(k + 4));
    csa(twos_b, ones, ones, d(k + 8), d(k + 12));
    csa(fours_a, twos, twos, twos_a, twos_b);
    csa(twos_a, ones, ones, d(k + 16), d(k + 20));
    csa(twos_b, ones, ones, d(k + 24), d(k + 28));
    csa(fours_b, twos, twos, twos_a, twos_b);
    csa(eights_a, fours, fours, fours_a, fours_b);
    csa(twos_a, ones, ones, d(k + 32), d(k + 36));
    csa(twos_b, ones, ones, d(k + 40), d(k + 44));
    csa(fours_a, twos, twos, twos_a, twos_b);
    csa(twos_a, ones, ones, d(k + 48), d(k + 52));
    csa(twos_b, ones, ones, d(k + 56), d(k + 60));
    csa(fours_b, twos, twos, twos_a, twos_b);
    csa(eights_b, fours, fours, fours_a, fours_b);
    csa(sixteens, eights, eights, eights_a, eights_b);
    total = _mm256_add_epi64(total, popcount_lanes(sixteens));
  }
  // ones + 2 twos + 4 fours + 8 eights: at most 120 per byte.
  __m256i bytes = popcount_bytes(ones);
  bytes = _mm256_add_epi8(bytes, _mm256_slli_epi16(popcount_bytes(twos), 1));
  bytes = _mm256_add_epi8(bytes, _mm256_slli_epi16(popcount_bytes(fours), 2));
  bytes = _mm256_add_epi8(bytes, _mm256_slli_epi16(popcount_bytes(eights), 3));
  total = _mm256_add_epi64(_mm256_slli_epi64(total, 4), _mm256_sad_epu8(bytes, _mm256_setzero_si256()));
  for (; k < nk; k += 4) total = _mm256_add_epi64(total, popcount_lanes(d(k)));
  return total;
}
}  // namespace avx2

// rows_block on AVX2 hosts; nk: a multiple of 4 (rows are padded to 8 words).
template <class P>
inline void rows_block_avx2(const Word* const* ra, const Word* const* rb, int nk, std::uint32_t* c, int stride) {
  static_assert(P::mr == 4 && P::nr == 4 && P::granule % 4 == 0 && P::chunk % 4 == 0, "4 x 4 of whole ymm words");
  for (int r = 0; r < 4; ++r) {
    const __m256i v0 = avx2::stream_sum(ra[r], rb[0], nk), v1 = avx2::stream_sum(ra[r], rb[1], nk);
    const __m256i v2 = avx2::stream_sum(ra[r], rb[2], nk), v3 = avx2::stream_sum(ra[r], rb[3], nk);
    // [v0 0+1, v1 0+1, v0 2+3, v1 2+3] and the same for v2, v3; then the halves added.
    const __m256i t0 = _mm256_add_epi64(_mm256_unpacklo_epi64(v0, v1), _mm256_unpackhi_epi64(v0, v1));
    const __m256i t1 = _mm256_add_epi64(_mm256_unpacklo_epi64(v2, v3), _mm256_unpackhi_epi64(v2, v3));
    const __m256i w =
        _mm256_add_epi64(_mm256_permute2x128_si256(t0, t1, 0x20), _mm256_permute2x128_si256(t0, t1, 0x31));
    alignas(32) std::uint64_t lanes[4];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), w);
    for (int s = 0; s < 4; ++s) c[r * stride + s] += static_cast<std::uint32_t>(lanes[s]);
  }
}
#endif

#if KMINI_GRAM_AVX512BW
// Harley-Seal at 512 bits for AVX-512BW without VPOPCNTDQ (Skylake-SP,
// Cascade Lake): as avx2:: above, each carry-save adder two vpternlogq
// (sum 0x96, majority 0xE8), the nibble table through the 512-bit vpshufb.
namespace avx512bw {
inline __m512i popcount_bytes(__m512i v) {
  // maskz with every lane set: the plain broadcast (GCC 12's unmasked form warns, see rows_block_avx512).
  const __m512i table =
      _mm512_maskz_broadcast_i32x4(0xFFFF, _mm_setr_epi8(0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4));
  const __m512i low = _mm512_set1_epi8(0x0f);
  return _mm512_add_epi8(_mm512_shuffle_epi8(table, _mm512_and_si512(v, low)),
                         _mm512_shuffle_epi8(table, _mm512_and_si512(_mm512_srli_epi16(v, 4), low)));
}
inline __m512i popcount_lanes(__m512i v) { return _mm512_sad_epu8(popcount_bytes(v), _mm512_setzero_si512()); }
inline void csa(__m512i& h, __m512i& l, __m512i a, __m512i b, __m512i c) {
  h = _mm512_ternarylogic_epi64(a, b, c, 0xE8);  // majority
  l = _mm512_ternarylogic_epi64(a, b, c, 0x96);  // a ^ b ^ c
}
// sum over k < nk of popcount(a[k] & b[k]), in the 8 lanes; nk a multiple of 8.
inline __m512i stream_sum(const Word* a, const Word* b, int nk) {
  const auto d = [&](int k) { return _mm512_and_si512(_mm512_loadu_si512(a + k), _mm512_loadu_si512(b + k)); };
  __m512i total = _mm512_setzero_si512(), ones = total, twos = total, fours = total, eights = total;
  int k = 0;
  for (; k + 128 <= nk; k += 128) {
    __m512i twos_a, twos_b, fours_a, fours_b, eights_a, eights_b, sixteens;
    csa(twos_a, ones, ones, d(k + 0), d(k + 8));
    csa(twos_b, ones, ones, d(k + 16), d(k + 24));
    csa(fours_a, twos, twos, twos_a, twos_b);
    csa(twos_a, ones, ones, d(k + 32), d(k + 40));
    csa(twos_b, ones, ones, d(k + 48), d(k + 56));
    csa(fours_b, twos, twos, twos_a, twos_b);
    csa(eights_a, fours, fours, fours_a, fours_b);
    csa(twos_a, ones, ones, d(k + 64), d(k + 72));
    csa(twos_b, ones, ones, d(k + 80), d(k + 88));
    csa(fours_a, twos, twos, twos_a, twos_b);
    csa(twos_a, ones, ones, d(k + 96), d(k + 104));
    csa(twos_b, ones, ones, d(k + 112), d(k + 120));
    csa(fours_b, twos, twos, twos_a, twos_b);
    csa(eights_b, fours, fours, fours_a, fours_b);
    csa(sixteens, eights, eights, eights_a, eights_b);
    total = _mm512_add_epi64(total, popcount_lanes(sixteens));
  }
  __m512i bytes = popcount_bytes(ones);
  bytes = _mm512_add_epi8(bytes, _mm512_slli_epi16(popcount_bytes(twos), 1));
  bytes = _mm512_add_epi8(bytes, _mm512_slli_epi16(popcount_bytes(fours), 2));
  bytes = _mm512_add_epi8(bytes, _mm512_slli_epi16(popcount_bytes(eights), 3));
  total = _mm512_add_epi64(_mm512_maskz_slli_epi64(0xFF, total, 4), _mm512_sad_epu8(bytes, _mm512_setzero_si512()));
  for (; k < nk; k += 8) total = _mm512_add_epi64(total, popcount_lanes(d(k)));
  return total;
}
// The sum of the 8 lanes (the maskz forms: see popcount_bytes).
inline std::uint64_t reduce_add(__m512i v) {
  const __m256i h =
      _mm256_add_epi64(_mm512_maskz_extracti64x4_epi64(0xF, v, 0), _mm512_maskz_extracti64x4_epi64(0xF, v, 1));
  const __m128i q = _mm_add_epi64(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
  return std::uint64_t(_mm_cvtsi128_si64(q)) + std::uint64_t(_mm_extract_epi64(q, 1));
}
}  // namespace avx512bw

// rows_block on AVX-512BW hosts; nk: a multiple of 8 (rows are padded to 8 words).
template <class P>
inline void rows_block_avx512bw(const Word* const* ra, const Word* const* rb, int nk, std::uint32_t* c, int stride) {
  static_assert(P::mr == 4 && P::nr == 4 && P::granule % 8 == 0 && P::chunk % 8 == 0, "4 x 4 of whole zmm words");
  for (int r = 0; r < 4; ++r)
    for (int s = 0; s < 4; ++s)
      c[r * stride + s] += static_cast<std::uint32_t>(avx512bw::reduce_add(avx512bw::stream_sum(ra[r], rb[s], nk)));
}
#endif

// The rows' sums where the rows are read in place (P::staged false), by
// micro-kernel MK (only those micro_kernel_compiled; GPUs: the portable one).
// Each exact against the plain bit loop (Gram_MicroKernelDispatchMatchesPortableAndPlainLoop,
// and tests/gram/micro_kernels/ per target): rows_block_portable,
// rows_block_avx2, rows_block_avx512bw (Harley-Seal), rows_block_avx512
// (VPOPCNTDQ: 8 loads per 48 ops, the 16 accumulators in zmm registers).
// (A variable, so device code asserts on it without calling a host function.)
template <MicroKernel MK>
inline constexpr bool kMicroKernelCompiled = micro_kernel_compiled(MK);

template <class P, int FixedK, MicroKernel MK = kAutoMicroKernel>
KOKKOS_FORCEINLINE_FUNCTION void rows_block(const Word* const* ra, const Word* const* rb, int nk, std::uint32_t* c,
                                            int stride) {
  static_assert(kMicroKernelCompiled<MK>, "a micro-kernel this build does not contain");
#if KMINI_GRAM_AVX512_POPCOUNT
  if constexpr (MK == MicroKernel::Avx512Vpopcntdq) return rows_block_avx512<P>(ra, rb, nk, c, stride);
#endif
#if KMINI_GRAM_AVX512BW
  if constexpr (MK == MicroKernel::Avx512bw) return rows_block_avx512bw<P>(ra, rb, nk, c, stride);
#endif
#if KMINI_GRAM_AVX2
  if constexpr (MK == MicroKernel::Avx2) return rows_block_avx2<P>(ra, rb, nk, c, stride);
#endif
  if constexpr (MK == MicroKernel::Portable) rows_block_portable<P, FixedK>(ra, rb, nk, c, stride, 1);
}

// Calls f(std::integral_constant<MicroKernel, k>) for the k given at run time
// (a compiled-in one; the others fall back to the portable one, which
// configure() never lets through).
template <class F>
decltype(auto) with_micro_kernel(MicroKernel k, F&& f) {
#if KMINI_GRAM_AVX512_POPCOUNT
  if (k == MicroKernel::Avx512Vpopcntdq) return f(std::integral_constant<MicroKernel, MicroKernel::Avx512Vpopcntdq>{});
#endif
#if KMINI_GRAM_AVX512BW
  if (k == MicroKernel::Avx512bw) return f(std::integral_constant<MicroKernel, MicroKernel::Avx512bw>{});
#endif
#if KMINI_GRAM_AVX2
  if (k == MicroKernel::Avx2) return f(std::integral_constant<MicroKernel, MicroKernel::Avx2>{});
#endif
  (void)k;
  return f(std::integral_constant<MicroKernel, MicroKernel::Portable>{});
}

}  // namespace kmini::gram
