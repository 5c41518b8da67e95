#pragma once
// Packing a file's rows into gram's 64-bit words on the host, straight from
// the block just read, with the 0/1 check fused into the same pass: every
// byte is loaded once (gram_input.cpp, host memory spaces). Unpacked rows:
// bit k % 64 of word k / 64 is bit 0 of byte k, and the OR of every byte
// shows a value above 1 anywhere (a bit above bit 0), so the check costs one
// OR per vector; the element it names is found by a second look at the block
// only when there is one. numpy packbits rows: their bytes reordered into
// words (each byte's bits reversed), never unpacked.
//
// One variant per instruction set the build targets (KMINI_NATIVE or
// KMINI_ARCH, as the micro-kernels): AVX-512BW (a byte test per 64 bytes),
// AVX2 (movemask of bit 0 per 32 bytes) and the portable one (a multiply
// gathers bit 0 of 8 bytes), and for packbits rows two nibble look-ups per
// byte (vpshufb) against a word-wise bit reversal, exact against each other
// (tests/gram/test_gram_host_pack.cpp). Host code only: never in a kernel.
#include "gram/gram_params.hpp"

#include <cstdint>
#include <cstring>

namespace kmini::gram::host_pack {

using Word = std::uint64_t;

enum class Isa { Portable, Avx2, Avx512bw };
inline constexpr Isa kIsas[] = {Isa::Portable, Isa::Avx2, Isa::Avx512bw};
constexpr const char* isa_name(Isa i) { return i == Isa::Avx2 ? "avx2" : i == Isa::Avx512bw ? "avx512bw" : "portable"; }
constexpr bool isa_compiled(Isa i) {
  return i == Isa::Avx2 ? bool(KMINI_GRAM_AVX2) : i == Isa::Avx512bw ? bool(KMINI_GRAM_AVX512BW) : true;
}
// The best the build's target has.
inline constexpr Isa kAutoIsa = KMINI_GRAM_AVX512BW ? Isa::Avx512bw : KMINI_GRAM_AVX2 ? Isa::Avx2 : Isa::Portable;

namespace impl {

// 8 bytes as a little-endian word: byte b in bits 8b..8b+7.
inline std::uint64_t load8(const std::uint8_t* p) {
  std::uint64_t x;
  std::memcpy(&x, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  x = __builtin_bswap64(x);
#endif
  return x;
}

// Bit 0 of each of the 8 bytes of x, byte b to bit b: the products of the
// multiplier's bytes land each bit in its own place of the top byte, no carries.
inline Word low_bits(std::uint64_t x) { return ((x & 0x0101010101010101ull) * 0x0102040810204080ull) >> 56; }

// 64 bytes (zero past `n`) as one word; their OR into `seen`.
inline Word word_portable(const std::uint8_t* p, std::int64_t n, std::uint64_t& seen) {
  std::uint8_t tail[64];
  if (n < 64) {
    std::memset(tail, 0, sizeof tail);
    std::memcpy(tail, p, static_cast<std::size_t>(n));
    p = tail;
  }
  Word w = 0;
  for (int b = 0; b < 8; ++b) {
    const std::uint64_t x = load8(p + 8 * b);
    seen |= x;
    w |= low_bits(x) << (8 * b);
  }
  return w;
}

inline bool block_portable(const std::uint8_t* src, std::int64_t rows, std::int64_t cols, Word* dst,
                           std::int64_t stride) {
  std::uint64_t seen = 0;
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::uint8_t* row = src + r * cols;
    Word* out = dst + r * stride;
    for (std::int64_t k = 0; k < cols; k += 64) *out++ = word_portable(row + k, cols - k, seen);
  }
  return (seen & ~0x0101010101010101ull) != 0;
}

#if KMINI_GRAM_AVX2
inline bool block_avx2(const std::uint8_t* src, std::int64_t rows, std::int64_t cols, Word* dst, std::int64_t stride) {
  __m256i seen = _mm256_setzero_si256();
  alignas(32) std::uint8_t tail[64];
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::uint8_t* row = src + r * cols;
    Word* out = dst + r * stride;
    for (std::int64_t k = 0; k < cols; k += 64) {
      const std::uint8_t* p = row + k;
      if (cols - k < 64) {
        std::memset(tail, 0, sizeof tail);
        std::memcpy(tail, p, static_cast<std::size_t>(cols - k));
        p = tail;
      }
      const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
      const __m256i hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32));
      seen = _mm256_or_si256(seen, _mm256_or_si256(lo, hi));
      // Bit 0 of each byte to its sign bit (a 16-bit shift by 7 moves no other bit there).
      const auto l = static_cast<std::uint32_t>(_mm256_movemask_epi8(_mm256_slli_epi16(lo, 7)));
      const auto h = static_cast<std::uint32_t>(_mm256_movemask_epi8(_mm256_slli_epi16(hi, 7)));
      *out++ = Word(l) | Word(h) << 32;
    }
  }
  return !_mm256_testz_si256(seen, _mm256_set1_epi8(static_cast<char>(0xFE)));
}
#endif

#if KMINI_GRAM_AVX512BW
inline bool block_avx512bw(const std::uint8_t* src, std::int64_t rows, std::int64_t cols, Word* dst,
                           std::int64_t stride) {
  __m512i seen = _mm512_setzero_si512();
  const __m512i one = _mm512_set1_epi8(1);
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::uint8_t* row = src + r * cols;
    Word* out = dst + r * stride;
    for (std::int64_t k = 0; k < cols; k += 64) {
      const std::int64_t n = cols - k;
      // A masked load past the row's end reads nothing there (no fault, zeros).
      const __mmask64 m = n >= 64 ? ~__mmask64(0) : (__mmask64(1) << n) - 1;
      const __m512i v = _mm512_maskz_loadu_epi8(m, row + k);
      seen = _mm512_or_si512(seen, v);
      *out++ = _mm512_test_epi8_mask(v, one);
    }
  }
  return _mm512_test_epi8_mask(seen, _mm512_set1_epi8(static_cast<char>(0xFE))) != 0;
}
#endif

// Reverses the bits of each byte of x (packbits' first column is a byte's high bit).
inline std::uint64_t reverse_bits_in_bytes(std::uint64_t x) {
  x = ((x >> 4) & 0x0F0F0F0F0F0F0F0Full) | ((x & 0x0F0F0F0F0F0F0F0Full) << 4);
  x = ((x >> 2) & 0x3333333333333333ull) | ((x & 0x3333333333333333ull) << 2);
  return ((x >> 1) & 0x5555555555555555ull) | ((x & 0x5555555555555555ull) << 1);
}

}  // namespace impl

// Packs `rows` rows of `cols` bytes each (contiguous, row r at src + r * cols)
// into dst + r * stride, words_for(cols) words per row (the bits past cols 0;
// words past those untouched). Returns whether some byte was above 1: then
// the words are meaningless and the caller names the first such element.
template <Isa I = kAutoIsa>
bool pack_unpacked_block(const std::uint8_t* src, std::int64_t rows, std::int64_t cols, Word* dst,
                         std::int64_t stride) {
  static_assert(isa_compiled(I), "pack_unpacked_block: instruction set not in this build");
#if KMINI_GRAM_AVX512BW
  if constexpr (I == Isa::Avx512bw) return impl::block_avx512bw(src, rows, cols, dst, stride);
#endif
#if KMINI_GRAM_AVX2
  if constexpr (I == Isa::Avx2) return impl::block_avx2(src, rows, cols, dst, stride);
#endif
  return impl::block_portable(src, rows, cols, dst, stride);
}

// The same for a run-time choice (tests, benchmarks); false and nothing done
// where `isa` is not compiled in, `bad` is set otherwise.
inline bool pack_unpacked_block_with(Isa isa, const std::uint8_t* src, std::int64_t rows, std::int64_t cols, Word* dst,
                                     std::int64_t stride, bool& bad) {
  if (!isa_compiled(isa)) return false;
#if KMINI_GRAM_AVX512BW
  if (isa == Isa::Avx512bw) bad = pack_unpacked_block<Isa::Avx512bw>(src, rows, cols, dst, stride);
#endif
#if KMINI_GRAM_AVX2
  if (isa == Isa::Avx2) bad = pack_unpacked_block<Isa::Avx2>(src, rows, cols, dst, stride);
#endif
  if (isa == Isa::Portable) bad = pack_unpacked_block<Isa::Portable>(src, rows, cols, dst, stride);
  return true;
}

namespace impl {

// One packbits row's bytes reversed into its words, word by word: the tail
// word's bytes past `nbytes` are 0.
inline void packbits_row_portable(const std::uint8_t* row, std::int64_t nbytes, Word* out) {
  const std::int64_t full = nbytes / 8, rest = nbytes % 8;
  for (std::int64_t w = 0; w < full; ++w) out[w] = reverse_bits_in_bytes(load8(row + 8 * w));
  if (rest > 0) {
    std::uint8_t tail[8] = {};
    std::memcpy(tail, row + 8 * full, static_cast<std::size_t>(rest));
    out[full] = reverse_bits_in_bytes(load8(tail));
  }
}

#if KMINI_GRAM_AVX2
// A byte's bits reversed by two table look-ups of its nibbles (vpshufb).
inline __m256i reverse_bits_avx2(__m256i v) {
  const __m256i table = _mm256_setr_epi8(0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15, 0, 8, 4, 12, 2, 10, 6,
                                         14, 1, 9, 5, 13, 3, 11, 7, 15);
  const __m256i nibble = _mm256_set1_epi8(15);
  const __m256i lo = _mm256_shuffle_epi8(table, _mm256_and_si256(v, nibble));
  const __m256i hi = _mm256_shuffle_epi8(table, _mm256_and_si256(_mm256_srli_epi16(v, 4), nibble));
  return _mm256_or_si256(_mm256_slli_epi16(lo, 4), hi);  // the low nibble's bits reversed become the high nibble
}

inline void packbits_row_avx2(const std::uint8_t* row, std::int64_t nbytes, Word* out) {
  std::int64_t b = 0;
  for (; b + 32 <= nbytes; b += 32) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + b));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + b / 8), reverse_bits_avx2(v));
  }
  packbits_row_portable(row + b, nbytes - b, out + b / 8);
}
#endif

#if KMINI_GRAM_AVX512BW
inline __m512i reverse_bits_avx512bw(__m512i v) {
  // Bytes 0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15 (a nibble's bits
  // reversed) in each 128-bit lane, as 32-bit elements, the first the lowest.
  const __m512i table = _mm512_set4_epi32(0x0F070B03, 0x0D050901, 0x0E060A02, 0x0C040800);
  const __m512i nibble = _mm512_set1_epi8(15);
  const __m512i lo = _mm512_shuffle_epi8(table, _mm512_and_si512(v, nibble));
  const __m512i hi = _mm512_shuffle_epi8(table, _mm512_and_si512(_mm512_srli_epi16(v, 4), nibble));
  return _mm512_or_si512(_mm512_slli_epi16(lo, 4), hi);
}

// The last chunk by masked loads (zeros past the row, no fault) and stores
// up to the end of its last word (those zeros, reversed, are the padding).
inline void packbits_row_avx512bw(const std::uint8_t* row, std::int64_t nbytes, Word* out) {
  auto* dst = reinterpret_cast<std::uint8_t*>(out);
  const std::int64_t padded = (nbytes + 7) / 8 * 8;
  for (std::int64_t b = 0; b < padded; b += 64) {
    const std::int64_t n = nbytes - b, w = padded - b;
    const __mmask64 load = n >= 64 ? ~__mmask64(0) : (__mmask64(1) << n) - 1;
    const __mmask64 store = w >= 64 ? ~__mmask64(0) : (__mmask64(1) << w) - 1;
    _mm512_mask_storeu_epi8(dst + b, store, reverse_bits_avx512bw(_mm512_maskz_loadu_epi8(load, row + b)));
  }
}
#endif

}  // namespace impl

// numpy packbits rows (`nbytes` bytes each, contiguous) into dst + r * stride:
// byte 8w + b becomes byte b of word w, its bits reversed, as the device's
// pack_packed_bytes does; words past words_for(8 * nbytes) untouched. The
// padding bits are the caller's to check. The SIMD variants store bytes in
// place (x86 is little-endian: byte b of a word is its bits 8b..8b+7).
template <Isa I = kAutoIsa>
void pack_packed_block(const std::uint8_t* src, std::int64_t rows, std::int64_t nbytes, Word* dst,
                       std::int64_t stride) {
  static_assert(isa_compiled(I), "pack_packed_block: instruction set not in this build");
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::uint8_t* row = src + r * nbytes;
    Word* out = dst + r * stride;
#if KMINI_GRAM_AVX512BW
    if constexpr (I == Isa::Avx512bw) {
      impl::packbits_row_avx512bw(row, nbytes, out);
      continue;
    }
#endif
#if KMINI_GRAM_AVX2
    if constexpr (I == Isa::Avx2) {
      impl::packbits_row_avx2(row, nbytes, out);
      continue;
    }
#endif
    impl::packbits_row_portable(row, nbytes, out);
  }
}

// The same for a run-time choice (tests, benchmarks); false and nothing done
// where `isa` is not compiled in.
inline bool pack_packed_block_with(Isa isa, const std::uint8_t* src, std::int64_t rows, std::int64_t nbytes, Word* dst,
                                   std::int64_t stride) {
  if (!isa_compiled(isa)) return false;
#if KMINI_GRAM_AVX512BW
  if (isa == Isa::Avx512bw) pack_packed_block<Isa::Avx512bw>(src, rows, nbytes, dst, stride);
#endif
#if KMINI_GRAM_AVX2
  if (isa == Isa::Avx2) pack_packed_block<Isa::Avx2>(src, rows, nbytes, dst, stride);
#endif
  if (isa == Isa::Portable) pack_packed_block<Isa::Portable>(src, rows, nbytes, dst, stride);
  return true;
}

}  // namespace kmini::gram::host_pack
