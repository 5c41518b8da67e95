#pragma once
// Packing 0/1 rows into the tile kernel's 64-bit words, and the ones of each
// packed row.
//
// Packed layout: row i of A is words(i, 0 .. words_alloc), column k of an
// unpacked input in bit k % 64 of word k / 64; all bits past `cols` are 0.
// (Packed numpy input keeps numpy's byte and bit order inside each word: a
// permutation of the columns inside a word, which C does not see.)
#include "core/kokkos_compat.hpp"
#include "core/random.hpp"
#include "gram/gram_params.hpp"
#include "gram/impl/gram_micro_kernels.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace kmini::gram {

template <class Mem>
using PackedView = Kokkos::View<Word**, Kokkos::LayoutRight, Mem>;

constexpr std::int64_t words_for(std::int64_t cols) { return (cols + 63) / 64; }
// Words per packed row in memory: a multiple of Tuning::granule (one SIMD
// vector on hosts), zero-filled.
constexpr std::int64_t words_allocated(std::int64_t cols) {
  return (words_for(cols) + Tuning::granule - 1) / Tuning::granule * Tuning::granule;
}

// The `random` input: A(i, k) = 1 with probability `density`, a function of
// (seed, i * cols + k) only, so every rank count sees the same matrix.
KOKKOS_INLINE_FUNCTION bool random_bit(std::uint64_t seed, std::int64_t i, std::int64_t k, std::int64_t cols,
                                       double density) {
  return random::uniform01(seed, static_cast<std::uint64_t>(i) * static_cast<std::uint64_t>(cols) +
                                     static_cast<std::uint64_t>(k)) < density;
}

template <class Packed>
struct PackRandom {
  Packed a;
  std::int64_t nw, cols, src0, dst0;
  double density;
  std::uint64_t seed;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t e) const {
    const std::int64_t i = e / nw, w = e % nw;
    const std::int64_t k0 = w * 64;
    const int nbits = (cols - k0) < 64 ? static_cast<int>(cols - k0) : 64;
    Word word = 0;
    for (int b = 0; b < nbits; ++b)
      if (random_bit(seed, src0 + i, k0 + b, cols, density)) word |= Word(1) << b;
    a(dst0 + i, w) = word;
  }
};

// Packs rows [src0, src0 + rows) of the random matrix into rows [dst0,
// dst0 + rows) of `a`. Padding words are left as they are (zero from
// allocation).
template <class Exec, class Packed>
void pack_random(const Exec& exec, const Packed& a, std::int64_t rows, std::int64_t cols, double density,
                 std::uint64_t seed, std::int64_t src0 = 0, std::int64_t dst0 = 0) {
  const std::int64_t nw = words_for(cols);
  Kokkos::parallel_for("kmini::gram::pack_random", Kokkos::RangePolicy<Exec>(exec, 0, rows * nw),
                       PackRandom<Packed>{a, nw, cols, src0, dst0, density, seed});
}

template <class Packed, class Bytes>
struct PackUnpackedBytes {
  using Flag = Kokkos::View<int, typename Packed::memory_space>;
  Packed a;
  Bytes bytes;
  std::int64_t cols, nw, row0;
  Flag bad;  // set to 1 where a byte is above 1 (when not empty)
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t e) const {
    const std::int64_t r = e / nw, w = e % nw;
    const std::int64_t k0 = w * 64;
    const int nbits = (cols - k0) < 64 ? static_cast<int>(cols - k0) : 64;
    Word word = 0;
    unsigned seen = 0;
    for (int b = 0; b < nbits; ++b) {
      const unsigned v = bytes(r, k0 + b);
      seen |= v;
      word |= Word(v != 0) << b;
    }
    a(row0 + r, w) = word;
    if ((seen & ~1u) != 0 && bad.data() != nullptr) Kokkos::atomic_exchange(&bad(), 1);
  }
};

// Packs an unpacked byte block (nrows x cols) into rows [row0, row0 + nrows).
// The values are checked as they are packed: `bad` (when given) is set to 1
// where one is above 1, for the host to read once, after the last block.
template <class Exec, class Packed, class Bytes>
void pack_unpacked_bytes(const Exec& exec, const Packed& a, const Bytes& bytes, std::int64_t row0,
                         const typename PackUnpackedBytes<Packed, Bytes>::Flag& bad = {}) {
  const std::int64_t nrows = bytes.extent(0), cols = bytes.extent(1), nw = words_for(cols);
  Kokkos::parallel_for("kmini::gram::pack_unpacked", Kokkos::RangePolicy<Exec>(exec, 0, nrows * nw),
                       PackUnpackedBytes<Packed, Bytes>{a, bytes, cols, nw, row0, bad});
}

// A byte's bits in reverse order: packbits puts the first column in the high
// bit of a byte; a word has it in bit 0.
KOKKOS_INLINE_FUNCTION unsigned reversed_bits(unsigned v) {
  v = ((v & 0xF0u) >> 4) | ((v & 0x0Fu) << 4);
  v = ((v & 0xCCu) >> 2) | ((v & 0x33u) << 2);
  return ((v & 0xAAu) >> 1) | ((v & 0x55u) << 1);
}

template <class Packed, class Bytes>
struct PackPackedBytes {
  Packed a;
  Bytes bytes;
  std::int64_t nbytes, nw, row0;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t e) const {
    const std::int64_t r = e / nw, w = e % nw;
    Word word = 0;
    for (int b = 0; b < 8; ++b) {
      const std::int64_t at = w * 8 + b;
      if (at < nbytes) word |= Word(reversed_bits(bytes(r, at))) << (8 * b);
    }
    a(row0 + r, w) = word;
  }
};

// Copies numpy packbits rows (nrows x ceil(cols/8) bytes) into rows
// [row0, row0 + nrows): byte 8w + b becomes byte b of word w, its bits
// reversed, so column k is bit k % 64 of word k / 64 in every input form (and
// packed, unpacked and word inputs can be mixed).
template <class Exec, class Packed, class Bytes>
void pack_packed_bytes(const Exec& exec, const Packed& a, const Bytes& bytes, std::int64_t row0) {
  const std::int64_t nrows = bytes.extent(0), nbytes = bytes.extent(1), nw = (nbytes + 7) / 8;
  Kokkos::parallel_for("kmini::gram::pack_packed", Kokkos::RangePolicy<Exec>(exec, 0, nrows * nw),
                       PackPackedBytes<Packed, Bytes>{a, bytes, nbytes, nw, row0});
}

template <class Packed, class Ones>
struct RowOnes {
  Packed a;
  Ones ones;
  std::int64_t nw;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i) const {
    std::int64_t s = 0;
    for (std::int64_t w = 0; w < nw; ++w) s += compat::popcount64(a(i, w));
    ones(i) = static_cast<std::int32_t>(s);
  }
};

// ones(i) = number of 1s in row i = C(i, i).
template <class Exec, class Packed, class Ones>
void row_ones(const Exec& exec, const Packed& a, const Ones& ones) {
  const std::int64_t nw = a.extent(1);
  Kokkos::parallel_for("kmini::gram::row_ones", Kokkos::RangePolicy<Exec>(exec, 0, ones.extent(0)),
                       RowOnes<Packed, Ones>{a, ones, nw});
}

}  // namespace kmini::gram
