#include "gram/gram_api.hpp"

#include "core/solo.hpp"
#include "core/timer.hpp"
#include "gram/impl/gram_api_detail.hpp"
#include "gram/impl/gram_compute.hpp"
#include "gram/impl/gram_detail.hpp"
#include "gram/impl/gram_kernels.hpp"
#include "gram/impl/gram_outputs.hpp"
#include "gram/impl/gram_records.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace kmini::gram {
namespace {

using HostBytes =
    Kokkos::View<const std::uint8_t**, Kokkos::LayoutRight, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

static_assert(kMaxCountThresholds == kMaxThresholds, "the light header's limit is the kernels'");

using DeviceBytes =
    Kokkos::View<const std::uint8_t**, Kokkos::LayoutRight, ApiMemory, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

}  // namespace

// The matrix in the tile kernel's padded layout on the device.
ApiPacked pack(const ApiExec& exec, const ApiMatrix& m, const char* label) {
  ApiPacked packed(std::string(label), m.rows, words_allocated(m.cols));
  if (m.rows == 0) return packed;
  if (m.on_device) {  // read where it is
    if (m.format == ApiMatrix::Format::Words) {
      const auto* w = static_cast<const Word*>(m.data);
      const std::int64_t nw = words_for(m.cols);
      Kokkos::parallel_for(
          "kmini::gram::pack_words", Kokkos::RangePolicy<ApiExec>(exec, 0, m.rows * nw),
          KOKKOS_LAMBDA(const std::int64_t e) { packed(e / nw, e % nw) = w[e]; });
      return packed;
    }
    const DeviceBytes bytes(static_cast<const std::uint8_t*>(m.data), m.rows, m.row_bytes());
    if (m.format == ApiMatrix::Format::PackBits) pack_packed_bytes(exec, packed, bytes, 0);
    else pack_unpacked_bytes(exec, packed, bytes, 0);
    return packed;
  }
  if (m.format == ApiMatrix::Format::Words) {
    const auto* w = static_cast<const Word*>(m.data);
    const std::int64_t nw = words_for(m.cols);
    auto host = Kokkos::create_mirror_view(packed);
    for (std::int64_t i = 0; i < m.rows; ++i)
      for (std::int64_t k = 0; k < nw; ++k) host(i, k) = w[i * nw + k];
    Kokkos::deep_copy(exec, packed, host);
    return packed;
  }
  const HostBytes bytes(static_cast<const std::uint8_t*>(m.data), m.rows, m.row_bytes());
  auto staged = Kokkos::create_mirror_view_and_copy(ApiMemory(), bytes);
  if (m.format == ApiMatrix::Format::PackBits) pack_packed_bytes(exec, packed, staged, 0);
  else pack_unpacked_bytes(exec, packed, staged, 0);
  exec.fence();  // `staged` leaves scope
  return packed;
}

namespace {

// first_bad_value on the execution space that can read the data.
template <class Exec>
BadValue first_bad_value_on(const Exec& exec, const ApiMatrix& m) {
  using Memory = typename Exec::memory_space;
  using Bytes = Kokkos::View<const std::uint8_t*, Memory, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  BadValue bad;
  if (m.rows == 0 || m.cols == 0) return bad;
  const auto* bytes = static_cast<const std::uint8_t*>(m.data);
  const std::int64_t rows = m.rows, cols = m.cols, row_bytes = m.row_bytes();
  std::int64_t first = std::numeric_limits<std::int64_t>::max();
  if (m.format == ApiMatrix::Format::Unpacked) {
    Kokkos::parallel_reduce(
        "kmini::gram::check_values", Kokkos::RangePolicy<Exec>(exec, 0, rows * cols),
        KOKKOS_LAMBDA(const std::int64_t e, std::int64_t& lo) {
          if (bytes[e] > 1 && e < lo) lo = e;
        },
        Kokkos::Min<std::int64_t>(first));
    if (first == std::numeric_limits<std::int64_t>::max()) return bad;
    std::uint8_t value = 0;
    Kokkos::deep_copy(exec, Kokkos::View<std::uint8_t, Kokkos::HostSpace>(&value),
                      Kokkos::subview(Bytes(bytes, rows * cols), first));
    exec.fence();
    return {first / cols, first % cols, value};
  }
  // The bits past `cols` in each row's last byte (numpy's packbits: the
  // first column is the high bit) or word (column k is bit k % 64).
  const bool words = m.format == ApiMatrix::Format::Words;
  const int used = static_cast<int>(cols % (words ? 64 : 8));
  if (used == 0) return bad;
  const std::uint64_t mask = words ? ~((std::uint64_t(1) << used) - 1) : (0xFFu >> used);
  Kokkos::parallel_reduce(
      "kmini::gram::check_padding", Kokkos::RangePolicy<Exec>(exec, 0, rows),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& lo) {
        std::uint64_t last = 0;
        if (words) memcpy(&last, bytes + (i + 1) * row_bytes - 8, 8);
        else last = bytes[(i + 1) * row_bytes - 1];
        if ((last & mask) != 0 && i < lo) lo = i;
      },
      Kokkos::Min<std::int64_t>(first));
  if (first != std::numeric_limits<std::int64_t>::max()) bad.row = first;
  return bad;
}

// The slice's values into dense C (host): rows r0..r1 from column col0 on,
// and with one input (full) the mirror below the slice; or the packed upper
// triangle's rows r0..r1.
template <class T>
void write_dense(const ApiExec& exec, const Kokkos::View<T*, ApiMemory>& slice, const SliceGeometry& g, bool upper,
                 std::int64_t targets, T* dense) {
  const std::int64_t h = g.height(), w = g.width(), col0 = g.col0(), rows = g.rows;
  std::vector<T> copy;
  const T* v = slice.data();
  if constexpr (!kHostMemory) {
    copy.resize(static_cast<std::size_t>(h * w));
    detail::copy_to_host<T>(exec, slice, h * w, copy.data());
    v = copy.data();
  }
  if (upper) {
    for (std::int64_t i = g.r0; i < g.r1; ++i) {
      const std::int64_t first = i * rows - i * (i - 1) / 2;  // row i's first element, C(i, i)
      std::copy_n(v + (i - g.r0) * w + (i - col0), rows - i, dense + first);
    }
    return;
  }
  for (std::int64_t li = 0; li < h; ++li) std::copy_n(v + li * w, w, dense + (g.r0 + li) * targets + col0);
  if (!g.symmetric()) return;
  for (std::int64_t j = g.r1; j < rows; ++j)
    for (std::int64_t li = 0; li < h; ++li) dense[j * targets + g.r0 + li] = v[li * w + (j - col0)];
}

// The same where dense C is in the kernels' memory space (a device array):
// one kernel per slice writes its elements, and their mirror below the slice,
// where they go, so C never passes through the host.
template <class T>
void write_dense_in_place(const ApiExec& exec, const Kokkos::View<T*, ApiMemory>& slice, const SliceGeometry& g,
                          bool upper, std::int64_t targets, T* dense) {
  const std::int64_t w = g.width(), col0 = g.col0(), rows = g.rows, r0 = g.r0, r1 = g.r1;
  const bool mirror = g.symmetric() && !upper;
  Kokkos::parallel_for(
      "kmini::gram::dense_in_place", Kokkos::RangePolicy<ApiExec>(exec, 0, g.height() * w),
      KOKKOS_LAMBDA(const std::int64_t e) {
        const std::int64_t i = r0 + e / w, j = col0 + e % w;
        const T v = slice(e);
        if (upper) {
          if (j >= i) dense[i * rows - i * (i - 1) / 2 + (j - i)] = v;  // row i starts at C(i, i)
          return;
        }
        dense[i * targets + j] = v;
        if (mirror && j >= r1) dense[j * targets + i] = v;
      });
}

// A slice into dense C where C is: by a kernel on a device array
// (dense_on_device), else through the host once the slice is done.
template <class T>
void place_slice(const ApiExec& exec, const Kokkos::View<T*, ApiMemory>& slice, const SliceGeometry& g,
                 const ComputeParams& p, std::int64_t targets, void* dense) {
  if (p.dense_on_device) return write_dense_in_place(exec, slice, g, p.upper, targets, static_cast<T*>(dense));
  exec.fence();
  write_dense(exec, slice, g, p.upper, targets, static_cast<T*>(dense));
}

// Rows of C per slice.
std::int64_t slice_height(const ApiMatrix& a, const ComputeParams& p) {
  return p.slice_rows > 0 ? std::min(p.slice_rows, a.rows) : a.rows;
}

// Zero-copy: one slice of counts is dense C itself where C is in the kernels'
// memory space (a host backend, or a device array).
bool slice_in_dense(const ApiMatrix& a, const ComputeParams& p) {
  return (kHostMemory || p.dense_on_device) && p.dense && !p.upper && p.similarity == Similarity::Counts &&
         slice_height(a, p) == a.rows;
}

// Dense C in the caller's memory: each slice placed where it goes, or (zero
// copy) computed in place.
class DenseMemory final : public detail::DenseSink {
 public:
  DenseMemory(const ApiExec& exec, const ComputeParams& p, std::int64_t rows, std::int64_t targets, void* dense,
              bool in_place)
      : exec_(exec), p_(p), rows_(rows), targets_(targets), dense_(dense), in_place_(in_place) {}
  void round(const Slice* s, const SliceGeometry& g, const I32View& counts, const F32View& values) override {
    if (!s || in_place_) return;
    if (p_.similarity == Similarity::Counts) place_slice(exec_, counts, g, p_, targets_, dense_);
    else place_slice(exec_, values, g, p_, targets_, dense_);
  }
  void commit() override { exec_.fence(); }
  I32View counts_in_place() const override {
    return in_place_ ? I32View(static_cast<std::int32_t*>(dense_), rows_ * targets_) : I32View();
  }

 private:
  ApiExec exec_;
  const ComputeParams& p_;
  std::int64_t rows_, targets_;
  void* dense_;
  bool in_place_;
};

// The records of the sparse outputs in the result (one process: its records
// are all of them, in order).
class RecordMemory final : public detail::RecordSink {
 public:
  explicit RecordMemory(ComputeResult& r) : r_(r) {}
  void pairs(std::uint64_t first, std::uint64_t n, const char* records) override {
    if (n == 0) return;
    if (first * pair_record_bytes != r_.pairs.size()) throw std::logic_error("gram: pair records out of order");
    r_.pairs.insert(r_.pairs.end(), records, records + n * pair_record_bytes);
  }
  void commit_pairs(std::int64_t total) override { r_.pair_count = total; }
  void top_k(std::int64_t, std::int64_t rows, std::int64_t k, std::int64_t, const char* records) override {
    r_.top_k.assign(records, records + rows * k * top_k_record_bytes);
  }

 private:
  ComputeResult& r_;
};

}  // namespace

// The deck a library call amounts to: its outputs wanted (the names only mark
// them: the sinks above hold them), the automatic engine; one process: one
// slice height (the caller's budget is checked beforehand); `planned` (over
// ranks): the CLI's plan sets the height from memory_budget.
Config config_of(const ApiMatrix& a, const ApiMatrix* b, const ComputeParams& p, bool planned) {
  Config c;
  c.a.rows = a.rows;
  c.a.cols = a.cols;
  if (b) {
    c.b.rows = b->rows;
    c.b.cols = b->cols;
  }
  c.row_slice = planned ? p.slice_rows : slice_height(a, p);
  c.memory_budget = planned && p.memory_budget > 0 ? p.memory_budget : std::numeric_limits<double>::max();
  c.similarity = p.similarity;
  c.empty_similarity = p.empty_similarity;
  c.tversky_alpha = p.tversky_alpha;
  c.tversky_beta = p.tversky_beta;
  c.self_cols = p.self_cols;
  c.prune = p.prune;
  c.upper = p.upper;
  if (p.dense) c.write_c = "C";
  if (p.pairs) c.write_pairs = "pairs";
  c.pairs_min = p.pairs_min;
  if (p.top_k > 0) c.write_top_k = "top_k";
  if (p.summary) c.write_summary = "summary";
  c.top_k = p.top_k;
  c.top_k_min = p.top_k_min;
  c.count_at_least = p.count_at_least;
  c.engine = kAutoEngine;
  c.distribution = p.distribution;
  c.ring_schedule = p.ring_schedule;
  return c;
}

// No rows of A or no targets: no slice to compute; lists without partners.
ComputeResult without_slices(const ApiExec& exec, const ApiPacked& pa, const ComputeParams& p) {
  ComputeResult r;
  const std::int64_t rows = pa.extent(0);
  I32View ones("kmini::gram::ones", rows);
  row_ones(exec, pa, ones);
  r.row_counts.resize(static_cast<std::size_t>(rows));
  detail::copy_to_host<std::int32_t>(exec, ones, rows, r.row_counts.data());
  r.counts.assign(p.count_at_least.size(), 0);
  for (std::int64_t e = 0; e < rows * p.top_k; ++e) append_top_k_entry(r.top_k, p.similarity, -1, 0.0);
  return r;
}

BadValue first_bad_value(const ApiExec& exec, const ApiMatrix& m) {
  if (m.on_device || kHostMemory) return first_bad_value_on(exec, m);
  return first_bad_value_on(Kokkos::DefaultHostExecutionSpace(), m);
}

std::int64_t dense_elements(const ApiMatrix& a, const ApiMatrix* b, const ComputeParams& params) {
  if (!params.dense) return 0;
  return params.upper && !b ? a.rows * (a.rows + 1) / 2 : a.rows * (b ? b->rows : a.rows);
}

std::int64_t compute_device_bytes(const ApiMatrix& a, const ApiMatrix* b, const ComputeParams& p) {
  const std::int64_t targets = b ? b->rows : a.rows;
  const std::int64_t h = slice_height(a, p);
  std::int64_t bytes = a.rows * (words_allocated(a.cols) * 8 + a.row_bytes() + 4);
  if (b) bytes += b->rows * (words_allocated(b->cols) * 8 + b->row_bytes() + 4);
  const bool float_values = p.similarity != Similarity::Counts;
  // The slice (in dense C itself when that is zero-copy), its similarities.
  bytes += (slice_in_dense(a, p) ? 0 : h * targets * 4) + (p.dense && float_values ? h * targets * 4 : 0);
  bytes += a.rows * p.top_k * 16;
  if (p.pairs) bytes += h * 8 + (h + 1) * 8 + pair_buffer_records(h, targets) * 24;
  return bytes;
}

ComputeResult compute(const ApiExec& exec, const ApiMatrix& a, const ApiMatrix* b, const ComputeParams& p,
                      void* dense) {
  ScopedRegion region("kmini::gram::library_compute");
  if (!p.count_at_least.empty() && p.count_at_least.size() > static_cast<std::size_t>(kMaxThresholds))
    throw std::invalid_argument("count_at_least: at most " + std::to_string(kMaxThresholds) + " thresholds");
  if (p.upper && b) throw std::invalid_argument("upper: the packed triangle needs one input (C = A A^T)");
  const std::int64_t targets = b ? b->rows : a.rows;
  detail::Inputs in;
  in.a = pack(exec, a, "kmini::gram::A");
  if (a.rows == 0 || targets == 0) return without_slices(exec, in.a, p);
  in.two = b != nullptr;
  if (in.two) in.b = pack(exec, *b, "kmini::gram::B");

  const Config c = config_of(a, b, p, false);
  const Plan plan = make_plan(c, 1);
  ComputeResult r;
  DenseMemory dense_sink(exec, p, a.rows, targets, dense, slice_in_dense(a, p));
  RecordMemory records(r);
  detail::Outputs out;
  out.dense = p.dense ? &dense_sink : nullptr;
  out.records = &records;
  out.row_ones = true;
  out.interrupted = p.interrupted;
  // One process, without MPI (core/solo.hpp): callable where MPI is not started or not usable.
  detail::Outcome o = detail::compute(detail::Team{MPI_COMM_NULL, exec, false}, c, plan, in, out);
  r.interrupted = o.interrupted;
  r.slices = o.interrupted ? 0 : static_cast<std::int64_t>(plan.slices.size());
  r.counts = std::move(o.counts);
  r.row_counts = std::move(o.row_ones);
  if (p.summary && !o.interrupted) r.summary = detail::summary_text(c, o.summary, o.sparse_summary);
  return r;
}

}  // namespace kmini::gram
