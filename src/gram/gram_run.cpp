// GramKernel::run: the phases of one Gram run, each a Kokkos profiling
// region (kmini::gram::<phase>). The slice loop computes C slice by slice and
// hands each slice to the outputs: the summary, the checked rows, the dense
// writer and the sparse outputs.
#include "core/collective.hpp"
#include "core/timer.hpp"
#include "gram/gram.hpp"
#include "gram/gram_sparse.hpp"
#include "gram/impl/gram_detail.hpp"
#include "gram/impl/gram_kernels.hpp"
#include "gram/impl/gram_outputs.hpp"
#include "io/npy.hpp"
#include "kernel/phases.hpp"
#include "kernel/run_loop.hpp"

#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

namespace kmini::gram {

namespace {

using namespace detail;

// This rank's slice of every round (null where it has none in the last).
std::vector<const Slice*> my_slices(const Plan& plan, int rank) {
  std::vector<const Slice*> mine(static_cast<std::size_t>(plan.rounds()), nullptr);
  for (const auto& s : plan.slices)
    if (s.rank == rank) mine[static_cast<std::size_t>(s.round)] = &s;
  return mine;
}

struct CirculantChecks;

// One Gram run's state, built phase by phase in GramKernel::run: what every
// phase reads (the context, deck, plan, inputs, buffers and ring) and what
// the passes accumulate (timings, checked rows), instead of a dozen
// parameters per phase.
struct GramRun {
  RunContext& ctx;
  const Config& c;
  const Plan plan;
  const bool want_summary, dense_float;
  Inputs in;
  SliceBuffers buffers;
  std::unique_ptr<Ring> ring;
  std::vector<const Slice*> mine;  // this rank's slice of every round (slices schedule)
  SlicePass pass;
  CheckedRows checked;
  // This rank's seconds of the final pass's tiles and of its dense writes:
  // parts of the outputs phase that belong to "compute" and "write".
  double final_compute_seconds = 0, write_seconds = 0;

  GramRun(RunContext& context, const Config& config);
  void compute_slice(const Slice* s);
  void copy_checked_rows(const Slice& s, const SliceGeometry& g);
  void timed_repeats();
  void final_pass(npy::DistributedWriter* writer, SparseOutputs& sparse);
  void circulant_repeats();
  void circulant_final_pass(SparseOutputs& sparse);
  Summary gather_summary() const;

 private:
  void compute_window(const CirculantWindow& w, const Packed& data, std::int64_t base);
  void circulant_pass(bool outputs, SparseOutputs* sparse, CirculantChecks* checks);
};

// Phase "compute" (setup): the slice loop's buffers, agreed by all ranks, and
// the popcount of every row of A (and B).
SliceBuffers allocate_buffers(RunContext& ctx, const Config& c, const Plan& plan, const Inputs& in, bool want_summary,
                              bool dense_float) {
  const std::int64_t rows = plan.rows, targets = plan.targets;
  const SliceBuffers buffers = collectively(ctx.env.comm(), "gram", [&] {
    return SliceBuffers{
        Kokkos::View<std::int32_t*, MemSpace>("kmini::gram::ones", rows),
        Kokkos::View<std::int32_t*, MemSpace>("kmini::gram::ones_B", c.b.rows),
        Kokkos::View<std::int32_t*, MemSpace>("kmini::gram::C_slice",
                                              plan.height * (plan.circulant() ? plan.piece_rows : targets)),
        Kokkos::View<float*, MemSpace>("kmini::gram::S_slice", dense_float ? plan.height * targets : 0),
        Kokkos::View<std::int64_t*, MemSpace>("kmini::gram::row_sums", want_summary ? rows : 0),
        Kokkos::View<std::uint64_t*, MemSpace>("kmini::gram::histogram", want_summary ? kHistogramBins : 0),
        Kokkos::View<std::uint64_t, MemSpace>("kmini::gram::checksum")};
  });
  ScopedRegion compute_region("kmini::gram::compute");
  if (plan.ring()) {  // each rank holds a share of the rows
    ring_row_ones(ctx.exec, ctx.env.comm(), in.a, plan.a_chunks, buffers.ones);
    if (in.two) ring_row_ones(ctx.exec, ctx.env.comm(), in.b, plan.b_chunks, buffers.ones_b);
    return buffers;
  }
  row_ones(ctx.exec, in.a, buffers.ones);
  if (in.two) row_ones(ctx.exec, in.b, buffers.ones_b);
  return buffers;
}

// Slice s of C into `counts`: from the whole inputs, or (ring; every rank
// every round, s null where it has none) from the chunks passing by.
void GramRun::compute_slice(const Slice* s) {
  ScopedRegion compute_region("kmini::gram::compute");
  if (ring) ring->round(s, buffers.counts);
  else if (s)
    gram_slice(ctx.exec, in.a, in.targets(), plan.geometry(*s, in.two), buffers.counts, c.engine, c.micro_kernel,
               c.tensor_core_tile);
}

// Phase "compute": `repeat - 1` timed passes of the slice loop alone (the
// final pass, which also feeds the outputs, is the last repeat).
void GramRun::timed_repeats() {
  for (std::int64_t rep = 0; rep + 1 < c.repeat; ++rep) {
    ScopedRegion compute_region("kmini::gram::compute");
    pass.compute.add(ctx.env.comm(), time_together(ctx.env.comm(), ctx.exec, [&] {
                       for (const Slice* s : mine) compute_slice(s);
                     }));
  }
}

// The checked rows of slice s to the host, and nothing else of the slice:
// their counts (similarities are checked through them), one copy per row.
void GramRun::copy_checked_rows(const Slice& s, const SliceGeometry& g) {
  const std::int64_t w = g.width();
  bool any = false;
  for (std::int64_t i : checked.rows) {
    if (i < s.r0 || i >= s.r1) continue;
    std::vector<std::int32_t>& values = checked.values[i];  // map nodes stay put while copies are in flight
    values.resize(static_cast<std::size_t>(w));
    start_copy_to_host<std::int32_t>(ctx.exec, buffers.counts, (i - s.r0) * w, w, values.data());
    checked.from[i] = g.col0();
    any = true;
  }
  if (any) ctx.exec.fence();
}

// One slice's values as write.C lays them out: a block of the packed upper
// triangle, or the slice and (one input, full) its mirror below the diagonal.
struct DenseBlocks {
  std::vector<char> upper_bytes, lower_bytes;
  npy::DistributedWriter::Block upper, lower;
  bool has_lower = false;
};

void reshape_for_writer(const Config& c, const Plan& plan, const Slice& s, const SliceGeometry& g, DenseBlocks& b) {
  const std::int64_t h = g.height(), w = g.width(), rows = plan.rows;
  if (c.upper) {
    // Rows r0..r1 of the packed upper triangle are one contiguous run.
    std::vector<char> packed_rows;
    packed_rows.reserve(static_cast<std::size_t>(h * w) * 4);
    for (std::int64_t i = 0; i < h; ++i)
      packed_rows.insert(packed_rows.end(), b.upper_bytes.begin() + (i * w + i) * 4,
                         b.upper_bytes.begin() + (i + 1) * w * 4);
    b.upper_bytes.swap(packed_rows);
    const std::int64_t first = s.r0 * rows - s.r0 * (s.r0 - 1) / 2;
    b.upper = {0, first, 1, static_cast<std::int64_t>(b.upper_bytes.size() / 4), b.upper_bytes.data()};
    return;
  }
  b.upper = {s.r0, g.col0(), h, w, b.upper_bytes.data()};
  // The mirror: C(r1.., r0..r1) = C(r0..r1, r1..)^T.
  if (!c.two_inputs() && s.r1 < rows) {
    const std::int64_t below = rows - s.r1;
    b.lower_bytes.resize(static_cast<std::size_t>(below * h) * 4);
    for (std::int64_t j = 0; j < below; ++j)
      for (std::int64_t i = 0; i < h; ++i)
        std::copy_n(b.upper_bytes.begin() + (i * w + h + j) * 4, 4, b.lower_bytes.begin() + (j * h + i) * 4);
    b.lower = {s.r1, s.r0, below, h, b.lower_bytes.data()};
    b.has_lower = true;
  }
}

// write.C: one .npy for all ranks (MPI-IO), written round by round.
std::unique_ptr<npy::DistributedWriter> open_dense_writer(RunContext& ctx, const Config& c, const Plan& plan,
                                                          bool dense_float) {
  if (c.write_c.empty()) return nullptr;
  const npy::Shape shape = c.upper ? npy::Shape{plan.rows * (plan.rows + 1) / 2} : npy::Shape{plan.rows, plan.targets};
  return std::make_unique<npy::DistributedWriter>(ctx.env.comm(), ctx.output_path(c.write_c),
                                                  dense_float ? npy::DType::F4 : npy::DType::I4, shape);
}

// Phases "compute", "summary", "similarity", "write" and "sparse_outputs":
// the final pass over this rank's slices, round by round (the writers'
// collectives run once per round on every rank, with or without a slice).
void GramRun::final_pass(npy::DistributedWriter* writer, SparseOutputs& sparse) {
  const Environment& env = ctx.env;
  const auto& counts = buffers.counts;
  double final_compute = 0;
  MPI_Barrier(env.comm());
  for (const Slice* s : mine) {
    DenseBlocks blocks;
    if (!s && ring) compute_slice(s);  // passes the chunks on
    if (s) {
      const SliceGeometry g = plan.geometry(*s, in.two);
      FencedTimer<ExecSpace> t(ctx.exec);
      compute_slice(s);
      final_compute += t.seconds();
      FencedTimer<ExecSpace> post(ctx.exec);
      if (want_summary) {
        ScopedRegion summary_region("kmini::gram::summary");
        summarise_slice(ctx.exec, counts, g, c.a.cols, buffers.row_sums, buffers.histogram, buffers.checksum);
      }
      if (dense_float) {
        ScopedRegion similarity_region("kmini::gram::similarity");
        similarity_slice(ctx.exec, c.similarity, counts, buffers.ones, buffers.ones_t(in.two), g, buffers.sim);
      }
      const std::int64_t h = g.height(), w = g.width();
      if (ctx.verify) copy_checked_rows(*s, g);
      if (writer) {
        // The slice values as written: counts (int32) or similarity (float32), 4 bytes each.
        blocks.upper_bytes.resize(static_cast<std::size_t>(h * w) * 4);
        if (dense_float) copy_to_host<float>(ctx.exec, buffers.sim, h * w, blocks.upper_bytes.data());
        else copy_to_host<std::int32_t>(ctx.exec, counts, h * w, blocks.upper_bytes.data());
        reshape_for_writer(c, plan, *s, g, blocks);
      }
      pass.post_seconds += post.seconds();
    }
    if (writer) {
      ScopedRegion write_region("kmini::gram::write");
      const Kokkos::Timer write_timer;
      writer->write_round(s ? &blocks.upper : nullptr);
      if (!c.upper && !in.two) writer->write_round(blocks.has_lower ? &blocks.lower : nullptr);
      write_seconds += write_timer.seconds();
    }
    sparse.add_round(s, counts, buffers.ones, buffers.ones_t(in.two));
  }
  if (writer) {
    ScopedRegion write_region("kmini::gram::write");
    const Kokkos::Timer write_timer;
    writer->commit();
    write_seconds += write_timer.seconds();
  }
  pass.compute.add(env.comm(), final_compute);
  final_compute_seconds = final_compute;
}

// --- circulant (gram.ring_schedule) -------------------------------------------

// Window w of the block pair in hand into `counts` (h x piece width).
void GramRun::compute_window(const CirculantWindow& w, const Packed& data, std::int64_t base) {
  TileWindow t = tile_window(w);
  t.a_base = Plan::block_begin(plan.rows, ctx.env.size(), ctx.env.rank());  // this rank's block of A
  t.b_base = base;
  t.out_col0 = w.c0;
  t.out_width = w.c1 - w.c0;
  gram_window(ctx.exec, in.a, data, t, buffers.counts, c.engine, c.micro_kernel, c.tensor_core_tile);
}

// The checked rows' values from the windows that hold them (their own rows,
// and with `mirror` their columns' rows), full rows from column 0; summed over
// the ranks at the end (every element is in exactly one window). Only those
// values leave the device: a row as one copy, a column gathered first.
struct CirculantChecks {
  std::vector<std::int64_t> rows;    // sorted
  std::vector<std::int32_t> values;  // rows.size() x targets
  std::int64_t targets = 0;
  Kokkos::View<std::int32_t*, MemSpace> columns;  // rows.size() x plan height: gathered columns
  bool wanted(const CirculantWindow& w) const {
    const auto any_in = [&](std::int64_t a, std::int64_t b) {
      auto it = std::lower_bound(rows.begin(), rows.end(), a);
      return it != rows.end() && *it < b;
    };
    return any_in(w.r0, w.r1) || (w.mirror && any_in(w.triangular ? w.r0 + 1 : w.c0, w.c1));
  }
  void copy(const ExecSpace& exec, const CirculantWindow& w, const Kokkos::View<std::int32_t*, MemSpace>& counts) {
    const std::int64_t width = w.c1 - w.c0, height = static_cast<std::int64_t>(columns.extent(0) / rows.size());
    for (std::size_t x = 0; x < rows.size(); ++x) {
      const std::int64_t i = rows[x];
      std::int32_t* out = values.data() + static_cast<std::int64_t>(x) * targets;
      if (i >= w.r0 && i < w.r1) {  // the row: C(i, j), j >= i on the diagonal
        const std::int64_t j0 = w.triangular ? i : w.c0;
        start_copy_to_host<std::int32_t>(exec, counts, (i - w.r0) * width + (j0 - w.c0), w.c1 - j0, out + j0);
      }
      if (w.mirror && i >= (w.triangular ? w.r0 + 1 : w.c0) && i < w.c1) {  // the column: C(i, r) = C(r, i)
        const std::int64_t end = w.triangular && i < w.r1 ? i : w.r1;
        const std::int64_t first = static_cast<std::int64_t>(x) * height;
        gather_column(exec, counts, width, i - w.c0, end - w.r0, columns, first);
        start_copy_to_host<std::int32_t>(exec, columns, first, end - w.r0, out + w.r0);
      }
    }
    exec.fence();
  }
};

// Phases "compute", "summary" and "sparse_outputs" of a circulant plan: the
// ticks of the ring, each window's tiles and (final pass) its outputs.
void GramRun::circulant_pass(bool outputs, SparseOutputs* sparse, CirculantChecks* checks) {
  const bool summarise = outputs && want_summary;
  const int rank = ctx.env.rank();
  std::vector<CirculantWindow> windows;
  ring->circulant([&](std::int64_t j, std::int64_t t, const Packed& data, std::int64_t base) {
    plan.circulant_windows(rank, j, t, in.two, windows);
    const std::int64_t col_list0 = plan.piece(static_cast<int>((rank + t) % ctx.env.size()), j, in.two).first;
    for (const CirculantWindow& w : windows) {
      {
        ScopedRegion compute_region("kmini::gram::compute");
        compute_window(w, data, base);
      }
      ring->progress();
      if (!outputs) continue;
      FencedTimer<ExecSpace> post(ctx.exec);
      const OutputWindow g(w.r0, w.r1, w.c0, w.c1, w.triangular, w.mirror);
      if (summarise) {
        ScopedRegion summary_region("kmini::gram::summary");
        summarise_slice(ctx.exec, buffers.counts, g, c.a.cols, buffers.row_sums, buffers.histogram, buffers.checksum);
      }
      if (checks && checks->wanted(w)) checks->copy(ctx.exec, w, buffers.counts);
      if (sparse) sparse->add_window(w, col_list0, buffers.counts, buffers.ones, buffers.ones_t(in.two));
      pass.post_seconds += post.seconds();
    }
    if (outputs && sparse) {
      FencedTimer<ExecSpace> post(ctx.exec);
      sparse->end_step(j, t);  // the partner piece's lists go home
      pass.post_seconds += post.seconds();
    }
  });
}

// Phase "summary": row sums, histogram and checksum over all ranks, and the trace.
Summary GramRun::gather_summary() const {
  ScopedRegion summary_region("kmini::gram::summary");
  const MPI_Comm comm = ctx.env.comm();
  const std::int64_t rows = plan.rows;
  Summary summary;
  std::vector<std::int32_t> host_ones(static_cast<std::size_t>(rows));
  copy_to_host<std::int32_t>(ctx.exec, buffers.ones, rows, host_ones.data());
  for (auto v : host_ones) summary.trace += v;
  if (want_summary) {
    summary.row_sums.resize(static_cast<std::size_t>(rows));
    summary.histogram.resize(kHistogramBins);
    copy_to_host<std::int64_t>(ctx.exec, buffers.row_sums, rows, summary.row_sums.data());
    copy_to_host<std::uint64_t>(ctx.exec, buffers.histogram, kHistogramBins, summary.histogram.data());
    std::uint64_t checksum = 0;  // this rank's part
    Kokkos::deep_copy(ctx.exec, Kokkos::View<std::uint64_t, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(&checksum),
                      buffers.checksum);
    ctx.exec.fence();
    MPI_Allreduce(MPI_IN_PLACE, summary.row_sums.data(), static_cast<int>(rows), MPI_INT64_T, MPI_SUM, comm);
    MPI_Allreduce(MPI_IN_PLACE, summary.histogram.data(), kHistogramBins, MPI_UINT64_T, MPI_SUM, comm);
    MPI_Allreduce(&checksum, &summary.checksum, 1, MPI_UINT64_T, MPI_SUM, comm);
  }
  return summary;
}

GramRun::GramRun(RunContext& context, const Config& config)
    : ctx(context),
      c(config),
      plan(make_plan(config, context.env.size())),
      want_summary(!config.write_summary.empty() || context.verify),
      dense_float(config.float_values() && !config.write_c.empty()),
      in(load_inputs(context, config, plan)),  // pack
      buffers(allocate_buffers(context, config, plan, in, want_summary, dense_float)) {
  if (plan.ring()) ring = std::make_unique<Ring>(ctx, c, plan, in);
  if (!plan.circulant()) mine = my_slices(plan, ctx.env.rank());
  for (const Slice& s : plan.slices)
    if (s.rank == ctx.env.rank()) pass.executed_words += s.work;
  checked.rows = check_rows(plan);
}

// compute: `repeat - 1` passes of the ring's tiles alone.
void GramRun::circulant_repeats() {
  for (std::int64_t rep = 0; rep + 1 < c.repeat; ++rep)
    pass.compute.add(ctx.env.comm(),
                     time_together(ctx.env.comm(), ctx.exec, [&] { circulant_pass(false, nullptr, nullptr); }));
}

// The final pass with the outputs; the checked rows from the windows that
// hold them, summed over the ranks, each rank keeping its block's.
void GramRun::circulant_final_pass(SparseOutputs& sparse) {
  CirculantChecks checks;
  if (ctx.verify) {
    checks.rows = checked.rows;
    checks.targets = plan.targets;
    checks.values.assign(checks.rows.size() * static_cast<std::size_t>(plan.targets), 0);
    checks.columns = collectively(ctx.env.comm(), "gram", [&] {
      return Kokkos::View<std::int32_t*, MemSpace>("kmini::gram::checked_columns",
                                                   static_cast<std::int64_t>(checks.rows.size()) * plan.height);
    });
  }
  const double before = pass.post_seconds;
  const double seconds =
      time_together(ctx.env.comm(), ctx.exec, [&] { circulant_pass(true, &sparse, ctx.verify ? &checks : nullptr); });
  // The final pass's compute: its time but the outputs' (this rank's).
  final_compute_seconds = seconds - (pass.post_seconds - before);
  pass.compute.add(ctx.env.comm(), final_compute_seconds);
  if (!ctx.verify || checks.rows.empty()) return;
  MPI_Allreduce(MPI_IN_PLACE, checks.values.data(), static_cast<int>(checks.values.size()), MPI_INT32_T, MPI_SUM,
                ctx.env.comm());
  const std::int64_t own0 = Plan::block_begin(plan.rows, ctx.env.size(), ctx.env.rank());
  const std::int64_t own1 = Plan::block_begin(plan.rows, ctx.env.size(), ctx.env.rank() + 1);
  for (std::size_t x = 0; x < checks.rows.size(); ++x) {
    const std::int64_t i = checks.rows[x];
    if (i < own0 || i >= own1) continue;  // each rank checks the rows of its block
    const auto first = checks.values.begin() + static_cast<std::ptrdiff_t>(x * plan.targets);
    checked.values[i].assign(first, first + plan.targets);
    checked.from[i] = 0;
  }
}

}  // namespace

KernelReport GramKernel::run(RunContext& ctx) {
  // The time to solution, phase by phase (results.json's `phases`).
  PhaseClock<ExecSpace> clock(ctx.exec);
  clock.start("pack");      // inputs read (attributed to "read"), packed, rows' ones counted
  GramRun r(ctx, config_);  // pack, compute (setup)
  clock.attribute("read", r.in.read_seconds);
  const Config& c = r.c;
  const Plan& plan = r.plan;
  clock.start("probe");
  const Probes probes_before = measure_probes(ctx, c);  // probe (again after the computation)
  std::unique_ptr<npy::DistributedWriter> writer;
  std::optional<SparseOutputs> sparse;
  clock.start("compute");
  if (plan.circulant()) {
    r.circulant_repeats();  // compute
    clock.start("outputs");
    sparse.emplace(ctx.exec, c, plan, ctx.env.comm(), ctx.output_path(c.write_pairs), ctx.output_path(c.write_top_k));
    r.circulant_final_pass(*sparse);
  } else {
    r.timed_repeats();  // compute
    clock.start("outputs");
    writer = open_dense_writer(ctx, c, plan, r.dense_float);
    sparse.emplace(ctx.exec, c, plan, ctx.env.comm(), ctx.output_path(c.write_pairs), ctx.output_path(c.write_top_k));
    r.final_pass(writer.get(), *sparse);
  }
  // The final pass computes while it feeds the outputs: its tiles are compute.
  clock.attribute("compute", r.final_compute_seconds);
  const auto& ring = r.ring;

  KernelReport report;
  report.metrics["distribution"] = Json(std::string(distribution_name(plan.distribution)));
  report.metrics["distribution_auto"] = Json(plan.automatic);
  report.metrics["packed_bytes_per_rank"] = plan.packed_bytes;
  if (ring) {
    report.metrics["ring_schedule"] = Json(std::string(ring_schedule_name(plan.schedule)));
    report.metrics["ring_transfer"] = Json(std::string(Ring::path_name(ring->path())));
    report.metrics["ring_bytes_sent_per_rank"] = allreduce_max(ctx.env.comm(), ring->bytes_sent());
    // Seconds a rank waited on MPI in the ring (all passes): what the computation did not hide.
    report.metrics["ring_wait_seconds"] = allreduce_max(ctx.env.comm(), ring->wait_seconds());
  }
  Json sparse_summary = Json::object();
  sparse->finish(report.metrics, &sparse_summary);  // sparse_outputs
  clock.attribute("write", r.write_seconds + sparse->write_seconds());
  const Summary summary = r.gather_summary();
  clock.start("verification");
  if (ctx.verify) verify(ctx, c, plan, r.checked, summary, report);
  clock.start("probe");
  report_throughput(ctx, c, plan, r.pass, r.in.pack_seconds, summary, r.want_summary, probes_before, report);
  if (c.baseline) {
    clock.start("baseline_sgemm");
    report_baseline(ctx, c, plan, r.pass.compute.slowest(), report);
  }
  clock.start("write");
  if (!c.write_summary.empty()) write_summary_file(ctx, c, summary, sparse_summary);
  report.phases = clock.finish();
  return report;
}

}  // namespace kmini::gram
