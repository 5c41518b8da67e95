#pragma once
// The tensor-core engine's blocked kernel (gram.tensor_core_tile: warp32x64,
// warp64x64): one CUDA block per 128 x 128 tile of C, each warp a 32 x 64 or
// 64 x 64 part of it with its accumulators in registers for the whole k loop;
// k is staged 16 words (1024 bits) at a time into shared memory by cp.async in
// a three-stage pipeline (one barrier per stage), read into registers by
// ldmatrix and multiplied by mma.m16n8k256 .b1 .and.popc (gram_tensor_core.hpp
// has the instruction and its fragment tables). Each C element is written once,
// from the registers (and once more mirrored, above the diagonal of a
// triangular window).
//
// Against the 64 x 64 tiles (gram.tensor_core_tile: block64, the team kernel of
// gram_kernels.hpp): twice the bit-ops per staged byte, no C tile in shared
// memory, loads overlapped with the mma. The 96 KiB of shared memory is more
// than a Kokkos team may have (48 KiB less Kokkos' reserve), so this is a CUDA
// kernel launched on the execution space instance's stream, reported to Kokkos
// Tools under its name.
//
// The index functions below are host-callable: the CPU tests run the whole
// kernel in a warp emulation (ldmatrix and the mma per the PTX ISA's tables) at
// odd shapes against the popcount reference
// (tests/gram/test_gram_tensor_core.cpp).
#include "gram/impl/gram_block_tiles.hpp"
#include "gram/impl/gram_cp_async.cuh"
#include "gram/impl/gram_tensor_core.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>
#endif

namespace kmini::gram::tensor_core {

using Tile = TensorCoreTile;
constexpr Tile resolved(Tile t) { return t == Tile::Auto ? kDefaultTensorCoreTile : t; }

// The blocked kernel's shape: a square block tile (a triangular window's
// diagonal blocks and mirror need one), WarpM x WarpN of it per warp.
template <int WarpM, int WarpN>
struct Blocked {
  static constexpr int block = 128;
  static constexpr int warp_m = WarpM, warp_n = WarpN;
  static constexpr int warps_m = block / WarpM, warps_n = block / WarpN, warps = warps_m * warps_n;
  static constexpr int threads = warps * kLanes;
  static constexpr int mt = WarpM / kM, nt = WarpN / kN;   // mma tiles per warp
  static constexpr int stage_words = 16;                   // k per stage: 4 mma steps
  static constexpr int chunks = stage_words / 2;           // 16-byte chunks of a row in a stage
  static constexpr int steps = stage_words / kKWords;      // mma k steps per stage
  static constexpr int row_bytes = stage_words * 8;        // 128: the swizzle's period
  static constexpr int panel_bytes = block * row_bytes;    // 16 KiB
  static constexpr int stage_bytes = 2 * panel_bytes;      // A's and B's panels
  static constexpr int stages = 3;                         // cp.async pipeline depth
  static constexpr int smem_bytes = stages * stage_bytes;  // 96 KiB: two blocks per SM
  static constexpr int copies = block * chunks / threads;  // 16-byte copies per thread and panel
  static constexpr int min_blocks = 2;                     // __launch_bounds__: registers for two blocks
  static_assert(block % WarpM == 0 && block % WarpN == 0 && WarpM % kM == 0 && nt % 2 == 0, "warp tile");
  static_assert(block * chunks % threads == 0, "whole copies per thread");
};
using Warp32x64 = Blocked<32, 64>;  // 8 warps
using Warp64x64 = Blocked<64, 64>;  // 4 warps

// Byte offset of 16-byte chunk `chunk` (0..7) of panel row `row`: rows of
// 128 B with the chunk index XORed by the row's low 3 bits, so that the 8 row
// addresses of one ldmatrix phase (8 consecutive rows, one chunk) and the 8
// copies of one row land in 8 different 16-byte bank groups.
KOKKOS_INLINE_FUNCTION constexpr int smem_offset(int row, int chunk) { return row * 128 + ((chunk ^ (row & 7)) << 4); }

// Which (row, chunk) of a panel copy q of thread t fills: 8 consecutive
// threads one row's 128 contiguous global bytes.
template <class S>
KOKKOS_INLINE_FUNCTION constexpr int copy_row(int t, int q) {
  return (t + q * S::threads) / S::chunks;
}
template <class S>
KOKKOS_INLINE_FUNCTION constexpr int copy_chunk(int t, int q) {
  return (t + q * S::threads) % S::chunks;
}

// The row and chunk whose address lane `lane` gives to ldmatrix .x4 for A's
// mma tile at rows m0.. and k step s: matrices 0..3 are a0..a3 (rows 0-7 /
// 8-15 of the tile, k bits 0-127 / 128-255 of the step).
KOKKOS_INLINE_FUNCTION constexpr int ldm_a_row(int lane, int m0) { return m0 + (lane & 7) + ((lane >> 3) & 1) * 8; }
KOKKOS_INLINE_FUNCTION constexpr int ldm_a_chunk(int lane, int s) { return 2 * s + (lane >> 4); }
// For B's two n8 tiles at rows n0.. and n0 + 8..: matrices 0..3 are b0, b1 of
// the first and b0, b1 of the second.
KOKKOS_INLINE_FUNCTION constexpr int ldm_b_row(int lane, int n0) { return n0 + (lane & 7) + (lane >> 4) * 8; }
KOKKOS_INLINE_FUNCTION constexpr int ldm_b_chunk(int lane, int s) { return 2 * s + ((lane >> 3) & 1); }

// The warp's part of the block tile.
template <class S>
KOKKOS_INLINE_FUNCTION constexpr int warp_row0(int warp) {
  return (warp % S::warps_m) * S::warp_m;
}
template <class S>
KOKKOS_INLINE_FUNCTION constexpr int warp_col0(int warp) {
  return (warp / S::warps_m) * S::warp_n;
}

#if defined(KOKKOS_ENABLE_CUDA)

namespace device {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
__device__ __forceinline__ void ldmatrix_x4(unsigned addr, std::uint32_t& r0, std::uint32_t& r1, std::uint32_t& r2,
                                            std::uint32_t& r3) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(addr));
}

// One stage: the block's rows of A and B (BlockRows), words k0 .. k0 + 15,
// into the stage's two panels.
template <class S>
__device__ __forceinline__ void load_stage(const BlockedArgs& p, unsigned stage, const BlockRows& r, std::int64_t k0) {
  const int t = threadIdx.x;
#pragma unroll
  for (int q = 0; q < S::copies; ++q) {
    const int row = copy_row<S>(t, q), chunk = copy_chunk<S>(t, q);
    const std::int64_t w = k0 + 2 * chunk;
    cp_async::copy16(stage + smem_offset(row, chunk), r.a_source(p, row, w), r.a_reads(p, row, w));
    cp_async::copy16(stage + S::panel_bytes + smem_offset(row, chunk), r.b_source(p, row, w), r.b_reads(p, row, w));
  }
}

// The mma of one stage on the warp's tiles.
template <class S>
__device__ __forceinline__ void stage_mma(unsigned stage, int wr, int wc, int lane,
                                          std::int32_t (&acc)[S::mt][S::nt][4]) {
#pragma unroll
  for (int s = 0; s < S::steps; ++s) {
    std::uint32_t a[S::mt][4], b[S::nt][2];
#pragma unroll
    for (int i = 0; i < S::mt; ++i) {
      const int row = ldm_a_row(lane, wr + i * kM);
      ldmatrix_x4(stage + smem_offset(row, ldm_a_chunk(lane, s)), a[i][0], a[i][1], a[i][2], a[i][3]);
    }
#pragma unroll
    for (int j = 0; j < S::nt; j += 2) {
      const int row = ldm_b_row(lane, wc + j * kN);
      ldmatrix_x4(stage + S::panel_bytes + smem_offset(row, ldm_b_chunk(lane, s)), b[j][0], b[j][1], b[j + 1][0],
                  b[j + 1][1]);
    }
#pragma unroll
    for (int i = 0; i < S::mt; ++i)
#pragma unroll
      for (int j = 0; j < S::nt; ++j) mma_and_popc(a[i], b[j], acc[i][j]);
  }
}
#endif

template <class S>
__global__ void __launch_bounds__(S::threads, S::min_blocks) blocked_tiles(const BlockedArgs p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  extern __shared__ __align__(128) unsigned char smem[];
  const int warp = threadIdx.x / kLanes, lane = threadIdx.x % kLanes;
  std::int64_t l, m;
  block_tile(p, blockIdx.x, l, m);
  const BlockRows rows = BlockRows::of(p, l, m, S::block);
  const std::int64_t i0 = rows.i0, j0 = rows.j0;
  const unsigned base = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  const std::int64_t stages_k = (p.words + S::stage_words - 1) / S::stage_words;
  const int wr = warp_row0<S>(warp), wc = warp_col0<S>(warp);
  std::int32_t acc[S::mt][S::nt][4] = {};
#pragma unroll
  for (int s = 0; s < S::stages - 1; ++s) {
    if (s < stages_k) load_stage<S>(p, base + s * S::stage_bytes, rows, s * S::stage_words);
    cp_async::commit();
  }
  for (std::int64_t kt = 0; kt < stages_k; ++kt) {
    // Stage kt has landed (at most stages - 2 younger groups pending), and
    // every warp is done with stage kt - 1, whose buffer the next copy fills.
    cp_async::wait<S::stages - 2>();
    __syncthreads();
    const std::int64_t next = kt + S::stages - 1;
    if (next < stages_k) load_stage<S>(p, base + (next % S::stages) * S::stage_bytes, rows, next * S::stage_words);
    cp_async::commit();
    stage_mma<S>(base + (kt % S::stages) * S::stage_bytes, wr, wc, lane, acc);
  }
  const bool mirror = p.triangular && m > l;
#pragma unroll
  for (int i = 0; i < S::mt; ++i)
#pragma unroll
    for (int j = 0; j < S::nt; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r)
        store_element(p, i0 + wr + i * kM + c_row(lane, r), j0 + wc + j * kN + c_col(lane, r), mirror, acc[i][j][r]);
#else
  (void)p;
#endif
}

}  // namespace device

// Window p of C with the blocked kernel of shape S, on exec's stream.
template <class S>
void launch_blocked(const Kokkos::Cuda& exec, const BlockedArgs& p, std::int64_t blocks) {
  const auto check = [](cudaError_t e, const char* what) {
    if (e != cudaSuccess)
      throw std::runtime_error(std::string("kmini::gram::tiles_tensor_core: ") + what + ": " + cudaGetErrorString(e));
  };
  check(cudaFuncSetAttribute(device::blocked_tiles<S>, cudaFuncAttributeMaxDynamicSharedMemorySize, S::smem_bytes),
        "shared memory");
  std::uint64_t id = 0;
  Kokkos::Tools::beginParallelFor("kmini::gram::tiles_tensor_core", Kokkos::Tools::Experimental::device_id(exec), &id);
  device::blocked_tiles<S><<<static_cast<unsigned>(blocks), S::threads, S::smem_bytes, exec.cuda_stream()>>>(p);
  check(cudaGetLastError(), "launch");
  Kokkos::Tools::endParallelFor(id);
}

#endif  // KOKKOS_ENABLE_CUDA

}  // namespace kmini::gram::tensor_core
