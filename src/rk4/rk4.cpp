#include "rk4/rk4.hpp"

#include "core/collective.hpp"
#include "core/errors.hpp"
#include "core/format.hpp"
#include "core/kokkos_compat.hpp"
#include "core/timer.hpp"
#include "io/atomic_file.hpp"
#include "io/npy.hpp"
#include "rk4/rk4_reference.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <limits>
#include <optional>
#include <ostream>
#include <sstream>

namespace kmini::rk4 {

Block block_of(std::int64_t n, int rank, int ranks) {
  const std::int64_t base = n / ranks, extra = n % ranks;
  const std::int64_t first_row = rank * base + std::min<std::int64_t>(rank, extra);
  const std::int64_t rows = base + (rank < extra ? 1 : 0);
  return {first_row * n, rows * n};
}

namespace {

using C16 = std::complex<double>;
constexpr double kMaxReal = std::numeric_limits<double>::max();

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string fmt(double v, int digits = 6) { return format_g(v, digits); }

std::string fmt(const C16& z) { return "(" + fmt(z.real(), 9) + ", " + fmt(z.imag(), 9) + ")"; }

InitSpec parse_init(const DeckNode& init, const std::string& key, std::int64_t n) {
  InitSpec spec;  // default: all ones, like the original formulation
  if (!init.has(key)) return spec;
  const DeckNode f = init.child(key);
  const std::string kind = f.one_of({"fill", "file", "random"});
  if (kind == "fill") {
    const auto v = f.reals("fill", {1, 0}, 2);
    spec.kind = InitSpec::Kind::Fill;
    spec.re = v[0];
    spec.im = v[1];
  } else if (kind == "file") {
    spec.kind = InitSpec::Kind::File;
    spec.path = f.text("file", "");
    try {
      const npy::Info info = npy::read_info(spec.path);
      npy::require_dtype(info, {npy::DType::C8, npy::DType::C16});
      npy::require_shape(info, {n, n});
    } catch (const UsageError& e) {
      throw UsageError(f.located("file") + ": " + e.what());
    }
  } else {
    const DeckNode r = f.child("random");
    spec.kind = InitSpec::Kind::Random;
    spec.seed = static_cast<std::uint64_t>(r.integer("seed", 1, 0));
    spec.scale = r.real("scale", 1.0, 0, kMaxReal);
  }
  return spec;
}

// The restart file must continue this very problem.
void check_restart(const CheckpointHeader& h, const Config& c, const std::string& path) {
  const auto mismatch = [&](const std::string& what, const std::string& file, const std::string& deck) {
    throw UsageError(path + ": checkpoint has " + what + " = " + file + ", the deck has " + deck);
  };
  const Problem& p = c.problem;
  if (h.n != p.n) mismatch("n", std::to_string(h.n), std::to_string(p.n));
  const int bytes = c.single ? 8 : 16;
  if (h.field_bytes != bytes)
    mismatch("precision", h.field_bytes == 8 ? "single" : "double", c.single ? "single" : "double");
  if (h.per_stage != p.per_stage)
    mismatch("coupling", h.per_stage ? "per_stage" : "per_step", p.per_stage ? "per_stage" : "per_step");
  if (h.kerr != p.kerr) mismatch("kerr", fmt(h.kerr, 17), fmt(p.kerr, 17));
  if (h.stages != uses_stages(p))
    mismatch("method", h.stages ? "stages" : "affine", uses_stages(p) ? "stages" : "affine");
  if (h.dt != p.dt) mismatch("dt", fmt(h.dt, 17), fmt(p.dt, 17));
  if (h.g != p.g) mismatch("g", fmt(h.g, 17), fmt(p.g, 17));
  if (h.step > p.steps) mismatch("step", std::to_string(h.step), "steps = " + std::to_string(p.steps));
}

template <class T>
void write_delta(const Environment& env, const std::string& path, const std::vector<C16>& history, double dt) {
  on_root_collectively(env.comm(), [&] {
    if (ends_with(path, ".csv")) {
      std::string text = "step,t,re,im,abs\n";
      char line[160];
      for (std::size_t k = 0; k < history.size(); ++k) {
        std::snprintf(line, sizeof line, "%zu,%.10g,%.17g,%.17g,%.17g\n", k, static_cast<double>(k) * dt,
                      history[k].real(), history[k].imag(), std::abs(history[k]));
        text += line;
      }
      write_text_file_atomically(path, text);
    } else {
      std::vector<std::complex<T>> values(history.begin(), history.end());
      npy::write(path, {static_cast<std::int64_t>(values.size())}, values);
    }
  });
}

template <class T, class Field>
std::vector<std::complex<T>> to_host(const Field& v) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  std::vector<std::complex<T>> out(h.extent(0));
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = std::complex<T>(h(i).real(), h(i).imag());
  return out;
}

template <class T, class Field>
void from_host(const ExecSpace& exec, const Field& v, const std::vector<std::complex<T>>& values) {
  auto h = Kokkos::create_mirror_view(v);
  for (std::size_t i = 0; i < values.size(); ++i) h(i) = Kokkos::complex<T>(values[i].real(), values[i].imag());
  Kokkos::deep_copy(exec, v, h);
  exec.fence();
}

template <class History>
std::vector<C16> history_to_host(const History& d, std::int64_t first, std::int64_t last) {
  auto sub = Kokkos::subview(d, std::make_pair(first, last + 1));
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sub);
  std::vector<C16> out(h.extent(0));
  for (std::size_t k = 0; k < out.size(); ++k) out[k] = C16(h(k).real(), h(k).imag());
  return out;
}

template <class T, class Field>
void init_field(const ExecSpace& exec, const Field& v, const InitSpec& s, const Block& b) {
  switch (s.kind) {
    case InitSpec::Kind::Fill: fill_constant(exec, v, s.re, s.im); break;
    case InitSpec::Kind::Random: fill_random(exec, v, s.seed, s.scale, static_cast<std::uint64_t>(b.first)); break;
    case InitSpec::Kind::File: {
      const npy::Info info = npy::read_info(s.path);
      std::vector<std::complex<T>> values(static_cast<std::size_t>(b.count));
      if (info.dtype == npy::DType::C8) {
        std::vector<std::complex<float>> raw(values.size());
        npy::read_elements(info, b.first, raw.size(), raw.data());
        std::copy(raw.begin(), raw.end(), values.begin());
      } else {
        std::vector<C16> raw(values.size());
        npy::read_elements(info, b.first, raw.size(), raw.data());
        for (std::size_t i = 0; i < raw.size(); ++i) values[i] = std::complex<T>(raw[i]);
      }
      from_host(exec, v, values);
      break;
    }
  }
  exec.fence();
}

// Fills the integrator's state from the deck's init or the restart file;
// returns the restart's delta[0..k0] (empty otherwise).
template <class T, class It>
std::vector<C16> load_state(const ExecSpace& exec, const Config& c, const Block& b, It& it) {
  if (!c.resumed) {
    init_field<T>(exec, it.F(), c.init_f, b);
    init_field<T>(exec, it.G(), c.init_g, b);
    return {};
  }
  std::vector<C16> history, rows;
  read_checkpoint_data(c.restart, *c.resumed, b.first, b.count, history, rows);
  std::vector<std::complex<T>> F(b.count), G(b.count);
  for (std::int64_t i = 0; i < b.count; ++i) {
    F[i] = std::complex<T>(rows[2 * i]);
    G[i] = std::complex<T>(rows[2 * i + 1]);
  }
  from_host(exec, it.F(), F);
  from_host(exec, it.G(), G);
  return history;
}

template <class T, class It>
void write_state_checkpoint(const Environment& env, const Config& c, const std::string& path, const It& it,
                            const Block& b) {
  CheckpointHeader h;
  h.n = c.problem.n;
  h.step = it.step_index();
  h.field_bytes = sizeof(Kokkos::complex<T>);
  h.per_stage = c.problem.per_stage;
  h.stages = !it.affine();
  h.kerr = c.problem.kerr;
  h.dt = c.problem.dt;
  h.g = c.problem.g;
  h.sums = it.sums();
  h.sum_im_g = it.sum_im_g();
  const auto history = history_to_host(it.history(), 0, h.step);
  const auto F = to_host<T>(it.F()), G = to_host<T>(it.G());
  std::vector<C16> rows(2 * static_cast<std::size_t>(b.count));
  for (std::int64_t i = 0; i < b.count; ++i) {
    rows[2 * i] = C16(F[i]);
    rows[2 * i + 1] = C16(G[i]);
  }
  write_checkpoint(env.comm(), path, h, history, static_cast<std::uint64_t>(b.first), rows);
}

reference::GlobalSum global_sum(MPI_Comm comm) {
  return [comm](C16 v) {
    double s[2] = {v.real(), v.imag()};
    MPI_Allreduce(MPI_IN_PLACE, s, 2, MPI_DOUBLE, MPI_SUM, comm);
    return C16(s[0], s[1]);
  };
}

struct Verification {
  std::int64_t steps = 0;
  double delta_error = 0;  // max |delta - delta_ref| / max |delta_ref|
  double field_error = 0;  // max |F - F_ref|, |G - G_ref| over max(1, |F_ref|, |G_ref|)
  double tolerance = 0;        // of the fields
  double delta_tolerance = 0;  // of delta: the fields' plus the reductions' rounding (summation_tolerance)
  std::vector<C16> device_history;  // delta[k0..k0+steps] of the verification run
  bool ok() const { return delta_error <= delta_tolerance && field_error <= tolerance; }
};

// Relative tolerance of the comparison with the host reference: a few
// roundings per step in the field precision, growing with the step count.
template <class T>
double reference_tolerance(std::int64_t steps) {
  return 4.0 * static_cast<double>(steps + 1) * std::numeric_limits<T>::epsilon();
}

// What the two sides' sums of F may differ by, relative to delta: both sum in
// double but in different orders (the device in lanes and chunks, the
// reference in sequence), and any order of m additions is within
// (m - 1) eps sum|F| of the exact sum (Higham, Accuracy and Stability of
// Numerical Algorithms, 4.2). `abs_delta` is g sum|F|, `scale` max |delta|.
// Without this term, 2 ranks of n = 64 with per_stage Kerr coupling failed
// at 5.7e-14 against a field tolerance of 9.8e-15.
double summation_tolerance(std::int64_t terms, double abs_delta, double scale) {
  return 2.0 * static_cast<double>(terms) * std::numeric_limits<double>::epsilon() * abs_delta /
         std::max(scale, std::numeric_limits<double>::min());
}

template <class T>
double abs_sum(const std::vector<std::complex<T>>& v) {
  double s = 0;
  for (const auto& z : v) s += std::abs(std::complex<double>(z));
  return s;
}

// Integrates `steps` steps from the run's starting state on the device and
// with the host reference, and compares delta histories and final fields.
template <class T, class Model>
Verification verify(RunContext& ctx, const Config& c, const Block& b, std::int64_t k0, std::int64_t steps,
                    const Model& model) {
  ScopedRegion region("kmini::rk4::verify");
  Verification v;
  v.steps = steps;
  v.tolerance = reference_tolerance<T>(steps);
  Problem p = c.problem;
  p.steps = k0 + steps;
  // Allocations and input reads, agreed by all ranks before the collectives of start().
  auto state = collectively(ctx.env.comm(), "rk4", [&] {
    Integrator<T, ExecSpace, Model> it(ctx.exec, ctx.env.comm(), p, b.count, model);
    load_state<T>(ctx.exec, c, b, it);
    reference::State<T> ref{to_host<T>(it.F()), to_host<T>(it.G())};
    return std::make_pair(std::move(it), std::move(ref));
  });
  Integrator<T, ExecSpace, Model>& it = state.first;
  reference::State<T>& ref = state.second;
  it.start(k0, c.resumed ? &c.resumed->sums : nullptr, false);
  for (std::int64_t k = 0; k < steps; ++k) it.step();
  v.device_history = history_to_host(it.history(), k0, k0 + steps);

  const reference::Setup setup{p.dt, p.g, C16(p.delta0.real(), p.delta0.imag()), p.per_stage, p.kerr};
  const auto allsum = global_sum(ctx.env.comm());
  const C16 delta_start = (k0 == 0) ? reference::initial_delta(ref, setup, allsum) : p.g * allsum(reference::local_sum(ref.F));
  const double abs_before = abs_sum(ref.F);
  const auto ref_history = reference::run(ref, delta_start, steps, setup, allsum);
  const double abs_delta = std::abs(p.g) * allreduce_max(ctx.env.comm(), std::max(abs_before, abs_sum(ref.F))) *
                           static_cast<double>(ctx.env.size());

  double scale = 0, err = 0;
  for (std::size_t k = 0; k < ref_history.size(); ++k) {
    scale = std::max(scale, std::abs(ref_history[k]));
    const double e = std::abs(v.device_history[k] - ref_history[k]);
    err = std::isnan(e) ? INFINITY : std::max(err, e);
  }
  v.delta_error = err / std::max(scale, std::numeric_limits<double>::min());
  const auto terms = static_cast<std::int64_t>(allreduce_max(ctx.env.comm(), static_cast<double>(b.count))) + ctx.env.size();
  v.delta_tolerance = v.tolerance + summation_tolerance(terms, abs_delta, scale);
  const auto F = to_host<T>(it.F()), G = to_host<T>(it.G());
  double fscale = 1, ferr = 0;
  for (std::int64_t i = 0; i < b.count; ++i) {
    fscale = std::max({fscale, static_cast<double>(std::abs(ref.F[i])), static_cast<double>(std::abs(ref.G[i]))});
    const double e = std::max(std::abs(C16(F[i]) - C16(ref.F[i])), std::abs(C16(G[i]) - C16(ref.G[i])));
    ferr = std::isnan(e) ? INFINITY : std::max(ferr, e);
  }
  v.field_error = allreduce_max(ctx.env.comm(), ferr) / allreduce_max(ctx.env.comm(), fscale);
  return v;
}

}  // namespace

void Rk4Kernel::configure(const DeckNode& s, const Environment& env) {
  Config c;
  Problem& p = c.problem;
  p.n = s.integer("n", 256, 1, 1 << 21);
  p.dt = s.real("dt", 1e-3, 0, kMaxReal, true);
  p.steps = s.integer("steps", 100, 0);
  n_setting_ = s.where("n") + ": " + s.path() + ".n";
  steps_setting_ = s.where("steps") + ": " + s.path() + ".steps";
  if (!s.has("g") || s.is_word("g", "auto")) {
    s.text("g", "auto");
    p.g = 1.0 / (static_cast<double>(p.n) * static_cast<double>(p.n));
  } else {
    c.g_auto = false;
    p.g = s.real("g", 0, -kMaxReal, kMaxReal);
  }
  p.per_stage = s.choice("coupling", "per_stage", {"per_step", "per_stage"}) == "per_stage";
  // per_stage never uses delta0: not recorded unless given, so a re-run of the
  // recorded deck does not warn about it.
  if (!p.per_stage || s.has("delta0")) {
    const auto d0 = s.reals("delta0", {0, 0}, 2);
    p.delta0 = Kokkos::complex<double>(d0[0], d0[1]);
  }
  p.kerr = s.real("kerr", 0, -kMaxReal, kMaxReal);
  const std::string method = s.choice("method", "auto", {"auto", "affine", "stages"});
  p.method = method == "affine" ? Method::Affine : method == "stages" ? Method::Stages : Method::Auto;
  if (p.method == Method::Affine && p.kerr != 0)
    s.fail("method", "auto or stages (rk4.kerr = " + fmt(p.kerr) +
                         " makes the model nonlinear; affine needs a linear model, kerr = 0)");
  if (p.per_stage && s.has("delta0"))
    warn(s.where("delta0") + ": rk4.delta0 is ignored with coupling per_stage (delta(0) = g * sum F(0))");
  c.single = s.choice("precision", "single", {"single", "double"}) == "single";

  const DeckNode init = s.child("init");
  c.init_f = parse_init(init, "F", p.n);
  c.init_g = parse_init(init, "G", p.n);

  const DeckNode write = s.child("write");
  c.write_delta = write.has("delta") ? write.text("delta", "") : "";
  if (!c.write_delta.empty() && !ends_with(c.write_delta, ".npy") && !ends_with(c.write_delta, ".csv"))
    write.fail("delta", "a path ending in .npy or .csv");
  c.write_f = write.has("F") ? write.text("F", "") : "";
  c.write_g = write.has("G") ? write.text("G", "") : "";
  if (!c.write_f.empty() && !ends_with(c.write_f, ".npy")) write.fail("F", "a path ending in .npy");
  if (!c.write_g.empty() && !ends_with(c.write_g, ".npy")) write.fail("G", "a path ending in .npy");

  const DeckNode progress = s.child("progress");
  c.progress_every = progress.integer("every", 0, 0);
  c.progress_invariant = progress.boolean("invariant", false);
  c.check_every = s.integer("check_every", 100, 1);
  const DeckNode checkpoint = s.child("checkpoint");
  c.checkpoint_every = checkpoint.integer("every", 0, 0);
  c.checkpoint_path = checkpoint.text("path", "rk4_checkpoint.npy");
  if (!ends_with(c.checkpoint_path, ".npy")) checkpoint.fail("path", "a path ending in .npy");
  c.restart = s.has("restart") ? s.text("restart", "") : "";
  if (!c.restart.empty()) {
    // Collective (every rank configures): integrity first, then the deck match;
    // problems with the file name the deck line and key that gave it.
    try {
      c.resumed = open_checkpoint(env.comm(), c.restart);
      check_restart(*c.resumed, c, c.restart);
    } catch (const UsageError& e) {
      throw UsageError(s.located("restart") + ": " + e.what());
    }
  }
  c.verify_steps = s.integer("verify_steps", 10, 0);
  config_ = c;
  outputs_.clear();
  add_output(write, "delta", c.write_delta);
  add_output(write, "F", c.write_f);
  add_output(write, "G", c.write_g);
  if (c.checkpoint_every > 0 && c.checkpoint_every <= p.steps) add_output(checkpoint, "path", c.checkpoint_path);
}

// Device buffers of an integrator besides fields and history: the step map,
// the sums, the first bad step, and Kokkos' reduction scratch (a generous bound).
constexpr std::uint64_t kIntegratorFixedBytes = 64 << 10;

Rk4Memory memory_per_rank(const Config& c, int ranks, bool verify, bool host) {
  const Problem& p = c.problem;
  const auto count = static_cast<std::uint64_t>(block_of(p.n, 0, ranks).count);  // the largest block
  const std::uint64_t elem = c.single ? 8 : 16;                                 // complex<float | double>
  const auto k0 = static_cast<std::uint64_t>(c.resumed ? c.resumed->step : 0);
  const auto steps = static_cast<std::uint64_t>(p.steps);
  const ByteCount fixed(kIntegratorFixedBytes);
  Rk4Memory m;
  // F, G and their next-step buffers (+ the stage accumulators of stages with per_stage)
  m.fields = ByteCount::of(count, (uses_stages(p) && p.per_stage ? 6 : 4) * elem);
  m.history = ByteCount::of(steps + 1, 16);   // delta[0..steps], complex<double>
  m.total = m.fields + ByteCount::of(count, 8) + m.history + fixed;  // + the invariant, 8 bytes per element
  if (host) {
    m.total += m.history;  // its host copy for the outputs
    if (c.checkpoint_every > 0 || c.resumed)
      m.total += ByteCount::of(count, 2 * elem + 32);  // host F, G and the checkpoint's (F, G) rows
  }
  if (verify && c.verify_steps > 0 && steps > k0) {
    const std::uint64_t checked = std::min<std::uint64_t>(static_cast<std::uint64_t>(c.verify_steps), steps - k0);
    ByteCount check = m.fields + ByteCount::of(k0 + checked + 1, 16) + fixed;
    if (host) check += ByteCount::of(count, 12 * elem);  // host reference: the state and five stage states
    m.total = max(m.total, check);
  }
  return m;
}

std::vector<MemoryNeed> Rk4Kernel::memory_needs(const Environment& env, bool verify) const {
  const Rk4Memory m = memory_per_rank(config_, env.size(), verify, compat::device_is_host_accessible);
  // Blame the setting behind the larger part.
  return {{m.total, m.history.approx() > m.fields.approx() ? steps_setting_ : n_setting_}};
}

void Rk4Kernel::print_plan(std::ostream& os, const Environment& env) const {
  const Problem& p = config_.problem;
  const double mib =
      memory_per_rank(config_, env.size(), true, compat::device_is_host_accessible).total.approx() / (1 << 20);
  os << "rk4: n = " << p.n << " (" << p.elements() << " elements, rows split over " << env.size()
     << " rank(s)), steps = " << p.steps << ", dt = " << fmt(p.dt) << ", g = " << fmt(p.g, 9)
     << (config_.g_auto ? " (1/n^2)" : "") << ", coupling " << (p.per_stage ? "per_stage" : "per_step") << ", "
     << (config_.single ? "single" : "double") << ", method " << (uses_stages(p) ? "stages" : "affine");
  if (p.kerr != 0) os << ", kerr = " << fmt(p.kerr, 9);
  os << ", device memory per rank <= " << format_number(mib) << " MiB";
  if (config_.resumed) os << ", restart from step " << config_.resumed->step;
  os << "\n";
}

KernelReport Rk4Kernel::run(RunContext& ctx) {
  const Problem& p = config_.problem;
  if (p.kerr != 0) {
    const KerrModel model{p.kerr};
    return config_.single ? run_typed<float>(ctx, model) : run_typed<double>(ctx, model);
  }
  return config_.single ? run_typed<float>(ctx, FGModel()) : run_typed<double>(ctx, FGModel());
}

template <class T, class Model>
KernelReport Rk4Kernel::run_typed(RunContext& ctx, const Model& model) {
  const Config& c = config_;
  const Problem& p = c.problem;
  const Environment& env = ctx.env;
  const Block b = block_of(p.n, env.rank(), env.size());
  const std::int64_t k0 = c.resumed ? c.resumed->step : 0;
  KernelReport report;
  Json& m = report.metrics;

  std::optional<Verification> check;
  if (ctx.verify && c.verify_steps > 0 && p.steps > k0)
    check = verify<T>(ctx, c, b, k0, std::min(c.verify_steps, p.steps - k0), model);

  // Allocations and input reads, agreed by all ranks; then start(), whose
  // invariant buffer is allocated after its collectives, agreed again.
  Integrator<T, ExecSpace, Model> it = collectively(env.comm(), "rk4", [&] {
    ScopedRegion setup_region("kmini::rk4::setup");
    Integrator<T, ExecSpace, Model> it(ctx.exec, env.comm(), p, b.count, model);
    const auto prefix = load_state<T>(ctx.exec, c, b, it);
    if (k0 > 0) {
      auto h = Kokkos::create_mirror_view(it.history());
      Kokkos::deep_copy(h, it.history());
      for (std::int64_t k = 0; k < k0; ++k) h(k) = Kokkos::complex<double>(prefix[k].real(), prefix[k].imag());
      Kokkos::deep_copy(ctx.exec, it.history(), h);
    }
    return it;
  });
  collectively(env.comm(), "rk4", [&] {
    ScopedRegion setup_region("kmini::rk4::setup");
    it.start(k0, c.resumed ? &c.resumed->sums : nullptr, true);
  });

  const auto fail_non_finite = [&](std::int64_t bad) {
    const auto history = history_to_host(it.history(), 0, bad);
    std::string msg = "rk4: delta or the fields became non-finite at step " + std::to_string(bad) +
                      " (t = " + fmt(static_cast<double>(bad) * p.dt) + ")";
    if (bad > 0)
      msg += "; last finite delta[" + std::to_string(bad - 1) + "] = " + fmt(history[bad - 1]);
    else
      msg += ": the initial state is not finite";
    if (!c.write_delta.empty() && bad > 0) {
      write_delta<T>(env, ctx.output_path(c.write_delta), std::vector<C16>(history.begin(), history.end() - 1), p.dt);
      msg += "; " + c.write_delta + " holds delta[0.." + std::to_string(bad - 1) + "]";
    }
    throw RuntimeFailure(msg);
  };
  if (const auto bad = it.first_bad_step(); bad >= 0) fail_non_finite(bad);

  // The time loop: two kernel launches per step; the host waits only at
  // checks, progress lines and checkpoints.
  double io_seconds = 0;
  Kokkos::Timer progress_timer;
  std::int64_t progress_from = k0;
  FencedTimer<ExecSpace> loop(ctx.exec);
  {
    ScopedRegion loop_region("kmini::rk4::time_loop");
    for (std::int64_t k = k0 + 1; k <= p.steps; ++k) {
      it.step();
      const bool progress = c.progress_every > 0 && k % c.progress_every == 0;
      const bool checkpoint = c.checkpoint_every > 0 && k % c.checkpoint_every == 0;
      if (!(progress || checkpoint || k == p.steps || k % c.check_every == 0)) continue;
      if (const auto bad = it.first_bad_step(); bad >= 0) fail_non_finite(bad);
      Kokkos::Timer io;
      if (progress) {
        const C16 delta = history_to_host(it.history(), k, k)[0];
        const double drift = (c.progress_invariant && it.tracks_invariant()) ? it.invariant_drift() : NAN;
        if (env.is_root()) {
          ctx.out << "rk4: step " << k << "/" << p.steps << "  t = " << fmt(static_cast<double>(k) * p.dt)
                    << "  |delta| = " << fmt(std::abs(delta)) << "  "
                    << fmt((k - progress_from) / progress_timer.seconds(), 4) << " steps/s";
          if (!std::isnan(drift)) ctx.out << "  invariant drift = " << fmt(drift, 3);
          ctx.out << std::endl;
        }
        progress_timer.reset();
        progress_from = k;
      }
      if (checkpoint) {
        ScopedRegion checkpoint_region("kmini::rk4::checkpoint");
        write_state_checkpoint<T>(env, c, ctx.output_path(c.checkpoint_path), it, b);
      }
      io_seconds += io.seconds();
    }
  }
  const double my_loop_seconds = loop.seconds() - io_seconds;
  const double loop_seconds = allreduce_max(env.comm(), my_loop_seconds);

  // Outputs.
  std::optional<ScopedRegion> write_region(std::in_place, "kmini::rk4::write");
  const auto history = history_to_host(it.history(), 0, p.steps);
  if (!c.write_delta.empty()) write_delta<T>(env, ctx.output_path(c.write_delta), history, p.dt);
  const npy::DType dtype = c.single ? npy::DType::C8 : npy::DType::C16;
  for (const auto& [path, field] : {std::make_pair(c.write_f, it.F()), std::make_pair(c.write_g, it.G())}) {
    if (path.empty()) continue;
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), field);
    npy::write_distributed(env.comm(), ctx.output_path(path), dtype, {p.n, p.n}, static_cast<std::uint64_t>(b.first),
                           static_cast<std::uint64_t>(b.count), h.data());
  }
  write_region.reset();

  // Metrics.
  const std::int64_t steps_run = p.steps - k0;
  // affine and stages per_step: read F, G; write F, G. stages per_stage: the
  // four stage kernels read 20 and write 14 complex values per element.
  const bool stages = !it.affine();
  const double bytes_per_element_step = (stages && p.per_stage ? 34.0 : 4.0) * sizeof(Kokkos::complex<T>);
  const double element_steps = static_cast<double>(p.elements()) * static_cast<double>(steps_run);
  const double rank_bandwidth = static_cast<double>(b.count) * steps_run * bytes_per_element_step / loop_seconds;
  m["n"] = Json(static_cast<long long>(p.n));
  m["elements"] = Json(static_cast<long long>(p.elements()));
  m["elements_per_rank_max"] = Json(static_cast<long long>(block_of(p.n, 0, env.size()).count));
  m["precision"] = c.single ? "single" : "double";
  m["coupling"] = p.per_stage ? "per_stage" : "per_step";
  m["method"] = stages ? "stages" : "affine";
  m["kerr"] = p.kerr;
  m["g"] = p.g;
  m["dt"] = p.dt;
  m["start_step"] = Json(static_cast<long long>(k0));
  m["steps_run"] = Json(static_cast<long long>(steps_run));
  m["loop_seconds"] = loop_seconds;
  m["checkpoint_and_progress_seconds"] = allreduce_max(env.comm(), io_seconds);
  m["element_steps_per_s"] = element_steps / loop_seconds;
  m["bytes_per_element_step"] = bytes_per_element_step;
  m["effective_bandwidth_bytes_per_s_per_rank"] = rank_bandwidth;
  m["aggregate_bandwidth_bytes_per_s"] = element_steps * bytes_per_element_step / loop_seconds;
  double roof = NAN;
  if (steps_run > 0) {
    roof = ctx.roof_bandwidth();
    m["roof_bandwidth_bytes_per_s"] = roof;
    m["fraction_of_roof"] = rank_bandwidth / roof;
  }
  const C16 last = history.back();
  m["delta_final"] = Json::array_of(std::vector<double>{last.real(), last.imag()});
  m["delta_final_abs"] = std::abs(last);
  if (it.tracks_invariant()) {
    m["invariant_max_drift"] = it.invariant_drift();
    m["invariant_note"] = "max over elements of | |F|^2 + (G - 1/2)^2 - its value at the start of this run |";
  } else {
    m["invariant_max_drift"] = nullptr;
    m["invariant_note"] = "G is not real: |F|^2 + (G - 1/2)^2 is not conserved";
  }

  SummaryRow row;
  row.label = std::string("rk4.") + (p.per_stage ? "per_stage" : "per_step") + (stages ? "_stages" : "") +
              (p.kerr != 0 ? "_kerr" : "") + (c.single ? "_c8" : "_c16");
  row.size = "n=" + std::to_string(p.n) + " steps=" + std::to_string(steps_run);
  row.seconds = loop_seconds;
  row.rank_seconds = my_loop_seconds;
  row.throughput = rank_bandwidth;
  row.aggregate = element_steps * bytes_per_element_step / loop_seconds;
  row.unit = "B/s";
  row.roof_fraction = rank_bandwidth / roof;
  row.roof = kRoofStream;
  if (check) {
    // The main run must reproduce the verification run bitwise (same code, same ranks).
    bool same = true;
    for (std::size_t k = 0; k < check->device_history.size(); ++k)
      same = same && std::memcmp(&check->device_history[k], &history[k0 + k], sizeof(C16)) == 0;
    Json& v = m["verification"];
    v["steps"] = Json(static_cast<long long>(check->steps));
    v["delta_relative_error"] = check->delta_error;
    v["field_relative_error"] = check->field_error;
    v["tolerance"] = check->tolerance;
    v["delta_tolerance"] = check->delta_tolerance;
    v["bitwise_reproducible"] = same;
    report.verified = check->ok() && same;
    row.verified = report.verified;
  }
  report.rows.push_back(row);
  return report;
}

}  // namespace kmini::rk4
