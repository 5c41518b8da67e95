#pragma once
// Tile shapes of the Gram kernel per backend. A team computes one TILE x TILE
// tile of C; the two row panels are staged in team scratch CHUNK words at a
// time; each thread accumulates MR x NR micro-tiles of C in registers.
#include "gram/impl/gram_block_tiles.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>

// Host micro-kernels in intrinsics where the compiler targets their
// instruction set (KMINI_NATIVE, or KMINI_ARCH): AVX2 and AVX-512BW
// (Harley-Seal carry-save adders, vpshufb nibble popcount), AVX-512 VPOPCNTDQ;
// the portable one always. Never in a GPU build (host or device pass).
#if !defined(KOKKOS_ENABLE_CUDA) && !defined(KOKKOS_ENABLE_HIP) && !defined(KOKKOS_ENABLE_SYCL) && \
    !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
#define KMINI_GRAM_HOST_SIMD 1
#else
#define KMINI_GRAM_HOST_SIMD 0
#endif
#if KMINI_GRAM_HOST_SIMD && defined(__AVX2__)
#define KMINI_GRAM_AVX2 1
#else
#define KMINI_GRAM_AVX2 0
#endif
#if KMINI_GRAM_HOST_SIMD && defined(__AVX512F__) && defined(__AVX512BW__)
#define KMINI_GRAM_AVX512BW 1
#else
#define KMINI_GRAM_AVX512BW 0
#endif
#if KMINI_GRAM_HOST_SIMD && defined(__AVX512F__) && defined(__AVX512VPOPCNTDQ__)
#define KMINI_GRAM_AVX512_POPCOUNT 1
#else
#define KMINI_GRAM_AVX512_POPCOUNT 0
#endif
#if KMINI_GRAM_AVX2 || KMINI_GRAM_AVX512BW || KMINI_GRAM_AVX512_POPCOUNT
#include <immintrin.h>
#endif

namespace kmini::gram {

// How the tiles' AND+popcount sums are computed (gram.engine): popcount
// instructions (every backend), or the 1-bit tensor-core mma (CUDA, sm_80+;
// gram_tensor_core.hpp). Exact against each other.
enum class Engine { Popcount, TensorCore };
inline const char* engine_name(Engine e) { return e == Engine::TensorCore ? "tensor_core" : "popcount"; }

// The tensor-core engine's kernel (gram.tensor_core_tile): block64, the 64 x 64
// team kernel staging 16 words at a time; warp32x64 and warp64x64, 128 x 128
// blocks with a cp.async pipeline and each warp's part of C in registers
// (gram_tensor_core_blocked.hpp); warpgroup64x128, the wgmma engine (sm_90a:
// H100, H200), 128 x 128 blocks of two warpgroups, each 64 x 128 of C in
// registers (gram_wgmma.hpp). Exact against each other.
enum class TensorCoreTile { Auto, Block64, Warp32x64, Warp64x64, Warpgroup64x128 };
inline constexpr TensorCoreTile kTensorCoreTiles[] = {TensorCoreTile::Block64, TensorCoreTile::Warp32x64,
                                                      TensorCoreTile::Warp64x64, TensorCoreTile::Warpgroup64x128};
constexpr const char* tensor_core_tile_name(TensorCoreTile t) {
  return t == TensorCoreTile::Block64           ? "block64"
         : t == TensorCoreTile::Warp32x64       ? "warp32x64"
         : t == TensorCoreTile::Warp64x64       ? "warp64x64"
         : t == TensorCoreTile::Warpgroup64x128 ? "warpgroup64x128"
                                                : "auto";
}
// What auto means (docs/performance.md, "gram: the tensor-core engine").
inline constexpr TensorCoreTile kDefaultTensorCoreTile = TensorCoreTile::Warp32x64;

// The host tiles' AND+popcount micro-kernel (rows_block, gram_micro_kernels.hpp;
// gram.micro_kernel). Each is compiled in where the target has its
// instructions; `auto` is the last one compiled in, in this order.
enum class MicroKernel { Portable, Avx2, Avx512bw, Avx512Vpopcntdq };
inline constexpr MicroKernel kMicroKernels[] = {MicroKernel::Portable, MicroKernel::Avx2, MicroKernel::Avx512bw,
                                                MicroKernel::Avx512Vpopcntdq};
constexpr const char* micro_kernel_name(MicroKernel k) {
  return k == MicroKernel::Avx2              ? "avx2"
         : k == MicroKernel::Avx512bw        ? "avx512bw"
         : k == MicroKernel::Avx512Vpopcntdq ? "avx512_vpopcntdq"
                                             : "portable";
}
// Whether this build contains micro-kernel k (the portable one: always).
constexpr bool micro_kernel_compiled(MicroKernel k) {
  return k == MicroKernel::Avx2              ? bool(KMINI_GRAM_AVX2)
         : k == MicroKernel::Avx512bw        ? bool(KMINI_GRAM_AVX512BW)
         : k == MicroKernel::Avx512Vpopcntdq ? bool(KMINI_GRAM_AVX512_POPCOUNT)
                                             : true;
}
// What the target's instruction set selects (gram.micro_kernel: auto).
inline constexpr MicroKernel kAutoMicroKernel = KMINI_GRAM_AVX512_POPCOUNT ? MicroKernel::Avx512Vpopcntdq
                                                : KMINI_GRAM_AVX512BW      ? MicroKernel::Avx512bw
                                                : KMINI_GRAM_AVX2          ? MicroKernel::Avx2
                                                                           : MicroKernel::Portable;

#if defined(KOKKOS_ENABLE_CUDA) || defined(KOKKOS_ENABLE_HIP) || defined(KOKKOS_ENABLE_SYCL)
// GPU: 64 x 64 tiles, 256 threads each owning one 4 x 4 micro-tile (8 warps
// of 32 on NVIDIA, 4 wavefronts of 64 on AMD); panels in shared memory (LDS)
// word-major ([k][row], row stride TILE + 1 words) so the 16 threads of a
// micro-tile row read 16 consecutive rows of one word: conflict-free on 32
// banks, and the +1 keeps the staging writes (row-major global reads) off a
// single bank.
struct Tuning {
  static constexpr int tile = 64;
  static constexpr int stage_words = 1;  // staging: one word per thread, coalesced
  static constexpr int granule = 2;      // packed rows padded to 16 bytes: the blocked tensor-core kernel's cp.async
#if defined(KOKKOS_ENABLE_HIP)
  static constexpr int chunk = 8;  // 2 x 64 x 9 x 8 B + 16 KiB C tile = 24 KiB: two workgroups in a CU's 64 KiB LDS
#else
  static constexpr int chunk = 16;  // words per stage: 2 x 64 x 17 x 8 B + 16 KiB C tile = 33 KiB
#endif
  static constexpr int mr = 4, nr = 4;
  static constexpr int team_size = (tile / mr) * (tile / nr);
  static constexpr bool word_major = true;   // scratch [k][row]
  static constexpr bool interleaved = true;  // thread's rows are tx, tx + 16, ...
  static constexpr int pad = 1;              // words added to each scratch line
  static constexpr bool staged = true;       // panels copied to shared memory
  static constexpr int ct_pad = 1;           // C tile rows of tile + 1: the mirror reads a column conflict-free
  static constexpr const char* micro_kernel = "portable";
  using acc_type = std::uint32_t;  // __popcll returns int; 32-bit adds
};
#else
// Host (Serial/OpenMP): one thread per team works through the tile's 4 x 4
// micro-tiles, reading A's and B's rows in place, `chunk` words at a time: a
// chunk of the tile's 64 B rows is 128 KiB (L2-resident), 4 rows x 2 KiB of
// A stay in L1. The micro-kernels (rows_block, gram_micro_kernels.hpp): see
// there; measured: docs/performance.md, "gram: host parameters".
struct Tuning {
  static constexpr int tile = 64;
  static constexpr int chunk = 256;
  static constexpr int stage_words = chunk;  // (staged only) staging copies whole panel rows
  static constexpr int granule = 8;          // packed rows padded to whole 512-bit vectors
  static constexpr int mr = 4, nr = 4;
  static constexpr int team_size = 1;
  static constexpr bool word_major = false;   // (staged only) scratch [row][k]
  static constexpr bool interleaved = false;  // micro-tile rows are contiguous
  static constexpr int pad = 8;               // (staged only) one cache line: avoids 4 KiB set aliasing
  // Not staged: the micro-tiles read A's and B's rows where they are. The
  // copy into scratch buys nothing on a CPU (the rows are contiguous
  // already) and costs a tenth of the tile time (docs/performance.md).
  static constexpr bool staged = false;
  static constexpr int ct_pad = 0;
  static constexpr const char* micro_kernel = micro_kernel_name(kAutoMicroKernel);  // auto's
  using acc_type = std::uint64_t;                                                   // matches vpopcntq's 64-bit lanes
};
#endif

// Where one slice of C goes: rows [r0, r1) of C and its columns [col0, cols),
// row major with row length width = cols - col0. One input (C = A A^T,
// targets = 0): columns from r0 on (the rest is the mirror of earlier
// slices). Two inputs (C = A B^T, targets = rows of B): all columns.
struct SliceGeometry {
  std::int64_t rows = 0, r0 = 0, r1 = 0;
  std::int64_t targets = 0;  // rows of B; 0: one input, C symmetric
  bool symmetric() const { return targets == 0; }
  std::int64_t col0() const { return symmetric() ? r0 : 0; }
  std::int64_t cols() const { return symmetric() ? rows : targets; }  // columns of C
  std::int64_t width() const { return cols() - col0(); }
  std::int64_t height() const { return r1 - r0; }
  // Tiles computed: tile row l in [0, tile_rows), tile column m in
  // [l, tile_cols) (on or above the diagonal) when symmetric, else all.
  std::int64_t tile_rows() const { return (height() + Tuning::tile - 1) / Tuning::tile; }
  std::int64_t tile_cols() const { return (width() + Tuning::tile - 1) / Tuning::tile; }
  std::int64_t tile_count() const {
    return tile_rows() * tile_cols() - (symmetric() ? tile_rows() * (tile_rows() - 1) / 2 : 0);
  }
  // Word-pair AND+popcounts the kernel executes for this slice.
  double executed_words(std::int64_t words) const {
    return double(tile_count()) * Tuning::tile * Tuning::tile * double(words);
  }
};

// The block of C the outputs read from a counts buffer (row major, row
// length width()): rows [r0, r1), columns [c0, c1). triangular (one input,
// c0 == r0): the pairs are j > i, the window's part below the diagonal is
// its mirror. mirror (one input): column j's row gets C(j, i) = C(i, j) from
// this window too (the top-k columns' scan and the summary's column sums;
// triangular: the columns past the rows). A replicated slice is one (one input:
// triangular and mirrored; with B: a rectangle from column 0).
struct OutputWindow {
  std::int64_t r0 = 0, r1 = 0, c0 = 0, c1 = 0;
  bool triangular = false, mirror = false;
  OutputWindow() = default;
  OutputWindow(std::int64_t r0_, std::int64_t r1_, std::int64_t c0_, std::int64_t c1_, bool triangular_, bool mirror_)
      : r0(r0_), r1(r1_), c0(c0_), c1(c1_), triangular(triangular_), mirror(mirror_) {}
  OutputWindow(const SliceGeometry& g)  // NOLINT: a slice is a window
      : r0(g.r0), r1(g.r1), c0(g.col0()), c1(g.cols()), triangular(g.symmetric()), mirror(g.symmetric()) {}
  bool symmetric() const { return triangular; }
  std::int64_t col0() const { return c0; }
  std::int64_t cols() const { return c1; }
  std::int64_t width() const { return c1 - c0; }
  std::int64_t height() const { return r1 - r0; }
  // The first column whose row the top-k columns' scan offers the window's rows.
  std::int64_t mirror_begin() const { return triangular ? r1 : c0; }
};

}  // namespace kmini::gram
