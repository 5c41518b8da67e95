#pragma once
// Host reference of the RK4 integrator: plain loops over std::complex<T> in
// the field precision, the model written exactly as in the issues (the F/G
// model, with the Kerr term when kerr != 0), RK4 stage by
// stage. In `per_stage` mode it forms every stage state explicitly and sums it
// (a global sum per stage), independently of the device's linearity shortcut.
#include <complex>
#include <cstdint>
#include <functional>
#include <vector>

namespace kmini::rk4::reference {

template <class T>
struct State {
  std::vector<std::complex<T>> F, G;  // this rank's elements
};

// Sums a rank-local value over all ranks (identity on one rank).
using GlobalSum = std::function<std::complex<double>(std::complex<double>)>;

struct Setup {
  double dt = 0, g = 0;
  std::complex<double> delta0;  // per_step: delta of step 1
  bool per_stage = true;
  double kerr = 0;  // kappa of the Kerr term (0: the F/G model)
};

template <class T>
std::complex<double> local_sum(const std::vector<std::complex<T>>& v) {
  std::complex<double> s = 0;
  for (const auto& z : v) s += std::complex<double>(z);
  return s;
}

// dF/dt = -2i F - i d (2G - 1) - i kappa |F|^2 F,  dG/dt = -i (conj(d) F - d conj(F))
template <class T>
void rhs(const State<T>& s, std::complex<T> d, T kappa, State<T>& k) {
  const std::complex<T> I(0, 1), two(2), one(1);
  for (std::size_t i = 0; i < s.F.size(); ++i) {
    const std::complex<T> F = s.F[i], G = s.G[i];
    k.F[i] = -two * I * F - I * d * (two * G - one) - I * kappa * std::norm(F) * F;
    k.G[i] = -I * (std::conj(d) * F - d * std::conj(F));
  }
}

// out = s + h * k
template <class T>
void axpy(const State<T>& s, T h, const State<T>& k, State<T>& out) {
  for (std::size_t i = 0; i < s.F.size(); ++i) {
    out.F[i] = s.F[i] + h * k.F[i];
    out.G[i] = s.G[i] + h * k.G[i];
  }
}

// The delta the first step uses.
template <class T>
std::complex<double> initial_delta(const State<T>& s, const Setup& p, const GlobalSum& allsum) {
  return p.per_stage ? p.g * allsum(local_sum(s.F)) : p.delta0;
}

// The stages of a step and the state between them, allocated once per run
// (ten arrays the size of the fields: allocating them every step cost more
// than the step's arithmetic).
template <class T>
struct Stages {
  explicit Stages(std::size_t m)
      : k1{std::vector<std::complex<T>>(m), std::vector<std::complex<T>>(m)}, k2(k1), k3(k1), k4(k1), tmp(k1) {}
  State<T> k1, k2, k3, k4, tmp;
};

// One RK4 step of s with current delta `delta`; returns the next delta, g * sum(F).
template <class T>
std::complex<double> step(State<T>& s, std::complex<double> delta, const Setup& p, const GlobalSum& allsum,
                          Stages<T>& w) {
  const std::size_t m = s.F.size();
  State<T>&k1 = w.k1, &k2 = w.k2, &k3 = w.k3, &k4 = w.k4, &tmp = w.tmp;
  const T dt = static_cast<T>(p.dt);
  auto stage_delta = [&](const State<T>& stage) {
    return p.per_stage ? std::complex<T>(p.g * allsum(local_sum(stage.F))) : std::complex<T>(delta);
  };
  const T kappa = static_cast<T>(p.kerr);
  rhs(s, std::complex<T>(delta), kappa, k1);
  axpy(s, dt / 2, k1, tmp);
  rhs(tmp, stage_delta(tmp), kappa, k2);
  axpy(s, dt / 2, k2, tmp);
  rhs(tmp, stage_delta(tmp), kappa, k3);
  axpy(s, dt, k3, tmp);
  rhs(tmp, stage_delta(tmp), kappa, k4);
  const T sixth = dt / 6;
  for (std::size_t i = 0; i < m; ++i) {
    s.F[i] += sixth * (k1.F[i] + T(2) * k2.F[i] + T(2) * k3.F[i] + k4.F[i]);
    s.G[i] += sixth * (k1.G[i] + T(2) * k2.G[i] + T(2) * k3.G[i] + k4.G[i]);
  }
  return p.g * allsum(local_sum(s.F));
}

// Integrates `steps` steps from s (delta = `delta` for the first); returns
// the delta history (steps + 1 values, the first being `delta`).
template <class T>
std::vector<std::complex<double>> run(State<T>& s, std::complex<double> delta, std::int64_t steps, const Setup& p,
                                      const GlobalSum& allsum) {
  std::vector<std::complex<double>> history{delta};
  Stages<T> w(s.F.size());
  for (std::int64_t k = 0; k < steps; ++k) history.push_back(delta = step(s, delta, p, allsum, w));
  return history;
}

inline std::complex<double> no_mpi_sum(std::complex<double> v) { return v; }

}  // namespace kmini::rk4::reference
