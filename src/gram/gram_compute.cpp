// gram::compute (impl/gram_compute.hpp): the slice loop, or the ring, over
// the ranks of a team; each slice handed to the outputs (the summary, the
// checked rows, dense C and the sparse outputs), each phase a Kokkos
// profiling region (kmini::gram::<phase>).
#include "gram/impl/gram_compute.hpp"

#include "core/collective.hpp"
#include "core/huge_pages.hpp"
#include "core/timer.hpp"
#include "gram/impl/gram_kernels.hpp"
#include "gram/impl/gram_outputs.hpp"
#include "gram/impl/gram_pruned_slices.hpp"
#include "kernel/run_loop.hpp"

#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

namespace kmini::gram::detail {

namespace {

// This rank's slice of every round (null where it has none in the last).
std::vector<const Slice*> my_slices(const Plan& plan, int rank) {
  std::vector<const Slice*> mine(static_cast<std::size_t>(plan.rounds()), nullptr);
  for (const auto& s : plan.slices)
    if (s.rank == rank) mine[static_cast<std::size_t>(s.round)] = &s;
  return mine;
}

struct CirculantChecks;

// One computation's state: what every pass reads (the team, deck, plan,
// inputs, buffers and ring) and what the passes accumulate (the outcome).
struct Computation {
  const Team& team;
  const Config& c;
  const Plan& plan;
  const Inputs& in;
  Outputs& out;
  const double prune_least;  // prune_minimum, 0 with the ring (replicated slices only)
  const bool want_summary, dense_float;
  SliceBuffers buffers;
  std::unique_ptr<PrunedSlices> pruned;
  std::unique_ptr<Ring> ring;
  std::vector<const Slice*> mine;  // this rank's slice of every round (slices schedule)
  Outcome r;

  Computation(const Team& t, const Config& config, const Plan& p, const Inputs& inputs, Outputs& o);
  void compute_slice(const Slice* s);
  void copy_checked_rows(const Slice& s, const SliceGeometry& g);
  void timed_repeats();
  bool interrupted();
  void final_slice(const Slice& s);
  void final_pass(SparseOutputs& sparse);
  void circulant_repeats();
  void circulant_final_pass(SparseOutputs& sparse);
  void gather_summary();

 private:
  void compute_window(const CirculantWindow& w, const Packed& data, std::int64_t base);
  void circulant_window(const CirculantWindow& w, std::int64_t col_list0, SparseOutputs* sparse,
                        CirculantChecks* checks);
  void circulant_pass(bool outputs, SparseOutputs* sparse, CirculantChecks* checks);
};

// The slice loop's buffers, agreed by all ranks, and the popcount of every
// row of A (and B). `in_place`, when not empty, is the counts buffer;
// `pruned`: none.
SliceBuffers allocate_buffers(const Team& team, const Config& c, const Plan& plan, const Inputs& in, bool want_summary,
                              bool dense_float, const IntView& in_place, bool pruned) {
  const std::int64_t rows = plan.rows, targets = plan.targets;
  // A pruned plan's slices hand their pairs to the outputs (PrunedSlices): no slice of C.
  const std::int64_t slice = pruned ? 0 : plan.height * (plan.circulant() ? plan.piece_rows : targets);
  const SliceBuffers buffers = collectively(team.comm, "gram", [&] {
    return SliceBuffers{
        Kokkos::View<std::int32_t*, MemSpace>("kmini::gram::ones", rows),
        Kokkos::View<std::int32_t*, MemSpace>("kmini::gram::ones_B", c.b.rows),
        in_place.extent(0) > 0 ? in_place : huge_page_view<IntView>("kmini::gram::C_slice", slice),
        huge_page_view<FloatView>("kmini::gram::S_slice", dense_float ? plan.height * targets : 0),
        Kokkos::View<std::int64_t*, MemSpace>("kmini::gram::row_sums", want_summary ? rows : 0),
        Kokkos::View<std::uint64_t*, MemSpace>("kmini::gram::histogram", want_summary ? kHistogramBins : 0),
        Kokkos::View<std::uint64_t, MemSpace>("kmini::gram::checksum")};
  });
  ScopedRegion compute_region("kmini::gram::compute");
  if (plan.ring()) {  // each rank holds a share of the rows
    ring_row_ones(team.exec, team.comm, in.a, plan.a_chunks, buffers.ones);
    if (in.two) ring_row_ones(team.exec, team.comm, in.b, plan.b_chunks, buffers.ones_b);
    return buffers;
  }
  row_ones(team.exec, in.a, buffers.ones);
  if (in.two) row_ones(team.exec, in.b, buffers.ones_b);
  return buffers;
}

Computation::Computation(const Team& t, const Config& config, const Plan& p, const Inputs& inputs, Outputs& o)
    : team(t),
      c(config),
      plan(p),
      in(inputs),
      out(o),
      prune_least(prune_minimum(config, p)),
      want_summary((!config.write_summary.empty() || t.verify) && prune_least == 0),
      dense_float(config.float_values() && out.dense != nullptr),
      buffers(allocate_buffers(t, config, p, inputs, want_summary, dense_float,
                               o.dense ? o.dense->counts_in_place() : IntView(), prune_least > 0)) {
  if (plan.ring()) ring = std::make_unique<Ring>(team, c, plan, in);
  if (!plan.circulant()) mine = my_slices(plan, team.rank());
  for (const Slice& s : plan.slices)
    if (s.rank == team.rank()) r.pass.executed_words += s.work;
  if (team.verify) r.checked.rows = check_rows(plan);
  if (prune_least > 0) pruned = std::make_unique<PrunedSlices>(t, config, p, inputs, buffers, prune_least);
}

// Slice s of C into `counts`: from the whole inputs, or (ring; every rank
// every round, s null where it has none) from the chunks passing by.
void Computation::compute_slice(const Slice* s) {
  ScopedRegion compute_region("kmini::gram::compute");
  if (ring) ring->round(s, buffers.counts);
  else if (s && pruned) pruned->compute(*s, in);
  else if (s)
    gram_slice(team.exec, in.a, in.targets(), plan.geometry(*s, in.two), buffers.counts, c.engine, c.micro_kernel,
               c.tensor_core_tile);
}

// `repeat - 1` timed passes of the slice loop alone (the final pass, which
// also feeds the outputs, is the last repeat).
void Computation::timed_repeats() {
  for (std::int64_t rep = 0; rep + 1 < c.repeat; ++rep) {
    ScopedRegion compute_region("kmini::gram::compute");
    r.pass.compute.add(team.comm, time_together(team.comm, team.exec, [&] {
                         for (const Slice* s : mine) compute_slice(s);
                       }));
  }
}

// Whether the caller asked to stop (any rank): checked between rounds.
bool Computation::interrupted() {
  if (!out.interrupted) return false;
  int stop = out.interrupted() ? 1 : 0;
  mpi::allreduce(team.comm, &stop, 1, MPI_INT, MPI_MAX);
  r.interrupted = stop != 0;
  return r.interrupted;
}

// The checked rows of slice s to the host, and nothing else of the slice:
// their counts (similarities are checked through them), one copy per row.
void Computation::copy_checked_rows(const Slice& s, const SliceGeometry& g) {
  const std::int64_t w = g.width();
  bool any = false;
  for (std::int64_t i : r.checked.rows) {
    if (i < s.r0 || i >= s.r1) continue;
    std::vector<std::int32_t>& values = r.checked.values[i];  // map nodes stay put while copies are in flight
    values.resize(static_cast<std::size_t>(w));
    start_copy_to_host<std::int32_t>(team.exec, buffers.counts, (i - s.r0) * w, w, values.data());
    r.checked.from[i] = g.col0();
    any = true;
  }
  if (any) team.exec.fence();
}

// Slice s of the final pass, computed and summarised, its similarities and
// checked rows taken; the seconds of the tiles and of the rest apart.
void Computation::final_slice(const Slice& s) {
  const SliceGeometry g = plan.geometry(s, in.two);
  FencedTimer<ExecSpace> t(team.exec);
  compute_slice(&s);
  r.final_compute_seconds += t.seconds();
  FencedTimer<ExecSpace> post(team.exec);
  if (want_summary) {
    ScopedRegion summary_region("kmini::gram::summary");
    summarise_slice(team.exec, buffers.counts, g, c.a.cols, buffers.row_sums, buffers.histogram, buffers.checksum);
  }
  if (dense_float) {
    ScopedRegion similarity_region("kmini::gram::similarity");
    similarity_slice(team.exec, c.similarity, buffers.counts, buffers.ones, buffers.ones_t(in.two), g, buffers.sim,
                     c.similarity_params());
  }
  if (team.verify && !pruned) copy_checked_rows(s, g);
  r.pass.post_seconds += post.seconds();
}

// The final pass over this rank's slices, round by round (the outputs'
// collectives run once per round on every rank, with or without a slice).
void Computation::final_pass(SparseOutputs& sparse) {
  if (pruned) pruned->restart();  // the final pass's tiles alone
  mpi::barrier(team.comm);
  std::int64_t done = 0;
  for (const Slice* s : mine) {
    if (interrupted()) break;
    if (out.progress && done > 0) out.progress(done, static_cast<std::int64_t>(mine.size()));
    ++done;
    if (s) final_slice(*s);
    else if (ring) compute_slice(s);  // passes the chunks on
    if (out.dense) {
      ScopedRegion write_region("kmini::gram::write");
      const double written = out.dense->write_seconds();
      FencedTimer<ExecSpace> post(team.exec);
      out.dense->round(s, s ? plan.geometry(*s, in.two) : SliceGeometry{}, buffers.counts, buffers.sim);
      if (s) r.pass.post_seconds += post.seconds() - (out.dense->write_seconds() - written);  // host copies
    }
    if (pruned) {
      FencedTimer<ExecSpace> again(team.exec);
      pruned->fit(s);
      r.final_compute_seconds += again.seconds();  // the slice computed again where its hits outgrew their views
      sparse.add_hits(s, s ? pruned->hits() : SliceHits{});
    } else {
      sparse.add_round(s, buffers.counts, buffers.ones, buffers.ones_t(in.two));
    }
  }
  if (out.dense && !r.interrupted) {
    ScopedRegion write_region("kmini::gram::write");
    out.dense->commit();
  }
  r.pass.compute.add(team.comm, r.final_compute_seconds);
}

// --- circulant (gram.ring_schedule) -------------------------------------------

// Window w of the block pair in hand into `counts` (h x piece width).
void Computation::compute_window(const CirculantWindow& w, const Packed& data, std::int64_t base) {
  TileWindow t = tile_window(w);
  t.a_base = Plan::block_begin(plan.rows, team.size(), team.rank());  // this rank's block of A
  t.b_base = base;
  t.out_col0 = w.c0;
  t.out_width = w.c1 - w.c0;
  gram_window(team.exec, in.a, data, t, buffers.counts, c.engine, c.micro_kernel, c.tensor_core_tile);
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

// One window's outputs in the final circulant pass: the summary, the checked
// rows, the sparse outputs.
void Computation::circulant_window(const CirculantWindow& w, std::int64_t col_list0, SparseOutputs* sparse,
                                   CirculantChecks* checks) {
  FencedTimer<ExecSpace> post(team.exec);
  const OutputWindow g(w.r0, w.r1, w.c0, w.c1, w.triangular, w.mirror);
  if (want_summary) {
    ScopedRegion summary_region("kmini::gram::summary");
    summarise_slice(team.exec, buffers.counts, g, c.a.cols, buffers.row_sums, buffers.histogram, buffers.checksum);
  }
  if (checks && checks->wanted(w)) checks->copy(team.exec, w, buffers.counts);
  if (sparse) sparse->add_window(w, col_list0, buffers.counts, buffers.ones, buffers.ones_t(in.two));
  r.pass.post_seconds += post.seconds();
}

// The ticks of the ring, each window's tiles and (final pass) its outputs.
void Computation::circulant_pass(bool outputs, SparseOutputs* sparse, CirculantChecks* checks) {
  const int rank = team.rank(), ranks = team.size();
  std::vector<CirculantWindow> windows;
  std::int64_t ticks = 0;
  ring->circulant(
      [&](std::int64_t j, std::int64_t t, const Packed& data, std::int64_t base) {
        if (outputs && out.progress && ticks > 0) out.progress(ticks, plan.pieces_per_block * plan.steps);
        ++ticks;
        plan.circulant_windows(rank, j, t, in.two, windows);
        const std::int64_t col_list0 = plan.piece(static_cast<int>((rank + t) % ranks), j, in.two).first;
        for (const CirculantWindow& w : windows) {
          {
            ScopedRegion compute_region("kmini::gram::compute");
            compute_window(w, data, base);
          }
          ring->progress();
          if (outputs) circulant_window(w, col_list0, sparse, checks);
        }
        if (outputs && sparse) {
          FencedTimer<ExecSpace> post(team.exec);
          sparse->end_step(j, t);  // the partner piece's lists go home
          r.pass.post_seconds += post.seconds();
        }
      },
      [&] { return outputs && interrupted(); });
  if (r.interrupted && sparse) sparse->settle();  // the lists in flight land before their buffers go
}

// `repeat - 1` passes of the ring's tiles alone.
void Computation::circulant_repeats() {
  for (std::int64_t rep = 0; rep + 1 < c.repeat; ++rep)
    r.pass.compute.add(team.comm,
                       time_together(team.comm, team.exec, [&] { circulant_pass(false, nullptr, nullptr); }));
}

// The final pass with the outputs; the checked rows from the windows that
// hold them, summed over the ranks, each rank keeping its block's.
void Computation::circulant_final_pass(SparseOutputs& sparse) {
  CirculantChecks checks;
  if (team.verify) {
    checks.rows = r.checked.rows;
    checks.targets = plan.targets;
    checks.values.assign(checks.rows.size() * static_cast<std::size_t>(plan.targets), 0);
    checks.columns = collectively(team.comm, "gram", [&] {
      return Kokkos::View<std::int32_t*, MemSpace>("kmini::gram::checked_columns",
                                                   static_cast<std::int64_t>(checks.rows.size()) * plan.height);
    });
  }
  const double before = r.pass.post_seconds;
  const double seconds =
      time_together(team.comm, team.exec, [&] { circulant_pass(true, &sparse, team.verify ? &checks : nullptr); });
  // The final pass's compute: its time but the outputs' (this rank's).
  r.final_compute_seconds = seconds - (r.pass.post_seconds - before);
  r.pass.compute.add(team.comm, r.final_compute_seconds);
  if (!team.verify || checks.rows.empty()) return;
  MPI_Allreduce(MPI_IN_PLACE, checks.values.data(), static_cast<int>(checks.values.size()), MPI_INT32_T, MPI_SUM,
                team.comm);
  const std::int64_t own0 = Plan::block_begin(plan.rows, team.size(), team.rank());
  const std::int64_t own1 = Plan::block_begin(plan.rows, team.size(), team.rank() + 1);
  for (std::size_t x = 0; x < checks.rows.size(); ++x) {
    const std::int64_t i = checks.rows[x];
    if (i < own0 || i >= own1) continue;  // each rank checks the rows of its block
    const auto first = checks.values.begin() + static_cast<std::ptrdiff_t>(x * plan.targets);
    r.checked.values[i].assign(first, first + plan.targets);
    r.checked.from[i] = 0;
  }
}

// Row sums, histogram and checksum over all ranks, and the trace.
void Computation::gather_summary() {
  ScopedRegion summary_region("kmini::gram::summary");
  const std::int64_t rows = plan.rows;
  Summary& summary = r.summary;
  std::vector<std::int32_t> host_ones(static_cast<std::size_t>(rows));
  copy_to_host<std::int32_t>(team.exec, buffers.ones, rows, host_ones.data());
  for (auto v : host_ones) summary.trace += v;
  if (out.row_ones) r.row_ones = std::move(host_ones);
  if (!want_summary) return;
  summary.row_sums.resize(static_cast<std::size_t>(rows));
  summary.histogram.resize(kHistogramBins);
  copy_to_host<std::int64_t>(team.exec, buffers.row_sums, rows, summary.row_sums.data());
  copy_to_host<std::uint64_t>(team.exec, buffers.histogram, kHistogramBins, summary.histogram.data());
  std::uint64_t checksum = 0;  // this rank's part
  Kokkos::deep_copy(team.exec, Kokkos::View<std::uint64_t, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(&checksum),
                    buffers.checksum);
  team.exec.fence();
  mpi::allreduce(team.comm, summary.row_sums.data(), static_cast<int>(rows), MPI_INT64_T, MPI_SUM);
  mpi::allreduce(team.comm, summary.histogram.data(), kHistogramBins, MPI_UINT64_T, MPI_SUM);
  mpi::allreduce(team.comm, &checksum, 1, MPI_UINT64_T, MPI_SUM);
  summary.checksum = checksum;
}

// The ring's report fields.
void report_ring(const Team& team, const Plan& plan, const Ring& ring, Json& m) {
  m["ring_schedule"] = Json(std::string(ring_schedule_name(plan.schedule)));
  m["ring_transfer"] = Json(std::string(Ring::path_name(ring.path())));
  m["ring_bytes_sent_per_rank"] = allreduce_max(team.comm, ring.bytes_sent());
  // Seconds a rank waited on MPI in the ring (all passes): what the computation did not hide.
  m["ring_wait_seconds"] = allreduce_max(team.comm, ring.wait_seconds());
}

}  // namespace

Outcome compute(const Team& team, const Config& c, const Plan& plan, const Inputs& in, Outputs& out,
                PhaseClock<ExecSpace>* clock) {
  const auto phase = [&](const char* name) {
    if (clock) clock->start(name);
  };
  phase("compute");  // its buffers' allocation included
  Computation run(team, c, plan, in, out);
  std::optional<SparseOutputs> sparse;
  if (plan.circulant()) {
    run.circulant_repeats();
    phase("outputs");
    sparse.emplace(team.exec, c, plan, team.comm, out.records);
    run.circulant_final_pass(*sparse);
  } else {
    run.timed_repeats();
    phase("outputs");
    sparse.emplace(team.exec, c, plan, team.comm, out.records);
    run.final_pass(*sparse);
    if (run.pruned && !run.r.interrupted) run.pruned->report(run.in, run.mine, run.r);
  }
  Outcome& r = run.r;
  // The final pass computes while it feeds the outputs: its tiles are compute.
  if (clock) clock->attribute("compute", r.final_compute_seconds);
  if (run.ring) report_ring(team, plan, *run.ring, r.metrics);
  if (r.interrupted) return std::move(r);
  sparse->finish(r.metrics, &r.sparse_summary, &r.counts);
  r.write_seconds = sparse->write_seconds() + (out.dense ? out.dense->write_seconds() : 0);
  run.gather_summary();
  return std::move(r);
}

}  // namespace kmini::gram::detail
