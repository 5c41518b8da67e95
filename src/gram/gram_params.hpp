#pragma once
// Tile shapes of the Gram kernel per backend. A team computes one TILE x TILE
// tile of C; the two row panels are staged in team scratch CHUNK words at a
// time; each thread accumulates MR x NR micro-tiles of C in registers.
#include <Kokkos_Core.hpp>

#include <cstdint>

namespace kmini::gram {

#if defined(KOKKOS_ENABLE_CUDA) || defined(KOKKOS_ENABLE_HIP) || defined(KOKKOS_ENABLE_SYCL)
// GPU: 64 x 64 tiles, 256 threads each owning one 4 x 4 micro-tile; panels in
// shared memory word-major ([k][row], row stride TILE + 1 words) so a warp
// reads 32 consecutive rows of one word: conflict-free, and the +1 keeps the
// staging writes (row-major global reads) off a single bank.
struct TileParams {
  static constexpr int tile = 64;
  static constexpr int stage_words = 1;  // staging: one word per thread, coalesced
  static constexpr int granule = 1;      // packed rows are padded to this many words
  static constexpr int chunk = 16;       // words per stage: 2 x 64 x 17 x 8 B + 16 KiB C tile = 33 KiB
  static constexpr int mr = 4, nr = 4;
  static constexpr int team_size = (tile / mr) * (tile / nr);
  static constexpr bool word_major = true;   // scratch [k][row]
  static constexpr bool interleaved = true;  // thread's rows are tx, tx + 16, ...
  static constexpr int pad = 1;              // words added to each scratch line
  using acc_type = std::uint32_t;            // __popcll returns int; 32-bit adds
};
#else
// Host (Serial/OpenMP): one thread per team works through the tile's 4 x 4
// micro-tiles. Panels stay row-major ([row][k]) so the k loop is contiguous
// and the compiler vectorises it (vpopcntq on AVX-512 VPOPCNTDQ CPUs): 16
// zmm accumulators, 8 loads per 16 AND+popcount+add. 64 x 256-word panels
// are 128 KiB each (L2-resident); 4 rows x 2 KiB of each stay in L1.
// Measured on the Xeon (Sapphire Rapids) of the dev machine: see README.
struct TileParams {
  static constexpr int tile = 64;
  static constexpr int chunk = 256;
  static constexpr int stage_words = chunk;  // staging copies whole panel rows
  static constexpr int granule = 8;          // packed rows padded to whole 512-bit vectors
  static constexpr int mr = 4, nr = 4;
  static constexpr int team_size = 1;
  static constexpr bool word_major = false;   // scratch [row][k]
  static constexpr bool interleaved = false;  // micro-tile rows are contiguous
  static constexpr int pad = 8;               // one cache line: avoids 4 KiB set aliasing
  using acc_type = std::uint64_t;             // matches vpopcntq's 64-bit lanes
};
#endif

}  // namespace kmini::gram
