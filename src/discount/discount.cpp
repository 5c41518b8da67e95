// Driver glue of the discount benchmark: inputs, timing, verification,
// MPI combination of reductions and output files.
#include "discount/discount.hpp"

#include "core/collective.hpp"
#include "core/errors.hpp"
#include "core/format.hpp"
#include "core/run_loop.hpp"
#include "discount/discount_kernels.hpp"
#include "discount/discount_reference.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <optional>
#include <tuple>
#include <vector>

namespace kmini::discount {

namespace {

template <class T> MPI_Datatype mpi_type();
template <> MPI_Datatype mpi_type<double>() { return MPI_DOUBLE; }
template <> MPI_Datatype mpi_type<float>() { return MPI_FLOAT; }

const char* suffix(bool single) { return single ? "f32" : "f64"; }

std::string describe(const InputSpec& s) {
  if (s.source == InputSpec::Source::Arange) return "arange";
  if (s.source == InputSpec::Source::Random) return "random(seed=" + std::to_string(s.seed) + ")";
  return std::string("file ") + s.path + " (" + npy::short_name(s.file.dtype) + ")";
}

// Views are constructed in place, never assigned over default-constructed
// ones (the Kokkos 4.6 development snapshot crashes on that move assignment).
template <class T>
struct DeviceArrays {
  DeviceArrays(std::int64_t dates, std::int64_t ids, std::int64_t terms, bool cv_on, Reduce reduce,
               std::int64_t blocks)
      : mult("kmini::discount::mult_by", ids, terms),
        disc("kmini::discount::discount", dates, ids, terms),
        cv("kmini::discount::cv", cv_on ? dates : 0, cv_on ? ids : 0, cv_on ? terms : 0),
        partial("kmini::discount::block_sums", reduce == Reduce::PerDate ? dates : 0, blocks),
        sums("kmini::discount::sums", reduce == Reduce::PerDate ? dates : reduce == Reduce::PerId ? ids : 0) {}
  Kokkos::View<T**, Kokkos::LayoutRight, MemSpace> mult;       // M x O
  Kokkos::View<T***, Kokkos::LayoutRight, MemSpace> disc, cv;  // D_local x M x O (cv empty when not computed)
  Kokkos::View<T**, Kokkos::LayoutRight, MemSpace> partial;    // per_date block sums
  Kokkos::View<T*, MemSpace> sums;                             // per_date (D_local) or per_id (M)
};

// Reads `count` elements from `first` of a .npy of f8 or f4 into T, in chunks.
template <class T>
void read_converted(const npy::Info& info, std::uint64_t first, std::uint64_t count, T* dst) {
  if (info.dtype == npy::DTypeOf<T>::value) return npy::read_elements(info, first, count, dst);
  const std::uint64_t chunk = std::uint64_t(1) << 20;
  auto convert = [&](auto tag) {
    std::vector<decltype(tag)> buf(std::min(chunk, count));
    for (std::uint64_t done = 0; done < count; done += chunk) {
      const std::uint64_t now = std::min(chunk, count - done);
      npy::read_elements(info, first + done, now, buf.data());
      for (std::uint64_t k = 0; k < now; ++k) dst[done + k] = static_cast<T>(buf[k]);
    }
  };
  if (info.dtype == npy::DType::F8) convert(double{});
  else convert(float{});
}

// Fills device view `v` (a slice starting at global element `first`) from
// its spec, and its host mirror `h` with the same values. Returns how many
// values read from a file are NaN or infinite (generated inputs have none).
template <class T, class DeviceView, class HostView>
std::int64_t load_input(const ExecSpace& exec, const InputSpec& spec, std::uint64_t first, const DeviceView& v,
                        const HostView& h) {
  const Row<T> flat(v.data(), v.span());
  std::int64_t nonfinite = 0;
  if (spec.source == InputSpec::Source::File) {
    read_converted<T>(spec.file, first, v.span(), h.data());
    for (std::size_t k = 0; k < v.span(); ++k) nonfinite += std::isfinite(h.data()[k]) ? 0 : 1;
    Kokkos::deep_copy(exec, v, h);
  } else {
    if (spec.source == InputSpec::Source::Arange) fill_arange<T>(exec, flat, first);
    else fill_random<T>(exec, flat, spec.seed, first);
    Kokkos::deep_copy(exec, h, v);
  }
  exec.fence();
  return nonfinite;
}

template <class T>
void compute(const ExecSpace& exec, const Config& c, const DeviceArrays<T>& a) {
  const auto mult = as_row(a.mult);
  const auto disc = as_rows(a.disc);
  const auto cv = Rows<T>(a.cv.data(), a.cv.extent(0), a.cv.extent(1) * a.cv.extent(2));
  const bool write_cv = c.computes_cv();
  switch (c.reduce) {
    case Reduce::None:
      if (c.policy == Policy::Flat) multiply_flat(exec, mult, disc, cv);
      else multiply_mdrange(exec, mult, disc, cv);
      break;
    case Reduce::PerDate:
      if (write_cv) reduce_per_date<true>(exec, mult, disc, cv, a.partial, a.sums);
      else reduce_per_date<false>(exec, mult, disc, cv, a.partial, a.sums);
      break;
    case Reduce::PerId:
      if (write_cv) reduce_per_id<true>(exec, a.mult, a.disc, a.cv, a.sums);
      else reduce_per_id<false>(exec, a.mult, a.disc, a.cv, a.sums);
      break;
  }
}

struct Timings {
  BestOverRepeats kernel;  // kernel-only
  double end_to_end = std::numeric_limits<double>::infinity(), my_end_to_end = end_to_end;
  double h2d = std::numeric_limits<double>::infinity(), e2e_kernel = h2d, d2h = h2d;  // of the best e2e
};

template <class T>
KernelReport run_typed(const Config& c, RunContext& ctx) {
  const Environment& env = ctx.env;
  const DateSlice slice = date_slice(c.dates, env.rank(), env.size());
  const std::int64_t D = slice.count, M = c.ids, O = c.terms, row = c.row();
  const std::int64_t blocks = (row + kBlock - 1) / kBlock;
  const bool cv_on = c.computes_cv();
  const std::string label = std::string("discount.") + (c.reduce == Reduce::None ? "multiply"
                                                         : c.reduce == Reduce::PerDate ? "per_date"
                                                                                       : "per_id") +
                            "_" + suffix(c.single);

  // Every rank allocates, then reads its inputs; each phase is agreed by all
  // ranks (a failure on one, such as a file read, is the same error on all).
  const auto arrays = collectively(env.comm(), "discount", [&] {
    DeviceArrays<T> a(D, M, O, cv_on, c.reduce, blocks);
    return std::make_tuple(a, Kokkos::create_mirror_view(a.mult), Kokkos::create_mirror_view(a.disc),
                           Kokkos::create_mirror_view(a.cv), Kokkos::create_mirror_view(a.sums));
  });
  const DeviceArrays<T>& a = std::get<0>(arrays);
  const auto &h_mult = std::get<1>(arrays), &h_disc = std::get<2>(arrays);
  const auto &h_cv = std::get<3>(arrays), &h_sums = std::get<4>(arrays);
  std::int64_t nonfinite_mult = 0, nonfinite_disc = 0;
  {
    ScopedRegion region("kmini::discount::inputs");
    collectively(env.comm(), "discount", [&] {
      nonfinite_mult = load_input<T>(ctx.exec, c.mult_by, 0, a.mult, h_mult);
      nonfinite_disc = load_input<T>(ctx.exec, c.discount, static_cast<std::uint64_t>(slice.first * row), a.disc, h_disc);
    });
    // mult_by is whole on every rank, discount is split by dates.
    nonfinite_disc = static_cast<std::int64_t>(allreduce_sum(env.comm(), static_cast<double>(nonfinite_disc)));
    if (env.is_root() && nonfinite_mult + nonfinite_disc > 0)
      ctx.err << "kmini: warning: discount: the input files hold " << nonfinite_mult << " (mult_by) and "
                << nonfinite_disc << " (discount) NaN or infinite values; they propagate into the outputs as in numpy\n";
  }

  // Kernel only, and end to end (inputs host->device, kernel, results
  // device->host): each the best of `repeat` of the slowest rank. One untimed
  // run first, and the two interleaved, so both see the same warmed-up machine
  // (timed one after the other, the first repeats of kernel-only ran cold and
  // e2e often came out faster than the kernel alone).
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
    Kokkos::deep_copy(ctx.exec, a.mult, h_mult);
    Kokkos::deep_copy(ctx.exec, a.disc, h_disc);
    const double h2d = timer.seconds();
    compute(ctx.exec, c, a);
    const double kernel_done = timer.seconds();
    Kokkos::deep_copy(ctx.exec, h_cv, a.cv);
    Kokkos::deep_copy(ctx.exec, h_sums, a.sums);
    const double total = timer.seconds();
    const double slowest = allreduce_max(env.comm(), total);
    const double h2d_max = allreduce_max(env.comm(), h2d);
    const double kernel_max = allreduce_max(env.comm(), kernel_done - h2d);
    const double d2h_max = allreduce_max(env.comm(), total - kernel_done);
    if (slowest < t.end_to_end) t = {t.kernel, slowest, total, h2d_max, kernel_max, d2h_max};
  }
  ctx.exec.fence();

  // Verification against the host reference, on each rank's own slice.
  KernelReport report;
  Json& m = report.metrics;
  if (ctx.verify) {
    ScopedRegion region("kmini::discount::verify");
    std::int64_t cv_bad = -1, sums_bad = -1;
    if (cv_on) cv_bad = reference::first_cv_difference(h_mult.data(), h_disc.data(), h_cv.data(), D, row);
    if (c.reduce == Reduce::PerDate) {
      const auto ref = reference::per_date(h_mult.data(), h_disc.data(), D, row);
      sums_bad = reference::first_difference<T>(ref.data(), h_sums.data(), D);
    } else if (c.reduce == Reduce::PerId) {
      const auto ref = reference::per_id(h_mult.data(), h_disc.data(), D, M, O);
      sums_bad = reference::first_difference<T>(ref.data(), h_sums.data(), M);
    }
    report.verified = all_ranks_ok(env.comm(), cv_bad < 0 && sums_bad < 0);
    m["verification"] = "bitwise equality with the host reference on every rank's slice (NaN matches NaN)";
    if (cv_bad >= 0) m["first_cv_mismatch_local_index"] = Json(static_cast<long long>(cv_bad));
    if (sums_bad >= 0) m["first_reduced_mismatch_local_index"] = Json(static_cast<long long>(sums_bad));
  }

  // Reductions: per_date values live on their date's rank; per_id partials
  // are added in rank order on rank 0 (deterministic for a given rank count).
  std::vector<T> reduced;  // per_id: the global result on every rank
  double reduced_checksum = 0;
  if (c.reduce == Reduce::PerId) {
    std::vector<T> all(env.is_root() ? static_cast<std::size_t>(M) * env.size() : 0);
    MPI_Gather(h_sums.data(), static_cast<int>(M), mpi_type<T>(), all.data(), static_cast<int>(M), mpi_type<T>(), 0,
               env.comm());
    reduced.assign(static_cast<std::size_t>(M), T(0));
    if (env.is_root())
      for (int r = 0; r < env.size(); ++r)
        for (std::int64_t i = 0; i < M; ++i) reduced[i] += all[r * M + i];
    MPI_Bcast(reduced.data(), static_cast<int>(M), mpi_type<T>(), 0, env.comm());
    for (const T v : reduced) reduced_checksum += static_cast<double>(v);
  } else if (c.reduce == Reduce::PerDate) {
    double local = 0;
    for (std::int64_t d = 0; d < D; ++d) local += static_cast<double>(h_sums(d));
    std::vector<double> per_rank(static_cast<std::size_t>(env.size()));
    MPI_Allgather(&local, 1, MPI_DOUBLE, per_rank.data(), 1, MPI_DOUBLE, env.comm());
    for (double v : per_rank) reduced_checksum += v;
  }

  // Output files (collective, atomic).
  std::optional<ScopedRegion> write_region(std::in_place, "kmini::discount::write");
  Kokkos::Timer write_timer;
  if (!c.write_cv.empty())
    npy::write_distributed(env.comm(), ctx.output_path(c.write_cv), npy::DTypeOf<T>::value, {c.dates, M, O},
                           static_cast<std::uint64_t>(slice.first * row), static_cast<std::uint64_t>(D * row),
                           h_cv.data());
  if (!c.write_reduced.empty()) {
    if (c.reduce == Reduce::PerDate)
      npy::write_distributed(env.comm(), ctx.output_path(c.write_reduced), npy::DTypeOf<T>::value, {c.dates},
                             static_cast<std::uint64_t>(slice.first), static_cast<std::uint64_t>(D), h_sums.data());
    else
      npy::write_distributed(env.comm(), ctx.output_path(c.write_reduced), npy::DTypeOf<T>::value, {M}, 0,
                             env.is_root() ? static_cast<std::uint64_t>(M) : 0, reduced.data());
  }
  const double write_seconds = allreduce_max(env.comm(), write_timer.seconds());
  write_region.reset();

  // Bytes each rank's kernel must move, and what crosses host<->device.
  const double s = sizeof(T);
  const double elements = static_cast<double>(D) * static_cast<double>(row);
  const double reduced_out = c.reduce == Reduce::PerDate ? D : c.reduce == Reduce::PerId ? M : 0;
  const double kernel_bytes = s * (elements + row + (cv_on ? elements : 0) + reduced_out);
  const double h2d_bytes = s * (elements + row), d2h_bytes = s * ((cv_on ? elements : 0) + reduced_out);
  const double flops = elements * (c.reduce == Reduce::None ? 1 : 2);
  const double total_bytes = allreduce_sum(env.comm(), kernel_bytes);
  const double total_flops = allreduce_sum(env.comm(), flops);
  const double kernel_seconds = t.kernel.slowest();
  const double per_rank_bw = total_bytes / env.size() / kernel_seconds;
  const double roof = ctx.roof_bandwidth();

  const char* reduce_names[] = {"none", "per_date", "per_id"};
  m["dates"] = Json(static_cast<long long>(c.dates));
  m["ids"] = Json(static_cast<long long>(M));
  m["terms"] = Json(static_cast<long long>(O));
  m["precision"] = c.single ? "single" : "double";
  m["reduce"] = reduce_names[static_cast<int>(c.reduce)];
  m["nonfinite_inputs"] = Json(static_cast<long long>(nonfinite_mult + nonfinite_disc));
  m["policy"] = c.reduce == Reduce::None ? (c.policy == Policy::Flat ? "flat" : "mdrange") : "fused reduction";
  m["cv_computed"] = cv_on;
  m["inputs"]["mult_by"] = describe(c.mult_by);
  m["inputs"]["discount"] = describe(c.discount);
  m["dates_per_rank_max"] = Json(static_cast<long long>(date_slice(c.dates, 0, env.size()).count));
  m["repeat"] = Json(static_cast<long long>(c.repeat));
  Json& k = m["kernel"];
  k["best_seconds"] = kernel_seconds;
  k["bytes_all_ranks"] = total_bytes;
  k["flops_all_ranks"] = total_flops;
  k["bandwidth_bytes_per_s_per_rank"] = per_rank_bw;
  k["aggregate_bandwidth_bytes_per_s"] = total_bytes / kernel_seconds;
  k["roof_bandwidth_bytes_per_s"] = roof;
  k["fraction_of_roof"] = per_rank_bw / roof;
  k["arithmetic_intensity_flops_per_byte"] = total_flops / total_bytes;
  k["gflops_per_s"] = total_flops / kernel_seconds / 1e9;
  Json& e = m["end_to_end"];
  e["best_seconds"] = t.end_to_end;
  e["host_to_device_seconds"] = t.h2d;
  e["kernel_seconds"] = t.e2e_kernel;
  e["device_to_host_seconds"] = t.d2h;
  e["host_to_device_bytes_all_ranks"] = allreduce_sum(env.comm(), h2d_bytes);
  e["device_to_host_bytes_all_ranks"] = allreduce_sum(env.comm(), d2h_bytes);
  e["arithmetic_intensity_flops_per_transferred_byte"] =
      total_flops / allreduce_sum(env.comm(), h2d_bytes + d2h_bytes);
  e["kernel_fraction_of_end_to_end"] = t.e2e_kernel / t.end_to_end;
  note_transfers(e);
  if (c.reduce != Reduce::None) m["reduced_checksum"] = reduced_checksum;
  m["write_seconds"] = write_seconds;

  const std::string size = std::to_string(c.dates) + "x" + std::to_string(M) + "x" + std::to_string(O);
  SummaryRow kernel_row = rate_row(label, size, kernel_seconds, t.kernel.mine(), total_bytes, env.size(), "B/s");
  kernel_row.roof_fraction = per_rank_bw / roof;
  kernel_row.roof = kRoofStream;
  kernel_row.verified = report.verified;
  SummaryRow e2e_row = rate_row(label + ".e2e", size, t.end_to_end, t.my_end_to_end, total_bytes, env.size(), "B/s");
  e2e_row.roof = kRoofStream;
  e2e_row.verified = report.verified;
  report.rows = {kernel_row, e2e_row};
  return report;
}

}  // namespace

KernelReport DiscountKernel::run(RunContext& ctx) {
  return config_.single ? run_typed<float>(config_, ctx) : run_typed<double>(config_, ctx);
}

}  // namespace kmini::discount
