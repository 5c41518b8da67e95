#pragma once
// The stream benchmark: c = a + b (float64, int32), a = a + b in place
// (float64) and c = exp(a) (float32).
// Measures device-only bandwidth (best of `repeat`) and the transfer-inclusive
// time, verifies against the host reference, and sets the run's bandwidth roof.
#include "kernel/kernel.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace kmini::stream {

struct Config {
  std::int64_t n = 1 << 22;  // elements per rank
  std::vector<std::string> ops{"add", "exp"};
  std::int64_t repeat = 10;
};

// Result of one operation at one element type.
struct OpResult {
  std::string name;         // "add_f64"
  double bytes = 0;         // moved per kernel call, per rank
  double best_seconds = 0;  // the slowest rank's, best repeat
  double rank_seconds = 0;  // this rank's in that repeat
  double transfer_inclusive_seconds = 0;
  bool verified_ok = true;
  double max_error = 0;
};

// Its deck keys, figure of merit and decks (stream_declaration.cpp).
const KernelDeclaration& declaration();

class StreamKernel final : public Kernel {
 public:
  const KernelDeclaration& declaration() const override { return stream::declaration(); }
  void configure(const DeckNode& section, const Environment& env) override;
  void print_plan(std::ostream& os, const Environment& env) const override;
  std::vector<MemoryNeed> memory_needs(const Environment& env, bool verify) const override;
  KernelReport run(RunContext& ctx) override;

 private:
  Config config_;
  std::string n_setting_;  // where stream.n comes from, for memory errors
};

// Device bytes per element of the largest op: add holds a, b, c of float64
// (24), exp a, c of float32 (8). Host mirrors alias them on host backends.
std::uint64_t bytes_per_element(const Config& c);

// Device-only bandwidth in bytes/s per rank: the better of add and
// add_in_place (float64), each the best of `repeat`: the roof for kernels run
// without the stream kernel.
// `prefix` names its kernels and regions (kmini::<kernel>::roof_probe: the
// kernel whose roof it measures, so the probe runs inside that kernel's region).
double measure_add_bandwidth(RunContext& ctx, std::int64_t n, std::int64_t repeat, const std::string& prefix);

}  // namespace kmini::stream
