#pragma once
// gram.prune in the slice loop (gram_compute.cpp): the popcount order of the
// targets (once) and of each slice's rows, the pruned slices
// (gram_prune.hpp) and their hits, and what the final pass skipped.
#include "gram/gram_sparse.hpp"
#include "gram/impl/gram_detail.hpp"
#include "gram/impl/gram_prune.hpp"

#include <cstdint>
#include <vector>

namespace kmini::gram::detail {

struct Outcome;

class PrunedSlices {
 public:
  // Collective (allocates): skips tiles below `least` (prune_minimum).
  PrunedSlices(const Team& team, const Config& c, const Plan& plan, const Inputs& in, const SliceBuffers& buffers,
               double least);
  // The pairs of slice s at or above the minimum, tiles below it skipped
  // (hits(): those of the last slice computed, as many as the views hold).
  void compute(const Slice& s, const Inputs& in);
  // Collective, after each slice of the final pass (s: this rank's, or
  // null): where the hits outgrew their views, the views grow (agreed by all
  // ranks) and the slice is computed again.
  void fit(const Slice* s);
  // The last slice's hits on the host, sorted by row, then target.
  SliceHits hits();
  // The final pass counts its own tiles.
  void restart();
  // Collective, after the final pass: the tiles and those skipped (all
  // ranks) in r.metrics, the skipped ones out of the executed bit-ops; with
  // run.verify the checked rows of this rank's slices (`mine`) computed
  // again without pruning (the slices hold zeros where tiles were skipped),
  // their sums the summary's row sums.
  void report(const Inputs& in, const std::vector<const Slice*>& mine, Outcome& r);

 private:
  const Team& team_;
  const Config& c_;
  const Plan& plan_;
  double least_;
  Pruning pruning_;
  std::vector<std::int32_t> ones_a_;  // A's popcounts on the host
  std::vector<std::int64_t> rows_;    // the slice in hand's rows in popcount order
  Kokkos::View<std::int32_t*, MemSpace> ones_a_dev_, ones_b_dev_, ones_b_sorted_;  // the last in popcount order
  Kokkos::View<std::int64_t*, MemSpace> row_ids_, col_ids_;
  Packed a_sorted_, b_sorted_;  // the slice's rows, every target, in popcount order
  Kokkos::View<std::int64_t, MemSpace> skipped_;
  PrunedHits<MemSpace> hits_;
  std::int64_t hit_count_ = 0;       // the last slice's
  std::int64_t skipped_before_ = 0;  // tiles skipped before the last slice
  void compute_hits(std::int64_t height);
  std::int64_t tiles_ = 0;  // of this rank's slices since restart()
  void checked_rows_unpruned(const Inputs& in, const std::vector<const Slice*>& mine, Outcome& r);
};

}  // namespace kmini::gram::detail
