#pragma once
// The rk4 integrator as a library function (issue 22): what front ends (the
// Python module) call. A light header: Views, a parameter struct and the
// function; the kernels are in rk4_integrator.hpp, compiled into kmini_rk4.
#include <mpi.h>
#include <Kokkos_Complex.hpp>
#include <Kokkos_Core.hpp>

#include <complex>
#include <cstdint>
#include <functional>
#include <vector>

namespace kmini::rk4 {

using ApiExec = Kokkos::DefaultExecutionSpace;
using ApiMemory = ApiExec::memory_space;
template <class T>
using ApiField =
    Kokkos::View<Kokkos::complex<T>*, Kokkos::LayoutRight, ApiMemory, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

struct IntegrateParams {
  std::int64_t steps = 0;
  double dt = 0, g = 0;
  double kerr = 0;         // kappa of the Kerr term; 0: the F/G model
  bool per_stage = false;  // delta at every RK4 stage (else frozen over a step: per_step)
  enum class Method { Auto, Affine, Stages } method = Method::Auto;
  std::complex<double> delta0 = 0;  // per_step: the delta of step 1
  // Called on the host between steps, every `check_every_s` seconds at most;
  // returning true stops the integration there (the Python module: Ctrl-C).
  std::function<bool()> interrupted;
  double check_every_s = 0.1;
};

struct IntegrateResult {
  std::vector<std::complex<double>> delta;  // delta[0 .. steps_done]
  std::int64_t steps_done = 0;
  bool interrupted = false;
  std::int64_t first_nonfinite_step = -1;  // the first step whose state was not finite, -1: none
};

// Integrates F and G (this rank's elements; the coupling sums over `comm`) in
// place for params.steps steps. Throws std::invalid_argument for a method the
// model cannot run (affine with kerr != 0).
IntegrateResult integrate(const ApiExec& exec, MPI_Comm comm, const ApiField<float>& F, const ApiField<float>& G,
                          const IntegrateParams& params);
IntegrateResult integrate(const ApiExec& exec, MPI_Comm comm, const ApiField<double>& F, const ApiField<double>& G,
                          const IntegrateParams& params);

}  // namespace kmini::rk4
