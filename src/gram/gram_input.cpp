// gram's inputs: A (and B) packed into 64-bit words on the device, from a
// random matrix or a .npy file read block by block and checked value by value.
#include "core/collective.hpp"
#include "core/errors.hpp"
#include "core/timer.hpp"
#include "gram/gram.hpp"
#include "gram/gram_detail.hpp"
#include "io/npy.hpp"

#include <algorithm>
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

// Reads rows [r0, r0 + n) of a file into host bytes, checking every value.
void check_file_block(const Source& a, const std::uint8_t* data, std::int64_t r0, std::int64_t n) {
  if (a.kind == Source::Kind::Unpacked) {
    for (std::int64_t e = 0; e < n * a.cols; ++e)
      if (data[e] > 1)
        throw UsageError(a.path + ": element (" + std::to_string(r0 + e / a.cols) + ", " + std::to_string(e % a.cols) +
                         ") is " + std::to_string(int(data[e])) + " (expected 0 or 1)");
  } else if (a.cols % 8 != 0) {
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

Packed load_packed(const ExecSpace& exec, const Source& a, const char* label) {
  ScopedRegion region("kmini::gram::pack");
  Packed packed(std::string(label), a.rows, words_allocated(a.cols));
  if (a.kind == Source::Kind::Random) {
    pack_random(exec, packed, a.rows, a.cols, a.density, a.seed);
    return packed;
  }
  // Every rank reads the whole file, block by block, and packs on the device.
  const std::int64_t row_bytes = a.kind == Source::Kind::Packed ? (a.cols + 7) / 8 : a.cols;
  const std::int64_t block = std::max<std::int64_t>(1, std::min(a.rows, kReadBlockBytes / row_bytes));
  const npy::Info info = npy::read_info(a.path);
  Kokkos::View<std::uint8_t**, Kokkos::LayoutRight, MemSpace> dev("kmini::gram::bytes", block, row_bytes);
  auto host = Kokkos::create_mirror_view(dev);
  for (std::int64_t r0 = 0; r0 < a.rows; r0 += block) {
    const std::int64_t n = std::min(block, a.rows - r0);
    exec.fence();  // the previous block's pack is done with `dev`
    npy::read_elements(info, std::uint64_t(r0 * row_bytes), std::uint64_t(n * row_bytes), host.data());
    check_file_block(a, host.data(), r0, n);
    auto dev_n = Kokkos::subview(dev, std::make_pair(std::int64_t(0), n), Kokkos::ALL());
    auto host_n = Kokkos::subview(host, std::make_pair(std::int64_t(0), n), Kokkos::ALL());
    Kokkos::deep_copy(exec, dev_n, host_n);
    if (a.kind == Source::Kind::Packed) pack_packed_bytes(exec, packed, dev_n, r0);
    else pack_unpacked_bytes(exec, packed, dev_n, r0);
  }
  exec.fence();
  return packed;
}

// Rows whose values every rank checks against the references: all of a small

Inputs load_inputs(RunContext& ctx, const Config& c) {
  // Allocations (and the file reads of packing) are agreed by all ranks
  // before any collective: a rank that fails stops every rank.
  const MPI_Comm comm = ctx.env.comm();
  const bool two = c.two_inputs();
  FencedTimer<ExecSpace> pack_timer(ctx.exec);
  Packed a = collectively(comm, "gram", [&] { return load_packed(ctx.exec, c.a, "kmini::gram::A"); });
  // Unused buffers are allocated empty: default-constructed Views crashed on
  // destruction with the Kokkos 4.6.99 OpenMP build.
  Packed b = collectively(comm, "gram", [&] {
    return two ? load_packed(ctx.exec, c.b, "kmini::gram::B") : Packed("kmini::gram::B", 0, 0);
  });
  const double pack_seconds = allreduce_max(comm, pack_timer.seconds());
  return Inputs{std::move(a), std::move(b), two, pack_seconds};
}

}  // namespace detail

}  // namespace kmini::gram
