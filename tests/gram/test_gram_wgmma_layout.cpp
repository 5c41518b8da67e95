// The wgmma probe's index math (gram/impl/gram_wgmma_layout.hpp), checked on
// the CPU: the descriptor's bit fields, the tiles against the PTX ISA's
// canonical K-major no-swizzle layout ((8,m),(T,2k)):((1T,SBO),(1,LBO)) with
// T = 128 one-bit elements, the accumulator fragments, the host reference
// against a bit loop, and an emulation of m64nNk256 .b1 .and.popc that reads
// its operands the way the ISA says the tensor core does, from the decoded
// descriptors, out of the bytes the probe stages; gathered back by the probe's
// fragment mapping it must give the host reference.
#include "gram/impl/gram_wgmma_layout.hpp"
#include "gram/wgmma_emulation.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <set>
#include <vector>

namespace {

namespace wg = kmini::gram::wgmma;
using kmini::gram::wgmma_emulation::canonical_bit;
using kmini::gram::wgmma_emulation::decode;
using kmini::gram::wgmma_emulation::Decoded;
using kmini::gram::wgmma_emulation::emulate_wgmma;

std::vector<std::uint32_t> random_words(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::vector<std::uint32_t> v(n);
  for (auto& x : v) x = static_cast<std::uint32_t>(gen());
  return v;
}

// The probe's kernel on the emulation: stage A and B by ProbeTiles, issue
// reps x kKSteps x sets instructions with its descriptors, hand each thread
// its registers by the fragment figure and gather them as the probe does.
// `descriptor` lets a test break the descriptors.
template <class Descriptor>
std::vector<std::int64_t> emulate_probe_block(const std::vector<std::uint32_t>& a, const std::vector<std::uint32_t>& b,
                                              int n, int sets, int reps, Descriptor descriptor) {
  const wg::ProbeTiles tiles{n, sets};
  const std::uint32_t base = 0x400;  // where the block's dynamic shared memory starts
  std::vector<unsigned char> smem(base + tiles.bytes(), 0);
  auto put = [&](std::uint32_t at, std::uint32_t w) {
    for (int i = 0; i < 4; ++i) smem[base + at + i] = static_cast<unsigned char>(w >> (8 * i));
  };
  for (std::size_t e = 0; e < a.size(); ++e) put(tiles.a_word(int(e)), a[e]);
  for (std::size_t e = 0; e < b.size(); ++e) put(tiles.b_word(int(e)), b[e]);
  std::vector<std::vector<std::int64_t>> acc(sets, std::vector<std::int64_t>(std::size_t(wg::kM) * n, 0));
  for (int rep = 0; rep < reps; ++rep)
    for (int ks = 0; ks < wg::kKSteps; ++ks)
      for (int s = 0; s < sets; ++s)
        emulate_wgmma(smem, descriptor(base + tiles.a_tile(ks)), descriptor(base + tiles.b_set(ks, s)), n, acc[s]);
  // The hardware's registers: thread t, register j of set s holds D(acc_row, acc_col).
  std::vector<std::int64_t> out(std::size_t(wg::kM) * tiles.cols(), -1);
  for (int t = 0; t < wg::kWarpgroup; ++t)
    for (int s = 0; s < sets; ++s)
      for (int j = 0; j < n / 2; ++j) {
        const std::int64_t reg = acc[s][std::size_t(wg::acc_row(t, j)) * n + wg::acc_col(t, j)];
        out[std::size_t(wg::acc_row(t, j)) * tiles.cols() + s * n + wg::acc_col(t, j)] = reg;
      }
  return out;
}

std::vector<std::int64_t> reference(const std::vector<std::uint32_t>& a, const std::vector<std::uint32_t>& b, int cols,
                                    int reps) {
  std::vector<std::int64_t> d(std::size_t(wg::kM) * cols);
  wg::reference_tile(a.data(), wg::kM, b.data(), cols, wg::kInputWords, reps, d.data());
  return d;
}

TEST(GramWgmma, DescriptorFields) {
  const std::uint64_t d = wg::descriptor(0x1230, 128, 256);
  EXPECT_EQ(d & 0x3FFF, 0x123u);
  EXPECT_EQ(d >> 16 & 0x3FFF, 8u);
  EXPECT_EQ(d >> 32 & 0x3FFF, 16u);
  EXPECT_EQ(d >> 62, 0u);
  EXPECT_EQ(d, 0x123ull | 8ull << 16 | 16ull << 32);
  // Only the shared window's 18 bits of the address: (x & 0x3FFFF) >> 4.
  EXPECT_EQ(wg::descriptor(0x41230) & 0x3FFF, 0x123u);
  EXPECT_EQ(wg::descriptor(0x3FFF0) & 0x3FFF, 0x3FFFu);
  EXPECT_EQ(wg::descriptor(0, 16, 16, wg::Swizzle::B128) >> 62, 1u);
  EXPECT_EQ(wg::descriptor(0, 16, 16, wg::Swizzle::B32) >> 62, 3u);
  const Decoded back = decode(wg::descriptor(0x2A80));
  EXPECT_EQ(back.start, 0x2A80u);
  EXPECT_EQ(back.lbo, wg::kLbo);
  EXPECT_EQ(back.sbo, wg::kSbo);
  EXPECT_EQ(back.base_offset, 0u);
  EXPECT_EQ(back.swizzle, 0u);
  EXPECT_EQ(back.reserved, 0u);
}

TEST(GramWgmma, TileIsTheCanonicalKMajorLayout) {
  // Bit i of uint32 word w of row r (k = 32 w + i) lies where the canonical
  // layout puts element (r, k), with the probe's LBO and SBO.
  for (int row = 0; row < 256; ++row)
    for (int w = 0; w < wg::kRowWords; ++w)
      for (int i = 0; i < 32; i += 7)
        ASSERT_EQ(std::uint64_t(wg::word_offset(row, w)) * 8 + i, canonical_bit(row, 32 * w + i, wg::kLbo, wg::kSbo))
            << "row " << row << " word " << w << " bit " << i;
  EXPECT_EQ(wg::tile_offset(0, 1), 128u);
  EXPECT_EQ(wg::tile_offset(1, 0), 16u);
  EXPECT_EQ(wg::tile_offset(8, 0), 256u);
  EXPECT_EQ(wg::tile_offset(63, 1), 7u * 256 + 128 + 7 * 16);
}

TEST(GramWgmma, BlockTilesCoverTheirBytesOnceAligned) {
  for (const auto& [n, sets] : {std::pair{256, 1}, {128, 1}, {8, 8}}) {
    const wg::ProbeTiles tiles{n, sets};
    std::vector<int> hits(tiles.bytes(), 0);
    for (int e = 0; e < wg::kM * wg::kInputWords; ++e)
      for (int i = 0; i < 4; ++i) ++hits[tiles.a_word(e) + i];
    for (int e = 0; e < tiles.cols() * wg::kInputWords; ++e)
      for (int i = 0; i < 4; ++i) ++hits[tiles.b_word(e) + i];
    for (std::size_t i = 0; i < hits.size(); ++i) ASSERT_EQ(hits[i], 1) << "n " << n << " byte " << i;
    // Every operand starts on 16 bytes (the ISA's alignment of matrices in shared memory).
    for (int ks = 0; ks < wg::kKSteps; ++ks) {
      EXPECT_EQ(tiles.a_tile(ks) % 16, 0u);
      for (int s = 0; s < sets; ++s) EXPECT_EQ(tiles.b_set(ks, s) % 16, 0u);
    }
    EXPECT_EQ(tiles.bytes(), wg::kKSteps * 32u * (wg::kM + tiles.cols()));
  }
  EXPECT_EQ(wg::ProbeTiles({256, 1}).bytes(), 40u * 1024);  // fits the 48 KiB a block gets without opting in
}

TEST(GramWgmma, AccumulatorFragmentsCoverDOnce) {
  for (int n : {8, 16, 128, 256}) {
    std::set<std::pair<int, int>> seen;
    for (int t = 0; t < wg::kWarpgroup; ++t)
      for (int j = 0; j < n / 2; ++j) {
        const int r = wg::acc_row(t, j), c = wg::acc_col(t, j);
        ASSERT_TRUE(r >= 0 && r < wg::kM && c >= 0 && c < n) << t << " " << j;
        seen.insert({r, c});
      }
    EXPECT_EQ(seen.size(), std::size_t(wg::kM) * n);
  }
  // From the ISA's figure: lane 5 of warp 0 (group 1, thread-in-group 1).
  EXPECT_EQ(wg::acc_row(5, 0), 1);
  EXPECT_EQ(wg::acc_col(5, 0), 2);
  EXPECT_EQ(wg::acc_col(5, 1), 3);
  EXPECT_EQ(wg::acc_row(5, 2), 9);
  EXPECT_EQ(wg::acc_col(5, 4), 10);
  EXPECT_EQ(wg::acc_row(32 * 3 + 31, 127), 63);
  EXPECT_EQ(wg::acc_col(32 * 3 + 31, 127), 255);
}

TEST(GramWgmma, HostReferenceIsTheBitLoop) {
  const auto a = random_words(3 * 9, 1), b = random_words(5 * 9, 2);
  std::vector<std::int64_t> d(15);
  wg::reference_tile(a.data(), 3, b.data(), 5, 9, 2, d.data());
  for (int m = 0; m < 3; ++m)
    for (int n = 0; n < 5; ++n) {
      std::int64_t c = 0;
      for (int k = 0; k < 9 * 32; ++k) c += (a[m * 9 + k / 32] >> (k % 32) & 1u) & (b[n * 9 + k / 32] >> (k % 32) & 1u);
      EXPECT_EQ(d[m * 5 + n], 2 * c) << m << " " << n;
    }
  const std::uint32_t ones[2] = {~0u, ~0u}, zero[2] = {0u, 0u};
  EXPECT_EQ(wg::and_popc(ones, ones, 2), 64);
  EXPECT_EQ(wg::and_popc(ones, zero, 2), 0);
}

TEST(GramWgmma, EmulatedProbeBlockGivesTheReference) {
  for (const auto& [n, sets] : {std::pair{8, 8}, {128, 1}, {256, 1}}) {
    const int cols = n * sets;
    const auto a = random_words(std::size_t(wg::kM) * wg::kInputWords, 10 + n);
    const auto b = random_words(std::size_t(cols) * wg::kInputWords, 20 + n);
    const auto got = emulate_probe_block(a, b, n, sets, 2, [](std::uint32_t at) { return wg::descriptor(at); });
    EXPECT_EQ(got, reference(a, b, cols, 2)) << "n " << n << " sets " << sets;
  }
}

TEST(GramWgmma, EmulationSeesWrongDescriptors) {
  const int n = 16;
  const auto a = random_words(std::size_t(wg::kM) * wg::kInputWords, 3);
  const auto b = random_words(std::size_t(n) * wg::kInputWords, 4);
  const auto want = reference(a, b, n, 1);
  // LBO and SBO swapped, or the start off by one core-matrix row: not the reference.
  EXPECT_NE(emulate_probe_block(a, b, n, 1, 1, [](std::uint32_t at) { return wg::descriptor(at, wg::kSbo, wg::kLbo); }),
            want);
  EXPECT_NE(emulate_probe_block(a, b, n, 1, 1, [](std::uint32_t at) { return wg::descriptor(at + 16); }), want);
}

}  // namespace
