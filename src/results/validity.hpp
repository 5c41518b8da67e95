#pragma once
// The valid-result rules applied to one run (docs/benchmarks.md): per kernel
// `valid` and `invalid_reasons` in results.json, and the machine's load
// during the run (top-level `load`), so a figure taken on a busy machine or
// above its roof is never reported as a plain measurement.
#include "io/json.hpp"
#include "kernel/kernel.hpp"

#include <mpi.h>

#include <iosfwd>
#include <string>
#include <vector>

namespace kmini {

// Readings of /proc on this host at one moment (Linux; `ok` false elsewhere).
struct HostCpuSample {
  bool ok = false;
  double load_average = 0;   // 1-minute load average (/proc/loadavg)
  double busy_seconds = 0;   // CPU time of every process on the host (/proc/stat: user, nice, system, irq, softirq)
  double steal_seconds = 0;  // time the hypervisor gave this VM's CPUs to others (/proc/stat: steal)
  double own_seconds = 0;    // this process's CPU time, every thread (getrusage)
  double wall = 0;           // seconds since an arbitrary start (steady clock)
};
HostCpuSample sample_host_cpu();

// Other processes are taking CPU time when they used more than this many
// cores on average during the run (or steal time did).
inline constexpr double kLoadedCores = 0.1;

// What the ranks of one host did not take themselves between two samples:
// the `load` object of results.json (`loaded` by kLoadedCores). Pure, for tests.
Json describe_load(const HostCpuSample& before, const HostCpuSample& after, double own_cpu_seconds_on_host, int cpus);

// Collective: samples every host at construction and at finish(); the load
// object of the busiest host (the same on every rank).
class LoadMonitor {
 public:
  explicit LoadMonitor(MPI_Comm comm);
  ~LoadMonitor();
  LoadMonitor(const LoadMonitor&) = delete;
  LoadMonitor& operator=(const LoadMonitor&) = delete;
  Json finish();

 private:
  MPI_Comm comm_, node_;
  HostCpuSample before_;
};

// Why one kernel's figures are not valid (empty: valid): not verified, a row
// above 100 % of its roof, the roof test hook set. `rows`: the kernel's rows.
std::vector<std::string> invalid_reasons(const Json& kernel_entry, const std::vector<SummaryRow>& rows,
                                         bool roof_hook_set);

// The summary's verdict lines: per kernel valid or INVALID (with the
// reasons), and the machine's load.
void print_validity(std::ostream& os, const Json& results);

}  // namespace kmini
