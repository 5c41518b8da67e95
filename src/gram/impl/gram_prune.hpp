#pragma once
// Exact pruning of a threshold search (gram.prune): queries against targets
// whose outputs all have a minimum above 0. A tile of rows sorted by popcount
// (the slice's rows, and all targets) whose best possible value from the
// popcounts alone is below the minimum holds no pair any output keeps, so it
// is not computed. The computed tiles hand their pairs at or above the
// minimum to the outputs (the hits); no slice of C is written or scanned.
#include "gram/impl/gram_kernels.hpp"
#include "gram/impl/gram_outputs.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace kmini::gram {

// What a pruned slice skips: tiles whose bound is below `least` (the
// smallest minimum of the outputs, less a relative 1e-9 for the rounding of
// Tversky's weights).
struct Pruning {
  Similarity kind = Similarity::Counts;
  SimilarityParams params;
  double least = 0;
};

// The largest value of `kind` that rows with popcounts in [a_lo, a_hi] and
// [b_lo, b_hi] can reach: every similarity grows with the common ones c <=
// min(|a|, |b|) and, at c = min, shrinks as |a| and |b| part, so the closest
// pair of popcounts bounds it (overlapping ranges: 1). Counts: min(a_hi,
// b_hi). Empty rows: against a non-empty row they score 0, so a range's
// empty rows are left out of it; two empty rows (or, with a zero Tversky
// weight, an empty row against any) score gram.empty_similarity, which
// bounds nothing: 1e300.
KOKKOS_INLINE_FUNCTION double similarity_bound(Similarity kind, const SimilarityParams& params, std::int64_t a_lo,
                                               std::int64_t a_hi, std::int64_t b_lo, std::int64_t b_hi) {
  const bool zero_weight = kind == Similarity::Tversky && (params.alpha == 0 || params.beta == 0);
  if ((a_lo == 0 && b_lo == 0) || ((a_lo == 0 || b_lo == 0) && zero_weight)) return 1e300;
  if (a_hi == 0 || b_hi == 0) return 0.0;  // only empty rows on one side, none on the other
  a_lo = a_lo > 0 ? a_lo : 1;
  b_lo = b_lo > 0 ? b_lo : 1;
  if (kind == Similarity::Counts) return double(a_hi < b_hi ? a_hi : b_hi);
  if (a_hi >= b_lo && b_hi >= a_lo) return 1.0;
  const std::int64_t na = a_hi < b_lo ? a_hi : a_lo, nb = a_hi < b_lo ? b_lo : b_hi;
  return similarity_value(kind, na < nb ? na : nb, na, nb, params);
}

// dst's row p = src's row ids(p): the pruned tiles read their rows in
// popcount order from contiguous memory.
template <class Packed, class Ids>
struct GatherRows {
  Packed dst, src;
  Ids ids;
  std::int64_t words;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t e) const {
    dst(e / words, e % words) = src(ids(e / words), e % words);
  }
};

template <class Exec, class Packed, class Ids>
void gather_rows(const Exec& exec, const Packed& dst, const Packed& src, const Ids& ids, std::int64_t rows) {
  const auto words = static_cast<std::int64_t>(src.extent(1));
  Kokkos::parallel_for("kmini::gram::prune_gather", Kokkos::RangePolicy<Exec>(exec, 0, rows * words),
                       GatherRows<Packed, Ids>{dst, src, ids, words});
}

// Where a pruned slice's kernel puts its pairs at or above the minimum:
// (i, j, value) at i(n), j(n), v(n) for n < capacity, `count` counting them
// all (more than the capacity: the caller grows the views and computes the
// slice again).
template <class MemorySpace>
struct PrunedHits {
  Kokkos::View<std::int64_t*, MemorySpace> i, j;
  Kokkos::View<double*, MemorySpace> v;
  Kokkos::View<std::int64_t, MemorySpace> count;
};

// One team per tile of a pruned slice: rows p of the slice in popcount order
// (a's row p, gathered: the slice's row row_ids(p)), targets q likewise (b's
// row q, B's row col_ids(q)). A tile whose bound is below the minimum counts
// itself in `skipped`; any other is computed and its pairs whose value
// reaches `least` (the smallest minimum, exactly) go to `hits` with the rows'
// and targets' own numbers. No slice of C is written: every pair an output
// keeps is a hit, and the outputs take the hits (SparseOutputs::add_hits).
template <bool TensorCore, MicroKernel MK, class Exec, class Packed, class Ids, class Ones>
struct PrunedTileKernel {
  using P = Tuning;
  using Member = typename Kokkos::TeamPolicy<Exec>::member_type;
  using Space = typename Ids::memory_space;
  Packed a, b;
  Ids row_ids, col_ids;
  Ones ones_a, ones_b, ones_b_sorted;  // ones_b_sorted(q) = ones_b(col_ids(q))
  PrunedHits<Space> hits;
  Kokkos::View<std::int64_t, Space> skipped;
  Pruning pruning;
  double least;
  std::int64_t height, targets, tile_cols, words;
  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
    const std::int64_t p0 = team.league_rank() / tile_cols * P::tile, q0 = team.league_rank() % tile_cols * P::tile;
    const std::int64_t p1 = p0 + P::tile < height ? p0 + P::tile : height;
    const std::int64_t q1 = q0 + P::tile < targets ? q0 + P::tile : targets;
    const double bound = similarity_bound(pruning.kind, pruning.params, ones_a(row_ids(p0)), ones_a(row_ids(p1 - 1)),
                                          ones_b(col_ids(q0)), ones_b(col_ids(q1 - 1)));
    if (bound < pruning.least) {  // the same for every thread of the team
      Kokkos::single(Kokkos::PerTeam(team), [&]() { Kokkos::atomic_add(&skipped(), std::int64_t(1)); });
      return;
    }
    auto* ct = static_cast<std::uint32_t*>(team.team_shmem().get_shmem(ct_bytes<P>()));
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, P::tile * ct_stride<P>()), [&](const int e) { ct[e] = 0; });
    team.team_barrier();
    accumulate_tile<P, TensorCore, MK>(team, a, b, p0, q0, height, targets, words, ct);
    team.team_barrier();
    const int nq = static_cast<int>(q1 - q0);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, static_cast<int>(p1 - p0)), [&](const int ii) {
      const std::uint32_t* t = ct + ii * ct_stride<P>();
      switch (pruning.kind) {  // the similarity a constant in each row's loop (it vectorises)
        case Similarity::Jaccard: row_hits<Similarity::Jaccard>(p0 + ii, q0, nq, t); break;
        case Similarity::Dice: row_hits<Similarity::Dice>(p0 + ii, q0, nq, t); break;
        case Similarity::Cosine: row_hits<Similarity::Cosine>(p0 + ii, q0, nq, t); break;
        case Similarity::Tversky: row_hits<Similarity::Tversky>(p0 + ii, q0, nq, t); break;
        default: row_hits<Similarity::Counts>(p0 + ii, q0, nq, t); break;
      }
    });
  }
  template <Similarity Kind>
  KOKKOS_INLINE_FUNCTION double value(std::int64_t c, std::int64_t na, std::int64_t q) const {
    if constexpr (Kind == Similarity::Counts) return double(c);
    else return similarity_value(Kind, c, na, ones_b_sorted(q), pruning.params);
  }
  // Row p's pairs among targets [q0, q0 + nq) (their counts t) at or above
  // `least`, into `hits`: runs of kTopKBlock values compared at once (they
  // vectorise), the hits among them then taken in order.
  template <Similarity Kind>
  KOKKOS_INLINE_FUNCTION void row_hits(std::int64_t p, std::int64_t q0, int nq, const std::uint32_t* t) const {
    static_assert(kTopKBlock <= 32, "a run's hits are bits of a 32-bit mask");
    const std::int64_t i = row_ids(p), na = ones_a(i);
    for (int j0 = 0; j0 < nq; j0 += static_cast<int>(kTopKBlock)) {
      const int n = nq - j0 < kTopKBlock ? nq - j0 : static_cast<int>(kTopKBlock);
      std::uint32_t found = 0;
      if (n == kTopKBlock) {
        for (int q = 0; q < kTopKBlock; ++q)
          found |= std::uint32_t(value<Kind>(t[j0 + q], na, q0 + j0 + q) >= least ? 1 : 0) << q;
      } else {
        for (int q = 0; q < n; ++q)
          found |= std::uint32_t(value<Kind>(t[j0 + q], na, q0 + j0 + q) >= least ? 1 : 0) << q;
      }
      while (found != 0) {
        const int q = j0 + take_lowest_bit(found);
        const std::int64_t at = Kokkos::atomic_fetch_add(&hits.count(), std::int64_t(1));
        if (at < static_cast<std::int64_t>(hits.i.extent(0))) {
          hits.i(at) = i;
          hits.j(at) = col_ids(q0 + q);
          hits.v(at) = value<Kind>(t[q], na, q0 + q);
        }
      }
    }
  }
};

// The pairs of slice rows [r0, r0 + height) of C = A B^T at or above `least`
// into `hits` (in no order), from a_sorted (the slice's rows in the popcount
// order row_ids, gathered by gather_rows) and b_sorted (every target in the
// order col_ids), tiles below the bound skipped and counted in `skipped`.
// The popcount engine (and its micro-kernels) or, on CUDA, the 64 x 64
// tensor-core tiles.
template <class Exec, class Packed, class Ids, class Ones>
void gram_slice_pruned(const Exec& exec, const Packed& a_sorted, const Packed& b_sorted, const Ids& row_ids,
                       const Ids& col_ids, const Ones& ones_a, const Ones& ones_b, const Ones& ones_b_sorted,
                       std::int64_t height, const PrunedHits<typename Ids::memory_space>& hits,
                       const Kokkos::View<std::int64_t, typename Ids::memory_space>& skipped, const Pruning& pruning,
                       double least, Engine engine = Engine::Popcount, MicroKernel mk = kAutoMicroKernel) {
  using P = Tuning;
  const std::int64_t targets = static_cast<std::int64_t>(col_ids.extent(0));
  const std::int64_t tile_cols = (targets + P::tile - 1) / P::tile,
                     tiles = (height + P::tile - 1) / P::tile * tile_cols;
  if (tiles == 0) return;
  const auto launch = [&](auto tensor_core, auto micro_kernel) {
    Kokkos::TeamPolicy<Exec> policy(exec, static_cast<int>(tiles), P::team_size);
    policy.set_scratch_size(0, Kokkos::PerTeam(team_scratch_bytes<P>()));
    using Kernel =
        PrunedTileKernel<decltype(tensor_core)::value, decltype(micro_kernel)::value, Exec, Packed, Ids, Ones>;
    Kokkos::parallel_for(
        "kmini::gram::tiles_pruned", policy,
        Kernel{a_sorted, b_sorted, row_ids, col_ids, ones_a, ones_b, ones_b_sorted, hits, skipped, pruning, least,
               height, targets, tile_cols, static_cast<std::int64_t>(a_sorted.extent(1))});
  };
  using Portable = std::integral_constant<MicroKernel, MicroKernel::Portable>;
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (tensor_core::kAvailable && std::is_same_v<Exec, Kokkos::Cuda>)
    if (engine == Engine::TensorCore) return launch(std::true_type{}, Portable{});
#endif
  (void)engine;
  if constexpr (Tuning::staged) launch(std::false_type{}, Portable{});
  else with_micro_kernel(mk, [&](auto k) { launch(std::false_type{}, k); });
}

}  // namespace kmini::gram
