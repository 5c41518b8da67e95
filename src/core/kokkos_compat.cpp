#include "core/kokkos_compat.hpp"

#include <cstdio>
#include <cstdlib>
#include <new>

#if defined(KOKKOS_ENABLE_CUDA) && !KMINI_KOKKOS_4
#include <cuda_runtime.h>
#endif

namespace kmini::compat {

namespace {

// Kokkos' human_memory_size: "512 B", "1.5 K", "7.451e+09 G", "2 T"; < 0 if not one.
double parse_kokkos_size(const std::string& text) {
  double value = 0;
  char unit = 0;
  if (std::sscanf(text.c_str(), "%lf %c", &value, &unit) != 2 || value < 0) return -1;
  const std::string units = "BKMGT";
  const auto power = units.find(unit);
  if (power == std::string::npos) return -1;
  for (std::size_t i = 0; i < power; ++i) value *= 1024;
  return value;
}

}  // namespace

std::optional<AllocationFailure> allocation_failure(const std::exception& e) {
  const std::string what = e.what() ? e.what() : "";
  const bool bad_alloc = dynamic_cast<const std::bad_alloc*>(&e) != nullptr;
  if (!bad_alloc && what.find("failed to allocate") == std::string::npos &&
      what.find("Allocation of size") == std::string::npos)
    return std::nullopt;
  AllocationFailure f;
  for (const std::string open : {"label \"", "label=\""}) {
    const auto at = what.find(open);
    if (at == std::string::npos) continue;
    const auto end = what.find('"', at + open.size());
    f.label = what.substr(at + open.size(), end == std::string::npos ? std::string::npos : end - at - open.size());
    break;
  }
  for (const std::string before : {"Allocation of size ", "failed to allocate "}) {
    for (auto at = what.find(before); at != std::string::npos && f.bytes < 0; at = what.find(before, at + 1))
      f.bytes = parse_kokkos_size(what.substr(at + before.size(), 32));
  }
  // The first line, without 3.4's "... failed with the following error:" preamble, spaces collapsed.
  std::string line = what.substr(0, what.find('\n'));
  const std::string preamble = "with the following error:";
  if (const auto at = line.find(preamble); at != std::string::npos) line = line.substr(at + preamble.size());
  for (char c : line)
    if (c != ' ' || (!f.reason.empty() && f.reason.back() != ' ')) f.reason += c;
  while (!f.reason.empty() && f.reason.back() == ' ') f.reason.pop_back();
  if (f.reason.empty()) f.reason = bad_alloc ? "out of memory" : "unknown reason";
  return f;
}

std::vector<std::string> device_mapping_flags(int node_local_rank) {
#if defined(KOKKOS_ENABLE_CUDA) || defined(KOKKOS_ENABLE_HIP) || defined(KOKKOS_ENABLE_SYCL)
  // The user (flags or environment) has the last word.
  if (std::getenv("KOKKOS_DEVICE_ID") || std::getenv("KOKKOS_MAP_DEVICE_ID_BY")) return {};
#if KMINI_KOKKOS_4
  // Kokkos 4 maps by node-local rank itself, reading the launcher's variables;
  // provide the rank we computed with MPI when the launcher set none of them.
  const char* launcher_vars[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MV2_COMM_WORLD_LOCAL_RANK",
                                 "MPI_LOCALRANKID", "SLURM_LOCALID", "PMI_LOCAL_RANK"};
  bool launcher_known = false;
  for (const char* v : launcher_vars) launcher_known = launcher_known || std::getenv(v);
  if (!launcher_known) setenv("MPI_LOCALRANKID", std::to_string(node_local_rank).c_str(), 0);
  return {"--kokkos-map-device-id-by=mpi_rank"};
#else
  int count = 0;
#if defined(KOKKOS_ENABLE_CUDA)
  if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
#endif
  if (count <= 0) return {};
  return {"--kokkos-device=" + std::to_string(node_local_rank % count)};
#endif
#else
  (void)node_local_rank;
  return {};
#endif
}

}  // namespace kmini::compat
