// discount's report: results.json's metrics (kernel-only bandwidth against
// the stream roof, the end-to-end time with its transfers, how cv was
// stored) and the two summary rows.
#include "discount/discount_report.hpp"

#include "core/collective.hpp"
#include "kernel/run_loop.hpp"

#include <string>

namespace kmini::discount::detail {

namespace {

const char* suffix(bool single) { return single ? "f32" : "f64"; }

std::string describe(const InputSpec& s) {
  if (s.source == InputSpec::Source::Arange) return "arange";
  if (s.source == InputSpec::Source::Random) return "random(seed=" + std::to_string(s.seed) + ")";
  return std::string("file ") + s.path + " (" + npy::short_name(s.file.dtype) + ")";
}

}  // namespace

void report_run(RunContext& ctx, const Config& c, const Shape& s, const Timings& t, std::int64_t nonfinite,
                double reduced_checksum, double write_seconds, KernelReport& report) {
  const Environment& env = ctx.env;
  Json& m = report.metrics;
  const std::int64_t D = s.D, M = s.M, O = s.O, row = s.row;
  const bool cv_on = c.computes_cv();
  // Bytes each rank's kernel must move, and what crosses host<->device.
  const double bytes = static_cast<double>(c.element_size());
  const double elements = static_cast<double>(D) * static_cast<double>(row);
  const double reduced_out = c.reduce == Reduce::PerDate ? D : c.reduce == Reduce::PerId ? M : 0;
  const double kernel_bytes = bytes * (elements + row + (cv_on ? elements : 0) + reduced_out);
  const double h2d_bytes = bytes * (elements + row), d2h_bytes = bytes * ((cv_on ? elements : 0) + reduced_out);
  const double flops = elements * (c.reduce == Reduce::None ? 1 : 2);
  const double total_bytes = allreduce_sum(env.comm(), kernel_bytes);
  const double total_flops = allreduce_sum(env.comm(), flops);
  const double kernel_seconds = t.kernel.slowest();
  const double per_rank_bw = total_bytes / env.size() / kernel_seconds;
  const double roof = ctx.roof_bandwidth();

  const char* reduce_names[] = {"none", "per_date", "per_id"};
  m["dates"] = Json(static_cast<long long>(c.dates));
  m["ids"] = Json(static_cast<long long>(M));
  m["terms"] = Json(static_cast<long long>(O));
  m["precision"] = c.single ? "single" : "double";
  m["reduce"] = reduce_names[static_cast<int>(c.reduce)];
  m["nonfinite_inputs"] = Json(static_cast<long long>(nonfinite));
  const char* policy_names[] = {"mdrange", "flat", "wave"};
  m["policy"] = c.reduce == Reduce::None ? policy_names[static_cast<int>(c.policy)] : "fused reduction";
  if (c.reduce == Reduce::None) m["loads"] = c.vector_loads ? "vector" : "scalar";
  m["cv_computed"] = cv_on;
  m["inputs"]["mult_by"] = describe(c.mult_by);
  m["inputs"]["discount"] = describe(c.discount);
  m["dates_per_rank_max"] = Json(static_cast<long long>(date_slice(c.dates, 0, env.size()).count));
  m["repeat"] = Json(static_cast<long long>(c.repeat));
  Json& k = m["kernel"];
  k["best_seconds"] = kernel_seconds;
  k["bytes_all_ranks"] = total_bytes;
  k["flops_all_ranks"] = total_flops;
  k["bandwidth_bytes_per_s_per_rank"] = per_rank_bw;
  k["aggregate_bandwidth_bytes_per_s"] = total_bytes / kernel_seconds;
  k["roof_bandwidth_bytes_per_s"] = roof;
  k["fraction_of_roof"] = per_rank_bw / roof;
  k["arithmetic_intensity_flops_per_byte"] = total_flops / total_bytes;
  k["gflops_per_s"] = total_flops / kernel_seconds / 1e9;
  Json& e = m["end_to_end"];
  e["best_seconds"] = t.end_to_end;
  e["host_to_device_seconds"] = t.h2d;
  e["kernel_seconds"] = t.e2e_kernel;
  e["device_to_host_seconds"] = t.d2h;
  e["host_to_device_bytes_all_ranks"] = allreduce_sum(env.comm(), h2d_bytes);
  e["device_to_host_bytes_all_ranks"] = allreduce_sum(env.comm(), d2h_bytes);
  e["arithmetic_intensity_flops_per_transferred_byte"] = total_flops / allreduce_sum(env.comm(), h2d_bytes + d2h_bytes);
  e["kernel_fraction_of_end_to_end"] = t.e2e_kernel / t.end_to_end;
  note_transfers(e);
  if (c.reduce != Reduce::None) m["reduced_checksum"] = reduced_checksum;
  m["write_seconds"] = write_seconds;

  const std::string label = std::string("discount.") +
                            (c.reduce == Reduce::None      ? "multiply"
                             : c.reduce == Reduce::PerDate ? "per_date"
                                                           : "per_id") +
                            "_" + suffix(c.single);
  const std::string size = std::to_string(c.dates) + "x" + std::to_string(M) + "x" + std::to_string(O);
  SummaryRow kernel_row = rate_row(label, size, kernel_seconds, t.kernel.mine(), total_bytes, env.size(), "B/s");
  kernel_row.roof_fraction = per_rank_bw / roof;
  kernel_row.roof = kRoofStream;
  report.fom = kernel_row.aggregate;
  report.fom_seconds = kernel_seconds;
  report.roof = {kRoofStream, "B/s", roof * env.size(), kernel_row.roof_fraction};
  kernel_row.verified = report.verified;
  SummaryRow e2e_row = rate_row(label + ".e2e", size, t.end_to_end, t.my_end_to_end, total_bytes, env.size(), "B/s");
  e2e_row.roof = kRoofStream;
  e2e_row.verified = report.verified;
  report.rows = {kernel_row, e2e_row};
}

void report_stores(const StoreChoice& stores, bool stream_cv, std::int64_t last_level_cache, Json& metrics) {
  metrics["cv_stores"] = stream_cv ? "streaming" : "regular";
  if (stores.measured) {  // stores: auto, timed on these arrays
    Json& why = metrics["cv_stores_measured"];
    why["regular_seconds"] = stores.regular_seconds;
    why["streaming_seconds"] = stores.streaming_seconds;
    why["passes_each"] = Json(kStorePairs);
  }
  metrics["last_level_cache_bytes"] = Json(static_cast<long long>(last_level_cache));
}

}  // namespace kmini::discount::detail
