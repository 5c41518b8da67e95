// gram.prune in the slice loop (impl/gram_pruned_slices.hpp).
#include "core/collective.hpp"
#include "gram/impl/gram_compute.hpp"
#include "gram/impl/gram_kernels.hpp"
#include "gram/impl/gram_pruned_slices.hpp"

#include <algorithm>
#include <numeric>

namespace kmini::gram::detail {

namespace {

using HostIds = Kokkos::View<const std::int64_t*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>;

// Hits a pruned slice's views hold at least (else one pair in kPrunedHitShare).
constexpr std::int64_t kInitialHits = 1 << 16;

// A hits view, not filled: only the hits found are written (and their pages touched).
template <class T>
Kokkos::View<T*, MemSpace> hit_view(const char* label, std::int64_t n) {
  return Kokkos::View<T*, MemSpace>(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), n);
}

}  // namespace

PrunedSlices::PrunedSlices(const Team& team, const Config& c, const Plan& plan, const Inputs& in,
                           const SliceBuffers& buffers, double least)
    : team_(team), c_(c), plan_(plan), least_(least), ones_a_dev_(buffers.ones), ones_b_dev_(buffers.ones_b) {
  // Tversky's weights round: a bound a hair below the minimum is not trusted to be below it.
  pruning_ = {c.similarity, c.similarity_params(), least * (1 - 1e-9)};
  collectively(team.comm, "gram", [&] {
    row_ids_ = Kokkos::View<std::int64_t*, MemSpace>("kmini::gram::prune_rows", plan.height);
    col_ids_ = Kokkos::View<std::int64_t*, MemSpace>("kmini::gram::prune_cols", plan.targets);
    skipped_ = Kokkos::View<std::int64_t, MemSpace>("kmini::gram::prune_skipped");
    ones_b_sorted_ = Kokkos::View<std::int32_t*, MemSpace>("kmini::gram::prune_ones", plan.targets);
    const std::int64_t capacity = std::max(kInitialHits, plan.height * (plan.targets / kPrunedHitShare));
    hits_ = {hit_view<std::int64_t>("kmini::gram::prune_hit_i", capacity),
             hit_view<std::int64_t>("kmini::gram::prune_hit_j", capacity),
             hit_view<double>("kmini::gram::prune_hit_value", capacity),
             Kokkos::View<std::int64_t, MemSpace>("kmini::gram::prune_hits")};
    const auto words = static_cast<std::int64_t>(in.a.extent(1));
    a_sorted_ = Packed(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kmini::gram::prune_a"), plan.height, words);
    b_sorted_ = Packed(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kmini::gram::prune_b"), plan.targets, words);
    return 0;
  });
  ones_a_.resize(static_cast<std::size_t>(plan.rows));
  copy_to_host<std::int32_t>(team.exec, buffers.ones, plan.rows, ones_a_.data());
  std::vector<std::int32_t> ones_b(static_cast<std::size_t>(plan.targets));
  copy_to_host<std::int32_t>(team.exec, buffers.ones_b, plan.targets, ones_b.data());
  std::vector<std::int64_t> cols(ones_b.size());  // the targets by popcount, ties by row
  std::iota(cols.begin(), cols.end(), 0);
  std::stable_sort(cols.begin(), cols.end(), [&](std::int64_t x, std::int64_t y) { return ones_b[x] < ones_b[y]; });
  std::vector<std::int32_t> sorted_ones(cols.size());
  for (std::size_t q = 0; q < cols.size(); ++q) sorted_ones[q] = ones_b[static_cast<std::size_t>(cols[q])];
  Kokkos::deep_copy(team.exec, ones_b_sorted_,
                    Kokkos::View<const std::int32_t*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(sorted_ones.data(),
                                                                                                  sorted_ones.size()));
  Kokkos::deep_copy(team.exec, col_ids_, HostIds(cols.data(), cols.size()));
  gather_rows(team.exec, b_sorted_, in.targets(), col_ids_, plan.targets);
  team.exec.fence();
}

void PrunedSlices::compute(const Slice& s, const Inputs& in) {
  const std::int64_t h = s.r1 - s.r0;
  rows_.resize(static_cast<std::size_t>(h));
  std::iota(rows_.begin(), rows_.end(), s.r0);
  std::stable_sort(rows_.begin(), rows_.end(), [&](std::int64_t x, std::int64_t y) { return ones_a_[x] < ones_a_[y]; });
  Kokkos::deep_copy(team_.exec, Kokkos::subview(row_ids_, Kokkos::make_pair(std::int64_t(0), h)),
                    HostIds(rows_.data(), rows_.size()));
  team_.exec.fence();  // rows_ is the next slice's
  gather_rows(team_.exec, a_sorted_, in.a, row_ids_, h);
  Kokkos::deep_copy(team_.exec, Kokkos::View<std::int64_t, Kokkos::HostSpace>(&skipped_before_), skipped_);
  team_.exec.fence();
  compute_hits(h);
  tiles_ += plan_.geometry(s, true).tile_count();
}

// The slice's tiles into hits_, the skipped ones counted in skipped_.
void PrunedSlices::compute_hits(std::int64_t height) {
  Kokkos::deep_copy(team_.exec, hits_.count, std::int64_t(0));
  gram_slice_pruned(team_.exec, a_sorted_, b_sorted_, row_ids_, col_ids_, ones_a_dev_, ones_b_dev_, ones_b_sorted_,
                    height, hits_, skipped_, pruning_, least_, c_.engine, c_.micro_kernel);
  Kokkos::deep_copy(team_.exec, Kokkos::View<std::int64_t, Kokkos::HostSpace>(&hit_count_), hits_.count);
  team_.exec.fence();
}

void PrunedSlices::fit(const Slice* s) {
  const bool grow = s && hit_count_ > static_cast<std::int64_t>(hits_.i.extent(0));
  const std::int64_t grown = hit_count_ + hit_count_ / 4;
  collectively(team_.comm, "gram", [&] {
    if (grow) {
      hits_.i = {};  // freed before the larger ones are allocated
      hits_.j = {};
      hits_.v = {};
      hits_.i = hit_view<std::int64_t>("kmini::gram::prune_hit_i", grown);
      hits_.j = hit_view<std::int64_t>("kmini::gram::prune_hit_j", grown);
      hits_.v = hit_view<double>("kmini::gram::prune_hit_value", grown);
    }
    return 0;
  });
  if (!grow) return;
  Kokkos::deep_copy(team_.exec, skipped_, skipped_before_);  // its skipped tiles counted once
  compute_hits(s->r1 - s->r0);                               // the same rows, still gathered
}

SliceHits PrunedSlices::hits() {
  const auto n = static_cast<std::size_t>(hit_count_);
  const auto range = Kokkos::make_pair(std::int64_t(0), hit_count_);
  std::vector<std::int64_t> i(n), j(n);
  std::vector<double> v(n);
  using HostI64 = Kokkos::View<std::int64_t*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>;
  Kokkos::deep_copy(team_.exec, HostI64(i.data(), n), Kokkos::subview(hits_.i, range));
  Kokkos::deep_copy(team_.exec, HostI64(j.data(), n), Kokkos::subview(hits_.j, range));
  Kokkos::deep_copy(team_.exec, Kokkos::View<double*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(v.data(), n),
                    Kokkos::subview(hits_.v, range));
  team_.exec.fence();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t(0));
  std::sort(order.begin(), order.end(),
            [&](std::size_t x, std::size_t y) { return i[x] != i[y] ? i[x] < i[y] : j[x] < j[y]; });
  SliceHits out;
  out.i.resize(n);
  out.j.resize(n);
  out.v.resize(n);
  for (std::size_t e = 0; e < n; ++e) {
    out.i[e] = i[order[e]];
    out.j[e] = j[order[e]];
    out.v[e] = v[order[e]];
  }
  return out;
}

void PrunedSlices::restart() {
  Kokkos::deep_copy(team_.exec, skipped_, std::int64_t(0));
  tiles_ = 0;
}

void PrunedSlices::report(const Inputs& in, const std::vector<const Slice*>& mine, Outcome& r) {
  std::int64_t counts[2] = {0, tiles_};
  Kokkos::deep_copy(team_.exec, Kokkos::View<std::int64_t, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(&counts[0]),
                    skipped_);
  team_.exec.fence();
  r.pass.executed_words -= double(counts[0]) * Tuning::tile * Tuning::tile * double(in.a.extent(1));
  mpi::allreduce(team_.comm, counts, 2, MPI_INT64_T, MPI_SUM);
  Json& m = r.metrics["pruning"];
  m["minimum"] = least_;
  m["tiles"] = Json(static_cast<long long>(counts[1]));
  m["tiles_skipped"] = Json(static_cast<long long>(counts[0]));
  r.pruned = true;
  if (team_.verify) checked_rows_unpruned(in, mine, r);
}

void PrunedSlices::checked_rows_unpruned(const Inputs& in, const std::vector<const Slice*>& mine, Outcome& r) {
  Kokkos::View<std::int32_t*, MemSpace> row("kmini::gram::checked_row", plan_.targets);
  r.summary.row_sums.assign(static_cast<std::size_t>(plan_.rows), 0);
  for (const Slice* s : mine) {
    for (std::int64_t i : r.checked.rows) {
      if (!s || i < s->r0 || i >= s->r1) continue;
      gram_slice(team_.exec, in.a, in.targets(), SliceGeometry{plan_.rows, i, i + 1, plan_.targets}, row, c_.engine,
                 c_.micro_kernel, c_.tensor_core_tile);
      std::vector<std::int32_t>& values = r.checked.values[i];
      values.resize(static_cast<std::size_t>(plan_.targets));
      copy_to_host<std::int32_t>(team_.exec, row, plan_.targets, values.data());
      r.checked.from[i] = 0;
      for (std::int32_t v : values) r.summary.row_sums[static_cast<std::size_t>(i)] += v;
    }
  }
  mpi::allreduce(team_.comm, r.summary.row_sums.data(), static_cast<int>(plan_.rows), MPI_INT64_T, MPI_SUM);
}

}  // namespace kmini::gram::detail
