#pragma once
// NumPy .npy files (format versions 1.0 and 2.0, little-endian, C order).
// Reading validates the header strictly and checks the file holds exactly the
// data it announces; writing is atomic, also for distributed MPI-IO writes.
#include "core/termination.hpp"

#include <mpi.h>

#include <complex>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace kmini::npy {

enum class DType { Bool, U1, I4, I8, F4, F8, C8, C16 };

std::size_t item_size(DType d);
// Short name used in messages and decks ("f8"), and numpy's descr ("<f8").
const char* short_name(DType d);
const char* descr(DType d);

template <class T>
struct DTypeOf;
template <>
struct DTypeOf<bool> {
  static constexpr DType value = DType::Bool;
};
template <>
struct DTypeOf<std::uint8_t> {
  static constexpr DType value = DType::U1;
};
template <>
struct DTypeOf<std::int32_t> {
  static constexpr DType value = DType::I4;
};
template <>
struct DTypeOf<std::int64_t> {
  static constexpr DType value = DType::I8;
};
template <>
struct DTypeOf<float> {
  static constexpr DType value = DType::F4;
};
template <>
struct DTypeOf<double> {
  static constexpr DType value = DType::F8;
};
template <>
struct DTypeOf<std::complex<float>> {
  static constexpr DType value = DType::C8;
};
template <>
struct DTypeOf<std::complex<double>> {
  static constexpr DType value = DType::C16;
};

using Shape = std::vector<std::int64_t>;
std::string shape_string(const Shape& s);  // "(3, 4)"

struct Info {
  std::string path;
  DType dtype = DType::U1;
  Shape shape;
  std::uint64_t data_offset = 0;  // bytes before the first element
  std::uint64_t element_count() const;
};

// Parses and validates the header of `path`; throws UsageError naming the
// file and the problem (bad magic, version, Fortran order, big-endian,
// unsupported dtype, malformed header, truncated or oversized data).
Info read_info(const std::string& path);

// Throws UsageError unless the file's dtype is one of `allowed`.
void require_dtype(const Info& info, std::initializer_list<DType> allowed);
// Throws UsageError unless the file's shape equals `expected`.
void require_shape(const Info& info, const Shape& expected);

// Reads `count` elements starting at element `first` (raw little-endian bytes
// of the file's dtype) into dst.
void read_elements(const Info& info, std::uint64_t first, std::uint64_t count, void* dst);

// Whole-array convenience: checks dtype == DTypeOf<T> and returns the data.
template <class T>
std::vector<T> read_all(const Info& info) {
  require_dtype(info, {DTypeOf<T>::value});
  std::vector<T> out(info.element_count());
  read_elements(info, 0, out.size(), out.data());
  return out;
}

// One element of an array as written: a plain dtype, or a numpy structured
// dtype (named fields packed without padding, numpy's default, e.g.
// [('i', '<i8'), ('j', '<i8'), ('value', '<f4')], 20 bytes).
struct Field {
  std::string name;
  DType dtype;
};
class ElementType {
 public:
  ElementType(DType d) : fields_{{"", d}} {}  // NOLINT: a plain dtype is an element type
  explicit ElementType(std::vector<Field> fields) : fields_(std::move(fields)), structured_(true) {}
  std::size_t size() const;
  // The header's value of 'descr', as numpy's repr writes it: '<f8' or [('i', '<i8'), ...].
  std::string descr_repr() const;
  bool structured() const { return structured_; }

 private:
  std::vector<Field> fields_;
  bool structured_ = false;
};

// The full header (magic, version, length, dict, padding) for an array,
// byte-identical to numpy 1.24's np.save: the dict is followed by spare spaces
// for the first dimension to grow to 21 digits (numpy's GROWTH_AXIS_MAX_DIGITS),
// then padded to a multiple of 64 bytes (a whole 64 more when already aligned,
// as numpy does). So the header of a 1-D array has the same length for any
// length below 10^21: a file can be written before its length is known.
std::string make_header(const ElementType& element, const Shape& shape);

// Writes an array atomically (temporary file + rename).
void write(const std::string& path, const ElementType& element, const Shape& shape, const void* data);
template <class T>
void write(const std::string& path, const Shape& shape, const std::vector<T>& data) {
  write(path, DTypeOf<T>::value, shape, data.data());
}

// Collective: every rank writes `count` elements at element offset `first` of
// one global array with MPI-IO; the file appears atomically when all succeed.
// What it wrote is checked: space reserved up front (a full disk fails before
// any data is written, with the OS's error), every call's return code and
// byte count, MPI_File_sync before close, the final size before the rename.
// Any failure: RuntimeFailure on every rank naming the file and the error,
// the temporary file removed, the previous file of that name unchanged.
void write_distributed(MPI_Comm comm, const std::string& path, DType dtype, const Shape& global_shape,
                       std::uint64_t first, std::uint64_t count, const void* data);

// A collective .npy write in several rounds, for ranks that own several
// separate blocks of a 1-D or 2-D array (e.g. row slices of a matrix). Every
// rank calls write_round the same number of times (with no block when it has
// none left); the file appears atomically on commit(), and the temporary file
// is removed if the writer is destroyed without commit.
class DistributedWriter {
 public:
  // A rectangular block: rows [row0, row0 + nrows) x columns [col0, col0 +
  // ncols) of a 2-D array (1-D arrays: row0 = 0, nrows = 1), data row major.
  struct Block {
    std::int64_t row0 = 0, col0 = 0, nrows = 0, ncols = 0;
    const void* data = nullptr;
  };
  DistributedWriter(MPI_Comm comm, std::string path, const ElementType& element, Shape global_shape);
  // A 1-D array whose length is known only at the end (e.g. the records of a
  // search, appended round by round at offsets the ranks agree on): no space
  // is reserved, the header is written by commit(length).
  struct GrowingLength {};
  DistributedWriter(MPI_Comm comm, std::string path, const ElementType& element, GrowingLength);
  // Bytes without a .npy header (a text file whose length is known only at
  // the end: lines appended round by round at offsets the ranks agree on),
  // written and committed as a GrowingLength array of uint8.
  struct RawBytes {};
  DistributedWriter(MPI_Comm comm, std::string path, RawBytes);
  ~DistributedWriter();
  DistributedWriter(const DistributedWriter&) = delete;
  DistributedWriter& operator=(const DistributedWriter&) = delete;
  // Collective. `block` may be null (this rank writes nothing this round).
  void write_round(const Block* block);
  // Collective. `count` elements at element offset `first` of the flattened
  // array (any rank, any shape); count may be 0.
  void write_elements_round(std::uint64_t first, std::uint64_t count, const void* data);
  // Collective call, independent writes: each rank writes its own contiguous
  // range with MPI_File_write_at (no collective buffering: Open MPI's OMPIO
  // gave a 7.7 MB file of 4 ranks' contiguous ranges 20 MiB of buffers per
  // rank and 50 MiB on its aggregator). Errors surface at commit, as above.
  void write_elements_independent(std::uint64_t first, std::uint64_t count, const void* data);
  void commit();  // collective
  // Collective, for GrowingLength writers: the array has `length` elements
  // (the same on every rank); every one of them must have been written.
  void commit(std::int64_t length);

 private:
  MPI_Comm comm_;
  std::string path_, temp_;
  ElementType element_;
  Shape shape_;
  bool growing_ = false;
  bool raw_ = false;  // RawBytes: no header
  std::uint64_t header_bytes_ = 0;
  termination::TemporaryFile registration_;  // removed on SIGTERM/SIGINT
  MPI_File fh_{};
  bool open_ = false;
  std::string error_;  // this rank's first failure; empty while all is well

  static constexpr std::uint64_t kPieceBytes = std::uint64_t(1) << 30;  // MPI counts are int
  template <class Piece>
  void write_pieces(std::int64_t pieces, Piece&& piece);
  void open(std::uint64_t reserve_bytes);
  // Records the first failure of an MPI-IO call (return code or byte count).
  void check(int rc, const MPI_Status* st, long long expected_bytes, const char* what);
  // Collective: closes and removes the temporary file on every rank's failure
  // and throws the lowest failing rank's message everywhere.
  void fail_collectively_if_any();
};

// "No space left on device (MPI_ERR_NO_SPACE)" for an MPI error code.
std::string mpi_error_text(int rc);

}  // namespace kmini::npy
