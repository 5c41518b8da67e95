#pragma once
// The registry: every kernel kmini can run, and the bandwidth probe that sets
// the roof when the stream kernel does not run.
#include "kernel/kernel.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kmini {

// All kernels kmini knows, in the order they are documented.
std::vector<std::unique_ptr<Kernel>> make_all_kernels();

// The deck's run section, read and checked.
struct RunSettings {
  std::vector<std::string> order;  // run.kernels
  bool verify = true;
  std::int64_t seed = 12345;
};
// Reads the run section and configures every kernel from its own section (run
// or not): all a run and a dry run validate before anything runs. The deck's
// rules() then hold every key read (tests/fault takes the keys' rules from it).
RunSettings configure_all(Deck& deck, std::vector<std::unique_ptr<Kernel>>& kernels, const Environment& env);

// The names of every kernel, in documentation order (from their declarations).
std::vector<std::string> kernel_names(const std::vector<std::unique_ptr<Kernel>>& kernels);

// `kmini describe [KERNEL] [--json | --markdown]`: the declarations of every
// kernel (or of `kernel`, or of the run section), in `format` text, json or
// markdown. A kernel no declaration names is a UsageError.
std::string describe(const std::string& kernel, const std::string& format);

// Device-only bandwidth of stream's adds (float64), bytes/s per rank: what
// RunContext::probe_roof_bandwidth() measures while `kernel` runs (its
// kernels and regions named kmini::<kernel>::roof_probe::...).
std::function<double(RunContext&)> bandwidth_probe(const std::string& kernel);

}  // namespace kmini
