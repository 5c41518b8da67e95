// Rk4Kernel::run: one RK4 run as a list of named phases, each a Kokkos
// profiling region kmini::rk4::<phase> (verify, setup, then rk4::integrate,
// the library function: start, time_loop with checkpoint inside,
// invariant_drift; then write), then the report. The model and
// the precision are template parameters, chosen once here; the files and
// metrics are written by rk4_report.cpp, the verification is rk4_verify.hpp.
#include "core/collective.hpp"
#include "core/errors.hpp"
#include "core/huge_pages.hpp"
#include "core/timer.hpp"
#include "rk4/impl/rk4_detail.hpp"
#include "rk4/impl/rk4_state.hpp"
#include "rk4/impl/rk4_verify.hpp"
#include "rk4/rk4.hpp"
#include "rk4/rk4_api.hpp"
#include "rk4/rk4_report.hpp"

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

// This rank's fields (rk4::State), allocated and filled by the CLI; F() and
// G() as load_state and the writers read them.
template <class T>
struct Fields {
  State<T> s;
  const Kokkos::View<Kokkos::complex<T>*, ApiMemory>& F() const { return s.F; }
  SplitField<T, ApiMemory> G() const { return {s.G_re, s.G_im}; }
};

// Phase "verify", where asked for and steps remain: the first (at most)
// verify_steps steps against the host reference.
template <class T, class Model>
std::optional<Verification> verify_first(RunContext& ctx, const Config& c, const Block& b, std::int64_t k0,
                                         const Model& model) {
  const Problem& p = c.problem;
  if (!(ctx.verify && c.verify_steps > 0 && p.steps > k0)) return std::nullopt;
  return verify<T>(ctx, c, b, k0, std::min(c.verify_steps, p.steps - k0), model);
}

// Phase "setup": the fields from the deck's init or the restart (and the
// restart's delta history and sums into `resume`), agreed by all ranks.
template <class T>
Fields<T> setup(RunContext& ctx, const Config& c, const Block& b, Resume& resume) {
  return collectively(ctx.env.comm(), "rk4", [&] {
    ScopedRegion setup_region("kmini::rk4::setup");
    using Real = Kokkos::View<T*, ApiMemory>;
    const auto alloc = [&](const char* label) {
      return Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label));
    };
    Fields<T> f{State<T>{Kokkos::View<Kokkos::complex<T>*, ApiMemory>(alloc("kmini::rk4::F"), b.count),
                         Real(alloc("kmini::rk4::G_re"), b.count), Real(alloc("kmini::rk4::G_im"), b.count)}};
    advise_huge_pages(f.s.F);  // before load_state's first touch
    advise_huge_pages(f.s.G_re);
    advise_huge_pages(f.s.G_im);
    resume.history = load_state<T>(ctx.exec, c, b, f);
    if (c.resumed) {
      resume.step = c.resumed->step;
      resume.sums = c.resumed->sums;
    }
    return f;
  });
}

// Stops the run (exit 1) at the first non-finite step `bad`, naming the last
// finite delta, after writing delta[0..bad-1] where the deck asks for it.
template <class T>
[[noreturn]] void fail_non_finite(RunContext& ctx, const Config& c, const StepState<T>& s, std::int64_t bad) {
  const Problem& p = c.problem;
  const auto history = s.delta(0, bad);
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

// The CLI's observer of the time loop: the finiteness check every
// check_every steps, progress lines (rank 0; the invariant's drift is
// collective) and checkpoints (phase "checkpoint"); the host waits only there.
template <class T>
class LoopObserver final : public StepObserver<T> {
 public:
  LoopObserver(RunContext& ctx, const Config& c, const Block& b, std::int64_t k0)
      : ctx_(ctx), c_(c), b_(b), k0_(k0), progress_from_(k0) {}

  bool wants(std::int64_t k) const override {
    return k == k0_ || progress(k) || checkpoint(k) || k == c_.problem.steps || k % c_.check_every == 0;
  }

  void after_step(const StepState<T>& s) override {
    const std::int64_t k = s.step();
    if (const auto bad = s.first_bad_step(); bad >= 0) fail_non_finite(ctx_, c_, s, bad);
    if (k == k0_) {  // the starting state: the rate of the first line counts from here
      progress_timer_.reset();
      return;
    }
    Kokkos::Timer io;
    if (progress(k)) {
      print_progress(s, k);
      progress_timer_.reset();
      progress_from_ = k;
    }
    if (checkpoint(k)) {
      ScopedRegion checkpoint_region("kmini::rk4::checkpoint");
      write_state_checkpoint<T>(ctx_.env, c_, ctx_.output_path(c_.checkpoint_path), s, b_);
    }
    io_seconds += io.seconds();
  }

  double io_seconds = 0;  // this rank's progress lines and checkpoints

 private:
  bool progress(std::int64_t k) const { return ctx_.progress && c_.progress_every > 0 && k % c_.progress_every == 0; }
  bool checkpoint(std::int64_t k) const { return c_.checkpoint_every > 0 && k % c_.checkpoint_every == 0; }

  // Step, t, |delta|, the rate since the last line and, where asked for and
  // conserved, the invariant's drift.
  void print_progress(const StepState<T>& s, std::int64_t k) {
    const Problem& p = c_.problem;
    const C16 delta = s.delta(k, k)[0];
    const double drift = (c_.progress_invariant && s.tracks_invariant()) ? s.invariant_drift() : NAN;
    if (!ctx_.env.is_root()) return;
    ctx_.out << "rk4: step " << k << "/" << p.steps << "  t = " << fmt(static_cast<double>(k) * p.dt)
             << "  |delta| = " << fmt(std::abs(delta)) << "  "
             << fmt((k - progress_from_) / progress_timer_.seconds(), 4) << " steps/s";
    if (!std::isnan(drift)) ctx_.out << "  invariant drift = " << fmt(drift, 3);
    ctx_.out << std::endl;
  }

  RunContext& ctx_;
  const Config& c_;
  const Block& b_;
  std::int64_t k0_, progress_from_;
  Kokkos::Timer progress_timer_;
};

// The library function's parameters for the deck's problem.
IntegrateParams integrate_params(const Problem& p) {
  IntegrateParams q;
  q.steps = p.steps;
  q.dt = p.dt;
  q.g = p.g;
  q.kerr = p.kerr;
  q.per_stage = p.per_stage;
  q.method = p.method == Method::Affine   ? IntegrateParams::Method::Affine
             : p.method == Method::Stages ? IntegrateParams::Method::Stages
                                          : IntegrateParams::Method::Auto;
  q.chunk = p.chunk;
  q.full_occupancy = p.full_occupancy;
  q.grid = p.wave ? IntegrateParams::Grid::Wave : IntegrateParams::Grid::Items;
  q.loads = p.vector_loads ? IntegrateParams::Loads::Vector : IntegrateParams::Loads::Scalar;
  q.delta0 = {p.delta0.real(), p.delta0.imag()};
  q.track_invariant = true;
  q.agree_on_setup_errors = true;
  return q;
}

// Phase "write": delta (rank 0) and the fields F, G (MPI-IO). G is stored as
// (Re G, Im G) on the device and written interleaved, as complex, from a host copy.
template <class T>
void write_outputs(RunContext& ctx, const Config& c, const Block& b, const Fields<T>& f,
                   const std::vector<C16>& history) {
  const Problem& p = c.problem;
  ScopedRegion write_region("kmini::rk4::write");
  if (!c.write_delta.empty()) write_delta(ctx.env, ctx.output_path(c.write_delta), history, p.dt, c.single);
  if (!c.write_f.empty()) {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), f.F());
    write_field(ctx.env, c, b, ctx.output_path(c.write_f), h.data());
  }
  if (!c.write_g.empty()) {
    const std::vector<std::complex<T>> g = to_host<T>(f.G());
    write_field(ctx.env, c, b, ctx.output_path(c.write_g), g.data());
  }
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

  PhaseClock<ExecSpace> clock(ctx.exec);  // the time to solution (results.json's `phases`)
  clock.start("verification");
  const std::optional<Verification> check = verify_first<T>(ctx, c, b, k0, model);  // verify
  // The bandwidth roof is probed before the fields exist and again in the report.
  clock.start("probe");
  if (c.problem.steps > k0) ctx.probe_roof_bandwidth();
  clock.start("setup");
  Resume resume;
  const Fields<T> fields = setup<T>(ctx, c, b, resume);  // setup
  // time_loop (checkpoint inside): the library function, as the Python module calls it
  clock.start("compute");
  LoopObserver<T> observer(ctx, c, b, k0);
  const IntegrateResult r =
      integrate(ctx.exec, ctx.env.comm(), fields.s, integrate_params(c.problem), k0 > 0 ? &resume : nullptr, &observer);
  clock.attribute("write", observer.io_seconds);  // the checkpoints
  clock.start("write");
  RunOutcome run{k0, r.stages, {}, r.delta, std::nullopt};
  run.loop.io_seconds = observer.io_seconds;
  run.loop.my_seconds = r.loop_seconds - observer.io_seconds;
  run.loop.seconds = allreduce_max(ctx.env.comm(), run.loop.my_seconds);
  run.stores_im_g = !Model::kConstantImG;
  write_outputs<T>(ctx, c, b, fields, run.history);                             // write
  if (!std::isnan(r.invariant_drift)) run.invariant_drift = r.invariant_drift;  // invariant_drift
  clock.start("probe");
  KernelReport report;
  report_run(ctx, c, b, run, check, report);
  report.phases = clock.finish();
  return report;
}

}  // namespace kmini::rk4
