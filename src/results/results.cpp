#include "results/results.hpp"

#include "core/kokkos_compat.hpp"
#include "io/atomic_file.hpp"
#include "version.hpp"

#include <cmath>
#include <cstdio>
#include <ostream>

namespace kmini {

Results::Results(const Environment& env, const Json& resolved_deck) {
  json_["kmini_version"] = Json(kVersion);
  Json& k = json_["kokkos"];
  k["version"] = compat::version_string();
  k["execution_space"] = compat::execution_space_name();
  k["memory_space"] = compat::memory_space_name();
  k["concurrency"] = Json(static_cast<long long>(ExecSpace().concurrency()));
  json_["mpi"]["ranks"] = Json(env.size());
  json_["deck"] = resolved_deck;
  json_["kernels"] = Json::object();
}

void Results::add(const std::string& kernel, const KernelReport& report) {
  Json entry = Json::object();
  entry["verified"] = report.verified ? Json(*report.verified) : Json();
  entry["seconds"] = report.seconds;
  for (const auto& m : report.metrics.members()) entry[m.first] = m.second;
  json_["kernels"][kernel] = entry;
  rows_.insert(rows_.end(), report.rows.begin(), report.rows.end());
}

void Results::write(const std::string& dir) const {
  write_text_file_atomically(dir + "/results.json", json_.dump(2) + "\n");
}

std::string format_number(double v, int precision) {
  if (!std::isfinite(v)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*g", precision, v);
  return buf;
}

void Results::print_summary(std::ostream& os) const {
  char line[256];
  std::snprintf(line, sizeof line, "%-28s %-22s %10s %16s %8s %9s\n", "kernel", "size", "seconds", "throughput",
                "of roof", "verified");
  os << line << std::string(96, '-') << "\n";
  for (const auto& r : rows_) {
    const std::string tp = std::isfinite(r.throughput) ? format_number(r.throughput) + " " + r.unit : "-";
    const std::string roof =
        std::isfinite(r.roof_fraction) ? format_number(100.0 * r.roof_fraction, 3) + "%" : "-";
    const char* ver = !r.verified ? "skipped" : (*r.verified ? "yes" : "NO");
    std::snprintf(line, sizeof line, "%-28s %-22s %10s %16s %8s %9s\n", r.label.c_str(), r.size.c_str(),
                  format_number(r.seconds, 4).c_str(), tp.c_str(), roof.c_str(), ver);
    os << line;
  }
}

}  // namespace kmini
