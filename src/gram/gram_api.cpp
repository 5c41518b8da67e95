#include "gram/gram_api.hpp"

#include "core/timer.hpp"
#include "gram/impl/gram_detail.hpp"
#include "gram/impl/gram_kernels.hpp"
#include "gram/impl/gram_outputs.hpp"
#include "gram/impl/gram_records.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace kmini::gram {
namespace {

using ApiMemory = ApiExec::memory_space;
using ApiPacked = PackedView<ApiMemory>;
using I32View = Kokkos::View<std::int32_t*, ApiMemory>;
using I64View = Kokkos::View<std::int64_t*, ApiMemory>;
using F64View = Kokkos::View<double*, ApiMemory>;
using F32View = Kokkos::View<float*, ApiMemory>;
using HostBytes =
    Kokkos::View<const std::uint8_t**, Kokkos::LayoutRight, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
template <class T>
using HostOf = Kokkos::View<T*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

static_assert(kMaxCountThresholds == kMaxThresholds, "the light header's limit is the kernels'");
constexpr bool kHostMemory = Kokkos::SpaceAccessibility<Kokkos::HostSpace, ApiMemory>::accessible;
// Pairs are collected in pieces of at most this many records (24 MiB of
// device buffers), so a slice with many pairs needs no buffer of its size.
constexpr std::int64_t kPairPiece = std::int64_t(1) << 20;

using DeviceBytes =
    Kokkos::View<const std::uint8_t**, Kokkos::LayoutRight, ApiMemory, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

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

template <class T>
std::vector<T> to_host(const ApiExec& exec, const Kokkos::View<T*, ApiMemory>& v, std::int64_t n) {
  std::vector<T> out(static_cast<std::size_t>(n));
  detail::copy_to_host<T>(exec, v, n, out.data());
  return out;
}

// The state of one compute call on the device: the slice and what the
// sparse outputs accumulate over the slices.
struct SliceState {
  I32View ones_a, ones_b;  // ones of A's rows, of the columns' rows
  I32View counts;          // the slice: height x width counts
  F32View values;          // the slice's float32 similarities (dense, not counts)
  F64View thresholds;      // count_at_least, sorted
  I64View bins;
  I64View per_row, offsets;  // pairs of the slice's rows, their scan
  I64View pair_i, pair_j;    // a piece of the pairs
  F64View pair_v;
  I64View best_j;  // top-k lists, rows x k
  F64View best_v;
};

template <class Values>
void append_pairs(const ApiExec& exec, const Values& values, const SliceGeometry& g, const ComputeParams& p,
                  SliceState& s, ComputeResult& r) {
  const std::int64_t h = g.height();
  pairs_per_row(exec, values, g, p.pairs_min, s.per_row);
  const std::int64_t total = pair_offsets(exec, s.per_row, s.offsets, h);
  if (total == 0) return;
  r.pairs.reserve(r.pairs.size() + static_cast<std::size_t>(total * pair_record_bytes));
  for (std::int64_t at = 0; at < total; at += kPairPiece) {
    const std::int64_t n = std::min(kPairPiece, total - at);
    collect_pairs(exec, values, g, p.pairs_min, s.offsets, at, n, s.pair_i, s.pair_j, s.pair_v);
    const auto hi = to_host(exec, s.pair_i, n), hj = to_host(exec, s.pair_j, n);
    const auto hv = to_host(exec, s.pair_v, n);
    for (std::int64_t e = 0; e < n; ++e) {
      append_pair(r.pairs, p.similarity, hi[e], hj[e], hv[e]);
    }
  }
  r.pair_count += total;
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
    copy = to_host(exec, slice, h * w);
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

}  // namespace

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
  if (p.pairs) bytes += (h + 1) * 16 + std::min(kPairPiece, h * targets) * 24;
  return bytes;
}

ComputeResult compute(const ApiExec& exec, const ApiMatrix& a, const ApiMatrix* b, const ComputeParams& p,
                      void* dense) {
  ScopedRegion region("kmini::gram::library_compute");
  ComputeResult r;
  const bool two = b != nullptr, float_values = p.similarity != Similarity::Counts;
  const std::int64_t rows = a.rows, targets = two ? b->rows : a.rows;
  const std::int64_t h = slice_height(a, p);
  const std::int64_t k = p.top_k;
  const bool counting = !p.count_at_least.empty();
  if (counting && p.count_at_least.size() > static_cast<std::size_t>(kMaxThresholds))
    throw std::invalid_argument("count_at_least: at most " + std::to_string(kMaxThresholds) + " thresholds");
  if (p.upper && two) throw std::invalid_argument("upper: the packed triangle needs one input (C = A A^T)");

  const ApiPacked pa = pack(exec, a, "kmini::gram::A");
  const ApiPacked pb = two ? pack(exec, *b, "kmini::gram::B") : pa;
  SliceState s;
  s.ones_a = I32View("kmini::gram::ones", rows);
  s.ones_b = two ? I32View("kmini::gram::ones_B", targets) : s.ones_a;
  row_ones(exec, pa, s.ones_a);
  if (two) row_ones(exec, pb, s.ones_b);
  r.row_counts = to_host(exec, s.ones_a, rows);

  const bool in_dense = slice_in_dense(a, p);
  s.counts = in_dense ? I32View(static_cast<std::int32_t*>(dense), rows * targets)
                      : I32View("kmini::gram::C_slice", h * targets);
  if (p.dense && float_values) s.values = F32View("kmini::gram::S_slice", h * targets);
  std::vector<double> sorted = p.count_at_least;
  std::sort(sorted.begin(), sorted.end());
  s.thresholds = F64View("kmini::gram::thresholds", sorted.size());
  Kokkos::deep_copy(exec, s.thresholds, HostOf<double>(sorted.data(), sorted.size()));
  s.bins = I64View("kmini::gram::threshold_bins", counting ? sorted.size() + 1 : 0);
  if (p.pairs) {
    s.per_row = I64View("kmini::gram::pairs_per_row", h);
    s.offsets = I64View("kmini::gram::pair_offsets", h + 1);
    const std::int64_t piece = std::min(kPairPiece, h * targets);
    s.pair_i = I64View("kmini::gram::pair_i", piece);
    s.pair_j = I64View("kmini::gram::pair_j", piece);
    s.pair_v = F64View("kmini::gram::pair_v", piece);
  }
  s.best_j = I64View("kmini::gram::top_k_j", rows * k);
  s.best_v = F64View("kmini::gram::top_k_value", rows * k);
  if (k > 0) clear_top_k(exec, s.best_j, s.best_v);

  for (std::int64_t r0 = 0; r0 < rows && targets > 0; r0 += h) {
    if (p.interrupted && p.interrupted()) {
      r.interrupted = true;
      return r;
    }
    SliceGeometry g;
    g.rows = rows;
    g.r0 = r0;
    g.r1 = std::min(rows, r0 + h);
    g.targets = two ? targets : 0;
    gram_slice(exec, pa, pb, g, s.counts, kAutoEngine);
    with_similarity(p.similarity, [&](auto kind) {
      const SliceValues<I32View, I32View, decltype(kind)::value> values(s.counts, s.ones_a, s.ones_b, g);
      if (counting) count_at_least(exec, values, g, s.thresholds, s.bins);
      if (k > 0) top_k_slice(exec, values, g, static_cast<int>(k), s.best_j, s.best_v);
      if (p.pairs) append_pairs(exec, values, g, p, s, r);
    });
    if (p.dense && float_values) {
      similarity_slice(exec, p.similarity, s.counts, s.ones_a, s.ones_b, g, s.values);
      place_slice(exec, s.values, g, p, targets, dense);
    } else if (p.dense && !in_dense) {
      place_slice(exec, s.counts, g, p, targets, dense);
    }
    ++r.slices;
  }
  exec.fence();

  if (counting) {
    const auto bins = to_host(exec, s.bins, static_cast<std::int64_t>(sorted.size() + 1));
    for (double x : p.count_at_least) r.counts.push_back(pairs_at_or_above(sorted, bins, x));
  }
  if (k > 0) {
    const auto bj = to_host(exec, s.best_j, rows * k);
    const auto bv = to_host(exec, s.best_v, rows * k);
    r.top_k.reserve(static_cast<std::size_t>(rows * k * top_k_record_bytes));
    for (std::int64_t e = 0; e < rows * k; ++e) append_top_k_entry(r.top_k, p.similarity, bj[e], bv[e]);
  }
  return r;
}

}  // namespace kmini::gram
