#include "core/kokkos_compat.hpp"

#include <cstdlib>

#if defined(KOKKOS_ENABLE_CUDA) && !KMINI_KOKKOS_4
#include <cuda_runtime.h>
#endif

namespace kmini::compat {

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
