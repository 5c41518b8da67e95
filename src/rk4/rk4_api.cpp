#include "rk4/rk4_api.hpp"

#include "core/timer.hpp"
#include "rk4/impl/rk4_integrator.hpp"

#include <chrono>
#include <stdexcept>

namespace kmini::rk4 {
namespace {

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
  p.method = q.method == IntegrateParams::Method::Affine   ? Method::Affine
             : q.method == IntegrateParams::Method::Stages ? Method::Stages
                                                           : Method::Auto;
  return p;
}

template <class T, class Model>
IntegrateResult run(const ApiExec& exec, MPI_Comm comm, const ApiField<T>& F, const ApiField<T>& G,
                    const IntegrateParams& q, const Model& model) {
  ScopedRegion region("kmini::rk4::integrate");
  if (F.extent(0) != G.extent(0)) throw std::invalid_argument("rk4: F and G have different sizes");
  const Problem p = problem_of(q, comm, static_cast<std::int64_t>(F.extent(0)));
  Integrator<T, ApiExec, Model> it(exec, comm, p, static_cast<std::int64_t>(F.extent(0)), model);
  // The integrator owns its fields: one device copy in and one out (G split
  // into its real and imaginary parts and joined again).
  Kokkos::deep_copy(exec, it.F(), F);
  it.set_G(G);
  it.start(0, nullptr, false);
  IntegrateResult r;
  auto last_check = std::chrono::steady_clock::now();
  for (std::int64_t k = 0; k < q.steps; ++k) {
    it.step();
    ++r.steps_done;
    if (q.interrupted) {
      const auto now = std::chrono::steady_clock::now();
      if (std::chrono::duration<double>(now - last_check).count() >= q.check_every_s) {
        last_check = now;
        if (q.interrupted()) {
          r.interrupted = true;
          break;
        }
      }
    }
  }
  Kokkos::deep_copy(exec, F, it.F());
  it.get_G(G);
  auto history = Kokkos::create_mirror_view_and_copy(
      Kokkos::HostSpace(), Kokkos::subview(it.history(), std::make_pair(std::int64_t(0), r.steps_done + 1)));
  r.first_nonfinite_step = it.first_bad_step();
  r.delta.resize(history.extent(0));
  for (std::size_t k = 0; k < r.delta.size(); ++k) r.delta[k] = {history(k).real(), history(k).imag()};
  return r;
}

template <class T>
IntegrateResult dispatch(const ApiExec& exec, MPI_Comm comm, const ApiField<T>& F, const ApiField<T>& G,
                         const IntegrateParams& q) {
  if (q.kerr != 0) {
    if (q.method == IntegrateParams::Method::Affine)
      throw std::invalid_argument("method 'affine' needs a linear model (kerr = 0); use 'stages' or 'auto'");
    return run<T>(exec, comm, F, G, q, KerrModel{q.kerr});
  }
  return run<T>(exec, comm, F, G, q, FGModel());
}

}  // namespace

IntegrateResult integrate(const ApiExec& exec, MPI_Comm comm, const ApiField<float>& F, const ApiField<float>& G,
                          const IntegrateParams& params) {
  return dispatch<float>(exec, comm, F, G, params);
}

IntegrateResult integrate(const ApiExec& exec, MPI_Comm comm, const ApiField<double>& F, const ApiField<double>& G,
                          const IntegrateParams& params) {
  return dispatch<double>(exec, comm, F, G, params);
}

}  // namespace kmini::rk4
