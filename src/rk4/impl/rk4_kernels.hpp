#pragma once
// What both RK4 methods share on the device: the reduced sums, per-backend
// tuning, initial fields, start-of-run sums and the invariant. The step
// kernels are in rk4_affine_kernels.hpp and rk4_stage_kernels.hpp. All
// kernels are named "kmini::rk4::...".
#include "core/kokkos_compat.hpp"
#include "core/packs.hpp"
#include "core/random.hpp"
#include "rk4/impl/rk4_model.hpp"
#include "rk4/rk4_problem.hpp"

#include <Kokkos_Core.hpp>

#include <complex>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace kmini::rk4 {

// Per-backend tuning of the step kernel. Host backends process `chunk`
// consecutive elements per work item so the compiler can vectorise the
// element update (and the lane sums keep a fixed summation order); GPUs use
// one element per thread for coalesced access.
template <class Exec>
struct Tuning {
  static constexpr bool host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Exec::memory_space>::accessible;
  static constexpr int chunk = host ? 64 : 1;  // a multiple of 4 on hosts (lane sums)
  // rk4.occupancy: full: launch bounds of 256 threads and 8 blocks per SM
  // (2048 threads: a register cap of 32). Kokkos 4.6 sizes a reduction's grid
  // to the device's concurrency (2048 threads x SMs) in blocks of 256, but
  // ptxas gives the single-precision step kernel 45 registers on sm_90: 5
  // blocks fit per SM, so the grid runs in 1.6 waves at 62.5 % occupancy
  // (docs/performance.md, "NVIDIA H200"). Capped at 32 registers it spills
  // 56 B per thread (ptxas -v, nvcc 13). Which wins is for a GPU to measure
  // (inputs/gpu/rk4_full_occupancy.yaml); hosts ignore launch bounds.
#if defined(KOKKOS_ENABLE_HIP)
  // hipcc reads the second bound as waves per SIMD: 8 x 4 SIMDs x 64 lanes is
  // a CDNA CU's 2048 threads, at most 64 VGPRs each (MI250X, MI300).
  using full_occupancy_bounds = Kokkos::LaunchBounds<256, 8>;
#else
  using full_occupancy_bounds = Kokkos::LaunchBounds<256, 8>;  // nvcc: 8 blocks of 256 per SM
#endif
  // rk4.grid: wave: blocks of wave_block threads, wave_blocks of them per SM
  // (full_occupancy_blocks with rk4.occupancy: full), guaranteed resident by
  // the launch bounds, so the grid of wave_blocks x SMs blocks is one wave;
  // each thread then loops over the work items with the grid's stride. 4
  // blocks of 256 allow 64 registers: the single-precision step kernels fit
  // without spills, packed ones included (ptxas -v, nvcc 13, sm_90:
  // docs/performance.md "rk4 and discount: compiler reports").
  static constexpr int wave_block = 256;
  // rk4.grid and rk4.loads auto: one wave with 16-byte packs where a GPU measured it
  // at least as fast as a thread per element with scalar loads (CUDA: the H200 runs
  // in docs/performance.md); elsewhere a thread (a host: a chunk) per element, scalar.
#if defined(KOKKOS_ENABLE_CUDA)
  static constexpr bool wave_grid = std::is_same_v<Exec, Kokkos::Cuda>;
#else
  static constexpr bool wave_grid = false;
#endif
  static constexpr bool vector_loads = wave_grid;
  static constexpr int wave_blocks = 4;
  static constexpr int full_occupancy_blocks = 8;
  template <bool FullOccupancy>
  using wave_bounds = Kokkos::LaunchBounds<wave_block, FullOccupancy ? full_occupancy_blocks : wave_blocks>;
};

// The threads of one wave of `blocks_per_sm` blocks of `block` threads per
// SM: multiProcessorCount x blocks x block on CUDA; elsewhere the backend's
// concurrency (hosts: its threads; other GPUs scaled from their full
// occupancy of full_occupancy_blocks blocks).
template <class Exec>
std::int64_t wave_threads(const Exec& exec, int blocks_per_sm, int block) {
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same_v<Exec, Kokkos::Cuda>)
    return static_cast<std::int64_t>(exec.cuda_device_prop().multiProcessorCount) * blocks_per_sm * block;
#endif
  (void)block;
  const auto c = static_cast<std::int64_t>(exec.concurrency());
  if constexpr (Tuning<Exec>::host) return c;
  return c * blocks_per_sm / Tuning<Exec>::full_occupancy_blocks;
}

// rk4.grid: wave: a step or stage functor's work items, `items` of them, run
// by `threads` threads (one wave), thread t doing items t, t + threads, ...
// What the functor reads once per step (the map, the couplings) is read once
// per thread (Step::hoist), and the thread's sums are added to the
// reduction once, not per item. With one thread (Serial) the items are
// summed in the order of the default grid: the same bits.
template <class Step>
struct GridStride {
  Step step;
  std::int64_t items = 0, threads = 1;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t t, Sums& s) const {
    typename Step::Hoisted h;
    step.hoist(h);
    Sums local;
    for (std::int64_t i = t; i < items; i += threads) step.item(i, h, local);
    s += local;
  }
};

// G stored as two real Views: Re G, which the step kernels read
// and write, and Im G, which they only read where the model keeps it constant
// (Model::kConstantImG; dG/dt is real in both models). Interleaved in one
// complex View, storing Re G dirtied every line of G, so Im G was written back
// unchanged: 8 real values moved per element-step where 7 are needed. Files,
// the host reference and the library interface keep complex G; split_field
// and join_field convert on the device, to_host/from_host (rk4_state.hpp) on
// the host.
template <class T, class Mem>
struct SplitField {
  Kokkos::View<T*, Mem> re, im;
  std::size_t extent(const int r) const { return re.extent(r); }
};

// Random value of global element i: a function of (seed, i) only.
template <class T>
KOKKOS_INLINE_FUNCTION Kokkos::complex<T> random_value(std::uint64_t seed, std::uint64_t i, double scale) {
  return Kokkos::complex<T>(static_cast<T>(random::uniform(seed, 2 * i, -scale, scale)),
                            static_cast<T>(random::uniform(seed, 2 * i + 1, -scale, scale)));
}

template <class View>
struct FillConstant {
  using C = typename View::non_const_value_type;
  const View v;
  const C value;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const { v(i) = value; }
};

template <class View, class Exec>
void fill_constant(const Exec& exec, const View& v, double re, double im) {
  using C = typename View::non_const_value_type;
  using T = typename C::value_type;
  const C value(static_cast<T>(re), static_cast<T>(im));
  Kokkos::parallel_for("kmini::rk4::fill", Kokkos::RangePolicy<Exec>(exec, 0, v.extent(0)),
                       FillConstant<View>{v, value});
}

template <class T, class Mem>
struct FillConstantSplit {
  const Kokkos::View<T*, Mem> vr, vi;
  const T value_re, value_im;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const {
    vr(i) = value_re;
    vi(i) = value_im;
  }
};

template <class T, class Mem, class Exec>
void fill_constant(const Exec& exec, const SplitField<T, Mem>& v, double re, double im) {
  const Kokkos::View<T*, Mem> vr = v.re, vi = v.im;
  const T value_re = static_cast<T>(re), value_im = static_cast<T>(im);
  Kokkos::parallel_for("kmini::rk4::fill", Kokkos::RangePolicy<Exec>(exec, 0, vr.extent(0)),
                       FillConstantSplit<T, Mem>{vr, vi, value_re, value_im});
}

template <class View>
struct FillRandom {
  using T = typename View::non_const_value_type::value_type;
  const View v;
  const std::uint64_t seed;
  const double scale;
  const std::uint64_t first_element;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const {
    v(i) = random_value<T>(seed, first_element + i, scale);
  }
};

template <class View, class Exec>
void fill_random(const Exec& exec, const View& v, std::uint64_t seed, double scale, std::uint64_t first_element) {
  Kokkos::parallel_for("kmini::rk4::fill_random", Kokkos::RangePolicy<Exec>(exec, 0, v.extent(0)),
                       FillRandom<View>{v, seed, scale, first_element});
}

template <class T, class Mem>
struct FillRandomSplit {
  const Kokkos::View<T*, Mem> vr, vi;
  const std::uint64_t seed;
  const double scale;
  const std::uint64_t first_element;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const {
    const Kokkos::complex<T> z = random_value<T>(seed, first_element + i, scale);
    vr(i) = z.real();
    vi(i) = z.imag();
  }
};

template <class T, class Mem, class Exec>
void fill_random(const Exec& exec, const SplitField<T, Mem>& v, std::uint64_t seed, double scale,
                 std::uint64_t first_element) {
  const Kokkos::View<T*, Mem> vr = v.re, vi = v.im;
  Kokkos::parallel_for("kmini::rk4::fill_random", Kokkos::RangePolicy<Exec>(exec, 0, vr.extent(0)),
                       FillRandomSplit<T, Mem>{vr, vi, seed, scale, first_element});
}

template <class ComplexView, class T, class Mem>
struct SplitFieldKernel {
  const ComplexView z;
  const Kokkos::View<T*, Mem> vr, vi;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const {
    vr(i) = z(i).real();
    vi(i) = z(i).imag();
  }
};

// Complex field -> (Re, Im) and back, on the device (the library interface).
template <class ComplexView, class T, class Mem, class Exec>
void split_field(const Exec& exec, const ComplexView& z, const SplitField<T, Mem>& v) {
  const Kokkos::View<T*, Mem> vr = v.re, vi = v.im;
  Kokkos::parallel_for("kmini::rk4::split_field", Kokkos::RangePolicy<Exec>(exec, 0, vr.extent(0)),
                       SplitFieldKernel<ComplexView, T, Mem>{z, vr, vi});
}

template <class ComplexView, class T, class Mem>
struct JoinFieldKernel {
  const Kokkos::View<const T*, Mem> vr, vi;
  const ComplexView z;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const { z(i) = Kokkos::complex<T>(vr(i), vi(i)); }
};

template <class ComplexView, class T, class Mem, class Exec>
void join_field(const Exec& exec, const SplitField<T, Mem>& v, const ComplexView& z) {
  const Kokkos::View<const T*, Mem> vr = v.re, vi = v.im;
  Kokkos::parallel_for("kmini::rk4::join_field", Kokkos::RangePolicy<Exec>(exec, 0, vr.extent(0)),
                       JoinFieldKernel<ComplexView, T, Mem>{vr, vi, z});
}

template <class View, class T, class Mem>
struct LocalSumsKernel {
  const View F;
  const Kokkos::View<const T*, Mem> gr;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i, Sums& s) const {
    s.fx += F(i).real();
    s.fy += F(i).imag();
    s.ga += gr(i);
  }
};

template <class T, class Mem>
struct SumImG {
  const Kokkos::View<const T*, Mem> gi;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i, double& s) const { s += gi(i); }
};

template <class T, class Mem>
struct MaxAbsImG {
  const Kokkos::View<const T*, Mem> gi;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i, double& m) const {
    const double c = compat::fabs(static_cast<double>(gi(i)));
    if (!(c <= m)) m = c;  // NaN wins
  }
};

// Local sums of a state (start of a run), plus sum Im G and max |Im G|.
template <class View, class T, class Mem, class Exec>
void local_sums(const Exec& exec, const View& F, const SplitField<T, Mem>& G, Sums& sums, double& sum_gc,
                double& max_abs_gc) {
  const Kokkos::View<const T*, Mem> gr = G.re, gi = G.im;
  Kokkos::parallel_reduce("kmini::rk4::sums", Kokkos::RangePolicy<Exec>(exec, 0, F.extent(0)),
                          LocalSumsKernel<View, T, Mem>{F, gr}, Kokkos::Sum<Sums>(sums));
  Kokkos::parallel_reduce("kmini::rk4::sum_im_g", Kokkos::RangePolicy<Exec>(exec, 0, F.extent(0)), SumImG<T, Mem>{gi},
                          Kokkos::Sum<double>(sum_gc));
  Kokkos::parallel_reduce("kmini::rk4::max_im_g", Kokkos::RangePolicy<Exec>(exec, 0, F.extent(0)),
                          MaxAbsImG<T, Mem>{gi}, Kokkos::Max<double>(max_abs_gc));
  exec.fence();
}

// The invariant of one element, |F|^2 + (Re G - 1/2)^2, in double.
template <class C, class T>
KOKKOS_INLINE_FUNCTION double element_invariant(const C& f, const T g_re) {
  const double x = f.real(), y = f.imag(), b = static_cast<double>(g_re) - 0.5;
  return x * x + y * y + b * b;
}

template <class View, class T, class Mem>
struct InvariantDrift {
  const View F;
  const Kokkos::View<const T*, Mem> gr;
  const Kokkos::View<const double*, Mem> I0;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i, double& m) const {
    const double e = compat::fabs(element_invariant(F(i), gr(i)) - I0(i));
    if (!(e <= m)) m = e;
  }
};

// max over elements of | |F|^2 + (Re G - 1/2)^2 - I0 |, in double.
template <class View, class T, class Mem, class Exec>
double local_invariant_drift(const Exec& exec, const View& F, const SplitField<T, Mem>& G,
                             const Kokkos::View<const double*, Mem>& I0) {
  const Kokkos::View<const T*, Mem> gr = G.re;
  double drift = 0;
  Kokkos::parallel_reduce("kmini::rk4::invariant_drift", Kokkos::RangePolicy<Exec>(exec, 0, F.extent(0)),
                          InvariantDrift<View, T, Mem>{F, gr, I0}, Kokkos::Max<double>(drift));
  exec.fence();
  return drift;
}

// delta[first..last] of a device history, on the host.
template <class History>
std::vector<std::complex<double>> history_to_host(const History& d, std::int64_t first, std::int64_t last) {
  auto sub = Kokkos::subview(d, std::make_pair(first, last + 1));
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sub);
  std::vector<std::complex<double>> out(h.extent(0));
  for (std::size_t k = 0; k < out.size(); ++k) out[k] = std::complex<double>(h(k).real(), h(k).imag());
  return out;
}

template <class View, class T, class Mem>
struct ComputeInvariant {
  const View F;
  const Kokkos::View<const T*, Mem> gr;
  const Kokkos::View<double*, Mem> I0;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const { I0(i) = element_invariant(F(i), gr(i)); }
};

template <class View, class T, class Mem, class Exec>
void compute_invariant(const Exec& exec, const View& F, const SplitField<T, Mem>& G,
                       const Kokkos::View<double*, Mem>& I0) {
  const Kokkos::View<const T*, Mem> gr = G.re;
  Kokkos::parallel_for("kmini::rk4::invariant", Kokkos::RangePolicy<Exec>(exec, 0, F.extent(0)),
                       ComputeInvariant<View, T, Mem>{F, gr, I0});
}

}  // namespace kmini::rk4
