#pragma once
// The 1-bit tensor-core engine of the Gram tiles (gram.engine: tensor_core):
// mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc computes, per warp,
// D(16 x 8) += sum over 256 k of A(16 x 256 bits) AND B(256 x 8 bits), the
// popcount of the ANDed rows, on sm_80 and newer. It replaces the popcount
// micro-tiles inside the same tiled team kernel (gram_kernels.hpp): the same
// staged, word-major panels in team scratch, the same C tile.
//
// The lane-to-fragment mapping is the PTX ISA's, section "Matrix Fragments for
// mma.m16n8k256" (the .b1 tables: "Matrix fragment for matrix A", "... B",
// "... C/D"): groupID = laneid >> 2, threadID_in_group = laneid % 4, and
//   A (16 x 256, .b1, four .b32 registers a0..a3 of 32 elements each):
//     row = groupID for a0, a2; groupID + 8 for a1, a3
//     col = threadID_in_group * 32 + i for a0, a1; 128 + threadID_in_group * 32 + i for a2, a3
//   B (256 x 8, .b1, two .b32 registers b0, b1):
//     row = threadID_in_group * 32 + i for b0; 128 + threadID_in_group * 32 + i for b1
//     col = groupID
//   C, D (16 x 8, .s32, four registers c0..c3):
//     row = groupID for c0, c1; groupID + 8 for c2, c3
//     col = threadID_in_group * 2 + (i & 1) for ci
// The functions below are host-callable so that the CPU tests can run a warp
// emulation of them (tests/gram/test_gram_tensor_core.cpp) against the popcount
// reference at odd shapes.
#include "gram/gram_params.hpp"
#include "gram/impl/gram_micro_kernels.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace kmini::gram::tensor_core {

constexpr int kM = 16, kN = 8, kK = 256;       // the mma shape, k in bits
constexpr int kKWords = kK / 64;               // 64-bit words of k per mma
constexpr int kRowBlocks = 4, kColBlocks = 8;  // a 64 x 64 tile in 16 x 8 mma tiles
constexpr int kWarps = 8;                      // 256 threads: each warp owns 1 x 4 mma tiles
constexpr int kLanes = 32;                     // mma.sync is issued by a CUDA warp, 32 lanes on every sm
constexpr int kTilesPerWarp = kRowBlocks * kColBlocks / kWarps;

// Which 32-bit group (of the eight in one 256-bit k step) and which row/column
// a lane's register holds, per the tables above.
KOKKOS_INLINE_FUNCTION constexpr int a_row(int lane, int reg) { return (lane >> 2) + (reg & 1) * 8; }
KOKKOS_INLINE_FUNCTION constexpr int a_k32(int lane, int reg) { return (lane & 3) + (reg >> 1) * 4; }
KOKKOS_INLINE_FUNCTION constexpr int b_col(int lane, int /*reg*/) { return lane >> 2; }
KOKKOS_INLINE_FUNCTION constexpr int b_k32(int lane, int reg) { return (lane & 3) + reg * 4; }
KOKKOS_INLINE_FUNCTION constexpr int c_row(int lane, int reg) { return (lane >> 2) + (reg >> 1) * 8; }
KOKKOS_INLINE_FUNCTION constexpr int c_col(int lane, int reg) { return (lane & 3) * 2 + (reg & 1); }

// 32-bit group g of the k step at panel word kw: the low (g even) or high half
// of word kw + g / 2 of panel row `row`; 0 past the chunk's nk words (the
// panel holds the previous chunk's words there). A and B use the same order
// of bits inside a group, which is all the AND+popcount sum needs.
template <class P>
KOKKOS_INLINE_FUNCTION std::uint32_t panel_group(const Word* panel, int row, int kw, int g, int nk) {
  const int w = kw + g / 2;
  if (w >= nk) return 0u;
  return static_cast<std::uint32_t>(panel[panel_index<P>(row, w)] >> (32 * (g & 1)));
}

// The lane's A fragment: rows m0 .. m0 + 15 of panel pa, k step at word kw.
template <class P>
KOKKOS_INLINE_FUNCTION void load_a(const Word* pa, int m0, int kw, int nk, int lane, std::uint32_t a[4]) {
  KMINI_GRAM_UNROLL
  for (int r = 0; r < 4; ++r) a[r] = panel_group<P>(pa, m0 + a_row(lane, r), kw, a_k32(lane, r), nk);
}
// The lane's B fragment: columns n0 .. n0 + 7 of C are rows n0.. of panel pb.
template <class P>
KOKKOS_INLINE_FUNCTION void load_b(const Word* pb, int n0, int kw, int nk, int lane, std::uint32_t b[2]) {
  KMINI_GRAM_UNROLL
  for (int r = 0; r < 2; ++r) b[r] = panel_group<P>(pb, n0 + b_col(lane, r), kw, b_k32(lane, r), nk);
}
// Adds the lane's four results of the mma tile at (m0, n0) to the C tile.
template <class P>
KOKKOS_INLINE_FUNCTION void store_c(std::uint32_t* ct, int m0, int n0, int lane, const std::int32_t c[4]) {
  KMINI_GRAM_UNROLL
  for (int r = 0; r < 4; ++r)
    ct[(m0 + c_row(lane, r)) * ct_stride<P>() + n0 + c_col(lane, r)] += static_cast<std::uint32_t>(c[r]);
}
// The mma tiles of warp w: row block w % 4, column blocks (w / 4) * 4 + t.
KOKKOS_INLINE_FUNCTION constexpr int warp_m0(int warp) { return (warp % kRowBlocks) * kM; }
KOKKOS_INLINE_FUNCTION constexpr int warp_n0(int warp, int t) { return ((warp / kRowBlocks) * kTilesPerWarp + t) * kN; }
// Adds the warp's accumulators (its kTilesPerWarp mma tiles) to the C tile.
template <class P>
KOKKOS_INLINE_FUNCTION void store_warp(std::uint32_t* ct, int warp, int lane,
                                       const std::int32_t acc[kTilesPerWarp][4]) {
  KMINI_GRAM_UNROLL
  for (int t = 0; t < kTilesPerWarp; ++t) store_c<P>(ct, warp_m0(warp), warp_n0(warp, t), lane, acc[t]);
}

// Whether this build can issue the instruction: CUDA for sm_80 or newer.
#if defined(KOKKOS_ENABLE_CUDA) &&                                                                       \
    (defined(KOKKOS_ARCH_AMPERE) || defined(KOKKOS_ARCH_ADA89) || defined(KOKKOS_ARCH_HOPPER) ||         \
     defined(KOKKOS_ARCH_BLACKWELL) || defined(KOKKOS_ARCH_AMPERE80) || defined(KOKKOS_ARCH_AMPERE86) || \
     defined(KOKKOS_ARCH_HOPPER90))
constexpr bool kAvailable = true;
#else
constexpr bool kAvailable = false;
#endif
}  // namespace kmini::gram::tensor_core

namespace kmini::gram {
// What gram.engine: auto means: the tensor-core engine where this build has it
// (exact against popcount and faster on every GPU measured, docs/performance.md).
inline constexpr Engine kAutoEngine = tensor_core::kAvailable ? Engine::TensorCore : Engine::Popcount;
}  // namespace kmini::gram

namespace kmini::gram::tensor_core {

// D += A AND-popc B for one warp (every lane calls it, converged).
KOKKOS_INLINE_FUNCTION void mma_and_popc(const std::uint32_t a[4], const std::uint32_t b[2], std::int32_t c[4]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
  (void)a;
  (void)b;
  (void)c;
  Kokkos::abort("kmini::gram: the tensor-core engine needs a CUDA device of compute capability 8.0 or newer");
#endif
}

// The tile's sums with the tensor cores: the caller stages each chunk of nk
// words of both panels (as for the popcount micro-tiles) and calls this for
// every chunk with the warp's accumulators, kept in registers over the chunks.
template <class P>
KOKKOS_INLINE_FUNCTION void chunk_mma(const Word* pa, const Word* pb, int nk, int warp, int lane,
                                      std::int32_t acc[kTilesPerWarp][4]) {
  const int m0 = warp_m0(warp);
  for (int kw = 0; kw < nk; kw += kKWords) {
    std::uint32_t a[4];
    load_a<P>(pa, m0, kw, nk, lane, a);
    KMINI_GRAM_UNROLL
    for (int t = 0; t < kTilesPerWarp; ++t) {
      std::uint32_t b[2];
      load_b<P>(pb, warp_n0(warp, t), kw, nk, lane, b);
      mma_and_popc(a, b, acc[t]);
    }
  }
}

}  // namespace kmini::gram::tensor_core
