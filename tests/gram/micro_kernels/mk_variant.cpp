// Compiled once per test target with that target's -march (tests/gram/CMakeLists.txt):
// the micro-kernels its instruction set selects, called only after
// test_micro_kernels.cpp has checked that this CPU runs the target. No static
// initialisers here: nothing of the target runs before that check.
#include "gram/micro_kernels/mk_variant.hpp"

#include "gram/impl/gram_micro_kernels.hpp"

namespace kmini::gram::mk_test {

unsigned compiled_mask() {
  unsigned mask = 0;
  for (std::size_t i = 0; i < std::size(kMicroKernels); ++i)
    if (micro_kernel_compiled(kMicroKernels[i])) mask |= 1u << i;
  return mask;
}

bool rows_block(int kernel, const std::uint64_t* const* ra, const std::uint64_t* const* rb, int nk, std::uint32_t* c,
                int stride) {
  const MicroKernel k = kMicroKernels[kernel];
  if (!micro_kernel_compiled(k)) return false;
  with_micro_kernel(k, [&](auto mk) { gram::rows_block<Tuning, 0, decltype(mk)::value>(ra, rb, nk, c, stride); });
  return true;
}

bool rows_block_chunk(int kernel, const std::uint64_t* const* ra, const std::uint64_t* const* rb, std::uint32_t* c,
                      int stride) {
  const MicroKernel k = kMicroKernels[kernel];
  if (!micro_kernel_compiled(k)) return false;
  with_micro_kernel(k, [&](auto mk) {
    gram::rows_block<Tuning, Tuning::chunk, decltype(mk)::value>(ra, rb, Tuning::chunk, c, stride);
  });
  return true;
}

int chunk_words() { return Tuning::chunk; }

}  // namespace kmini::gram::mk_test
