#pragma once
// The Gram product as a library function: what front ends (the
// Python module) call. A light header: the input description, the parameters
// and the function; the kernels (packing, tiles, sparse outputs) are in
// impl/, compiled into kmini_gram.
#include "gram/gram.hpp"
#include "gram/gram_similarity.hpp"

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <cstdint>
#include <functional>
#include <vector>

namespace kmini::gram {

using ApiExec = Kokkos::DefaultExecutionSpace;

// A 0/1 matrix in host memory, row-major (C-contiguous), rows x cols:
//  Unpacked: one byte per element (0 or 1; bool or uint8);
//  PackBits: np.packbits(A, axis=1): ceil(cols / 8) bytes per row, numpy's bit order;
//  Words:    ceil(cols / 64) 64-bit words per row, column k in bit k % 64 of word k / 64.
// The values (0/1, no bit set past `cols`) are the caller's to check, with
// first_bad_value.
struct ApiMatrix {
  enum class Format { Unpacked, PackBits, Words } format = Format::Unpacked;
  const void* data = nullptr;
  std::int64_t rows = 0, cols = 0;
  bool on_device = false;  // data in the kernels' memory space (a CUDA array), else host memory
  std::int64_t row_bytes() const {
    return format == Format::Unpacked ? cols : format == Format::PackBits ? (cols + 7) / 8 : (cols + 63) / 64 * 8;
  }
};

// The first element of `m` that is not 0 or 1 (Unpacked: row, col, value),
// or the first row with a bit set past `cols` (PackBits, Words: col = -1);
// row = -1 when there is none. Runs where the data is.
struct BadValue {
  std::int64_t row = -1, col = -1;
  int value = 0;
};
BadValue first_bad_value(const ApiExec& exec, const ApiMatrix& m);

// The most count_at_least thresholds (the device keeps a per-row array).
constexpr int kMaxCountThresholds = 64;

// What gram::compute produces, as the CLI's outputs are defined (gram.write.*,
// gram.count_at_least; see docs/deck-reference.md), computed slice by slice so that
// nothing of size rows x targets exists unless `dense` asks for it.
struct ComputeParams {
  Similarity similarity = Similarity::Counts;  // the values of C, the pairs and the lists
  double empty_similarity = 0;                 // the similarity of two empty rows (gram.empty_similarity)
  double tversky_alpha = 1, tversky_beta = 1;  // similarity tversky's weights (gram.tversky)
  std::vector<std::int64_t> self_cols;         // gram.exclude_self: each row of A's own target, or -1
  bool dense = true;                           // C itself (int32 counts, else float32)
  bool upper = false;                          // dense C as the packed upper triangle (one input)
  std::int64_t top_k = 0;                      // > 0: the k best partners of every row of A
  double top_k_min = 0;                        // ... of those with a value >= this (write.top_k.min)
  bool pairs = false;                          // the pairs with value >= pairs_min
  double pairs_min = 0;
  std::vector<double> count_at_least;  // the number of pairs at or above each (deck order)
  std::int64_t slice_rows = 0;         // rows of C per slice; 0: all of them
  bool dense_on_device = false;        // `dense` is in the kernels' memory space (a CUDA array), else host memory
  // Over ranks (RankRows), as the deck's gram.distribution and ring_schedule;
  // the CLI's plan takes its slice height (slice_rows 0) and, with auto, the
  // distribution from memory_budget, device bytes per rank (0: no limit).
  Distribution distribution = Distribution::Replicated;
  RingSchedule ring_schedule = RingSchedule::Auto;
  double memory_budget = 0;
  std::function<bool()> interrupted;  // checked between slices (Ctrl-C from Python)
  bool summary = false;               // ComputeResult::summary, the CLI's gram.write.summary
  bool prune = false;                 // gram.prune (prune_minimum)
};

// Host bytes of one record: pairs (i int64, j int64, value), top-k entries
// (j int64, value); value int32 for counts, float32 otherwise: the CLI's .npy
// records (gram_sparse.cpp), so front ends can view them as structured arrays.
constexpr std::int64_t pair_record_bytes = 20;
constexpr std::int64_t top_k_record_bytes = 12;

struct ComputeResult {
  std::vector<char> top_k;  // rows x k records, best first; missing: j = -1, value 0
  std::vector<char> pairs;  // pair records in (i, j) order
  std::int64_t pair_count = 0;
  std::vector<std::int64_t> counts;                      // one per count_at_least threshold, in its order
  std::vector<std::int32_t> row_counts;                  // ones in each row of A
  std::int64_t slices = 0;                               // slices computed
  Distribution distribution = Distribution::Replicated;  // as planned (never Auto)
  RingSchedule ring_schedule = RingSchedule::Slices;     // with Ring: as planned (never Auto)
  bool interrupted = false;                              // stopped early: the outputs are incomplete
  std::string summary;  // with params.summary: the text of the CLI's summary file of the whole problem
};

// Elements of dense C: rows x targets, or rows (rows + 1) / 2 for `upper`.
std::int64_t dense_elements(const ApiMatrix& a, const ApiMatrix* b, const ComputeParams& params);
// Device bytes compute allocates besides `dense` (packed inputs, their staging,
// one slice of counts, the top-k lists), for a budget checked beforehand.
std::int64_t compute_device_bytes(const ApiMatrix& a, const ApiMatrix* b, const ComputeParams& params);

// The Gram product's outputs (C = A A^T, b == nullptr, or A B^T), slice by
// slice with the CLI's device kernels (tiles, similarity, sparse outputs);
// `dense` (dense_elements(...) int32 or float32 values, in host memory or,
// with dense_on_device, in the kernels' memory space) is written when
// params.dense. One process: no MPI.
ComputeResult compute(const ApiExec& exec, const ApiMatrix& a, const ApiMatrix* b, const ComputeParams& params,
                      void* dense);

// Over the ranks of a communicator: gram/distributed/gram_over_ranks.hpp.

}  // namespace kmini::gram
