// gram's host packing of file rows (gram_host_pack.hpp): every instruction set
// this build has against a plain bit loop over the 0/1 matrix, at shapes that
// end inside a vector and a word, one row, many rows; the fused check finds a
// value above 1 wherever it is and reports none in 0/1 data; numpy packbits
// rows give the same words as the unpacked matrix they were made from.
#include "gram/impl/gram_host_pack.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <random>
#include <string>
#include <vector>

namespace {

using kmini::gram::host_pack::Isa;
using kmini::gram::host_pack::isa_compiled;
using kmini::gram::host_pack::isa_name;
using kmini::gram::host_pack::kIsas;
using kmini::gram::host_pack::Word;

constexpr Word kUntouched = 0xA5A5A5A5A5A5A5A5ull;

struct Shape {
  std::int64_t rows, cols;
};

const Shape kShapes[] = {{1, 1},    {1, 7},    {1, 8},   {1, 63},    {1, 64},   {1, 65},   {3, 31},
                         {2, 32},   {5, 33},   {4, 127}, {3, 128},   {7, 129},  {1, 1000}, {9, 200},
                         {3, 1025}, {37, 130}, {64, 64}, {130, 257}, {2, 4095}, {1, 4097}};

std::int64_t words_for(std::int64_t cols) { return (cols + 63) / 64; }

// Row-major 0/1 bytes with a 1 at probability `density`.
std::vector<std::uint8_t> matrix(const Shape& s, double density, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution one(density);
  std::vector<std::uint8_t> m(static_cast<std::size_t>(s.rows * s.cols));
  for (auto& v : m) v = one(rng) ? 1 : 0;
  return m;
}

// The packed layout by its definition: column k in bit k % 64 of word k / 64.
std::vector<Word> reference(const Shape& s, const std::vector<std::uint8_t>& m, std::int64_t stride) {
  std::vector<Word> w(static_cast<std::size_t>(s.rows * stride), kUntouched);
  for (std::int64_t r = 0; r < s.rows; ++r) {
    for (std::int64_t j = 0; j < words_for(s.cols); ++j) w[static_cast<std::size_t>(r * stride + j)] = 0;
    for (std::int64_t k = 0; k < s.cols; ++k)
      if (m[static_cast<std::size_t>(r * s.cols + k)])
        w[static_cast<std::size_t>(r * stride + k / 64)] |= Word(1) << (k % 64);
  }
  return w;
}

// Packs with `isa`; false when this build lacks it.
bool pack(Isa isa, const Shape& s, const std::vector<std::uint8_t>& m, std::int64_t stride, std::vector<Word>& out,
          bool& bad) {
  out.assign(static_cast<std::size_t>(s.rows * stride), kUntouched);
  return kmini::gram::host_pack::pack_unpacked_block_with(isa, m.data(), s.rows, s.cols, out.data(), stride, bad);
}

std::string what(Isa isa, const Shape& s) {
  return std::string(isa_name(isa)) + " " + std::to_string(s.rows) + " x " + std::to_string(s.cols);
}

TEST(GramHostPack, PortableIsAlwaysCompiled) {
  EXPECT_TRUE(isa_compiled(Isa::Portable));
  EXPECT_TRUE(isa_compiled(kmini::gram::host_pack::kAutoIsa));
}

TEST(GramHostPack, UnpackedRowsMatchTheBitLoopForEveryInstructionSet) {
  int compared = 0;
  std::string sets;
  for (const Isa isa : kIsas) {
    if (isa_compiled(isa)) sets += std::string(sets.empty() ? "" : ", ") + isa_name(isa);
    for (const Shape& s : kShapes) {
      for (const double density : {0.0, 0.37, 1.0}) {
        const auto m = matrix(s, density, static_cast<unsigned>(s.rows * 7919 + s.cols));
        const std::int64_t stride = words_for(s.cols) + 3;  // words past the row's stay as they were
        std::vector<Word> out;
        bool bad = true;
        if (!pack(isa, s, m, stride, out, bad)) continue;
        EXPECT_FALSE(bad) << what(isa, s) << " density " << density;
        EXPECT_EQ(out, reference(s, m, stride)) << what(isa, s) << " density " << density;
        ++compared;
      }
    }
  }
  EXPECT_EQ(compared, static_cast<int>(std::size(kShapes)) * 3 *
                          static_cast<int>(sets.empty() ? 0 : 1 + std::count(sets.begin(), sets.end(), ',')));
  std::cout << "instruction sets compared: " << sets << "\n";
}

TEST(GramHostPack, AValueAboveOneIsFoundAnywhere) {
  for (const Isa isa : kIsas) {
    for (const Shape& s : kShapes) {
      const auto base = matrix(s, 0.5, 11);
      const std::int64_t n = s.rows * s.cols;
      for (const std::int64_t at : {std::int64_t(0), n / 2, n - 1}) {
        for (const int value : {2, 3, 128, 129, 255}) {
          auto m = base;
          m[static_cast<std::size_t>(at)] = static_cast<std::uint8_t>(value);
          std::vector<Word> out;
          bool bad = false;
          if (!pack(isa, s, m, words_for(s.cols), out, bad)) break;
          EXPECT_TRUE(bad) << what(isa, s) << ": " << value << " at element " << at;
        }
      }
    }
  }
}

TEST(GramHostPack, PackbitsRowsGiveTheWordsOfTheirMatrixForEveryInstructionSet) {
  int compared = 0, sets = 0;
  for (const Isa isa : kIsas) sets += isa_compiled(isa) ? 1 : 0;
  for (const Isa isa : kIsas) {
    for (const Shape& s : kShapes) {
      const auto m = matrix(s, 0.37, static_cast<unsigned>(s.cols));
      // numpy's packbits: column k in bit 7 - k % 8 of byte k / 8, the padding 0.
      const std::int64_t nbytes = (s.cols + 7) / 8;
      std::vector<std::uint8_t> bytes(static_cast<std::size_t>(s.rows * nbytes), 0);
      for (std::int64_t r = 0; r < s.rows; ++r)
        for (std::int64_t k = 0; k < s.cols; ++k)
          if (m[static_cast<std::size_t>(r * s.cols + k)])
            bytes[static_cast<std::size_t>(r * nbytes + k / 8)] |= static_cast<std::uint8_t>(0x80u >> (k % 8));
      const std::int64_t stride = words_for(s.cols) + 2;  // words past the row's stay as they were
      std::vector<Word> out(static_cast<std::size_t>(s.rows * stride), kUntouched);
      if (!kmini::gram::host_pack::pack_packed_block_with(isa, bytes.data(), s.rows, nbytes, out.data(), stride))
        continue;
      EXPECT_EQ(out, reference(s, m, stride)) << what(isa, s);
      ++compared;
    }
  }
  EXPECT_EQ(compared, static_cast<int>(std::size(kShapes)) * sets);
}

}  // namespace
