#pragma once
// The rk4 integrator as a library function: what both front ends
// call, the Python module with complex F and G, the CLI's time_loop phase with
// its own state, a restart and an observer for progress lines and
// checkpoints. A light header: Views, parameter structs and the functions;
// the kernels are in impl/rk4_integrator.hpp, compiled into kmini_rk4.
#include "rk4/rk4_problem.hpp"

#include <mpi.h>
#include <Kokkos_Complex.hpp>
#include <Kokkos_Core.hpp>

#include <cmath>
#include <complex>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace kmini::rk4 {

using ApiExec = Kokkos::DefaultExecutionSpace;
using ApiMemory = ApiExec::memory_space;
template <class T>
using ApiField =
    Kokkos::View<Kokkos::complex<T>*, Kokkos::LayoutRight, ApiMemory, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

// One rank's fields as the integrator keeps them, updated in place: F complex,
// G as its real and imaginary parts (the step kernels store Re G and only read
// Im G: 7 of the 8 reals an interleaved G moved; impl/rk4_kernels.hpp
// SplitField, docs/performance.md "rk4: G split into Re G and Im G"). Views made from a pointer are the caller's
// storage, used in place.
template <class T>
struct State {
  Kokkos::View<Kokkos::complex<T>*, ApiMemory> F;
  Kokkos::View<T*, ApiMemory> G_re, G_im;
};

struct IntegrateParams {
  std::int64_t steps = 0;  // the last step: integrates steps first_step+1 .. steps
  double dt = 0, g = 0;
  double kerr = 0;         // kappa of the Kerr term; 0: the F/G model
  bool per_stage = false;  // delta at every RK4 stage (else frozen over a step: per_step)
  enum class Method { Auto, Affine, Stages } method = Method::Auto;
  int chunk = 0;                // elements per work item of the affine step; 0: the backend's default
  bool full_occupancy = false;  // launch bounds for full occupancy on GPUs (rk4.occupancy: full)
  // One thread per element, or one wave of threads looping with a grid stride
  // (rk4.grid); Auto: uses_wave_grid() below.
  enum class Grid { Auto, Items, Wave } grid = Grid::Auto;
  // Scalar, or 16-byte loads and stores in the step kernels (rk4.loads); Auto:
  // uses_vector_loads() below.
  enum class Loads { Auto, Scalar, Vector } loads = Loads::Auto;
  std::complex<double> delta0 = 0;  // per_step: the delta of step 1
  // Keep |F|^2 + (G - 1/2)^2 per element (where G is real) to report its drift.
  bool track_invariant = false;
  // Set-up errors (allocations) agreed by every rank of the communicator, so a
  // failure on one rank is the same error on all (the CLI); else each rank
  // throws its own (the Python module: MemoryError stays MemoryError).
  bool agree_on_setup_errors = false;
  // Called on the host between steps, every `check_every_s` seconds at most;
  // returning true stops the integration there (the Python module: Ctrl-C).
  // Over several ranks every rank stops after the same step, the one after
  // the first rank's `interrupted` returned true (the vote rides on the
  // step's sums).
  std::function<bool()> interrupted;
  double check_every_s = 0.1;
};

// The grid and loads a run uses: the choice, or for Auto this build's default
// (rk4::Tuning: one wave with 16-byte packs on CUDA, where they measured at least
// as fast; a thread per element, scalar, elsewhere). Packs only where chunk is 0.
// The deck's rk4.grid and rk4.loads and the library's IntegrateParams both resolve here.
bool uses_wave_grid(IntegrateParams::Grid grid);
bool uses_vector_loads(IntegrateParams::Loads loads, int chunk);

// A restart: the state passed in is the one after step `step`, with the delta
// history delta[0 .. step - 1] and, for a bitwise restart, the sums recorded then.
struct Resume {
  std::int64_t step = 0;
  std::vector<std::complex<double>> history;
  std::optional<Sums> sums;
};

// What an observer may read between steps (host calls; each one synchronises).
template <class T>
class StepState {
 public:
  virtual ~StepState() = default;
  virtual std::int64_t step() const = 0;  // the step just done (first_step before the first)
  virtual bool stages() const = 0;        // method stages (else affine)
  virtual Sums sums() const = 0;          // the global sums of the current state
  virtual double sum_im_g() const = 0;
  virtual std::vector<std::complex<double>> delta(std::int64_t first, std::int64_t last) const = 0;
  virtual std::int64_t first_bad_step() const = 0;  // -1: every step so far finite
  virtual bool tracks_invariant() const = 0;
  virtual double invariant_drift() const = 0;  // collective over the communicator
  virtual const State<T>& state() const = 0;
};

// The CLI's hooks: wants(k) is asked after every step (and once for the
// starting state, k = first_step) and must be cheap; after_step runs where it
// said yes and may throw to stop the run.
template <class T>
class StepObserver {
 public:
  virtual ~StepObserver() = default;
  virtual bool wants(std::int64_t k) const = 0;
  virtual void after_step(const StepState<T>& s) = 0;
};

struct IntegrateResult {
  std::vector<std::complex<double>> delta;  // delta[0 .. the last step done]
  std::int64_t steps_done = 0;              // steps done by this call
  bool interrupted = false;
  bool stages = false;                     // ran method stages (else affine)
  std::int64_t first_nonfinite_step = -1;  // the first step whose state was not finite, -1: none
  double loop_seconds = 0;                 // this rank's time loop (fenced), observer included
  double invariant_drift = NAN;            // with track_invariant, where tracked
};

// Integrates `state` (this rank's elements; the coupling sums over `comm`) in
// place from resume->step (0 without one) to params.steps. Throws
// std::invalid_argument for a method the model cannot run (affine with kerr != 0).
IntegrateResult integrate(const ApiExec& exec, MPI_Comm comm, const State<float>& state, const IntegrateParams& params,
                          const Resume* resume = nullptr, StepObserver<float>* observer = nullptr);
IntegrateResult integrate(const ApiExec& exec, MPI_Comm comm, const State<double>& state, const IntegrateParams& params,
                          const Resume* resume = nullptr, StepObserver<double>* observer = nullptr);

// The same for complex F and G (the Python module): F is integrated in place,
// G is split into a State's two parts on the device and joined back at the end.
IntegrateResult integrate(const ApiExec& exec, MPI_Comm comm, const ApiField<float>& F, const ApiField<float>& G,
                          const IntegrateParams& params);
IntegrateResult integrate(const ApiExec& exec, MPI_Comm comm, const ApiField<double>& F, const ApiField<double>& G,
                          const IntegrateParams& params);

}  // namespace kmini::rk4
