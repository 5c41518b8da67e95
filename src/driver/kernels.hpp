#pragma once
// The registry: every kernel kmini can run, and the bandwidth probe that sets
// the roof when the stream kernel does not run.
#include "kernel/kernel.hpp"

#include <memory>
#include <vector>

namespace kmini {

// All kernels kmini knows, in the order they are documented.
std::vector<std::unique_ptr<Kernel>> make_all_kernels();

// Device-only bandwidth of stream's add (float64), bytes/s per rank: what
// RunContext::roof_bandwidth() measures on demand.
std::function<double(RunContext&)> bandwidth_probe();

}  // namespace kmini
