// Rk4Kernel::run: the phases of one RK4 run, each a Kokkos profiling region
// (kmini::rk4::<phase>): verify, setup, time_loop (with checkpoint inside),
// write; then the report. The model and the precision are template
// parameters, chosen once here.
#include "core/collective.hpp"
#include "core/errors.hpp"
#include "core/timer.hpp"
#include "io/npy.hpp"
#include "rk4/rk4.hpp"
#include "rk4/rk4_detail.hpp"
#include "rk4/rk4_state.hpp"
#include "rk4/rk4_verify.hpp"

#include <cmath>
#include <cstring>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace kmini::rk4 {

namespace {

using namespace detail;

template <class T, class Model>
using DeviceIntegrator = Integrator<T, ExecSpace, Model>;

// Phase "setup": the integrator, its state from the deck or the restart (and
// the restart's delta history), then start(); each part agreed by all ranks,
// since start() allocates its invariant buffer after its collectives.
template <class T, class Model>
DeviceIntegrator<T, Model> setup(RunContext& ctx, const Config& c, const Block& b, std::int64_t k0,
                                 const Model& model) {
  const Problem& p = c.problem;
  DeviceIntegrator<T, Model> it = collectively(ctx.env.comm(), "rk4", [&] {
    ScopedRegion setup_region("kmini::rk4::setup");
    DeviceIntegrator<T, Model> it(ctx.exec, ctx.env.comm(), p, b.count, model);
    const auto prefix = load_state<T>(ctx.exec, c, b, it);
    if (k0 > 0) {
      auto h = Kokkos::create_mirror_view(it.history());
      Kokkos::deep_copy(h, it.history());
      for (std::int64_t k = 0; k < k0; ++k) h(k) = Kokkos::complex<double>(prefix[k].real(), prefix[k].imag());
      Kokkos::deep_copy(ctx.exec, it.history(), h);
    }
    return it;
  });
  collectively(ctx.env.comm(), "rk4", [&] {
    ScopedRegion setup_region("kmini::rk4::setup");
    it.start(k0, c.resumed ? &c.resumed->sums : nullptr, true);
  });
  return it;
}

// Stops the run (exit 1) at the first non-finite step `bad`, naming the last
// finite delta, after writing delta[0..bad-1] where the deck asks for it.
template <class T, class It>
[[noreturn]] void fail_non_finite(RunContext& ctx, const Config& c, const It& it, std::int64_t bad) {
  const Problem& p = c.problem;
  const auto history = history_to_host(it.history(), 0, bad);
  std::string msg = "rk4: delta or the fields became non-finite at step " + std::to_string(bad) +
                    " (t = " + fmt(static_cast<double>(bad) * p.dt) + ")";
  if (bad > 0) msg += "; last finite delta[" + std::to_string(bad - 1) + "] = " + fmt(history[bad - 1]);
  else msg += ": the initial state is not finite";
  if (!c.write_delta.empty() && bad > 0) {
    write_delta<T>(ctx.env, ctx.output_path(c.write_delta), std::vector<C16>(history.begin(), history.end() - 1), p.dt);
    msg += "; " + c.write_delta + " holds delta[0.." + std::to_string(bad - 1) + "]";
  }
  throw RuntimeFailure(msg);
}

struct LoopTiming {
  double my_seconds = 0;  // this rank's loop, checkpoints and progress lines excluded
  double seconds = 0;     // the slowest rank's
  double io_seconds = 0;  // this rank's checkpoints and progress lines
};

// Phase "time_loop": two kernel launches per step; the host waits only at
// checks, progress lines and checkpoints (phase "checkpoint").
template <class T, class It>
LoopTiming time_loop(RunContext& ctx, const Config& c, const Block& b, std::int64_t k0, It& it) {
  const Problem& p = c.problem;
  const Environment& env = ctx.env;
  LoopTiming t;
  Kokkos::Timer progress_timer;
  std::int64_t progress_from = k0;
  FencedTimer<ExecSpace> loop(ctx.exec);
  {
    ScopedRegion loop_region("kmini::rk4::time_loop");
    for (std::int64_t k = k0 + 1; k <= p.steps; ++k) {
      it.step();
      const bool progress = c.progress_every > 0 && k % c.progress_every == 0;
      const bool checkpoint = c.checkpoint_every > 0 && k % c.checkpoint_every == 0;
      if (!(progress || checkpoint || k == p.steps || k % c.check_every == 0)) continue;
      if (const auto bad = it.first_bad_step(); bad >= 0) fail_non_finite<T>(ctx, c, it, bad);
      Kokkos::Timer io;
      if (progress) {
        const C16 delta = history_to_host(it.history(), k, k)[0];
        const double drift = (c.progress_invariant && it.tracks_invariant()) ? it.invariant_drift() : NAN;
        if (env.is_root()) {
          ctx.out << "rk4: step " << k << "/" << p.steps << "  t = " << fmt(static_cast<double>(k) * p.dt)
                  << "  |delta| = " << fmt(std::abs(delta)) << "  "
                  << fmt((k - progress_from) / progress_timer.seconds(), 4) << " steps/s";
          if (!std::isnan(drift)) ctx.out << "  invariant drift = " << fmt(drift, 3);
          ctx.out << std::endl;
        }
        progress_timer.reset();
        progress_from = k;
      }
      if (checkpoint) {
        ScopedRegion checkpoint_region("kmini::rk4::checkpoint");
        write_state_checkpoint<T>(env, c, ctx.output_path(c.checkpoint_path), it, b);
      }
      t.io_seconds += io.seconds();
    }
  }
  t.my_seconds = loop.seconds() - t.io_seconds;
  t.seconds = allreduce_max(env.comm(), t.my_seconds);
  return t;
}

// Phase "write": delta (rank 0) and the fields F, G (MPI-IO); returns the
// delta history, which the report uses.
template <class T, class It>
std::vector<C16> write_outputs(RunContext& ctx, const Config& c, const Block& b, const It& it) {
  const Problem& p = c.problem;
  ScopedRegion write_region("kmini::rk4::write");
  auto history = history_to_host(it.history(), 0, p.steps);
  if (!c.write_delta.empty()) write_delta<T>(ctx.env, ctx.output_path(c.write_delta), history, p.dt);
  const npy::DType dtype = c.single ? npy::DType::C8 : npy::DType::C16;
  for (const auto& [path, field] : {std::make_pair(c.write_f, it.F()), std::make_pair(c.write_g, it.G())}) {
    if (path.empty()) continue;
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), field);
    npy::write_distributed(ctx.env.comm(), ctx.output_path(path), dtype, {p.n, p.n},
                           static_cast<std::uint64_t>(b.first), static_cast<std::uint64_t>(b.count), h.data());
  }
  return history;
}

// The metrics and the summary row of the run, and the verification's
// outcome: the reference comparison, and the main run reproducing the
// verification run bitwise (same code, same ranks).
template <class T, class It>
void report_run(RunContext& ctx, const Config& c, const Block& b, std::int64_t k0, const It& it, const LoopTiming& loop,
                const std::vector<C16>& history, const std::optional<Verification>& check, KernelReport& report) {
  const Problem& p = c.problem;
  const Environment& env = ctx.env;
  Json& m = report.metrics;
  const std::int64_t steps_run = p.steps - k0;
  // affine and stages per_step: read F, G; write F, G. stages per_stage: the
  // four stage kernels read 20 and write 14 complex values per element.
  const bool stages = !it.affine();
  const double bytes_per_element_step = (stages && p.per_stage ? 34.0 : 4.0) * sizeof(Kokkos::complex<T>);
  const double element_steps = static_cast<double>(p.elements()) * static_cast<double>(steps_run);
  const double rank_bandwidth = static_cast<double>(b.count) * steps_run * bytes_per_element_step / loop.seconds;
  m["n"] = Json(static_cast<long long>(p.n));
  m["elements"] = Json(static_cast<long long>(p.elements()));
  m["elements_per_rank_max"] = Json(static_cast<long long>(block_of(p.n, 0, env.size()).count));
  m["precision"] = c.single ? "single" : "double";
  m["coupling"] = p.per_stage ? "per_stage" : "per_step";
  m["method"] = stages ? "stages" : "affine";
  m["kerr"] = p.kerr;
  m["g"] = p.g;
  m["dt"] = p.dt;
  m["start_step"] = Json(static_cast<long long>(k0));
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
  const C16 last = history.back();
  m["delta_final"] = Json::array_of(std::vector<double>{last.real(), last.imag()});
  m["delta_final_abs"] = std::abs(last);
  if (it.tracks_invariant()) {
    m["invariant_max_drift"] = it.invariant_drift();
    m["invariant_note"] = "max over elements of | |F|^2 + (G - 1/2)^2 - its value at the start of this run |";
  } else {
    m["invariant_max_drift"] = nullptr;
    m["invariant_note"] = "G is not real: |F|^2 + (G - 1/2)^2 is not conserved";
  }

  SummaryRow row;
  row.label = std::string("rk4.") + (p.per_stage ? "per_stage" : "per_step") + (stages ? "_stages" : "") +
              (p.kerr != 0 ? "_kerr" : "") + (c.single ? "_c8" : "_c16");
  row.size = "n=" + std::to_string(p.n) + " steps=" + std::to_string(steps_run);
  row.seconds = loop.seconds;
  row.rank_seconds = loop.my_seconds;
  row.throughput = rank_bandwidth;  // this rank's block, which may be one row larger than others'
  row.aggregate = element_steps * bytes_per_element_step / loop.seconds;
  row.unit = "B/s";
  row.roof_fraction = rank_bandwidth / roof;
  row.roof = kRoofStream;
  if (check) {
    bool same = true;
    for (std::size_t k = 0; k < check->device_history.size(); ++k)
      same = same && std::memcmp(&check->device_history[k], &history[k0 + k], sizeof(C16)) == 0;
    Json& v = m["verification"];
    v["steps"] = Json(static_cast<long long>(check->steps));
    v["delta_relative_error"] = check->delta_error;
    v["field_relative_error"] = check->field_error;
    v["tolerance"] = check->tolerance;
    v["delta_tolerance"] = check->delta_tolerance;
    v["bitwise_reproducible"] = same;
    report.verified = check->ok() && same;
    row.verified = report.verified;
  }
  report.rows.push_back(row);
}

}  // namespace

KernelReport Rk4Kernel::run(RunContext& ctx) {
  const Problem& p = config_.problem;
  if (p.kerr != 0) {
    const KerrModel model{p.kerr};
    return config_.single ? run_typed<float>(ctx, model) : run_typed<double>(ctx, model);
  }
  return config_.single ? run_typed<float>(ctx, FGModel()) : run_typed<double>(ctx, FGModel());
}

template <class T, class Model>
KernelReport Rk4Kernel::run_typed(RunContext& ctx, const Model& model) {
  const Config& c = config_;
  const Problem& p = c.problem;
  const Block b = block_of(p.n, ctx.env.rank(), ctx.env.size());
  const std::int64_t k0 = c.resumed ? c.resumed->step : 0;

  std::optional<Verification> check;
  if (ctx.verify && c.verify_steps > 0 && p.steps > k0)
    check = verify<T>(ctx, c, b, k0, std::min(c.verify_steps, p.steps - k0), model);
  auto it = setup<T>(ctx, c, b, k0, model);
  if (const auto bad = it.first_bad_step(); bad >= 0) fail_non_finite<T>(ctx, c, it, bad);
  const LoopTiming loop = time_loop<T>(ctx, c, b, k0, it);
  const std::vector<C16> history = write_outputs<T>(ctx, c, b, it);
  KernelReport report;
  report_run<T>(ctx, c, b, k0, it, loop, history, check, report);
  return report;
}

}  // namespace kmini::rk4
