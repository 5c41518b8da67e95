#pragma once
// Host reference for the Gram product: rows packed bit by bit with plain
// loops from the unpacked source, C(i, j) counted word by word. Independent of
// the device packing, tiling, staging and symmetry.
#include <cstdint>
#include <vector>

namespace kmini::gram::reference {

// rows x words, bit k % 64 of word k / 64 = column k.
struct HostPacked {
  std::int64_t rows = 0, words = 0;
  std::vector<std::uint64_t> bits;
};

inline HostPacked pack(const std::vector<std::uint8_t>& unpacked, std::int64_t rows, std::int64_t cols) {
  HostPacked p{rows, (cols + 63) / 64, {}};
  p.bits.assign(static_cast<std::size_t>(rows * p.words), 0);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t k = 0; k < cols; ++k)
      if (unpacked[i * cols + k]) p.bits[i * p.words + k / 64] |= std::uint64_t(1) << (k % 64);
  return p;
}

inline std::int64_t count(const HostPacked& p, std::int64_t i, std::int64_t j) {
  std::int64_t c = 0;
  for (std::int64_t w = 0; w < p.words; ++w) c += __builtin_popcountll(p.bits[i * p.words + w] & p.bits[j * p.words + w]);
  return c;
}

}  // namespace kmini::gram::reference
