#include "stream/stream.hpp"

#include "core/collective.hpp"
#include "core/huge_pages.hpp"
#include "kernel/roof.hpp"
#include "kernel/run_loop.hpp"
#include "stream/impl/stream_kernels.hpp"
#include "stream/impl/stream_reference.hpp"
#include "stream/stream_report.hpp"

#include <algorithm>

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

  KernelReport report = report_ops(ctx, config_, results);
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
