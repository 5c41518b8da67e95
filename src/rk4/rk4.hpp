#pragma once
// RK4 integration of the coupled complex fields F, G (n x n) with the global
// coupling delta = g * sum(F), device-resident for the whole time loop.
// Rows are split across MPI ranks; one allreduce of three sums per step.
#include "kernel/kernel.hpp"
#include "rk4/rk4_checkpoint.hpp"
#include "rk4/rk4_problem.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace kmini::rk4 {

struct Config {
  Problem problem;
  bool g_auto = true;  // g = 1 / (n n)
  bool single = true;  // precision: single (complex64) | double (complex128)
  InitSpec init_f, init_g;
  std::string write_delta, write_f, write_g;  // output paths, empty = none
  std::int64_t progress_every = 0;            // 0 = no progress lines
  bool progress_invariant = false;
  std::int64_t check_every = 100;  // steps between non-finite checks
  std::int64_t checkpoint_every = 0;
  std::string checkpoint_path;
  std::string restart;                      // checkpoint to resume from
  std::optional<CheckpointHeader> resumed;  // its header, validated against the deck
  std::int64_t verify_steps = 10;           // steps checked against the host reference
};

// This rank's block of rows as elements [first, first + count).
struct Block {
  std::int64_t first = 0, count = 0;
};
Block block_of(std::int64_t n, int rank, int ranks);

// Its deck keys, figure of merit and decks (rk4_declaration.cpp).
const KernelDeclaration& declaration();

class Rk4Kernel final : public Kernel {
 public:
  const KernelDeclaration& declaration() const override { return rk4::declaration(); }
  void configure(const DeckNode& section, const Environment& env) override;
  void print_plan(std::ostream& os, const Environment& env) const override;
  std::vector<MemoryNeed> memory_needs(const Environment& env, bool verify) const override;
  KernelReport run(RunContext& ctx) override;

 private:
  template <class T, class Model>
  KernelReport run_typed(RunContext& ctx, const Model& model);
  Config config_;
  std::string n_setting_, steps_setting_;  // where rk4.n and rk4.steps come from
};

// Bytes one rank's plan needs at its peak (see memory_needs): the fields F
// and G (updated in place), the invariant, the delta history of steps + 1
// complex<double>, the integrator's small buffers; the verification run; on
// host backends the host copies (reference, checkpoint, history) as well.
struct Rk4Memory {
  ByteCount fields, history, total;
};
Rk4Memory memory_per_rank(const Config& c, int ranks, bool verify, bool host_copies_share_memory);

}  // namespace kmini::rk4
