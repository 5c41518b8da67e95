// gram's inputs: A (and B) packed into 64-bit words on the device, from a
// random matrix or a .npy file read block by block and checked value by value.
#include "core/collective.hpp"
#include "core/errors.hpp"
#include "core/huge_pages.hpp"
#include "core/mpi_type.hpp"
#include "core/solo.hpp"
#include "core/timer.hpp"
#include "gram/gram.hpp"
#include "gram/impl/gram_detail.hpp"
#include "gram/impl/gram_host_pack.hpp"
#include "io/fps.hpp"
#include "io/npy.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace kmini::gram {

std::vector<std::uint8_t> host_rows(const Source& a, std::int64_t r0, std::int64_t n) {
  std::vector<std::uint8_t> out(static_cast<std::size_t>(n * a.cols));
  if (a.kind == Source::Kind::Random) {
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t k = 0; k < a.cols; ++k)
        out[i * a.cols + k] = random_bit(a.seed, r0 + i, k, a.cols, a.density) ? 1 : 0;
  } else if (a.kind == Source::Kind::Unpacked) {
    npy::Info info = npy::read_info(a.path);
    npy::read_elements(info, std::uint64_t(r0 * a.cols), std::uint64_t(n * a.cols), out.data());
  } else if (a.kind == Source::Kind::Fps) {  // bit k: bit k % 8 of byte k / 8, least significant first
    const std::int64_t nb = a.fps->bytes_per_row();
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(n * nb));
    fps::read_rows(*a.fps, r0, n, bytes.data());
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t k = 0; k < a.cols; ++k) out[i * a.cols + k] = (bytes[i * nb + k / 8] >> (k % 8)) & 1;
  } else {
    const std::int64_t nb = (a.cols + 7) / 8;
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(n * nb));
    npy::Info info = npy::read_info(a.path);
    npy::read_elements(info, std::uint64_t(r0 * nb), std::uint64_t(n * nb), bytes.data());
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t k = 0; k < a.cols; ++k) out[i * a.cols + k] = (bytes[i * nb + k / 8] >> (7 - k % 8)) & 1;
  }
  return out;
}

namespace detail {

namespace {

// Checks rows [r0, r0 + n) of a file's bytes: the first value that is not 0
// or 1 (unpacked), the first row with 1 bits in its padding (packed), is a UsageError.
void check_file_block(const Source& a, const std::uint8_t* data, std::int64_t r0, std::int64_t n) {
  if (a.kind == Source::Kind::Unpacked) {
    for (std::int64_t e = 0; e < n * a.cols; ++e)
      if (data[e] > 1)
        throw UsageError(a.path + ": element (" + std::to_string(r0 + e / a.cols) + ", " + std::to_string(e % a.cols) +
                         ") is " + std::to_string(int(data[e])) + " (expected 0 or 1)");
  } else if (a.kind == Source::Kind::Packed && a.cols % 8 != 0) {  // (Fps: checked by its decoding)
    const std::int64_t nb = (a.cols + 7) / 8;
    const std::uint8_t pad_mask = static_cast<std::uint8_t>((1u << (8 - a.cols % 8)) - 1);
    for (std::int64_t i = 0; i < n; ++i)
      if (data[i * nb + nb - 1] & pad_mask)
        throw UsageError(a.path + ": row " + std::to_string(r0 + i) + " has 1 bits past column " +
                         std::to_string(a.cols) +
                         " (expected numpy packbits output with cols: " + std::to_string(a.cols) + ")");
  }
}

}  // namespace

RowShare read_share(std::int64_t rows, int rank, int ranks) { return block_range(rows, rank, ranks); }

std::int64_t file_row_bytes(const Source& a) {
  return a.kind == Source::Kind::Packed || a.kind == Source::Kind::Fps ? (a.cols + 7) / 8 : a.cols;
}

double file_bytes_per_row(const Source& a) {
  if (a.kind != Source::Kind::Fps) return double(file_row_bytes(a));
  return double(a.fps->offsets.back() - a.fps->offsets.front()) / double(a.rows);
}

std::int64_t read_block_rows(const Source& a) {
  if (a.kind == Source::Kind::Random) return 0;
  // FPS: a block of records' text (up to the longest line each) is decoded into packed bytes.
  const std::int64_t per_row = a.kind == Source::Kind::Fps ? a.fps->longest_line : file_row_bytes(a);
  return std::max<std::int64_t>(1, std::min(a.rows, kReadBlockBytes / per_row));
}

namespace {

// Staging for a file's blocks. Host memory spaces pack each block on the host
// straight from one buffer (`host[0]`). Device ones read block k + 1 into one
// page-locked buffer while block k is copied from the other and packed on the
// device, on the execution-space instance (read_my_rows).
struct Staging {
  using Host = Kokkos::View<std::uint8_t**, Kokkos::LayoutRight, compat::PinnedHostSpace>;
  using Dev = Kokkos::View<std::uint8_t**, Kokkos::LayoutRight, MemSpace>;
  std::vector<Host> host;
  Dev dev;
  Kokkos::View<int, MemSpace> bad;  // the device packs' check: a byte above 1 was seen
};

// Not zero-filled: every block is read before it is used.
Staging make_staging(const Source& a) {
  const std::int64_t block = read_block_rows(a), row = block > 0 ? file_row_bytes(a) : 0;
  constexpr int buffers = compat::device_is_host_accessible ? 1 : 2;
  Staging s;
  for (int i = 0; i < buffers; ++i)
    s.host.emplace_back(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kmini::gram::read_block"), block, row);
  if constexpr (!compat::device_is_host_accessible) {
    s.dev = Staging::Dev(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kmini::gram::bytes"), block, row);
    s.bad = Kokkos::View<int, MemSpace>("kmini::gram::bad_values");
  }
  return s;
}

// One read of a rank: `count` rows of the file from `first`, packed at row
// `dest` of this rank's packed rows (count <= the staging block).
struct RowRead {
  std::int64_t first = 0, count = 0, dest = 0;
};

// The reads of rows [first, first + count) into packed rows from `dest`, block by block.
void add_reads(std::vector<RowRead>& reads, std::int64_t first, std::int64_t count, std::int64_t dest,
               std::int64_t block) {
  for (std::int64_t at = 0; at < count; at += block)
    reads.push_back({first + at, std::min(block, count - at), dest + at});
}

// FPS rows decoded into bytes hold column k in bit k % 8 (least significant
// first); the packed path takes numpy's packbits order, column k in bit
// 7 - k % 8: reversed here, so that every input form (and A against B of
// another form) puts column k in the same bit of the packed words.
void fps_to_packbits_order(std::uint8_t* bytes, std::int64_t n) {
  for (std::int64_t e = 0; e < n; ++e) bytes[e] = static_cast<std::uint8_t>(reversed_bits(bytes[e]));
}

// Where the rows of a read are in the file: fixed-size rows of a .npy, or
// the lines of FPS records (from the index).
struct FileRange {
  std::uint64_t offset = 0;
  std::int64_t bytes = 0;
};
FileRange file_range(const Source& a, const RowRead& r) {
  if (a.kind != Source::Kind::Fps) {
    const std::int64_t row_bytes = file_row_bytes(a);
    return {std::uint64_t(r.first * row_bytes), r.count * row_bytes};
  }
  const auto& at = a.fps->offsets;
  const std::uint64_t begin = at[static_cast<std::size_t>(r.first)];
  return {begin, static_cast<std::int64_t>(at[static_cast<std::size_t>(r.first + r.count)] - begin)};
}

// A file's bytes for this rank's reads, with pread: each rank reads its own
// contiguous rows, so no collective is needed (nor wanted: an I/O error on one
// rank inside a collective MPI-IO read left the others waiting).
class BlockReader {
 public:
  explicit BlockReader(const Source& a) : a_(a), fd_(::open(a.path.c_str(), O_RDONLY | O_CLOEXEC)) {
    if (fd_ < 0) throw RuntimeFailure(a.path + ": cannot open for reading (" + std::strerror(errno) + ")");
  }
  ~BlockReader() { ::close(fd_); }
  BlockReader(const BlockReader&) = delete;
  BlockReader& operator=(const BlockReader&) = delete;

  // The file's bytes of read `r` (file_range) into dst; a RuntimeFailure
  // naming the rows and the OS's reason, or the bytes found, where that fails.
  // Returns the bytes read.
  std::int64_t read(const RowRead& r, void* dst) const {
    const FileRange range = file_range(a_, r);
    const std::int64_t first = r.first, count = r.count, bytes = range.bytes;
    const std::uint64_t at = a_.data_offset + range.offset;
    std::int64_t got = 0;
    while (got < bytes) {
      const ssize_t n = ::pread(fd_, static_cast<char*>(dst) + got, static_cast<std::size_t>(bytes - got),
                                static_cast<off_t>(at + static_cast<std::uint64_t>(got)));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw RuntimeFailure(rows(first, count) + " failed (" + std::strerror(errno) + ")");
      if (n == 0)
        throw RuntimeFailure(rows(first, count) + " ended after " + std::to_string(got) + " of " +
                             std::to_string(bytes) +
                             " bytes (the file is shorter than its header says: was it cut while being read?)");
      got += n;
    }
    return got;
  }

 private:
  std::string rows(std::int64_t first, std::int64_t count) const {
    return a_.path + ": read of rows " + std::to_string(first) + ".." + std::to_string(first + count - 1);
  }
  const Source& a_;
  int fd_;
};

// Packs `n` rows just read into host memory (`bytes`) into `packed` from row
// `dest` on the host, checking every value in the same pass
// (gram_host_pack.hpp); throws the check's UsageError naming the first bad element.
void pack_block_on_host(const Source& a, const Packed& packed, const std::uint8_t* bytes, std::int64_t r0,
                        std::int64_t n, std::int64_t dest) {
  Word* out = packed.data() + dest * static_cast<std::int64_t>(packed.extent(1));
  const auto stride = static_cast<std::int64_t>(packed.extent(1));
  if (a.kind == Source::Kind::Packed || a.kind == Source::Kind::Fps) {
    check_file_block(a, bytes, r0, n);  // the padding bits: one byte per row
    host_pack::pack_packed_block(bytes, n, file_row_bytes(a), out, stride);
  } else if (host_pack::pack_unpacked_block(bytes, n, a.cols, out, stride)) {
    check_file_block(a, bytes, r0, n);  // names the first value above 1
  }
  for (std::int64_t i = 0; i < n; ++i) std::fill(out + i * stride + words_for(a.cols), out + (i + 1) * stride, Word(0));
}

// Copies `n` rows in page-locked `host` to the device and packs them there,
// asynchronously on `exec`. Values above 1 set `staging.bad` (read once, at
// the end); a packbits row's padding is checked on the host (one byte a row).
void pack_block_on_device(const ExecSpace& exec, const Source& a, const Packed& packed, const Staging& staging,
                          const Staging::Host& host, std::int64_t r0, std::int64_t n, std::int64_t dest) {
  const auto rows = std::make_pair(std::int64_t(0), n);
  auto dev_n = Kokkos::subview(staging.dev, rows, Kokkos::ALL());
  const bool packbits = a.kind == Source::Kind::Packed || a.kind == Source::Kind::Fps;
  if (packbits) check_file_block(a, host.data(), r0, n);
  Kokkos::deep_copy(exec, dev_n, Kokkos::subview(host, rows, Kokkos::ALL()));
  if (packbits) pack_packed_bytes(exec, packed, dev_n, dest);
  else pack_unpacked_bytes(exec, packed, dev_n, dest, staging.bad);
}

// Where a device pack saw a value above 1: reads this rank's rows again on the
// host and throws the check's UsageError naming the first bad element.
[[noreturn]] void name_bad_value(const Source& a, const Staging& staging, const std::vector<RowRead>& reads) {
  const BlockReader file(a);
  for (const RowRead& r : reads) {
    file.read(r, staging.host[0].data());
    check_file_block(a, staging.host[0].data(), r.first, r.count);
  }
  throw RuntimeFailure(a.path + ": a value above 1 was seen while packing but not when read again " +
                       "(did the file change while being read?)");
}

// Reads this rank's share of a file's rows block by block (BlockReader),
// checks every value and packs the rows into `packed`. No collective: the
// caller agrees on the outcome over the ranks. Adds to `t` this rank's time in
// the reads alone and its bytes read.
void read_my_rows(const ExecSpace& exec, const Source& a, const Packed& packed, const Staging& staging,
                  const std::vector<RowRead>& reads, ReadTimes& t) {
  const bool fps = a.kind == Source::Kind::Fps;
  std::vector<char> text(fps ? static_cast<std::size_t>(read_block_rows(a) * a.fps->longest_line) : 0);
  const BlockReader file(a);
  struct Fence {  // no staging buffer is freed under a copy still in flight
    const ExecSpace& exec;
    ~Fence() { exec.fence(); }
  } fence{exec};
  for (std::size_t k = 0; k < reads.size(); ++k) {
    const RowRead& r = reads[k];
    const Staging::Host& host = staging.host[k % staging.host.size()];
    const Kokkos::Timer read_timer;
    t.read_bytes += file.read(r, fps ? static_cast<void*>(text.data()) : host.data());
    t.read_seconds += read_timer.seconds();
    if (fps) {  // hex text to bytes: bad digits or bits past num_bits are a UsageError naming file:line
      fps::decode_rows(*a.fps, text.data(), r.first, r.count, host.data());
      fps_to_packbits_order(host.data(), r.count * file_row_bytes(a));
    }
    if constexpr (compat::device_is_host_accessible) {
      pack_block_on_host(a, packed, host.data(), r.first, r.count, r.dest);
    } else {
      exec.fence();  // block k - 1 is packed: its buffer is free for block k + 1, and `dev` for block k
      pack_block_on_device(exec, a, packed, staging, host, r.first, r.count, r.dest);
    }
  }
  if constexpr (!compat::device_is_host_accessible) {
    int bad = 0;
    Kokkos::deep_copy(exec, Kokkos::View<int, Kokkos::HostSpace>(&bad), staging.bad);
    exec.fence();
    if (bad) name_bad_value(a, staging, reads);
  }
}

}  // namespace

void allgather_rows(const ExecSpace& exec, MPI_Comm comm, const Packed& all, const std::vector<std::int64_t>& firsts) {
  const int ranks = mpi::size(comm);
  if (ranks == 1 || all.extent(0) == 0 || all.extent(1) == 0) return;
  std::vector<int> counts(static_cast<std::size_t>(ranks)), displs(counts.size());
  for (int q = 0; q < ranks; ++q) {
    const std::int64_t n = firsts[static_cast<std::size_t>(q) + 1] - firsts[static_cast<std::size_t>(q)];
    if (firsts[static_cast<std::size_t>(q) + 1] > std::numeric_limits<int>::max())
      throw std::length_error("gram: " + std::to_string(all.extent(0)) + " rows, more than one MPI message can gather");
    counts[static_cast<std::size_t>(q)] = static_cast<int>(n);
    displs[static_cast<std::size_t>(q)] = static_cast<int>(firsts[static_cast<std::size_t>(q)]);
  }
  const mpi::ContiguousType row(static_cast<std::int64_t>(all.extent(1)), MPI_UINT64_T);  // one packed row
  auto host = Kokkos::create_mirror_view(all);
  Kokkos::deep_copy(exec, host, all);  // a no-op where `host` is `all`
  exec.fence();
  MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, host.data(), counts.data(), displs.data(), row.get(), comm);
  Kokkos::deep_copy(exec, all, host);
  exec.fence();
}

namespace {

// The runs of rows that pass from rank `from` (rows [firsts[from],
// firsts[from + 1])) to rank `to` (its chunks): f(chunk, r0, r1) in chunk order.
template <class F>
void for_each_move(const std::vector<std::int64_t>& firsts, const std::vector<Chunk>& chunks, int from, int to, F f) {
  const std::int64_t f0 = firsts[static_cast<std::size_t>(from)], f1 = firsts[static_cast<std::size_t>(from) + 1];
  for (const Chunk& k : chunks) {
    const std::int64_t r0 = std::max(k.r0, f0), r1 = std::min(k.r1, f1);
    if (k.rank == to && r0 < r1) f(k, r0, r1);
  }
}

}  // namespace

Packed rows_to_chunks(const ExecSpace& exec, MPI_Comm comm, const Packed& mine, const std::vector<std::int64_t>& firsts,
                      const std::vector<Chunk>& chunks, const char* label) {
  const int ranks = mpi::size(comm), me = mpi::rank(comm);
  using Host = Packed::HostMirror;
  const std::int64_t words = mine.extent(1), own0 = firsts[static_cast<std::size_t>(me)];
  std::int64_t held = 0, received = 0;
  for (const Chunk& k : chunks) held += k.rank == me ? k.rows() : 0;
  std::vector<int> send(static_cast<std::size_t>(ranks), 0), recv(send.size(), 0);
  for (int q = 0; q < ranks; ++q) {
    for_each_move(firsts, chunks, me, q, [&](const Chunk&, std::int64_t r0, std::int64_t r1) {
      send[static_cast<std::size_t>(q)] += static_cast<int>(r1 - r0);
    });
    for_each_move(firsts, chunks, q, me, [&](const Chunk&, std::int64_t r0, std::int64_t r1) {
      recv[static_cast<std::size_t>(q)] += static_cast<int>(r1 - r0);
      received += r1 - r0;
    });
  }
  struct Buffers {
    Packed held;
    Host mine, out, in, held_host;
  };
  Buffers b = collectively(comm, "gram", [&] {
    Buffers t{Packed(std::string(label), held, words),
              Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), mine),
              Host("kmini::gram::rows_out", mine.extent(0), words),
              Host("kmini::gram::rows_in", received, words),
              {}};
    t.held_host = Kokkos::create_mirror_view(t.held);
    return t;
  });
  const std::vector<int> send_at = mpi::displacements(send), recv_at = mpi::displacements(recv);
  const auto row = [&](const Host& h, std::int64_t i) { return h.data() + i * words; };
  for (int q = 0; q < ranks; ++q) {  // this rank's rows, by destination, in chunk order
    std::int64_t at = send_at[static_cast<std::size_t>(q)];
    for_each_move(firsts, chunks, me, q, [&](const Chunk&, std::int64_t r0, std::int64_t r1) {
      std::copy_n(row(b.mine, r0 - own0), (r1 - r0) * words, row(b.out, at));
      at += r1 - r0;
    });
  }
  const mpi::ContiguousType row_type(words, MPI_UINT64_T);
  if (words > 0)
    MPI_Alltoallv(b.out.data(), send.data(), send_at.data(), row_type.get(), b.in.data(), recv.data(), recv_at.data(),
                  row_type.get(), comm);
  for (int q = 0; q < ranks; ++q) {  // each source's runs, in chunk order, to their places
    std::int64_t at = recv_at[static_cast<std::size_t>(q)];
    for_each_move(firsts, chunks, q, me, [&](const Chunk& k, std::int64_t r0, std::int64_t r1) {
      std::copy_n(row(b.in, at), (r1 - r0) * words, row(b.held_host, k.local + (r0 - k.r0)));
      at += r1 - r0;
    });
  }
  Kokkos::deep_copy(exec, b.held, b.held_host);
  exec.fence();
  return b.held;
}

namespace {

// The first row each rank reads of an input of `rows` rows, and `rows` last.
std::vector<std::int64_t> read_firsts(std::int64_t rows, int ranks) {
  std::vector<std::int64_t> firsts(static_cast<std::size_t>(ranks) + 1, rows);
  for (int q = 0; q < ranks; ++q) firsts[static_cast<std::size_t>(q)] = read_share(rows, q, ranks).first;
  return firsts;
}

// `rows` packed rows of `a` in huge pages on hosts (a 10^4 x 10^5 matrix
// is 31k pages of 4 KiB, each first touch a page fault), zero-filled unless
// the host pack writes every word (pack_block).
Packed packed_rows(const Source& a, const char* label, std::int64_t rows) {
  if (!compat::device_is_host_accessible || a.kind == Source::Kind::Random)
    return huge_page_view<Packed>(std::string(label), rows, words_allocated(a.cols));
  Packed p(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), rows, words_allocated(a.cols));
  advise_huge_pages(p);
  return p;
}

// One input packed on every rank: a random matrix is generated whole on each
// rank; a file is read once over the ranks (read_my_rows) and the packed rows
// are gathered (allgather_rows). Each part is agreed by all ranks.
// Ring (`chunks` not null): only the rows of this rank's chunks, packed one
// after the other (Chunk::local), read or generated by this rank; nothing is
// gathered.
Packed load_input(const ExecSpace& exec, MPI_Comm comm, const Source& a, const char* label,
                  const std::vector<Chunk>* chunks, ReadTimes& read) {
  ScopedRegion region("kmini::gram::pack");
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  std::int64_t held = a.rows;
  if (chunks) {
    held = 0;
    for (const Chunk& k : *chunks)
      if (k.rank == rank) held += k.rows();
  }
  const auto buffers =
      collectively(comm, "gram", [&] { return std::make_pair(packed_rows(a, label, held), make_staging(a)); });
  const Packed& packed = buffers.first;
  collectively(comm, "gram", [&] {
    if (a.kind == Source::Kind::Random) {
      if (!chunks) pack_random(exec, packed, a.rows, a.cols, a.density, a.seed);
      else
        for (const Chunk& k : *chunks)
          if (k.rank == rank) pack_random(exec, packed, k.rows(), a.cols, a.density, a.seed, k.r0, k.local);
    } else {
      std::vector<RowRead> reads;
      const std::int64_t block = read_block_rows(a);
      if (!chunks) {
        const RowShare mine = read_share(a.rows, rank, ranks);
        add_reads(reads, mine.first, mine.count, mine.first, block);
      } else {
        for (const Chunk& k : *chunks)
          if (k.rank == rank) add_reads(reads, k.r0, k.rows(), k.local, block);
      }
      read_my_rows(exec, a, packed, buffers.second, reads, read);
    }
    exec.fence();
  });
  if (!chunks && a.kind != Source::Kind::Random)
    collectively(comm, "gram", [&] { allgather_rows(exec, comm, packed, read_firsts(a.rows, ranks)); });
  return packed;
}

}  // namespace

Inputs load_inputs(RunContext& ctx, const Config& c, const Plan& plan) {
  // Allocations (and the file reads of packing) are agreed by all ranks
  // before any collective: a rank that fails stops every rank.
  const MPI_Comm comm = ctx.env.comm();
  const bool two = c.two_inputs();
  FencedTimer<ExecSpace> pack_timer(ctx.exec);
  const bool ring = plan.ring();
  ReadTimes read;
  Packed a = load_input(ctx.exec, comm, c.a, "kmini::gram::A", ring ? &plan.a_chunks : nullptr, read);
  // Unused buffers are allocated empty: default-constructed Views crashed on
  // destruction with the Kokkos 4.6.99 OpenMP build.
  Packed b = two ? load_input(ctx.exec, comm, c.b, "kmini::gram::B", ring ? &plan.b_chunks : nullptr, read)
                 : Packed("kmini::gram::B", 0, 0);
  const double pack_seconds = allreduce_max(comm, pack_timer.seconds());
  return Inputs{std::move(a), std::move(b), two, pack_seconds, read};
}

}  // namespace detail

}  // namespace kmini::gram
