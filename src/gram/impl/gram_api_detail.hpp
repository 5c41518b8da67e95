#pragma once
// What the library call in one process (gram_api.cpp) and over the ranks
// (distributed/gram_rank_routing.cpp) share: the kernels' memory, the input
// packed for the tile kernel, the deck a call amounts to, the result without
// slices. Internal to the gram .cpp files.
#include "gram/gram.hpp"
#include "gram/gram_api.hpp"
#include "gram/impl/gram_kernels.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace kmini::gram {

using ApiMemory = ApiExec::memory_space;
using ApiPacked = PackedView<ApiMemory>;
using I32View = Kokkos::View<std::int32_t*, ApiMemory>;
using F32View = Kokkos::View<float*, ApiMemory>;

inline constexpr bool kHostMemory = Kokkos::SpaceAccessibility<Kokkos::HostSpace, ApiMemory>::accessible;

// The matrix in the tile kernel's padded layout on the device.
ApiPacked pack(const ApiExec& exec, const ApiMatrix& m, const char* label);

// The deck a library call amounts to: its outputs wanted (the names only mark
// them: the sinks hold them), the automatic engine; one process: one
// slice height (the caller's budget is checked beforehand); `planned` (over
// ranks): the CLI's plan sets the height from memory_budget.
Config config_of(const ApiMatrix& a, const ApiMatrix* b, const ComputeParams& p, bool planned);

// No rows of A or no targets: no slice to compute; lists without partners.
ComputeResult without_slices(const ApiExec& exec, const ApiPacked& pa, const ComputeParams& p);

}  // namespace kmini::gram
