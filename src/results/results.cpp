#include "results/results.hpp"

#include "core/errors.hpp"
#include "core/kokkos_compat.hpp"
#include "io/atomic_file.hpp"
#include "results/build_info.hpp"
#include "results/validity.hpp"
#include "version.hpp"

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ostream>
#include <sstream>

namespace kmini {

Results::Results(const Environment& env, const Json& resolved_deck) : comm_(env.comm()), ranks_(env.size()) {
  const Json machine = machine_description(env);  // collective
  json_["schema_version"] = kResultsSchemaVersion;
  json_["kmini_version"] = Json(kVersion);
  json_["build"] = build_description();
  json_["kokkos"] = kokkos_description();
  if (env.is_root()) {
    json_["host"] = *machine.find("host");
    json_["device"] = *machine.find("device");
  }
  json_["mpi"]["ranks"] = Json(env.size());
  if (env.is_root()) json_["mpi"]["hosts"] = *machine.find("hosts");
  json_["deck"] = resolved_deck;
  json_["kernels"] = Json::object();
}

Json stats_over_ranks(const std::vector<double>& per_rank) {
  Json s = Json::object();
  if (per_rank.empty()) return s;
  std::vector<double> sorted = per_rank;
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();
  s["min"] = sorted.front();
  s["median"] = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  s["max"] = sorted.back();
  const auto slowest = std::max_element(per_rank.begin(), per_rank.end());
  s["slowest_rank"] = Json(static_cast<long long>(slowest - per_rank.begin()));
  s["ranks"] = Json(static_cast<long long>(n));
  return s;
}

namespace {

Json fom_json(const FigureOfMerit& fom, double value, double seconds) {
  Json j = Json::object();
  j["name"] = fom.name;
  j["value"] = std::isfinite(value) ? Json(value) : Json();
  j["seconds"] = std::isfinite(seconds) ? Json(seconds) : Json();
  j["unit"] = fom.unit;
  j["higher_is_better"] = fom.higher_is_better;
  return j;
}

Json roof_json(const RoofReport& roof) {
  Json j = Json::object();
  j["name"] = roof.name;
  j["value"] = std::isfinite(roof.value) ? Json(roof.value) : Json();
  j["unit"] = roof.unit;
  j["fraction"] = std::isfinite(roof.fraction) ? Json(roof.fraction) : Json();
  return j;
}

// One rank's phases as text ("name\tseconds\n" each, seconds to 17 digits),
// so ranks with different phase lists gather like the rest.
std::string phases_text(const Phases& phases) {
  std::string text;
  char seconds[32];
  for (const auto& [name, s] : phases) {
    std::snprintf(seconds, sizeof seconds, "%.17g", s);
    text += name + "\t" + seconds + "\n";
  }
  return text;
}

Phases parse_phases(const std::string& text) {
  Phases phases;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const std::size_t tab = line.find('\t');
    if (tab != std::string::npos)
      phases.emplace_back(line.substr(0, tab), std::strtod(line.c_str() + tab + 1, nullptr));
  }
  return phases;
}

double sum_of(const Phases& phases) {
  double sum = 0;
  for (const auto& p : phases) sum += p.second;
  return sum;
}

// Every rank's phases to rank 0 (collective); there, the slowest rank's (the
// largest sum): a timeline one rank lived, so its sum is a time to solution.
std::pair<Phases, int> slowest_phases(MPI_Comm comm, const Phases& mine) {
  const std::string text = phases_text(mine);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  int length = static_cast<int>(text.size());
  std::vector<int> lengths(static_cast<std::size_t>(ranks)), displs(lengths.size(), 0);
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, comm);
  for (int r = 1; r < ranks; ++r) displs[r] = displs[r - 1] + lengths[r - 1];
  std::string all(rank == 0 ? static_cast<std::size_t>(displs.back() + lengths.back()) : 0, '\0');
  MPI_Gatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(), displs.data(), MPI_CHAR, 0, comm);
  std::pair<Phases, int> slowest{mine, rank};
  if (rank != 0) return slowest;
  for (int r = 0; r < ranks; ++r) {
    Phases p = parse_phases(all.substr(static_cast<std::size_t>(displs[r]), static_cast<std::size_t>(lengths[r])));
    if (r == 0 || sum_of(p) > sum_of(slowest.first)) slowest = {std::move(p), r};
  }
  return slowest;
}

}  // namespace

void Results::add(const KernelDeclaration& decl, const KernelReport& report) {
  const std::string& kernel = decl.name;
  // Every rank's own timings of this kernel, gathered to rank 0: its total,
  // then each summary row's share (SummaryRow::rank_seconds). Every rank runs
  // the same kernels and reports the same rows.
  std::vector<double> mine{report.seconds};
  for (const auto& r : report.rows) mine.push_back(r.rank_seconds);
  const int count = static_cast<int>(mine.size());
  int least = count, most = count;
  MPI_Allreduce(MPI_IN_PLACE, &least, 1, MPI_INT, MPI_MIN, comm_);
  MPI_Allreduce(MPI_IN_PLACE, &most, 1, MPI_INT, MPI_MAX, comm_);
  if (least != most)
    throw RuntimeFailure(kernel + ": ranks reported " + std::to_string(least) + " to " + std::to_string(most) +
                         " timings (every rank must report the same rows)");
  std::vector<double> all(static_cast<std::size_t>(count) * ranks_);
  MPI_Gather(mine.data(), count, MPI_DOUBLE, all.data(), count, MPI_DOUBLE, 0, comm_);
  rows_.insert(rows_.end(), report.rows.begin(), report.rows.end());

  auto over_ranks = [&](int index) {
    std::vector<double> v(static_cast<std::size_t>(ranks_));
    for (int r = 0; r < ranks_; ++r) v[static_cast<std::size_t>(r)] = all[static_cast<std::size_t>(r) * count + index];
    return v;
  };
  const std::vector<double> total = over_ranks(0);
  Json entry = Json::object();
  entry["verified"] = report.verified ? Json(*report.verified) : Json();
  entry["seconds"] = *std::max_element(total.begin(), total.end());  // the slowest rank's
  entry["fom"] = fom_json(decl.fom, report.fom, report.fom_seconds);
  entry["roof"] = roof_json(report.roof);
  foms_.push_back({kernel, decl.fom, report.fom, report.roof});
  for (const auto& m : report.metrics.members()) entry[m.first] = m.second;
  Json& spread = entry["timings_over_ranks"];
  spread = Json::object();
  spread["seconds"] = stats_over_ranks(total);
  for (std::size_t i = 0; i < report.rows.size(); ++i) {
    const std::vector<double> v = over_ranks(static_cast<int>(i + 1));
    if (std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); }))
      spread[report.rows[i].label] = stats_over_ranks(v);
  }
  const auto [phases, phases_rank] = slowest_phases(comm_, report.phases);
  Json& timeline = entry["phases"];
  timeline = Json::object();
  for (const auto& [name, seconds] : phases) timeline[name] = seconds;
  entry["time_to_solution_seconds"] = sum_of(phases);
  entry["phases_rank"] = Json(phases_rank);
  json_["kernels"][kernel] = entry;
}

void Results::write(const std::string& dir) const {
  write_text_file_atomically(dir + "/results.json", json_.dump(2) + "\n");
}

void print_summary_table(std::ostream& os, const std::vector<SummaryRow>& rows, int ranks, bool zero_copy,
                         const std::vector<FomLine>& foms) {
  // Under MPI every rate is shown per rank and for all ranks together.
  const bool mpi = ranks > 1;
  const std::string all = "all " + std::to_string(ranks) + " ranks";
  char line[360];
  auto print = [&](const char* kernel, const char* variant, const char* size, const char* seconds, const char* rate,
                   const char* total, const char* roof, const char* verified) {
    if (mpi)
      std::snprintf(line, sizeof line, "%-9s %-24s %-20s %10s %15s %15s  %-16s %8s\n", kernel, variant, size, seconds,
                    rate, total, roof, verified);
    else
      std::snprintf(line, sizeof line, "%-9s %-24s %-20s %10s %15s  %-16s %8s\n", kernel, variant, size, seconds, rate,
                    roof, verified);
    os << line;
  };
  print("kernel", "variant", "size", "seconds", mpi ? "per rank" : "throughput", all.c_str(), "of roof", "verified");
  os << std::string(mpi ? 132 : 116, '-') << "\n";
  bool stream_roof = false, popcount_roof = false, tc_roof = false, e2e = false;
  for (const auto& r : rows) {
    std::string roof = "    -";  // under the percentages
    if (std::isfinite(r.roof_fraction)) {
      char pct[32];
      std::snprintf(pct, sizeof pct, "%5s%% ", format_number(100.0 * r.roof_fraction, 3).c_str());
      roof = pct + r.roof;
      stream_roof = stream_roof || r.roof == kRoofStream;
      popcount_roof = popcount_roof || r.roof == kRoofPopcount;
      tc_roof = tc_roof || r.roof == kRoofTensorCore;
    }
    e2e = e2e || (r.label.size() >= 4 && r.label.compare(r.label.size() - 4, 4, ".e2e") == 0);
    const char* verified = !r.verified ? "skipped" : (*r.verified ? "yes" : "NO");
    const std::size_t dot = r.label.find('.');
    const std::string kernel = r.label.substr(0, dot);
    const std::string variant = dot == std::string::npos ? "" : r.label.substr(dot + 1);
    print(kernel.c_str(), variant.c_str(), r.size.c_str(), format_number(r.seconds, 4).c_str(),
          format_si(r.throughput, r.unit).c_str(), format_si(r.aggregate, r.unit).c_str(), roof.c_str(), verified);
  }
  // Footnotes: what the columns mean, only for what the table shows.
  os << "seconds: the slowest rank's (best of repeat where a kernel repeats)"
     << (mpi ? "; rates per rank and of all " + std::to_string(ranks) + " ranks together" : std::string()) << "\n";
  if (stream_roof || popcount_roof || tc_roof) {
    std::vector<std::string> roofs;
    if (stream_roof) roofs.push_back(" stream BW = the best stream bandwidth per rank measured in this run");
    if (popcount_roof) roofs.push_back(" popcount = gram's AND+popcount probe");
    if (tc_roof) roofs.push_back(" tc probe = gram's tensor-core (1-bit mma) probe");
    // gram's figure of merit counts useful bit-ops (rows x targets x cols); with one input the
    // symmetric half is executed once, so that figure may exceed the probe's peak.
    if (popcount_roof || tc_roof)
      roofs.push_back(" gram's fraction divides the executed bit-ops/s by the probe's, not the useful ones");
    os << "of roof:";
    for (std::size_t i = 0; i < roofs.size(); ++i) os << (i ? ";" : "") << roofs[i];
    os << "\n";
  }
  if (e2e) {
    os << "e2e: host->device inputs + kernel + device->host results, timed like the kernel row above it\n";
    if (zero_copy)
      os << "     (device memory is host memory here: the copies are no-ops, e2e = the kernel within noise)\n";
  }
  // The last line: each kernel's figure of merit (results.json: kernels.<name>.fom).
  std::string fom_line;
  for (const auto& f : foms) {
    if (!std::isfinite(f.value)) continue;
    fom_line += (fom_line.empty() ? "" : "; ") + f.kernel + " " + f.fom.name + " = " + format_si(f.value, f.fom.unit);
    if (std::isfinite(f.roof.fraction))
      fom_line += " (" + format_number(100.0 * f.roof.fraction, 3) + "% of " + f.roof.name + ")";
  }
  if (!fom_line.empty()) os << "figure of merit, all ranks: " << fom_line << "\n";
}

void Results::print_summary(std::ostream& os) const {
  std::ostringstream table;
  print_summary_table(table, rows_, ranks_, compat::device_is_host_accessible, foms_);
  // The verdicts (results/validity.cpp) go just above the last line, the figures of merit.
  std::string text = table.str();
  const std::size_t last = text.size() > 1 ? text.rfind('\n', text.size() - 2) : std::string::npos;
  const std::size_t cut = last == std::string::npos ? 0 : last + 1;
  os << text.substr(0, cut);
  print_validity(os, json_);
  os << text.substr(cut);
}

}  // namespace kmini
