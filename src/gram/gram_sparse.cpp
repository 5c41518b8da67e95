#include "gram/gram_sparse.hpp"

#include "core/collective.hpp"
#include "core/mpi_type.hpp"
#include "core/solo.hpp"
#include "core/timer.hpp"
#include "gram/impl/gram_compute.hpp"
#include "gram/impl/gram_records.hpp"
#include "gram/impl/gram_top_k.hpp"

#include <algorithm>
#include <cstring>

namespace kmini::gram {

namespace {

using npy::DType;
using I64View = Kokkos::View<std::int64_t*, MemSpace>;
using F64View = Kokkos::View<double*, MemSpace>;

constexpr int kTopKTag = 2324;  // circulant: partner lists going home
// Circulant windows take the top-k scan's group bound from this many columns
// (replicated slices: 4 x kTopKGroups): 0.97 -> 0.48 s of top-k, 20 000 x
// 16 384 on one rank in windows of 256 x 512.
constexpr std::int64_t kCirculantBoundCols = 16 * kTopKGroups;

DType value_dtype(Similarity s) { return s == Similarity::Counts ? DType::I4 : DType::F4; }

// MPI user operation: rows of k entries (the datatype is one row).
void merge_op(void* in, void* inout, int* len, MPI_Datatype* type) {
  int bytes = 0;
  MPI_Type_size(*type, &bytes);
  merge_top_k_rows(static_cast<const TopKEntry*>(in), static_cast<TopKEntry*>(inout), *len,
                   bytes / static_cast<int>(sizeof(TopKEntry)));
}

}  // namespace

npy::ElementType pair_record_type(Similarity s) {
  return npy::ElementType(std::vector<npy::Field>{{"i", DType::I8}, {"j", DType::I8}, {"value", value_dtype(s)}});
}

npy::ElementType top_k_record_type(Similarity s) {
  return npy::ElementType(std::vector<npy::Field>{{"j", DType::I8}, {"value", value_dtype(s)}});
}

double top_k_bytes(const Config& c) {
  return c.write_top_k.empty() ? 0.0 : double(c.a.rows) * double(c.top_k) * sizeof(TopKEntry);
}

void merge_top_k_rows(const TopKEntry* in, TopKEntry* inout, std::int64_t rows, int k) {
  std::vector<TopKEntry> merged(static_cast<std::size_t>(k));
  for (std::int64_t r = 0; r < rows; ++r) {
    const TopKEntry* a = in + r * k;
    TopKEntry* b = inout + r * k;
    int p = 0, q = 0;
    for (int t = 0; t < k; ++t) {
      const bool take_a = q >= k || (p < k && ranks_before(a[p].value, a[p].j, b[q].value, b[q].j));
      merged[static_cast<std::size_t>(t)] = take_a ? a[p++] : b[q++];
    }
    std::copy(merged.begin(), merged.end(), b);
  }
}

struct SparseOutputs::Device {
  F64View thresholds;        // count_at_least, sorted ascending
  I64View bins;              // pairs with exactly b thresholds <= value
  I64View per_row, offsets;  // pairs of the slice's rows; their exclusive scan
  I64View pair_i, pair_j;    // the pairs buffer
  F64View pair_v;
  I64View::HostMirror host_i, host_j;
  F64View::HostMirror host_v;
  I64View best_j;  // top-k lists, rows x k, best first (circulant: the own block's rows)
  F64View best_v;
  I64View partner_j;  // circulant: the lists of the partner piece's rows (the step in hand)
  F64View partner_v;
  I64View self_cols;  // gram.exclude_self: each row of A's own target, or -1 (empty: none)
};

SparseOutputs::SparseOutputs(const ExecSpace& exec, const Config& c, const Plan& plan, MPI_Comm comm,
                             detail::RecordSink* records)
    : exec_(exec),
      c_(c),
      plan_(plan),
      comm_(comm),
      counting_(!c.count_at_least.empty()),
      pairs_(!c.write_pairs.empty()),
      top_k_(!c.write_top_k.empty()),
      records_(records) {
  rank_ = mpi::rank(comm);
  ranks_ = mpi::size(comm);
  thresholds_ = c.count_at_least;
  std::sort(thresholds_.begin(), thresholds_.end());
  if (plan.circulant()) {
    own0_ = Plan::block_begin(plan.rows, ranks_, rank_);
    own_rows_ = Plan::block_begin(plan.rows, ranks_, rank_ + 1) - own0_;
    if (top_k_ && !c.two_inputs()) merged_.assign(static_cast<std::size_t>(own_rows_ * c.top_k), TopKEntry{-1.0, -1});
  }
  if (!any()) return;
  ScopedRegion region("kmini::gram::sparse_outputs");
  dev_ = collectively(comm, "gram", [&] {
    auto d = std::make_unique<Device>();
    const std::vector<double>& sorted = thresholds_;
    const auto nt = static_cast<std::int64_t>(sorted.size());
    d->thresholds = F64View("kmini::gram::thresholds", nt);
    Kokkos::deep_copy(d->thresholds, Kokkos::View<const double*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(
                                         sorted.data(), sorted.size()));
    d->bins = I64View("kmini::gram::threshold_bins", counting_ ? nt + 1 : 0);
    const std::int64_t h = pairs_ ? plan.height : 0;
    const std::int64_t cap = pairs_ ? pair_buffer_records(c, plan) : 0;  // a pruned plan's: pieces of its hits
    d->per_row = I64View("kmini::gram::pairs_per_row", h);
    d->offsets = I64View("kmini::gram::pair_offsets", pairs_ ? h + 1 : 0);
    d->pair_i = I64View("kmini::gram::pair_i", cap);
    d->pair_j = I64View("kmini::gram::pair_j", cap);
    d->pair_v = F64View("kmini::gram::pair_v", cap);
    d->host_i = Kokkos::create_mirror_view(d->pair_i);
    d->host_j = Kokkos::create_mirror_view(d->pair_j);
    d->host_v = Kokkos::create_mirror_view(d->pair_v);
    const std::int64_t lists = !top_k_ ? 0 : plan.circulant() ? own_rows_ * c.top_k : c.a.rows * c.top_k;
    d->best_j = I64View("kmini::gram::top_k_j", lists);
    d->best_v = F64View("kmini::gram::top_k_value", lists);
    clear_top_k(exec, d->best_j, d->best_v);
    const std::int64_t partner =
        top_k_ && plan.circulant() && !c.two_inputs() && plan.steps > 1 ? plan.piece_rows * c.top_k : 0;
    d->partner_j = I64View("kmini::gram::top_k_partner_j", partner);
    d->partner_v = F64View("kmini::gram::top_k_partner_value", partner);
    clear_top_k(exec, d->partner_j, d->partner_v);
    d->self_cols = I64View("kmini::gram::self_cols", static_cast<std::int64_t>(c.self_cols.size()));
    Kokkos::deep_copy(exec, d->self_cols,
                      Kokkos::View<const std::int64_t*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(
                          c.self_cols.data(), c.self_cols.size()));
    exec.fence();
    return d;
  });
}

SparseOutputs::~SparseOutputs() = default;

void SparseOutputs::add_round(const Slice* slice, const IntView& counts, const IntView& ones_a, const IntView& ones_b) {
  if (!any()) return;
  ScopedRegion region("kmini::gram::sparse_outputs");
  FencedTimer<ExecSpace> timer(exec_);
  const SliceGeometry g = slice ? plan_.geometry(*slice, c_.two_inputs()) : SliceGeometry{};
  with_similarity(c_.similarity, [&](auto kind) {
    const SliceValues<IntView, IntView, decltype(kind)::value> values(counts, ones_a, ones_b, g, c_.similarity_params(),
                                                                      dev_->self_cols);
    if (slice && counting_) count_at_least(exec_, values, g, dev_->thresholds, dev_->bins);
    if (slice && top_k_) top_k_slice(exec_, values, g, static_cast<int>(c_.top_k), dev_->best_j, dev_->best_v);
    if (pairs_) write_pairs(slice, g, values);
  });
  seconds_ += timer.seconds();
}

void SparseOutputs::add_window(const CirculantWindow& w, std::int64_t col_list0, const IntView& counts,
                               const IntView& ones_a, const IntView& ones_b) {
  if (!counting_ && !top_k_) return;
  ScopedRegion region("kmini::gram::sparse_outputs");
  FencedTimer<ExecSpace> timer(exec_);
  const OutputWindow g(w.r0, w.r1, w.c0, w.c1, w.triangular, w.mirror);
  with_similarity(c_.similarity, [&](auto kind) {
    const SliceValues<IntView, IntView, decltype(kind)::value> values(counts, ones_a, ones_b, g, c_.similarity_params(),
                                                                      dev_->self_cols);
    if (counting_) count_at_least(exec_, values, g, dev_->thresholds, dev_->bins);
    if (!top_k_) return;
    const auto k = static_cast<int>(c_.top_k);
    if (w.slot == 0) {
      top_k_window(exec_, values, g, k, dev_->best_j, dev_->best_v, own0_, dev_->best_j, dev_->best_v, own0_,
                   kCirculantBoundCols);
    } else {
      top_k_window(exec_, values, g, k, dev_->best_j, dev_->best_v, own0_, dev_->partner_j, dev_->partner_v, col_list0,
                   kCirculantBoundCols);
    }
  });
  seconds_ += timer.seconds();
}

void SparseOutputs::complete_exchange() {
  Exchange& x = exchange_;
  if (x.req[0] == MPI_REQUEST_NULL && x.req[1] == MPI_REQUEST_NULL) return;
  MPI_Waitall(2, x.req, MPI_STATUSES_IGNORE);
  merge_top_k_rows(x.in.data(), merged_.data() + x.first * c_.top_k, x.rows, static_cast<int>(c_.top_k));
}

void SparseOutputs::settle() {
  Exchange& x = exchange_;
  if (x.req[0] != MPI_REQUEST_NULL || x.req[1] != MPI_REQUEST_NULL) MPI_Waitall(2, x.req, MPI_STATUSES_IGNORE);
}

void SparseOutputs::end_step(std::int64_t j, std::int64_t t) {
  if (!top_k_ || c_.two_inputs() || t == 0) return;
  ScopedRegion region("kmini::gram::sparse_outputs");
  FencedTimer<ExecSpace> timer(exec_);
  complete_exchange();  // the last step's lists are home and merged; its buffers are free
  const std::int64_t k = c_.top_k;
  auto host_j = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dev_->partner_j);
  auto host_v = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dev_->partner_v);
  const int to = static_cast<int>((rank_ + t) % ranks_), from = static_cast<int>((rank_ - t + ranks_) % ranks_);
  const auto [p0, p1] = plan_.piece(to, j, false);           // the partner piece in hand
  const auto [mine0, mine1] = plan_.piece(rank_, j, false);  // this rank's piece j, in rank - t's hand
  Exchange& x = exchange_;
  x.out.resize(static_cast<std::size_t>((p1 - p0) * k));
  x.in.resize(static_cast<std::size_t>((mine1 - mine0) * k));
  x.first = mine0 - own0_;
  x.rows = mine1 - mine0;
  for (std::size_t e = 0; e < x.out.size(); ++e) x.out[e] = {host_v(e), host_j(e)};
  MPI_Irecv(x.in.data(), static_cast<int>(x.in.size() * sizeof(TopKEntry)), MPI_BYTE, from, kTopKTag, comm_, &x.req[0]);
  MPI_Isend(x.out.data(), static_cast<int>(x.out.size() * sizeof(TopKEntry)), MPI_BYTE, to, kTopKTag, comm_, &x.req[1]);
  clear_top_k(exec_, dev_->partner_j, dev_->partner_v);
  exec_.fence();
  exchange_seconds_ += timer.seconds();
}

template <class Values>
void SparseOutputs::write_pairs(const Slice* slice, const SliceGeometry& g, const Values& values) {
  // This slice's pairs, row by row.
  std::int64_t total = 0;
  if (slice) {
    const std::int64_t h = g.height();
    pairs_per_row(exec_, values, g, c_.pairs_min, dev_->per_row);
    total = pair_offsets(exec_, dev_->per_row, dev_->offsets, h);
  }
  write_pair_records(slice, total, [&](std::int64_t at, std::int64_t n, char* out) {
    collect_pairs(exec_, values, g, c_.pairs_min, dev_->offsets, at, n, dev_->pair_i, dev_->pair_j, dev_->pair_v);
    Kokkos::deep_copy(exec_, dev_->host_i, dev_->pair_i);
    Kokkos::deep_copy(exec_, dev_->host_j, dev_->pair_j);
    Kokkos::deep_copy(exec_, dev_->host_v, dev_->pair_v);
    exec_.fence();
    for (std::int64_t e = 0; e < n; ++e)
      out = put_pair(out, c_.similarity, dev_->host_i(e), dev_->host_j(e), dev_->host_v(e));
  });
}

template <class Fill>
void SparseOutputs::write_pair_records(const Slice* slice, std::int64_t total, Fill&& fill) {
  // The round's slices are consecutive in row order: this slice's pairs go
  // after all earlier rounds' and the round's slices above it.
  const int ranks = ranks_;
  const std::int64_t mine[2] = {slice ? slice->r0 : -1, total};
  std::vector<std::int64_t> all(mine, mine + 2);
  all.resize(static_cast<std::size_t>(2 * ranks));
  if (!mpi::solo(comm_)) MPI_Allgather(mine, 2, MPI_INT64_T, all.data(), 2, MPI_INT64_T, comm_);
  std::int64_t first = pairs_written_;
  for (int q = 0; q < ranks; ++q) {
    const std::int64_t r0 = all[2 * q], n = all[2 * q + 1];
    if (slice && r0 >= 0 && r0 < slice->r0) first += n;
    pairs_written_ += n;
  }
  // Written in pieces of the buffer's size; every rank takes part in as many writes as the busiest.
  const auto cap = static_cast<std::int64_t>(dev_->pair_i.extent(0));
  const std::int64_t pieces = total > 0 ? (total + cap - 1) / cap : 0;
  std::int64_t rounds = pieces;
  mpi::allreduce(comm_, &rounds, 1, MPI_INT64_T, MPI_MAX);
  std::vector<char> records;
  for (std::int64_t p = 0; p < rounds; ++p) {
    if (p >= pieces) {
      const Kokkos::Timer write_timer;
      records_->pairs(0, 0, nullptr);
      write_seconds_ += write_timer.seconds();
      continue;
    }
    const std::int64_t at = p * cap, n = std::min(cap, total - at);
    records.resize(static_cast<std::size_t>(n) * kPairRecordBytes);
    fill(at, n, records.data());
    const Kokkos::Timer write_timer;
    records_->pairs(static_cast<std::uint64_t>(first + at), static_cast<std::uint64_t>(n), records.data());
    write_seconds_ += write_timer.seconds();
  }
}

void SparseOutputs::add_hits(const Slice* slice, const SliceHits& hits) {
  if (!any()) return;
  ScopedRegion region("kmini::gram::sparse_outputs");
  const Kokkos::Timer timer;
  const std::size_t n = slice ? hits.i.size() : 0;
  // What the dense outputs leave out: a row's own column (gram.exclude_self).
  const auto own = [&](std::size_t e) {
    return !c_.self_cols.empty() && c_.self_cols[static_cast<std::size_t>(hits.i[e])] == hits.j[e];
  };
  if (counting_ && n > 0) {  // the bins of CountAtLeast
    const auto nt = static_cast<int>(thresholds_.size());
    hit_bins_.resize(thresholds_.size() + 1, 0);
    for (std::size_t e = 0; e < n; ++e)
      if (!own(e)) ++hit_bins_[static_cast<std::size_t>(threshold_bin(hits.v[e], thresholds_.data(), nt))];
  }
  if (top_k_ && n > 0) {  // the lists of top_k_slice, offered the same way (empty: ClearTopK's entries)
    const auto k = static_cast<int>(c_.top_k);
    const auto size = static_cast<std::size_t>(c_.a.rows * k);
    if (hit_j_.empty()) {
      hit_j_.assign(size, -1);
      hit_v_.assign(size, -1.0);
    }
    const Kokkos::View<std::int64_t*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> best_j(hit_j_.data(), size);
    const Kokkos::View<double*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> best_v(hit_v_.data(), size);
    for (std::size_t e = 0; e < n; ++e) {
      const std::int64_t base = hits.i[e] * k, last = base + k - 1;
      if (!own(e) && ranks_before(hits.v[e], hits.j[e], best_v(last), best_j(last)))
        offer(best_j, best_v, base, k, hits.j[e], hits.v[e]);
    }
  }
  if (pairs_) {
    std::vector<std::size_t> kept;
    for (std::size_t e = 0; e < n; ++e)
      if (hits.v[e] >= c_.pairs_min && !own(e)) kept.push_back(e);
    write_pair_records(slice, static_cast<std::int64_t>(kept.size()), [&](std::int64_t at, std::int64_t m, char* out) {
      for (std::int64_t e = at; e < at + m; ++e) {
        const std::size_t h = kept[static_cast<std::size_t>(e)];
        out = put_pair(out, c_.similarity, hits.i[h], hits.j[h], hits.v[h]);
      }
    });
  }
  seconds_ += timer.seconds();
}

// count_at_least over all ranks, in the deck's order.
Json SparseOutputs::finish_counts(std::vector<std::int64_t>* counts) {
  const auto nb = static_cast<std::int64_t>(dev_->bins.extent(0));
  std::vector<std::int64_t> bins(static_cast<std::size_t>(nb));
  Kokkos::deep_copy(exec_, Kokkos::View<std::int64_t*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(bins.data(), nb),
                    dev_->bins);
  exec_.fence();
  for (std::size_t b = 0; b < hit_bins_.size(); ++b) bins[b] += hit_bins_[b];  // a pruned run's
  mpi::allreduce(comm_, bins.data(), static_cast<int>(nb), MPI_INT64_T, MPI_SUM);
  const std::vector<double>& sorted = thresholds_;
  Json list = Json::array();
  for (double x : c_.count_at_least) {
    const std::int64_t n = pairs_at_or_above(sorted, bins, x);
    if (counts) counts->push_back(n);
    Json e = Json::object();
    e["min"] = x;
    e["pairs"] = Json(static_cast<long long>(n));
    list.push_back(e);
  }
  return list;
}

// The top-k lists merged over the ranks and handed to the sink: each rank
// the final lists of its block of rows.
void SparseOutputs::finish_top_k() {
  // Every rank's lists hold the partners of its slices.
  const std::int64_t rows = c_.a.rows, k = c_.top_k;
  const std::int64_t held = plan_.circulant() ? own_rows_ : rows;  // rows whose lists this rank holds
  std::vector<TopKEntry> lists(static_cast<std::size_t>(held * k));
  {
    auto hj = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dev_->best_j);
    auto hv = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dev_->best_v);
    for (std::int64_t e = 0; e < held * k; ++e) lists[static_cast<std::size_t>(e)] = {hv(e), hj(e)};
  }
  if (!hit_j_.empty()) {  // a pruned run's lists
    std::vector<TopKEntry> hit(static_cast<std::size_t>(held * k));
    for (std::size_t e = 0; e < hit.size(); ++e) hit[e] = {hit_v_[e], hit_j_[e]};
    merge_top_k_rows(hit.data(), lists.data(), held, static_cast<int>(k));
  }
  std::vector<int> block_rows(static_cast<std::size_t>(ranks_));
  for (int q = 0; q < ranks_; ++q)
    block_rows[static_cast<std::size_t>(q)] = static_cast<int>(rows * (q + 1) / ranks_ - rows * q / ranks_);
  const std::int64_t row0 = rows * rank_ / ranks_, nrows = block_rows[static_cast<std::size_t>(rank_)];
  if (plan_.circulant()) {
    complete_exchange();
    // The own rows' lists (the same blocks) and their partners' from the
    // other ranks, merged piece by piece (end_piece).
    if (!merged_.empty()) merge_top_k_rows(merged_.data(), lists.data(), held, static_cast<int>(k));
    std::vector<TopKEntry>().swap(merged_);
  } else if (ranks_ > 1) {
    const mpi::ContiguousType row_type(k * static_cast<std::int64_t>(sizeof(TopKEntry)), MPI_BYTE);
    MPI_Op op;
    MPI_Op_create(&merge_op, 1, &op);
    MPI_Reduce_scatter(MPI_IN_PLACE, lists.data(), block_rows.data(), row_type.get(), op, comm_);
    MPI_Op_free(&op);
  }
  std::vector<char> records;
  records.reserve(static_cast<std::size_t>(nrows * k) * 12);
  for (std::int64_t e = 0; e < nrows * k; ++e) {
    // write.top_k.min: the k best at or above it are the lists' entries that
    // reach it (a list is best first: the others are its tail, left missing).
    const TopKEntry& t = lists[static_cast<std::size_t>(e)];
    append_top_k_entry(records, c_.similarity, t.value >= c_.top_k_min ? t.j : -1, t.value);
  }
  std::vector<TopKEntry>().swap(lists);
  const Kokkos::Timer write_timer;
  records_->top_k(row0, nrows, k, rows, records.data());
  write_seconds_ += write_timer.seconds();
}

void SparseOutputs::finish(Json& m, Json* summary, std::vector<std::int64_t>* counts) {
  if (!any()) return;
  ScopedRegion region("kmini::gram::sparse_outputs");
  FencedTimer<ExecSpace> timer(exec_);
  if (counting_) {
    m["count_at_least"] = finish_counts(counts);
    if (summary) (*summary)["count_at_least"] = m["count_at_least"];
  }
  if (pairs_) {
    const Kokkos::Timer write_timer;
    records_->commit_pairs(pairs_written_);
    write_seconds_ += write_timer.seconds();
    m["pairs_written"] = Json(static_cast<long long>(pairs_written_));
  }
  if (top_k_) {
    finish_top_k();
    Json t = Json::object();
    t["k"] = Json(static_cast<long long>(c_.top_k));
    t["rows"] = Json(static_cast<long long>(c_.a.rows));
    m["top_k"] = t;
  }
  const double finish_seconds = timer.seconds();
  m["sparse_outputs_seconds"] = allreduce_max(comm_, seconds_ + exchange_seconds_ + finish_seconds);
  m["sparse_outputs_finish_seconds"] = allreduce_max(comm_, finish_seconds);
  if (plan_.circulant() && top_k_ && !c_.two_inputs())  // the partner lists' trips home (in the seconds above)
    m["top_k_exchange_seconds"] = allreduce_max(comm_, exchange_seconds_);
}

}  // namespace kmini::gram
