#pragma once
// The one place where Kokkos 3.4 (Debian/Trilinos) and Kokkos 4.x differ for kmini.
// Everything else in kmini is written against the common subset.

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#if !defined(KOKKOS_VERSION) || KOKKOS_VERSION < 30400
#error "kmini needs Kokkos 3.4 or newer"
#endif

#define KMINI_KOKKOS_4 (KOKKOS_VERSION >= 40000)

namespace kmini::compat {

// Elementwise math usable inside kernels. Kokkos 3.4 keeps these in
// Kokkos::Experimental; 4.x promoted them to Kokkos::.
#if KMINI_KOKKOS_4
using Kokkos::exp;
using Kokkos::isfinite;
using Kokkos::sqrt;
using Kokkos::fabs;
using Kokkos::fma;
#else
using Kokkos::Experimental::exp;
using Kokkos::Experimental::isfinite;
using Kokkos::Experimental::sqrt;
using Kokkos::Experimental::fabs;
// Kokkos 3.4 has no fma: the C library's is a single rounding on hosts and devices alike.
KOKKOS_INLINE_FUNCTION double fma(double a, double b, double c) { return ::fma(a, b, c); }
KOKKOS_INLINE_FUNCTION float fma(float a, float b, float c) { return ::fmaf(a, b, c); }
#endif

// Population count of a 64-bit word, mapped to the hardware instruction of
// each backend: __popcll on CUDA/HIP devices, the compiler builtin on hosts
// (POPCNT when the host is compiled for a CPU that has it, see KMINI_NATIVE).
KOKKOS_FORCEINLINE_FUNCTION int popcount64(std::uint64_t x) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  return __popcll(x);
#elif defined(__SYCL_DEVICE_ONLY__)
  return static_cast<int>(sycl::popcount(x));
#else
  return __builtin_popcountll(x);
#endif
}

// Extra command-line flags that map this process to "its" GPU, one GPU per
// node-local MPI rank. Empty when the user already chose a device or the
// backend has no devices.
std::vector<std::string> device_mapping_flags(int node_local_rank);

// Kokkos' own command-line flags, checked before Kokkos::initialize: Kokkos
// 3.4 throws std::invalid_argument from inside initialize on
// --kokkos-threads=abc, later versions abort, and every version silently
// ignores a spelling it does not know (3.4 has no --kokkos-num-threads, 4.3
// dropped --kokkos-threads). Accepts the spellings of 3.4 and 4.x and returns
// the flags as Kokkos `version` spells them; throws UsageError (one line) for
// an unknown, malformed or repeated flag, or one this version cannot honour.
std::vector<std::string> kokkos_flags(const std::vector<std::string>& args, int version = KOKKOS_VERSION);
// The tools library named in the environment, for a Kokkos that would not read
// it: Kokkos >= 3.7 reads KOKKOS_TOOLS_LIBS (and the older KOKKOS_PROFILE_LIBRARY),
// 3.4 only KOKKOS_PROFILE_LIBRARY. On 3.4 a KOKKOS_TOOLS_LIBS becomes
// --kokkos-tools-library=..., unless `flags` (as returned by kokkos_flags) or
// KOKKOS_PROFILE_LIBRARY already name a library. Empty otherwise.
std::vector<std::string> tools_flags_from_environment(const std::vector<std::string>& flags, const char* tools_libs,
                                                      const char* profile_library, int version = KOKKOS_VERSION);
// Reads an environment variable (std::getenv in kmini; a table in tests).
using Getenv = std::function<const char*(const char*)>;
// Kokkos' environment variables (KOKKOS_NUM_THREADS, KOKKOS_DEVICE_ID, ...),
// checked before Kokkos::initialize, which aborts or throws an exception
// nothing can catch cleanly on a malformed one: UsageError (one line naming
// the variable, the value and what is expected). Variables a version does not
// read are left alone, as Kokkos leaves them.
void check_environment(const Getenv& get, int version = KOKKOS_VERSION);
// On device backends: a device id (flag or KOKKOS_DEVICE_ID) that this
// process cannot see is a UsageError (Kokkos 4 aborts on it).
void check_device_ids(const std::vector<std::string>& flags, const Getenv& get);
// Everything checked before Kokkos::initialize, for every caller that starts
// Kokkos (the CLI's Environment, the Python module): check_environment,
// check_device_ids, and each tools library asked for (flag or
// KOKKOS_TOOLS_LIBS / KOKKOS_PROFILE_LIBRARY) loaded as Kokkos will
// (dlopen, RTLD_NOW | RTLD_GLOBAL): one that does not load is a UsageError
// naming it and dlerror()'s reason, where Kokkos alone prints a line and
// runs on without the tool. `flags`: as the user spelled them.
void check_before_initialize(const std::vector<std::string>& flags, const Getenv& get);

// A failed allocation, recognised in what Kokkos throws: 3.4 and 4.0-4.3 a
// std::runtime_error "Kokkos failed to allocate memory for label "L". ...
// Allocation of size 1.5 G failed, ..." (3.4 adds a traceback line); 4.4+ a
// std::runtime_error "Kokkos ERROR: Cuda memory space failed to allocate 1.5 G
// (label="L")." (newer: Kokkos::Experimental::BadAlloc, a runtime_error);
// raw allocations a Kokkos::Experimental::RawMemoryAllocationFailure, which
// like any std::bad_alloc counts too. Nothing for other exceptions.
struct AllocationFailure {
  std::string label;   // the View's label, "" when unknown
  double bytes = -1;   // the size asked for, < 0 when unknown
  std::string reason;  // first line of the message, without Kokkos' preamble
};
std::optional<AllocationFailure> allocation_failure(const std::exception& e);

// Names for results.json.
inline std::string execution_space_name() { return Kokkos::DefaultExecutionSpace::name(); }
inline std::string memory_space_name() { return Kokkos::DefaultExecutionSpace::memory_space::name(); }
inline std::string version_string() {
  return std::to_string(KOKKOS_VERSION / 10000) + "." + std::to_string(KOKKOS_VERSION / 100 % 100) + "." +
         std::to_string(KOKKOS_VERSION % 100);
}

// Page-locked host memory, from which copies to the device run asynchronously
// on an execution-space instance; the host space itself on host-only builds.
#if defined(KOKKOS_ENABLE_CUDA)
using PinnedHostSpace = Kokkos::CudaHostPinnedSpace;
#elif defined(KOKKOS_ENABLE_HIP) && KMINI_KOKKOS_4
using PinnedHostSpace = Kokkos::HIPHostPinnedSpace;
#elif defined(KOKKOS_ENABLE_HIP)
using PinnedHostSpace = Kokkos::Experimental::HIPHostPinnedSpace;
#else
using PinnedHostSpace = Kokkos::HostSpace;
#endif

// True when device memory is the host's memory (create_mirror_view aliases,
// host<->device copies cost nothing).
inline constexpr bool device_is_host_accessible =
    Kokkos::SpaceAccessibility<Kokkos::HostSpace, Kokkos::DefaultExecutionSpace::memory_space>::accessible;

}  // namespace kmini::compat
