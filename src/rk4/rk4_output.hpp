#pragma once
// What an rk4 run leaves behind: the delta file, the field files, the metrics
// of results.json and the summary row. Not templated on the precision, so
// rk4_run.cpp hands over host data and plain numbers (RunOutcome).
#include "core/environment.hpp"
#include "kernel/kernel.hpp"
#include "rk4/rk4.hpp"
#include "rk4/rk4_detail.hpp"

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
};

// Complex values moved per element-step, for the bandwidth metrics. affine,
// and stages per_step: read F, G; write F, G (in place). stages per_stage:
// stages 1..3 read F, G; stage 4 reads and writes them.
inline constexpr double kValuesPerElementStep = 4.0;
inline constexpr double kValuesPerElementStepStagesPerStage = 10.0;

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
