#pragma once
// Method `stages`: classical RK4 stage by stage for any model (rk4_model.hpp),
// and its single-thread bookkeeping kernel. Kernels are named "kmini::rk4::...".
#include "rk4/rk4_kernels.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <type_traits>

namespace kmini::rk4 {

// Method `stages`: classical RK4 evaluated stage by stage for any model (see
// rk4_model.hpp), in the field precision T.
//   Stage 0 (per_step): the whole step in registers with d = history(k)
//     frozen: u1 = u0 + dt/6 (k1 + 2 k2 + 2 k3 + k4) written to (fs, gs);
//     reduces the sums of u1.
//   Stages 1..4 (per_stage): stage s takes its coupling from the previous
//     stage's sums (stage 1: history(k) = g sum F(u0)), writes the next stage
//     state to (fs, gs) and the running k1 + 2 k2 + 2 k3 to (fa, ga), and
//     reduces the sums of what it wrote (stage 4: the new state u1).
// The arithmetic of u1 is the same in both forms: ((k1 + 2 k2) + 2 k3) + k4.
//
// Like StepFunctor, a work item handles Chunk consecutive elements (64 on
// hosts, 1 on GPUs): the fields are loaded into per-component arrays, the
// stage arithmetic runs in one loop the compiler vectorises, and the sums use
// the same fixed 4-lane order. The stage is a template parameter, so each
// kernel holds only its own arithmetic. One element per work item, with the
// coupling read per element and the stage chosen at run time, ran the n = 4096
// per_step step at 5.3e7 element-steps/s, a quarter of affine (one core).
template <class T, int Chunk, int Stage, class Mem, class Model>
struct StageFunctor {
  static_assert(Stage >= 0 && Stage <= 4, "stage 0 is the fused step, 1..4 the per_stage kernels");
  using Complex = Kokkos::complex<T>;
  Kokkos::View<const Complex*, Mem> f0, g0;
  Kokkos::View<Complex*, Mem> fs, gs, fa, ga;
  Kokkos::View<const Kokkos::complex<double>*, Mem> history;
  Kokkos::View<const Sums, Mem> in;  // stages 2..4: the previous stage's global sums
  Model model;
  std::int64_t k = 0;  // the step's first delta is history(k)
  double g = 0;
  T dt = 0;
  std::int64_t full_chunks = 0;  // work items [0, full_chunks) handle Chunk elements each

  StageFunctor(const Kokkos::View<Complex*, Mem>& f_old, const Kokkos::View<Complex*, Mem>& g_old,
               const Kokkos::View<Complex*, Mem>& f_stage, const Kokkos::View<Complex*, Mem>& g_stage,
               const Kokkos::View<Complex*, Mem>& f_acc, const Kokkos::View<Complex*, Mem>& g_acc,
               const Kokkos::View<Kokkos::complex<double>*, Mem>& history_, const Kokkos::View<Sums, Mem>& in_,
               std::int64_t chunks)
      : f0(f_old),
        g0(g_old),
        fs(f_stage),
        gs(g_stage),
        fa(f_acc),
        ga(g_acc),
        history(history_),
        in(in_),
        full_chunks(chunks) {}

  // Per-component arrays of `Chunk` elements.
  struct Lanes {
    T x[Chunk], y[Chunk], a[Chunk], c[Chunk];
    KOKKOS_FORCEINLINE_FUNCTION Element<T> get(const int j) const { return {x[j], y[j], a[j], c[j]}; }
    KOKKOS_FORCEINLINE_FUNCTION void set(const int j, const Element<T>& u) {
      x[j] = u.x;
      y[j] = u.y;
      a[j] = u.a;
      c[j] = u.c;
    }
  };
  KOKKOS_FORCEINLINE_FUNCTION static void load(const Complex* KOKKOS_RESTRICT f, const Complex* KOKKOS_RESTRICT gv,
                                               const int n, Lanes& L) {
    const T* KOKKOS_RESTRICT pf = reinterpret_cast<const T*>(f);
    const T* KOKKOS_RESTRICT pg = reinterpret_cast<const T*>(gv);
    for (int j = 0; j < n; ++j) {
      L.x[j] = pf[2 * j];
      L.y[j] = pf[2 * j + 1];
      L.a[j] = pg[2 * j];
      L.c[j] = pg[2 * j + 1];
    }
  }
  KOKKOS_FORCEINLINE_FUNCTION static void store(Complex* KOKKOS_RESTRICT f, Complex* KOKKOS_RESTRICT gv, const int n,
                                                const Lanes& L) {
    T* KOKKOS_RESTRICT qf = reinterpret_cast<T*>(f);
    T* KOKKOS_RESTRICT qg = reinterpret_cast<T*>(gv);
    for (int j = 0; j < n; ++j) {
      qf[2 * j] = L.x[j];
      qf[2 * j + 1] = L.y[j];
      qg[2 * j] = L.a[j];
      qg[2 * j + 1] = L.c[j];
    }
  }
  // acc + 2 k, componentwise
  KOKKOS_FORCEINLINE_FUNCTION static Element<T> add2(const Element<T>& acc, const Element<T>& kk) {
    return axpy(acc, T(2), kk);
  }
  KOKKOS_FORCEINLINE_FUNCTION static Element<T> finish(const Element<T>& u0, const Element<T>& acc,
                                                       const Element<T>& k4, const T sixth) {
    return {u0.x + sixth * (acc.x + k4.x), u0.y + sixth * (acc.y + k4.y), u0.a + sixth * (acc.a + k4.a),
            u0.c + sixth * (acc.c + k4.c)};
  }

  // The stage's arithmetic on n elements: u0 (the step's start), us (the
  // previous stage state, stages 2..4) and acc (k1 + 2 k2 + ..., stages 2..4,
  // updated in place by stages 1..3); the result goes to out.
  KOKKOS_FORCEINLINE_FUNCTION void compute(const int n, const T p, const T q, const Lanes& u0, const Lanes& us,
                                           Lanes& acc, Lanes& out) const {
    const T half = dt / T(2), sixth = dt / T(6), step = dt;
    const Model m = model;
    for (int j = 0; j < n; ++j) {
      const Element<T> u = u0.get(j);
      if constexpr (Stage == 0) {
        const Element<T> k1 = m.rhs(u, p, q);
        const Element<T> k2 = m.rhs(axpy(u, half, k1), p, q);
        const Element<T> k3 = m.rhs(axpy(u, half, k2), p, q);
        const Element<T> k4 = m.rhs(axpy(u, step, k3), p, q);
        out.set(j, finish(u, add2(add2(k1, k2), k3), k4, sixth));
      } else if constexpr (Stage == 1) {
        const Element<T> k1 = m.rhs(u, p, q);
        acc.set(j, k1);
        out.set(j, axpy(u, half, k1));
      } else if constexpr (Stage < 4) {
        const Element<T> kk = m.rhs(us.get(j), p, q);
        acc.set(j, add2(acc.get(j), kk));
        out.set(j, axpy(u, Stage == 2 ? half : step, kk));
      } else {
        out.set(j, finish(u, acc.get(j), m.rhs(us.get(j), p, q), sixth));
      }
    }
  }

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t item, Sums& s) const {
    Kokkos::complex<double> d;
    if constexpr (Stage <= 1) {
      d = history(k);
    } else {
      const Sums prev = in();
      d = Kokkos::complex<double>(g * prev.fx, g * prev.fy);
    }
    const T p = static_cast<T>(d.real()), q = static_cast<T>(d.imag());
    // A full chunk, or one element of the remainder.
    const bool full = item < full_chunks;
    const std::int64_t base = full ? item * Chunk : full_chunks * Chunk + (item - full_chunks);
    const int n = full ? Chunk : 1;
    Lanes u0, us, acc, out;
    load(f0.data() + base, g0.data() + base, n, u0);
    if constexpr (Stage >= 2) {
      load(fs.data() + base, gs.data() + base, n, us);
      load(fa.data() + base, ga.data() + base, n, acc);
    }
    compute(n, p, q, u0, us, acc, out);
    if constexpr (Stage >= 1 && Stage <= 3) store(fa.data() + base, ga.data() + base, n, acc);
    store(fs.data() + base, gs.data() + base, n, out);
    // Sums of what was written, in double: kLanes interleaved lanes (a fixed
    // order, vectorisable), then the lanes pairwise.
    constexpr int kLanes = 4;
    double sx[kLanes] = {}, sy[kLanes] = {}, sa[kLanes] = {};
    const Model m = model;
    for (int j = 0; j < n; ++j) {
      double re = 0, im = 0;
      m.coupled(out.get(j), re, im);
      sx[j % kLanes] += re;
      sy[j % kLanes] += im;
      sa[j % kLanes] += static_cast<double>(out.a[j]);
    }
    s.fx += (sx[0] + sx[1]) + (sx[2] + sx[3]);
    s.fy += (sy[0] + sy[1]) + (sy[2] + sy[3]);
    s.ga += (sa[0] + sa[1]) + (sa[2] + sa[3]);
  }
};

// Single-thread bookkeeping of method `stages` after step k (or at the start):
// records delta[k] = g sum F (delta0 at k = 0 with per_step) and flags the
// first non-finite step. The stage kernels read their couplings on the device.
template <class Mem>
struct RecordFunctor {
  Kokkos::View<const Sums, Mem> sums;
  Kokkos::View<Kokkos::complex<double>*, Mem> history;
  Kokkos::View<std::int64_t, Mem> first_bad;
  std::int64_t k = 0;
  double g = 0;
  Kokkos::complex<double> delta0;
  bool per_stage = false;

  RecordFunctor(const Kokkos::View<Sums, Mem>& sums_, const Kokkos::View<Kokkos::complex<double>*, Mem>& history_,
                const Kokkos::View<std::int64_t, Mem>& first_bad_)
      : sums(sums_), history(history_), first_bad(first_bad_) {}

  KOKKOS_INLINE_FUNCTION void operator()(const int) const {
    const Sums s = sums();
    const Kokkos::complex<double> delta = (k == 0 && !per_stage) ? delta0 : Kokkos::complex<double>(g * s.fx, g * s.fy);
    history(k) = delta;
    const bool finite = compat::isfinite(delta.real()) && compat::isfinite(delta.imag()) && compat::isfinite(s.fx) &&
                        compat::isfinite(s.fy) && compat::isfinite(s.ga);
    if (!finite && first_bad() < 0) first_bad() = k;
  }
};

}  // namespace kmini::rk4
