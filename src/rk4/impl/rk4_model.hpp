#pragma once
// The F/G model in real form, and what one RK4 step does to it, in double
// precision. Used on the device by the single-thread "advance" kernel: the
// per-element work of a step is reduced to applying a 3x5 affine map.
//
// Per element, with F = x + iy, G = a + ic and stage coupling d = p + iq:
//   dF/dt = -2i F - i d (2G - 1)          ->  dx = 2y + q(2a - 1) + 2pc
//                                             dy = -2x - p(2a - 1) + 2qc
//   dG/dt = -i (conj(d) F - d conj(F))    ->  da = 2(py - qx),  dc = 0
// For fixed d the right-hand side is linear in u = (x, y, a, c, one) with
// one = 1. Summed over N elements it is the same map with one = N, so the
// stage sums (and hence the stage couplings of `per_stage`) follow from the
// sums at the start of the step, and the whole RK4 step of every element is
// u -> u + D u with one 3x5 matrix D per step.
#include <Kokkos_Core.hpp>

#include <cstdint>

namespace kmini::rk4 {

// A state vector in real form; for sums, `one` holds the element count.
struct Vec5 {
  double x = 0, y = 0, a = 0, c = 0, one = 0;
};

KOKKOS_INLINE_FUNCTION Vec5 axpy(const Vec5& u, double h, const Vec5& k) {
  return {u.x + h * k.x, u.y + h * k.y, u.a + h * k.a, u.c + h * k.c, u.one + h * k.one};
}

KOKKOS_INLINE_FUNCTION Vec5 rhs(const Vec5& u, const Kokkos::complex<double>& d) {
  const double p = d.real(), q = d.imag();
  const double w = 2 * u.a - u.one;  // Re(2G - 1), times the count for sums
  return {2 * u.y + q * w + 2 * p * u.c, -2 * u.x - p * w + 2 * q * u.c, 2 * (p * u.y - q * u.x), 0, 0};
}

// The RK4 increment dt/6 (k1 + 2 k2 + 2 k3 + k4) with stage couplings d[0..3].
KOKKOS_INLINE_FUNCTION Vec5 rk4_increment(const Vec5& u, const Kokkos::complex<double>* d, double dt) {
  const Vec5 k1 = rhs(u, d[0]);
  const Vec5 k2 = rhs(axpy(u, dt / 2, k1), d[1]);
  const Vec5 k3 = rhs(axpy(u, dt / 2, k2), d[2]);
  const Vec5 k4 = rhs(axpy(u, dt, k3), d[3]);
  Vec5 r;
  r.x = dt / 6 * (k1.x + 2 * k2.x + 2 * k3.x + k4.x);
  r.y = dt / 6 * (k1.y + 2 * k2.y + 2 * k3.y + k4.y);
  r.a = dt / 6 * (k1.a + 2 * k2.a + 2 * k3.a + k4.a);
  return r;
}

KOKKOS_INLINE_FUNCTION Kokkos::complex<double> coupling(double g, const Vec5& sums) {
  return Kokkos::complex<double>(g * sums.x, g * sums.y);
}

// Stage couplings of `per_stage`: d_s = g * sum(F_s) where F_s are the RK4
// stage states, evaluated on the sums (one = N) instead of the fields.
KOKKOS_INLINE_FUNCTION void per_stage_couplings(const Vec5& sums, double g, double dt, Kokkos::complex<double>* d) {
  d[0] = coupling(g, sums);
  const Vec5 k1 = rhs(sums, d[0]);
  const Vec5 s2 = axpy(sums, dt / 2, k1);
  d[1] = coupling(g, s2);
  const Vec5 k2 = rhs(s2, d[1]);
  const Vec5 s3 = axpy(sums, dt / 2, k2);
  d[2] = coupling(g, s3);
  const Vec5 k3 = rhs(s3, d[2]);
  d[3] = coupling(g, axpy(sums, dt, k3));
}

// Number of coefficients of the per-step map: rows (x, y, a) x columns (x, y, a, c, 1).
constexpr int kMapSize = 15;

// The step's increment as a matrix: D[5 r + j] = increment of component r for
// the unit vector j. An element's step is then x' = x + D[0..4] . (x, y, a, c, 1), ...
KOKKOS_INLINE_FUNCTION void increment_map(const Kokkos::complex<double>* d, double dt, double* D) {
  for (int j = 0; j < 5; ++j) {
    Vec5 e;
    if (j == 0) e.x = 1;
    if (j == 1) e.y = 1;
    if (j == 2) e.a = 1;
    if (j == 3) e.c = 1;
    if (j == 4) e.one = 1;
    const Vec5 inc = rk4_increment(e, d, dt);
    D[j] = inc.x;
    D[5 + j] = inc.y;
    D[10 + j] = inc.a;
  }
}

// ---------------------------------------------------------------------------
// Models for the stage-by-stage integrator (method `stages`).
//
// A model is a small struct, copied by value into the kernels, with
//   static constexpr bool kLinear;   // true: the right-hand side is affine in the
//                                    // state for fixed couplings (method `affine` applies)
//   static constexpr bool kConstantImG;  // true: dc/dt = 0 (rhs returns c = 0), so Im G is
//                                    // loaded but never stored (the step kernels hold it
//                                    // read-only: 7 real values per element-step, not 8)
//   template <class R> Element<R> rhs(const Element<R>& u, R p, R q) const;
//                                    // du/dt of one element, coupling d = p + iq
//   template <class R> void coupled(const Element<R>& u, double& re, double& im) const;
//                                    // the element's contribution to sum F: d = g * sum
// All members are KOKKOS_INLINE_FUNCTION and free of virtual calls and std::
// math, so they run in any kernel.

// One element's state in real form: F = x + iy, G = a + ic.
template <class R>
struct Element {
  R x, y, a, c;
};

// dF/dt = -2i F - i d (2G - 1),  dG/dt = -i (conj(d) F - d conj(F)).
struct FGModel {
  static constexpr bool kLinear = true;
  static constexpr bool kConstantImG = true;  // dG/dt = 2 Im(conj(d) F) is real
  static constexpr const char* kName = "fg";
  template <class R>
  KOKKOS_INLINE_FUNCTION Element<R> rhs(const Element<R>& u, const R p, const R q) const {
    const R w = R(2) * u.a - R(1);
    return {R(2) * u.y + q * w + R(2) * p * u.c, -R(2) * u.x - p * w + R(2) * q * u.c, R(2) * (p * u.y - q * u.x),
            R(0)};
  }
  template <class R>
  KOKKOS_INLINE_FUNCTION void coupled(const Element<R>& u, double& re, double& im) const {
    re += static_cast<double>(u.x);
    im += static_cast<double>(u.y);
  }
};

// The F/G model with a Kerr term: dF/dt = -2i F - i d (2G - 1) - i kappa |F|^2 F,
// dG/dt unchanged. In real form the Kerr term adds kappa r y to dx and
// -kappa r x to dy (r = x^2 + y^2). It rotates F without changing |F|, so
// |F|^2 + (G - 1/2)^2 is still conserved per element for real G.
struct KerrModel {
  static constexpr bool kLinear = false;
  static constexpr bool kConstantImG = true;  // dG/dt as for FGModel
  static constexpr const char* kName = "kerr";
  double kappa = 0;
  template <class R>
  KOKKOS_INLINE_FUNCTION Element<R> rhs(const Element<R>& u, const R p, const R q) const {
    Element<R> k = FGModel().rhs(u, p, q);
    const R kr = static_cast<R>(kappa) * (u.x * u.x + u.y * u.y);
    k.x += kr * u.y;
    k.y -= kr * u.x;
    return k;
  }
  template <class R>
  KOKKOS_INLINE_FUNCTION void coupled(const Element<R>& u, double& re, double& im) const {
    FGModel().coupled(u, re, im);
  }
};

// u + h k (componentwise, in R).
template <class R>
KOKKOS_INLINE_FUNCTION Element<R> axpy(const Element<R>& u, const R h, const Element<R>& k) {
  return {u.x + h * k.x, u.y + h * k.y, u.a + h * k.a, u.c + h * k.c};
}

}  // namespace kmini::rk4
