#include "stream/stream_report.hpp"

#include "core/collective.hpp"
#include "kernel/roof.hpp"
#include "kernel/run_loop.hpp"
#include "stream/impl/stream_reference.hpp"

#include <algorithm>

namespace kmini::stream {

KernelReport report_ops(RunContext& ctx, const Config& config, const std::vector<OpResult>& results) {
  KernelReport report;
  double roof = 0;
  for (const auto& r : results) roof = std::max(roof, r.bytes / r.best_seconds);
  roof *= roof_test_scale();
  ctx.keep_roof_bandwidth(roof);

  Json& m = report.metrics;
  m["n_per_rank"] = Json(static_cast<long long>(config.n));
  m["repeat"] = Json(static_cast<long long>(config.repeat));
  m["roof_bandwidth_bytes_per_s"] = roof;
  note_transfers(m);
  Json& ops = m["ops"];
  bool all_ok = true;
  for (const auto& r : results) {
    Json& o = ops[r.name];
    o["bytes_per_rank"] = r.bytes;
    o["best_seconds"] = r.best_seconds;
    o["bandwidth_bytes_per_s"] = r.bytes / r.best_seconds;
    o["aggregate_bandwidth_bytes_per_s"] = r.bytes * ctx.env.size() / r.best_seconds;
    o["transfer_inclusive_seconds"] = r.transfer_inclusive_seconds;
    o["fraction_of_roof"] = r.bytes / r.best_seconds / roof;
    if (ctx.verify) {
      o["verified"] = r.verified_ok;
      o[r.name.rfind("exp", 0) == 0 ? "max_relative_error" : "max_abs_error"] = r.max_error;
    }
    all_ok = all_ok && r.verified_ok;

    SummaryRow row = rate_row("stream." + r.name, "n=" + std::to_string(config.n), r.best_seconds, r.rank_seconds,
                              r.bytes * ctx.env.size(), ctx.env.size(), "B/s");
    row.roof_fraction = r.bytes / r.best_seconds / roof;
    row.roof = kRoofStream;
    if (r.name == "add_f64") {  // the declared figure of merit: c = a + b in float64
      report.fom = row.aggregate;
      report.fom_seconds = row.seconds;
      report.roof = {kRoofStream, "B/s", roof * ctx.env.size(), row.roof_fraction};
    }
    if (ctx.verify) row.verified = r.verified_ok;
    report.rows.push_back(row);
  }
  if (ctx.verify) {
    report.verified = all_ranks_ok(ctx.env.comm(), all_ok);  // every rank checked its own part
    m["exp_relative_tolerance"] = reference::kExpRelativeTolerance;
  }
  return report;
}

}  // namespace kmini::stream
