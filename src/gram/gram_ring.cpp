// gram.distribution: ring. Each rank holds the rows of A of the slices it
// computes (and a 1/P share of B); in every round of the plan the travelling
// chunks (A's with one input, B's with two) pass every rank once, one chunk
// per message, double-buffered: the next chunk is received and the chunk in
// hand forwarded while its tiles are computed. A slice is assembled in the
// counts buffer exactly as the replicated run computes it, so every output
// downstream is the same code and the same bytes.
#include "core/collective.hpp"
#include "core/timer.hpp"
#include "gram/gram_detail.hpp"
#include "gram/gram_kernels.hpp"

#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // MPIX_Query_cuda_support (Open MPI)
#endif

#include <algorithm>
#include <chrono>
#include <utility>

namespace kmini::gram::detail {

namespace {

constexpr int kRingTag = 2323;

// Whether MPI reads and writes device buffers itself (Open MPI built with CUDA).
bool mpi_is_cuda_aware() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

}  // namespace

const char* Ring::path_name(Path p) {
  switch (p) {
    case Path::HostMemory: return "host memory (host backend)";
    case Path::DeviceAware: return "device buffers (CUDA-aware MPI)";
    default: return "through host buffers (MPI not CUDA-aware)";
  }
}

Ring::Ring(RunContext& ctx, const Config& c, const Plan& plan, const Inputs& in)
    : exec_(ctx.exec), comm_(ctx.env.comm()), c_(c), plan_(plan), in_(in) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &ranks_);
  path_ = compat::device_is_host_accessible ? Path::HostMemory
          : mpi_is_cuda_aware()             ? Path::DeviceAware
                                            : Path::Staged;
  const std::int64_t words = plan.words, rows = plan.message_rows;
  collectively(comm_, "gram", [&] {
    for (auto& b : buf_) b = Packed("kmini::gram::ring_buffer", ranks_ > 1 ? rows : 0, words);
    if (path_ == Path::Staged) {
      for (auto& h : host_buf_) h = HostPacked("kmini::gram::ring_host_buffer", ranks_ > 1 ? rows : 0, words);
      held_host_ = HostPacked("kmini::gram::ring_held_host", in.targets().extent(0), words);
      Kokkos::deep_copy(held_host_, in.targets());
    }
  });
  MPI_Type_contiguous(static_cast<int>(words), MPI_UINT64_T, &row_type_);
  MPI_Type_commit(&row_type_);
}

Ring::~Ring() { MPI_Type_free(&row_type_); }

void Ring::compute(const Slice& s, const Chunk& k, const Packed& data, std::int64_t base,
                   const Kokkos::View<std::int32_t*, MemSpace>& counts) {
  const Chunk& own = plan_.a_chunks[static_cast<std::size_t>(s.r0 / plan_.height)];
  TileWindow w;
  w.r0 = s.r0;
  w.r1 = s.r1;
  w.a_base = own.r0 - own.local;
  w.c0 = k.r0;
  w.c1 = k.r1;
  w.b_base = base;
  if (c_.two_inputs()) {
    w.out_col0 = 0;
    w.out_width = plan_.targets;
  } else {
    // Columns from the slice's first row on: none of a chunk above it; its
    // own chunk is the diagonal block (triangular), the chunks below it
    // rectangles (chunks are slices, so a chunk is the slice or disjoint from it).
    if (k.r1 <= s.r0) return;
    w.triangular = k.r0 == s.r0;
    w.out_col0 = s.r0;
    w.out_width = plan_.rows - s.r0;
  }
  gram_window(exec_, in_.a, data, w, counts, c_.engine);
}

void Ring::round(const Slice* s, const Kokkos::View<std::int32_t*, MemSpace>& counts) {
  const auto& chunks = plan_.travelling(c_.two_inputs());
  // The messages of the round: step t brings the chunks of rank r - t.
  std::vector<std::pair<std::size_t, int>> seq;
  for (int t = 0; t < ranks_; ++t) {
    const int from = (rank_ - t + ranks_) % ranks_;
    for (std::size_t i = 0; i < chunks.size(); ++i)
      if (chunks[i].rank == from) seq.emplace_back(i, t);
  }
  const int next = (rank_ + 1) % ranks_, prev = (rank_ + ranks_ - 1) % ranks_;
  const std::int64_t words = plan_.words;
  MPI_Request recv[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL}, send[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  const auto slot_data = [&](int slot) -> Word* {
    return path_ == Path::Staged ? host_buf_[slot].data() : buf_[slot].data();
  };
  const auto post_recv = [&](std::size_t idx) {
    const int slot = static_cast<int>(idx % 2);
    if (path_ == Path::DeviceAware) exec_.fence();  // a kernel may still read the buffer
    MPI_Irecv(slot_data(slot), static_cast<int>(chunks[seq[idx].first].rows()), row_type_, prev, kRingTag, comm_,
              &recv[slot]);
  };
  std::size_t first_remote = seq.size();
  for (std::size_t idx = 0; idx < seq.size(); ++idx)
    if (seq[idx].second > 0) {
      first_remote = idx;
      break;
    }
  if (first_remote < seq.size()) post_recv(first_remote);
  for (std::size_t idx = 0; idx < seq.size(); ++idx) {
    const Chunk& k = chunks[seq[idx].first];
    const int step = seq[idx].second, slot = static_cast<int>(idx % 2);
    Packed data = in_.targets();
    std::int64_t base = k.r0 - k.local;
    if (step > 0) {
      const double t0 = now();
      MPI_Wait(&recv[slot], MPI_STATUS_IGNORE);
      wait_seconds_ += now() - t0;
      if (path_ == Path::Staged) {
        const auto rows = std::make_pair(std::int64_t(0), k.rows());
        Kokkos::deep_copy(exec_, Kokkos::subview(buf_[slot], rows, Kokkos::ALL()),
                          Kokkos::subview(host_buf_[slot], rows, Kokkos::ALL()));
        exec_.fence();  // the host buffer is received into again two messages on
      }
      data = buf_[slot];
      base = k.r0;
    }
    // The next receive goes to the other buffer once the message it held
    // has been passed on.
    if (idx + 1 < seq.size() && seq[idx + 1].second > 0 && idx + 1 != first_remote) {
      MPI_Wait(&send[(idx + 1) % 2], MPI_STATUS_IGNORE);
      post_recv(idx + 1);
    }
    if (step < ranks_ - 1) {
      // Pass the chunk on: every rank but its owner's predecessor (the last to see it).
      MPI_Wait(&send[slot], MPI_STATUS_IGNORE);
      const Word* from = step > 0 ? slot_data(slot)
                         : path_ == Path::Staged
                             ? held_host_.data() + k.local * words
                             : in_.targets().data() + k.local * words;
      MPI_Isend(from, static_cast<int>(k.rows()), row_type_, next, kRingTag, comm_, &send[slot]);
      bytes_sent_ += double(k.rows()) * double(words) * sizeof(Word);
    }
    if (s) compute(*s, k, data, base, counts);
  }
  const double t0 = now();
  MPI_Waitall(2, send, MPI_STATUSES_IGNORE);
  wait_seconds_ += now() - t0;
}

// Ones of every row: each rank counts the rows it holds, one sum over the ranks.
void ring_row_ones(const ExecSpace& exec, MPI_Comm comm, const Packed& held, const std::vector<Chunk>& chunks,
                   const Kokkos::View<std::int32_t*, MemSpace>& ones) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  Kokkos::View<std::int32_t*, MemSpace> mine("kmini::gram::ones_held", held.extent(0));
  row_ones(exec, held, mine);
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), mine);
  std::vector<std::int32_t> all(ones.extent(0), 0);
  for (const Chunk& k : chunks)
    if (k.rank == rank) std::copy_n(host.data() + k.local, k.rows(), all.begin() + k.r0);
  MPI_Allreduce(MPI_IN_PLACE, all.data(), static_cast<int>(all.size()), MPI_INT32_T, MPI_SUM, comm);
  Kokkos::deep_copy(exec, ones,
                    Kokkos::View<const std::int32_t*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(all.data(), all.size()));
  exec.fence();
}

}  // namespace kmini::gram::detail
