#include "results/results.hpp"

#include "core/kokkos_compat.hpp"
#include "io/atomic_file.hpp"
#include "version.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ostream>

namespace kmini {

Results::Results(const Environment& env, const Json& resolved_deck) : ranks_(env.size()) {
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

std::string format_si(double v, const std::string& unit) {
  if (!std::isfinite(v)) return "-";
  const std::string sep = unit.empty() ? "" : " ";
  if (v == 0) return "0" + sep + unit;
  // Round to 3 significant digits first, so 999.9 becomes 1.00e+03 and takes the next prefix.
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.2e", std::fabs(v));
  const int exponent = std::atoi(std::strchr(buf, 'e') + 1);
  const int group = exponent >= 0 ? exponent / 3 : -((2 - exponent) / 3);  // floor(exponent / 3)
  static const char* const prefixes[] = {"p", "n", "u", "m", "", "k", "M", "G", "T", "P", "E"};
  const int index = group + 4;
  if (index < 0 || index > 10) {
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return buf + sep + unit;
  }
  const double mantissa = std::strtod(buf, nullptr) / std::pow(10.0, 3 * group);
  std::snprintf(buf, sizeof buf, "%s%.*f", v < 0 ? "-" : "", 2 - (exponent - 3 * group), mantissa);
  const std::string suffix = prefixes[index] + unit;
  return buf + (suffix.empty() ? "" : " " + suffix);
}

void print_summary_table(std::ostream& os, const std::vector<SummaryRow>& rows, int ranks, bool zero_copy) {
  // Under MPI every rate is shown per rank and for all ranks together.
  const bool mpi = ranks > 1;
  const std::string all = "all " + std::to_string(ranks) + " ranks";
  char line[320];
  auto print = [&](const char* label, const char* size, const char* seconds, const char* rate, const char* total,
                   const char* roof, const char* verified) {
    if (mpi)
      std::snprintf(line, sizeof line, "%-28s %-20s %10s %15s %15s  %-16s %8s\n", label, size, seconds, rate, total,
                    roof, verified);
    else
      std::snprintf(line, sizeof line, "%-28s %-20s %10s %15s  %-16s %8s\n", label, size, seconds, rate, roof,
                    verified);
    os << line;
  };
  print("kernel", "size", "seconds", mpi ? "per rank" : "throughput", all.c_str(), "of roof", "verified");
  os << std::string(mpi ? 126 : 110, '-') << "\n";
  bool stream_roof = false, popcount_roof = false, e2e = false;
  for (const auto& r : rows) {
    std::string roof = "    -";  // under the percentages
    if (std::isfinite(r.roof_fraction)) {
      char pct[32];
      std::snprintf(pct, sizeof pct, "%5s%% ", format_number(100.0 * r.roof_fraction, 3).c_str());
      roof = pct + r.roof;
      stream_roof = stream_roof || r.roof == kRoofStream;
      popcount_roof = popcount_roof || r.roof == kRoofPopcount;
    }
    e2e = e2e || (r.label.size() >= 4 && r.label.compare(r.label.size() - 4, 4, ".e2e") == 0);
    const char* verified = !r.verified ? "skipped" : (*r.verified ? "yes" : "NO");
    print(r.label.c_str(), r.size.c_str(), format_number(r.seconds, 4).c_str(), format_si(r.throughput, r.unit).c_str(),
          format_si(r.aggregate, r.unit).c_str(), roof.c_str(), verified);
  }
  // Footnotes: what the columns mean, only for what the table shows.
  os << "seconds: the slowest rank's (best of repeat where a kernel repeats)"
     << (mpi ? "; rates per rank and of all " + std::to_string(ranks) + " ranks together" : std::string()) << "\n";
  if (stream_roof || popcount_roof) {
    os << "of roof:";
    if (stream_roof) os << " stream BW = the best stream bandwidth per rank measured in this run";
    if (stream_roof && popcount_roof) os << ";";
    if (popcount_roof) os << " popcount = gram's AND+popcount probe";
    os << "\n";
  }
  if (e2e) {
    os << "e2e: host->device inputs + kernel + device->host results, timed like the kernel row above it\n";
    if (zero_copy)
      os << "     (device memory is host memory here: the copies are no-ops, e2e = the kernel within noise)\n";
  }
}

void Results::print_summary(std::ostream& os) const {
  print_summary_table(os, rows_, ranks_, compat::device_is_host_accessible);
}

}  // namespace kmini
