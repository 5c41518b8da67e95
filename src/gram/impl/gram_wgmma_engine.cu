// gram's wgmma engine (gram.tensor_core_tile: warpgroup64x128): Hopper's
// warpgroup MMA wgmma.mma_async.sync.aligned.m64n128k256.s32.b1.b1.and.popc,
// its accumulators in registers, A and B staged by cp.async in a four-stage
// pipeline, a persistent grid of at most as many blocks as the device runs at
// once taking the block tiles in turn. Shape and index math:
// gram_wgmma_layout.hpp (EngineShape), checked bit for bit on the CPU by an
// emulation of this kernel (tests/gram/test_gram_wgmma_engine.cpp).
//
// Compiled by nvcc itself for sm_90a alone (the CMake option
// KMINI_WGMMA_ENGINE in CUDA builds), Kokkos-free: wgmma exists on sm_90a
// only, and Kokkos' own sm_90 pass would reject it. The Kokkos side
// (gram_kernels.hpp) calls launch() on its execution space instance's stream.
#include "gram/impl/gram_cp_async.cuh"
#include "gram/impl/gram_wgmma.hpp"
#include "gram/impl/gram_wgmma_instructions.cuh"
#include "gram/impl/gram_wgmma_layout.hpp"
#include "gram/impl/gram_wgmma_probe.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace kmini::gram::wgmma {

namespace {

using S = EngineShape;
namespace tc = tensor_core;

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "gram_wgmma_engine.cu is device code for sm_90a alone (-gencode=arch=compute_90a,code=sm_90a)"
#endif
#if defined(__CUDA_ARCH__)
#define KMINI_WGMMA_DEVICE_CODE 1
#else
#define KMINI_WGMMA_DEVICE_CODE 0
#endif

#if KMINI_WGMMA_DEVICE_CODE
// Stage k of the block's rows of A and B (BlockRows) into its buffer at
// `stage` (shared address): A's panel, then B's; zeros past the rows and words.
__device__ __forceinline__ void load_stage(const tc::BlockedArgs& p, unsigned stage, const tc::BlockRows& rows,
                                           std::int64_t k) {
  const int t = threadIdx.x;
#pragma unroll
  for (int q = 0; q < S::copies; ++q) {
    const int row = copy_row(t, q);
    const std::int64_t w = stage_word(k) + copy_word(t, q);  // even, as `words` is: both words in, or neither
    const unsigned at = stage + copy_offset(t, q);
    cp_async::copy16(at, rows.a_source(p, row, w), rows.a_reads(p, row, w));
    cp_async::copy16(at + S::panel_bytes, rows.b_source(p, row, w), rows.b_reads(p, row, w));
  }
}
#endif

// Block tiles blockIdx.x, blockIdx.x + gridDim.x, ... of window p.
__global__ void __launch_bounds__(S::threads, 2) wgmma_tiles(const tc::BlockedArgs p, const std::int64_t tiles) {
#if KMINI_WGMMA_DEVICE_CODE
  using namespace instructions;
  extern __shared__ __align__(128) unsigned char smem[];
  const int g = threadIdx.x / kWarpgroup, tw = threadIdx.x % kWarpgroup;
  const unsigned base = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  const std::int64_t stages_k = (p.words + S::stage_words - 1) / S::stage_words;
  for (std::int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    std::int64_t l, m;
    tc::block_tile(p, tile, l, m);
    const tc::BlockRows rows = tc::BlockRows::of(p, l, m, S::block);
    const auto buffer = [base](std::int64_t k) { return base + unsigned(stage_buffer(k)) * S::stage_bytes; };
    std::int32_t acc[S::acc];
#pragma unroll
    for (int j = 0; j < S::acc; ++j) acc[j] = 0;
#pragma unroll
    for (int s = 0; s < kPrologueStages; ++s) {
      if (s < stages_k) load_stage(p, buffer(s), rows, s);
      cp_async::commit();
    }
    for (std::int64_t kt = 0; kt < stages_k; ++kt) {
      // This thread's copies of stage kt have landed (the younger groups
      // may still be pending), made visible to wgmma's async proxy and, past
      // the barrier, every thread's. Past it too, every warpgroup has waited
      // for its wgmma group kt - 2 (below), whose buffer the next copy fills.
      cp_async::wait<kPrologueStages - 1>();
      fence_proxy_async();
      __syncthreads();
      const std::int64_t next = stage_copied_at(kt);
      if (next < stages_k) load_stage(p, buffer(next), rows, next);
      cp_async::commit();
      wgmma_fence();
#pragma unroll
      for (int s = 0; s < S::stage_steps; ++s)
        wgmma<S::n>(acc, descriptor(a_operand(buffer(kt), g, s)), descriptor(b_operand(buffer(kt), s)));
      wgmma_commit();
      wgmma_wait<1>();  // group kt - 1 done: one group in flight while the next stage is waited for
    }
    wgmma_wait<0>();
    const bool mirror = p.triangular && m > l;
#pragma unroll
    for (int j = 0; j < S::acc; ++j)
      tc::store_element(p, rows.i0 + g * kM + acc_row(tw, j), rows.j0 + acc_col(tw, j), mirror, acc[j]);
    __syncthreads();  // every warpgroup done with the buffers before the next tile's copies
  }
#else
  (void)p;
  (void)tiles;
#endif
}

// Device buffers freed on every path out.
struct DeviceBuffers {
  std::vector<void*> held;
  ~DeviceBuffers() {
    for (void* p : held) cudaFree(p);
  }
  template <class T>
  cudaError_t alloc(T*& p, std::size_t count) {
    void* v = nullptr;
    const cudaError_t e = cudaMalloc(&v, count * sizeof(T));
    if (e == cudaSuccess) held.push_back(v);
    p = static_cast<T*>(v);
    return e;
  }
};

}  // namespace

int device_capability() {
  int device = 0, major = 0, minor = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
    (void)cudaGetLastError();  // no device: not an error left for the next call
    return 0;
  }
  return 10 * major + minor;
}

const char* launch(const tc::BlockedArgs& p, std::int64_t tiles, void* stream) {
  if (tiles <= 0) return nullptr;
  int device = 0, sms = 0, per_sm = 0;
  cudaError_t e = cudaGetDevice(&device);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  if (e == cudaSuccess)
    e = cudaFuncSetAttribute(wgmma_tiles, cudaFuncAttributeMaxDynamicSharedMemorySize, int(S::smem_bytes));
  if (e == cudaSuccess)
    e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, wgmma_tiles, S::threads, S::smem_bytes);
  if (e != cudaSuccess) return cudaGetErrorString(e);
  const std::int64_t grid = std::min<std::int64_t>(tiles, std::int64_t(sms) * std::max(1, per_sm));
  wgmma_tiles<<<static_cast<unsigned>(grid), S::threads, S::smem_bytes, static_cast<cudaStream_t>(stream)>>>(p, tiles);
  e = cudaGetLastError();
  return e == cudaSuccess ? nullptr : cudaGetErrorString(e);
}

const char* probe(void* stream_handle, double& bit_pairs_per_s) {
  using probe_kernels::Clocks;
  constexpr int kN = 128;  // the engine's instruction: m64n128k256
  const auto kernel = probe_kernels::wgmma_kernel<kN, 1>;
  const std::uint32_t smem = ProbeTiles{kN, 1}.bytes();
  const auto stream = static_cast<cudaStream_t>(stream_handle);
  int device = 0, sms = 0, per_sm = 0;
  cudaError_t e = cudaGetDevice(&device);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  if (e == cudaSuccess) e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
  if (e == cudaSuccess) e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kWarpgroup, smem);
  DeviceBuffers buffers;
  std::uint32_t *a = nullptr, *b = nullptr;
  std::int32_t* sink = nullptr;
  Clocks* clocks = nullptr;
  const int blocks = sms * std::max(1, per_sm);
  if (e == cudaSuccess) e = buffers.alloc(a, std::size_t(kM) * kInputWords);
  if (e == cudaSuccess) e = buffers.alloc(b, std::size_t(kN) * kInputWords);
  if (e == cudaSuccess) e = buffers.alloc(sink, std::size_t(blocks) * kWarpgroup);
  if (e == cudaSuccess) e = buffers.alloc(clocks, 1);
  if (e == cudaSuccess) e = cudaMemsetAsync(a, 0x5A, std::size_t(kM) * kInputWords * 4, stream);  // operands: any bits
  if (e == cudaSuccess) e = cudaMemsetAsync(b, 0xC3, std::size_t(kN) * kInputWords * 4, stream);
  cudaEvent_t start = nullptr, stop = nullptr;
  if (e == cudaSuccess) e = cudaEventCreate(&start);
  if (e == cudaSuccess) e = cudaEventCreate(&stop);
  // One launch of `reps` reps: its seconds.
  const auto timed = [&](int reps, double& seconds) {
    cudaError_t r = cudaEventRecord(start, stream);
    if (r == cudaSuccess) kernel<<<blocks, kWarpgroup, smem, stream>>>(a, b, reps, nullptr, sink, clocks);
    if (r == cudaSuccess) r = cudaGetLastError();
    if (r == cudaSuccess) r = cudaEventRecord(stop, stream);
    if (r == cudaSuccess) r = cudaEventSynchronize(stop);
    float ms = 0;
    if (r == cudaSuccess) r = cudaEventElapsedTime(&ms, start, stop);
    seconds = ms * 1e-3;
    return r;
  };
  // reps for about 10 ms from a short launch, then the best of three.
  double seconds = 0, best = 0;
  int reps = 256;
  if (e == cudaSuccess) e = timed(reps, seconds);
  if (e == cudaSuccess) reps = int(std::min(1e8, std::max(1.0, reps * 0.01 / std::max(seconds, 1e-6))));
  for (int i = 0; i < 3 && e == cudaSuccess; ++i) {
    e = timed(reps, seconds);
    if (e == cudaSuccess && seconds > 0)
      best = std::max(best, double(blocks) * reps * kKSteps * wgmma_bit_pairs(kN) / seconds);
  }
  if (start) cudaEventDestroy(start);
  if (stop) cudaEventDestroy(stop);
  if (e != cudaSuccess) return cudaGetErrorString(e);
  bit_pairs_per_s = best;
  return nullptr;
}

}  // namespace kmini::gram::wgmma
