#pragma once
// Bit-packed Gram product C = A * A^T of a 0/1 matrix A (rows x cols):
// C(i, j) = number of columns where rows i and j are both 1. Computed in row
// slices of C shared across ranks, with AND+popcount on 64-bit words.
#include "driver/kernel.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace kmini::gram {

// Where A comes from.
struct Source {
  enum class Kind { Random, Unpacked, Packed } kind = Kind::Random;
  std::int64_t rows = 0, cols = 0;
  double density = 0.5;         // random
  std::uint64_t seed = 1;       // random
  std::string path;             // unpacked / packed .npy
  std::uint64_t data_offset = 0;
  bool bool_dtype = false;
};

struct Config {
  Source a;
  std::int64_t row_slice = 0;        // 0: auto
  double memory_budget = 0;          // bytes of device memory for packed A + one slice
  bool budget_given = false;         // memory_budget set in the deck (not auto)
  bool jaccard = false;              // similarity: jaccard (float32) instead of counts (int32)
  bool upper = false;                // triangle: upper (packed rows i, j >= i)
  std::string write_c, write_summary;
  bool baseline = false;
  std::int64_t baseline_rows = 512;  // rows of the gemm baseline panel
  std::int64_t repeat = 1;           // timed repetitions of the slice loop (best)
};

// One slice of rows of C and the rank that computes it.
struct Slice {
  std::int64_t r0 = 0, r1 = 0;
  int rank = 0;
  double work = 0;  // word-pair popcounts executed
};

struct Plan {
  std::int64_t rows = 0, cols = 0, words = 0, height = 0;
  double packed_bytes = 0, slice_bytes = 0;
  std::vector<Slice> slices;
};

// Slice height for `auto`: the largest multiple of the tile that fits the budget.
Plan make_plan(const Config& c, int ranks);

// Bytes per row of a slice the budget pays for: C counts (int32), the jaccard
// slice (float32), and, when host copies share that memory (host backends),
// the host copies of the slice for output and checks.
double slice_bytes_per_row(const Config& c, bool host_copies_share_memory);

// Everything one rank allocates at its peak for `plan`: packed A, one slice
// (with its host copies where they share the memory), row buffers, the file
// staging block, and the larger of the verification's and the baseline's
// extra matrices.
ByteCount device_bytes(const Config& c, const Plan& plan, bool verify, bool host_copies_share_memory);

class GramKernel final : public Kernel {
 public:
  std::string name() const override { return "gram"; }
  std::string description() const override {
    return "gram: bit-packed C = A A^T of a 0/1 matrix (AND + popcount), row slices over ranks";
  }
  void configure(const DeckNode& section, const Environment& env) override;
  void print_plan(std::ostream& os, const Environment& env) const override;
  std::vector<MemoryNeed> memory_needs(const Environment& env, bool verify) const override;
  KernelReport run(RunContext& ctx) override;

  const Config& config() const { return config_; }

 private:
  Config config_;
  std::string budget_setting_, size_setting_;  // where memory_budget and the plan's size come from
};

// Float/double gemm on the unpacked matrix (gram_gemm.cpp, the only file that
// includes Kokkos Kernels): C_panel = A[panel rows] * A^T. Returns seconds of
// the gemm call alone; `panel_out` (panel x rows, row major) when non-null.
double gemm_panel_float(const Source& a, std::int64_t panel, std::vector<double>* panel_out);
double gemm_panel_double(const Source& a, const std::vector<std::int64_t>& panel_rows, std::vector<double>& out);

// Host unpacked values of rows [r0, r0 + n) as 0/1 bytes, straight from the source.
std::vector<std::uint8_t> host_rows(const Source& a, std::int64_t r0, std::int64_t n);

}  // namespace kmini::gram
