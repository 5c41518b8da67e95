#pragma once
// Device kernels of the bit-packed Gram product C = A * A^T of a 0/1 matrix:
// the tiled AND+popcount kernel for one row slice of C and the engine
// dispatch. Beside it, one header per kernel family, all included here:
// packing into 64-bit words (gram_pack_kernels.hpp), the similarity
// conversion and the summary reductions (gram_similarity_kernels.hpp), the
// micro-kernels (gram_micro_kernels.hpp) and the peak probe (gram_probe.hpp).
#include "core/device_traits.hpp"
#include "core/kokkos_compat.hpp"
#include "core/random.hpp"
#include "gram/gram_params.hpp"
#include "gram/gram_similarity.hpp"
#include "gram/impl/gram_micro_kernels.hpp"
#include "gram/impl/gram_pack_kernels.hpp"
#include "gram/impl/gram_probe.hpp"
#include "gram/impl/gram_similarity_kernels.hpp"
#include "gram/impl/gram_tensor_core.hpp"
#include "gram/impl/gram_tensor_core_blocked.hpp"
#include "gram/impl/gram_wgmma.hpp"
#include "gram/impl/gram_wgmma_layout.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace kmini::gram {

// Kernels are functors, not KOKKOS_LAMBDAs, in every header: nvcc keeps an
// extended __host__ __device__ lambda's copy/destroy pointers in a helper
// private to each translation unit, while the wrapper's out-of-line members
// are merged across units, so a header lambda instantiated in two units can
// call the other unit's unset pointer (a jump to address 0; docs/design.md,
// "Known problems").
// scripts/gpu/check_lambda_wrappers.py finds such pairs in a CUDA binary.

// ---------------------------------------------------------------------------
// The tiled kernel.

// Row p of a tile's side is row p of its view (the tile kernels), or the
// view's row ids(p) (the pruned kernel's popcount order, PrunedTileKernel).
struct SameRows {
  KOKKOS_INLINE_FUNCTION std::int64_t operator()(std::int64_t p) const { return p; }
};
template <class Ids>
struct RowsOf {
  Ids ids;
  KOKKOS_INLINE_FUNCTION std::int64_t operator()(std::int64_t p) const { return ids(p); }
};

// ct (zeroed) += the tile's counts at rows i0.. of A (below r1) and rows
// j0.. of B (below cols), chunk by chunk: staged through team scratch on GPUs,
// read in place on hosts; row p of A is a's row row_a(p), of B b's row_b(p).
// TensorCore: the chunks' sums by the 1-bit mma (gram_tensor_core.hpp), the
// warps' accumulators in registers over the chunks, added to ct at the end.
template <class P, bool TensorCore, MicroKernel MK, class Member, class Packed, class RowA = SameRows,
          class RowB = SameRows>
KOKKOS_INLINE_FUNCTION void accumulate_tile(const Member& team, const Packed& a, const Packed& b, std::int64_t i0,
                                            std::int64_t j0, std::int64_t r1, std::int64_t cols, std::int64_t words,
                                            std::uint32_t* ct, const RowA& row_a = {}, const RowB& row_b = {}) {
  constexpr int micro_cols = P::tile / P::nr, micro_count = (P::tile / P::mr) * micro_cols;
  static_assert(!TensorCore || (P::staged && P::word_major && P::tile == 64 &&
                                P::team_size == tensor_core::kWarps * tensor_core::kLanes),
                "the tensor-core engine reads word-major staged 64 x 64 panels with 8 warps");
  if constexpr (P::staged) {
    Word* pa = static_cast<Word*>(team.team_shmem().get_shmem(panel_words<P>() * sizeof(Word)));
    Word* pb = static_cast<Word*>(team.team_shmem().get_shmem(panel_words<P>() * sizeof(Word)));
    [[maybe_unused]] const int warp = team.team_rank() / tensor_core::kLanes,
                               lane = team.team_rank() % tensor_core::kLanes;
    [[maybe_unused]] std::int32_t acc[tensor_core::kTilesPerWarp][4] = {};
    for (std::int64_t k0 = 0; k0 < words; k0 += P::chunk) {
      const int nk = words - k0 < P::chunk ? static_cast<int>(words - k0) : P::chunk;
      team.team_barrier();
      // Runs of P::stage_words consecutive words: one word per thread
      // on GPUs (coalesced global reads).
      const int runs = (nk + P::stage_words - 1) / P::stage_words;
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, P::tile * runs), [&](const int e) {
        const int row = e / runs, k = (e % runs) * P::stage_words;
        const int n = nk - k < P::stage_words ? nk - k : P::stage_words;
        stage_run<P>(pa, row, k, n, i0 + row < r1 ? &a(row_a(i0 + row), k0 + k) : nullptr);
        stage_run<P>(pb, row, k, n, j0 + row < cols ? &b(row_b(j0 + row), k0 + k) : nullptr);
      });
      team.team_barrier();
      if constexpr (TensorCore) tensor_core::chunk_mma<P>(pa, pb, nk, warp, lane, acc);
      else if (nk == P::chunk) team_micro_tiles<P, P::chunk>(team, pa, pb, ct, nk);
      else team_micro_tiles<P, 0>(team, pa, pb, ct, nk);
    }
    if constexpr (TensorCore) tensor_core::store_warp<P>(ct, warp, lane, acc);
  } else {
    // Rows past the slice (A) or past the targets (B) read the last
    // valid row: their counts land in ct entries that are never written.
    for (std::int64_t k0 = 0; k0 < words; k0 += P::chunk) {
      const int nk = words - k0 < P::chunk ? static_cast<int>(words - k0) : P::chunk;
      for (int mt = team.team_rank(); mt < micro_count; mt += team.team_size()) {
        const int mi = mt / micro_cols, ni = mt % micro_cols;
        const Word* ra[P::mr];
        const Word* rb[P::nr];
        for (int r = 0; r < P::mr; ++r) {
          const std::int64_t i = i0 + mi * P::mr + r;
          ra[r] = &a(row_a(i < r1 ? i : r1 - 1), k0);
        }
        for (int s = 0; s < P::nr; ++s) {
          const std::int64_t j = j0 + ni * P::nr + s;
          rb[s] = &b(row_b(j < cols ? j : cols - 1), k0);
        }
        std::uint32_t* c = ct + mi * P::mr * ct_stride<P>() + ni * P::nr;
        if (nk == P::chunk) rows_block<P, P::chunk, MK>(ra, rb, nk, c, ct_stride<P>());
        else rows_block<P, 0, MK>(ra, rb, nk, c, ct_stride<P>());
      }
    }
  }
}

// The C tile ct (rows i0.., columns j0.. of C) into the slice out (rows r0..
// r1, columns col0.. below cols, row length width), and with `mirror` its
// transpose at (j0, i0): the host form of gram_slice_with's two write loops.
template <class P, class Out>
KOKKOS_INLINE_FUNCTION void store_tile_host(const std::uint32_t* ct, const Out& out, std::int64_t i0, std::int64_t j0,
                                            std::int64_t r0, std::int64_t r1, std::int64_t col0, std::int64_t cols,
                                            std::int64_t width, bool mirror) {
  const int rows_here = static_cast<int>(r1 - i0 < P::tile ? r1 - i0 : P::tile);
  const int cols_here = static_cast<int>(cols - j0 < P::tile ? cols - j0 : P::tile);
  for (int ii = 0; ii < rows_here; ++ii) {
    auto* KOKKOS_RESTRICT o = &out((i0 + ii - r0) * width + (j0 - col0));
    const std::uint32_t* KOKKOS_RESTRICT t = ct + ii * ct_stride<P>();
    for (int jj = 0; jj < cols_here; ++jj) o[jj] = static_cast<std::int32_t>(t[jj]);
  }
  if (!mirror) return;
  // C(j, i) = C(i, j): row j0 + jj of the slice (when inside it) gets column jj of ct.
  const int mirror_rows = static_cast<int>(r1 - j0 < P::tile ? r1 - j0 : P::tile);
  const int mirror_cols = static_cast<int>(cols - i0 < P::tile ? cols - i0 : P::tile);
  for (int jj = 0; jj < mirror_rows; ++jj) {
    auto* KOKKOS_RESTRICT o = &out((j0 + jj - r0) * width + (i0 - col0));
    for (int ii = 0; ii < mirror_cols; ++ii) o[ii] = static_cast<std::int32_t>(ct[ii * ct_stride<P>() + jj]);
  }
}

// The tile ct into out (and its mirror): on hosts store_tile_host; else the
// team's threads element by element, the tile row by row, then its mirror
// (symmetric, above the diagonal) column by column of ct, so both writes run
// along rows of the slice. (Mirrored inside one loop, the mirror's writes
// strode a slice row apart and took a quarter of the kernel: perf, bench deck.)
template <class P, class Member, class Out>
KOKKOS_INLINE_FUNCTION void store_tile(const Member& team, const std::uint32_t* ct, const Out& out, std::int64_t i0,
                                       std::int64_t j0, std::int64_t r0, std::int64_t r1, std::int64_t col0,
                                       std::int64_t cols, std::int64_t width, bool mirror) {
  if constexpr (!P::staged && P::team_size == 1) {
    // Hosts (one thread per team): row by row with the bounds hoisted, so the
    // row copies vectorise. The element loops below (a division and two
    // bounds checks per element) cost an eighth of the AVX2 tiles' time.
    store_tile_host<P>(ct, out, i0, j0, r0, r1, col0, cols, width, mirror);
  } else {
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, P::tile * P::tile), [&](const int e) {
      const int ii = e / P::tile, jj = e % P::tile;
      const std::int64_t i = i0 + ii, j = j0 + jj;
      if (i < r1 && j < cols)
        out((i - r0) * width + (j - col0)) = static_cast<std::int32_t>(ct[ii * ct_stride<P>() + jj]);
    });
    if (mirror) {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, P::tile * P::tile), [&](const int e) {
        const int jj = e / P::tile, ii = e % P::tile;
        const std::int64_t i = i0 + ii, j = j0 + jj;
        if (j < r1 && i < cols)
          out((j - r0) * width + (i - col0)) = static_cast<std::int32_t>(ct[ii * ct_stride<P>() + jj]);
      });
    }
  }
}

// The rectangle of C one launch of the tile kernel computes: rows [r0, r1)
// of C from the view `a` and columns [c0, c1) from the view `b`, whose local
// row 0 is global row a_base (b_base). Triangular (one input, c0 == r0, a and
// b the same rows): only tiles on or above the diagonal, each mirrored inside
// the window. Values go to out((i - r0) * out_width + (j - out_col0)): the
// window may be a part of a wider slice (gram.distribution: ring computes a
// slice from blocks of columns as they arrive).
struct TileWindow : WindowGeometry {
  std::int64_t tile_rows() const { return (r1 - r0 + Tuning::tile - 1) / Tuning::tile; }
  std::int64_t tile_cols() const { return (c1 - c0 + Tuning::tile - 1) / Tuning::tile; }
  std::int64_t tile_count() const {
    return tile_rows() * tile_cols() - (triangular ? tile_rows() * (tile_rows() - 1) / 2 : 0);
  }
  double executed_words(std::int64_t words) const {
    return double(tile_count()) * Tuning::tile * Tuning::tile * double(words);
  }
  // A whole slice of C from views holding every row (gram.distribution: replicated).
  static TileWindow of(const SliceGeometry& g) {
    TileWindow w;
    w.r0 = g.r0;
    w.r1 = g.r1;
    w.c0 = g.col0();
    w.c1 = g.cols();
    w.triangular = g.symmetric();
    w.out_col0 = g.col0();
    w.out_width = g.width();
    return w;
  }
};

// The device's shape, checked where each backend compiles: whole warps or
// wavefronts per team, and the team scratch within one workgroup's share.
static_assert(Tuning::team_size % device::kLanes == 0, "a gram team is whole warps / wavefronts");
static_assert(team_scratch_bytes<Tuning>() <= device::kTeamScratchBytes,
              "gram's team scratch (panels + C tile) exceeds the device's shared memory per team");

// One team per tile of window r0..r1 x c0..c1 (see gram_window_with).
template <bool TensorCore, MicroKernel MK, class Exec, class Packed, class Out>
struct TileKernel {
  using P = Tuning;
  using Member = typename Kokkos::TeamPolicy<Exec>::member_type;
  Packed a, b;
  Out out;
  std::int64_t r0, r1, c0, c1, width, col0, a_base, b_base, tile_cols, words;
  bool symmetric;
  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
    // Triangular: tile row l holds tile_cols - l tiles, from column l on.
    std::int64_t l = 0, t = team.league_rank(), m = 0;
    if (symmetric) {
      while (t >= tile_cols - l) {
        t -= tile_cols - l;
        ++l;
      }
      m = l + t;
    } else {
      l = t / tile_cols;
      m = t % tile_cols;
    }
    const std::int64_t i0 = r0 + l * P::tile, j0 = c0 + m * P::tile;
    auto* ct = static_cast<std::uint32_t*>(team.team_shmem().get_shmem(ct_bytes<P>()));
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, P::tile * ct_stride<P>()), [&](const int e) { ct[e] = 0; });
    // Local rows of the views: row i of C is a's row i - a_base, column j b's row j - b_base.
    accumulate_tile<P, TensorCore, MK>(team, a, b, i0 - a_base, j0 - b_base, r1 - a_base, c1 - b_base, words, ct);
    team.team_barrier();
    store_tile<P>(team, ct, out, i0, j0, r0, r1, col0, c1, width, symmetric && m > l);
  }
};

// Computes window `w` of C = A B^T into out. Triangular: every tile on or
// above the diagonal once, mirrored inside the window; else every tile. MK:
// the host micro-kernel (rows_block; the staged GPU tiles have one).
template <bool TensorCore, MicroKernel MK, class Exec, class Packed, class Out>
void gram_window_with(const Exec& exec, const Packed& a, const Packed& b, const TileWindow& w, const Out& out) {
  using P = Tuning;
  if (w.tile_count() == 0) return;
  Kokkos::TeamPolicy<Exec> policy(exec, static_cast<int>(w.tile_count()), P::team_size);
  policy.set_scratch_size(0, Kokkos::PerTeam(team_scratch_bytes<P>()));
  const TileKernel<TensorCore, MK, Exec, Packed, Out> kernel{a,
                                                             b,
                                                             out,
                                                             w.r0,
                                                             w.r1,
                                                             w.c0,
                                                             w.c1,
                                                             w.out_width,
                                                             w.out_col0,
                                                             w.a_base,
                                                             w.b_base,
                                                             w.tile_cols(),
                                                             static_cast<std::int64_t>(a.extent(1)),
                                                             w.triangular};
  Kokkos::parallel_for(TensorCore ? "kmini::gram::tiles_tensor_core" : "kmini::gram::tiles", policy, kernel);
}

#if defined(KOKKOS_ENABLE_CUDA)
// The block kernels' arguments: window w of the views.
template <class Packed, class Out>
tensor_core::BlockedArgs block_args(const Packed& a, const Packed& b, const TileWindow& w, const Out& out) {
  static_assert(std::is_same_v<typename Out::non_const_value_type, std::int32_t>, "counts are int32");
  tensor_core::BlockedArgs p;
  static_cast<WindowGeometry&>(p) = w;
  p.a = a.data();
  p.b = b.data();
  p.out = out.data();
  p.lda = static_cast<std::int64_t>(a.stride(0));
  p.ldb = static_cast<std::int64_t>(b.stride(0));
  p.words = static_cast<std::int64_t>(a.extent(1));
  return p;
}

// Window w with the blocked tensor-core kernel of shape S (gram_tensor_core_blocked.hpp).
template <class S, class Packed, class Out>
void gram_window_blocked(const Kokkos::Cuda& exec, const Packed& a, const Packed& b, const TileWindow& w,
                         const Out& out) {
  tensor_core::BlockedArgs p = block_args(a, b, w, out);
  const std::int64_t blocks = tensor_core::block_tiles(w, S::block, p.tile_cols);
  if (blocks > 0) tensor_core::launch_blocked<S>(exec, p, blocks);
}

// Window w with the wgmma engine (gram_wgmma.hpp), on exec's stream; where
// it cannot run here (configure() refused it for decks), an exception naming why.
template <class Packed, class Out>
void gram_window_wgmma(const Kokkos::Cuda& exec, const Packed& a, const Packed& b, const TileWindow& w,
                       const Out& out) {
  const std::string why = wgmma::unavailable();
  if (!why.empty()) throw std::invalid_argument("kmini::gram: the wgmma engine (warpgroup64x128): " + why);
  tensor_core::BlockedArgs p = block_args(a, b, w, out);
  const std::int64_t tiles = tensor_core::block_tiles(w, wgmma::EngineShape::block, p.tile_cols);
  if (tiles <= 0) return;
#if defined(KMINI_GRAM_WGMMA)  // else unavailable() said why above
  std::uint64_t id = 0;
  Kokkos::Tools::beginParallelFor("kmini::gram::tiles_wgmma", Kokkos::Tools::Experimental::device_id(exec), &id);
  const char* failed = wgmma::launch(p, tiles, exec.cuda_stream());
  Kokkos::Tools::endParallelFor(id);
  if (failed) throw std::runtime_error(std::string("kmini::gram::tiles_wgmma: ") + failed);
#endif
}
#endif

// The engine dispatch: the tensor-core tiles where this build has them and
// they were asked for (configure() refused tensor_core elsewhere), in the
// blocked kernel of shape `tile` where the views suit its 16-byte copies, else
// (and for tile block64) the 64 x 64 team kernel; else the popcount tiles with
// micro-kernel `mk` (configure() let only compiled-in ones through).
template <class Exec, class Packed, class Out>
void gram_window(const Exec& exec, const Packed& a, const Packed& b, const TileWindow& w, const Out& out,
                 Engine engine = Engine::Popcount, MicroKernel mk = kAutoMicroKernel,
                 TensorCoreTile tile = TensorCoreTile::Auto) {
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (tensor_core::kAvailable && std::is_same_v<Exec, Kokkos::Cuda>) {
    if (engine == Engine::TensorCore) {
      const tensor_core::Tile t = tensor_core::resolved(tile);
      if (t != tensor_core::Tile::Block64 &&
          tensor_core::blocked_fits(a.data(), a.stride(0), b.data(), b.stride(0), a.extent(1))) {
        if (t == tensor_core::Tile::Warpgroup64x128) return gram_window_wgmma(exec, a, b, w, out);
        if (t == tensor_core::Tile::Warp64x64) return gram_window_blocked<tensor_core::Warp64x64>(exec, a, b, w, out);
        return gram_window_blocked<tensor_core::Warp32x64>(exec, a, b, w, out);
      }
      return gram_window_with<true, MicroKernel::Portable>(exec, a, b, w, out);
    }
  }
#endif
  (void)engine;  // configure() refused tensor_core on builds without it
  (void)tile;
  if constexpr (Tuning::staged) {
    gram_window_with<false, MicroKernel::Portable>(exec, a, b, w, out);
  } else {
    with_micro_kernel(mk, [&](auto k) { gram_window_with<false, decltype(k)::value>(exec, a, b, w, out); });
  }
}

template <class Exec, class Packed, class Out>
void gram_slice(const Exec& exec, const Packed& a, const Packed& b, const SliceGeometry& g, const Out& out,
                Engine engine = Engine::Popcount, MicroKernel mk = kAutoMicroKernel,
                TensorCoreTile tile = TensorCoreTile::Auto) {
  gram_window(exec, a, b, TileWindow::of(g), out, engine, mk, tile);
}

// One input: C = A A^T.
template <class Exec, class Packed, class Out>
void gram_slice(const Exec& exec, const Packed& a, const SliceGeometry& g, const Out& out,
                Engine engine = Engine::Popcount, MicroKernel mk = kAutoMicroKernel,
                TensorCoreTile tile = TensorCoreTile::Auto) {
  gram_slice(exec, a, a, g, out, engine, mk, tile);
}

}  // namespace kmini::gram
