#pragma once
// The Gram product as a library function (issue 22): what front ends (the
// Python module) call. A light header: the input description, the parameters
// and the function; the kernels (packing, tiles) are in gram_kernels.hpp,
// compiled into kmini_gram.
#include <Kokkos_Core.hpp>

#include <cstdint>

namespace kmini::gram {

using ApiExec = Kokkos::DefaultExecutionSpace;

// A 0/1 matrix in host memory, row-major (C-contiguous), rows x cols:
//  Unpacked: one byte per element (0 or 1; bool or uint8);
//  PackBits: np.packbits(A, axis=1): ceil(cols / 8) bytes per row, numpy's bit order;
//  Words:    ceil(cols / 64) 64-bit words per row, column k in bit k % 64 of word k / 64.
// The values (0/1, no bit set past `cols`) are the caller's to check.
struct ApiMatrix {
  enum class Format { Unpacked, PackBits, Words } format = Format::Unpacked;
  const void* data = nullptr;
  std::int64_t rows = 0, cols = 0;
  std::int64_t row_bytes() const {
    return format == Format::Unpacked ? cols : format == Format::PackBits ? (cols + 7) / 8 : (cols + 63) / 64 * 8;
  }
};

struct DenseParams {};

// C = A A^T (b == nullptr) or A B^T: C(i, j) = the number of columns where rows
// i of A and j of B are both 1, into `c` (host memory, row-major, a.rows x
// rows of B). The CLI's tile kernel (the popcount engine), one slice; with one
// input every tile on or above the diagonal once, mirrored.
void dense_counts(const ApiExec& exec, const ApiMatrix& a, const ApiMatrix* b, std::int32_t* c,
                  const DenseParams& params = {});

// Bytes dense_counts allocates on the device (packed inputs, and C where the
// device memory is not the host's), for a memory budget checked beforehand.
std::int64_t dense_counts_device_bytes(const ApiMatrix& a, const ApiMatrix* b);

}  // namespace kmini::gram
