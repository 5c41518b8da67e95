#include "stream/stream.hpp"

#include "core/collective.hpp"
#include "core/format.hpp"
#include "core/huge_pages.hpp"
#include "kernel/roof.hpp"
#include "kernel/run_loop.hpp"
#include "stream/impl/stream_kernels.hpp"
#include "stream/impl/stream_reference.hpp"

#include <algorithm>
#include <limits>
#include <ostream>

namespace kmini::stream {

namespace {

template <class T>
const char* suffix();
template <>
const char* suffix<double>() {
  return "f64";
}
template <>
const char* suffix<std::int32_t>() {
  return "i32";
}

// Distinct seeds per array so a and b differ.
std::uint64_t seed_for(const RunContext& ctx, std::uint64_t array) { return ctx.seed * 16 + array; }

// Times `body` `repeat` times, synchronised across ranks (best_of_repeats).
template <class Body>
BestOverRepeats best_time(RunContext& ctx, std::int64_t repeat, Body&& body) {
  return best_of_repeats(ctx.env.comm(), ctx.exec, repeat, body);
}

// The arrays of one op and their host mirrors, allocated on every rank before
// any collective (collectively): a rank that cannot allocate stops them all.
template <class T>
struct Arrays {
  using Device = Kokkos::View<T*, MemSpace>;
  Device a, b, c;
  typename Device::HostMirror ha, hb, hc;
};

template <class T>
Arrays<T> allocate(const RunContext& ctx, std::int64_t n, bool with_b) {
  return collectively(ctx.env.comm(), "stream", [&] {
    using Device = typename Arrays<T>::Device;
    const Device a = huge_page_view<Device>("kmini::stream::a", n),
                 b = huge_page_view<Device>("kmini::stream::b", with_b ? n : 0),
                 c = huge_page_view<Device>("kmini::stream::c", n);
    return Arrays<T>{
        a, b, c, Kokkos::create_mirror_view(a), Kokkos::create_mirror_view(b), Kokkos::create_mirror_view(c)};
  });
}

template <class T>
OpResult run_add(RunContext& ctx, std::int64_t n, std::int64_t repeat, bool transfers = true,
                 const std::string& prefix = "kmini::stream") {
  ScopedRegion region(prefix + "::add_" + suffix<T>());
  const std::uint64_t first = static_cast<std::uint64_t>(n) * static_cast<std::uint64_t>(ctx.env.rank());
  const Arrays<T> arrays = allocate<T>(ctx, n, true);
  const auto &a = arrays.a, &b = arrays.b, &c = arrays.c;
  fill(ctx.exec, a, seed_for(ctx, 1), first, prefix);
  fill(ctx.exec, b, seed_for(ctx, 2), first, prefix);

  OpResult r;
  r.name = std::string("add_") + suffix<T>();
  r.bytes = 3.0 * static_cast<double>(n) * sizeof(T);
  const BestOverRepeats best = best_time(ctx, repeat, [&] { add(ctx.exec, a, b, c, prefix); });
  r.best_seconds = best.slowest();
  r.rank_seconds = best.mine();

  if (!transfers) return r;  // a roof probe: the device-only time is all it needs
  // Transfer-inclusive: inputs host->device, kernel, output device->host.
  // On host backends the mirrors alias device memory and the copies are no-ops.
  const auto &ha = arrays.ha, &hb = arrays.hb, &hc = arrays.hc;
  Kokkos::deep_copy(ctx.exec, ha, a);
  Kokkos::deep_copy(ctx.exec, hb, b);
  r.transfer_inclusive_seconds = best_time(ctx, repeat, [&] {
                                   Kokkos::deep_copy(ctx.exec, a, ha);
                                   Kokkos::deep_copy(ctx.exec, b, hb);
                                   add(ctx.exec, a, b, c);
                                   Kokkos::deep_copy(ctx.exec, hc, c);
                                 }).slowest();
  if (ctx.verify) {
    ctx.exec.fence();
    const auto check = reference::add<T>(hc, seed_for(ctx, 1), seed_for(ctx, 2), first);
    r.verified_ok = check.ok;
    r.max_error = check.max_error;
  }
  return r;
}

// a = a + b in place, `repeat` times and as many transfer-inclusive; the
// reference repeats the adds (every call accumulates, on every backend: the
// transfer-inclusive calls start from the host copy of the latest a).
OpResult run_add_in_place(RunContext& ctx, std::int64_t n, std::int64_t repeat, bool transfers = true,
                          const std::string& prefix = "kmini::stream") {
  using T = double;
  ScopedRegion region(prefix + "::add_in_place_f64");
  const std::uint64_t first = static_cast<std::uint64_t>(n) * static_cast<std::uint64_t>(ctx.env.rank());
  const Arrays<T> arrays = allocate<T>(ctx, n, true);
  const auto &a = arrays.a, &b = arrays.b;
  fill(ctx.exec, a, seed_for(ctx, 4), first, prefix);
  fill(ctx.exec, b, seed_for(ctx, 5), first, prefix);

  OpResult r;
  r.name = "add_in_place_f64";
  r.bytes = 3.0 * static_cast<double>(n) * sizeof(T);
  const BestOverRepeats best = best_time(ctx, repeat, [&] { add_in_place(ctx.exec, a, b, prefix); });
  r.best_seconds = best.slowest();
  r.rank_seconds = best.mine();
  if (!transfers) return r;
  const auto &ha = arrays.ha, &hb = arrays.hb;
  Kokkos::deep_copy(ctx.exec, ha, a);
  Kokkos::deep_copy(ctx.exec, hb, b);
  r.transfer_inclusive_seconds = best_time(ctx, repeat, [&] {
                                   Kokkos::deep_copy(ctx.exec, a, ha);
                                   Kokkos::deep_copy(ctx.exec, b, hb);
                                   add_in_place(ctx.exec, a, b);
                                   Kokkos::deep_copy(ctx.exec, ha, a);
                                 }).slowest();
  if (ctx.verify) {
    ctx.exec.fence();
    const auto check = reference::add_in_place<T>(ha, seed_for(ctx, 4), seed_for(ctx, 5), first, 2 * repeat);
    r.verified_ok = check.ok;
    r.max_error = check.max_error;
  }
  return r;
}

OpResult run_exp(RunContext& ctx, std::int64_t n, std::int64_t repeat) {
  ScopedRegion region("kmini::stream::exp_f32");
  const std::uint64_t first = static_cast<std::uint64_t>(n) * static_cast<std::uint64_t>(ctx.env.rank());
  const Arrays<float> arrays = allocate<float>(ctx, n, false);
  const auto &a = arrays.a, &c = arrays.c;
  fill(ctx.exec, a, seed_for(ctx, 3), first);

  OpResult r;
  r.name = "exp_f32";
  r.bytes = 2.0 * static_cast<double>(n) * sizeof(float);
  const BestOverRepeats best = best_time(ctx, repeat, [&] { exp(ctx.exec, a, c); });
  r.best_seconds = best.slowest();
  r.rank_seconds = best.mine();
  const auto &ha = arrays.ha, &hc = arrays.hc;
  Kokkos::deep_copy(ctx.exec, ha, a);
  r.transfer_inclusive_seconds = best_time(ctx, repeat, [&] {
                                   Kokkos::deep_copy(ctx.exec, a, ha);
                                   exp(ctx.exec, a, c);
                                   Kokkos::deep_copy(ctx.exec, hc, c);
                                 }).slowest();
  if (ctx.verify) {
    ctx.exec.fence();
    const auto check = reference::exp(hc, seed_for(ctx, 3), first);
    r.verified_ok = check.ok;
    r.max_error = check.max_error;
  }
  return r;
}

}  // namespace

std::uint64_t bytes_per_element(const Config& c) {
  const bool add = std::find(c.ops.begin(), c.ops.end(), "add") != c.ops.end();
  return add ? 3 * sizeof(double) : 2 * sizeof(float);
}

void StreamKernel::configure(const DeckNode& s, const Environment&) {
  const KernelDeclaration& d = declaration();
  config_.n = s.integer(d.key("n"));
  n_setting_ = s.located("n");
  config_.ops = s.choice_list(d.key("ops"));
  if (config_.ops.empty()) s.fail("ops", "at least one of add | exp");
  config_.repeat = s.integer(d.key("repeat"));
}

void StreamKernel::print_plan(std::ostream& os, const Environment& env) const {
  const double mib = static_cast<double>(config_.n) * static_cast<double>(bytes_per_element(config_)) / (1 << 20);
  const auto total = checked_mul(static_cast<std::uint64_t>(config_.n), static_cast<std::uint64_t>(env.size()));
  os << "stream: n = " << config_.n << " per rank ("
     << (total ? std::to_string(*total) : format_number(double(config_.n) * env.size())) << " total), ops =";
  for (const auto& o : config_.ops) os << " " << o;
  os << ", repeat = " << config_.repeat << ", device memory per rank <= " << format_number(mib) << " MiB\n";
}

std::vector<MemoryNeed> StreamKernel::memory_needs(const Environment&, bool) const {
  return {{ByteCount::of(static_cast<std::uint64_t>(config_.n), bytes_per_element(config_)), n_setting_}};
}

KernelReport StreamKernel::run(RunContext& ctx) {
  // Each op allocates, times and checks its arrays: the time to solution is
  // one compute phase, and the report.
  PhaseClock<ExecSpace> clock(ctx.exec);
  clock.start("compute");
  std::vector<OpResult> results;
  for (const auto& op : config_.ops) {
    if (op == "add") {
      results.push_back(run_add<double>(ctx, config_.n, config_.repeat));
      results.push_back(run_add<std::int32_t>(ctx, config_.n, config_.repeat));
      results.push_back(run_add_in_place(ctx, config_.n, config_.repeat));
    } else {
      results.push_back(run_exp(ctx, config_.n, config_.repeat));
    }
  }

  KernelReport report;
  double roof = 0;
  for (const auto& r : results) roof = std::max(roof, r.bytes / r.best_seconds);
  roof *= roof_test_scale();
  ctx.keep_roof_bandwidth(roof);

  Json& m = report.metrics;
  m["n_per_rank"] = Json(static_cast<long long>(config_.n));
  m["repeat"] = Json(static_cast<long long>(config_.repeat));
  m["roof_bandwidth_bytes_per_s"] = roof;
  note_transfers(m);
  Json& ops = m["ops"];
  bool all_ok = true;
  for (const auto& r : results) {
    Json& o = ops[r.name];
    o["bytes_per_rank"] = r.bytes;
    o["best_seconds"] = r.best_seconds;
    o["bandwidth_bytes_per_s"] = r.bytes / r.best_seconds;
    o["aggregate_bandwidth_bytes_per_s"] = r.bytes * ctx.env.size() / r.best_seconds;
    o["transfer_inclusive_seconds"] = r.transfer_inclusive_seconds;
    o["fraction_of_roof"] = r.bytes / r.best_seconds / roof;
    if (ctx.verify) {
      o["verified"] = r.verified_ok;
      o[r.name.rfind("exp", 0) == 0 ? "max_relative_error" : "max_abs_error"] = r.max_error;
    }
    all_ok = all_ok && r.verified_ok;

    SummaryRow row = rate_row("stream." + r.name, "n=" + std::to_string(config_.n), r.best_seconds, r.rank_seconds,
                              r.bytes * ctx.env.size(), ctx.env.size(), "B/s");
    row.roof_fraction = r.bytes / r.best_seconds / roof;
    row.roof = kRoofStream;
    if (r.name == "add_f64") {  // the declared figure of merit: c = a + b in float64
      report.fom = row.aggregate;
      report.fom_seconds = row.seconds;
      report.roof = {kRoofStream, "B/s", roof * ctx.env.size(), row.roof_fraction};
    }
    if (ctx.verify) row.verified = r.verified_ok;
    report.rows.push_back(row);
  }
  if (ctx.verify) {
    report.verified = all_ranks_ok(ctx.env.comm(), all_ok);  // every rank checked its own part
    m["exp_relative_tolerance"] = reference::kExpRelativeTolerance;
  }
  report.phases = clock.finish();
  return report;
}

double measure_add_bandwidth(RunContext& ctx, std::int64_t n, std::int64_t repeat, const std::string& prefix) {
  const bool verify = ctx.verify;
  ctx.verify = false;
  const OpResult copy = run_add<double>(ctx, n, repeat, false, prefix);
  const OpResult in_place = run_add_in_place(ctx, n, repeat, false, prefix);
  ctx.verify = verify;
  return std::max(copy.bytes / copy.best_seconds, in_place.bytes / in_place.best_seconds) * roof_test_scale();
}

}  // namespace kmini::stream
