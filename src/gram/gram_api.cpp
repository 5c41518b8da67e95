#include "gram/gram_api.hpp"

#include "core/timer.hpp"
#include "gram/impl/gram_kernels.hpp"

#include <string>

namespace kmini::gram {
namespace {

using ApiMemory = ApiExec::memory_space;
using ApiPacked = PackedView<ApiMemory>;
using HostBytes =
    Kokkos::View<const std::uint8_t**, Kokkos::LayoutRight, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

constexpr bool kHostMemory = Kokkos::SpaceAccessibility<Kokkos::HostSpace, ApiMemory>::accessible;

// The matrix in the tile kernel's padded layout on the device.
ApiPacked pack(const ApiExec& exec, const ApiMatrix& m, const char* label) {
  ApiPacked packed(std::string(label), m.rows, words_allocated(m.cols));
  if (m.rows == 0) return packed;
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

}  // namespace

std::int64_t dense_counts_device_bytes(const ApiMatrix& a, const ApiMatrix* b) {
  std::int64_t bytes = a.rows * words_allocated(a.cols) * 8 + a.rows * a.row_bytes();
  if (b) bytes += b->rows * words_allocated(b->cols) * 8 + b->rows * b->row_bytes();
  if (!kHostMemory) bytes += a.rows * (b ? b->rows : a.rows) * 4;
  return bytes;
}

void dense_counts(const ApiExec& exec, const ApiMatrix& a, const ApiMatrix* b, std::int32_t* c, const DenseParams&) {
  ScopedRegion region("kmini::gram::dense_counts");
  const std::int64_t rows_b = b ? b->rows : a.rows;
  if (a.rows == 0 || rows_b == 0) return;
  const ApiPacked pa = pack(exec, a, "kmini::gram::A");
  const ApiPacked pb = b ? pack(exec, *b, "kmini::gram::B") : pa;
  SliceGeometry g;
  g.rows = a.rows;
  g.r0 = 0;
  g.r1 = a.rows;
  g.targets = b ? rows_b : 0;
  using Out = Kokkos::View<std::int32_t*, ApiMemory, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  const std::int64_t n = a.rows * rows_b;
  if constexpr (kHostMemory) {
    gram_slice(exec, pa, pb, g, Out(c, n));
    exec.fence();
  } else {
    Kokkos::View<std::int32_t*, ApiMemory> out("kmini::gram::C", n);
    gram_slice(exec, pa, pb, g, out);
    Kokkos::deep_copy(
        exec, Kokkos::View<std::int32_t*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(c, n), out);
    exec.fence();
  }
}

}  // namespace kmini::gram
