// The tensor-core engine's lane-to-fragment mapping (gram_tensor_core.hpp),
// checked on the CPU: a warp emulation of mma.m16n8k256.row.col.s32.b1.b1.s32
// .and.popc assembles A (16 x 256 bits) and B (256 x 8 bits) from the 32 lanes'
// registers as the PTX ISA's fragment tables for m16n8k256 .b1 lay them out
// ("Matrix Fragments for mma.m16n8k256"), multiplies them with AND+popcount,
// and hands each lane its four results by the C/D table. The engine's loads
// (from the word-major panels in team scratch) and stores (into the C tile)
// must then give the plain popcount sums, at odd chunk lengths too.
#include "core/random.hpp"
#include "gram/block_window_check.hpp"
#include "gram/impl/gram_tensor_core.hpp"
#include "gram/impl/gram_tensor_core_blocked.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace {

using kmini::gram::Word;
namespace tc = kmini::gram::tensor_core;
namespace bwc = kmini::gram::block_window_check;

// The GPU's panel geometry (gram_params.hpp's CUDA Tuning), whatever backend
// this test binary was built for.
struct GpuTile {
  static constexpr int tile = 64, chunk = 16, pad = 1, ct_pad = 1;
  static constexpr bool word_major = true;
};

// One warp's mma, as the PTX ISA's tables describe it. Register r of lane l
// holds 32 one-bit elements, element i in bit i.
void emulate_mma(const std::uint32_t a[32][4], const std::uint32_t b[32][2], std::int32_t c[32][4]) {
  bool A[16][256] = {}, B[256][8] = {};
  for (int lane = 0; lane < 32; ++lane) {
    const int group = lane >> 2, tig = lane % 4;
    for (int i = 0; i < 32; ++i) {
      // A: a0 (row groupID, col tig*32+i), a1 (row groupID+8, same cols),
      //    a2 (row groupID, col 128+tig*32+i), a3 (row groupID+8, col 128+tig*32+i)
      A[group][tig * 32 + i] = (a[lane][0] >> i) & 1u;
      A[group + 8][tig * 32 + i] = (a[lane][1] >> i) & 1u;
      A[group][128 + tig * 32 + i] = (a[lane][2] >> i) & 1u;
      A[group + 8][128 + tig * 32 + i] = (a[lane][3] >> i) & 1u;
      // B: b0 (row tig*32+i, col groupID), b1 (row 128+tig*32+i, col groupID)
      B[tig * 32 + i][group] = (b[lane][0] >> i) & 1u;
      B[128 + tig * 32 + i][group] = (b[lane][1] >> i) & 1u;
    }
  }
  for (int lane = 0; lane < 32; ++lane) {
    const int group = lane >> 2, tig = lane % 4;
    // C/D: c0 (row groupID, col tig*2), c1 (row groupID, col tig*2+1),
    //      c2 (row groupID+8, col tig*2), c3 (row groupID+8, col tig*2+1)
    const int rows[4] = {group, group, group + 8, group + 8};
    const int cols[4] = {tig * 2, tig * 2 + 1, tig * 2, tig * 2 + 1};
    for (int r = 0; r < 4; ++r)
      for (int k = 0; k < 256; ++k) c[lane][r] += A[rows[r]][k] && B[k][cols[r]] ? 1 : 0;
  }
}

// The 8 warps of a team over one chunk of nk words, as chunk_mma runs them,
// with the emulated mma in place of the instruction.
void emulate_chunk(const std::vector<Word>& pa, const std::vector<Word>& pb, int nk,
                   std::int32_t acc[tc::kWarps][32][tc::kTilesPerWarp][4]) {
  for (int warp = 0; warp < tc::kWarps; ++warp)
    for (int kw = 0; kw < nk; kw += tc::kKWords)
      for (int t = 0; t < tc::kTilesPerWarp; ++t) {
        std::uint32_t a[32][4], b[32][2];
        std::int32_t c[32][4];
        for (int lane = 0; lane < 32; ++lane) {
          tc::load_a<GpuTile>(pa.data(), tc::warp_m0(warp), kw, nk, lane, a[lane]);
          tc::load_b<GpuTile>(pb.data(), tc::warp_n0(warp, t), kw, nk, lane, b[lane]);
          for (int r = 0; r < 4; ++r) c[lane][r] = acc[warp][lane][t][r];
        }
        emulate_mma(a, b, c);
        for (int lane = 0; lane < 32; ++lane)
          for (int r = 0; r < 4; ++r) acc[warp][lane][t][r] = c[lane][r];
      }
}

// Rows of 64-bit words; the panels hold `chunk` words of each, word-major.
std::vector<Word> panel_of(const std::vector<std::vector<Word>>& rows, int k0, int nk, std::uint64_t stale_seed) {
  std::vector<Word> p(std::size_t(GpuTile::chunk) * (GpuTile::tile + GpuTile::pad));
  for (std::size_t e = 0; e < p.size(); ++e) p[e] = kmini::random::hash(stale_seed, e);  // the last chunk's words
  for (int row = 0; row < GpuTile::tile; ++row)
    for (int k = 0; k < nk; ++k) p[kmini::gram::panel_index<GpuTile>(row, k)] = rows[row][k0 + k];
  return p;
}

}  // namespace

TEST(GramTensorCore, FragmentTablesCoverEachElementOnce) {
  int a_seen[16][8] = {}, b_seen[8][8] = {}, c_seen[16][8] = {};
  for (int lane = 0; lane < 32; ++lane) {
    for (int r = 0; r < 4; ++r) ++a_seen[tc::a_row(lane, r)][tc::a_k32(lane, r)];
    for (int r = 0; r < 2; ++r) ++b_seen[tc::b_col(lane, r)][tc::b_k32(lane, r)];
    for (int r = 0; r < 4; ++r) ++c_seen[tc::c_row(lane, r)][tc::c_col(lane, r)];
  }
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 8; ++j) {
      EXPECT_EQ(a_seen[i][j], 1) << "A row " << i << ", 32-bit group " << j;
      EXPECT_EQ(c_seen[i][j], 1) << "C (" << i << ", " << j << ")";
      if (i < 8) {
        EXPECT_EQ(b_seen[i][j], 1) << "B column " << i << ", 32-bit group " << j;
      }
    }
}

// A 64 x 64 tile of C over chunks of 16 words whose last one is short (nk odd,
// not a multiple of the mma's 4 words): the panels past nk hold stale words
// that must not count.
TEST(GramTensorCore, WarpEmulationMatchesPopcountAtOddChunks) {
  for (int words : {1, 3, 4, 13, 16, 21, 37}) {
    std::vector<std::vector<Word>> ra(64, std::vector<Word>(words)), rb(64, std::vector<Word>(words));
    for (int r = 0; r < 64; ++r)
      for (int k = 0; k < words; ++k) {
        ra[r][k] = kmini::random::hash(11 + words, r * 64 + k) & kmini::random::hash(5, r * 64 + k);  // density 1/4
        rb[r][k] = kmini::random::hash(29 + words, r * 64 + k);
      }
    static std::int32_t acc[tc::kWarps][32][tc::kTilesPerWarp][4];
    for (auto& w : acc)
      for (auto& l : w)
        for (auto& t : l)
          for (auto& x : t) x = 0;
    for (int k0 = 0; k0 < words; k0 += GpuTile::chunk) {
      const int nk = words - k0 < GpuTile::chunk ? words - k0 : GpuTile::chunk;
      emulate_chunk(panel_of(ra, k0, nk, 100 + k0), panel_of(rb, k0, nk, 200 + k0), nk, acc);
    }
    constexpr int stride = GpuTile::tile + GpuTile::ct_pad;
    std::vector<std::uint32_t> ct(64 * stride, 7u), expected(64 * stride, 7u);
    for (int warp = 0; warp < tc::kWarps; ++warp)
      for (int lane = 0; lane < 32; ++lane)
        for (int t = 0; t < tc::kTilesPerWarp; ++t)
          tc::store_c<GpuTile>(ct.data(), tc::warp_m0(warp), tc::warp_n0(warp, t), lane, acc[warp][lane][t]);
    for (int i = 0; i < 64; ++i)
      for (int j = 0; j < 64; ++j)
        for (int k = 0; k < words; ++k)
          for (Word x = ra[i][k] & rb[j][k]; x != 0; x &= x - 1) ++expected[i * stride + j];
    EXPECT_EQ(ct, expected) << words << " words";
  }
}

// ---------------------------------------------------------------------------
// The blocked kernel (gram_tensor_core_blocked.hpp), run block by block on the
// CPU: each stage's copies as the threads issue them (zero-filled past the
// rows and words), the panels in a byte array with the kernel's swizzle, the
// warps' ldmatrix .x4 by the PTX ISA's rule (matrix q from the 8 row addresses
// of lanes 8q..8q+7; lane l gets bytes 4 (l % 4) .. + 3 of row l / 4), the
// emulated mma, and the kernel's stores.

namespace {

// ldmatrix.m8n8.x4.b16: register q of lane l from the row address lane
// 8q + l / 4 gave, its 32-bit word l % 4.
void emulate_ldmatrix_x4(const unsigned char* smem, const int addr[32], std::uint32_t reg[32][4]) {
  for (int lane = 0; lane < 32; ++lane)
    for (int q = 0; q < 4; ++q) std::memcpy(&reg[lane][q], smem + addr[8 * q + lane / 4] + 4 * (lane % 4), 4);
}

template <class S>
void emulate_blocked(const tc::BlockedArgs& p, std::int64_t blocks) {
  std::vector<unsigned char> smem(S::stage_bytes);
  for (std::int64_t blk = 0; blk < blocks; ++blk) {
    std::int64_t l, m;
    tc::block_tile(p, blk, l, m);
    const tc::BlockRows rows = tc::BlockRows::of(p, l, m, S::block);
    const std::int64_t i0 = rows.i0, j0 = rows.j0;
    static std::int32_t acc[S::warps][32][S::mt][S::nt][4];
    std::memset(acc, 0, sizeof(acc));
    for (std::int64_t k0 = 0; k0 < p.words; k0 += S::stage_words) {
      std::fill(smem.begin(), smem.end(), 0xA5);  // the last stage's bytes
      bwc::StageCopies copies{p, rows, smem.data(), S::panel_bytes};
      for (int t = 0; t < S::threads; ++t)
        for (int q = 0; q < S::copies; ++q) {
          const int row = tc::copy_row<S>(t, q), chunk = tc::copy_chunk<S>(t, q);
          copies.copy(row, k0 + 2 * chunk, tc::smem_offset(row, chunk));
        }
      ASSERT_TRUE(copies.each_once()) << "every 16 bytes of a stage copied once";
      for (int warp = 0; warp < S::warps; ++warp)
        for (int s = 0; s < S::steps; ++s) {
          std::uint32_t a[S::mt][32][4], b[S::nt][32][2];
          const int wr = tc::warp_row0<S>(warp), wc = tc::warp_col0<S>(warp);
          for (int i = 0; i < S::mt; ++i) {
            int addr[32];
            for (int lane = 0; lane < 32; ++lane)
              addr[lane] = tc::smem_offset(tc::ldm_a_row(lane, wr + i * tc::kM), tc::ldm_a_chunk(lane, s));
            emulate_ldmatrix_x4(smem.data(), addr, a[i]);
          }
          for (int j = 0; j < S::nt; j += 2) {
            int addr[32];
            std::uint32_t reg[32][4];
            for (int lane = 0; lane < 32; ++lane)
              addr[lane] =
                  S::panel_bytes + tc::smem_offset(tc::ldm_b_row(lane, wc + j * tc::kN), tc::ldm_b_chunk(lane, s));
            emulate_ldmatrix_x4(smem.data(), addr, reg);
            for (int lane = 0; lane < 32; ++lane) {
              b[j][lane][0] = reg[lane][0];
              b[j][lane][1] = reg[lane][1];
              b[j + 1][lane][0] = reg[lane][2];
              b[j + 1][lane][1] = reg[lane][3];
            }
          }
          for (int i = 0; i < S::mt; ++i)
            for (int j = 0; j < S::nt; ++j) {
              std::int32_t c[32][4];
              for (int lane = 0; lane < 32; ++lane)
                for (int r = 0; r < 4; ++r) c[lane][r] = acc[warp][lane][i][j][r];
              emulate_mma(a[i], b[j], c);
              for (int lane = 0; lane < 32; ++lane)
                for (int r = 0; r < 4; ++r) acc[warp][lane][i][j][r] = c[lane][r];
            }
        }
    }
    const bool mirror = p.triangular && m > l;
    for (int warp = 0; warp < S::warps; ++warp)
      for (int lane = 0; lane < 32; ++lane)
        for (int i = 0; i < S::mt; ++i)
          for (int j = 0; j < S::nt; ++j)
            for (int r = 0; r < 4; ++r)
              tc::store_element(p, i0 + tc::warp_row0<S>(warp) + i * tc::kM + tc::c_row(lane, r),
                                j0 + tc::warp_col0<S>(warp) + j * tc::kN + tc::c_col(lane, r), mirror,
                                acc[warp][lane][i][j][r]);
  }
}

}  // namespace

TEST(GramTensorCore, BlockedLaneTablesCoverEachRowAndChunkOnce) {
  // ldmatrix .x4 for A: the 32 lanes name rows 0..15 of the mma tile, chunks 2s and 2s + 1, each once.
  for (int s = 0; s < 4; ++s) {
    int seen_a[16][2] = {}, seen_b[16][2] = {};
    for (int lane = 0; lane < 32; ++lane) {
      ++seen_a[tc::ldm_a_row(lane, 0)][tc::ldm_a_chunk(lane, s) - 2 * s];
      ++seen_b[tc::ldm_b_row(lane, 0)][tc::ldm_b_chunk(lane, s) - 2 * s];
    }
    for (int r = 0; r < 16; ++r)
      for (int h = 0; h < 2; ++h) {
        EXPECT_EQ(seen_a[r][h], 1);
        EXPECT_EQ(seen_b[r][h], 1);
      }
  }
  // The swizzle: each ldmatrix phase (8 consecutive rows, one chunk) and each
  // row's 8 chunks cover the 8 bank groups of 16 bytes.
  for (int row0 = 0; row0 < 128; row0 += 8)
    for (int chunk = 0; chunk < 8; ++chunk) {
      int phase = 0, row = 0;
      for (int r = 0; r < 8; ++r) {
        phase |= 1 << ((tc::smem_offset(row0 + r, chunk) % 128) / 16);
        row |= 1 << ((tc::smem_offset(row0 + chunk, r) % 128) / 16);
      }
      EXPECT_EQ(phase, 0xFF) << "rows " << row0 << ".., chunk " << chunk;
      EXPECT_EQ(row, 0xFF) << "row " << row0 + chunk;
    }
}

// Rectangles, triangles (mirrored above the diagonal blocks), partial blocks,
// windows at row offsets inside wider outputs (the ring's), k not a multiple
// of a stage or of the mma's 4 words.
TEST(GramTensorCore, BlockedKernelEmulationMatchesPopcount) {
  const auto both = [](const bwc::Window& w) {
    bwc::check_window("warp32x64", tc::Warp32x64::block, w, emulate_blocked<tc::Warp32x64>);
    bwc::check_window("warp64x64", tc::Warp64x64::block, w, emulate_blocked<tc::Warp64x64>);
  };
  for (const std::int64_t words : {2, 6, 16, 18, 38}) both({200, 150, words, 0, 200, 0, 150, false, 0, 0, 0, 150});
  // A triangular slice of 300 rows from row 40 of a 340-row matrix, its window from row 40 on.
  both({340, 340, 18, 40, 340, 40, 340, true, 0, 0, 40, 300});
  both({340, 340, 6, 40, 300, 40, 340, true, 0, 0, 40, 300});
  // A ring window: rows 130..260 held from local row 0 (a_base 130), columns
  // 260..390 of B held from b_base 260, inside an output from column 100.
  both({130, 130, 38, 130, 260, 260, 390, false, 130, 260, 100, 330});
  both({130, 130, 16, 130, 260, 260, 390, false, 130, 260, 100, 330});
}
