#pragma once
// The pieces GramKernel::run (gram_run.cpp) is made of, shared by the gram
// .cpp files only: limits, the packed inputs, the slice loop's buffers and
// the state handed from one phase to the next.
#include "core/format.hpp"
#include "core/mpi_type.hpp"
#include "core/partition.hpp"
#include "core/rank_timing.hpp"
#include "core/solo.hpp"
#include "gram/gram.hpp"
#include "gram/impl/gram_kernels.hpp"
#include "kernel/kernel.hpp"

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace kmini::gram::detail {

inline constexpr std::int64_t kMaxDim = std::numeric_limits<std::int32_t>::max();
// The plan lists its slices (a few dozen bytes each): a million is ample for
// any matrix a device holds and keeps planning instant.
inline constexpr std::int64_t kMaxSlices = std::int64_t(1) << 20;
inline constexpr std::int64_t kHistogramBins = 64;
// Host reference on check rows up to this many matrix elements (bits).
inline constexpr double kHostReferenceLimit = 1ull << 31;
// Double gemm cross-check up to this many elements of the unpacked matrix.
inline constexpr double kGemmCheckLimit = 1ull << 26;
// Iterations of each worker of the AND+popcount probe: ~1 ms per worker on a
// host core, and on a GPU enough to dwarf the ~10 us launch.
inline constexpr int kProbeIterations = compat::device_is_host_accessible ? 20000 : 200;
// Bytes of a file read per block when packing it. Host memory spaces pack each
// block on the host right after its read, while it is still in L2 (packing from
// 8 MiB blocks took 2-3x as long, from 1 MiB ones, half a 1 MiB L2 with the
// words written, ~10 % longer than from 512 KiB: docs/performance.md, "gram:
// time to solution from a file"); GPUs read into two page-locked buffers in turn while
// the other is copied to the device: blocks large enough for the copies' full
// rate, small enough that pinning both costs little beside the read.
inline constexpr std::int64_t kReadBlockBytes = compat::device_is_host_accessible ? 512ll << 10 : 16ll << 20;
// Rows every rank checks: all of a matrix up to this many rows, else each
// slice's first and last row and kSpreadCheckRows spread rows, at most kMaxCheckRows.
inline constexpr std::int64_t kAllRowsCheckedUpTo = 256;
inline constexpr std::int64_t kSpreadCheckRows = 16;
inline constexpr std::size_t kMaxCheckRows = 64;

inline std::string gib(double bytes) { return format_number(bytes / double(1ull << 30)) + " GiB"; }

using Packed = PackedView<MemSpace>;

// The ranks that compute together and where their kernels run.
struct Team {
  MPI_Comm comm = MPI_COMM_NULL;  // MPI_COMM_NULL: this process alone, without MPI (core/solo.hpp)
  ExecSpace exec;
  bool verify = false;  // keep the checked rows (check_rows) for verify()
  int rank() const { return mpi::rank(comm); }
  int size() const { return mpi::size(comm); }
};

// This rank's file reads while packing: the reads alone (not the checks or
// the packing) and the bytes they gave.
struct ReadTimes {
  double read_seconds = 0;
  std::int64_t read_bytes = 0;
};

// Packed A (and B): phase "pack" (gram_input.cpp).
struct Inputs {
  Packed a, b;  // b is empty with one input
  bool two = false;
  double pack_seconds = 0;                               // the slowest rank's, reads included
  ReadTimes read;                                        // this rank's, within packing
  const Packed& targets() const { return two ? b : a; }  // the rows of C's columns
};
// The rows of a file rank `rank` of `ranks` reads: [first, first + count).
using RowShare = BlockRange;
RowShare read_share(std::int64_t rows, int rank, int ranks);
// Bytes of one row in the file (packbits rows for packed inputs).
std::int64_t file_row_bytes(const Source& a);
// Bytes of the file per row, as read (FPS: its records' lines on average).
double file_bytes_per_row(const Source& a);
// Rows per read (the staging block): about kReadBlockBytes, 0 for a random input.
std::int64_t read_block_rows(const Source& a);
// Ring plans: each rank packs only the rows it holds (Plan::a_chunks, b_chunks).
Inputs load_inputs(RunContext& ctx, const Config& c, const Plan& plan);
// Collective, in place: rank q's rows [firsts[q], firsts[q + 1]) of `all`
// (firsts: one per rank and the rows last) are its own on entry; every rank
// holds every row on return (through the host where `all` is device memory).
void allgather_rows(const ExecSpace& exec, MPI_Comm comm, const Packed& all, const std::vector<std::int64_t>& firsts);
// Collective: rank q holds rows [firsts[q], firsts[q + 1]) in `mine`; returns
// this rank's rows of `chunks` (a ring plan's), each at its Chunk::local.
Packed rows_to_chunks(const ExecSpace& exec, MPI_Comm comm, const Packed& mine, const std::vector<std::int64_t>& firsts,
                      const std::vector<Chunk>& chunks, const char* label);

// The slice loop's device buffers.
// The tiles of a circulant window: rows [r0, r1) of A against columns
// [c0, c1) (triangular on the diagonal block); bases and output layout are the
// caller's to fill.
inline TileWindow tile_window(const CirculantWindow& w) {
  TileWindow t;
  t.r0 = w.r0;
  t.r1 = w.r1;
  t.c0 = w.c0;
  t.c1 = w.c1;
  t.triangular = w.triangular;
  return t;
}

struct SliceBuffers {
  Kokkos::View<std::int32_t*, MemSpace> ones, ones_b, counts;  // popcount per row of A, of B; C slice
  Kokkos::View<float*, MemSpace> sim;                          // similarity slice for write.C
  Kokkos::View<std::int64_t*, MemSpace> row_sums;
  Kokkos::View<std::uint64_t*, MemSpace> histogram;
  Kokkos::View<std::uint64_t, MemSpace> checksum;  // this rank's part of the summary checksum
  const Kokkos::View<std::int32_t*, MemSpace>& ones_t(bool two) const { return two ? ones_b : ones; }
};

// gram.distribution: ring (gram_ring.cpp): the travelling chunks pass every
// rank once per round of the plan, double-buffered with nonblocking MPI.
class Ring {
 public:
  enum class Path { HostMemory, DeviceAware, Staged };  // how the chunks travel
  static const char* path_name(Path p);
  // Collective (allocates the receive buffers).
  Ring(const Team& team, const Config& c, const Plan& plan, const Inputs& in);
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;
  // Collective, every round on every rank: this rank's slice of the round
  // (null: none; its chunks still pass on) computed into `counts`, laid out
  // as the replicated run's slice.
  void round(const Slice* s, const Kokkos::View<std::int32_t*, MemSpace>& counts);
  // Circulant plans, collective: ticks (j, t) over the pieces j of a block
  // and the steps t, with piece j of block rank + t in hand: `tick(j, t,
  // data, base)`, data's row 0 being row `base` of A (of B). The next piece is
  // received from rank + 1 and the one in hand passed to rank - 1 while
  // `tick` runs. After each tick, its transfers complete, `stop()` (collective:
  // the same answer on every rank) may end the pass there.
  template <class Tick, class Stop>
  void circulant(Tick&& tick, Stop&& stop);
  // Between windows of a circulant tick: lets MPI move the pieces in flight
  // (MPI_Testall). On host backends a large message (rendezvous) moves only
  // inside an MPI call: without this the copy waited for the tick's end, in
  // lockstep with the neighbours (bench deck, 2 ranks: see src/gram/README.md).
  void progress();
  Path path() const { return path_; }
  double wait_seconds() const { return wait_seconds_; }  // waiting on receives and sends
  double bytes_sent() const { return bytes_sent_; }

 private:
  using HostPacked = Kokkos::View<Word**, Kokkos::LayoutRight, Kokkos::HostSpace>;
  void compute(const Slice& s, const Chunk& k, const Packed& data, std::int64_t base,
               const Kokkos::View<std::int32_t*, MemSpace>& counts);
  ExecSpace exec_;
  MPI_Comm comm_;
  const Config& c_;
  const Plan& plan_;
  const Inputs& in_;
  int rank_ = 0, ranks_ = 1;
  Path path_ = Path::HostMemory;
  Packed buf_[2];
  HostPacked host_buf_[2], held_host_;
  // One circulant tick's transfers: posts the receive of piece j of block
  // rank + t + 1 and the send of the piece in hand (t + 1 < steps).
  void circulant_post(std::int64_t j, std::int64_t t, MPI_Request req[2]);
  void wait(MPI_Request req[2]);
  MPI_Request* in_flight_ = nullptr;  // the current tick's two requests (circulant)
  mpi::ContiguousType row_type_;      // one packed row
  std::size_t pieces_ = 0;            // the most pieces any rank holds
  double wait_seconds_ = 0, bytes_sent_ = 0;
};

template <class Tick, class Stop>
void Ring::circulant(Tick&& tick, Stop&& stop) {
  const bool two = c_.two_inputs();
  const std::int64_t own0 = Plan::block_begin(two ? plan_.b_rows : plan_.rows, ranks_, rank_);
  for (std::int64_t j = 0; j < plan_.pieces_per_block; ++j) {
    for (std::int64_t t = 0; t < plan_.steps; ++t) {
      const int slot = static_cast<int>(t % 2);
      Packed data = in_.targets();  // t = 0: this rank's own block
      std::int64_t base = own0;
      if (t > 0) {
        const auto [p0, p1] = plan_.piece(static_cast<int>((rank_ + t) % ranks_), j, two);
        if (p1 > p0 && path_ == Path::Staged) {
          const auto rows = std::make_pair(std::int64_t(0), p1 - p0);
          Kokkos::deep_copy(exec_, Kokkos::subview(buf_[slot], rows, Kokkos::ALL()),
                            Kokkos::subview(host_buf_[slot], rows, Kokkos::ALL()));
          exec_.fence();  // the host buffer is received into again next tick but one
        }
        data = buf_[slot];
        base = p0;
      }
      MPI_Request req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
      circulant_post(j, t, req);
      in_flight_ = req;
      tick(j, t, data, base);
      in_flight_ = nullptr;
      wait(req);
      if (stop()) return;
    }
  }
}

// Ring: the ones of every row from the rows each rank holds.
void ring_row_ones(const ExecSpace& exec, MPI_Comm comm, const Packed& held, const std::vector<Chunk>& chunks,
                   const Kokkos::View<std::int32_t*, MemSpace>& ones);

// Rows whose values every rank checks against the references (check_rows),
// and the values this rank computed of them: C(row, from ..).
struct CheckedRows {
  std::vector<std::int64_t> rows;
  std::map<std::int64_t, std::vector<std::int32_t>> values;
  std::map<std::int64_t, std::int64_t> from;  // the first column of the row's slice
};
std::vector<std::int64_t> check_rows(const Plan& p);

// What the slice loop measured and accumulated.
struct SlicePass {
  BestOverRepeats compute;    // the slice loop alone, best of `repeat`
  double post_seconds = 0;    // this rank's summary, similarity and host copies
  double executed_words = 0;  // word-pair popcounts of this rank's slices
};

// Row sums, histogram and checksum over all ranks, and the trace.
struct Summary {
  std::vector<std::int64_t> row_sums;
  std::vector<std::uint64_t> histogram;
  std::uint64_t checksum = 0;
  std::int64_t trace = 0;
};

// Copies n values from a device view into `out` (raw bytes of T).
template <class T, class View>
void copy_to_host(const ExecSpace& exec, const View& v, std::int64_t n, void* out) {
  Kokkos::View<T*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> hv(static_cast<T*>(out), n);
  Kokkos::deep_copy(exec, hv, Kokkos::subview(v, std::make_pair(std::int64_t(0), n)));
  exec.fence();
}

// Starts the copy of values [first, first + n) of a device view into `out`
// (raw bytes of T) on `exec`; the caller fences before reading `out`, once
// for all the copies it started.
template <class T, class View>
void start_copy_to_host(const ExecSpace& exec, const View& v, std::int64_t first, std::int64_t n, void* out) {
  Kokkos::View<T*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> hv(static_cast<T*>(out), n);
  Kokkos::deep_copy(exec, hv, Kokkos::subview(v, std::make_pair(first, first + n)));
}

// Phase "verify" (gram_verify.cpp): the checked rows against the host
// reference, the row sums and a double gemm; sets report.verified.
void verify(RunContext& ctx, const Config& c, const Plan& plan, const CheckedRows& checked, const Summary& summary,
            KernelReport& report);

// The probes of this rank (phase "probe"): AND+popcount per micro-kernel and,
// for the tensor-core engine, its own. Run before and after the computation;
// the report keeps the better of the two, so a busy moment during one of them
// cannot lower the roof.
struct Probes {
  ProbeResult popcount;
  double tensor_core = 0;
};
Probes measure_probes(RunContext& ctx, const Config& c);

// Phases "probe" and "baseline_sgemm" and the report (gram_report.cpp).
// `before`: the probes before the computation where gram.probe asks for the
// roof (probed again here), null where it does not (no roof reported).
void report_throughput(RunContext& ctx, const Config& c, const Plan& plan, const SlicePass& pass, double pack_seconds,
                       const Summary& summary, bool with_checksum, const Probes* before, KernelReport& report);
// results.json's read_roof where an input came from a file: the reads alone
// (what the file system gave, measured in the same pass) beside read + pack.
void report_read_roof(const Environment& env, const Inputs& in, Json& metrics);
void report_baseline(RunContext& ctx, const Config& c, const Plan& plan, double compute_seconds, KernelReport& report);
// The summary file's text (gram.write.summary), the CLI's and the library's.
std::string summary_text(const Config& c, const Summary& summary, const Json& sparse_summary);
void write_summary_file(RunContext& ctx, const Config& c, const Summary& summary, const Json& sparse_summary);

}  // namespace kmini::gram::detail
