#pragma once
// What the device of the default execution space is made of, per backend:
// the launch shapes kmini chooses (team sizes, team scratch, launch bounds)
// are written against these, never against a warp of 32 assumed for every GPU.
// Each value says why in one line; docs/amd.md lists what changes for AMD.
#include <Kokkos_Core.hpp>

#include <cstddef>
#include <limits>

namespace kmini::device {

#if defined(KOKKOS_ENABLE_CUDA)
inline constexpr int kLanes = 32;                            // a warp is 32 threads on every NVIDIA GPU
inline constexpr std::size_t kTeamScratchBytes = 48 * 1024;  // shared memory per block without the opt-in
#elif defined(KOKKOS_ENABLE_HIP)
#if defined(KOKKOS_ARCH_AMD_GFX1030) || defined(KOKKOS_ARCH_AMD_GFX1100) || defined(KOKKOS_ARCH_AMD_GFX1103)
inline constexpr int kLanes = 32;  // RDNA (Radeon) GPUs run wave32, as Kokkos compiles for them
#else
inline constexpr int kLanes = 64;  // CDNA (MI100, MI250X gfx90a, MI300 gfx942): a wavefront is 64 lanes
#endif
inline constexpr std::size_t kTeamScratchBytes = 64 * 1024;  // LDS per workgroup, and per CU, on CDNA2/CDNA3
#elif defined(KOKKOS_ENABLE_SYCL)
inline constexpr int kLanes = 16;                            // Intel GPUs' smallest sub-group (never built here)
inline constexpr std::size_t kTeamScratchBytes = 64 * 1024;  // Intel's smallest shared local memory (never built here)
#else
inline constexpr int kLanes = 1;  // a host team member is one thread; vector lanes are the compiler's
inline constexpr std::size_t kTeamScratchBytes = std::numeric_limits<std::size_t>::max();  // heap memory
#endif

}  // namespace kmini::device
