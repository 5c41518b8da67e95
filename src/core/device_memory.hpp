#pragma once
// How much memory one rank may allocate on its device: what every kernel's
// plan is checked against before anything is allocated.
#include "core/checked_size.hpp"

#include <mpi.h>

#include <cstdint>
#include <string>

namespace kmini {

// This process's device, no MPI. GPU backends: free and total device memory
// (cudaMemGetInfo / hipMemGetInfo). Host backends, where "device" memory is
// host memory: MemAvailable of /proc/meminfo (else sysconf's available
// pages), lowered to what a cgroup memory limit still allows.
struct DeviceMemory {
  std::uint64_t available = 0;
  std::uint64_t total = 0;
};
DeviceMemory query_device_memory();

// Collective: the bytes one rank may plan with. A device shared by several
// ranks of a node (always the case for host memory) is split evenly between
// them; the smallest share over all ranks is the same answer on every rank.
struct RankMemory {
  std::uint64_t per_rank = 0;          // what a plan may use
  std::uint64_t device_available = 0;  // the device's available memory behind it
  int sharing_ranks = 1;               // ranks sharing that device
  bool named = false;                  // given by --device-memory, not measured here
  std::string describe() const;        // "23.1 GiB available" or "23.1 GiB available, 11.6 GiB per rank of 2"
};
RankMemory device_memory_per_rank(MPI_Comm comm);

// A dry run planned for another machine (--device-memory): from now on
// device_memory_per_rank answers `bytes` per rank, one rank per device,
// without asking the device here. Set on every rank before any query.
void plan_for_device_memory(std::uint64_t bytes);

// The one-line reason `need` does not fit `memory`, or "" when it fits:
// "needs 96 EiB of device memory per rank, the device has 23.1 GiB available".
std::string memory_shortfall(const ByteCount& need, const RankMemory& memory);

}  // namespace kmini
