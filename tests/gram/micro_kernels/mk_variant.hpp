#pragma once
// The micro-kernels of one target (mk_variant.cpp, compiled with that target's
// -march) behind plain functions, so that the test bodies (test_micro_kernels.cpp,
// compiled for the baseline x86-64) can check the CPU before anything of the
// target runs: plain types only, nothing shared with the other file.
#include <cstdint>

namespace kmini::gram::mk_test {

// Bit i: kMicroKernels[i] (portable, avx2, avx512bw, avx512_vpopcntdq) is compiled in for this target.
unsigned compiled_mask();
// rows_block<Tuning, 0, kMicroKernels[kernel]>(ra, rb, nk, c, stride); false if not compiled in.
bool rows_block(int kernel, const std::uint64_t* const* ra, const std::uint64_t* const* rb, int nk, std::uint32_t* c,
                int stride);
// The same with the compile-time count of a full host chunk (nk = Tuning::chunk).
bool rows_block_chunk(int kernel, const std::uint64_t* const* ra, const std::uint64_t* const* rb, std::uint32_t* c,
                      int stride);
int chunk_words();

}  // namespace kmini::gram::mk_test
