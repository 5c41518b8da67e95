// Rk4Kernel::run: one RK4 run as a list of named phases, each a Kokkos
// profiling region kmini::rk4::<phase> (verify, setup, time_loop with
// checkpoint inside, write, invariant_drift), then the report. The model and
// the precision are template parameters, chosen once here; the files and
// metrics are written by rk4_output.cpp, the verification is rk4_verify.hpp.
#include "core/collective.hpp"
#include "core/errors.hpp"
#include "core/timer.hpp"
#include "rk4/impl/rk4_integrator.hpp"
#include "rk4/impl/rk4_state.hpp"
#include "rk4/impl/rk4_verify.hpp"
#include "rk4/rk4.hpp"
#include "rk4/rk4_detail.hpp"
#include "rk4/rk4_output.hpp"

#include <algorithm>
#include <cmath>
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

// Phase "verify", where asked for and steps remain: the first (at most)
// verify_steps steps against the host reference.
template <class T, class Model>
std::optional<Verification> verify_first(RunContext& ctx, const Config& c, const Block& b, std::int64_t k0,
                                         const Model& model) {
  const Problem& p = c.problem;
  if (!(ctx.verify && c.verify_steps > 0 && p.steps > k0)) return std::nullopt;
  return verify<T>(ctx, c, b, k0, std::min(c.verify_steps, p.steps - k0), model);
}

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
template <class It>
[[noreturn]] void fail_non_finite(RunContext& ctx, const Config& c, const It& it, std::int64_t bad) {
  const Problem& p = c.problem;
  const auto history = history_to_host(it.history(), 0, bad);
  std::string msg = "rk4: delta or the fields became non-finite at step " + std::to_string(bad) +
                    " (t = " + fmt(static_cast<double>(bad) * p.dt) + ")";
  if (bad > 0) msg += "; last finite delta[" + std::to_string(bad - 1) + "] = " + fmt(history[bad - 1]);
  else msg += ": the initial state is not finite";
  if (!c.write_delta.empty() && bad > 0) {
    write_delta(ctx.env, ctx.output_path(c.write_delta), std::vector<C16>(history.begin(), history.end() - 1), p.dt,
                c.single);
    msg += "; " + c.write_delta + " holds delta[0.." + std::to_string(bad - 1) + "]";
  }
  throw RuntimeFailure(msg);
}

// A progress line (rank 0): step, t, |delta|, the rate since the last line
// (step last_k; read last, as it always was) and, where asked for and
// conserved, the invariant's drift (collective).
template <class It>
void print_progress(RunContext& ctx, const Config& c, const It& it, std::int64_t k, std::int64_t last_k,
                    const Kokkos::Timer& since_last) {
  const Problem& p = c.problem;
  const C16 delta = history_to_host(it.history(), k, k)[0];
  const double drift = (c.progress_invariant && it.tracks_invariant()) ? it.invariant_drift() : NAN;
  if (!ctx.env.is_root()) return;
  ctx.out << "rk4: step " << k << "/" << p.steps << "  t = " << fmt(static_cast<double>(k) * p.dt)
          << "  |delta| = " << fmt(std::abs(delta)) << "  " << fmt((k - last_k) / since_last.seconds(), 4)
          << " steps/s";
  if (!std::isnan(drift)) ctx.out << "  invariant drift = " << fmt(drift, 3);
  ctx.out << std::endl;
}

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
      if (const auto bad = it.first_bad_step(); bad >= 0) fail_non_finite(ctx, c, it, bad);
      Kokkos::Timer io;
      if (progress) {
        print_progress(ctx, c, it, k, progress_from, progress_timer);
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
// delta history, which the report uses. G is stored as (Re G, Im G) on the
// device and written interleaved, as complex, from a host copy.
template <class T, class It>
std::vector<C16> write_outputs(RunContext& ctx, const Config& c, const Block& b, const It& it) {
  const Problem& p = c.problem;
  ScopedRegion write_region("kmini::rk4::write");
  auto history = history_to_host(it.history(), 0, p.steps);
  if (!c.write_delta.empty()) write_delta(ctx.env, ctx.output_path(c.write_delta), history, p.dt, c.single);
  if (!c.write_f.empty()) {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), it.F());
    write_field(ctx.env, c, b, ctx.output_path(c.write_f), h.data());
  }
  if (!c.write_g.empty()) {
    const std::vector<std::complex<T>> g = to_host<T>(it.G());
    write_field(ctx.env, c, b, ctx.output_path(c.write_g), g.data());
  }
  return history;
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
  const Block b = block_of(c.problem.n, ctx.env.rank(), ctx.env.size());
  const std::int64_t k0 = c.resumed ? c.resumed->step : 0;

  const std::optional<Verification> check = verify_first<T>(ctx, c, b, k0, model);  // verify
  auto it = setup<T>(ctx, c, b, k0, model);                                         // setup
  if (const auto bad = it.first_bad_step(); bad >= 0) fail_non_finite(ctx, c, it, bad);
  RunOutcome run{k0, !it.affine(), time_loop<T>(ctx, c, b, k0, it), {}, std::nullopt};  // time_loop, checkpoint
  run.stores_im_g = !Model::kConstantImG;
  run.history = write_outputs<T>(ctx, c, b, it);                          // write
  if (it.tracks_invariant()) run.invariant_drift = it.invariant_drift();  // invariant_drift
  KernelReport report;
  report_run(ctx, c, b, run, check, report);
  return report;
}

}  // namespace kmini::rk4
