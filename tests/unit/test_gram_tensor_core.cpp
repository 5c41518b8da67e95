// The tensor-core engine's lane-to-fragment mapping (gram_tensor_core.hpp),
// checked on the CPU: a warp emulation of mma.m16n8k256.row.col.s32.b1.b1.s32
// .and.popc assembles A (16 x 256 bits) and B (256 x 8 bits) from the 32 lanes'
// registers as the PTX ISA's fragment tables for m16n8k256 .b1 lay them out
// ("Matrix Fragments for mma.m16n8k256"), multiplies them with AND+popcount,
// and hands each lane its four results by the C/D table. The engine's loads
// (from the word-major panels in team scratch) and stores (into the C tile)
// must then give the plain popcount sums, at odd chunk lengths too.
#include "core/random.hpp"
#include "gram/impl/gram_tensor_core.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace {

using kmini::gram::Word;
namespace tc = kmini::gram::tensor_core;

// The GPU's panel geometry (gram_params.hpp's CUDA TileParams), whatever backend
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
