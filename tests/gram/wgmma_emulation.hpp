#pragma once
// An emulation of Hopper's wgmma.mma_async m64nNk256 .s32.b1.b1.and.popc on
// the CPU, for the tests of the wgmma probe's and the wgmma engine's index
// math (test_gram_wgmma_layout.cpp, test_gram_wgmma_engine.cpp): the operands
// are read the way the PTX ISA says the tensor core reads them, from their
// decoded matrix descriptors, out of an image of shared memory.
#include "gram/impl/gram_wgmma_layout.hpp"

#include <array>
#include <cstdint>
#include <vector>

namespace kmini::gram::wgmma_emulation {

namespace wg = kmini::gram::wgmma;

// The ISA's fields, read back with masks of their own.
struct Decoded {
  std::uint32_t start, lbo, sbo, base_offset, swizzle, reserved;
};
inline Decoded decode(std::uint64_t d) {
  const std::uint64_t fields = 0x3FFFull | 0x3FFFull << 16 | 0x3FFFull << 32 | 0x7ull << 49 | 0x3ull << 62;
  return {std::uint32_t(d & 0x3FFF) << 4,
          std::uint32_t(d >> 16 & 0x3FFF) << 4,
          std::uint32_t(d >> 32 & 0x3FFF) << 4,
          std::uint32_t(d >> 49 & 0x7),
          std::uint32_t(d >> 62),
          std::uint32_t((d & ~fields) != 0)};
}

// Bit address, from the operand's start, of element (row, k) of a K-major
// no-swizzle operand: the canonical layout with T = 128, strides in elements
// (1 bit each), so SBO and LBO in bytes times 8.
inline std::uint64_t canonical_bit(int row, int k, std::uint32_t lbo, std::uint32_t sbo) {
  const int T = 128;
  return std::uint64_t(row % 8) * T + std::uint64_t(row / 8) * sbo * 8 + std::uint64_t(k % T) +
         std::uint64_t(k / T) * lbo * 8;
}

inline bool bit_at(const std::vector<unsigned char>& smem, std::uint64_t bit) {
  return (smem[bit / 8] >> (bit % 8)) & 1u;
}

// Row `row` of an operand (its 256 k elements, element k as bit k % 64 of
// word k / 64), gathered bit by bit through the canonical layout from the
// decoded descriptor's start, LBO and SBO.
using Row = std::array<std::uint64_t, wg::kK / 64>;
inline Row operand_row(const std::vector<unsigned char>& smem, const Decoded& d, int row) {
  Row out{};
  for (int k = 0; k < wg::kK; ++k)
    if (bit_at(smem, d.start * 8ull + canonical_bit(row, k, d.lbo, d.sbo))) out[k / 64] |= std::uint64_t(1) << (k % 64);
  return out;
}

// One warpgroup's m64nNk256 .b1 .and.popc, D += A B, operands read through
// their descriptors out of the shared-memory image (shared address a is
// smem[a]). D is 64 x n row-major.
inline void emulate_wgmma(const std::vector<unsigned char>& smem, std::uint64_t desc_a, std::uint64_t desc_b, int n,
                          std::vector<std::int64_t>& d) {
  const Decoded a = decode(desc_a), b = decode(desc_b);
  std::vector<Row> rows_b(static_cast<std::size_t>(n));
  for (int j = 0; j < n; ++j) rows_b[static_cast<std::size_t>(j)] = operand_row(smem, b, j);
  for (int m = 0; m < wg::kM; ++m) {
    const Row row_a = operand_row(smem, a, m);
    for (int j = 0; j < n; ++j)
      for (std::size_t w = 0; w < row_a.size(); ++w)
        d[std::size_t(m) * n + j] += __builtin_popcountll(row_a[w] & rows_b[static_cast<std::size_t>(j)][w]);
  }
}

}  // namespace kmini::gram::wgmma_emulation
