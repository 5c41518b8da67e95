#pragma once
// What built kmini and what it runs on, for results.json: a benchmark record
// must say which code, compiled how, ran where.
#include "core/environment.hpp"
#include "io/json.hpp"

#include <string>
#include <vector>

namespace kmini {

// kmini version, git revision ("unknown" outside a checkout), build type,
// compiler id and version, flags.
Json build_description();

// Kokkos: version, default execution and memory space, concurrency, and every
// backend this Kokkos enables.
Json kokkos_description();
std::vector<std::string> kokkos_backends();

// Collective. {"host": rank 0's host name and CPU, "device": what rank 0's
// kernels run on (the GPU's name, or the CPU on host backends), "hosts":
// the distinct host names of all ranks in rank order}.
Json machine_description(const Environment& env);

// The CPU's model name from /proc/cpuinfo (x86 "model name", else "Model",
// else "Hardware"), or "unknown".
std::string cpu_model(const std::string& cpuinfo_path = "/proc/cpuinfo");

}  // namespace kmini
