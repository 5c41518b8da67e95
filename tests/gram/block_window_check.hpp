#pragma once
// The CPU check of a block kernel of the tensor-core engine (the blocked
// mma.sync kernel, test_gram_tensor_core.cpp; the wgmma engine,
// test_gram_wgmma_engine.cpp), run block by block in an emulation: a window
// of random packed rows, every element it owns against the popcount sums of
// the rows, every other element of the output untouched.
#include "core/random.hpp"
#include "gram/impl/gram_block_tiles.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace kmini::gram::block_window_check {

using kmini::gram::Word;
namespace tc = kmini::gram::tensor_core;

inline std::int64_t popcount_and(const Word* x, const Word* y, std::int64_t words) {
  std::int64_t n = 0;
  for (std::int64_t k = 0; k < words; ++k)
    for (Word v = x[k] & y[k]; v != 0; v &= v - 1) ++n;
  return n;
}

// Rows of `words` 64-bit words (an even count, as the packed views have), the
// first `used` of them random, density about 1/2 or 1/4.
inline std::vector<Word> random_rows(std::int64_t rows, std::int64_t words, std::int64_t used, std::uint64_t seed) {
  std::vector<Word> v(static_cast<std::size_t>(rows * words), 0);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t k = 0; k < used; ++k) {
      Word x = kmini::random::hash(seed, r * words + k);
      if (r % 3 == 0) x &= kmini::random::hash(seed + 1, r * words + k);
      v[r * words + k] = x;
    }
  return v;
}

// One stage's copies as a block kernel's threads issue them (cp.async of 16
// bytes from BlockRows' sources, zeros past the rows and words) into the
// stage's image at `stage`: A's panel, then B's `panel_bytes` later; each 16
// bytes counted in `filled`.
struct StageCopies {
  const tc::BlockedArgs& p;
  const tc::BlockRows& rows;
  unsigned char* stage;
  std::size_t panel_bytes;
  std::vector<int> filled = std::vector<int>(2 * panel_bytes / 16, 0);

  // Row `row` of the block's A and B tiles, words w, w + 1, to `offset` in each panel.
  void copy(int row, std::int64_t w, std::size_t offset) {
    unsigned char* da = stage + offset;
    unsigned char* db = da + panel_bytes;
    if (rows.a_reads(p, row, w)) std::memcpy(da, rows.a_source(p, row, w), 16);
    else std::memset(da, 0, 16);
    if (rows.b_reads(p, row, w)) std::memcpy(db, rows.b_source(p, row, w), 16);
    else std::memset(db, 0, 16);
    ++filled[offset / 16];
    ++filled[(panel_bytes + offset) / 16];
  }
  // Every 16 bytes of the stage copied once.
  bool each_once() const {
    for (int f : filled)
      if (f != 1) return false;
    return true;
  }
};

// The geometry of one window: rows [r0, r1) of A (a_rows rows held from
// global row a_base) against rows [c0, c1) of B (b_rows from b_base; A itself
// when triangular), into an output of out_width columns from out_col0.
struct Window {
  std::int64_t a_rows, b_rows, words, r0, r1, c0, c1;
  bool triangular;
  std::int64_t a_base, b_base, out_col0, out_width;
};

// emulate(p, blocks) runs the emulated kernel of `block` x `block` tiles on window w.
template <class Emulate>
void check_window(const std::string& kernel, int block, const Window& w, Emulate emulate) {
  const std::vector<Word> a = random_rows(w.a_rows, w.words, w.words - 1, 7 + w.words);
  const std::vector<Word> b = w.triangular ? a : random_rows(w.b_rows, w.words, w.words, 70 + w.words);
  std::vector<std::int32_t> out(static_cast<std::size_t>((w.r1 - w.r0) * w.out_width), -7);
  tc::BlockedArgs p;
  static_cast<WindowGeometry&>(p) = {w.r0, w.r1, w.c0, w.c1, w.triangular, w.a_base, w.b_base, w.out_col0, w.out_width};
  p.a = a.data();
  p.b = b.data();
  p.out = out.data();
  p.lda = p.ldb = p.words = w.words;
  emulate(p, tc::block_tiles(p, block, p.tile_cols));
  std::int64_t bad = 0, stray = 0;
  for (std::int64_t i = w.r0; i < w.r1; ++i)
    for (std::int64_t j = w.out_col0; j < w.out_col0 + w.out_width; ++j) {
      const std::int32_t got = out[(i - w.r0) * w.out_width + (j - w.out_col0)];
      if (j < w.c0 || j >= w.c1) {
        stray += got != -7;
        continue;
      }
      bad += got != popcount_and(&a[(i - w.a_base) * w.words], &b[(j - w.b_base) * w.words], w.words);
    }
  EXPECT_EQ(bad, 0) << kernel << ", " << w.words << " words, window " << w.r0 << ".." << w.r1 << " x " << w.c0 << ".."
                    << w.c1 << (w.triangular ? " triangular" : "");
  EXPECT_EQ(stray, 0) << kernel << ": elements outside the window written";
}

}  // namespace kmini::gram::block_window_check
