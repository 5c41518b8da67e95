// GramKernel::run: the CLI's Gram run. Reads and packs the deck's inputs,
// probes the roof, and runs gram::compute (impl/gram_compute.hpp) with sinks
// that write the deck's files; then verifies and reports.
#include "core/format.hpp"
#include "core/timer.hpp"
#include "gram/gram.hpp"
#include "gram/gram_sparse.hpp"
#include "gram/impl/gram_compute.hpp"
#include "gram/impl/gram_detail.hpp"
#include "gram/impl/gram_text.hpp"
#include "io/npy.hpp"
#include "kernel/phases.hpp"

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace kmini::gram {

namespace {

using namespace detail;

// write.C: one .npy for all ranks (MPI-IO), written round by round: each
// slice as a block of the packed upper triangle, or the slice and (one input,
// full) its mirror below the diagonal.
class DenseFile final : public DenseSink {
 public:
  DenseFile(const Team& team, const Config& c, const Plan& plan, const std::string& path)
      : exec_(team.exec), comm_(team.comm), c_(c), plan_(plan), path_(path) {}

  void round(const Slice* s, const SliceGeometry& g, const IntView& counts, const FloatView& values) override {
    if (s) {
      // The slice values as written: counts (int32) or similarity (float32), 4 bytes each.
      upper_bytes_.resize(static_cast<std::size_t>(g.height() * g.width()) * 4);
      if (c_.float_values()) copy_to_host<float>(exec_, values, g.height() * g.width(), upper_bytes_.data());
      else copy_to_host<std::int32_t>(exec_, counts, g.height() * g.width(), upper_bytes_.data());
      reshape(*s, g);
    }
    const Kokkos::Timer timer;
    writer().write_round(s ? &upper_ : nullptr);
    if (!c_.upper && !c_.two_inputs()) writer().write_round(s && has_lower_ ? &lower_ : nullptr);
    write_seconds_ += timer.seconds();
  }
  void commit() override {
    const Kokkos::Timer timer;
    writer().commit();
    write_seconds_ += timer.seconds();
  }
  double write_seconds() const override { return write_seconds_; }

 private:
  void reshape(const Slice& s, const SliceGeometry& g);
  // Opened at the first round (collective), once the slice loop's buffers are allocated.
  npy::DistributedWriter& writer() {
    if (!writer_)
      writer_ = std::make_unique<npy::DistributedWriter>(
          comm_, path_, c_.float_values() ? npy::DType::F4 : npy::DType::I4,
          c_.upper ? npy::Shape{plan_.rows * (plan_.rows + 1) / 2} : npy::Shape{plan_.rows, plan_.targets});
    return *writer_;
  }
  ExecSpace exec_;
  MPI_Comm comm_;
  const Config& c_;
  const Plan& plan_;
  std::string path_;
  std::unique_ptr<npy::DistributedWriter> writer_;
  std::vector<char> upper_bytes_, lower_bytes_;
  npy::DistributedWriter::Block upper_, lower_;
  bool has_lower_ = false;
  double write_seconds_ = 0;
};

void DenseFile::reshape(const Slice& s, const SliceGeometry& g) {
  const std::int64_t h = g.height(), w = g.width(), rows = plan_.rows;
  has_lower_ = false;
  if (c_.upper) {
    // Rows r0..r1 of the packed upper triangle are one contiguous run.
    std::vector<char> packed_rows;
    packed_rows.reserve(static_cast<std::size_t>(h * w) * 4);
    for (std::int64_t i = 0; i < h; ++i)
      packed_rows.insert(packed_rows.end(), upper_bytes_.begin() + (i * w + i) * 4,
                         upper_bytes_.begin() + (i + 1) * w * 4);
    upper_bytes_.swap(packed_rows);
    const std::int64_t first = s.r0 * rows - s.r0 * (s.r0 - 1) / 2;
    upper_ = {0, first, 1, static_cast<std::int64_t>(upper_bytes_.size() / 4), upper_bytes_.data()};
    return;
  }
  upper_ = {s.r0, g.col0(), h, w, upper_bytes_.data()};
  // The mirror: C(r1.., r0..r1) = C(r0..r1, r1..)^T.
  if (!c_.two_inputs() && s.r1 < rows) {
    const std::int64_t below = rows - s.r1;
    lower_bytes_.resize(static_cast<std::size_t>(below * h) * 4);
    for (std::int64_t j = 0; j < below; ++j)
      for (std::int64_t i = 0; i < h; ++i)
        std::copy_n(upper_bytes_.begin() + (i * w + h + j) * 4, 4, lower_bytes_.begin() + (j * h + i) * 4);
    lower_ = {s.r1, s.r0, below, h, lower_bytes_.data()};
    has_lower_ = true;
  }
}

// write.pairs and write.top_k: .npy files for all ranks. The pairs' file is
// opened at the first round, once the outputs' buffers are allocated.
// write.pairs.text and write.top_k.text (when asked for): the same records as
// tab-separated text with the rows' IDs (impl/gram_text.hpp).
class RecordFiles final : public RecordSink {
 public:
  RecordFiles(MPI_Comm comm, const Config& c, std::string pairs_path, std::string top_k_path)
      : comm_(comm), c_(c), pairs_path_(std::move(pairs_path)), top_k_path_(std::move(top_k_path)) {}
  void pairs(std::uint64_t first, std::uint64_t n, const char* records) override {
    open_pairs();
    pairs_->write_elements_round(first, n, records);
    if (pairs_text_) pairs_text_->append(static_cast<std::int64_t>(first), pairs_lines(c_, n, records));
  }
  void commit_pairs(std::int64_t total) override {
    open_pairs();
    pairs_->commit(total);
    if (pairs_text_) pairs_text_->commit();
  }
  void top_k(std::int64_t row0, std::int64_t rows, std::int64_t k, std::int64_t all_rows,
             const char* records) override {
    npy::DistributedWriter writer(comm_, top_k_path_, top_k_record_type(c_.similarity), {all_rows, k});
    // Each rank's rows are one contiguous range: independent writes (the
    // collective write's buffers were the largest allocation of a circulant run).
    writer.write_elements_independent(static_cast<std::uint64_t>(row0 * k), static_cast<std::uint64_t>(rows * k),
                                      records);
    writer.commit();
    if (!c_.write_top_k_text.empty()) {
      TextFile text(comm_, text_path(c_.write_top_k_text), kTopKTextHeader);
      text.append(row0, top_k_lines(c_, row0, rows, k, records));
      text.commit();
    }
    if (!c_.write_top_k_simsearch.empty()) {
      TextFile text(comm_, text_path(c_.write_top_k_simsearch), simsearch_header(c_).c_str());
      text.append(row0, simsearch_lines(c_, row0, rows, k, records));
      text.commit();
    }
  }
  // The text files' paths, resolved as the .npy files' are (against --out).
  std::function<std::string(const std::string&)> text_path;

 private:
  void open_pairs() {
    if (pairs_) return;
    pairs_ = std::make_unique<npy::DistributedWriter>(comm_, pairs_path_, pair_record_type(c_.similarity),
                                                      npy::DistributedWriter::GrowingLength{});
    if (!c_.write_pairs_text.empty())
      pairs_text_ = std::make_unique<TextFile>(comm_, text_path(c_.write_pairs_text), kPairsTextHeader);
  }
  MPI_Comm comm_;
  const Config& c_;
  std::string pairs_path_, top_k_path_;
  std::unique_ptr<npy::DistributedWriter> pairs_;
  std::unique_ptr<TextFile> pairs_text_;
};

}  // namespace

std::unique_ptr<RecordSink> detail::record_files(MPI_Comm comm, const Config& c, const std::string& pairs_path,
                                                 const std::string& top_k_path,
                                                 const std::function<std::string(const std::string&)>& text_path) {
  auto files = std::make_unique<RecordFiles>(comm, c, pairs_path, top_k_path);
  files->text_path = text_path;
  if (!files->text_path) files->text_path = [](const std::string& p) { return p; };
  return files;
}

namespace {

// Rank 0's progress lines of the final pass, at most one every
// kProgressSeconds: rounds (circulant: ticks) done of the total, the rate
// since the pass began, the time left at that rate. Host clock only.
class ProgressLines {
 public:
  static constexpr double kProgressSeconds = 5;
  ProgressLines(std::ostream& os, const char* what) : os_(os), what_(what) {}
  void operator()(std::int64_t done, std::int64_t total) {
    const double t = timer_.seconds();
    if (t - last_ < kProgressSeconds || done <= 0) return;
    last_ = t;
    const double rate = double(done) / t;
    os_ << "gram: " << what_ << " " << done << "/" << total << "  " << format_number(rate, 3) << " " << what_ << "s/s  "
        << duration_text(double(total - done) / rate) << " left" << std::endl;
  }

 private:
  static std::string duration_text(double s) {
    if (s < 120) return format_number(s, 2) + " s";
    if (s < 7200) return format_number(s / 60, 2) + " min";
    return format_number(s / 3600, 3) + " h";
  }
  std::ostream& os_;
  const char* what_;
  Kokkos::Timer timer_;
  double last_ = 0;
};

// The plan's fields of the report.
void report_plan(const Plan& plan, Json& m) {
  m["distribution"] = Json(std::string(distribution_name(plan.distribution)));
  m["distribution_auto"] = Json(plan.automatic);
  m["packed_bytes_per_rank"] = plan.packed_bytes;
}

}  // namespace

KernelReport GramKernel::run(RunContext& ctx) {
  // The time to solution, phase by phase (results.json's `phases`).
  PhaseClock<ExecSpace> clock(ctx.exec);
  clock.start("pack");  // inputs read (attributed to "read"), packed
  const Config& c = config_;
  const Plan plan = make_plan(c, ctx.env.size());
  const Inputs in = load_inputs(ctx, c, plan);
  clock.attribute("read", in.read.read_seconds);
  std::optional<Probes> probes_before;  // the roof, where asked for (again after the computation)
  if (c.probe) {
    clock.start("probe");
    probes_before = measure_probes(ctx, c);
  }
  const Team team{ctx.env.comm(), ctx.exec, ctx.verify};
  std::unique_ptr<DenseFile> dense;
  if (!c.write_c.empty() && !plan.circulant())
    dense = std::make_unique<DenseFile>(team, c, plan, ctx.output_path(c.write_c));
  const auto records = record_files(team.comm, c, ctx.output_path(c.write_pairs), ctx.output_path(c.write_top_k),
                                    [&ctx](const std::string& p) { return ctx.output_path(p); });
  Outputs outputs;
  outputs.dense = dense.get();
  outputs.records = records.get();
  ProgressLines progress(ctx.out, plan.circulant() ? "tick" : "round");
  if (ctx.progress && ctx.env.is_root()) outputs.progress = std::ref(progress);
  Outcome r = compute(team, c, plan, in, outputs, &clock);  // compute, outputs

  KernelReport report;
  report_plan(plan, report.metrics);
  for (const auto& [key, value] : r.metrics.members()) report.metrics[key] = value;
  clock.attribute("write", r.write_seconds);
  clock.start("verification");
  if (ctx.verify) verify(ctx, c, plan, r.checked, r.summary, report);
  clock.start(c.probe ? "probe" : "outputs");  // without the probe, the report's few reductions
  const bool with_checksum = (!c.write_summary.empty() || ctx.verify) && !r.pruned;
  report_throughput(ctx, c, plan, r.pass, in.pack_seconds, r.summary, with_checksum,
                    probes_before ? &*probes_before : nullptr, report);
  report_read_roof(ctx.env, in, report.metrics);
  if (c.baseline) {
    clock.start("baseline_sgemm");
    report_baseline(ctx, c, plan, r.pass.compute.slowest(), report);
  }
  clock.start("write");
  if (!c.write_summary.empty()) write_summary_file(ctx, c, r.summary, r.sparse_summary);
  report.phases = clock.finish();
  return report;
}

}  // namespace kmini::gram
