#include "stream/stream.hpp"

#include "core/checked_size.hpp"
#include "core/format.hpp"

#include <algorithm>
#include <ostream>

namespace kmini::stream {

std::uint64_t bytes_per_element(const Config& c) {
  const bool add = std::find(c.ops.begin(), c.ops.end(), "add") != c.ops.end();
  return add ? 3 * sizeof(double) : 2 * sizeof(float);
}

void StreamKernel::configure(const DeckNode& s, const Environment&) {
  const KernelDeclaration& d = declaration();
  config_.n = s.integer(d.key("n"));
  n_setting_ = s.located("n");
  config_.ops = s.choice_list(d.key("ops"));
  if (config_.ops.empty()) s.fail("ops", "at least one of add | exp");
  config_.repeat = s.integer(d.key("repeat"));
}

void StreamKernel::print_plan(std::ostream& os, const Environment& env) const {
  const double mib = static_cast<double>(config_.n) * static_cast<double>(bytes_per_element(config_)) / (1 << 20);
  const auto total = checked_mul(static_cast<std::uint64_t>(config_.n), static_cast<std::uint64_t>(env.size()));
  os << "stream: n = " << config_.n << " per rank ("
     << (total ? std::to_string(*total) : format_number(double(config_.n) * env.size())) << " total), ops =";
  for (const auto& o : config_.ops) os << " " << o;
  os << ", repeat = " << config_.repeat << ", device memory per rank <= " << format_number(mib) << " MiB\n";
}

std::vector<MemoryNeed> StreamKernel::memory_needs(const Environment&, bool) const {
  return {{ByteCount::of(static_cast<std::uint64_t>(config_.n), bytes_per_element(config_)), n_setting_}};
}

}  // namespace kmini::stream
