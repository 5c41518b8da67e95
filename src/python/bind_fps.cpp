// kmini._read_fps: chemfp FPS fingerprint files read with the CLI's reader
// (io/fps.hpp), so that a file means the same and is refused for the same
// reasons from Python as from a deck: the records' IDs and their bits as
// uint64 words (column k in bit k % 64 of word k / 64), what kmini.gram takes
// with cols=num_bits, without a copy.
#include "bindings.hpp"
#include "core/errors.hpp"
#include "io/fps.hpp"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>
#include <vector>

namespace py = pybind11;

namespace {

// (ids, words, num_bits, type, software); a malformed file is a ValueError
// naming its file and line, as the CLI's exit 2 does.
py::tuple read_fps(const std::string& path) {
  kmini::fps::Index index;
  std::vector<std::uint8_t> bytes;
  try {
    py::gil_scoped_release release;
    index = kmini::fps::read_index(path);
    bytes.resize(static_cast<std::size_t>(index.rows() * index.bytes_per_row()));
    kmini::fps::read_rows(index, 0, index.rows(), bytes.data());
  } catch (const kmini::UsageError& e) {
    throw py::value_error(e.what());
  } catch (const kmini::RuntimeFailure& e) {
    throw py::value_error(e.what());
  }
  const std::int64_t rows = index.rows(), nb = index.bytes_per_row(), words = (index.num_bits + 63) / 64;
  py::array_t<std::uint64_t> out({static_cast<py::ssize_t>(rows), static_cast<py::ssize_t>(words)});
  std::uint64_t* w = out.mutable_data();
  for (std::int64_t i = 0; i < rows; ++i) {
    for (std::int64_t k = 0; k < words; ++k) w[i * words + k] = 0;
    for (std::int64_t b = 0; b < nb; ++b)  // byte b holds bits 8b .. 8b + 7, least significant first
      w[i * words + b / 8] |= std::uint64_t(bytes[static_cast<std::size_t>(i * nb + b)]) << (8 * (b % 8));
  }
  py::list ids;
  for (const std::string& id : index.ids) ids.append(py::str(id));
  return py::make_tuple(ids, out, index.num_bits, index.type, index.software);
}

}  // namespace

namespace kmini::python {

void bind_fps(py::module_& m) {
  m.def("_read_fps", &read_fps, py::arg("path"),
        "An FPS file's (ids, uint64 words, num_bits, type, software); use kmini.read_fps.");
}

}  // namespace kmini::python
