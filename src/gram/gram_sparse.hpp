#pragma once
// The sparse outputs of a Gram run — count_at_least, write.pairs and
// write.top_k — fed slice by slice in the plan's rounds: pairs are streamed
// to their sink (the CLI's file, or memory) as each round ends (offsets from the counts of the round's
// slices, which are consecutive in row order), the top-k lists live on the
// device (rows x k) and are merged across ranks and written at the end.
#include "gram/gram.hpp"
#include "io/json.hpp"
#include "io/npy.hpp"

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kmini::gram {

using IntView = Kokkos::View<std::int32_t*, MemSpace>;

// Structured .npy records: pairs (i <i8, j <i8, value) and top-k entries
// (j <i8, value); value <i4 for counts, <f4 otherwise.
npy::ElementType pair_record_type(Similarity s);
npy::ElementType top_k_record_type(Similarity s);

// Device bytes of the top-k lists: rows x k (j int64, value double).
double top_k_bytes(const Config& c);

// One entry of a top-k list on the host (the MPI merge's element).
struct TopKEntry {
  double value;
  std::int64_t j;
};

// A pruned slice's pairs at or above the smallest of the outputs' minimums
// (gram.prune): every pair an output keeps, sorted by row, then target, with
// the value the device computed.
struct SliceHits {
  std::vector<std::int64_t> i, j;
  std::vector<double> v;
};

namespace detail {
class RecordSink;
}

class SparseOutputs {
 public:
  // Collective (allocates). The records go to `records` (gram_compute.hpp),
  // which must outlive this; it may be null where no pairs or lists are written.
  SparseOutputs(const ExecSpace& exec, const Config& c, const Plan& plan, MPI_Comm comm, detail::RecordSink* records);
  ~SparseOutputs();
  SparseOutputs(const SparseOutputs&) = delete;
  SparseOutputs& operator=(const SparseOutputs&) = delete;

  bool any() const { return counting_ || pairs_ || top_k_; }
  // Collective, once per round of the plan: the slice this rank computed in
  // this round (nullptr: none), its counts, the rows' ones of A and of the
  // columns' matrix (B, or A again).
  void add_round(const Slice* slice, const IntView& counts, const IntView& ones_a, const IntView& ones_b);
  // Collective, once per round of a pruned plan, in add_round's place: the
  // hits of the slice this rank computed in this round (nullptr: none). The
  // outputs are those the slice's counts would give.
  void add_hits(const Slice* slice, const SliceHits& hits);
  // Circulant plans (gram.ring_schedule): the lists are those of this rank's
  // block of rows, and those of the partner block's piece in hand (steps but
  // the diagonal). One window of a block pair: its counts into count_at_least
  // and the top-k lists (its columns' rows: own lists, w.slot 0, or the
  // partner piece's, whose first row is col_list0).
  void add_window(const CirculantWindow& w, std::int64_t col_list0, const IntView& counts, const IntView& ones_a,
                  const IntView& ones_b);
  // Collective, after step t of piece j: the partner piece's lists (complete:
  // only this step offers to them) go to their owner, rank + t, and rank - t's
  // lists of this rank's piece j come in, to be merged into its own (host)
  // lists when the next step's go out (nonblocking meanwhile).
  void end_step(std::int64_t j, std::int64_t t);
  // A circulant pass stopped after a step (on every rank): the lists still in
  // flight are received, so that no transfer outlives its buffers.
  void settle();
  // Collective: merges and writes the top-k lists, commits the pairs,
  // and reports count_at_least, pairs_written and the seconds spent;
  // `counts`, when given, gets count_at_least in the deck's order.
  void finish(Json& metrics, Json* summary, std::vector<std::int64_t>* counts = nullptr);
  double seconds() const { return seconds_; }
  // This rank's seconds in the pairs' and top-k files' writes (within seconds()).
  double write_seconds() const { return write_seconds_; }

 private:
  struct Device;
  template <class Values>
  void write_pairs(const Slice* slice, const SliceGeometry& g, const Values& values);  // collective
  // Collective: a slice's `total` pairs after the earlier ones, in pieces of
  // the pairs buffer, fill(at, n, out) putting records at..at+n at out.
  template <class Fill>
  void write_pair_records(const Slice* slice, std::int64_t total, Fill&& fill);
  std::vector<double> thresholds_;      // count_at_least, sorted ascending
  std::vector<std::int64_t> hit_bins_;  // add_hits: count_at_least's bins
  std::vector<std::int64_t> hit_j_;     // add_hits: the top-k lists, rows x k
  std::vector<double> hit_v_;
  ExecSpace exec_;
  const Config& c_;
  const Plan& plan_;
  MPI_Comm comm_;
  bool counting_ = false, pairs_ = false, top_k_ = false;
  std::unique_ptr<Device> dev_;
  detail::RecordSink* records_ = nullptr;
  std::int64_t pairs_written_ = 0;  // all ranks, rounds so far
  int rank_ = 0, ranks_ = 1;
  std::int64_t own0_ = 0, own_rows_ = 0;  // circulant: the block of rows whose lists this rank holds
  std::vector<TopKEntry> merged_;         // circulant: the partners' lists of the own rows, merged so far
  // Circulant: the partner lists' trip home, nonblocking, completed at the
  // next step's (or at finish): what is sent, what comes in and where it merges.
  struct Exchange {
    std::vector<TopKEntry> out, in;
    std::int64_t first = 0, rows = 0;  // the own rows `in` holds (first: from the block's first row)
    MPI_Request req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  };
  Exchange exchange_;
  void complete_exchange();
  Json finish_counts(std::vector<std::int64_t>* counts);
  void finish_top_k();
  double exchange_seconds_ = 0;
  double seconds_ = 0;
  double write_seconds_ = 0;
};

// The lists of k of two ranks merged (the MPI user operation, row by row):
// inout's rows become the k best of both, best first (ranks_before).
void merge_top_k_rows(const TopKEntry* in, TopKEntry* inout, std::int64_t rows, int k);

}  // namespace kmini::gram
