#pragma once
// The discount kernel as a library function: what front ends (the
// Python module) call. A light header: Views and a parameter struct, no kernel
// code (that is discount_kernels.hpp, compiled into kmini_discount).
#include <Kokkos_Core.hpp>

#include <cstdint>

namespace kmini::discount {

using ApiExec = Kokkos::DefaultExecutionSpace;
using ApiMemory = ApiExec::memory_space;
template <class T>
using ApiRow = Kokkos::View<T*, Kokkos::LayoutRight, ApiMemory, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
template <class T>
using ApiRows = Kokkos::View<T**, Kokkos::LayoutRight, ApiMemory, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

// The CLI's choices: how cv is stored, as discount.stores (auto: streaming,
// non-temporal stores where the build has them and cv is larger than the
// last-level cache, else the 2-D range kernel with regular stores).
struct ApplyParams {
  enum class Stores { Auto, Regular, Streaming } stores = Stores::Auto;
  // With regular stores: the 2-D range over (date, row), one flat range, or
  // one wave of threads striding over the flat index (discount.policy);
  // Auto: default_policy().
  enum class Policy { Auto, MDRange, Flat, Wave } policy = Policy::Auto;
  // With policy flat or wave: discount and cv as 16-byte packs (Vector), or
  // element by element (Scalar; Auto: default_loads()) (discount.loads).
  enum class Loads { Auto, Scalar, Vector } loads = Loads::Auto;
};

// The policy `Auto` means on this build: Flat on GPUs (one element per thread
// of a flat range, where the 2-D tiles of 256 spread a row over blocks: the
// faster of the two on a GPU, docs/performance.md "NVIDIA H200"), MDRange on
// hosts (flat divides per element, 2x slower on a CPU core).
ApplyParams::Policy default_policy();
// The loads `Auto` means with policy flat or wave on this build: Vector on CUDA
// (16-byte packs, measured faster on the H200), Scalar elsewhere.
ApplyParams::Loads default_loads();

// Whether this build has the streaming-store kernel (host builds for CPUs with AVX).
bool streaming_stores_available();

// cv(d, r) = mult_by(r) * discount(d, r) for every date d and r = i * O + n
// (the (M, O) arrays seen as rows of M * O); cv may not alias the inputs.
// Asynchronous on `exec`: fence it before reading cv.
void apply(const ApiExec& exec, const ApiRow<const double>& mult_by, const ApiRows<const double>& discount,
           const ApiRows<double>& cv, const ApplyParams& params = {});
void apply(const ApiExec& exec, const ApiRow<const float>& mult_by, const ApiRows<const float>& discount,
           const ApiRows<float>& cv, const ApplyParams& params = {});

}  // namespace kmini::discount
