#include "results/validity.hpp"

#include "core/format.hpp"
#include "kernel/roof.hpp"
#include "results/results.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <ostream>

namespace kmini {

HostCpuSample sample_host_cpu() {
  HostCpuSample s;
  s.wall = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  rusage u{};
  if (getrusage(RUSAGE_SELF, &u) == 0)
    s.own_seconds = double(u.ru_utime.tv_sec) + 1e-6 * double(u.ru_utime.tv_usec) + double(u.ru_stime.tv_sec) +
                    1e-6 * double(u.ru_stime.tv_usec);
  std::ifstream loadavg("/proc/loadavg");
  std::ifstream stat("/proc/stat");
  std::string cpu;
  double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  if (!(loadavg >> s.load_average) || !(stat >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq) ||
      cpu != "cpu")
    return s;
  if (!(stat >> steal)) steal = 0;
  const long tick = sysconf(_SC_CLK_TCK);
  const double hz = tick > 0 ? double(tick) : 100.0;
  s.busy_seconds = (user + nice + system + irq + softirq) / hz;
  s.steal_seconds = steal / hz;
  s.ok = true;
  return s;
}

Json describe_load(const HostCpuSample& before, const HostCpuSample& after, double own_cpu_seconds_on_host, int cpus) {
  Json l = Json::object();
  l["measured"] = before.ok && after.ok;
  if (!before.ok || !after.ok) {
    l["loaded"] = Json();
    l["note"] = "no /proc/stat here: the load was not recorded";
    return l;
  }
  const double wall = std::max(after.wall - before.wall, 1e-9);
  const double others = std::max(0.0, (after.busy_seconds - before.busy_seconds) - own_cpu_seconds_on_host);
  const double steal = std::max(0.0, after.steal_seconds - before.steal_seconds);
  l["load_average_before"] = before.load_average;
  l["load_average_after"] = after.load_average;
  l["cpus"] = Json(cpus);
  l["wall_seconds"] = wall;
  l["other_processes_cpu_seconds"] = others;
  l["other_processes_cores"] = others / wall;
  l["steal_seconds"] = steal;
  l["loaded"] = others / wall > kLoadedCores || steal / wall > kLoadedCores;
  l["rule"] = "loaded: other processes (or the hypervisor's steal time) took more than " + format_number(kLoadedCores) +
              " core on average during the run (/proc/stat less kmini's own CPU time)";
  return l;
}

LoadMonitor::LoadMonitor(MPI_Comm comm) : comm_(comm) {
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node_);
  MPI_Barrier(comm_);
  before_ = sample_host_cpu();
}

LoadMonitor::~LoadMonitor() { MPI_Comm_free(&node_); }

Json LoadMonitor::finish() {
  MPI_Barrier(comm_);
  const HostCpuSample after = sample_host_cpu();
  // Every rank of this host adds its own CPU time; the host's lowest rank
  // judges the host, and the busiest host is the run's.
  double own = after.own_seconds - before_.own_seconds;
  MPI_Allreduce(MPI_IN_PLACE, &own, 1, MPI_DOUBLE, MPI_SUM, node_);
  int node_rank = 0;
  MPI_Comm_rank(node_, &node_rank);
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  const int cpus = online > 0 ? int(online) : 1;
  const Json mine = describe_load(before_, after, own, cpus);
  const Json* cores = mine.find("other_processes_cores");
  struct {
    double value;
    int rank;
  } in{node_rank == 0 && cores ? cores->as_real() : -1.0, 0}, out{};
  MPI_Comm_rank(comm_, &in.rank);
  MPI_Allreduce(&in, &out, 1, MPI_DOUBLE_INT, MPI_MAXLOC, comm_);
  // The busiest host's readings, on every rank.
  double v[] = {before_.ok ? 1.0 : 0.0,
                before_.load_average,
                before_.busy_seconds,
                before_.steal_seconds,
                before_.wall,
                after.ok ? 1.0 : 0.0,
                after.load_average,
                after.busy_seconds,
                after.steal_seconds,
                after.wall,
                own,
                double(cpus)};
  MPI_Bcast(v, 12, MPI_DOUBLE, out.rank, comm_);
  const HostCpuSample b{v[0] != 0, v[1], v[2], v[3], 0, v[4]}, a{v[5] != 0, v[6], v[7], v[8], 0, v[9]};
  Json l = describe_load(b, a, v[10], int(v[11]));
  int hosts = node_rank == 0 ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &hosts, 1, MPI_INT, MPI_SUM, comm_);
  l["hosts"] = Json(hosts);
  return l;
}

std::vector<std::string> invalid_reasons(const Json& kernel_entry, const std::vector<SummaryRow>& rows,
                                         bool roof_hook_set) {
  std::vector<std::string> why;
  const Json* verified = kernel_entry.find("verified");
  if (!verified || verified->is_null()) why.push_back("not verified (run.verify: false)");
  else if (!verified->as_bool()) why.push_back("verification failed");
  // The kernel's figure of merit against its roof (results.json `roof`), then every summary row's.
  const Json* roof = kernel_entry.find("roof");
  const Json* fraction = roof ? roof->find("fraction") : nullptr;
  if (fraction && !fraction->is_null() && fraction->as_real() > 1.0) {
    const Json* name = roof->find("name");
    why.push_back("figure of merit at " + format_number(100.0 * fraction->as_real(), 3) + " % of its roof (" +
                  (name && !name->is_null() ? name->as_string() : std::string("roof")) +
                  "): above 100 %, so that roof was measured low");
  }
  for (const SummaryRow& r : rows)
    if (std::isfinite(r.roof_fraction) && r.roof_fraction > 1.0)
      why.push_back(r.label + " at " + format_number(100.0 * r.roof_fraction, 3) + " % of its roof (" + r.roof +
                    "): above 100 %, so that roof was measured low");
  if (roof_hook_set) why.push_back(std::string(kRoofScaleVariable) + " is set: the roofs were scaled by a test hook");
  return why;
}

void Results::judge(const Json& load) {
  const bool hook = std::getenv(kRoofScaleVariable) && roof_test_scale() != 1.0;
  Json& kernels = json_["kernels"];
  std::vector<std::pair<std::string, std::vector<std::string>>> verdicts;
  for (const auto& k : kernels.members()) {
    std::vector<SummaryRow> mine;
    const std::string prefix = k.first + ".";
    for (const SummaryRow& r : rows_)
      if (r.label.compare(0, prefix.size(), prefix) == 0) mine.push_back(r);
    verdicts.emplace_back(k.first, invalid_reasons(k.second, mine, hook));
  }
  for (const auto& v : verdicts) {
    Json& entry = kernels[v.first];
    entry["valid"] = v.second.empty();
    entry["invalid_reasons"] = Json::array_of(v.second);
  }
  json_["load"] = load;
}

void print_validity(std::ostream& os, const Json& results) {
  const Json* kernels = results.find("kernels");
  if (kernels) {
    os << "validity:";
    bool first = true;
    for (const auto& k : kernels->members()) {
      const Json* valid = k.second.find("valid");
      if (!valid) continue;
      os << (first ? " " : "; ") << k.first << (valid->as_bool() ? " valid" : " INVALID");
      first = false;
      if (!valid->as_bool())
        if (const Json* why = k.second.find("invalid_reasons")) {
          std::string all;
          for (const Json& w : why->items()) all += (all.empty() ? "" : ", ") + w.as_string();
          os << " (" << all << ")";
        }
    }
    os << "\n";
  }
  const Json* load = results.find("load");
  if (!load) return;
  const Json* measured = load->find("measured");
  if (!measured || !measured->as_bool()) {
    os << "machine load: not recorded (no /proc/stat)\n";
    return;
  }
  auto real = [&](const char* key) {
    const Json* v = load->find(key);
    return v ? v->as_real() : NAN;
  };
  const Json* loaded = load->find("loaded");
  os << "machine load: load average " << format_number(real("load_average_before"), 3) << " before, "
     << format_number(real("load_average_after"), 3) << " after; other processes took "
     << format_number(real("other_processes_cores"), 2) << " core(s) on average";
  if (real("steal_seconds") > 0) os << ", steal " << format_number(real("steal_seconds"), 2) << " s";
  os << (loaded && loaded->as_bool() ? " -- LOADED: figures may be low, compare them with care\n" : "\n");
}

}  // namespace kmini
