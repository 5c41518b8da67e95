// gram.distribution: ring. Each rank holds the rows of A of the slices it
// computes (and a 1/P share of B); in every round of the plan the travelling
// chunks (A's with one input, B's with two) pass every rank once, one chunk
// per message, double-buffered: the next chunk is received and the chunk in
// hand forwarded while its tiles are computed. A slice is assembled in the
// counts buffer exactly as the replicated run computes it, so every output
// downstream is the same code and the same bytes.
#include "core/collective.hpp"
#include "core/timer.hpp"
#include "gram/impl/gram_detail.hpp"
#include "gram/impl/gram_kernels.hpp"

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

Ring::Ring(const Team& team, const Config& c, const Plan& plan, const Inputs& in)
    : exec_(team.exec), comm_(team.comm), c_(c), plan_(plan), in_(in), row_type_(plan.words, MPI_UINT64_T) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &ranks_);
  path_ = compat::device_is_host_accessible ? Path::HostMemory : mpi_is_cuda_aware() ? Path::DeviceAware : Path::Staged;
  const std::int64_t words = plan.words, rows = plan.message_rows;
  collectively(comm_, "gram", [&] {
    for (auto& b : buf_) b = Packed("kmini::gram::ring_buffer", ranks_ > 1 ? rows : 0, words);
    if (path_ == Path::Staged) {
      for (auto& h : host_buf_) h = HostPacked("kmini::gram::ring_host_buffer", ranks_ > 1 ? rows : 0, words);
      held_host_ = HostPacked("kmini::gram::ring_held_host", in.targets().extent(0), words);
      Kokkos::deep_copy(held_host_, in.targets());
    }
  });
  for (const auto& h : plan.pieces) pieces_ = std::max(pieces_, h.size());
}

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
  gram_window(exec_, in_.a, data, w, counts, c_.engine, c_.micro_kernel, c_.tensor_core_tile);
}

void Ring::round(const Slice* s, const Kokkos::View<std::int32_t*, MemSpace>& counts) {
  // Lockstep ticks (j, t): piece j of every rank's travelling chunks (several
  // consecutive chunks of its rows, Plan::pieces) moves one rank on per tick
  // t, so each rank computes with rank r - t's piece j while it receives rank
  // r - t - 1's piece j into the other buffer and passes the piece in hand to
  // r + 1. Every rank posts one receive and one send per tick and waits for
  // both after its tiles: no rank waits on a message that is not already on
  // its way. Ranks holding fewer pieces send empty messages.
  const auto& chunks = plan_.travelling(c_.two_inputs());
  const int next = (rank_ + 1) % ranks_, prev = (rank_ + ranks_ - 1) % ranks_;
  const std::int64_t words = plan_.words;
  struct Piece {
    const std::size_t *first = nullptr, *end = nullptr;  // chunk indices
    std::int64_t local = 0, rows = 0;                    // its rows in the owner's packed rows
  };
  const auto piece = [&](int owner, std::size_t j) {
    Piece p;
    const auto& ranges = plan_.pieces[static_cast<std::size_t>(owner)];
    if (j >= ranges.size()) return p;
    const auto& mine = plan_.holdings[static_cast<std::size_t>(owner)];
    p.first = mine.data() + ranges[j].first;
    p.end = mine.data() + ranges[j].second;
    p.local = chunks[*p.first].local;
    for (const std::size_t* i = p.first; i != p.end; ++i) p.rows += chunks[*i].rows();
    return p;
  };
  const auto buffer_data = [&](int slot) -> Word* {
    return path_ == Path::Staged ? host_buf_[slot].data() : buf_[slot].data();
  };
  for (std::size_t j = 0; j < pieces_; ++j) {
    for (int t = 0; t < ranks_; ++t) {
      const Piece k = piece((rank_ - t + ranks_) % ranks_, j);
      const int slot = t % 2;
      Packed data = in_.targets();
      std::int64_t at = k.local;  // the piece's first row in `data`
      if (t > 0) {
        if (k.rows > 0 && path_ == Path::Staged) {
          const auto rows = std::make_pair(std::int64_t(0), k.rows);
          Kokkos::deep_copy(exec_, Kokkos::subview(buf_[slot], rows, Kokkos::ALL()),
                            Kokkos::subview(host_buf_[slot], rows, Kokkos::ALL()));
          exec_.fence();  // the host buffer is received into again next tick but one
        }
        data = buf_[slot];
        at = 0;
      }
      MPI_Request req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
      if (t + 1 < ranks_) {
        const Piece coming = piece((rank_ - t - 1 + ranks_) % ranks_, j);
        if (path_ == Path::DeviceAware) exec_.fence();  // the last tick's tiles read that buffer
        MPI_Irecv(buffer_data(1 - slot), static_cast<int>(coming.rows), row_type_.get(), prev, kRingTag, comm_,
                  &req[0]);
        const Word* from = t > 0 ? buffer_data(slot)
                                 : (path_ == Path::Staged ? held_host_.data() : in_.targets().data()) + k.local * words;
        MPI_Isend(from, static_cast<int>(k.rows), row_type_.get(), next, kRingTag, comm_, &req[1]);
        bytes_sent_ += double(k.rows) * double(words) * sizeof(Word);
      }
      if (s)
        for (const std::size_t* i = k.first; i != k.end; ++i) {
          const Chunk& c = chunks[*i];
          compute(*s, c, data, c.r0 - (at + (c.local - k.local)), counts);
        }
      if (t + 1 < ranks_) {
        // No fence first: on GPUs the tiles run while MPI moves the pieces.
        // The buffer these tiles read is received into next tick, after a
        // fence there (CUDA-aware) or a stream-ordered copy (host buffers).
        const double t0 = now();
        MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
        wait_seconds_ += now() - t0;
      }
    }
  }
}

void Ring::circulant_post(std::int64_t j, std::int64_t t, MPI_Request req[2]) {
  if (t + 1 >= plan_.steps) return;
  const bool two = c_.two_inputs();
  const int next = (rank_ + 1) % ranks_, prev = (rank_ + ranks_ - 1) % ranks_;
  const std::int64_t words = plan_.words;
  const auto [h0, h1] = plan_.piece(static_cast<int>((rank_ + t) % ranks_), j, two);      // in hand
  const auto [n0, n1] = plan_.piece(static_cast<int>((rank_ + t + 1) % ranks_), j, two);  // coming
  const int slot = static_cast<int>(t % 2);
  const auto buffer_data = [&](int s) -> Word* { return path_ == Path::Staged ? host_buf_[s].data() : buf_[s].data(); };
  if (path_ == Path::DeviceAware) exec_.fence();  // the last tick's tiles read that buffer
  MPI_Irecv(buffer_data(1 - slot), static_cast<int>(n1 - n0), row_type_.get(), next, kRingTag, comm_, &req[0]);
  const std::int64_t own0 = Plan::block_begin(two ? plan_.b_rows : plan_.rows, ranks_, rank_);
  const Word* from = t > 0 ? buffer_data(slot)
                           : (path_ == Path::Staged ? held_host_.data() : in_.targets().data()) + (h0 - own0) * words;
  MPI_Isend(from, static_cast<int>(h1 - h0), row_type_.get(), prev, kRingTag, comm_, &req[1]);
  bytes_sent_ += double(h1 - h0) * double(words) * sizeof(Word);
}

void Ring::progress() {
  if (!in_flight_ || (in_flight_[0] == MPI_REQUEST_NULL && in_flight_[1] == MPI_REQUEST_NULL)) return;
  int done = 0;
  MPI_Testall(2, in_flight_, &done, MPI_STATUSES_IGNORE);  // completed requests become MPI_REQUEST_NULL
}

void Ring::wait(MPI_Request req[2]) {
  if (req[0] == MPI_REQUEST_NULL && req[1] == MPI_REQUEST_NULL) return;
  // No fence first: on GPUs the tiles run while MPI moves the pieces.
  const double t0 = now();
  MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
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
  Kokkos::deep_copy(
      exec, ones,
      Kokkos::View<const std::int32_t*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(all.data(), all.size()));
  exec.fence();
}

}  // namespace kmini::gram::detail
