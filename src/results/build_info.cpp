#include "results/build_info.hpp"

#include "core/kokkos_compat.hpp"
#include "git_revision.hpp"
#include "kernel/kernel.hpp"
#include "version.hpp"

#include <mpi.h>
#include <unistd.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <fstream>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime_api.h>
#elif defined(KOKKOS_ENABLE_HIP)
#include <hip/hip_runtime_api.h>
#endif

namespace kmini {

namespace {

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t");
  const auto last = s.find_last_not_of(" \t\r");
  return first == std::string::npos ? "" : s.substr(first, last - first + 1);
}

// The device the default execution space runs on, as its runtime names it.
Json device_description() {
  Json d = Json::object();
#if defined(KOKKOS_ENABLE_CUDA)
  // Kokkos selected the device (one per node-local rank) before this runs.
  int id = -1;
  cudaDeviceProp prop;
  if (cudaGetDevice(&id) == cudaSuccess && cudaGetDeviceProperties(&prop, id) == cudaSuccess) {
    d["name"] = std::string(prop.name);
    d["id"] = id;
    d["compute_capability"] = std::to_string(prop.major) + "." + std::to_string(prop.minor);
  } else {
    d["name"] = "unknown";
  }
  d["kind"] = "CUDA GPU";
#elif defined(KOKKOS_ENABLE_HIP)
  int id = -1;
  hipDeviceProp_t prop;
  if (hipGetDevice(&id) == hipSuccess && hipGetDeviceProperties(&prop, id) == hipSuccess) {
    d["name"] = std::string(prop.name);
    d["id"] = id;
    d["arch"] = std::string(prop.gcnArchName);
  } else {
    d["name"] = "unknown";
  }
  d["kind"] = "HIP GPU";
#else
  if (compat::device_is_host_accessible) {
    d["name"] = cpu_model();
    d["kind"] = "host CPU";
  } else {
    d["name"] = "unknown";  // e.g. SYCL: no name query here
    d["kind"] = compat::execution_space_name();
  }
#endif
  return d;
}

}  // namespace

std::string cpu_model(const std::string& cpuinfo_path) {
  std::ifstream in(cpuinfo_path);
  std::string model, hardware, line;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = trim(line.substr(0, colon)), value = trim(line.substr(colon + 1));
    if (value.empty()) continue;
    if (key == "model name") return value;  // x86, and some Arm kernels
    if (key == "Model" && model.empty()) model = value;
    if (key == "Hardware" && hardware.empty()) hardware = value;
  }
  return !model.empty() ? model : !hardware.empty() ? hardware : "unknown";
}

std::vector<std::string> kokkos_backends() {
  std::vector<std::string> b;
#if defined(KOKKOS_ENABLE_CUDA)
  b.push_back("Cuda");
#endif
#if defined(KOKKOS_ENABLE_HIP)
  b.push_back("HIP");
#endif
#if defined(KOKKOS_ENABLE_SYCL)
  b.push_back("SYCL");
#endif
#if defined(KOKKOS_ENABLE_OPENMPTARGET)
  b.push_back("OpenMPTarget");
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
  b.push_back("OpenMP");
#endif
#if defined(KOKKOS_ENABLE_THREADS)
  b.push_back("Threads");
#endif
#if defined(KOKKOS_ENABLE_HPX)
  b.push_back("HPX");
#endif
#if defined(KOKKOS_ENABLE_SERIAL)
  b.push_back("Serial");
#endif
  return b;
}

Json build_description() {
  Json b = Json::object();
  b["git_revision"] = kGitRevision;
  b["build_type"] = kBuildType;
  b["compiler"]["id"] = kCompilerId;
  b["compiler"]["version"] = kCompilerVersion;
  b["cxx_flags"] = kCxxFlags;
  b["options"] = kBuildOptions;
  return b;
}

Json kokkos_description() {
  Json k = Json::object();
  k["version"] = compat::version_string();
  k["execution_space"] = compat::execution_space_name();
  k["memory_space"] = compat::memory_space_name();
  k["concurrency"] = Json(static_cast<long long>(ExecSpace().concurrency()));
  k["backends"] = Json::array_of(kokkos_backends());
  return k;
}

Json machine_description(const Environment& env) {
  // Every rank's host name, fixed-width, to rank 0.
  constexpr int kWidth = 256;
  std::string mine = host_name();
  mine.resize(kWidth - 1, '\0');
  std::vector<char> all(env.is_root() ? static_cast<std::size_t>(kWidth) * env.size() : 0);
  MPI_Gather(mine.c_str(), kWidth, MPI_CHAR, all.data(), kWidth, MPI_CHAR, 0, env.comm());
  Json m = Json::object();
  if (!env.is_root()) return m;
  std::vector<std::string> hosts;
  for (int r = 0; r < env.size(); ++r) {
    const std::string h(&all[static_cast<std::size_t>(r) * kWidth]);  // NUL-terminated by resize
    if (std::find(hosts.begin(), hosts.end(), h) == hosts.end()) hosts.push_back(h);
  }
  m["host"]["name"] = hosts.front();
  m["host"]["cpu"] = cpu_model();
  m["device"] = device_description();
  m["hosts"] = Json::array_of(hosts);
  return m;
}

}  // namespace kmini
