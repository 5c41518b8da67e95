#pragma once
// The windows of C that the tile kernels compute, and the block-tile walk and
// stores of the CUDA block kernels (the blocked mma.sync kernel,
// gram_tensor_core_blocked.hpp, and the wgmma engine, gram_wgmma_engine.cu).
// Kokkos-free, host and device: the wgmma engine is compiled by plain nvcc
// for sm_90a, and the CPU tests emulate both kernels with these functions.
#include <cstdint>

#if defined(__CUDACC__)
#define KMINI_GRAM_HD __host__ __device__
#else
#define KMINI_GRAM_HD
#endif

namespace kmini::gram {

using Word = std::uint64_t;

// A window of C: rows [r0, r1) of A against rows [c0, c1) of B (of A), read
// from views whose row 0 is global row a_base (b_base), written to
// out((i - r0) * out_width + (j - out_col0)); triangular: tiles on or above
// the diagonal only, each mirrored inside the window. What every tile kernel
// takes (TileWindow, the block kernels' arguments).
struct WindowGeometry {
  std::int64_t r0 = 0, r1 = 0, c0 = 0, c1 = 0;
  bool triangular = false;
  std::int64_t a_base = 0, b_base = 0;
  std::int64_t out_col0 = 0, out_width = 0;
};

namespace tensor_core {

// The window and views one launch of a block kernel computes (the views'
// pointers and row strides in words; tile_cols block tiles across).
struct BlockedArgs : WindowGeometry {
  const Word* a = nullptr;
  const Word* b = nullptr;
  std::int32_t* out = nullptr;
  std::int64_t lda = 0, ldb = 0, words = 0;
  std::int64_t tile_cols = 0;
};

// Block tiles of `block` rows a window has: row-major, or on and above the diagonal.
KMINI_GRAM_HD inline std::int64_t block_tiles(const WindowGeometry& w, int block, std::int64_t& tile_cols) {
  const std::int64_t tile_rows = (w.r1 - w.r0 + block - 1) / block;
  tile_cols = (w.c1 - w.c0 + block - 1) / block;
  return tile_rows * tile_cols - (w.triangular ? tile_rows * (tile_rows - 1) / 2 : 0);
}

// Block tile (l, m) of league index t: row-major, or on and above the diagonal.
KMINI_GRAM_HD inline void block_tile(const BlockedArgs& p, std::int64_t t, std::int64_t& l, std::int64_t& m) {
  l = 0;
  if (p.triangular) {
    while (t >= p.tile_cols - l) {
      t -= p.tile_cols - l;
      ++l;
    }
    m = l + t;
  } else {
    l = t / p.tile_cols;
    m = t % p.tile_cols;
  }
}

// Block tile (l, m) of a window: its first rows in A's and B's views (row i
// of C is a's row i - a_base, column j b's row j - b_base) and their ends;
// where a 16-byte copy of words w, w + 1 of tile row `row` reads, and whether
// it reads at all (else it zero-fills: rows and words past the ends).
struct BlockRows {
  std::int64_t i0, j0, ia, a_end, jb, b_end;
  KMINI_GRAM_HD static BlockRows of(const BlockedArgs& p, std::int64_t l, std::int64_t m, int block) {
    const std::int64_t i0 = p.r0 + l * block, j0 = p.c0 + m * block;
    return {i0, j0, i0 - p.a_base, p.r1 - p.a_base, j0 - p.b_base, p.c1 - p.b_base};
  }
  KMINI_GRAM_HD bool a_reads(const BlockedArgs& p, int row, std::int64_t w) const {
    return w < p.words && ia + row < a_end;
  }
  KMINI_GRAM_HD bool b_reads(const BlockedArgs& p, int row, std::int64_t w) const {
    return w < p.words && jb + row < b_end;
  }
  KMINI_GRAM_HD const Word* a_source(const BlockedArgs& p, int row, std::int64_t w) const {
    return a_reads(p, row, w) ? p.a + (ia + row) * p.lda + w : p.a;
  }
  KMINI_GRAM_HD const Word* b_source(const BlockedArgs& p, int row, std::int64_t w) const {
    return b_reads(p, row, w) ? p.b + (jb + row) * p.ldb + w : p.b;
  }
};

// Element (i, j) of C (global indices) into out, and its mirror.
KMINI_GRAM_HD inline void store_element(const BlockedArgs& p, std::int64_t i, std::int64_t j, bool mirror,
                                        std::int32_t v) {
  if (i < p.r1 && j < p.c1) p.out[(i - p.r0) * p.out_width + (j - p.out_col0)] = v;
  if (mirror && j < p.r1 && i < p.c1) p.out[(j - p.r0) * p.out_width + (i - p.out_col0)] = v;
}

// The block kernels run where the views are 16-byte aligned with even row
// strides (cp.async copies 16 bytes); the packed views are (Tuning::granule).
inline bool blocked_fits(const void* a, std::int64_t lda, const void* b, std::int64_t ldb, std::int64_t words) {
  const auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
  return aligned(a) && aligned(b) && lda % 2 == 0 && ldb % 2 == 0 && words % 2 == 0;
}

}  // namespace tensor_core

}  // namespace kmini::gram
