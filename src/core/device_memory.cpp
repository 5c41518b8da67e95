#include "core/device_memory.hpp"

#include "core/format.hpp"

#include <unistd.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#elif defined(KOKKOS_ENABLE_HIP)
#include <hip/hip_runtime.h>
#endif

namespace kmini {

namespace {

constexpr std::uint64_t kUnknown = std::numeric_limits<std::uint64_t>::max();

// A number from a one-value file ("12345\n"); kUnknown for "max", absent or unreadable.
std::uint64_t read_number(const std::string& path) {
  std::ifstream in(path);
  std::string word;
  if (!(in >> word) || word.empty() || word.find_first_not_of("0123456789") != std::string::npos) return kUnknown;
  try {
    return std::stoull(word);
  } catch (const std::exception&) {
    return kUnknown;
  }
}

// What the cgroup limits of this process still allow (batch systems and
// containers limit memory there, below what /proc/meminfo reports): the
// smallest limit - usage over this cgroup and its ancestors; kUnknown if none.
std::uint64_t cgroup_room() {
  std::ifstream in("/proc/self/cgroup");
  std::uint64_t room = kUnknown;
  for (std::string line; std::getline(in, line);) {
    // v2: "0::/path"; v1: "N:memory:/path" (controllers may be comma-separated).
    const auto c1 = line.find(':'), c2 = line.find(':', c1 + 1);
    if (c1 == std::string::npos || c2 == std::string::npos) continue;
    const std::string controllers = "," + line.substr(c1 + 1, c2 - c1 - 1) + ",";
    const bool v2 = controllers == ",,";
    if (!v2 && controllers.find(",memory,") == std::string::npos) continue;
    const std::string base = v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/memory";
    const char* limit_file = v2 ? "/memory.max" : "/memory.limit_in_bytes";
    const char* usage_file = v2 ? "/memory.current" : "/memory.usage_in_bytes";
    for (std::string path = line.substr(c2 + 1);; path = path.substr(0, path.rfind('/'))) {
      const std::string dir = base + (path == "/" ? "" : path);
      const std::uint64_t limit = read_number(dir + limit_file), usage = read_number(dir + usage_file);
      if (limit != kUnknown && usage != kUnknown) room = std::min(room, limit > usage ? limit - usage : 0);
      if (path.empty() || path == "/") break;
    }
  }
  return room;
}

DeviceMemory host_memory() {
  DeviceMemory m;
  const long pages = sysconf(_SC_PHYS_PAGES), avail_pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page > 0) m.total = std::uint64_t(pages) * std::uint64_t(page);
  // MemAvailable counts reclaimable caches; sysconf's available pages do not.
  std::ifstream meminfo("/proc/meminfo");
  bool found = false;
  for (std::string key; meminfo >> key;) {
    std::uint64_t kib = 0;
    meminfo >> kib;
    if (key == "MemAvailable:") {
      m.available = kib * 1024;
      found = true;
      break;
    }
    meminfo.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  if (!found && avail_pages > 0 && page > 0) m.available = std::uint64_t(avail_pages) * std::uint64_t(page);
  m.available = std::min(m.available, cgroup_room());
  return m;
}

// The device this rank's Kokkos uses; 0 on host backends (one shared memory).
int device_id() {
  int id = 0;
#if defined(KOKKOS_ENABLE_CUDA)
  if (cudaGetDevice(&id) != cudaSuccess) id = 0;
#elif defined(KOKKOS_ENABLE_HIP)
  if (hipGetDevice(&id) != hipSuccess) id = 0;
#endif
  return id;
}

}  // namespace

DeviceMemory query_device_memory() {
#if defined(KOKKOS_ENABLE_CUDA)
  std::size_t free_bytes = 0, total_bytes = 0;
  if (cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess) return {free_bytes, total_bytes};
#elif defined(KOKKOS_ENABLE_HIP)
  std::size_t free_bytes = 0, total_bytes = 0;
  if (hipMemGetInfo(&free_bytes, &total_bytes) == hipSuccess) return {free_bytes, total_bytes};
#endif
  // Host backends (and a GPU runtime that does not answer): host memory.
  return host_memory();
}

namespace {
std::uint64_t planned_device_memory = 0;  // plan_for_device_memory; 0: ask the device
}  // namespace

void plan_for_device_memory(std::uint64_t bytes) { planned_device_memory = bytes; }

RankMemory device_memory_per_rank(MPI_Comm comm) {
  if (planned_device_memory > 0) {
    RankMemory m;
    m.per_rank = m.device_available = planned_device_memory;
    m.named = true;
    return m;
  }
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm node, same_device;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  MPI_Comm_split(node, device_id(), rank, &same_device);
  int sharing = 1;
  MPI_Comm_size(same_device, &sharing);
  MPI_Comm_free(&same_device);
  MPI_Comm_free(&node);

  const DeviceMemory mine = query_device_memory();
  RankMemory m;
  m.per_rank = mine.available / std::uint64_t(sharing);
  MPI_Allreduce(MPI_IN_PLACE, &m.per_rank, 1, MPI_UINT64_T, MPI_MIN, comm);
  // Report the device behind the smallest share.
  const bool smallest = mine.available / std::uint64_t(sharing) == m.per_rank;
  m.device_available = smallest ? mine.available : kUnknown;
  m.sharing_ranks = smallest ? sharing : 0;
  MPI_Allreduce(MPI_IN_PLACE, &m.device_available, 1, MPI_UINT64_T, MPI_MIN, comm);
  MPI_Allreduce(MPI_IN_PLACE, &m.sharing_ranks, 1, MPI_INT, MPI_MAX, comm);
  return m;
}

std::string RankMemory::describe() const {
  std::string s = format_bytes(double(device_available)) + (named ? " (--device-memory)" : " available");
  if (sharing_ranks > 1)
    s += ", " + format_bytes(double(per_rank)) + " per rank for the " + std::to_string(sharing_ranks) +
         " ranks sharing it";
  return s;
}

std::string memory_shortfall(const ByteCount& need, const RankMemory& memory) {
  if (need.within(memory.per_rank)) return "";
  return "needs " + format_bytes(need.approx()) + " of device memory per rank, the device has " + memory.describe();
}

}  // namespace kmini
