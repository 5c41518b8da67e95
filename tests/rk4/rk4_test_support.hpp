#pragma once
// What the rk4 test bodies share: a device run on the category's execution
// space from a host state, and the check of a run against the host reference.
#include "rk4/impl/rk4_integrator.hpp"
#include "rk4/impl/rk4_reference.hpp"
#include "rk4/rk4.hpp"
#include "support/test_support.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <vector>

namespace kmini::rk4 {

namespace {

using Exec = TEST_EXECSPACE;  // the category (backends/category_*.hpp)
using C16 = std::complex<double>;

template <class T>
struct Run {
  std::vector<C16> history;
  std::vector<std::complex<T>> F, G;
  std::int64_t first_bad = -1;
};

// A state with an O(1) mean field (so delta = g sum F matters) plus noise;
// G real or complex.
template <class T>
reference::State<T> make_state(std::int64_t count, bool real_g, unsigned seed) {
  reference::State<T> s;
  for (std::int64_t i = 0; i < count; ++i) {
    const double u = random::uniform(seed, 4 * i, -0.5, 0.5), v = random::uniform(seed, 4 * i + 1, -0.5, 0.5);
    const double a = random::uniform(seed, 4 * i + 2, 0, 1), c = random::uniform(seed, 4 * i + 3, -0.3, 0.3);
    s.F.emplace_back(static_cast<T>(0.6 + u), static_cast<T>(0.2 + v));
    s.G.emplace_back(static_cast<T>(a), static_cast<T>(real_g ? 0.0 : c));
  }
  return s;
}

// G of an integrator (stored as Re G, Im G) as complex values on the host.
template <class It>
auto host_G(const It& it) {
  typename It::Field g("G", it.G().extent(0));
  it.get_G(g);
  return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), g);
}

// Copies a host state into the integrator's device fields; returns the host
// mirrors for reading results back (G through host_G).
template <class It, class T>
auto load_state(It& it, const reference::State<T>& s0) {
  typename It::Field g("G", s0.G.size());
  auto hF = Kokkos::create_mirror_view(it.F());
  auto hG = Kokkos::create_mirror_view(g);
  for (std::size_t i = 0; i < s0.F.size(); ++i) {
    hF(i) = Kokkos::complex<T>(s0.F[i].real(), s0.F[i].imag());
    hG(i) = Kokkos::complex<T>(s0.G[i].real(), s0.G[i].imag());
  }
  Kokkos::deep_copy(it.F(), hF);
  Kokkos::deep_copy(g, hG);
  it.set_G(g);
  Kokkos::fence();
  return std::make_pair(hF, hG);
}

template <class T, class Model = FGModel>
Run<T> run_device(const Problem& p, const reference::State<T>& s0, std::int64_t steps, const Model& model = Model()) {
  Problem q = p;
  q.steps = steps;
  Integrator<T, Exec, Model> it(Exec(), MPI_COMM_SELF, q, static_cast<std::int64_t>(s0.F.size()), model);
  auto [hF, hG] = load_state(it, s0);
  it.start(0, nullptr, false);
  for (std::int64_t k = 0; k < steps; ++k) it.step();
  Run<T> r;
  r.first_bad = it.first_bad_step();
  auto hh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), it.history());
  for (std::size_t k = 0; k < hh.extent(0); ++k) r.history.emplace_back(hh(k).real(), hh(k).imag());
  Kokkos::deep_copy(hF, it.F());
  const auto gG = host_G(it);
  for (std::size_t i = 0; i < s0.F.size(); ++i) {
    r.F.emplace_back(hF(i).real(), hF(i).imag());
    r.G.emplace_back(gG(i).real(), gG(i).imag());
  }
  return r;
}

template <class T>
std::vector<C16> run_reference(const Problem& p, reference::State<T> s, std::int64_t steps,
                               reference::State<T>* final_state = nullptr) {
  const reference::Setup setup{p.dt, p.g, C16(p.delta0.real(), p.delta0.imag()), p.per_stage, p.kerr};
  const auto allsum = reference::no_mpi_sum;
  auto h = reference::run(s, reference::initial_delta(s, setup, allsum), steps, setup, allsum);
  if (final_state) *final_state = s;
  return h;
}

Problem strong_coupling(std::int64_t n, bool per_stage) {
  Problem p;
  p.n = n;
  p.dt = 0.01;
  p.g = 1.5 / static_cast<double>(n * n);  // |delta| ~ 1
  p.delta0 = Kokkos::complex<double>(0.4, -0.2);
  p.per_stage = per_stage;
  return p;
}

template <class T, class Model = FGModel>
void check_against_reference(bool per_stage, bool real_g, Method method = Method::Auto, const Model& model = Model()) {
  // n = 13: 169 elements, not a multiple of the host chunk, so the tail path runs too.
  Problem p = strong_coupling(13, per_stage);
  p.method = method;
  if constexpr (!Model::kLinear) p.kerr = model.kappa;
  const std::int64_t steps = 60;
  const auto s0 = make_state<T>(p.elements(), real_g, 5);
  const auto dev = run_device<T>(p, s0, steps, model);
  reference::State<T> ref_state;
  const auto ref = run_reference<T>(p, s0, steps, &ref_state);

  // Tolerance: 4 roundings of the field precision per step.
  const double tol = 4.0 * (steps + 1) * std::numeric_limits<T>::epsilon();
  double scale = 0, err = 0;
  for (std::size_t k = 0; k < ref.size(); ++k) {
    scale = std::max(scale, std::abs(ref[k]));
    err = std::max(err, std::abs(dev.history[k] - ref[k]));
  }
  EXPECT_LE(err / scale, tol) << "delta history";
  EXPECT_GT(scale, 0.5);  // the coupling is strong enough to matter
  double ferr = 0;
  for (std::size_t i = 0; i < s0.F.size(); ++i) {
    ferr = std::max(ferr, std::abs(C16(dev.F[i]) - C16(ref_state.F[i])));
    ferr = std::max(ferr, std::abs(C16(dev.G[i]) - C16(ref_state.G[i])));
  }
  EXPECT_LE(ferr, tol) << "fields";
  EXPECT_EQ(dev.first_bad, -1);
}

// Errors at t = 1 of device runs with 20, 40 and 80 steps against a reference
// run of `reference_steps` steps (the "exact" value), for a convergence order.
template <class Model = FGModel>
std::array<double, 3> errors_at_t1(Problem p, const reference::State<double>& s0, std::int64_t reference_steps,
                                   const Model& model = Model()) {
  p.dt = 1.0 / static_cast<double>(reference_steps);
  const C16 exact = run_reference<double>(p, s0, reference_steps).back();
  std::array<double, 3> err{};
  for (int i = 0; i < 3; ++i) {
    const std::int64_t steps = 20 << i;
    p.dt = 1.0 / static_cast<double>(steps);
    err[static_cast<std::size_t>(i)] = std::abs(run_device<double>(p, s0, steps, model).history.back() - exact);
  }
  return err;
}

// The original formulation (g = 1, F = G = 1, delta0 = 1, n = 256): it
// overflows float within a few steps, so the first non-finite step is known.
inline Problem original_formulation(bool per_stage) {
  Problem p;
  p.n = 256;
  p.dt = 1e-4;
  p.g = 1;
  p.delta0 = Kokkos::complex<double>(1, 0);
  p.per_stage = per_stage;
  return p;
}

inline reference::State<float> all_ones(std::int64_t count) {
  return {std::vector<std::complex<float>>(count, 1.0f), std::vector<std::complex<float>>(count, 1.0f)};
}

}  // namespace
}  // namespace kmini::rk4
