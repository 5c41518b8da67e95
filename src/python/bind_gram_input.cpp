// gram's 0/1 matrix arguments in every input form (bind_gram.hpp).
//
// One bit convention for every input form: column k of a row is element k
// (bool/uint8 0/1), bit 7 - k % 8 of byte k / 8 (np.packbits(A, axis=1), its
// default big bit order) or bit k % 64 of the uint64 word k / 64 (native or
// either explicit byte order); forms can be mixed between A and B.
#include "bind_gram.hpp"
#include "convert.hpp"
#include "cuda_array.hpp"

#include <string>

namespace kmini::python {

namespace {

// The format `cols` and the dtype's kind and size give, and the row length it
// implies; a TypeError naming `name` for other dtypes.
kmini::gram::ApiMatrix gram_format(const char* name, const std::string& dtype, char kind, py::ssize_t itemsize,
                                   py::ssize_t rows, py::ssize_t width, std::int64_t cols) {
  using Format = kmini::gram::ApiMatrix::Format;
  kmini::gram::ApiMatrix m;
  m.rows = rows;
  if (cols < 0) {
    m.format = Format::Unpacked;
    m.cols = width;
    return m;
  }
  m.cols = cols;
  if (kind == 'u' && itemsize == 1) m.format = Format::PackBits;
  else if (kind == 'u' && itemsize == 8) m.format = Format::Words;
  else
    throw py::type_error(std::string(name) + ": dtype " + dtype +
                         " with cols=, expected uint8 (np.packbits(A, axis=1)) or uint64 words");
  const std::int64_t per_row = m.format == Format::PackBits ? (cols + 7) / 8 : (cols + 63) / 64;
  if (width != per_row)
    throw py::value_error(std::string(name) + ": shape (" + std::to_string(rows) + ", " + std::to_string(width) +
                          "), expected (" + std::to_string(rows) + ", " + std::to_string(per_row) +
                          ") for cols=" + std::to_string(cols));
  return m;
}

// Values above 1 in uint8 or uint64 input without cols= are most often packed rows.
constexpr const char* kPackedHint = " (for packed rows, np.packbits bytes or uint64 words, pass cols=)";

}  // namespace

void check_gram_values(const char* name, const kmini::gram::ApiMatrix& m, std::int64_t row0) {
  const kmini::gram::BadValue bad = kmini::gram::first_bad_value(kmini::gram::ApiExec(), m);
  if (bad.row < 0) return;
  const std::string row = std::to_string(row0 + bad.row);
  if (m.format == kmini::gram::ApiMatrix::Format::Unpacked)
    throw py::value_error(std::string(name) + ": element (" + row + ", " + std::to_string(bad.col) + ") is " +
                          std::to_string(bad.value) + ", expected 0 or 1" + kPackedHint);
  const bool words = m.format == kmini::gram::ApiMatrix::Format::Words;
  throw py::value_error(std::string(name) + ": bits set past cols=" + std::to_string(m.cols) + " in the last " +
                        (words ? "word" : "byte") + " of row " + row + ", expected zeros");
}

namespace {

GramInput gram_device_input(const py::handle& obj, const char* name, std::int64_t cols) {
  const CudaArrayView v = cuda_array_view(obj, name);
  if (v.shape.size() != 2)
    throw py::value_error(std::string(name) + ": shape " + v.shape_string() + ", expected (rows, cols)");
  const py::dtype dt(v.typestr);
  const char kind = dt.kind();
  if (cols < 0 && !(kind == 'b' || (kind == 'u' && dt.itemsize() == 1)))
    throw py::type_error(std::string(name) + ": device dtype " + v.typestr +
                         ", expected 0/1 values as bool or uint8 (or np.packbits bytes / uint64 words with cols=)");
  if (dt.byteorder() == '>')
    throw py::type_error(std::string(name) + ": device dtype " + v.typestr + ", expected native byte order");
  GramInput in;
  in.m = gram_format(name, v.typestr, kind, dt.itemsize(), v.shape[0], v.shape[1], cols);
  in.m.data = reinterpret_cast<const void*>(v.data);
  in.m.on_device = true;
  in.keep = v.owner;
  return in;
}

}  // namespace

GramInput gram_input(const py::handle& obj, const char* name, std::int64_t cols) {
  if (has_cuda_array_interface(obj)) return gram_device_input(obj, name, cols);
  const py::module_ np = py::module_::import("numpy");
  py::array a = array_arg(obj, name);
  if (a.ndim() != 2) throw py::value_error(std::string(name) + ": shape " + shape_of(a) + ", expected (rows, cols)");
  const char kind = a.dtype().kind();
  GramInput in;
  in.m = gram_format(name, dtype_of(a), kind, a.itemsize(), a.shape(0), a.shape(1), cols);
  if (in.m.format == kmini::gram::ApiMatrix::Format::Unpacked) {
    if (kind != 'b' && kind != 'u' && kind != 'i' && kind != 'f')
      throw py::type_error(std::string(name) + ": dtype " + dtype_of(a) +
                           ", expected 0/1 values as bool or uint8 (or np.packbits bytes / uint64 words with cols=)");
    const bool bytes = kind == 'b' || (kind == 'u' && a.itemsize() == 1);
    if (!bytes) {
      // Other dtypes are checked before the conversion to bytes (0.5 is not 0).
      const py::array bad = np.attr("argwhere")((a.attr("__ne__")(0)).attr("__and__")(a.attr("__ne__")(1)));
      if (bad.shape(0) > 0) {
        const auto i = bad.attr("__getitem__")(0).attr("__getitem__")(0).cast<std::int64_t>();
        const auto j = bad.attr("__getitem__")(0).attr("__getitem__")(1).cast<std::int64_t>();
        throw py::value_error(std::string(name) + ": element (" + std::to_string(i) + ", " + std::to_string(j) +
                              ") is " + describe(a.attr("__getitem__")(py::make_tuple(i, j)).attr("item")()) +
                              ", expected 0 or 1" + (kind == 'u' && a.itemsize() == 8 ? kPackedHint : ""));
      }
    }
    in.keep = np.attr("ascontiguousarray")(a, "uint8");
  } else {
    // Words in this machine's byte order (a big-endian array is swapped once).
    in.keep = np.attr("ascontiguousarray")(a, a.dtype().attr("newbyteorder")("="));
  }
  in.m.data = in.keep.cast<py::array>().data();
  return in;
}

}  // namespace kmini::python
