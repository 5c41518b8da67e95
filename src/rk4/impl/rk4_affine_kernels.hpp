#pragma once
// Method `affine` (the linear F/G model): with delta fixed per step, or per
// stage, a whole RK4 step is one 3x5 affine map per element. One fused kernel
// applies it in place and reduces the new sums; one single-thread kernel records delta
// and builds the next step's map. Kernels are named "kmini::rk4::...".
#include "rk4/impl/rk4_kernels.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <type_traits>

namespace kmini::rk4 {

// The fused step, in place: F, G = step(F, G) and the sums of the new F, G.
// In place because each element's new value depends only on its old one (and
// the step's map): writing to a second buffer made every store line a read
// for ownership first, 6 units of traffic for 4 counted (n = 4096, one core:
// 65% of the stream roof in single precision; see src/rk4/README.md).
// G is two real arrays: Re G read and written, Im G (constant: the map has no
// row for it) only read, so an element-step moves 7 real values, not 8.
//
// Packed (rk4.loads: vector): a full chunk's F, Re G and Im G are read and
// written as 16-byte packs (Pack16); Chunk is then 16 / sizeof(T) elements
// (or a multiple of it) and the Views 16-byte aligned (the integrator checks
// and otherwise runs the same chunk unpacked: the same arithmetic, the same bits).
template <class T, int Chunk, class Mem, bool Packed = false>
struct StepFunctor {
  using Complex = Kokkos::complex<T>;
  Kokkos::View<Complex*, Mem> f;
  Kokkos::View<T*, Mem> g_re;
  Kokkos::View<const T*, Mem> g_im;
  Kokkos::View<const T*, Mem> map;  // kMapSize coefficients, see increment_map
  std::int64_t full_chunks = 0;     // work items [0, full_chunks) handle Chunk elements each

  // Views are bound at construction (no default-construct-then-assign).
  StepFunctor(const Kokkos::View<Complex*, Mem>& f_, const SplitField<T, Mem>& g_,
              const Kokkos::View<T*, Mem>& step_map, std::int64_t chunks)
      : f(f_), g_re(g_.re), g_im(g_.im), map(step_map), full_chunks(chunks) {}

  // What a work item reads once per step: the map (GridStride reads it once per thread).
  struct Hoisted {
    T D[kMapSize];
  };
  KOKKOS_INLINE_FUNCTION void hoist(Hoisted& h) const {
    for (int k = 0; k < kMapSize; ++k) h.D[k] = map(k);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i, Sums& s) const {
    Hoisted h;
    hoist(h);
    item(i, h, s);
  }

  KOKKOS_INLINE_FUNCTION void item(const std::int64_t item, const Hoisted& h, Sums& s) const {
    const T* D = h.D;
    if (item < full_chunks) {
      // Load, update, store in separate loops over the chunk so the update
      // vectorises; F is read as interleaved (re, im) scalars, and each array
      // has its own load and store loop: F, Re G, Im G in one loop vectorised
      // worse (one core, CPU time: n = 4096 single 5.3e8 element-steps/s
      // against 7.9e8 with separate loops).
      const std::int64_t base = item * Chunk;
      T* KOKKOS_RESTRICT pf = reinterpret_cast<T*>(f.data() + base);
      T* KOKKOS_RESTRICT pa = g_re.data() + base;
      const T* KOKKOS_RESTRICT pc = g_im.data() + base;
      T x[Chunk], y[Chunk], a[Chunk], c[Chunk];
      if constexpr (Packed) {
        T xy[2 * Chunk];
        load_packs<2 * Chunk>(pf, xy);
        for (int j = 0; j < Chunk; ++j) {
          x[j] = xy[2 * j];
          y[j] = xy[2 * j + 1];
        }
        load_packs<Chunk>(pa, a);
        load_packs<Chunk>(pc, c);
      } else {
        for (int j = 0; j < Chunk; ++j) {
          x[j] = pf[2 * j];
          y[j] = pf[2 * j + 1];
        }
        for (int j = 0; j < Chunk; ++j) a[j] = pa[j];
        for (int j = 0; j < Chunk; ++j) c[j] = pc[j];
      }
      for (int j = 0; j < Chunk; ++j) update(D, x[j], y[j], a[j], c[j]);
      if constexpr (Packed) {
        T xy[2 * Chunk];
        for (int j = 0; j < Chunk; ++j) {
          xy[2 * j] = x[j];
          xy[2 * j + 1] = y[j];
        }
        store_packs<2 * Chunk>(pf, xy);
        store_packs<Chunk>(pa, a);
      } else {
        for (int j = 0; j < Chunk; ++j) {
          pf[2 * j] = x[j];
          pf[2 * j + 1] = y[j];
        }
        for (int j = 0; j < Chunk; ++j) pa[j] = a[j];
      }
      add_chunk_sums(x, y, a, s);
    } else {
      update_tail_element(full_chunks * Chunk + (item - full_chunks), D, s);
    }
  }

  // A full chunk's new F (x, y) and Re G (a) added to the sums: in double over
  // kLanes interleaved lanes (a fixed order, vectorisable), then the lanes
  // pairwise; chunks shorter than the lanes (GPUs: one element) are summed as
  // they are: the lanes would read past x[0].
  KOKKOS_FORCEINLINE_FUNCTION static void add_chunk_sums(const T (&x)[Chunk], const T (&y)[Chunk], const T (&a)[Chunk],
                                                         Sums& s) {
    constexpr int kLanes = 4;
    if constexpr (Chunk % kLanes == 0) {
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
      for (int j = 0; j < Chunk; ++j) {
        s.fx += x[j];
        s.fy += y[j];
        s.ga += a[j];
      }
    }
  }

  // Element i past the full chunks, updated in place and added to the sums.
  KOKKOS_FORCEINLINE_FUNCTION void update_tail_element(const std::int64_t i, const T* D, Sums& s) const {
    T x = f(i).real(), y = f(i).imag(), a = g_re(i);
    const T c = g_im(i);
    update(D, x, y, a, c);
    f(i) = Complex(x, y);
    g_re(i) = a;
    s.fx += x;
    s.fy += y;
    s.ga += a;
  }

  // One row of the map: R[0] x + R[1] y + R[2] a + R[3] c + R[4]. On hosts
  // with FMA the compiler contracts this into fused multiply-adds, and which
  // of the first two products it keeps unfused depended on how the vectoriser
  // grouped the element's x and y: with G split, the straight-line code of one
  // element (rk4.chunk 1, the chunk tails) paired the lanes crosswise and
  // rounded 1 value in ~2000 differently from the 64-element loop. Written out
  // as that loop (and the interleaved-G kernel everywhere) contracted it, the
  // rounding is the same for every chunk size and layout. Elsewhere (no FMA,
  // or device code) the expression is left to the compiler as before.
  KOKKOS_FORCEINLINE_FUNCTION static T row(const T* R, const T x, const T y, const T a, const T c) {
#if defined(__FMA__) && !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__) && !defined(__SYCL_DEVICE_ONLY__)
    return compat::fma(R[3], c, compat::fma(R[2], a, compat::fma(R[0], x, R[1] * y))) + R[4];
#else
    return R[0] * x + R[1] * y + R[2] * a + R[3] * c + R[4];
#endif
  }

  KOKKOS_FORCEINLINE_FUNCTION static void update(const T* D, T& x, T& y, T& a, const T c) {
    const T dx = row(D, x, y, a, c);
    const T dy = row(D + 5, x, y, a, c);
    const T da = row(D + 10, x, y, a, c);
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
    const bool finite = compat::isfinite(delta.real()) && compat::isfinite(delta.imag()) && compat::isfinite(s.fx) &&
                        compat::isfinite(s.fy) && compat::isfinite(s.ga);
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

}  // namespace kmini::rk4
