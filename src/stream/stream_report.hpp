#pragma once
// stream's report: results.json's metrics, the summary rows, the figure of
// merit (add_f64, all ranks) and the bandwidth roof this run sets.
#include "stream/stream.hpp"

#include <vector>

namespace kmini::stream {

// The report of the ops run (their order), every rank's verification agreed.
KernelReport report_ops(RunContext& ctx, const Config& config, const std::vector<OpResult>& results);

}  // namespace kmini::stream
