// rk4's report: the delta and field files, results.json's metrics and the
// summary row (see rk4_report.hpp).
#include "rk4/rk4_report.hpp"

#include "core/collective.hpp"
#include "core/text.hpp"
#include "io/atomic_file.hpp"
#include "io/npy.hpp"
#include "kernel/run_loop.hpp"
#include "rk4/impl/rk4_verify.hpp"

#include <cmath>
#include <complex>
#include <cstdio>
#include <string>
#include <vector>

namespace kmini::rk4::detail {

namespace {

// One .csv line: step, t, re, im, abs (five numbers of at most 24 characters).
constexpr std::size_t kCsvLineBytes = 160;

template <class T>
void write_delta_npy(const std::string& path, const std::vector<C16>& history) {
  std::vector<std::complex<T>> values(history.begin(), history.end());
  npy::write(path, {static_cast<std::int64_t>(values.size())}, values);
}

std::string run_label(const Config& c, bool stages) {
  const Problem& p = c.problem;
  return std::string("rk4.") + (p.per_stage ? "per_stage" : "per_step") + (stages ? "_stages" : "") +
         (p.kerr != 0 ? "_kerr" : "") + (c.single ? "_c8" : "_c16");
}

void report_verification(const Verification& check, const RunOutcome& run, Json& m, KernelReport& report) {
  const std::int64_t differs = first_unreproduced(check, run.history, run.start_step);
  const bool same = differs < 0;
  Json& v = m["verification"];
  v["steps"] = Json(static_cast<long long>(check.steps));
  v["delta_relative_error"] = check.delta_error;
  v["field_relative_error"] = check.field_error;
  v["tolerance"] = check.tolerance;
  v["delta_tolerance"] = check.delta_tolerance;
  // Where the roundings' count was not enough: the reference's own error,
  // measured against a wider-precision run (rk4_verify.hpp).
  v["tolerance_from"] = check.wide_reference ? "wider_reference" : "rounding_count";
  if (check.wide_reference) {
    v["reference_delta_spread"] = check.delta_spread;
    v["reference_field_spread"] = check.field_spread;
  }
  v["bitwise_reproducible"] = same;
  if (!same) {  // where the two runs parted: the step and both deltas, to 17 digits
    const C16 main = run.history[static_cast<std::size_t>(differs)];
    const C16 again = check.device_history[static_cast<std::size_t>(differs - run.start_step)];
    v["first_differing_step"] = Json(static_cast<long long>(differs));
    v["delta_of_run"] = Json::array_of(std::vector<double>{main.real(), main.imag()});
    v["delta_of_verification_run"] = Json::array_of(std::vector<double>{again.real(), again.imag()});
  }
  report.verified = check.ok() && same;
}

}  // namespace

void write_delta(const Environment& env, const std::string& path, const std::vector<C16>& history, double dt,
                 bool single) {
  on_root_collectively(env.comm(), [&] {
    if (ends_with(path, ".csv")) {
      std::string text = "step,t,re,im,abs\n";
      char line[kCsvLineBytes];
      for (std::size_t k = 0; k < history.size(); ++k) {
        std::snprintf(line, sizeof line, "%zu,%.10g,%.17g,%.17g,%.17g\n", k, static_cast<double>(k) * dt,
                      history[k].real(), history[k].imag(), std::abs(history[k]));
        text += line;
      }
      write_text_file_atomically(path, text);
    } else if (single) {
      write_delta_npy<float>(path, history);
    } else {
      write_delta_npy<double>(path, history);
    }
  });
}

void write_field(const Environment& env, const Config& c, const Block& b, const std::string& path,
                 const void* host_values) {
  const Problem& p = c.problem;
  const npy::DType dtype = c.single ? npy::DType::C8 : npy::DType::C16;
  npy::write_distributed(env.comm(), path, dtype, {p.n, p.n}, static_cast<std::uint64_t>(b.first),
                         static_cast<std::uint64_t>(b.count), host_values);
}

void report_run(RunContext& ctx, const Config& c, const Block& b, const RunOutcome& run,
                const std::optional<Verification>& check, KernelReport& report) {
  const Problem& p = c.problem;
  const Environment& env = ctx.env;
  const LoopTiming& loop = run.loop;
  Json& m = report.metrics;
  const std::int64_t steps_run = p.steps - run.start_step;
  const double bytes_per_element_step = reals_per_element_step(run.stages && p.per_stage, run.stores_im_g) *
                                        static_cast<double>(c.single ? sizeof(float) : sizeof(double));
  const double element_steps = static_cast<double>(p.elements()) * static_cast<double>(steps_run);
  const double rank_bandwidth = static_cast<double>(b.count) * steps_run * bytes_per_element_step / loop.seconds;
  m["n"] = Json(static_cast<long long>(p.n));
  m["elements"] = Json(static_cast<long long>(p.elements()));
  m["elements_per_rank_max"] = Json(static_cast<long long>(block_of(p.n, 0, env.size()).count));
  m["precision"] = c.single ? "single" : "double";
  m["coupling"] = p.per_stage ? "per_stage" : "per_step";
  m["method"] = run.stages ? "stages" : "affine";
  m["kerr"] = p.kerr;
  if (p.chunk > 0) m["step_chunk"] = Json(static_cast<long long>(p.chunk));  // rk4.chunk, where set
  if (p.full_occupancy) m["step_occupancy"] = "full";                        // rk4.occupancy, where set
  m["step_grid"] = p.wave ? "wave" : "items";                                // rk4.grid, resolved
  m["step_loads"] = p.vector_loads ? "vector" : "scalar";                    // rk4.loads, resolved
  m["g"] = p.g;
  m["dt"] = p.dt;
  m["start_step"] = Json(static_cast<long long>(run.start_step));
  m["steps_run"] = Json(static_cast<long long>(steps_run));
  m["loop_seconds"] = loop.seconds;
  m["checkpoint_and_progress_seconds"] = allreduce_max(env.comm(), loop.io_seconds);
  m["element_steps_per_s"] = element_steps / loop.seconds;
  m["bytes_per_element_step"] = bytes_per_element_step;
  m["effective_bandwidth_bytes_per_s_per_rank"] = rank_bandwidth;
  m["aggregate_bandwidth_bytes_per_s"] = element_steps * bytes_per_element_step / loop.seconds;
  double roof = NAN;
  if (steps_run > 0) {
    roof = ctx.roof_bandwidth();
    m["roof_bandwidth_bytes_per_s"] = roof;
    m["fraction_of_roof"] = rank_bandwidth / roof;
  }
  const C16 last = run.history.back();
  m["delta_final"] = Json::array_of(std::vector<double>{last.real(), last.imag()});
  m["delta_final_abs"] = std::abs(last);
  if (run.invariant_drift) {
    m["invariant_max_drift"] = *run.invariant_drift;
    m["invariant_note"] = "max over elements of | |F|^2 + (G - 1/2)^2 - its value at the start of this run |";
  } else {
    m["invariant_max_drift"] = nullptr;
    m["invariant_note"] = "G is not real: |F|^2 + (G - 1/2)^2 is not conserved";
  }

  SummaryRow row =
      rate_row(run_label(c, run.stages), "n=" + std::to_string(p.n) + " steps=" + std::to_string(steps_run),
               loop.seconds, loop.my_seconds, element_steps * bytes_per_element_step, env.size(), "B/s");
  row.throughput = rank_bandwidth;  // this rank's block, which may be one row larger than others'
  row.roof_fraction = rank_bandwidth / roof;
  row.roof = kRoofStream;
  report.fom = element_steps / loop.seconds;
  report.fom_seconds = loop.seconds;
  report.roof = {kRoofStream, "B/s", roof * env.size(), row.roof_fraction};
  if (check) {
    report_verification(*check, run, m, report);
    row.verified = report.verified;
  }
  report.rows.push_back(row);
}

}  // namespace kmini::rk4::detail
