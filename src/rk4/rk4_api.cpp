#include "rk4/rk4_api.hpp"

#include "core/collective.hpp"
#include "core/timer.hpp"
#include "rk4/impl/rk4_integrator.hpp"

#include <chrono>
#include <stdexcept>
#include <string>

namespace kmini::rk4 {
namespace {

// Collective (the element count over `comm`): call it before anything that may throw.
Problem problem_of(const IntegrateParams& q, MPI_Comm comm, std::int64_t count) {
  Problem p;
  MPI_Allreduce(&count, &p.element_count, 1, MPI_INT64_T, MPI_SUM, comm);
  p.n = 0;  // any shape: element_count holds the size
  p.dt = q.dt;
  p.steps = q.steps;
  p.g = q.g;
  p.delta0 = Kokkos::complex<double>(q.delta0.real(), q.delta0.imag());
  p.per_stage = q.per_stage;
  p.kerr = q.kerr;
  p.chunk = q.chunk;
  p.full_occupancy = q.full_occupancy;
  p.wave = uses_wave_grid(q.grid);
  p.vector_loads = uses_vector_loads(q.loads, q.chunk);
  p.method = q.method == IntegrateParams::Method::Affine   ? Method::Affine
             : q.method == IntegrateParams::Method::Stages ? Method::Stages
                                                           : Method::Auto;
  return p;
}

// The integrator as an observer sees it between steps.
template <class T, class Model>
class IntegratorState final : public StepState<T> {
 public:
  IntegratorState(const Integrator<T, ApiExec, Model>& it, const State<T>& s) : it_(it), s_(s) {}
  std::int64_t step() const override { return it_.step_index(); }
  bool stages() const override { return !it_.affine(); }
  Sums sums() const override { return it_.sums(); }
  double sum_im_g() const override { return it_.sum_im_g(); }
  std::vector<std::complex<double>> delta(std::int64_t first, std::int64_t last) const override {
    return history_to_host(it_.history(), first, last);
  }
  std::int64_t first_bad_step() const override { return it_.first_bad_step(); }
  bool tracks_invariant() const override { return it_.tracks_invariant(); }
  double invariant_drift() const override { return it_.invariant_drift(); }
  const State<T>& state() const override { return s_; }

 private:
  const Integrator<T, ApiExec, Model>& it_;
  const State<T>& s_;
};

// The caller's `interrupted`, asked after a step every check_every_s at most.
class StopCheck {
 public:
  explicit StopCheck(const IntegrateParams& q) : q_(q), last_(std::chrono::steady_clock::now()) {}
  bool asked() {
    if (!q_.interrupted || asked_) return asked_;
    const auto now = std::chrono::steady_clock::now();
    if (std::chrono::duration<double>(now - last_).count() < q_.check_every_s) return false;
    last_ = now;
    asked_ = q_.interrupted();
    return asked_;
  }

 private:
  const IntegrateParams& q_;
  std::chrono::steady_clock::time_point last_;
  bool asked_ = false;
};

// Runs `phase` agreed over `comm` (every rank throws the same error) or as it is.
template <class Phase>
auto set_up(bool agree, MPI_Comm comm, Phase&& phase) -> decltype(phase()) {
  if (agree) return collectively(comm, "rk4", std::forward<Phase>(phase));
  return phase();
}

template <class T, class Model>
IntegrateResult run(const ApiExec& exec, MPI_Comm comm, const State<T>& s, const IntegrateParams& q,
                    const Resume* resume, StepObserver<T>* observer, const Model& model) {
  ScopedRegion region("kmini::rk4::integrate");
  using It = Integrator<T, ApiExec, Model>;
  const std::int64_t count = static_cast<std::int64_t>(s.F.extent(0));
  const Problem p = problem_of(q, comm, count);
  const std::int64_t k0 = resume ? resume->step : 0;
  if (k0 < 0 || k0 > q.steps || (resume && static_cast<std::int64_t>(resume->history.size()) < k0))
    throw std::invalid_argument("rk4: a restart at step " + std::to_string(k0) + " of " + std::to_string(q.steps) +
                                " needs delta[0.." + std::to_string(k0 - 1) + "]");
  // The integrator's own buffers, then start(), each agreed by all ranks
  // (start() allocates its invariant buffer after its collectives).
  It it = set_up(q.agree_on_setup_errors, comm, [&] {
    ScopedRegion start_region("kmini::rk4::start");
    It made(exec, comm, p, count, model, s.F, typename It::GField{s.G_re, s.G_im});
    if (k0 > 0) {
      auto h = Kokkos::create_mirror_view(made.history());
      Kokkos::deep_copy(h, made.history());
      for (std::int64_t k = 0; k < k0; ++k)
        h(k) = Kokkos::complex<double>(resume->history[k].real(), resume->history[k].imag());
      Kokkos::deep_copy(exec, made.history(), h);
    }
    return made;
  });
  set_up(q.agree_on_setup_errors, comm, [&] {
    ScopedRegion start_region("kmini::rk4::start");
    it.start(k0, resume && resume->sums ? &*resume->sums : nullptr, q.track_invariant);
  });

  IntegrateResult r;
  r.stages = !it.affine();
  const IntegratorState<T, Model> state(it, s);
  if (observer && observer->wants(k0)) observer->after_step(state);
  StopCheck stop(q);
  FencedTimer<ApiExec> loop(exec);
  {
    // Two kernel launches per step; the host waits only where the observer
    // asks and, under MPI, for the 3 sums.
    ScopedRegion loop_region("kmini::rk4::time_loop");
    for (std::int64_t k = k0 + 1; k <= q.steps; ++k) {
      it.step();
      ++r.steps_done;
      if (observer && observer->wants(k)) observer->after_step(state);
      // Over ranks every rank must stop after the same step, or the others
      // would wait for ever in the next step's sums: the vote is agreed there.
      if (stop.asked()) it.vote_stop();
      if (it.stop_agreed()) {
        r.interrupted = true;
        break;
      }
    }
  }
  r.loop_seconds = loop.seconds();
  r.first_nonfinite_step = it.first_bad_step();
  r.delta = history_to_host(it.history(), 0, k0 + r.steps_done);
  if (q.track_invariant && it.tracks_invariant()) r.invariant_drift = it.invariant_drift();
  return r;
}

template <class T>
IntegrateResult dispatch(const ApiExec& exec, MPI_Comm comm, const State<T>& s, const IntegrateParams& q,
                         const Resume* resume, StepObserver<T>* observer) {
  if (s.G_re.extent(0) != s.F.extent(0) || s.G_im.extent(0) != s.F.extent(0))
    throw std::invalid_argument("rk4: F and G have different sizes");
  if (q.kerr != 0) {
    if (q.method == IntegrateParams::Method::Affine)
      throw std::invalid_argument("method 'affine' needs a linear model (kerr = 0); use 'stages' or 'auto'");
    return run<T>(exec, comm, s, q, resume, observer, KerrModel{q.kerr});
  }
  return run<T>(exec, comm, s, q, resume, observer, FGModel());
}

// F in place; G split into a State's two parts and joined back.
template <class T>
IntegrateResult integrate_complex(const ApiExec& exec, MPI_Comm comm, const ApiField<T>& F, const ApiField<T>& G,
                                  const IntegrateParams& q) {
  if (F.extent(0) != G.extent(0)) throw std::invalid_argument("rk4: F and G have different sizes");
  const std::int64_t count = static_cast<std::int64_t>(F.extent(0));
  using Real = Kokkos::View<T*, ApiMemory>;
  const State<T> s{Kokkos::View<Kokkos::complex<T>*, ApiMemory>(F.data(), count),
                   Real(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("kmini::rk4::G_re")), count),
                   Real(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("kmini::rk4::G_im")), count)};
  const SplitField<T, ApiMemory> split{s.G_re, s.G_im};
  split_field(exec, G, split);
  IntegrateResult r = dispatch<T>(exec, comm, s, q, nullptr, nullptr);
  join_field(exec, split, G);
  exec.fence();
  return r;
}

}  // namespace

bool uses_wave_grid(IntegrateParams::Grid grid) {
  using G = IntegrateParams::Grid;
  return grid == G::Wave || (grid == G::Auto && Tuning<ApiExec>::wave_grid);
}

bool uses_vector_loads(IntegrateParams::Loads loads, int chunk) {
  using L = IntegrateParams::Loads;
  return loads == L::Vector || (loads == L::Auto && chunk == 0 && Tuning<ApiExec>::vector_loads);
}

IntegrateResult integrate(const ApiExec& exec, MPI_Comm comm, const State<float>& state, const IntegrateParams& params,
                          const Resume* resume, StepObserver<float>* observer) {
  return dispatch<float>(exec, comm, state, params, resume, observer);
}

IntegrateResult integrate(const ApiExec& exec, MPI_Comm comm, const State<double>& state, const IntegrateParams& params,
                          const Resume* resume, StepObserver<double>* observer) {
  return dispatch<double>(exec, comm, state, params, resume, observer);
}

IntegrateResult integrate(const ApiExec& exec, MPI_Comm comm, const ApiField<float>& F, const ApiField<float>& G,
                          const IntegrateParams& params) {
  return integrate_complex<float>(exec, comm, F, G, params);
}

IntegrateResult integrate(const ApiExec& exec, MPI_Comm comm, const ApiField<double>& F, const ApiField<double>& G,
                          const IntegrateParams& params) {
  return integrate_complex<double>(exec, comm, F, G, params);
}

}  // namespace kmini::rk4
