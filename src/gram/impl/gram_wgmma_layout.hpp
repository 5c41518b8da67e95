#pragma once
// What wgmma.mma_async.sync.aligned.m64nNk256.s32.b1.b1.and.popc (sm_90a)
// reads and writes, for the wgmma probe (benchmarks/wgmma_probe) and the
// wgmma engine (gram_wgmma_engine.cu, at the end of this file): the shared-memory
// tiles of A and B, their matrix descriptors and the accumulator fragments, as
// the PTX ISA describes them (sections "Shared Memory Matrix Layout",
// "Matrix Descriptor Format", "Matrix Fragments for wgmma.mma_async.m64nNk256"),
// and the host reference the probe checks one result against. Host and device
// code without Kokkos, so that plain nvcc compiles the probe and the engine
// and the CPU tests (tests/gram/test_gram_wgmma_layout.cpp,
// test_gram_wgmma_engine.cpp) check the index math.
//
// Layout: K-major, no swizzle. A (64 x 256 bits) and B (N x 256 bits: B is
// "column-major", row n of this tile is column n of B) are the same kind of
// tile: rows of 256 bits. The ISA's canonical K-major no-swizzle layout, in
// elements, is ((8,m),(T,2k)):((1T,SBO),(1,LBO)) with T = 128 / 1 bit = 128:
// a core matrix is 8 rows x 16 bytes, contiguous (row r at 16 r bytes); the
// second 128 bits of k (k = 1, so 2k = 2 core matrices along k) start LBO bytes
// after the first; the next 8 rows start SBO bytes later. Here LBO = 128 (the
// two halves of an 8-row group side by side) and SBO = 256, so a tile of R rows
// is R x 32 contiguous bytes and a sub-tile of rows 8g.. starts at 256 g.
#include <cstdint>

#if defined(__CUDACC__)
#define KMINI_WGMMA_HD __host__ __device__
#else
#define KMINI_WGMMA_HD
#endif

namespace kmini::gram::wgmma {

constexpr int kM = 64;              // rows of A (and of D) per instruction
constexpr int kK = 256;             // k per instruction, in bits
constexpr int kRowBytes = kK / 8;   // 32: one row's k bits in a tile
constexpr int kRowWords = kK / 32;  // 8 uint32 words per row per k step
constexpr int kCoreRows = 8;        // a core matrix: 8 rows ...
constexpr int kChunkBytes = 16;     // ... of 16 bytes (128 one-bit elements)
constexpr int kChunkWords = kChunkBytes / 4;
constexpr std::uint32_t kLbo = kCoreRows * kChunkBytes;  // 128: k bits 128..255 of the same 8 rows
constexpr std::uint32_t kSbo = 2 * kLbo;                 // 256: the next 8 rows
constexpr int kWarpgroup = 128;                          // threads: 4 consecutive warps
constexpr int kWarp = 32;

// Byte offset, inside a tile, of 16-byte chunk `chunk` (k bits 128 chunk ..
// 128 chunk + 127) of row `row`.
KMINI_WGMMA_HD constexpr std::uint32_t tile_offset(int row, int chunk) {
  return std::uint32_t(row / kCoreRows) * kSbo + std::uint32_t(chunk) * kLbo +
         std::uint32_t(row % kCoreRows) * kChunkBytes;
}
// Byte offset of uint32 word `word` (k bits 32 word .. 32 word + 31) of row
// `row`. A and B put the same bits in the same place, which is all an
// AND+popcount sum needs: whatever order the tensor core gives the 256
// elements of a row, it gives A's and B's the same one.
KMINI_WGMMA_HD constexpr std::uint32_t word_offset(int row, int word) {
  return tile_offset(row, word / kChunkWords) + std::uint32_t(word % kChunkWords) * 4u;
}
KMINI_WGMMA_HD constexpr std::uint32_t tile_bytes(int rows) { return std::uint32_t(rows) * kRowBytes; }

// The probe block's shared memory: kKSteps A tiles (64 rows), then kKSteps B
// tiles of sets x n rows; set s is rows s n .. s n + n - 1 of each B tile, a
// sub-tile whose descriptor starts at b_set(ks, s). The inputs come row-major
// (rows of kKSteps x 8 words: k step ks is words 8 ks .. 8 ks + 7).
constexpr int kKSteps = 4;
constexpr int kInputWords = kKSteps * kRowWords;
struct ProbeTiles {
  int n, sets;
  KMINI_WGMMA_HD constexpr int cols() const { return n * sets; }
  KMINI_WGMMA_HD constexpr std::uint32_t a_tile(int ks) const { return std::uint32_t(ks) * tile_bytes(kM); }
  KMINI_WGMMA_HD constexpr std::uint32_t b_tile(int ks) const {
    return kKSteps * tile_bytes(kM) + std::uint32_t(ks) * tile_bytes(cols());
  }
  KMINI_WGMMA_HD constexpr std::uint32_t b_set(int ks, int s) const { return b_tile(ks) + tile_offset(s * n, 0); }
  KMINI_WGMMA_HD constexpr std::uint32_t bytes() const { return b_tile(kKSteps); }
  // Where input word e of A (of B) goes.
  KMINI_WGMMA_HD constexpr std::uint32_t a_word(int e) const {
    return a_tile(e % kInputWords / kRowWords) + word_offset(e / kInputWords, e % kRowWords);
  }
  KMINI_WGMMA_HD constexpr std::uint32_t b_word(int e) const {
    return b_tile(e % kInputWords / kRowWords) + word_offset(e / kInputWords, e % kRowWords);
  }
};

// The descriptor's 14-bit fields hold byte values >> 4 (the ISA's
// matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4).
KMINI_WGMMA_HD constexpr std::uint64_t encode(std::uint32_t bytes) { return (bytes & 0x3FFFFu) >> 4; }
enum class Swizzle : std::uint64_t { None = 0, B128 = 1, B64 = 2, B32 = 3 };
// Bits 0-13 start address, 16-29 leading-dimension byte offset, 32-45 stride
// byte offset, 49-51 base offset (0: unused without swizzling), 62-63 swizzle.
KMINI_WGMMA_HD constexpr std::uint64_t descriptor(std::uint32_t smem_address, std::uint32_t lbo = kLbo,
                                                  std::uint32_t sbo = kSbo, Swizzle swizzle = Swizzle::None) {
  return encode(smem_address) | encode(lbo) << 16 | encode(sbo) << 32 | static_cast<std::uint64_t>(swizzle) << 62;
}

// The accumulator D (64 x N, .s32, N/2 registers per thread), per the ISA's
// m64nNk256 D fragment figure (the same as every wgmma shape's): warp w of the
// warpgroup holds rows 16w .. 16w + 15; in it, lane l holds rows l/4 and
// l/4 + 8 and, of every 8 columns, 2 (l % 4) and 2 (l % 4) + 1. Register j:
// column block j/4, row + 8 for (j/2) odd, column + 1 for j odd.
KMINI_WGMMA_HD constexpr int acc_row(int thread, int reg) {
  return (thread / kWarp) * 16 + (thread % kWarp) / 4 + ((reg / 2) % 2) * 8;
}
KMINI_WGMMA_HD constexpr int acc_col(int thread, int reg) { return (reg / 4) * 8 + (thread % 4) * 2 + reg % 2; }

// Bit-pairs (one AND and its share of the popcount) per instruction: M N K.
constexpr double wgmma_bit_pairs(int n) { return double(kM) * n * kK; }
constexpr double kMmaSyncBitPairs = 16.0 * 8.0 * 256.0;  // mma.sync m16n8k256

// Host reference: sum over `words` uint32 of popcount(a AND b).
inline std::int64_t and_popc(const std::uint32_t* a, const std::uint32_t* b, int words) {
  std::int64_t s = 0;
  for (int w = 0; w < words; ++w) s += __builtin_popcount(a[w] & b[w]);
  return s;
}
// D(m, n) = reps * sum_k A(m, k) AND B(n, k), A rows x words and B cols x
// words row-major, d rows x cols row-major.
inline void reference_tile(const std::uint32_t* a, int rows, const std::uint32_t* b, int cols, int words, int reps,
                           std::int64_t* d) {
  for (int m = 0; m < rows; ++m)
    for (int n = 0; n < cols; ++n)
      d[std::int64_t(m) * cols + n] = reps * and_popc(a + std::int64_t(m) * words, b + std::int64_t(n) * words, words);
}

// --- The engine (gram.tensor_core_tile: warpgroup64x128, gram_wgmma_engine.cu) ---
// One CUDA block per 128 x 128 block tile of C and two warpgroups: warpgroup g
// multiplies rows 64 g .. 64 g + 63 of the tile by its 128 columns, one
// m64n128k256 per k step, its 64 x 128 part of C in 64 registers per thread
// for the whole k loop. k is staged stage_steps k steps (of 256 bits) at a
// time: A's and B's 128 rows as one tile of the layout above per k step (a
// panel), both copied by cp.async into one of `stages` buffers.
struct EngineShape {
  static constexpr int block = 128;
  static constexpr int warpgroups = block / kM;                                  // 2
  static constexpr int threads = warpgroups * kWarpgroup;                        // 256
  static constexpr int n = block;                                                // wgmma's N
  static constexpr int acc = n / 2;                                              // accumulators per thread
  static constexpr int stage_steps = 2;                                          // k steps per stage
  static constexpr int step_words = kK / 64;                                     // 4 64-bit words per k step
  static constexpr int stage_words = stage_steps * step_words;                   // 8 64-bit words of a row per stage
  static constexpr std::uint32_t panel_bytes = stage_steps * tile_bytes(block);  // 8 KiB
  static constexpr std::uint32_t stage_bytes = 2 * panel_bytes;                  // A's panel, then B's
  static constexpr int stages = 4;                                               // cp.async pipeline depth
  static constexpr std::uint32_t smem_bytes = stages * stage_bytes;  // 64 KiB (the registers allow two blocks an SM)
  static constexpr int chunks = block * stage_steps * 2;             // 16-byte chunks of a panel
  static constexpr int copies = chunks / threads;                    // per thread and panel
  static_assert(chunks % threads == 0, "whole copies per thread");
};

// The pipeline's schedule: stage k (words stage_word(k) .. of every row) goes
// to buffer stage_buffer(k); stages 0 .. prologue_stages - 1 are copied before
// the k loop, and step kt, once stage kt has landed, copies stage
// stage_copied_at(kt), into the buffer that wgmma group kt - 2 read (group
// kt - 1 may still be reading its own).
constexpr int kPrologueStages = EngineShape::stages - 2;
KMINI_WGMMA_HD constexpr int stage_buffer(std::int64_t k) { return int(k % EngineShape::stages); }
KMINI_WGMMA_HD constexpr std::int64_t stage_word(std::int64_t k) { return k * EngineShape::stage_words; }
KMINI_WGMMA_HD constexpr std::int64_t stage_copied_at(std::int64_t kt) { return kt + kPrologueStages; }

// Copy q of thread t into each panel of a stage: two neighbouring threads copy
// the two 16-byte chunks of one row's k step (one 32-byte sector of global
// memory), a warp 16 rows, into 512 contiguous bytes of the tile.
KMINI_WGMMA_HD constexpr int copy_index(int t, int q) { return t + q * EngineShape::threads; }
KMINI_WGMMA_HD constexpr int copy_chunk(int t, int q) { return copy_index(t, q) % 2; }
KMINI_WGMMA_HD constexpr int copy_row(int t, int q) { return copy_index(t, q) / 2 % EngineShape::block; }
KMINI_WGMMA_HD constexpr int copy_step(int t, int q) { return copy_index(t, q) / (2 * EngineShape::block); }
// The copy's first 64-bit word, from the stage's first word of the row.
KMINI_WGMMA_HD constexpr int copy_word(int t, int q) {
  return copy_step(t, q) * EngineShape::step_words + copy_chunk(t, q) * 2;
}
// Where it goes, from the panel's start.
KMINI_WGMMA_HD constexpr std::uint32_t copy_offset(int t, int q) {
  return std::uint32_t(copy_step(t, q)) * tile_bytes(EngineShape::block) +
         tile_offset(copy_row(t, q), copy_chunk(t, q));
}
// The operands of k step s of the stage at shared address `stage`:
// warpgroup g's 64 rows of A, and B's 128 rows.
KMINI_WGMMA_HD constexpr std::uint32_t a_operand(std::uint32_t stage, int g, int s) {
  return stage + std::uint32_t(s) * tile_bytes(EngineShape::block) + tile_offset(g * kM, 0);
}
KMINI_WGMMA_HD constexpr std::uint32_t b_operand(std::uint32_t stage, int s) {
  return stage + EngineShape::panel_bytes + std::uint32_t(s) * tile_bytes(EngineShape::block);
}

}  // namespace kmini::gram::wgmma
