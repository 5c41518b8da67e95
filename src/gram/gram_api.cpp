#include "gram/gram_api.hpp"

#include "core/collective.hpp"
#include "core/huge_pages.hpp"
#include "core/mpi_type.hpp"
#include "core/solo.hpp"
#include "core/timer.hpp"
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

using ApiMemory = ApiExec::memory_space;
using ApiPacked = PackedView<ApiMemory>;
using I32View = Kokkos::View<std::int32_t*, ApiMemory>;
using F32View = Kokkos::View<float*, ApiMemory>;
using HostBytes =
    Kokkos::View<const std::uint8_t**, Kokkos::LayoutRight, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

static_assert(kMaxCountThresholds == kMaxThresholds, "the light header's limit is the kernels'");
constexpr bool kHostMemory = Kokkos::SpaceAccessibility<Kokkos::HostSpace, ApiMemory>::accessible;

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

// --- over the ranks of a communicator -----------------------------------------

// The rank that holds global row i.
int owner_of(const std::vector<std::int64_t>& firsts, std::int64_t i) {
  return static_cast<int>(std::upper_bound(firsts.begin(), firsts.end() - 1, i) - firsts.begin()) - 1;
}

// An MPI count, or an error where a message is too long for one.
int mpi_count(std::int64_t n, const char* what) {
  if (n > std::numeric_limits<int>::max())
    throw std::length_error(std::string("gram: ") + what + " too long for one MPI message; use smaller slice_rows");
  return static_cast<int>(n);
}

// Every packed row on every rank: its own rows packed into their place, then
// gathered (allgather_rows). The allocations are agreed before the gather, so
// no rank waits in it for one that failed.
ApiPacked gather_packed(const ApiExec& exec, const RankRows& rr, const ApiMatrix& m, const char* label) {
  const ApiPacked all = collectively(rr.comm, "gram", [&] {
    ApiPacked t(std::string(label), rr.total(), words_allocated(m.cols));
    const std::int64_t first = rr.first();
    Kokkos::deep_copy(exec, Kokkos::subview(t, std::make_pair(first, first + m.rows), Kokkos::ALL()),
                      pack(exec, m, label));
    exec.fence();
    return t;
  });
  detail::allgather_rows(exec, rr.comm, all, rr.firsts);
  return all;
}

// This rank's rows of a ring plan's chunks (Plan::a_chunks, b_chunks), moved
// from the ranks that hold them (detail::rows_to_chunks).
ApiPacked chunk_rows(const ApiExec& exec, const RankRows& rr, const ApiMatrix& m, const std::vector<Chunk>& chunks,
                     const char* label) {
  const ApiPacked mine = collectively(rr.comm, "gram", [&] { return pack(exec, m, label); });
  return detail::rows_to_chunks(exec, rr.comm, mine, rr.firsts, chunks, label);
}

// The runs of a slice's values that rank rows [o0, o1) keep: f(dest, src,
// stride, n) for n values at src, src + stride, ... of the slice (h x w, as
// SliceGeometry says), to element `dest` of that rank's dense C. Its rows of
// the slice; one input, full: the mirror C(j, r0..r1) of its rows j below the
// slice; upper: its rows of the packed triangle.
template <class F>
void for_each_run(const SliceGeometry& g, bool upper, std::int64_t targets, std::int64_t o0, std::int64_t o1, F f,
                  bool mirror = true) {
  const std::int64_t w = g.width(), col0 = g.col0(), rows = g.rows;
  const std::int64_t i0 = std::max(g.r0, o0), i1 = std::min(g.r1, o1);
  for (std::int64_t i = i0; i < i1; ++i) {
    if (upper) {  // rows o0..i-1 come first: sum of (rows - t) for t in [o0, i)
      f((i - o0) * rows - (o0 + i - 1) * (i - o0) / 2, (i - g.r0) * w + (i - col0), 1, rows - i);
    } else {
      f((i - o0) * targets + col0, (i - g.r0) * w, 1, w);
    }
  }
  if (!g.symmetric() || upper || !mirror) return;
  for (std::int64_t j = std::max(g.r1, o0); j < o1; ++j) f((j - o0) * targets + g.r0, j - col0, w, g.height());
}

// The mirror runs of for_each_run for rows j in [j0, j1) (row j at dst + (j -
// j0) * pitch, h values): a transpose, in blocks so that its reads and writes
// stay in cache (a column at a time misses on every element).
template <class T>
void copy_mirror(const SliceGeometry& g, const T* v, std::int64_t j0, std::int64_t j1, T* dst, std::int64_t pitch) {
  constexpr std::int64_t b = 64;
  const std::int64_t w = g.width(), h = g.height(), col0 = g.col0();
  for (std::int64_t jb = j0; jb < j1; jb += b)
    for (std::int64_t ib = 0; ib < h; ib += b)
      for (std::int64_t li = ib; li < std::min(h, ib + b); ++li)
        for (std::int64_t j = jb; j < std::min(j1, jb + b); ++j) dst[(j - j0) * pitch + li] = v[li * w + (j - col0)];
}

// Values of a run list (the elements f is called for).
std::int64_t run_values(const SliceGeometry& g, bool upper, std::int64_t targets, std::int64_t o0, std::int64_t o1) {
  std::int64_t n = 0;
  for_each_run(g, upper, targets, o0, o1, [&](std::int64_t, std::int64_t, std::int64_t, std::int64_t m) { n += m; });
  return n;
}

// A host buffer in huge pages, grown as needed, not zero-filled: the rounds'
// messages (faulting in fresh 4 KiB pages costs more than the copies).
template <class T>
class MessageBuffer {
 public:
  T* reserve(std::int64_t n) {
    if (static_cast<std::int64_t>(v_.extent(0)) < n) {
      v_ = Kokkos::View<T*, Kokkos::HostSpace>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kmini::gram::messages"),
                                               n);
      advise_huge_pages(v_);
    }
    return v_.data();
  }

 private:
  Kokkos::View<T*, Kokkos::HostSpace> v_;
};

// Dense C over the ranks: each round, the slices' values go to the ranks
// whose rows they are (one all-to-all per round; every rank knows the plan,
// so the messages carry values only).
template <class T>
class DenseRanks final : public detail::DenseSink {
 public:
  DenseRanks(const ApiExec& exec, const RankRows& rr, const Plan& plan, bool two, bool upper, T* dense)
      : exec_(exec), rr_(rr), firsts_(rr.firsts), plan_(plan), two_(two), upper_(upper), dense_(dense) {
    rounds_.resize(static_cast<std::size_t>(plan.rounds()));
    for (const Slice& s : plan.slices) rounds_[static_cast<std::size_t>(s.round)].push_back(&s);
    check_counts();
  }
  void round(const Slice* s, const SliceGeometry& g, const I32View& counts, const F32View& values) override {
    if constexpr (std::is_same_v<T, float>) send_ = host_values(s, g, values);
    else send_ = host_values(s, g, counts);
    exchange(s, g);
    ++round_;
  }
  void commit() override {}

 private:
  // This rank's slice on the host (a copy where the kernels' memory is not).
  const T* host_values(const Slice* s, const SliceGeometry& g, const Kokkos::View<T*, ApiMemory>& v) {
    if (!s) return nullptr;
    exec_.fence();
    if constexpr (kHostMemory) return v.data();
    copy_.resize(static_cast<std::size_t>(g.height() * g.width()));
    detail::copy_to_host<T>(exec_, v, g.height() * g.width(), copy_.data());
    return copy_.data();
  }
  void exchange(const Slice* s, const SliceGeometry& g);
  // Every round's messages, and what each rank sends and receives in all,
  // fit MPI's counts (the same answer on every rank, before any round).
  void check_counts() const {
    for (const auto& slices : rounds_) {
      std::vector<std::int64_t> received(firsts_.size() - 1, 0);
      for (const Slice* q : slices) {
        std::int64_t sent = 0;
        for (std::size_t o = 0; o + 1 < firsts_.size(); ++o) {
          const std::int64_t n =
              run_values(plan_.geometry(*q, two_), upper_, plan_.targets, firsts_[o], firsts_[o + 1]);
          sent += n;
          received[o] += n;
        }
        mpi_count(sent, "a slice's values");
      }
      for (std::int64_t n : received) mpi_count(n, "a round's values");
    }
  }

  ApiExec exec_;
  const RankRows& rr_;
  const std::vector<std::int64_t>& firsts_;
  const Plan& plan_;
  bool two_, upper_;
  T* dense_;
  std::vector<std::vector<const Slice*>> rounds_;  // the slices of every round
  std::size_t round_ = 0;
  const T* send_ = nullptr;
  std::vector<T> copy_;
  MessageBuffer<T> out_, in_;
};

template <class T>
void DenseRanks<T>::exchange(const Slice* s, const SliceGeometry& g) {
  const int ranks = mpi::size(rr_.comm), me = mpi::rank(rr_.comm);
  const std::int64_t o0 = firsts_[me], o1 = firsts_[me + 1], targets = plan_.targets;
  std::vector<int> send(static_cast<std::size_t>(ranks), 0), recv(static_cast<std::size_t>(ranks), 0);
  for (int o = 0; s && o < ranks; ++o)  // its own rows are copied directly, below
    if (o != me)
      send[static_cast<std::size_t>(o)] = static_cast<int>(run_values(g, upper_, targets, firsts_[o], firsts_[o + 1]));
  const std::vector<const Slice*> none;
  const auto& slices = round_ < rounds_.size() ? rounds_[round_] : none;
  for (const Slice* q : slices)
    if (q->rank != me)
      recv[static_cast<std::size_t>(q->rank)] =
          static_cast<int>(run_values(plan_.geometry(*q, two_), upper_, targets, o0, o1));
  const std::vector<int> send_at = mpi::displacements(send), recv_at = mpi::displacements(recv);
  T* const sent = out_.reserve(send_at.back() + send.back());  // kept over the rounds
  T* const received = in_.reserve(recv_at.back() + recv.back());
  T* to = sent;
  for (int o = 0; s && o < ranks; ++o) {
    const bool own = o == me;
    for_each_run(
        g, upper_, targets, firsts_[o], firsts_[o + 1],
        [&](std::int64_t dest, std::int64_t src, std::int64_t, std::int64_t n) {
          std::copy_n(send_ + src, n, own ? dense_ + dest : to);
          if (!own) to += n;
        },
        false);
    const std::int64_t j0 = std::max(g.r1, firsts_[o]), j1 = firsts_[o + 1], h = g.height();
    if (!g.symmetric() || upper_ || j0 >= j1) continue;
    copy_mirror(g, send_, j0, j1, own ? dense_ + (j0 - o0) * targets + g.r0 : to, own ? targets : h);
    if (!own) to += (j1 - j0) * h;
  }
  const MPI_Datatype type = std::is_same_v<T, float> ? MPI_FLOAT : MPI_INT32_T;
  MPI_Alltoallv(sent, send.data(), send_at.data(), type, received, recv.data(), recv_at.data(), type, rr_.comm);
  for (const Slice* q : slices) {
    if (q->rank == me) continue;
    const T* from = received + recv_at[static_cast<std::size_t>(q->rank)];
    for_each_run(plan_.geometry(*q, two_), upper_, targets, o0, o1,
                 [&](std::int64_t dest, std::int64_t, std::int64_t, std::int64_t n) {
                   std::copy_n(from, n, dense_ + dest);
                   from += n;
                 });
  }
}

// Records sent to the ranks that own them: `n[q]` records of `bytes` each
// for rank q, consecutive in rank order; what this rank gets, in rank order.
std::vector<char> route_records(MPI_Comm comm, const char* records, const std::vector<int>& n, std::int64_t bytes) {
  const int ranks = mpi::size(comm);
  std::vector<int> recv(static_cast<std::size_t>(ranks), 0);
  MPI_Alltoall(n.data(), 1, MPI_INT, recv.data(), 1, MPI_INT, comm);
  const std::vector<int> send_at = mpi::displacements(n), recv_at = mpi::displacements(recv);
  std::vector<char> in(static_cast<std::size_t>((recv_at.back() + recv.back()) * bytes));
  const mpi::ContiguousType record(bytes, MPI_BYTE);
  MPI_Alltoallv(records, n.data(), send_at.data(), record.get(), in.data(), recv.data(), recv_at.data(), record.get(),
                comm);
  return in;
}

// The records of the sparse outputs over the ranks: each rank keeps the pairs
// and lists of its rows.
class RecordRanks final : public detail::RecordSink {
 public:
  RecordRanks(const RankRows& rr, ComputeResult& r) : rr_(rr), firsts_(rr.firsts), r_(r) {}
  void pairs(std::uint64_t, std::uint64_t n, const char* records) override {
    std::vector<int> to(firsts_.size() - 1, 0);  // records by i, so each rank's are one run
    for (std::uint64_t e = 0; e < n; ++e) {
      std::int64_t i = 0;
      std::memcpy(&i, records + e * pair_record_bytes, sizeof i);
      ++to[static_cast<std::size_t>(owner_of(firsts_, i))];
    }
    const std::vector<char> in = route_records(rr_.comm, records, to, pair_record_bytes);
    r_.pairs.insert(r_.pairs.end(), in.begin(), in.end());
  }
  void commit_pairs(std::int64_t) override;
  void top_k(std::int64_t row0, std::int64_t rows, std::int64_t k, std::int64_t, const char* records) override {
    const int ranks = mpi::size(rr_.comm);
    std::vector<int> to(static_cast<std::size_t>(ranks), 0);
    for (int o = 0; o < ranks; ++o)  // the block's rows that rank o owns (contiguous, in rank order)
      to[static_cast<std::size_t>(o)] = static_cast<int>(
          std::max<std::int64_t>(0, std::min(row0 + rows, firsts_[o + 1]) - std::max(row0, firsts_[o])));
    r_.top_k = route_records(rr_.comm, records, to, k * top_k_record_bytes);
  }

 private:
  const RankRows& rr_;
  const std::vector<std::int64_t>& firsts_;
  ComputeResult& r_;
};

// This rank's pairs in (i, j) order: a row's records come from one slice, in
// j order, so ordering by i alone (stable) is enough.
void RecordRanks::commit_pairs(std::int64_t) {
  const std::size_t n = r_.pairs.size() / pair_record_bytes;
  std::vector<std::pair<std::int64_t, std::size_t>> order(n);
  for (std::size_t e = 0; e < n; ++e) {
    std::memcpy(&order[e].first, r_.pairs.data() + e * pair_record_bytes, sizeof(std::int64_t));
    order[e].second = e;
  }
  std::stable_sort(order.begin(), order.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<char> sorted(r_.pairs.size());
  for (std::size_t e = 0; e < n; ++e)
    std::memcpy(sorted.data() + e * pair_record_bytes, r_.pairs.data() + order[e].second * pair_record_bytes,
                pair_record_bytes);
  r_.pairs.swap(sorted);
  r_.pair_count = static_cast<std::int64_t>(n);
}

// The sinks and the computation of `plan` over the ranks, for a problem with
// slices (rows and targets).
ComputeResult compute_over_ranks(const ApiExec& exec, const RankRows& rr, const detail::Inputs& in, const Config& c,
                                 const Plan& plan, const ComputeParams& p, void* dense) {
  ComputeResult r;
  std::unique_ptr<detail::DenseSink> dense_sink;
  if (p.dense && p.similarity == Similarity::Counts)
    dense_sink =
        std::make_unique<DenseRanks<std::int32_t>>(exec, rr, plan, in.two, p.upper, static_cast<std::int32_t*>(dense));
  else if (p.dense)
    dense_sink = std::make_unique<DenseRanks<float>>(exec, rr, plan, in.two, p.upper, static_cast<float*>(dense));
  RecordRanks records(rr, r);
  detail::Outputs out;
  out.dense = dense_sink.get();
  out.records = &records;
  out.row_ones = true;
  out.interrupted = p.interrupted;
  detail::Outcome o = detail::compute(detail::Team{rr.comm, exec, false}, c, plan, in, out);
  r.interrupted = o.interrupted;
  r.slices = o.interrupted ? 0 : static_cast<std::int64_t>(plan.slices.size());
  r.distribution = plan.distribution;
  r.ring_schedule = plan.schedule;
  r.counts = std::move(o.counts);
  if (o.interrupted) return r;
  if (p.summary) r.summary = detail::summary_text(c, o.summary, o.sparse_summary);
  const auto own = o.row_ones.begin() + rr.first();  // the ones of every row
  r.row_counts.assign(own, own + (rr.firsts[static_cast<std::size_t>(mpi::rank(rr.comm)) + 1] - rr.first()));
  return r;
}

// The whole problem's shapes over the ranks.
ApiMatrix whole_of(const ApiMatrix& mine, const RankRows& rr) {
  ApiMatrix whole = mine;
  whole.rows = rr.total();
  return whole;
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

std::int64_t RankRows::first() const { return firsts[static_cast<std::size_t>(mpi::rank(comm))]; }

std::int64_t dense_elements(const RankRows& rr, const ApiMatrix& a, std::int64_t targets, const ComputeParams& p) {
  if (!p.dense) return 0;
  if (!p.upper) return a.rows * targets;
  const std::int64_t f = rr.first(), n = a.rows;  // sum of (total - i) over its rows i
  return n * rr.total() - (2 * f + n - 1) * n / 2;
}

double planned_bytes(int ranks, const ApiMatrix& a, const ApiMatrix* b, const ComputeParams& p) {
  const Plan plan = make_plan(config_of(a, b, p, true), ranks);
  return plan.packed_bytes + plan.top_k_bytes + plan.slice_bytes;
}

ComputeResult compute(const ApiExec& exec, const RankRows& rr, const ApiMatrix& a, const ApiMatrix* b,
                      const RankRows* b_rows, const ComputeParams& p, void* dense) {
  ScopedRegion region("kmini::gram::library_compute");
  if (!p.count_at_least.empty() && p.count_at_least.size() > static_cast<std::size_t>(kMaxThresholds))
    throw std::invalid_argument("count_at_least: at most " + std::to_string(kMaxThresholds) + " thresholds");
  if (p.upper && b) throw std::invalid_argument("upper: the packed triangle needs one input (C = A A^T)");
  if (p.dense_on_device) throw std::invalid_argument("gram: over ranks, dense C is in host memory");
  // One rank: the one-process call, which computes dense C in place (no slice buffer, no routing).
  if (mpi::size(rr.comm) == 1) return compute(exec, a, b, p, dense);
  const ApiMatrix whole = whole_of(a, rr);
  std::optional<ApiMatrix> whole_b;
  if (b) whole_b = b_rows ? whole_of(*b, *b_rows) : *b;
  const Config c = config_of(whole, whole_b ? &*whole_b : nullptr, p, true);
  if (rr.total() == 0 || (b && whole_b->rows == 0)) {  // the same on every rank: no slices, no collective
    const ApiPacked mine = pack(exec, a, "kmini::gram::A");
    ComputeResult r = without_slices(exec, mine, p);
    if (p.distribution == Distribution::Ring) {  // what the plan would say; auto: nothing to hold
      r.distribution = Distribution::Ring;
      r.ring_schedule = p.ring_schedule != RingSchedule::Auto ? p.ring_schedule
                        : c.circulant_possible()              ? RingSchedule::Circulant
                                                              : RingSchedule::Slices;
    }
    return r;
  }
  const Plan plan = make_plan(c, mpi::size(rr.comm));
  detail::Inputs in;
  in.two = b != nullptr;
  if (plan.ring()) {
    in.a = chunk_rows(exec, rr, a, plan.a_chunks, "kmini::gram::A");
    if (b && !b_rows) throw std::invalid_argument("gram: the ring takes B in blocks of rows (b_rows), not whole");
    if (b) in.b = chunk_rows(exec, *b_rows, *b, plan.b_chunks, "kmini::gram::B");
  } else {
    in.a = gather_packed(exec, rr, a, "kmini::gram::A");
    if (b_rows) in.b = gather_packed(exec, *b_rows, *b, "kmini::gram::B");
    else if (b) in.b = collectively(rr.comm, "gram", [&] { return pack(exec, *b, "kmini::gram::B"); });
  }
  if (!in.two) in.b = ApiPacked("kmini::gram::B", 0, 0);
  return compute_over_ranks(exec, rr, in, c, plan, p, dense);
}

}  // namespace kmini::gram
