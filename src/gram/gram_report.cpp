// gram's report: throughputs against the AND+popcount probe (phase "probe"),
// the float gemm baseline (phase "baseline_sgemm" in gram_gemm.cpp), the
// summary rows and the summary file.
#include "core/collective.hpp"
#include "core/environment.hpp"
#include "core/format.hpp"
#include "core/timer.hpp"
#include "gram/gram.hpp"
#include "gram/impl/gram_detail.hpp"
#include "gram/impl/gram_kernels.hpp"
#include "io/atomic_file.hpp"
#include "kernel/roof.hpp"
#include "kernel/run_loop.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>

namespace kmini::gram::detail {

namespace {

std::string hex(std::uint64_t v) {
  std::ostringstream os;
  os << std::hex << v;
  return os.str();
}

// The instruction the tensor-core engine issued.
const char* tensor_core_instruction(const Config& c) {
  return tensor_core::resolved(c.tensor_core_tile) == TensorCoreTile::Warpgroup64x128 ? "wgmma.m64n128k256.b1.and.popc"
                                                                                      : "mma.m16n8k256.b1.and.popc";
}

// The wgmma engine's roof on this rank's device (gram_wgmma.hpp), in bit-ops/s.
double wgmma_probe([[maybe_unused]] RunContext& ctx) {
  double rate = 0;
#if defined(KMINI_GRAM_WGMMA) && defined(KOKKOS_ENABLE_CUDA)
  if (const char* failed = wgmma::probe(ctx.exec.cuda_stream(), rate))
    throw std::runtime_error(std::string("kmini::gram: the wgmma probe: ") + failed);
#endif
  return rate;
}

}  // namespace

Probes measure_probes(RunContext& ctx, const Config& c) {
  ScopedRegion probe_region("kmini::gram::probe");
  // One worker per thread the device keeps resident (on a GPU, SMs x 2048),
  // each looping long enough to hide the launch.
  Probes p;
  p.popcount = probe_and_popcount_peak(ctx.exec, ctx.exec.concurrency(), kProbeIterations);
  if (c.engine == Engine::TensorCore && tensor_core::resolved(c.tensor_core_tile) == TensorCoreTile::Warpgroup64x128)
    p.tensor_core = wgmma_probe(ctx);  // the wgmma engine against its own instruction's roof
  else if (c.engine == Engine::TensorCore)
    p.tensor_core = probe_tensor_core_peak(ctx.exec, ctx.exec.concurrency(), kProbeIterations);
  const double scale = roof_test_scale();
  p.popcount.peak *= scale;
  for (double& r : p.popcount.rate) r *= scale;
  p.tensor_core *= scale;
  return p;
}

namespace {

// The better of two probes, per micro-kernel.
Probes best_of(const Probes& a, const Probes& b) {
  Probes p = a;
  for (std::size_t i = 0; i < std::size(kMicroKernels); ++i)
    p.popcount.rate[i] = std::max(a.popcount.rate[i], b.popcount.rate[i]);
  if (b.popcount.peak > a.popcount.peak) {
    p.popcount.peak = b.popcount.peak;
    p.popcount.best = b.popcount.best;
  }
  p.tensor_core = std::max(a.tensor_core, b.tensor_core);
  return p;
}

// The roof (all ranks) from the probes before the computation and once more
// now, the better of the two; its fields of the report.
double report_roof(RunContext& ctx, const Config& c, const Probes& before, Json& m) {
  const Environment& env = ctx.env;
  const Probes probes = best_of(before, measure_probes(ctx, c));
  const ProbeResult& probe = probes.popcount;
  // Peak: the AND+popcount probe, one worker per thread of this rank.
  const double popcount_all = allreduce_sum(env.comm(), probe.peak);
  m["probe_and_popcount_peak_bit_ops_per_s"] = popcount_all;
  // The roof is the best micro-kernel this build contains, not the one in use.
  m["probe_micro_kernel"] = micro_kernel_name(probe.best);
  Json& by_kernel = m["probe_bit_ops_per_s_by_micro_kernel"];
  for (std::size_t i = 0; i < std::size(kMicroKernels); ++i)
    if (probe.rate[i] > 0) by_kernel[micro_kernel_name(kMicroKernels[i])] = allreduce_sum(env.comm(), probe.rate[i]);
  if (c.engine != Engine::TensorCore) return popcount_all;
  // The tensor-core engine is measured against its own probe (the popcount
  // one stays in results.json beside it).
  const double tc_all = allreduce_sum(env.comm(), probes.tensor_core);
  m["probe_tensor_core_peak_bit_ops_per_s"] = tc_all;
  m["probe_tensor_core_instruction"] = tensor_core_instruction(c);
  return tc_all;
}

}  // namespace

void report_throughput(RunContext& ctx, const Config& c, const Plan& plan, const SlicePass& pass, double pack_seconds,
                       const Summary& summary, bool with_checksum, const Probes* before, KernelReport& report) {
  const Environment& env = ctx.env;
  const std::int64_t rows = plan.rows, targets = plan.targets;
  const bool two = c.two_inputs();
  const double compute_seconds = pass.compute.slowest();
  Json& m = report.metrics;
  const double useful = double(rows) * double(targets) * double(c.a.cols);
  const double executed = allreduce_sum(env.comm(), pass.executed_words) * 64;
  m["rows"] = Json(static_cast<long long>(rows));
  m["cols"] = Json(static_cast<long long>(c.a.cols));
  if (two) m["b_rows"] = Json(static_cast<long long>(c.b.rows));
  m["similarity"] = similarity_name(c.similarity);
  m["slices"] = Json(static_cast<long long>(plan.slices.size()));
  m["slice_rows"] = Json(static_cast<long long>(plan.height));
  m["memory_budget_bytes"] = c.memory_budget;  // the value chosen for `auto`
  m["tile"] = Tuning::tile;
  m["chunk_words"] = Tuning::chunk;
  m["micro_tile"] = std::to_string(Tuning::mr) + "x" + std::to_string(Tuning::nr);
  m["team_size"] = Tuning::team_size;
  m["micro_kernel"] = c.engine == Engine::TensorCore ? tensor_core_instruction(c)
                      : Tuning::staged               ? "portable"
                                                     : micro_kernel_name(c.micro_kernel);
  m["engine"] = engine_name(c.engine);
  if (c.engine == Engine::TensorCore) {
    const TensorCoreTile t = tensor_core::resolved(c.tensor_core_tile);
    m["tensor_core_tile"] = tensor_core_tile_name(t);
    if (t != TensorCoreTile::Block64) m["tile"] = 128;  // the executed count stays the 64 x 64 plan's (a lower bound)
  }
  m["pack_seconds"] = pack_seconds;
  m["compute_seconds"] = compute_seconds;
  m["postprocess_seconds"] = allreduce_max(env.comm(), pass.post_seconds);
  m["useful_bit_ops"] = useful;
  m["executed_bit_ops"] = executed;
  m["useful_bit_ops_per_s"] = useful / compute_seconds;
  m["executed_bit_ops_per_s"] = executed / compute_seconds;
  const double peak_all = before ? report_roof(ctx, c, *before, m) : NAN;
  m["fraction_of_peak"] = before ? Json(executed / compute_seconds / peak_all) : Json();
  if (!two) m["trace"] = Json(static_cast<long long>(summary.trace));
  if (with_checksum) m["checksum"] = hex(summary.checksum);

  SummaryRow row =
      rate_row(std::string("gram.") + similarity_name(c.similarity),
               std::to_string(rows) + "x" + std::to_string(c.a.cols) + (two ? "xB" + std::to_string(c.b.rows) : ""),
               compute_seconds, pass.compute.mine(), useful, env.size(), "bitop/s");
  row.roof_fraction = executed / compute_seconds / peak_all;  // NaN without the probe: no roof in the table
  row.roof = c.engine == Engine::TensorCore ? kRoofTensorCore : kRoofPopcount;
  report.fom = useful / compute_seconds;
  report.fom_seconds = compute_seconds;
  report.roof = {row.roof, "bitop/s", peak_all, row.roof_fraction};
  if (report.verified) row.verified = *report.verified;
  report.rows.push_back(row);
}

void report_read_roof(const Environment& env, const Inputs& in, Json& metrics) {
  const double bytes = allreduce_sum(env.comm(), double(in.read.read_bytes));
  const double raw = allreduce_max(env.comm(), in.read.read_seconds);
  if (bytes <= 0) return;  // random inputs: nothing read
  Json& r = metrics["read_roof"];
  r["what"] = "the file reads of packing alone (sequential, blocks of " + format_bytes(double(kReadBlockBytes)) +
              "): what the file system gave in this run, beside read + pack (pack_seconds)";
  r["bytes"] = bytes;
  r["raw_read_seconds"] = raw;
  r["raw_read_bytes_per_s"] = raw > 0 ? Json(bytes / raw) : Json();
  r["read_and_pack_seconds"] = in.pack_seconds;
  r["read_and_pack_over_raw_read"] = raw > 0 ? Json(in.pack_seconds / raw) : Json();
}

void report_baseline(RunContext& ctx, const Config& c, const Plan& plan, double compute_seconds, KernelReport& report) {
  const Environment& env = ctx.env;
  const std::int64_t rows = plan.rows;
  const double useful = double(rows) * double(plan.targets) * double(c.a.cols);
  Json& m = report.metrics;
  const std::int64_t panel = std::min(c.baseline_rows, rows);
  const double my_seconds = gemm_panel_float(c.a, panel, nullptr);
  const double seconds = allreduce_max(env.comm(), my_seconds);
  const double macs = double(panel) * double(rows) * double(c.a.cols);
  Json& b = m["baseline"];
  b["name"] = "KokkosBlas::gemm float";
  b["what"] = "KokkosBlas::gemm float, A[0:panel] * A^T on the unpacked matrix (one rank's device)";
  b["panel_rows"] = Json(static_cast<long long>(panel));
  b["seconds"] = seconds;
  b["useful_ops_per_s"] = macs / seconds;
  b["speedup"] = (useful / compute_seconds / env.size()) / (macs / seconds);  // kmini's, per rank
  SummaryRow br;
  br.label = "gram.baseline_sgemm";
  br.size = std::to_string(panel) + "x" + std::to_string(rows) + "x" + std::to_string(c.a.cols);
  br.seconds = seconds;
  br.rank_seconds = my_seconds;
  br.throughput = macs / seconds;  // every rank runs the same panel: no aggregate
  br.unit = "op/s";
  report.rows.push_back(br);
}

std::string summary_text(const Config& c, const Summary& summary, const Json& sparse_summary) {
  const bool two = c.two_inputs();
  Json s = Json::object();
  s["rows"] = Json(static_cast<long long>(c.a.rows));
  s["cols"] = Json(static_cast<long long>(c.a.cols));
  if (two) s["b_rows"] = Json(static_cast<long long>(c.b.rows));
  if (!two) s["trace"] = Json(static_cast<long long>(summary.trace));
  s["checksum"] = hex(summary.checksum);
  s["checksum_definition"] = two ? "sum over all i, j of C(i,j) * splitmix64(0x6772616d + i, j) mod 2^64"
                                 : "sum over i <= j of C(i,j) * splitmix64(0x6772616d + i, j) mod 2^64";
  s["histogram_bin_width"] = double(c.a.cols + 1) / kHistogramBins;
  s["histogram"] = Json::array_of(summary.histogram);
  s["row_sums"] = Json::array_of(summary.row_sums);
  if (const Json* counts_at = sparse_summary.find("count_at_least")) s["count_at_least"] = *counts_at;
  return s.dump() + "\n";
}

void write_summary_file(RunContext& ctx, const Config& c, const Summary& summary, const Json& sparse_summary) {
  on_root_collectively(ctx.env.comm(), [&] {
    ScopedRegion write_region("kmini::gram::write");
    write_text_file_atomically(ctx.output_path(c.write_summary), summary_text(c, summary, sparse_summary));
  });
}

}  // namespace kmini::gram::detail
