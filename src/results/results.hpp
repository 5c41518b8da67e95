#pragma once
// results.json and the summary table printed at the end of a run.
#include "core/format.hpp"
#include "io/json.hpp"
#include "kernel/kernel.hpp"

#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

namespace kmini {

// Built on every rank (collective); holds results.json on rank 0.
// One kernel's figure of merit, for the summary's last line.
struct FomLine {
  std::string kernel;
  FigureOfMerit fom;
  double value = NAN;
  RoofReport roof;
};

// The version of results.json's layout: raised when a field changes meaning
// or goes away (added fields keep it).
inline constexpr int kResultsSchemaVersion = 2;

class Results {
 public:
  Results(const Environment& env, const Json& resolved_deck);
  // Collective: gathers every rank's timings of the kernel to rank 0 for
  // `timings_over_ranks` (min/median/max) and `seconds` (the slowest rank's).
  // results.json's kernels.<name>: the report's metrics, `fom` and `roof`
  // under the same names for every kernel, and the timings over the ranks.
  void add(const KernelDeclaration& kernel, const KernelReport& report);
  const Json& json() const { return json_; }
  // Atomic write of DIR/results.json (call on rank 0).
  void write(const std::string& dir) const;
  void print_summary(std::ostream& os) const;
  // The valid-result rules (results/validity.cpp): per kernel `valid` and
  // `invalid_reasons`, and the machine's `load` (LoadMonitor::finish).
  void judge(const Json& load);

 private:
  MPI_Comm comm_;
  Json json_;
  std::vector<SummaryRow> rows_;
  std::vector<FomLine> foms_;
  int ranks_ = 1;
};

// {"min", "median" (the mean of the middle two for an even count), "max",
// "slowest_rank", "ranks"} of one timing over the ranks, indexed by rank.
Json stats_over_ranks(const std::vector<double>& per_rank);

// The summary table of `rows` from a run on `ranks` MPI ranks, with the
// footnotes that say which roof and what e2e rows are (`zero_copy`: device
// memory is host memory, so e2e copies are no-ops).
// The rows are keyed by kernel (the label up to its first '.'), the settings
// (the rest of the label) in a column of their own; `foms` make the last line.
void print_summary_table(std::ostream& os, const std::vector<SummaryRow>& rows, int ranks, bool zero_copy,
                         const std::vector<FomLine>& foms = {});

}  // namespace kmini
