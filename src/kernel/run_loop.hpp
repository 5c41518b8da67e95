#pragma once
// What every kernel's run() does around its device work, written once (like
// Cabana's BenchmarkUtils and ArborX's TimeMonitor): timing a step all ranks
// run together, the best of repeats, "did every rank pass?", the transfer
// note of host backends and the summary row of a rate.
#include "core/kokkos_compat.hpp"
#include "core/rank_timing.hpp"
#include "core/solo.hpp"
#include "core/timer.hpp"
#include "io/json.hpp"
#include "kernel/kernel.hpp"

#include <mpi.h>

#include <cstdint>
#include <string>

namespace kmini {

// Seconds of one call of `body` on this rank, started together on every rank
// (a barrier) and fenced, so asynchronous device work is counted in full.
template <class Exec, class Body>
double time_together(MPI_Comm comm, const Exec& exec, Body&& body) {
  mpi::barrier(comm);
  FencedTimer<Exec> timer(exec);
  body();
  return timer.seconds();
}

// `repeat` timed calls of `body`: the best repeat of the slowest rank, and
// this rank's time in that repeat (BestOverRepeats).
template <class Exec, class Body>
BestOverRepeats best_of_repeats(MPI_Comm comm, const Exec& exec, std::int64_t repeat, Body&& body) {
  BestOverRepeats best;
  for (std::int64_t r = 0; r < repeat; ++r) best.add(comm, time_together(comm, exec, body));
  return best;
}

// Collective: true when `ok` holds on every rank (each verified its own part).
inline bool all_ranks_ok(MPI_Comm comm, bool ok) {
  int all = ok ? 1 : 0;
  mpi::allreduce(comm, &all, 1, MPI_INT, MPI_MIN);
  return all == 1;
}

// `zero_copy_transfers` and, where device memory is host memory, the note
// that says why transfer-inclusive times equal the kernel's.
inline void note_transfers(Json& m) {
  m["zero_copy_transfers"] = compat::device_is_host_accessible;
  if (compat::device_is_host_accessible)
    m["transfer_note"] = "device memory is host memory on this backend: host<->device copies are no-ops";
}

// A summary row for `work` units (bytes, bit operations) done by all ranks
// together in `seconds` (the slowest rank's; `rank_seconds` this rank's):
// throughput per rank and aggregate. The roof fields are the caller's.
inline SummaryRow rate_row(std::string label, std::string size, double seconds, double rank_seconds, double work,
                           int ranks, std::string unit) {
  SummaryRow row;
  row.label = std::move(label);
  row.size = std::move(size);
  row.seconds = seconds;
  row.rank_seconds = rank_seconds;
  row.throughput = work / ranks / seconds;
  row.aggregate = work / seconds;
  row.unit = std::move(unit);
  return row;
}

}  // namespace kmini
