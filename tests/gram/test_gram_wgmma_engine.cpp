// The wgmma engine (gram_wgmma_engine.cu, gram.tensor_core_tile:
// warpgroup64x128) checked on the CPU: its kernel run block by block in an
// emulation, each stage's cp.async copies as the threads issue them (zeros
// past the rows and words) into an image of shared memory, each warpgroup's
// m64n128k256 reading its operands through the descriptors the kernel builds
// (wgmma_emulation.hpp: the PTX ISA's canonical layout), each thread's
// accumulators by the fragment figure and the kernel's stores, against the
// popcount sums at odd shapes, triangles and ring windows, with fewer blocks
// than tiles as the persistent grid has.
#include "gram/block_window_check.hpp"
#include "gram/impl/gram_wgmma_layout.hpp"
#include "gram/wgmma_emulation.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <set>
#include <vector>

namespace {

namespace wg = kmini::gram::wgmma;
namespace tc = kmini::gram::tensor_core;
namespace bwc = kmini::gram::block_window_check;
using S = wg::EngineShape;
using kmini::gram::Word;

// The kernel on `grid` blocks, each taking tiles b, b + grid, ...; `descriptor`
// lets a test break the operands' descriptors. The stages follow the
// kernel's schedule (gram_wgmma_layout.hpp): the prologue's, then at step kt
// stage_copied_at(kt), each into its buffer, before step kt's wgmma read
// theirs; a copy must not land in a buffer that wgmma group kt (or kt - 1,
// still in flight) reads.
template <class Descriptor>
void emulate_engine(const tc::BlockedArgs& p, std::int64_t tiles, std::int64_t grid, Descriptor descriptor) {
  const std::uint32_t base = 0x400;  // where the block's dynamic shared memory starts
  std::vector<unsigned char> smem(base + S::smem_bytes, 0);
  const auto buffer = [&](std::int64_t k) { return base + std::uint32_t(wg::stage_buffer(k)) * S::stage_bytes; };
  const std::int64_t stages_k = (p.words + S::stage_words - 1) / S::stage_words;
  for (std::int64_t blk = 0; blk < grid; ++blk)
    for (std::int64_t tile = blk; tile < tiles; tile += grid) {
      std::int64_t l, m;
      tc::block_tile(p, tile, l, m);
      const tc::BlockRows rows = tc::BlockRows::of(p, l, m, S::block);
      std::vector<std::int64_t> held(S::stages, -1);  // the stage each buffer holds
      const auto copy_stage = [&](std::int64_t k) {
        std::memset(smem.data() + buffer(k), 0xA5, S::stage_bytes);  // an earlier stage's bytes
        bwc::StageCopies copies{p, rows, smem.data() + buffer(k), S::panel_bytes};
        for (int t = 0; t < S::threads; ++t)
          for (int q = 0; q < S::copies; ++q)
            copies.copy(wg::copy_row(t, q), wg::stage_word(k) + wg::copy_word(t, q), wg::copy_offset(t, q));
        EXPECT_TRUE(copies.each_once()) << "every 16 bytes of stage " << k << " copied once";
        held[wg::stage_buffer(k)] = k;
      };
      std::vector<std::vector<std::int64_t>> d(S::warpgroups, std::vector<std::int64_t>(std::size_t(wg::kM) * S::n, 0));
      for (std::int64_t s = 0; s < wg::kPrologueStages && s < stages_k; ++s) copy_stage(s);
      for (std::int64_t kt = 0; kt < stages_k; ++kt) {
        const std::int64_t next = wg::stage_copied_at(kt);
        if (next < stages_k) {
          EXPECT_NE(wg::stage_buffer(next), wg::stage_buffer(kt)) << "stage " << next << " over the one read now";
          if (kt > 0) {
            EXPECT_NE(wg::stage_buffer(next), wg::stage_buffer(kt - 1)) << "over the group in flight";
          }
          copy_stage(next);
        }
        ASSERT_EQ(held[wg::stage_buffer(kt)], kt) << "stage " << kt << " in its buffer when read";
        for (int g = 0; g < S::warpgroups; ++g)
          for (int s = 0; s < S::stage_steps; ++s)
            kmini::gram::wgmma_emulation::emulate_wgmma(smem, descriptor(wg::a_operand(buffer(kt), g, s)),
                                                        descriptor(wg::b_operand(buffer(kt), s)), S::n, d[g]);
      }
      // Register j of thread t of warpgroup g holds D_g(acc_row, acc_col).
      const bool mirror = p.triangular && m > l;
      for (int g = 0; g < S::warpgroups; ++g)
        for (int t = 0; t < wg::kWarpgroup; ++t)
          for (int j = 0; j < S::acc; ++j) {
            const int r = wg::acc_row(t, j), c = wg::acc_col(t, j);
            tc::store_element(p, rows.i0 + g * wg::kM + r, rows.j0 + c, mirror,
                              static_cast<std::int32_t>(d[g][std::size_t(r) * S::n + c]));
          }
    }
}

void check(const bwc::Window& w, std::int64_t grid) {
  bwc::check_window("warpgroup64x128", S::block, w, [&](const tc::BlockedArgs& p, std::int64_t tiles) {
    emulate_engine(p, tiles, std::min(grid, tiles), [](std::uint32_t at) { return wg::descriptor(at); });
  });
}

}  // namespace

TEST(GramWgmmaEngine, CopiesFillEachStageOnceInWholeSectors) {
  std::vector<int> hits(S::panel_bytes / 16, 0);
  for (int t = 0; t < S::threads; ++t)
    for (int q = 0; q < S::copies; ++q) {
      ++hits[wg::copy_offset(t, q) / 16];
      // The k step's tile, the row and the 16-byte half of its k bits: the layout's place.
      EXPECT_EQ(wg::copy_offset(t, q), wg::copy_step(t, q) * wg::tile_bytes(S::block) +
                                           wg::tile_offset(wg::copy_row(t, q), wg::copy_chunk(t, q)));
    }
  for (std::size_t i = 0; i < hits.size(); ++i) ASSERT_EQ(hits[i], 1) << "chunk " << i;
  // A warp's 32 copies: 16 rows, both halves of one k step each (each row's
  // 32 bytes of global memory, one sector, read whole), into 512 contiguous
  // bytes of shared memory (4 wavefronts, the fewest 512 bytes take).
  for (int q = 0; q < S::copies; ++q)
    for (int warp = 0; warp < S::threads / 32; ++warp) {
      std::set<std::uint32_t> at;
      for (int lane = 0; lane < 32; lane += 2) {
        const int t = 32 * warp + lane;
        EXPECT_EQ(wg::copy_row(t, q), wg::copy_row(t + 1, q));
        EXPECT_EQ(wg::copy_step(t, q), wg::copy_step(t + 1, q));
        EXPECT_EQ(wg::copy_word(t + 1, q), wg::copy_word(t, q) + 2);
      }
      for (int lane = 0; lane < 32; ++lane) at.insert(wg::copy_offset(32 * warp + lane, q));
      EXPECT_EQ(*at.rbegin() - *at.begin(), 31u * 16) << "warp " << warp << " copy " << q;
      EXPECT_EQ(*at.begin() % 512, 0u);
    }
}

TEST(GramWgmmaEngine, OperandsAreAlignedTilesOfTheStage) {
  for (int s = 0; s < S::stage_steps; ++s) {
    const std::uint32_t stage = 3 * S::stage_bytes;
    EXPECT_EQ(wg::b_operand(stage, s) % 16, 0u);
    EXPECT_EQ(wg::b_operand(stage, s), stage + S::panel_bytes + s * wg::tile_bytes(S::block));
    for (int g = 0; g < S::warpgroups; ++g) {
      EXPECT_EQ(wg::a_operand(stage, g, s) % 16, 0u);
      // Warpgroup g's 64 rows start at row 64 g of A's tile for k step s.
      EXPECT_EQ(wg::a_operand(stage, g, s), stage + s * wg::tile_bytes(S::block) + wg::tile_offset(64 * g, 0));
    }
  }
  // Two blocks' buffers (the registers allow two an SM) fit an H100's or H200's 228 KiB of
  // shared memory an SM, 1 KiB of each block's reserved.
  EXPECT_LE(2 * (S::smem_bytes + 1024), 228u * 1024);
  EXPECT_EQ(S::acc * S::threads / 128, S::block * S::block / 128);  // each of C's elements in one register
}

// Rectangles, triangles (mirrored above the diagonal blocks), partial
// blocks, windows at row offsets inside wider outputs (the ring's), k not a
// multiple of a stage (8 words) or of a k step (4 words); one block per tile
// and fewer blocks than tiles.
TEST(GramWgmmaEngine, EmulationMatchesPopcount) {
  for (const std::int64_t words : {2, 6, 10, 16, 38}) check({200, 150, words, 0, 200, 0, 150, false, 0, 0, 0, 150}, 64);
  check({300, 280, 18, 0, 300, 0, 280, false, 0, 0, 0, 280}, 2);
  // A triangular slice of 300 rows from row 40 of a 340-row matrix, its window from row 40 on.
  check({340, 340, 18, 40, 340, 40, 340, true, 0, 0, 40, 300}, 4);
  check({340, 340, 6, 40, 300, 40, 340, true, 0, 0, 40, 300}, 64);
  // A ring window: rows 130..260 held from local row 0 (a_base 130), columns
  // 260..390 of B held from b_base 260, inside an output from column 100.
  check({130, 130, 38, 130, 260, 260, 390, false, 130, 260, 100, 330}, 1);
}

// The check can fail: operands read with LBO and SBO swapped, or from one
// core-matrix row further, do not give the popcount sums.
TEST(GramWgmmaEngine, EmulationSeesWrongDescriptors) {
  for (const auto broken : {+[](std::uint32_t at) { return wg::descriptor(at, wg::kSbo, wg::kLbo); },
                            +[](std::uint32_t at) { return wg::descriptor(at + 16); }}) {
    const std::int64_t words = 6, rows = 70;
    const auto a = bwc::random_rows(rows, words, words, 5);
    std::vector<std::int32_t> out(rows * rows, -7);
    tc::BlockedArgs p;
    static_cast<kmini::gram::WindowGeometry&>(p) = {0, rows, 0, rows, false, 0, 0, 0, rows};
    p.a = p.b = a.data();
    p.out = out.data();
    p.lda = p.ldb = p.words = words;
    emulate_engine(p, tc::block_tiles(p, S::block, p.tile_cols), 1, broken);
    std::int64_t bad = 0;
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < rows; ++j)
        bad += out[i * rows + j] != bwc::popcount_and(&a[i * words], &a[j * words], words);
    EXPECT_GT(bad, 0);
  }
}
