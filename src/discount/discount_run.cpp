// DiscountKernel::run: the phases of one discount run, each a Kokkos
// profiling region (kmini::discount::<phase>): inputs, warm_up, kernel and
// end_to_end (interleaved), verify, the reductions combined over ranks,
// write; then the report (discount_report.cpp).
#include "core/collective.hpp"
#include "core/errors.hpp"
#include "core/format.hpp"
#include "discount/discount.hpp"
#include "discount/discount_report.hpp"
#include "discount/impl/discount_data.hpp"
#include "discount/impl/discount_kernels.hpp"
#include "discount/impl/discount_reference.hpp"
#include "kernel/run_loop.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

namespace kmini::discount {

// The last-level cache in bytes: sysconf's L3 (glibc reports all of the
// socket's), else the largest cache level of cpu0 in /sys (on a chiplet CPU
// one chiplet's), else 0 (unknown).
std::int64_t last_level_cache_bytes() {
#ifdef _SC_LEVEL3_CACHE_SIZE
  const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (l3 > 0) return l3;
#endif
  std::int64_t best = 0;
  for (int i = 0; i < 8; ++i) {
    std::ifstream f("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/size");
    std::int64_t v = 0;
    std::string unit;
    if (f >> v) {
      f >> unit;
      best = std::max(best, unit == "K" ? v << 10 : unit == "M" ? v << 20 : v);
    }
  }
  return best;
}

StoreChoice choose_stores(std::int64_t cv_bytes, std::size_t element_size, const std::function<double(bool)>& time_pass,
                          bool remember) {
  StoreChoice choice;
  if (cv_bytes <= kMeasureStoresAbove) return choice;
  // Size classes: a power of two of cv bytes, and the element size.
  int size_class = 0;
  while ((cv_bytes >> size_class) > 1) ++size_class;
  const std::pair<int, std::size_t> key{size_class, element_size};
  static std::mutex guard;
  static std::map<std::pair<int, std::size_t>, StoreChoice> known;
  if (remember) {
    const std::lock_guard<std::mutex> lock(guard);
    const auto it = known.find(key);
    if (it != known.end()) {
      choice = it->second;
      choice.measured = false;
      choice.remembered = true;
      return choice;
    }
  }
  choice.regular_seconds = choice.streaming_seconds = std::numeric_limits<double>::infinity();
  for (int pair = 0; pair < kStorePairs; ++pair) {
    choice.regular_seconds = std::min(choice.regular_seconds, time_pass(false));
    choice.streaming_seconds = std::min(choice.streaming_seconds, time_pass(true));
  }
  choice.streaming = choice.streaming_seconds < choice.regular_seconds;
  choice.measured = true;
  if (remember) {
    const std::lock_guard<std::mutex> lock(guard);
    known.emplace(key, choice);
  }
  return choice;
}

namespace {

using namespace detail;

template <class T>
MPI_Datatype mpi_type();
template <>
MPI_Datatype mpi_type<double>() {
  return MPI_DOUBLE;
}
template <>
MPI_Datatype mpi_type<float>() {
  return MPI_FLOAT;
}

// The device arrays and their host mirrors (inputs, cv, sums).
template <class T>
struct Arrays {
  DeviceArrays<T> a;
  typename Kokkos::View<T**, Kokkos::LayoutRight, MemSpace>::HostMirror mult;
  typename Kokkos::View<T***, Kokkos::LayoutRight, MemSpace>::HostMirror disc, cv;
  typename Kokkos::View<T*, MemSpace>::HostMirror sums;
};

// Phase "inputs": every rank allocates, then reads or generates its inputs;
// each part is agreed by all ranks (a failure on one, such as a file read, is
// the same error on all). Returns how many input values are not finite.
template <class T>
Arrays<T> load_inputs(RunContext& ctx, const Config& c, const Shape& s, std::int64_t& nonfinite) {
  const Environment& env = ctx.env;
  const std::int64_t blocks = (s.row + kBlock - 1) / kBlock;
  const auto arrays = collectively(env.comm(), "discount", [&] {
    DeviceArrays<T> a(s.D, s.M, s.O, c.computes_cv(), c.reduce, blocks);
    return Arrays<T>{a, Kokkos::create_mirror_view(a.mult), Kokkos::create_mirror_view(a.disc),
                     Kokkos::create_mirror_view(a.cv), Kokkos::create_mirror_view(a.sums)};
  });
  ScopedRegion region("kmini::discount::inputs");
  std::int64_t nonfinite_mult = 0, nonfinite_disc = 0;
  collectively(env.comm(), "discount", [&] {
    nonfinite_mult = load_input<T>(ctx.exec, c.mult_by, 0, arrays.a.mult, arrays.mult);
    nonfinite_disc = load_input<T>(ctx.exec, c.discount, static_cast<std::uint64_t>(s.slice.first * s.row),
                                   arrays.a.disc, arrays.disc);
  });
  // mult_by is whole on every rank, discount is split by dates.
  nonfinite_disc = static_cast<std::int64_t>(allreduce_sum(env.comm(), static_cast<double>(nonfinite_disc)));
  if (env.is_root() && nonfinite_mult + nonfinite_disc > 0)
    ctx.err << "kmini: warning: discount: the input files hold " << nonfinite_mult << " (mult_by) and "
            << nonfinite_disc << " (discount) NaN or infinite values; they propagate into the outputs as in numpy\n";
  nonfinite = nonfinite_mult + nonfinite_disc;
  return arrays;
}

// Phases "warm_up", "kernel" and "end_to_end": kernel only, and end to end
// (inputs host->device, kernel, results device->host), each the best of
// `repeat` of the slowest rank. One untimed run first, and the two
// interleaved, so both see the same warmed-up machine (timed one after the
// other, the first repeats of kernel-only ran cold and e2e often came out
// faster than the kernel alone).
template <class T>
Timings time_kernel(RunContext& ctx, const Config& c, const Arrays<T>& arrays) {
  const Environment& env = ctx.env;
  const DeviceArrays<T>& a = arrays.a;
  Timings t;
  {
    ScopedRegion region("kmini::discount::warm_up");
    compute(ctx.exec, c, a);
    ctx.exec.fence();
  }
  for (std::int64_t r = 0; r < c.repeat; ++r) {
    {
      ScopedRegion region("kmini::discount::kernel");
      t.kernel.add(env.comm(), time_together(env.comm(), ctx.exec, [&] { compute(ctx.exec, c, a); }));
    }
    ScopedRegion region("kmini::discount::end_to_end");
    MPI_Barrier(env.comm());
    FencedTimer<ExecSpace> timer(ctx.exec);
    Kokkos::deep_copy(ctx.exec, a.mult, arrays.mult);
    Kokkos::deep_copy(ctx.exec, a.disc, arrays.disc);
    const double h2d = timer.seconds();
    compute(ctx.exec, c, a);
    const double kernel_done = timer.seconds();
    Kokkos::deep_copy(ctx.exec, arrays.cv, a.cv);
    Kokkos::deep_copy(ctx.exec, arrays.sums, a.sums);
    const double total = timer.seconds();
    const double slowest = allreduce_max(env.comm(), total);
    const double h2d_max = allreduce_max(env.comm(), h2d);
    const double kernel_max = allreduce_max(env.comm(), kernel_done - h2d);
    const double d2h_max = allreduce_max(env.comm(), total - kernel_done);
    if (slowest < t.end_to_end) t = {t.kernel, slowest, total, h2d_max, kernel_max, d2h_max};
  }
  ctx.exec.fence();
  return t;
}

// Phase "verify": bitwise against the host reference on this rank's slice.
template <class T>
void verify(RunContext& ctx, const Config& c, const Shape& s, const Arrays<T>& h, KernelReport& report) {
  ScopedRegion region("kmini::discount::verify");
  Json& m = report.metrics;
  std::int64_t cv_bad = -1, sums_bad = -1;
  if (c.computes_cv()) cv_bad = reference::first_cv_difference(h.mult.data(), h.disc.data(), h.cv.data(), s.D, s.row);
  if (c.reduce == Reduce::PerDate) {
    const auto ref = reference::per_date(h.mult.data(), h.disc.data(), s.D, s.row);
    sums_bad = reference::first_difference<T>(ref.data(), h.sums.data(), s.D);
  } else if (c.reduce == Reduce::PerId) {
    const auto ref = reference::per_id(h.mult.data(), h.disc.data(), s.D, s.M, s.O);
    sums_bad = reference::first_difference<T>(ref.data(), h.sums.data(), s.M);
  }
  report.verified = all_ranks_ok(ctx.env.comm(), cv_bad < 0 && sums_bad < 0);
  m["verification"] = "bitwise equality with the host reference on every rank's slice (NaN matches NaN)";
  if (cv_bad >= 0) m["first_cv_mismatch_local_index"] = Json(static_cast<long long>(cv_bad));
  if (sums_bad >= 0) m["first_reduced_mismatch_local_index"] = Json(static_cast<long long>(sums_bad));
}

// The reductions over ranks: per_date values live on their date's rank;
// per_id partials are added in rank order on rank 0 (deterministic for a
// given rank count) and broadcast.
template <class T>
struct Reduced {
  std::vector<T> per_id;  // per_id: the global result on every rank
  double checksum = 0;
};

template <class T>
Reduced<T> combine_reductions(RunContext& ctx, const Config& c, const Shape& s, const Arrays<T>& h) {
  const Environment& env = ctx.env;
  Reduced<T> r;
  const std::int64_t M = s.M;
  if (c.reduce == Reduce::PerId) {
    std::vector<T> all(env.is_root() ? static_cast<std::size_t>(M) * env.size() : 0);
    MPI_Gather(h.sums.data(), static_cast<int>(M), mpi_type<T>(), all.data(), static_cast<int>(M), mpi_type<T>(), 0,
               env.comm());
    r.per_id.assign(static_cast<std::size_t>(M), T(0));
    if (env.is_root())
      for (int q = 0; q < env.size(); ++q)
        for (std::int64_t i = 0; i < M; ++i) r.per_id[i] += all[q * M + i];
    MPI_Bcast(r.per_id.data(), static_cast<int>(M), mpi_type<T>(), 0, env.comm());
    for (const T v : r.per_id) r.checksum += static_cast<double>(v);
  } else if (c.reduce == Reduce::PerDate) {
    double local = 0;
    for (std::int64_t d = 0; d < s.D; ++d) local += static_cast<double>(h.sums(d));
    std::vector<double> per_rank(static_cast<std::size_t>(env.size()));
    MPI_Allgather(&local, 1, MPI_DOUBLE, per_rank.data(), 1, MPI_DOUBLE, env.comm());
    for (double v : per_rank) r.checksum += v;
  }
  return r;
}

// Phase "write": cv and the reduction, collective and atomic. Returns the
// slowest rank's seconds.
template <class T>
double write_outputs(RunContext& ctx, const Config& c, const Shape& s, const Arrays<T>& h, const Reduced<T>& r) {
  const Environment& env = ctx.env;
  ScopedRegion write_region("kmini::discount::write");
  Kokkos::Timer write_timer;
  if (!c.write_cv.empty())
    npy::write_distributed(env.comm(), ctx.output_path(c.write_cv), npy::DTypeOf<T>::value, {c.dates, s.M, s.O},
                           static_cast<std::uint64_t>(s.slice.first * s.row), static_cast<std::uint64_t>(s.D * s.row),
                           h.cv.data());
  if (!c.write_reduced.empty()) {
    if (c.reduce == Reduce::PerDate)
      npy::write_distributed(env.comm(), ctx.output_path(c.write_reduced), npy::DTypeOf<T>::value, {c.dates},
                             static_cast<std::uint64_t>(s.slice.first), static_cast<std::uint64_t>(s.D), h.sums.data());
    else
      npy::write_distributed(env.comm(), ctx.output_path(c.write_reduced), npy::DTypeOf<T>::value, {s.M}, 0,
                             env.is_root() ? static_cast<std::uint64_t>(s.M) : 0, r.per_id.data());
  }
  return allreduce_max(env.comm(), write_timer.seconds());
}

// discount.stores resolved: streaming where asked, regular where asked or
// where the build has no streaming stores or the kernel reduces; auto: the
// faster of the two on these arrays (choose_stores), timed by every rank
// together on the largest slice's size, so all ranks agree.
template <class T>
StoreChoice resolve_stores(RunContext& ctx, const Config& c, const Arrays<T>& arrays) {
  StoreChoice choice;
  if (!kStreamingStores || c.reduce != Reduce::None || c.stores == Stores::Regular) return choice;
  if (c.stores == Stores::Streaming) {
    choice.streaming = true;
    return choice;
  }
  ScopedRegion region("kmini::discount::stores");
  const std::int64_t largest = date_slice(c.dates, 0, ctx.env.size()).count * c.row() * std::int64_t(sizeof(T));
  return choose_stores(
      largest, sizeof(T),
      [&](bool streaming) {
        Config k = c;
        k.stream_cv = streaming;
        return allreduce_max(ctx.env.comm(),
                             time_together(ctx.env.comm(), ctx.exec, [&] { compute(ctx.exec, k, arrays.a); }));
      },
      false);
}

template <class T>
KernelReport run_typed(const Config& deck_config, RunContext& ctx) {
  Config c = deck_config;
  Shape s;
  s.slice = date_slice(c.dates, ctx.env.rank(), ctx.env.size());
  s.D = s.slice.count;
  s.M = c.ids;
  s.O = c.terms;
  s.row = c.row();
  const std::int64_t llc = last_level_cache_bytes();
  std::int64_t nonfinite = 0;
  PhaseClock<ExecSpace> clock(ctx.exec);  // the time to solution (results.json's `phases`)
  clock.start("probe");
  ctx.probe_roof_bandwidth();  // before the arrays exist; again in the report
  clock.start("read");
  const Arrays<T> arrays = load_inputs<T>(ctx, c, s, nonfinite);
  clock.start("compute");
  const StoreChoice stores = resolve_stores<T>(ctx, c, arrays);
  c.stream_cv = stores.streaming;
  const Timings t = time_kernel<T>(ctx, c, arrays);
  KernelReport report;
  clock.start("verification");
  if (ctx.verify) verify<T>(ctx, c, s, arrays, report);
  clock.start("outputs");
  const Reduced<T> reduced = combine_reductions<T>(ctx, c, s, arrays);
  clock.start("write");
  const double write_seconds = write_outputs<T>(ctx, c, s, arrays, reduced);
  clock.start("probe");
  report_run(ctx, c, s, t, nonfinite, reduced.checksum, write_seconds, report);
  report.phases = clock.finish();
  report_stores(stores, c.stream_cv, llc, report.metrics);
  return report;
}

}  // namespace

KernelReport DiscountKernel::run(RunContext& ctx) {
  return config_.single ? run_typed<float>(config_, ctx) : run_typed<double>(config_, ctx);
}

}  // namespace kmini::discount
