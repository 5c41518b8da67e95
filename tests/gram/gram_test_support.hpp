#pragma once
// The Gram kernels against the host reference (plain bit loops), on the
// default execution space: edge shapes, densities, slices, packed input,
// Jaccard, summaries, the slice plan and the multi-block .npy writer.
#include "gram/gram.hpp"
#include "gram/gram_sparse.hpp"
#include "gram/impl/gram_kernels.hpp"
#include "gram/impl/gram_reference.hpp"
#include "gram/impl/gram_top_k.hpp"
#include "io/npy.hpp"
#include "support/test_support.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

namespace kmini {

using Exec = TEST_EXECSPACE;  // the category (backends/category_*.hpp)
using namespace gram;

namespace {

inline Source random_source(std::int64_t rows, std::int64_t cols, double density, std::uint64_t seed) {
  Source s;
  s.kind = Source::Kind::Random;
  s.rows = rows;
  s.cols = cols;
  s.density = density;
  s.seed = seed;
  return s;
}

// Every engine this build runs on the category's space: the tensor-core tiles
// (CUDA, sm_80+) are checked wherever the popcount ones are.
// The host micro-kernels this build contains (GPU builds: the portable one).
inline std::vector<MicroKernel> test_micro_kernels() {
  std::vector<MicroKernel> k;
  for (MicroKernel m : kMicroKernels)
    if (micro_kernel_compiled(m) && (!Tuning::staged || m == MicroKernel::Portable)) k.push_back(m);
  return k;
}

inline std::vector<Engine> test_engines() {
  std::vector<Engine> e{Engine::Popcount};
#if defined(KOKKOS_ENABLE_CUDA)
  if (tensor_core::kAvailable && std::is_same_v<Exec, Kokkos::Cuda>) e.push_back(Engine::TensorCore);
#endif
  return e;
}

// Full C computed slice by slice with height h, assembled on the host
// (lower part of each slice row from the mirror of earlier slices).
inline std::vector<std::int32_t> gram_by_slices(const PackedView<MemSpace>& a, std::int64_t rows, std::int64_t h,
                                                Engine engine = Engine::Popcount, MicroKernel mk = kAutoMicroKernel) {
  std::vector<std::int32_t> c(static_cast<std::size_t>(rows * rows), -1);
  Kokkos::View<std::int32_t*, MemSpace> out("out", h * rows);
  for (std::int64_t r0 = 0; r0 < rows; r0 += h) {
    const SliceGeometry g{rows, r0, std::min(rows, r0 + h)};
    Kokkos::deep_copy(out, -7);
    gram_slice(Exec(), a, g, out, engine, mk);
    auto ho = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
    for (std::int64_t i = g.r0; i < g.r1; ++i)
      for (std::int64_t j = g.r0; j < rows; ++j) {
        const std::int32_t v = ho((i - r0) * g.width() + (j - r0));
        c[i * rows + j] = v;
        c[j * rows + i] = v;
      }
  }
  return c;
}

}  // namespace

// A functor, as every kernel in a header (see gram_kernels.hpp: nvcc's
// extended lambdas in headers included by several translation units).
template <class View>
struct ClearRow {
  View a;
  std::int64_t row;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t w) const { a(row, w) = 0; }
};

template <class View>
void clear_row(const View& a, std::int64_t row) {
  Kokkos::parallel_for("kmini::test::clear_row", Kokkos::RangePolicy<Exec>(Exec(), 0, a.extent(1)),
                       ClearRow<View>{a, row});
}

}  // namespace kmini
