#pragma once
// What rk4's deck, kernel and library function share, without device code:
// the problem, the method, the per-step sums and how a field starts. The
// kernels are in rk4/impl/.
#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>

namespace kmini::rk4 {

// How a step is evaluated (deck key rk4.method).
//   affine: the whole step as one 3x5 affine map per element (linear models only);
//   stages: classical RK4 stage by stage on the device, any model;
//   auto:   affine when the model is linear, else stages.
enum class Method { Auto, Affine, Stages };

struct Problem {
  std::int64_t n = 256;  // fields are n x n
  double dt = 1e-3;
  std::int64_t steps = 100;
  double g = 0;                                                    // delta = g * sum(F)
  Kokkos::complex<double> delta0 = Kokkos::complex<double>(0, 0);  // per_step: delta of step 1
  bool per_stage = true;
  Method method = Method::Auto;
  double kerr = 0;              // the Kerr coefficient kappa (KerrModel); 0: the F/G model
  int chunk = 0;                // elements per work item of the affine step (rk4.chunk): 0 = the backend's Tuning
  bool full_occupancy = false;  // rk4.occupancy: full: the step kernels' launch bounds (Tuning)
  bool wave = false;            // rk4.grid: wave: one wave of threads looping with a grid stride (Tuning)
  bool vector_loads = false;    // rk4.loads: vector: 16-byte loads and stores in the step kernels (Pack16)
  // Elements over all ranks: n * n, or any count (the library function's fields
  // have any shape). The affine per_stage couplings need it (sum of G's 1s).
  std::int64_t element_count = 0;  // 0: n * n
  std::int64_t elements() const { return element_count > 0 ? element_count : n * n; }
};

// The model a problem runs (KerrModel when kerr != 0, else FGModel) and
// whether it runs method stages (stages asked for, or auto with a nonlinear model).
inline bool uses_stages(const Problem& p) {
  return p.method == Method::Stages || (p.method == Method::Auto && p.kerr != 0);
}

// How an initial field is produced.
struct InitSpec {
  enum class Kind { Fill, File, Random } kind = Kind::Fill;
  double re = 1, im = 0;   // fill
  std::string path;        // file
  std::uint64_t seed = 1;  // random: re, im uniform in [-scale, scale)
  double scale = 1;
};

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
