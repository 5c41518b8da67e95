#pragma once
// The wgmma probe's kernel: the dense rate of m64nNk256 .b1 .and.popc on
// operands staged once in shared memory (ProbeTiles, gram_wgmma_layout.hpp),
// the roof the wgmma engine is measured against. Shared by the standalone
// probe (benchmarks/wgmma_probe) and kmini's own probe of the engine
// (gram_wgmma_engine.cu: results.json's probe_tensor_core_peak_bit_ops_per_s
// where the engine ran). Device code for sm_90a only, as gram_wgmma_instructions.cuh.
#include "gram/impl/gram_wgmma_instructions.cuh"
#include "gram/impl/gram_wgmma_layout.hpp"

#include <cstdint>

namespace kmini::gram::wgmma::probe_kernels {

using namespace instructions;

__device__ __forceinline__ std::uint64_t global_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Thread 0 of block 0 records the SM clock and the global timer at both ends,
// so the report gives the clock the kernel ran at.
struct Clocks {
  std::uint64_t cycles0, ns0, cycles1, ns1;
};

// One warpgroup per block. A and B come row-major from global memory and are
// staged into the tiles (ProbeTiles); then `reps` times the kKSteps x Sets
// instructions into Sets accumulators. d (one block, the check):
// D row-major, 64 x Sets N; else each thread's sum goes to sink.
template <int N, int Sets>
__global__ void __launch_bounds__(kWarpgroup) wgmma_kernel(const std::uint32_t* a, const std::uint32_t* b, int reps,
                                                           std::int32_t* d, std::int32_t* sink, Clocks* clocks) {
  extern __shared__ __align__(128) unsigned char smem[];
  constexpr ProbeTiles kTiles{N, Sets};
  constexpr int kCols = kTiles.cols();
  const int t = threadIdx.x;
  const bool timer = blockIdx.x == 0 && t == 0;
  Clocks c{};
  if (timer) c.cycles0 = clock64(), c.ns0 = global_ns();
  for (int e = t; e < kM * kInputWords; e += kWarpgroup)
    *reinterpret_cast<std::uint32_t*>(smem + kTiles.a_word(e)) = a[e];
  for (int e = t; e < kCols * kInputWords; e += kWarpgroup)
    *reinterpret_cast<std::uint32_t*>(smem + kTiles.b_word(e)) = b[e];
  fence_proxy_async();
  __syncthreads();
  const std::uint32_t base = static_cast<std::uint32_t>(__cvta_generic_to_shared(smem));
  std::int32_t acc[Sets][N / 2];
#pragma unroll
  for (int s = 0; s < Sets; ++s)
#pragma unroll
    for (int j = 0; j < N / 2; ++j) acc[s][j] = 0;
  for (int rep = 0; rep < reps; ++rep) {
    wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < kKSteps; ++ks)
#pragma unroll
      for (int s = 0; s < Sets; ++s)
        wgmma<N>(acc[s], descriptor(base + kTiles.a_tile(ks)), descriptor(base + kTiles.b_set(ks, s)));
    wgmma_commit();
    wgmma_wait<1>();  // one group in flight while the next is issued
  }
  wgmma_wait<0>();
  if (d != nullptr && blockIdx.x == 0) {
#pragma unroll
    for (int s = 0; s < Sets; ++s)
#pragma unroll
      for (int j = 0; j < N / 2; ++j) d[acc_row(t, j) * kCols + s * N + acc_col(t, j)] = acc[s][j];
  } else {
    std::int32_t sum = 0;
#pragma unroll
    for (int s = 0; s < Sets; ++s)
#pragma unroll
      for (int j = 0; j < N / 2; ++j) sum += acc[s][j] * (j + 1);
    sink[blockIdx.x * kWarpgroup + t] = sum;
  }
  if (timer) {
    c.cycles1 = clock64(), c.ns1 = global_ns();
    *clocks = c;
  }
}

}  // namespace kmini::gram::wgmma::probe_kernels
