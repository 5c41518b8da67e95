#pragma once
// gram::compute: the one orchestration of a Gram product, for every front
// end. The CLI (GramKernel::run) hands it the inputs it read and packed and
// sinks that write the deck's files; the library (gram_api.cpp, the Python
// module) the arrays it packed and sinks that fill the caller's memory. Both
// run the same plan, kernels, ring and sparse outputs, so their values are
// the same bytes.
#include "gram/gram_sparse.hpp"
#include "gram/impl/gram_detail.hpp"
#include "io/json.hpp"
#include "kernel/phases.hpp"

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace kmini::gram::detail {

using FloatView = Kokkos::View<float*, MemSpace>;

// Dense C, fed once per round of the plan on every rank (collective).
class DenseSink {
 public:
  virtual ~DenseSink() = default;
  // Slice s's values (null: this rank has none this round): `counts`, or the
  // float32 similarities `values` where the similarity is not counts, laid out
  // h x w as SliceGeometry says.
  virtual void round(const Slice* s, const SliceGeometry& g, const IntView& counts, const FloatView& values) = 0;
  virtual void commit() = 0;  // collective, after the last round
  // A view of all of C the slice loop may compute into directly (one slice of
  // counts, C in the kernels' memory), or an empty view.
  virtual IntView counts_in_place() const { return {}; }
  // This rank's seconds in writes (the "write" phase).
  virtual double write_seconds() const { return 0; }
};

// The records of the sparse outputs (gram_sparse.hpp's .npy records).
class RecordSink {
 public:
  virtual ~RecordSink() = default;
  // Collective, in rounds: `n` of this rank's pair records (n may be 0), at
  // position `first` of all ranks' pairs in (i, j) order.
  virtual void pairs(std::uint64_t first, std::uint64_t n, const char* records) = 0;
  virtual void commit_pairs(std::int64_t total) = 0;  // collective
  // Collective, once: rows [row0, row0 + rows) of the all_rows x k top-k lists.
  virtual void top_k(std::int64_t row0, std::int64_t rows, std::int64_t k, std::int64_t all_rows,
                     const char* records) = 0;
};

// The CLI's record sink: write.pairs and write.top_k as .npy files for all
// ranks of `comm` (gram_run.cpp).
// write.pairs.text and write.top_k.text, where the config asks, go where
// text_path resolves their paths (none given: as they are).
std::unique_ptr<RecordSink> record_files(MPI_Comm comm, const Config& c, const std::string& pairs_path,
                                         const std::string& top_k_path,
                                         const std::function<std::string(const std::string&)>& text_path = {});

// Where a computation's outputs go, and what it is asked besides.
struct Outputs {
  DenseSink* dense = nullptr;         // with the config's write.C
  RecordSink* records = nullptr;      // with write.pairs or write.top_k
  bool row_ones = false;              // Outcome::row_ones wanted
  std::function<bool()> interrupted;  // checked once per round, agreed by the ranks
  // After each round of the final pass (circulant: each tick): the rounds
  // done and their total, on every rank; nothing waits for the device for it.
  std::function<void(std::int64_t done, std::int64_t total)> progress;
};

// What a computation measured and produced besides its sinks' contents.
struct Outcome {
  SlicePass pass;
  CheckedRows checked;
  Summary summary;
  Json metrics = Json::object();         // the ring's and the sparse outputs' report fields
  Json sparse_summary = Json::object();  // count_at_least, for the summary file
  std::vector<std::int64_t> counts;      // count_at_least, in its order
  std::vector<std::int32_t> row_ones;    // ones of every row of A (Outputs::row_ones)
  double final_compute_seconds = 0;      // the final pass's tiles (this rank's)
  double write_seconds = 0;              // this rank's writes of every output
  bool interrupted = false;              // stopped between rounds: the outputs are incomplete
  bool pruned = false;                   // gram.prune skipped tiles: C's slices were not whole (no checksum)
};

// The Gram product of `in` as `plan` distributes it over team.comm: `repeat -
// 1` timed passes of the tiles alone, then the final pass, which feeds every
// output (the summary where the config writes one or the team verifies).
// Collective. `clock`, when given, gets the phases compute and outputs.
Outcome compute(const Team& team, const Config& c, const Plan& plan, const Inputs& in, Outputs& out,
                PhaseClock<ExecSpace>* clock = nullptr);

}  // namespace kmini::gram::detail
