#pragma once
// Device kernels of the RK4 integrator. Per step: one fused kernel that
// applies the step to every local element (ping-pong buffers) and reduces the
// new field sums, and one single-thread kernel that turns the sums into the
// next coupling delta, records it in the on-device history and prepares the
// next step's map. All kernels are named "kmini::rk4::...".
#include "core/kokkos_compat.hpp"
#include "core/random.hpp"
#include "rk4/rk4_model.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <type_traits>

namespace kmini::rk4 {

// Field sums reduced each step (in double whatever the field precision):
// sum Re F, sum Im F, sum Re G. (sum Im G never changes: dG/dt is real.)
struct Sums {
  double fx = 0, fy = 0, ga = 0;
  KOKKOS_INLINE_FUNCTION Sums& operator+=(const Sums& o) {
    fx += o.fx;
    fy += o.fy;
    ga += o.ga;
    return *this;
  }
  // Kokkos 3.x joins through volatile references on some backends.
  KOKKOS_INLINE_FUNCTION void operator+=(const volatile Sums& o) volatile {
    fx += o.fx;
    fy += o.fy;
    ga += o.ga;
  }
};

}  // namespace kmini::rk4

namespace Kokkos {
template <>
struct reduction_identity<kmini::rk4::Sums> {
  KOKKOS_FORCEINLINE_FUNCTION static kmini::rk4::Sums sum() { return kmini::rk4::Sums(); }
};
}  // namespace Kokkos

namespace kmini::rk4 {

// Per-backend tuning of the step kernel. Host backends process `chunk`
// consecutive elements per work item so the compiler can vectorise the
// element update (and the lane sums keep a fixed summation order); GPUs use
// one element per thread for coalesced access.
template <class Exec>
struct StepTuning {
  static constexpr bool host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Exec::memory_space>::accessible;
  static constexpr int chunk = host ? 64 : 1;  // a multiple of 4 on hosts (lane sums)
};

// How an initial field is produced.
struct InitSpec {
  enum class Kind { Fill, File, Random } kind = Kind::Fill;
  double re = 1, im = 0;  // fill
  std::string path;       // file
  std::uint64_t seed = 1;  // random: re, im uniform in [-scale, scale)
  double scale = 1;
};

// Random value of global element i: a function of (seed, i) only.
template <class T>
KOKKOS_INLINE_FUNCTION Kokkos::complex<T> random_value(std::uint64_t seed, std::uint64_t i, double scale) {
  return Kokkos::complex<T>(static_cast<T>(random::uniform(seed, 2 * i, -scale, scale)),
                            static_cast<T>(random::uniform(seed, 2 * i + 1, -scale, scale)));
}

template <class View, class Exec>
void fill_constant(const Exec& exec, const View& v, double re, double im) {
  using C = typename View::non_const_value_type;
  using T = typename C::value_type;
  const C value(static_cast<T>(re), static_cast<T>(im));
  Kokkos::parallel_for(
      "kmini::rk4::fill", Kokkos::RangePolicy<Exec>(exec, 0, v.extent(0)),
      KOKKOS_LAMBDA(const std::size_t i) { v(i) = value; });
}

template <class View, class Exec>
void fill_random(const Exec& exec, const View& v, std::uint64_t seed, double scale, std::uint64_t first_element) {
  using T = typename View::non_const_value_type::value_type;
  Kokkos::parallel_for(
      "kmini::rk4::fill_random", Kokkos::RangePolicy<Exec>(exec, 0, v.extent(0)),
      KOKKOS_LAMBDA(const std::size_t i) { v(i) = random_value<T>(seed, first_element + i, scale); });
}

// Local sums of a state (start of a run), plus sum Im G and max |Im G|.
template <class View, class Exec>
void local_sums(const Exec& exec, const View& F, const View& G, Sums& sums, double& sum_gc, double& max_abs_gc) {
  Kokkos::parallel_reduce(
      "kmini::rk4::sums", Kokkos::RangePolicy<Exec>(exec, 0, F.extent(0)),
      KOKKOS_LAMBDA(const std::size_t i, Sums& s) {
        s.fx += F(i).real();
        s.fy += F(i).imag();
        s.ga += G(i).real();
      },
      Kokkos::Sum<Sums>(sums));
  Kokkos::parallel_reduce(
      "kmini::rk4::sum_im_g", Kokkos::RangePolicy<Exec>(exec, 0, F.extent(0)),
      KOKKOS_LAMBDA(const std::size_t i, double& s) { s += G(i).imag(); }, Kokkos::Sum<double>(sum_gc));
  Kokkos::parallel_reduce(
      "kmini::rk4::max_im_g", Kokkos::RangePolicy<Exec>(exec, 0, F.extent(0)),
      KOKKOS_LAMBDA(const std::size_t i, double& m) {
        const double c = compat::fabs(static_cast<double>(G(i).imag()));
        if (!(c <= m)) m = c;  // NaN wins
      },
      Kokkos::Max<double>(max_abs_gc));
  exec.fence();
}

// The fused step: F1, G1 = step(F0, G0) and the sums of F1, G1.
template <class T, int Chunk, class Mem>
struct StepFunctor {
  using Complex = Kokkos::complex<T>;
  Kokkos::View<const Complex*, Mem> f0, g0;
  Kokkos::View<Complex*, Mem> f1, g1;
  Kokkos::View<const T*, Mem> map;  // kMapSize coefficients, see increment_map
  std::int64_t full_chunks = 0;     // work items [0, full_chunks) handle Chunk elements each

  // Views are bound at construction (no default-construct-then-assign).
  StepFunctor(const Kokkos::View<Complex*, Mem>& f_old, const Kokkos::View<Complex*, Mem>& g_old,
              const Kokkos::View<Complex*, Mem>& f_new, const Kokkos::View<Complex*, Mem>& g_new,
              const Kokkos::View<T*, Mem>& step_map, std::int64_t chunks)
      : f0(f_old), g0(g_old), f1(f_new), g1(g_new), map(step_map), full_chunks(chunks) {}

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t item, Sums& s) const {
    T D[kMapSize];
    for (int k = 0; k < kMapSize; ++k) D[k] = map(k);
    if (item < full_chunks) {
      // Load, update, store in separate loops over the chunk so the update
      // vectorises; the fields are read as interleaved (re, im) scalars.
      const std::int64_t base = item * Chunk;
      const T* KOKKOS_RESTRICT pf = reinterpret_cast<const T*>(f0.data() + base);
      const T* KOKKOS_RESTRICT pg = reinterpret_cast<const T*>(g0.data() + base);
      T* KOKKOS_RESTRICT qf = reinterpret_cast<T*>(f1.data() + base);
      T* KOKKOS_RESTRICT qg = reinterpret_cast<T*>(g1.data() + base);
      T x[Chunk], y[Chunk], a[Chunk], c[Chunk];
      for (int j = 0; j < Chunk; ++j) {
        x[j] = pf[2 * j];
        y[j] = pf[2 * j + 1];
        a[j] = pg[2 * j];
        c[j] = pg[2 * j + 1];
      }
      for (int j = 0; j < Chunk; ++j) update(D, x[j], y[j], a[j], c[j]);
      for (int j = 0; j < Chunk; ++j) {
        qf[2 * j] = x[j];
        qf[2 * j + 1] = y[j];
        qg[2 * j] = a[j];
        qg[2 * j + 1] = c[j];
      }
      // Chunk sums in double over kLanes interleaved lanes (a fixed order,
      // vectorisable), then the lanes pairwise.
      constexpr int kLanes = 4;
      double sx[kLanes] = {}, sy[kLanes] = {}, sa[kLanes] = {};
      for (int j = 0; j < Chunk; j += kLanes) {
        for (int l = 0; l < kLanes; ++l) {
          sx[l] += x[j + l];
          sy[l] += y[j + l];
          sa[l] += a[j + l];
        }
      }
      s.fx += (sx[0] + sx[1]) + (sx[2] + sx[3]);
      s.fy += (sy[0] + sy[1]) + (sy[2] + sy[3]);
      s.ga += (sa[0] + sa[1]) + (sa[2] + sa[3]);
    } else {
      const std::int64_t i = full_chunks * Chunk + (item - full_chunks);
      T x = f0(i).real(), y = f0(i).imag(), a = g0(i).real(), c = g0(i).imag();
      update(D, x, y, a, c);
      f1(i) = Complex(x, y);
      g1(i) = Complex(a, c);
      s.fx += x;
      s.fy += y;
      s.ga += a;
    }
  }

  KOKKOS_FORCEINLINE_FUNCTION static void update(const T* D, T& x, T& y, T& a, const T c) {
    const T dx = D[0] * x + D[1] * y + D[2] * a + D[3] * c + D[4];
    const T dy = D[5] * x + D[6] * y + D[7] * a + D[8] * c + D[9];
    const T da = D[10] * x + D[11] * y + D[12] * a + D[13] * c + D[14];
    x += dx;
    y += dy;
    a += da;
  }
};

// Single-thread bookkeeping after step k (or at the start, k = k0): records
// delta[k], flags the first non-finite step, and prepares the map of step k+1.
template <class T, class Mem>
struct AdvanceFunctor {
  Kokkos::View<const Sums, Mem> sums;
  Kokkos::View<Kokkos::complex<double>*, Mem> history;  // delta[0..steps]
  Kokkos::View<T*, Mem> map;
  Kokkos::View<std::int64_t, Mem> first_bad;  // -1 while everything is finite
  std::int64_t k = 0, steps = 0;
  double sum_gc = 0, count = 0, g = 0, dt = 0;
  Kokkos::complex<double> delta0;
  bool per_stage = false;

  AdvanceFunctor(const Kokkos::View<Sums, Mem>& sums_, const Kokkos::View<Kokkos::complex<double>*, Mem>& history_,
                 const Kokkos::View<T*, Mem>& map_, const Kokkos::View<std::int64_t, Mem>& first_bad_)
      : sums(sums_), history(history_), map(map_), first_bad(first_bad_) {}

  KOKKOS_INLINE_FUNCTION void operator()(const int) const {
    const Sums s = sums();
    Vec5 u;
    u.x = s.fx;
    u.y = s.fy;
    u.a = s.ga;
    u.c = sum_gc;
    u.one = count;
    const Kokkos::complex<double> delta = (k == 0 && !per_stage) ? delta0 : coupling(g, u);
    history(k) = delta;
    const bool finite = compat::isfinite(delta.real()) && compat::isfinite(delta.imag()) &&
                        compat::isfinite(s.fx) && compat::isfinite(s.fy) && compat::isfinite(s.ga);
    if (!finite && first_bad() < 0) first_bad() = k;
    if (k >= steps) return;
    Kokkos::complex<double> d[4];
    if (per_stage) {
      per_stage_couplings(u, g, dt, d);
    } else {
      for (int i = 0; i < 4; ++i) d[i] = delta;
    }
    double D[kMapSize];
    increment_map(d, dt, D);
    for (int i = 0; i < kMapSize; ++i) map(i) = static_cast<T>(D[i]);
  }
};

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
      : f0(f_old), g0(g_old), fs(f_stage), gs(g_stage), fa(f_acc), ga(g_acc), history(history_), in(in_),
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
    const Kokkos::complex<double> delta =
        (k == 0 && !per_stage) ? delta0 : Kokkos::complex<double>(g * s.fx, g * s.fy);
    history(k) = delta;
    const bool finite = compat::isfinite(delta.real()) && compat::isfinite(delta.imag()) &&
                        compat::isfinite(s.fx) && compat::isfinite(s.fy) && compat::isfinite(s.ga);
    if (!finite && first_bad() < 0) first_bad() = k;
  }
};

// max over elements of | |F|^2 + (Re G - 1/2)^2 - I0 |, in double.
template <class View, class Exec>
double local_invariant_drift(const Exec& exec, const View& F, const View& G,
                             const Kokkos::View<const double*, typename View::memory_space>& I0) {
  double drift = 0;
  Kokkos::parallel_reduce(
      "kmini::rk4::invariant_drift", Kokkos::RangePolicy<Exec>(exec, 0, F.extent(0)),
      KOKKOS_LAMBDA(const std::size_t i, double& m) {
        const double x = F(i).real(), y = F(i).imag(), b = static_cast<double>(G(i).real()) - 0.5;
        const double e = compat::fabs(x * x + y * y + b * b - I0(i));
        if (!(e <= m)) m = e;
      },
      Kokkos::Max<double>(drift));
  exec.fence();
  return drift;
}

template <class View, class Exec>
void compute_invariant(const Exec& exec, const View& F, const View& G,
                       const Kokkos::View<double*, typename View::memory_space>& I0) {
  Kokkos::parallel_for(
      "kmini::rk4::invariant", Kokkos::RangePolicy<Exec>(exec, 0, F.extent(0)), KOKKOS_LAMBDA(const std::size_t i) {
        const double x = F(i).real(), y = F(i).imag(), b = static_cast<double>(G(i).real()) - 0.5;
        I0(i) = x * x + y * y + b * b;
      });
}

}  // namespace kmini::rk4
