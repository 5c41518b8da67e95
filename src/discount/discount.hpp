#pragma once
// The discount benchmark: cv[d][i][n] = multBy[i][n] * discount[d][i][n] for
// every as-of date d, id i and term n, optionally fused with a sum per date or
// per id. Reports kernel-only bandwidth against the measured stream roof and
// the end-to-end time including host<->device transfers.
#include "io/npy.hpp"
#include "kernel/kernel.hpp"

#include <cstdint>
#include <functional>
#include <string>

namespace kmini::discount {

// Where an input array comes from.
struct InputSpec {
  enum class Source { File, Arange, Random } source = Source::Arange;
  std::string path;        // File
  npy::Info file;          // File: validated header
  std::uint64_t seed = 0;  // Random
};

enum class Reduce { None, PerDate, PerId };
enum class Policy { MDRange, Flat, Wave };
// How cv is stored (discount.stores): streaming (non-temporal) stores, regular
// ones, or auto: streaming where the build has them (host targets with AVX)
// and this rank's cv is larger than the last-level cache.
enum class Stores { Auto, Regular, Streaming };

struct Config {
  std::int64_t dates = 0, ids = 0, terms = 0;  // D, M, O
  bool single = false;                         // precision: single (f4) or double (f8)
  InputSpec mult_by, discount;
  Reduce reduce = Reduce::None;
  Policy policy = Policy::MDRange;
  bool vector_loads = false;  // discount.loads: vector: 16-byte packs of discount and cv (policy flat or wave)
  std::string write_cv, write_reduced;  // empty: not written
  std::int64_t repeat = 5;
  Stores stores = Stores::Auto;
  bool stream_cv = false;  // resolved at run time (run_typed): the multiply stores cv non-temporally

  std::int64_t row() const { return ids * terms; }
  std::size_t element_size() const { return single ? 4 : 8; }
  bool computes_cv() const { return reduce == Reduce::None || !write_cv.empty(); }
};

// This rank's contiguous slice of dates: [first, first + count).
struct DateSlice {
  std::int64_t first = 0, count = 0;
};
DateSlice date_slice(std::int64_t dates, int rank, int ranks);

// Device bytes one rank allocates for its slice (inputs, cv, reduction buffers).
ByteCount bytes_per_rank(const Config& c, std::int64_t local_dates);

// Reads and validates the deck section; every size, shape and dtype is
// checked here, before anything is allocated (the memory the slices need is
// checked by the driver, memory_needs). Throws UsageError.
Config read_config(const DeckNode& section, MPI_Comm comm);

// The size key a size problem is blamed on: the largest of dates, ids and
// terms that the deck (or a --set) gives, else dates.
std::string size_key(const DeckNode& section, const Config& c);

// Its deck keys, figure of merit and decks (discount_declaration.cpp).
const KernelDeclaration& declaration();

class DiscountKernel final : public Kernel {
 public:
  const KernelDeclaration& declaration() const override { return discount::declaration(); }
  void configure(const DeckNode& section, const Environment& env) override {
    config_ = read_config(section, env.comm());
    outputs_.clear();
    const DeckNode write = section.child("write");
    add_output(write, "cv", config_.write_cv);
    add_output(write, "reduced", config_.write_reduced);
    size_setting_ = section.located(size_key(section, config_));
  }
  void print_plan(std::ostream& os, const Environment& env) const override;
  std::vector<MemoryNeed> memory_needs(const Environment& env, bool verify) const override;
  KernelReport run(RunContext& ctx) override;

 private:
  Config config_;
  std::string size_setting_;  // the size key blamed for memory (size_key), with where it comes from
};

// The last-level cache in bytes the machine reports (0: unknown), for
// results.json: what a process can use of it is often far less (a VM shown
// its host's L3), so discount.stores: auto does not decide by it.
std::int64_t last_level_cache_bytes();

// discount.stores: auto. A cv of at most kMeasureStoresAbove bytes stays in
// the caches of any host and gets regular stores; a larger one gets the store
// kind that ran faster on it: `time_pass(streaming)` times one pass of the
// multiply, kStorePairs times each, alternating, the best of each kind kept.
// With `remember`, the answer is kept per size class (cv bytes rounded down
// to a power of two, element size) for the rest of the process, and later
// calls of that class reuse it without timing.
inline constexpr std::int64_t kMeasureStoresAbove = std::int64_t(1) << 20;
inline constexpr int kStorePairs = 3;
struct StoreChoice {
  bool streaming = false;
  bool measured = false;                              // timed in this call
  bool remembered = false;                            // an earlier call's answer
  double regular_seconds = 0, streaming_seconds = 0;  // the best pass of each kind, where timed
};
StoreChoice choose_stores(std::int64_t cv_bytes, std::size_t element_size, const std::function<double(bool)>& time_pass,
                          bool remember);

}  // namespace kmini::discount
