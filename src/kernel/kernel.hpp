#pragma once
// What every kmini kernel provides to the driver, and what the driver gives
// each kernel while it runs. Kernels include this, never driver/: the arrows
// point core <- io <- deck <- kernel (this layer) <- kernels <- results <- front ends
// (driver/), one CMake library each (src/CMakeLists.txt).
#include "core/checked_size.hpp"
#include "core/environment.hpp"
#include "deck/deck.hpp"
#include "io/json.hpp"
#include "io/output_files.hpp"
#include "kernel/declaration.hpp"
#include "kernel/phases.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kmini {

using ExecSpace = Kokkos::DefaultExecutionSpace;
using MemSpace = ExecSpace::memory_space;

// One line of the summary table. Rates are in base units ("B/s", "bitop/s");
// the table adds the SI prefix.
struct SummaryRow {
  std::string label;           // "stream.add_f64"
  std::string size;            // "n=4194304"
  double seconds = 0;          // the slowest rank's
  double rank_seconds = NAN;   // this rank's share of `seconds` (its time in the same repeat)
  double throughput = NAN;     // per rank
  double aggregate = NAN;      // all ranks together (NAN: not a sum over ranks, e.g. work every rank repeats)
  std::string unit;            // "B/s"
  double roof_fraction = NAN;  // of the measured roof, where one applies
  std::string roof;            // which roof: kRoofStream or kRoofPopcount
  std::optional<bool> verified;
};

// The roofs rows report their fraction of (named in the table and its footnote).
inline constexpr const char* kRoofStream = "stream BW";
inline constexpr const char* kRoofPopcount = "popcount";
inline constexpr const char* kRoofTensorCore = "tc probe";  // gram's tensor-core engine against its own probe

// The roof a kernel's figure of merit is measured against, in this run.
struct RoofReport {
  std::string name;       // kRoofStream, kRoofPopcount, kRoofTensorCore
  std::string unit;       // of value: "B/s", "bitop/s"
  double value = NAN;     // all ranks together
  double fraction = NAN;  // of the roof the kernel reached (per rank, of the slowest rank's time)
};

struct KernelReport {
  std::optional<bool> verified;  // unset when verification was off
  double seconds = 0;            // this rank's total wall time of the kernel's run
  // The declaration's figure of merit, all ranks together, in its unit (NaN:
  // not measured in this run), and its roof: results.json's fom and roof.
  double fom = NAN;
  double fom_seconds = NAN;  // the timed part it is computed from (the slowest rank's): what scaling studies time
  RoofReport roof;
  Json metrics = Json::object();
  std::vector<SummaryRow> rows;
  // This rank's time to solution in consecutive phases (PhaseClock); the
  // driver puts the start-up before them.
  Phases phases;
};

struct RunContext {
  RunContext(const Environment& env_, ExecSpace exec_, bool verify_, std::uint64_t seed_, std::string out_dir_,
             std::ostream& out_, std::ostream& err_)
      : env(env_), exec(exec_), verify(verify_), seed(seed_), out_dir(std::move(out_dir_)), out(out_), err(err_) {}

  const Environment& env;
  ExecSpace exec;
  bool verify = true;
  std::uint64_t seed = 0;
  std::string out_dir;
  // Where progress lines (out) and warnings (err) go; only rank 0 writes.
  std::ostream& out;
  std::ostream& err;
  bool progress = true;  // progress lines while a kernel runs (off with --quiet)
  // Stream bandwidth (bytes/s per rank) measured in this run: the roof other
  // kernels report their fraction of. The best of every measurement of the
  // run: the stream kernel's roof and each probe (a busy moment can make one
  // probe low, never all of them high).
  std::optional<double> stream_bandwidth;
  std::function<double(RunContext&)> measure_stream_bandwidth;

  // Probes the bandwidth now and keeps the best of the run: kernels call it
  // before their timed loop, roof_bandwidth() after it.
  void probe_roof_bandwidth() { keep_roof_bandwidth(measure_stream_bandwidth(*this)); }
  void keep_roof_bandwidth(double bytes_per_s) {
    stream_bandwidth = stream_bandwidth ? std::max(*stream_bandwidth, bytes_per_s) : bytes_per_s;
  }
  // The roof: probes once more (after the caller's timed loop) and returns the
  // best measurement of the run.
  double roof_bandwidth() {
    probe_roof_bandwidth();
    return *stream_bandwidth;
  }
  // Output paths in decks are relative to --out DIR unless absolute.
  std::string output_path(const std::string& p) const { return (p.empty() || p[0] == '/') ? p : out_dir + "/" + p; }
};

// Device memory a kernel's plan needs per rank, and the deck setting that
// sizes it ("deck.yaml:4: stream.n"), named when it does not fit.
struct MemoryNeed {
  ByteCount bytes;
  std::string setting;
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  // Its keys, figure of merit and decks (<kernel>_declaration.cpp).
  virtual const KernelDeclaration& declaration() const = 0;
  std::string name() const { return declaration().name; }
  // Reads and validates this kernel's deck section (all of it, defaults included).
  virtual void configure(const DeckNode& section, const Environment& env) = 0;
  // What --dry-run prints: sizes, memory per rank, slices.
  virtual void print_plan(std::ostream& os, const Environment& env) const = 0;
  // What its plan allocates per rank at the peak: device memory, and on host
  // backends the host copies too (they share that memory). The driver checks
  // these against the device before anything runs.
  virtual std::vector<MemoryNeed> memory_needs(const Environment& env, bool verify) const = 0;
  virtual KernelReport run(RunContext& ctx) = 0;
  // The files run() will write, as configured (paths relative to --out unless
  // absolute); checked on every rank before anything runs.
  const std::vector<OutputFile>& outputs() const { return outputs_; }
  // Warnings configure() found (rank 0 prints them, before the plan).
  const std::vector<std::string>& warnings() const { return warnings_; }

 protected:
  // For configure(): records `node.key` as an output unless its path is empty.
  void add_output(const DeckNode& node, const std::string& key, const std::string& path) {
    if (!path.empty()) outputs_.push_back({node.where(key) + ": " + node.key_path(key), path});
  }
  void warn(std::string w) { warnings_.push_back(std::move(w)); }
  std::vector<OutputFile> outputs_;
  std::vector<std::string> warnings_;
};

}  // namespace kmini
