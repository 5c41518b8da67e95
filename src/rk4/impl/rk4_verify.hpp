#pragma once
// The in-run verification: a short run on the device against the host
// reference (rk4_reference.hpp), stage by stage, from the same start.
#include "core/collective.hpp"
#include "core/environment.hpp"
#include "core/timer.hpp"
#include "kernel/kernel.hpp"
#include "rk4/impl/rk4_detail.hpp"
#include "rk4/impl/rk4_integrator.hpp"
#include "rk4/impl/rk4_reference.hpp"
#include "rk4/impl/rk4_state.hpp"
#include "rk4/rk4.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

namespace kmini::rk4 {

// Fault injection for the tests only: the verification's device
// run made wrong on purpose, to show that the check fails. No deck key, flag
// or environment variable reaches it; tests set it in process.
struct VerifyFaultForTests {
  double field = 0;     // the device run starts from F * (1 + field)
  double coupling = 0;  // and couples with g * (1 + coupling)
  // The wider reference measured even where the roundings' count suffices
  // (whether it does depends on the backend's summation order and FMAs).
  bool wider_reference = false;
};
inline VerifyFaultForTests& verify_fault_for_tests() {
  static VerifyFaultForTests fault;
  return fault;
}

}  // namespace kmini::rk4

namespace kmini::rk4::detail {

inline reference::GlobalSum global_sum(MPI_Comm comm) {
  return [comm](C16 v) {
    double s[2] = {v.real(), v.imag()};
    MPI_Allreduce(MPI_IN_PLACE, s, 2, MPI_DOUBLE, MPI_SUM, comm);
    return C16(s[0], s[1]);
  };
}

struct Verification {
  std::int64_t steps = 0;
  // When the roundings' count is not enough (below): the host reference run
  // again in a wider precision, and how far the field-precision one is from it.
  bool wide_reference = false;
  double delta_spread = 0, field_spread = 0;
  double delta_error = 0;           // max |delta - delta_ref| / max |delta_ref|
  double field_error = 0;           // max |F - F_ref|, |G - G_ref| over max(1, |F_ref|, |G_ref|)
  double tolerance = 0;             // of the fields
  double delta_tolerance = 0;       // of delta: the fields' plus the reductions' rounding (summation_tolerance)
  std::vector<C16> device_history;  // delta[k0..k0+steps] of the verification run
  bool ok() const { return delta_error <= delta_tolerance && field_error <= tolerance; }
};

// The first step at which the main run's delta[k0..] differs from the
// verification run's bit for bit (the same code on the same ranks must give
// the same numbers), or -1 where every step is the same.
inline std::int64_t first_unreproduced(const Verification& v, const std::vector<C16>& history, std::int64_t k0) {
  for (std::size_t k = 0; k < v.device_history.size(); ++k)
    if (std::memcmp(&v.device_history[k], &history[k0 + k], sizeof(C16)) != 0) return k0 + static_cast<std::int64_t>(k);
  return -1;
}

// Relative tolerance of the comparison with the host reference: a few
// roundings per step in the field precision, growing with the step count.
inline constexpr double kRoundingsPerStep = 4.0;

template <class T>
double reference_tolerance(std::int64_t steps) {
  return kRoundingsPerStep * static_cast<double>(steps + 1) * std::numeric_limits<T>::epsilon();
}

// What the two sides' sums of F may differ by, relative to delta: both sum in
// double but in different orders (the device in lanes and chunks, the
// reference in sequence), and any order of m additions is within
// (m - 1) eps sum|F| of the exact sum (Higham, Accuracy and Stability of
// Numerical Algorithms, 4.2). `abs_delta` is g sum|F|, `scale` max |delta|.
// Without this term, 2 ranks of n = 64 with per_stage Kerr coupling failed
// at 5.7e-14 against a field tolerance of 9.8e-15.
inline double summation_tolerance(std::int64_t terms, double abs_delta, double scale) {
  return 2.0 * static_cast<double>(terms) * std::numeric_limits<double>::epsilon() * abs_delta /
         std::max(scale, std::numeric_limits<double>::min());
}

// The precision the reference is repeated in: double for float fields, long
// double (x87's 64-bit mantissa on x86-64) for double ones.
template <class T>
using Wider = std::conditional_t<std::is_same_v<T, float>, double, long double>;

// The device's error allowed, as a multiple of the field-precision reference's
// own measured error (its distance from the wider one). Both runs round in the
// same precision the same number of times per element and step, and the
// coupling amplifies both roundings alike, so the device's error is the same
// size. A margin of 8: the spread decides only where the roundings' count
// (and the bounds below) fell short, e.g. kerr 5, dt 0.1, 20 steps, double:
// field error 2.1e-14 against a count of 1.9e-14 and a spread of 1.9e-14.
inline constexpr double kSpreadMultiple = 8.0;

template <class W, class T>
std::vector<std::complex<W>> widen(const std::vector<std::complex<T>>& v) {
  return std::vector<std::complex<W>>(v.begin(), v.end());
}

// What the device's rounding of the fields can do to delta beyond the
// reference's: an element update rounds its result (and, where the inputs are
// equal across elements such as a filled G, the constant part it adds) to the
// field precision, and when the values share a binade these roundings are the
// same for every element: they add up coherently, up to eps_T |F_i| per
// element and step, not as a random walk. delta = g sum F then cancels: in
// a deck of n 1000, random F, G 0.25, dt 0.5, single, |delta| is 1/1000
// of g sum |F|, and affine's error was 2.8e-5 against a float reference 1.4e-6
// from a double one (stages, which rounds as the reference does, was exact).
// Bound: steps * eps_T * g sum|F| / max |delta|; 4.4x the error measured there.
template <class T>
double field_rounding_tolerance(std::int64_t steps, double abs_delta, double scale) {
  return static_cast<double>(steps) * std::numeric_limits<T>::epsilon() * abs_delta /
         std::max(scale, std::numeric_limits<double>::min());
}

template <class T>
double abs_sum(const std::vector<std::complex<T>>& v) {
  double s = 0;
  for (const auto& z : v) s += std::abs(std::complex<double>(z));
  return s;
}

// The verification's device integrator, loaded with the run's starting
// state, and the host reference's copy of that state (a pair); the test
// fault, where set, makes the device's start wrong. Allocations and input
// reads are agreed by all ranks before the collectives of start().
template <class T, class Model>
auto verification_start(RunContext& ctx, const Config& c, const Block& b, const Problem& device_problem,
                        const Model& model, double field_fault) {
  return collectively(ctx.env.comm(), "rk4", [&] {
    Integrator<T, ExecSpace, Model> it(ctx.exec, ctx.env.comm(), device_problem, b.count, model);
    load_state<T>(ctx.exec, c, b, it);
    reference::State<T> ref{to_host<T>(it.F()), to_host<T>(it.G())};
    if (field_fault != 0) {
      auto wrong = ref.F;
      for (auto& z : wrong) z *= static_cast<T>(1 + field_fault);
      from_host(ctx.exec, it.F(), wrong);
    }
    return std::make_pair(std::move(it), std::move(ref));
  });
}

// max |delta_ref[k]|: what the delta errors are relative to.
inline double max_abs(const std::vector<C16>& history) {
  double scale = 0;
  for (const C16& d : history) scale = std::max(scale, std::abs(d));
  return scale;
}

// max |device[k] - ref[k]| over the delta histories; a NaN makes it infinite.
inline double max_delta_error(const std::vector<C16>& device, const std::vector<C16>& ref) {
  double err = 0;
  for (std::size_t k = 0; k < ref.size(); ++k) {
    const double e = std::abs(device[k] - ref[k]);
    err = std::isnan(e) ? INFINITY : std::max(err, e);
  }
  return err;
}

// This rank's largest of 1, |F_ref| and |G_ref| over its `count` elements:
// what the field errors are relative to.
template <class T>
double field_scale(const reference::State<T>& ref, std::int64_t count) {
  double scale = 1;
  for (std::int64_t i = 0; i < count; ++i)
    scale = std::max({scale, static_cast<double>(std::abs(ref.F[i])), static_cast<double>(std::abs(ref.G[i]))});
  return scale;
}

// This rank's max |F - F_ref|, |G - G_ref| over its `count` elements; a NaN
// makes it infinite.
template <class T>
double max_field_error(const std::vector<std::complex<T>>& F, const std::vector<std::complex<T>>& G,
                       const reference::State<T>& ref, std::int64_t count) {
  double err = 0;
  for (std::int64_t i = 0; i < count; ++i) {
    const double e = std::max(std::abs(C16(F[i]) - C16(ref.F[i])), std::abs(C16(G[i]) - C16(ref.G[i])));
    err = std::isnan(e) ? INFINITY : std::max(err, e);
  }
  return err;
}

// How far the field-precision reference carries its rounding: the reference
// repeated in a wider precision from the same start and the same delta, and
// (max |delta_ref - delta_wide| over the steps, the max field difference
// over all ranks). The start is read again into `it` rather than kept: a wider
// copy of every run's fields (32 bytes per double element) would double the
// verification's memory.
template <class T, class Model>
std::pair<double, double> wide_reference_spread(RunContext& ctx, const Config& c, const Block& b,
                                                Integrator<T, ExecSpace, Model>& it, const reference::State<T>& ref,
                                                const std::vector<C16>& ref_history, const C16 delta_start,
                                                std::int64_t steps, const reference::Setup& setup,
                                                const reference::GlobalSum& allsum) {
  ScopedRegion wide_region("kmini::rk4::verify_wide_reference");
  collectively(ctx.env.comm(), "rk4", [&] {
    load_state<T>(ctx.exec, c, b, it);
    return 0;
  });
  reference::State<Wider<T>> wide{widen<Wider<T>>(to_host<T>(it.F())), widen<Wider<T>>(to_host<T>(it.G()))};
  const auto wide_history = reference::run(wide, delta_start, steps, setup, allsum);
  double dspread = 0, fspread = 0;
  // (Both histories are complex<double>: delta is summed in double on either side.)
  for (std::size_t k = 0; k < ref_history.size(); ++k)
    dspread = std::max(dspread, std::abs(ref_history[k] - wide_history[k]));
  for (std::int64_t i = 0; i < b.count; ++i) {
    const auto f = std::abs(std::complex<Wider<T>>(ref.F[i]) - wide.F[i]);
    const auto g = std::abs(std::complex<Wider<T>>(ref.G[i]) - wide.G[i]);
    fspread = std::max(fspread, static_cast<double>(std::max(f, g)));
  }
  return {dspread, allreduce_max(ctx.env.comm(), fspread)};
}

// Integrates `steps` steps from the run's starting state on the device and
// with the host reference, and compares delta histories and final fields.
template <class T, class Model>
Verification verify(RunContext& ctx, const Config& c, const Block& b, std::int64_t k0, std::int64_t steps,
                    const Model& model) {
  ScopedRegion region("kmini::rk4::verify");
  const MPI_Comm comm = ctx.env.comm();
  Verification v;
  v.steps = steps;
  v.tolerance = reference_tolerance<T>(steps);
  Problem p = c.problem;
  p.steps = k0 + steps;
  const VerifyFaultForTests fault = verify_fault_for_tests();
  Problem device_problem = p;
  device_problem.g *= 1 + fault.coupling;
  auto state = verification_start<T>(ctx, c, b, device_problem, model, fault.field);
  Integrator<T, ExecSpace, Model>& it = state.first;
  reference::State<T>& ref = state.second;
  it.start(k0, c.resumed ? &c.resumed->sums : nullptr, false);
  for (std::int64_t k = 0; k < steps; ++k) it.step();
  v.device_history = history_to_host(it.history(), k0, k0 + steps);

  const reference::Setup setup{p.dt, p.g, C16(p.delta0.real(), p.delta0.imag()), p.per_stage, p.kerr};
  const auto allsum = global_sum(comm);
  const C16 delta_start =
      (k0 == 0) ? reference::initial_delta(ref, setup, allsum) : p.g * allsum(reference::local_sum(ref.F));
  const double abs_before = abs_sum(ref.F);
  const auto ref_history = reference::run(ref, delta_start, steps, setup, allsum);
  const double abs_delta =
      std::abs(p.g) * allreduce_max(comm, std::max(abs_before, abs_sum(ref.F))) * static_cast<double>(ctx.env.size());

  const double scale = max_abs(ref_history);
  v.delta_error = max_delta_error(v.device_history, ref_history) / std::max(scale, std::numeric_limits<double>::min());
  const auto terms = static_cast<std::int64_t>(allreduce_max(comm, static_cast<double>(b.count))) + ctx.env.size();
  const double sums_and_fields =
      summation_tolerance(terms, abs_delta, scale) + field_rounding_tolerance<T>(steps, abs_delta, scale);
  v.delta_tolerance = v.tolerance + sums_and_fields;
  const double fields_scale = allreduce_max(comm, field_scale(ref, b.count));
  v.field_error =
      allreduce_max(comm, max_field_error(to_host<T>(it.F()), to_host<T>(it.G()), ref, b.count)) / fields_scale;
  if (v.ok() && !fault.wider_reference) return v;  // within the roundings' count: no need to measure more

  // Not within it (every rank agrees: the errors are global): measure how far
  // this problem carries the field precision's rounding.
  const auto [dspread, fspread] =
      wide_reference_spread(ctx, c, b, it, ref, ref_history, delta_start, steps, setup, allsum);
  v.wide_reference = true;
  v.delta_spread = dspread / std::max(scale, std::numeric_limits<double>::min());
  v.field_spread = fspread / fields_scale;
  v.tolerance = std::max(v.tolerance, kSpreadMultiple * v.field_spread);
  v.delta_tolerance = std::max(reference_tolerance<T>(steps), kSpreadMultiple * v.delta_spread) + sums_and_fields;
  return v;
}

}  // namespace kmini::rk4::detail
