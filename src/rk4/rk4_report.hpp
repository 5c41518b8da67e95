#pragma once
// What an rk4 run leaves behind: the delta file, the field files, the metrics
// of results.json and the summary row. Not templated on the precision, so
// rk4_run.cpp hands over host data and plain numbers (RunOutcome).
#include "core/environment.hpp"
#include "kernel/kernel.hpp"
#include "rk4/impl/rk4_detail.hpp"
#include "rk4/rk4.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kmini::rk4::detail {

struct Verification;  // rk4_verify.hpp

// Seconds of phase "time_loop".
struct LoopTiming {
  double my_seconds = 0;  // this rank's loop, checkpoints and progress lines excluded
  double seconds = 0;     // the slowest rank's
  double io_seconds = 0;  // this rank's checkpoints and progress lines
};

// What the report needs of a finished run.
struct RunOutcome {
  std::int64_t start_step = 0;  // k0: 0, or the restart's step
  bool stages = false;          // method stages (else affine)
  LoopTiming loop;
  std::vector<C16> history;               // delta[0..steps]
  std::optional<double> invariant_drift;  // unset where the invariant is not conserved (G not real)
  bool stores_im_g = false;               // the model changes Im G (else it is read, never stored)
};

// Real values (of the field precision) moved per element-step, for the
// bandwidth metrics. G is stored as Re G and Im G. affine, and
// stages per_step: read F, Re G, Im G (4); write F, Re G (3), and Im G only
// for a model that changes it. stages per_stage: stages 1..3 read the 4;
// stage 4 reads the 4 and writes 3 (or 4). Double: 56 B (was 64 with G
// interleaved), per_stage stages 152 B (was 160); single: half of that.
inline constexpr double reals_per_element_step(bool stages_per_stage, bool stores_im_g) {
  const double step = 4.0 + 3.0 + (stores_im_g ? 1.0 : 0.0);
  return stages_per_stage ? 3 * 4.0 + step : step;
}

// Writes delta[0..] as .npy (complex64 when `single`, else complex128) or as
// .csv (step, t, re, im, abs); rank 0 writes, all ranks agree on the outcome.
void write_delta(const Environment& env, const std::string& path, const std::vector<C16>& history, double dt,
                 bool single);

// Collective: this rank's block `host_values` (complex<T> of the run's
// precision) of the n x n field at `path`.
void write_field(const Environment& env, const Config& c, const Block& b, const std::string& path,
                 const void* host_values);

// Fills report.metrics and report.rows; with `check`, also the verification's
// outcome (the reference comparison, and the main run reproducing the
// verification run bitwise). Collective (the roof may be measured here).
void report_run(RunContext& ctx, const Config& c, const Block& b, const RunOutcome& run,
                const std::optional<Verification>& check, KernelReport& report);

}  // namespace kmini::rk4::detail
