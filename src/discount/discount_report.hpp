#pragma once
// What the discount report needs of a finished run, and the report itself
// (discount_report.cpp). Not templated on the precision: discount_run.cpp
// hands over plain numbers.
#include "core/rank_timing.hpp"
#include "discount/discount.hpp"
#include "io/json.hpp"
#include "kernel/kernel.hpp"

#include <cstdint>
#include <limits>

namespace kmini::discount::detail {

// This rank's shape: D local dates of M ids x O terms.
struct Shape {
  DateSlice slice;
  std::int64_t D = 0, M = 0, O = 0, row = 0;
};

// Phases "kernel" and "end_to_end": the best repeat of each.
struct Timings {
  BestOverRepeats kernel;  // kernel-only
  double end_to_end = std::numeric_limits<double>::infinity(), my_end_to_end = end_to_end;
  double h2d = std::numeric_limits<double>::infinity(), e2e_kernel = h2d, d2h = h2d;  // of the best e2e
};

// The metrics and the two summary rows (kernel only, end to end). Collective.
void report_run(RunContext& ctx, const Config& c, const Shape& s, const Timings& t, std::int64_t nonfinite,
                double reduced_checksum, double write_seconds, KernelReport& report);

// How cv was stored (discount.stores, resolved) and, where auto timed both
// kinds, the times; the last-level cache the machine reports.
void report_stores(const StoreChoice& stores, bool stream_cv, std::int64_t last_level_cache, Json& metrics);

}  // namespace kmini::discount::detail
