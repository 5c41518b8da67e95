#pragma once
// What gram's binding files share: bind_gram.cpp (the calls), bind_gram_input.cpp
// (the input forms), bind_gram_write.cpp (write='s files).
#include "gram/gram_api.hpp"

#include <pybind11/pybind11.h>

#include <cstdint>

namespace kmini::python {

namespace py = pybind11;

// One 0/1 matrix argument: bool/uint8 elements, np.packbits bytes (uint8 with
// cols=) or uint64 words (with cols=), held C-contiguous in `keep`; or the
// same as a device array (__cuda_array_interface__), read in place.
struct GramInput {
  py::object keep;
  kmini::gram::ApiMatrix m;
};

// `obj` as gram's input `name` (A or B); cols < 0: unpacked elements, else
// the columns of packed rows. A TypeError or ValueError naming `name`.
GramInput gram_input(const py::handle& obj, const char* name, std::int64_t cols);

// The library's check of the values (where they are), as the CLI words it.
// Runs kernels: call it inside a KernelCall.
// Over ranks, `row0` is the first row of this rank's block: rows are named
// as in the whole matrix.
void check_gram_values(const char* name, const kmini::gram::ApiMatrix& m, std::int64_t row0 = 0);

// _check_write, _write_npy, _write_text: write='s files, as the CLI writes them.
void bind_gram_write(py::module_& m);

}  // namespace kmini::python
