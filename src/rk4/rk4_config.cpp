// The rk4 deck section (all validated, a restart checkpoint opened and
// matched against the deck, before anything is allocated), memory per rank
// and the plan --dry-run prints.
#include "core/errors.hpp"
#include "core/format.hpp"
#include "core/kokkos_compat.hpp"
#include "core/partition.hpp"
#include "io/npy.hpp"
#include "rk4/impl/rk4_detail.hpp"
#include "rk4/rk4.hpp"
#include "rk4/rk4_api.hpp"

#include <algorithm>
#include <complex>
#include <ostream>
#include <string>

namespace kmini::rk4 {

using namespace detail;

namespace {

// Bytes of one complex value: a field element in single and double precision,
// and a delta (always double).
constexpr int kSingleBytes = sizeof(std::complex<float>);
constexpr int kDoubleBytes = sizeof(std::complex<double>);
constexpr std::uint64_t kDeltaBytes = sizeof(std::complex<double>);
constexpr std::uint64_t kInvariantBytes = sizeof(double);  // I0, one per element

// Field-sized device buffers: F and G, updated in place by every method.
constexpr std::uint64_t kFieldBuffers = 2;
// Field-sized host copies of the reference in the verification: the state
// and five stage states, F and G each.
constexpr std::uint64_t kReferenceFieldCopies = 12;
// Host copies for a checkpoint or restart: F and G in the field precision,
// and the checkpoint's (F, G) row in double.
constexpr std::uint64_t kCheckpointRowBytes = 2 * kDeltaBytes;

// Device buffers of an integrator besides fields and history: the step map,
// the sums, the first bad step, and Kokkos' reduction scratch (a generous bound).
constexpr std::uint64_t kIntegratorFixedBytes = 64 << 10;

}  // namespace

Block block_of(std::int64_t n, int rank, int ranks) {
  const BlockRange rows = block_range(n, rank, ranks);  // whole rows of n elements
  return {rows.first * n, rows.count * n};
}

namespace {

InitSpec parse_init(const DeckNode& init, const std::string& key, std::int64_t n) {
  const KernelDeclaration& d = declaration();
  const std::string p = "init." + key + ".";
  InitSpec spec;  // default: all ones, like the original formulation
  if (!init.has(key)) return spec;
  const DeckNode f = init.child(d.key("init." + key));
  const std::string kind = f.one_of({"fill", "file", "random"});
  if (kind == "fill") {
    const auto v = f.reals(d.key(p + "fill"));
    spec.kind = InitSpec::Kind::Fill;
    spec.re = v[0];
    spec.im = v[1];
  } else if (kind == "file") {
    spec.kind = InitSpec::Kind::File;
    spec.path = f.text(d.key(p + "file"));
    try {
      const npy::Info info = npy::read_info(spec.path);
      npy::require_dtype(info, {npy::DType::C8, npy::DType::C16});
      npy::require_shape(info, {n, n});
    } catch (const UsageError& e) {
      throw UsageError(f.located("file") + ": " + e.what());
    }
  } else {
    const DeckNode r = f.child(d.key(p + "random"));
    spec.kind = InitSpec::Kind::Random;
    spec.seed = static_cast<std::uint64_t>(r.integer(d.key(p + "random.seed")));
    spec.scale = r.real(d.key(p + "random.scale"));
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
  const int bytes = c.single ? kSingleBytes : kDoubleBytes;
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

// The step kernels' launch (rk4.chunk, occupancy, grid, loads); grid and loads
// auto are the build's defaults, resolved as the library resolves them (rk4_api.hpp).
void read_step_kernels(const DeckNode& s, const KernelDeclaration& d, Problem& p) {
  const std::string chunk = s.choice(d.key("chunk"));
  p.chunk = chunk == "auto" ? 0 : std::stoi(chunk);
  p.full_occupancy = s.choice(d.key("occupancy")) == "full";
  using Grid = IntegrateParams::Grid;
  using Loads = IntegrateParams::Loads;
  const std::string grid = s.choice(d.key("grid")), loads = s.choice(d.key("loads"));
  p.wave = uses_wave_grid(grid == "wave" ? Grid::Wave : grid == "items" ? Grid::Items : Grid::Auto);
  p.vector_loads = uses_vector_loads(loads == "vector"   ? Loads::Vector
                                     : loads == "scalar" ? Loads::Scalar
                                                         : Loads::Auto,
                                     p.chunk);
  if (p.vector_loads && p.chunk > 0)
    s.fail("chunk", "auto with rk4.loads: vector (a 16-byte pack sets the elements per work item)");
}

}  // namespace

void Rk4Kernel::configure(const DeckNode& s, const Environment& env) {
  const KernelDeclaration& d = declaration();
  Config c;
  Problem& p = c.problem;
  p.n = s.integer(d.key("n"));
  p.dt = s.real(d.key("dt"));
  p.steps = s.integer(d.key("steps"));
  n_setting_ = s.located("n");
  steps_setting_ = s.located("steps");
  if (s.is_auto(d.key("g"))) {
    p.g = 1.0 / (static_cast<double>(p.n) * static_cast<double>(p.n));
  } else {
    c.g_auto = false;
    p.g = s.real(d.key("g"));
  }
  p.per_stage = s.choice(d.key("coupling")) == "per_stage";
  // per_stage never uses delta0: not recorded unless given, so a re-run of the
  // recorded deck does not warn about it.
  if (!p.per_stage || s.has("delta0")) {
    const auto d0 = s.reals(d.key("delta0"));
    p.delta0 = Kokkos::complex<double>(d0[0], d0[1]);
  }
  p.kerr = s.real(d.key("kerr"));
  const std::string method = s.choice(d.key("method"));
  p.method = method == "affine" ? Method::Affine : method == "stages" ? Method::Stages : Method::Auto;
  if (p.method == Method::Affine && p.kerr != 0)
    s.fail("method", "auto or stages (rk4.kerr = " + fmt(p.kerr) +
                         " makes the model nonlinear; affine needs a linear model, kerr = 0)");
  if (p.per_stage && s.has("delta0"))
    warn(s.where("delta0") + ": rk4.delta0 is ignored with coupling per_stage (delta(0) = g * sum F(0))");
  c.single = s.choice(d.key("precision")) == "single";
  read_step_kernels(s, d, p);

  const DeckNode init = s.child(d.key("init"));
  c.init_f = parse_init(init, "F", p.n);
  c.init_g = parse_init(init, "G", p.n);

  const DeckNode write = s.child(d.key("write"));
  c.write_delta = write.output_path(d.key("write.delta"));
  c.write_f = write.output_path(d.key("write.F"));
  c.write_g = write.output_path(d.key("write.G"));

  const DeckNode progress = s.child(d.key("progress"));
  c.progress_every = progress.integer(d.key("progress.every"));
  c.progress_invariant = progress.boolean(d.key("progress.invariant"));
  c.check_every = s.integer(d.key("check_every"));
  const DeckNode checkpoint = s.child(d.key("checkpoint"));
  c.checkpoint_every = checkpoint.integer(d.key("checkpoint.every"));
  c.checkpoint_path = checkpoint.output_path(d.key("checkpoint.path"));
  c.restart = s.has("restart") ? s.text(d.key("restart")) : "";
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
  c.verify_steps = s.integer(d.key("verify_steps"));
  config_ = c;
  outputs_.clear();
  add_output(write, "delta", c.write_delta);
  add_output(write, "F", c.write_f);
  add_output(write, "G", c.write_g);
  if (c.checkpoint_every > 0 && c.checkpoint_every <= p.steps) add_output(checkpoint, "path", c.checkpoint_path);
}

Rk4Memory memory_per_rank(const Config& c, int ranks, bool verify, bool host) {
  const Problem& p = c.problem;
  const auto count = static_cast<std::uint64_t>(block_of(p.n, 0, ranks).count);  // the largest block
  const std::uint64_t elem = c.single ? kSingleBytes : kDoubleBytes;
  const auto k0 = static_cast<std::uint64_t>(c.resumed ? c.resumed->step : 0);
  const auto steps = static_cast<std::uint64_t>(p.steps);
  const ByteCount fixed(kIntegratorFixedBytes);
  Rk4Memory m;
  m.fields = ByteCount::of(count, kFieldBuffers * elem);  // F, G
  m.history = ByteCount::of(steps + 1, kDeltaBytes);      // delta[0..steps]
  m.total = m.fields + ByteCount::of(count, kInvariantBytes) + m.history + fixed;
  if (host) {
    m.total += m.history;  // its host copy for the outputs
    if (c.checkpoint_every > 0 || c.resumed) m.total += ByteCount::of(count, 2 * elem + kCheckpointRowBytes);
    if (!c.write_g.empty()) m.total += ByteCount::of(count, elem);  // G joined into complex for its .npy
  }
  if (verify && c.verify_steps > 0 && steps > k0) {
    const std::uint64_t checked = std::min<std::uint64_t>(static_cast<std::uint64_t>(c.verify_steps), steps - k0);
    ByteCount check = m.fields + ByteCount::of(k0 + checked + 1, kDeltaBytes) + fixed;
    if (host) check += ByteCount::of(count, kReferenceFieldCopies * elem);
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

}  // namespace kmini::rk4
