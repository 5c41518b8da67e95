// Each host micro-kernel of gram (gram_micro_kernels.hpp) as one target
// compiles it, exact against the plain bit loop. One executable per target
// (tests/gram/CMakeLists.txt: x86-64-v3, skylake-avx512, native); this file is
// compiled for the baseline x86-64 and skips, saying why, what this CPU cannot
// run: the whole target (KMINI_MK_REQUIRES, CPU features), or one micro-kernel.
#include "gram/micro_kernels/mk_variant.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#ifndef KMINI_MK_TARGET
#error "KMINI_MK_TARGET: the -march of mk_variant.cpp"
#endif
#ifndef KMINI_MK_REQUIRES
#define KMINI_MK_REQUIRES ""
#endif

namespace {

using kmini::gram::mk_test::compiled_mask;
using Word = std::uint64_t;

// __builtin_cpu_supports takes a literal only.
bool cpu_has(const std::string& f) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (f == "avx2") return __builtin_cpu_supports("avx2");
  if (f == "bmi2") return __builtin_cpu_supports("bmi2");
  if (f == "fma") return __builtin_cpu_supports("fma");
  if (f == "popcnt") return __builtin_cpu_supports("popcnt");
  if (f == "avx512f") return __builtin_cpu_supports("avx512f");
  if (f == "avx512bw") return __builtin_cpu_supports("avx512bw");
  if (f == "avx512vl") return __builtin_cpu_supports("avx512vl");
  if (f == "avx512dq") return __builtin_cpu_supports("avx512dq");
  if (f == "avx512cd") return __builtin_cpu_supports("avx512cd");
  if (f == "avx512vpopcntdq") return __builtin_cpu_supports("avx512vpopcntdq");
#endif
  (void)f;
  return false;
}

// The features of KMINI_MK_REQUIRES (comma separated) this CPU lacks, or "".
std::string missing(const std::string& list) {
  std::string out, f;
  std::istringstream in(list);
  while (std::getline(in, f, ','))
    if (!f.empty() && !cpu_has(f)) out += (out.empty() ? "" : ", ") + f;
  return out;
}

struct Variant {
  int index;
  const char* name;
  std::vector<std::string> needs;  // beyond the target's
};

const Variant kVariants[] = {{0, "portable", {}},
                             {1, "avx2", {"avx2"}},
                             {2, "avx512bw", {"avx512f", "avx512bw"}},
                             {3, "avx512_vpopcntdq", {"avx512f", "avx512vpopcntdq"}}};

// 8 rows of 520 words: random at density 1/4 and 1/2, all ones, all zeros.
std::vector<Word> test_rows(int pattern) {
  std::vector<Word> rows(8 * 520);
  std::uint64_t x = 0x9e3779b97f4a7c15ull * (pattern + 1);
  auto next = [&] {  // splitmix64
    std::uint64_t z = (x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  };
  for (Word& w : rows) {
    switch (pattern) {
      case 0: w = next() & next(); break;
      case 1: w = next(); break;
      case 2: w = ~Word(0); break;
      default: w = 0; break;
    }
  }
  return rows;
}

void check(const Variant& v) {
  const std::string lacking = missing(KMINI_MK_REQUIRES);
  if (!lacking.empty())
    GTEST_SKIP() << "this CPU lacks " << lacking << ", which this test binary's target (-march=" KMINI_MK_TARGET
                 << ") needs";
  if (!(compiled_mask() & (1u << v.index)))
    GTEST_SKIP() << v.name << " is not compiled in for -march=" KMINI_MK_TARGET
                 << " (its instructions are not in the target)";
  for (const auto& f : v.needs)
    if (!cpu_has(f)) GTEST_SKIP() << "this CPU lacks " << f << ", which " << v.name << " needs";
  constexpr int kStride = 6;
  for (int pattern = 0; pattern < 4; ++pattern) {
    const std::vector<Word> rows = test_rows(pattern);
    const Word* ra[4];
    const Word* rb[4];
    for (int r = 0; r < 4; ++r) {
      ra[r] = &rows[r * 520];
      rb[r] = &rows[(4 + r) * 520 + 8];  // B's rows start one vector later
    }
    for (int nk : {8, 16, 56, 64, 72, 120, 128, 136, 248, 256, 264, 512}) {
      std::vector<std::uint32_t> got(4 * kStride), plain(4 * kStride);
      for (int e = 0; e < 4 * kStride; ++e) got[e] = plain[e] = 7u * e + 3u;  // sums are added to c
      for (int r = 0; r < 4; ++r)
        for (int s = 0; s < 4; ++s)
          for (int k = 0; k < nk; ++k)
            for (Word x = ra[r][k] & rb[s][k]; x != 0; x &= x - 1) ++plain[r * kStride + s];
      ASSERT_TRUE(kmini::gram::mk_test::rows_block(v.index, ra, rb, nk, got.data(), kStride));
      EXPECT_EQ(got, plain) << v.name << ", pattern " << pattern << ", nk " << nk;
      if (nk == kmini::gram::mk_test::chunk_words()) {
        for (int e = 0; e < 4 * kStride; ++e) got[e] = 7u * e + 3u;
        ASSERT_TRUE(kmini::gram::mk_test::rows_block_chunk(v.index, ra, rb, got.data(), kStride));
        EXPECT_EQ(got, plain) << v.name << ", pattern " << pattern << ", the compile-time chunk";
      }
    }
  }
  // An entry pattern 2 gives: all ones, 64 bits per word.
  const std::vector<Word> ones = test_rows(2);
  const Word* r4[4] = {&ones[0], &ones[520], &ones[1040], &ones[1560]};
  std::vector<std::uint32_t> c(16, 0);
  ASSERT_TRUE(kmini::gram::mk_test::rows_block(v.index, r4, r4, 512, c.data(), 4));
  for (std::uint32_t e : c) EXPECT_EQ(e, 512u * 64u) << v.name;
}

}  // namespace

TEST(GramMicroKernels, Portable) { check(kVariants[0]); }
TEST(GramMicroKernels, Avx2) { check(kVariants[1]); }
TEST(GramMicroKernels, Avx512bw) { check(kVariants[2]); }
TEST(GramMicroKernels, Avx512Vpopcntdq) { check(kVariants[3]); }
