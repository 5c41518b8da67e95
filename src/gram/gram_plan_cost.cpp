// What a gram plan (gram_plan.cpp) costs: the bytes every rank holds and
// sends under each distribution, and the device memory per rank the driver
// checks before anything is allocated.
#include "gram/gram.hpp"
#include "gram/impl/gram_detail.hpp"

#include <algorithm>
#include <cstdint>

namespace kmini::gram {

using detail::kGemmCheckLimit;
using detail::kHistogramBins;
using detail::kHostReferenceLimit;

DistributionCost distribution_cost(const Config& c, const Plan& p, int ranks) {
  DistributionCost cost;
  cost.held_bytes = p.packed_bytes + p.top_k_bytes + p.slice_bytes;
  cost.rounds = p.rounds();
  const double row_bytes = double(p.words) * sizeof(Word);
  if (!p.ring()) {
    // The allgather of packed rows read from files: every rank passes on the
    // other ranks' shares ((P - 1) / P of the matrix, as a ring allgather does).
    for (const Source* s : {&c.a, &c.b})
      if (s->rows > 0 && s->kind != Source::Kind::Random)
        cost.sent_bytes += double(s->rows) * row_bytes * double(ranks - 1) / ranks;
    return cost;
  }
  if (p.circulant()) {
    // Rank r sends blocks r .. r + steps - 2 once each (the last one it sees
    // stays), and with one input the partner pieces' top-k lists to their owners.
    const bool two = c.two_inputs();
    const std::int64_t n = two ? c.b.rows : p.rows;
    double most = 0;
    for (int q = 0; q < ranks; ++q) {
      double rows_sent = 0, lists = 0;
      for (std::int64_t t = 0; t + 1 < p.steps; ++t) {
        const int b = static_cast<int>((q + t) % ranks);
        rows_sent += double(Plan::block_begin(n, ranks, b + 1) - Plan::block_begin(n, ranks, b));
        if (!two && !c.write_top_k.empty()) {
          const int partner = static_cast<int>((q + t + 1) % ranks);
          lists += double(Plan::block_begin(n, ranks, partner + 1) - Plan::block_begin(n, ranks, partner)) *
                   double(c.top_k) * 16;
        }
      }
      most = std::max(most, rows_sent * row_bytes + lists);
    }
    cost.sent_bytes = most;
    return cost;
  }
  // Each round every travelling chunk passes P - 1 ranks: rank r sends all of
  // them but those of rank r + 1 (the last it receives).
  double total = 0;
  for (const auto& k : p.travelling(c.two_inputs())) total += double(k.rows());
  double most = 0;
  for (int q = 0; q < ranks; ++q) {
    const int next = (q + 1) % ranks;
    const double held_next = double(c.two_inputs() ? p.b_held(next) : p.a_held(next));
    most = std::max(most, ranks > 1 ? total - held_next : 0.0);
  }
  cost.sent_bytes = most * row_bytes * double(cost.rounds);
  return cost;
}

ByteCount device_bytes(const Config& c, const Plan& p, bool verify, bool host) {
  const auto rows = static_cast<std::uint64_t>(p.rows), cols = static_cast<std::uint64_t>(p.cols);
  const auto targets = static_cast<std::uint64_t>(p.targets), b_rows = static_cast<std::uint64_t>(c.b.rows);
  const auto height = static_cast<std::uint64_t>(p.height);
  // Packed A and B (ring: the busiest rank's share and the two receive buffers).
  ByteCount bytes = ByteCount::of(rows + b_rows, static_cast<std::uint64_t>(p.words) * sizeof(Word));
  if (p.ring()) bytes = ByteCount(static_cast<std::uint64_t>(p.packed_bytes));
  if (p.circulant())  // one window, the lists of its own rows and the partner pieces' (plan_circulant)
    bytes +=
        ByteCount(static_cast<std::uint64_t>(p.slice_bytes)) + ByteCount(static_cast<std::uint64_t>(p.top_k_bytes));
  else bytes += ByteCount::of(height, static_cast<std::uint64_t>(slice_bytes_per_row(c, host)));      // one slice
  bytes += ByteCount::of(rows + b_rows, 4) + ByteCount::of(rows, 8) + ByteCount(kHistogramBins * 8);  // ones, row sums
  if (!c.write_top_k.empty() &&
      !p.circulant())  // the lists (+ their host copy and records for the merge on host backends)
    bytes += ByteCount::of(rows, static_cast<std::uint64_t>(c.top_k) * (host ? 16 + 16 + 12 : 16));
  if (!c.write_pairs.empty()) bytes += ByteCount::of(height + 1, 16);  // pairs per row, offsets
  ByteCount staging;  // the file's staging block (A's is freed before B is read)
  for (const Source* s : {&c.a, &c.b}) {
    if (s->kind == Source::Kind::Random || s->rows == 0) continue;
    staging = max(staging, ByteCount::of(static_cast<std::uint64_t>(detail::read_block_rows(*s)),
                                         static_cast<std::uint64_t>(detail::file_row_bytes(*s))));
  }
  bytes += staging;
  // Verification: the double gemm check on small matrices (all targets, <= 64
  // checked rows, their products), and the host reference on host backends.
  ByteCount extra;
  if (verify && double(targets) * double(cols) <= kGemmCheckLimit)
    extra = ByteCount::of(targets * cols + 64 * cols + 64 * targets, sizeof(double));
  if (verify && host && double(rows + b_rows) * double(cols) <= kHostReferenceLimit)
    extra += ByteCount::of(rows + b_rows, cols + static_cast<std::uint64_t>(p.words) * sizeof(Word));
  // The baseline: the unpacked matrix in float and its panel of C.
  if (c.baseline) {
    const auto panel = static_cast<std::uint64_t>(std::min(c.baseline_rows, p.rows));
    extra = max(extra, ByteCount::of(rows, cols * sizeof(float)) + ByteCount::of(panel, rows * sizeof(float)));
  }
  return bytes + extra;
}

}  // namespace kmini::gram
