#pragma once
// Method `stages`: classical RK4 stage by stage for any model (rk4_model.hpp),
// and its single-thread bookkeeping kernel. Kernels are named "kmini::rk4::...".
#include "rk4/impl/rk4_kernels.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <type_traits>

namespace kmini::rk4 {

// Method `stages`: classical RK4 evaluated stage by stage for any model (see
// rk4_model.hpp), in the field precision T, the state (F, G) updated in place.
//   Stage 0 (per_step): the whole step in registers with d = history(k)
//     frozen: u1 = u0 + dt/6 (k1 + 2 k2 + 2 k3 + k4) written over u0;
//     reduces the sums of u1.
//   Stages 1..4 (per_stage): stage s reads only u0 and recomputes the earlier
//     stages from it with their couplings d1 = history(k) and d2..d4 from the
//     global sums of stages 1..3; stages 1..3 write nothing and reduce the
//     sums of the next stage state, stage 4 writes u1 over u0 and reduces its
//     sums. Ten right-hand sides per element-step instead of four, and 10
//     complex values moved instead of 34 (stage states and k1 + 2 k2 + 2 k3
//     were stored and re-read): at n = 4096 in double the stored form ran 6.7x
//     slower than per_step, this one ~2.5x (one core, src/rk4/README.md).
// The arithmetic of u1 is the same in both forms: ((k1 + 2 k2) + 2 k3) + k4.
// G is two real arrays (SplitField): Re G read and written; Im G read only
// where the model keeps it constant (Model::kConstantImG: the stage arithmetic
// still carries c, its result is not stored), else written like the others.
//
// Like StepFunctor, a work item handles Chunk consecutive elements (64 on
// hosts, 1 on GPUs): the fields are loaded into per-component arrays, the
// stage arithmetic runs in one loop the compiler vectorises, and the sums use
// the same fixed 4-lane order. The stage is a template parameter, so each
// kernel holds only its own arithmetic. One element per work item, with the
// coupling read per element and the stage chosen at run time, ran the n = 4096
// per_step step at 5.3e7 element-steps/s, a quarter of affine (one core).
// Packed (rk4.loads: vector): full chunks are read and written as 16-byte
// packs, as in StepFunctor.
template <class T, int Chunk, int Stage, class Mem, class Model, bool Packed = false>
struct StageFunctor {
  static_assert(Stage >= 0 && Stage <= 4, "stage 0 is the fused step, 1..4 the per_stage kernels");
  using Complex = Kokkos::complex<T>;
  static constexpr bool kStoresImG = !Model::kConstantImG;
  using ImG = std::conditional_t<kStoresImG, T, const T>;
  // The state: u0, replaced by u1 in stages 0 and 4 (Im G only if it changes).
  Kokkos::View<Complex*, Mem> f;
  Kokkos::View<T*, Mem> g_re;
  Kokkos::View<ImG*, Mem> g_im;
  Kokkos::View<const Kokkos::complex<double>*, Mem> history;
  Kokkos::View<const Sums, Mem> sums1, sums2, sums3;  // global sums of the states of stages 1..3
  Model model;
  std::int64_t k = 0;  // the step's first delta is history(k)
  double coupling_g = 0;
  T dt = 0;
  std::int64_t full_chunks = 0;  // work items [0, full_chunks) handle Chunk elements each

  StageFunctor(const Kokkos::View<Complex*, Mem>& f_, const SplitField<T, Mem>& g_,
               const Kokkos::View<Kokkos::complex<double>*, Mem>& history_, const Kokkos::View<Sums, Mem>& s1,
               const Kokkos::View<Sums, Mem>& s2, const Kokkos::View<Sums, Mem>& s3, std::int64_t chunks)
      : f(f_), g_re(g_.re), g_im(g_.im), history(history_), sums1(s1), sums2(s2), sums3(s3), full_chunks(chunks) {}

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
  // One loop per array, as in StepFunctor (F, Re G, Im G in one loop: the
  // Kerr per_stage bench 1.30e8 element-steps/s against 1.44e8, CPU time).
  KOKKOS_FORCEINLINE_FUNCTION static void load(const Complex* KOKKOS_RESTRICT f, const T* KOKKOS_RESTRICT pa,
                                               const T* KOKKOS_RESTRICT pc, const int n, Lanes& L) {
    const T* KOKKOS_RESTRICT pf = reinterpret_cast<const T*>(f);
    if constexpr (Packed) {
      if (n == Chunk) {
        T xy[2 * Chunk];
        load_packs<2 * Chunk>(pf, xy);
        for (int j = 0; j < Chunk; ++j) {
          L.x[j] = xy[2 * j];
          L.y[j] = xy[2 * j + 1];
        }
        load_packs<Chunk>(pa, L.a);
        load_packs<Chunk>(pc, L.c);
        return;
      }
    }
    for (int j = 0; j < n; ++j) {
      L.x[j] = pf[2 * j];
      L.y[j] = pf[2 * j + 1];
    }
    for (int j = 0; j < n; ++j) L.a[j] = pa[j];
    for (int j = 0; j < n; ++j) L.c[j] = pc[j];
  }
  // Stores F and Re G; Im G where the model changes it.
  KOKKOS_FORCEINLINE_FUNCTION static void store(Complex* KOKKOS_RESTRICT f, T* KOKKOS_RESTRICT qa,
                                                ImG* KOKKOS_RESTRICT qc, const int n, const Lanes& L) {
    T* KOKKOS_RESTRICT qf = reinterpret_cast<T*>(f);
    if constexpr (Packed) {
      if (n == Chunk) {
        T xy[2 * Chunk];
        for (int j = 0; j < Chunk; ++j) {
          xy[2 * j] = L.x[j];
          xy[2 * j + 1] = L.y[j];
        }
        store_packs<2 * Chunk>(qf, xy);
        store_packs<Chunk>(qa, L.a);
        if constexpr (kStoresImG) store_packs<Chunk>(qc, L.c);
        else (void)qc;
        return;
      }
    }
    for (int j = 0; j < n; ++j) {
      qf[2 * j] = L.x[j];
      qf[2 * j + 1] = L.y[j];
    }
    for (int j = 0; j < n; ++j) qa[j] = L.a[j];
    if constexpr (kStoresImG) {
      for (int j = 0; j < n; ++j) qc[j] = L.c[j];
    } else {
      (void)qc;
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

  // The stage's arithmetic on n elements of u0 with couplings (p[i], q[i]) of
  // stages i = 0..3: stage 0 the whole step with (p[0], q[0]); stage s the
  // stages 1..s, its result (the state whose sums the stage reduces; u1 for
  // stage 4) to out.
  KOKKOS_FORCEINLINE_FUNCTION void compute(const int n, const T* p, const T* q, const Lanes& u0, Lanes& out) const {
    const T half = dt / T(2), sixth = dt / T(6), step = dt;
    const Model m = model;
    for (int j = 0; j < n; ++j) {
      const Element<T> u = u0.get(j);
      if constexpr (Stage == 0) {
        const Element<T> k1 = m.rhs(u, p[0], q[0]);
        const Element<T> k2 = m.rhs(axpy(u, half, k1), p[0], q[0]);
        const Element<T> k3 = m.rhs(axpy(u, half, k2), p[0], q[0]);
        const Element<T> k4 = m.rhs(axpy(u, step, k3), p[0], q[0]);
        out.set(j, finish(u, add2(add2(k1, k2), k3), k4, sixth));
      } else {
        const Element<T> k1 = m.rhs(u, p[0], q[0]);
        const Element<T> y2 = axpy(u, half, k1);
        if constexpr (Stage == 1) {
          out.set(j, y2);
        } else {
          const Element<T> k2 = m.rhs(y2, p[1], q[1]);
          const Element<T> y3 = axpy(u, half, k2);
          if constexpr (Stage == 2) {
            out.set(j, y3);
          } else {
            const Element<T> k3 = m.rhs(y3, p[2], q[2]);
            const Element<T> y4 = axpy(u, step, k3);
            if constexpr (Stage == 3) {
              out.set(j, y4);
            } else {
              out.set(j, finish(u, add2(add2(k1, k2), k3), m.rhs(y4, p[3], q[3]), sixth));
            }
          }
        }
      }
    }
  }

  // delta = g * (sum of F) of a stage state, in the field precision.
  KOKKOS_FORCEINLINE_FUNCTION void coupling_of(const Sums& stage, T& p, T& q) const {
    p = static_cast<T>(coupling_g * stage.fx);
    q = static_cast<T>(coupling_g * stage.fy);
  }

  // What a work item reads once per step: the couplings of stages 1..Stage,
  // d1 = history(k), d(i+1) = g * (sums of stage i) (GridStride reads them once per thread).
  struct Hoisted {
    T p[4] = {}, q[4] = {};
  };
  KOKKOS_INLINE_FUNCTION void hoist(Hoisted& h) const {
    const Kokkos::complex<double> d1 = history(k);
    h.p[0] = static_cast<T>(d1.real());
    h.q[0] = static_cast<T>(d1.imag());
    if constexpr (Stage >= 2) coupling_of(sums1(), h.p[1], h.q[1]);
    if constexpr (Stage >= 3) coupling_of(sums2(), h.p[2], h.q[2]);
    if constexpr (Stage >= 4) coupling_of(sums3(), h.p[3], h.q[3]);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i, Sums& s) const {
    Hoisted h;
    hoist(h);
    item(i, h, s);
  }

  KOKKOS_INLINE_FUNCTION void item(const std::int64_t item, const Hoisted& h, Sums& s) const {
    const T* p = h.p;
    const T* q = h.q;
    // A full chunk, or one element of the remainder.
    const bool full = item < full_chunks;
    const std::int64_t base = full ? item * Chunk : full_chunks * Chunk + (item - full_chunks);
    const int n = full ? Chunk : 1;
    Lanes u0, out;
    load(f.data() + base, g_re.data() + base, g_im.data() + base, n, u0);
    compute(n, p, q, u0, out);
    if constexpr (Stage == 0 || Stage == 4) store(f.data() + base, g_re.data() + base, g_im.data() + base, n, out);
    // Sums of the stage's result, in double: kLanes interleaved lanes (a
    // fixed order), then the lanes pairwise. The coupled quantities first,
    // then the lanes over whole groups of kLanes, so both loops vectorise
    // (summed in one loop with lane j % kLanes they ran scalar: half the
    // per_step kernel's time at n = 4096, perf).
    constexpr int kLanes = 4;
    double sx[kLanes] = {}, sy[kLanes] = {}, sa[kLanes] = {};
    double re[Chunk], im[Chunk];
    const Model m = model;
    for (int j = 0; j < n; ++j) {
      re[j] = 0;  // coupled() adds into its outputs
      im[j] = 0;
      m.coupled(out.get(j), re[j], im[j]);
    }
    if (n == Chunk && Chunk % kLanes == 0) {
      for (int j = 0; j < Chunk; j += kLanes) {
        for (int l = 0; l < kLanes; ++l) {
          sx[l] += re[j + l];
          sy[l] += im[j + l];
          sa[l] += static_cast<double>(out.a[j + l]);
        }
      }
    } else {
      for (int j = 0; j < n; ++j) {
        sx[j % kLanes] += re[j];
        sy[j % kLanes] += im[j];
        sa[j % kLanes] += static_cast<double>(out.a[j]);
      }
    }
    s.fx += (sx[0] + sx[1]) + (sx[2] + sx[3]);
    s.fy += (sy[0] + sy[1]) + (sy[2] + sy[3]);
    s.ga += (sa[0] + sa[1]) + (sa[2] + sa[3]);
  }
};

template <class T, class Mem>
struct SettleImG {
  const Kokkos::View<T*, Mem> im;
  const T zero_increment;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const { im(i) = im(i) + zero_increment; }
};

// Where the model keeps Im G constant the stage kernels do not store it. When
// G was one interleaved complex View they stored c + dt/6 (0 + 0): c itself,
// except that -0 became +0 (and a signalling NaN quiet). This pass applies that
// addition once, before a run's first stages step, so fields, outputs and
// checkpoints stay byte-identical to that form: one read and write of Im G
// per run, not per step. (Method affine never wrote Im G: nothing to do.)
template <class T, class Mem, class Exec>
void settle_constant_im_g(const Exec& exec, const Kokkos::View<T*, Mem>& im, const T dt) {
  const T zero_increment = dt / T(6) * T(0);  // what the stages added to c
  Kokkos::parallel_for("kmini::rk4::settle_im_g", Kokkos::RangePolicy<Exec>(exec, 0, im.extent(0)),
                       SettleImG<T, Mem>{im, zero_increment});
}

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
