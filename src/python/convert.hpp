#pragma once
// Arguments from Python: numbers, words, sizes and arrays, checked the same way
// for every kernel. Every error is one line that names the argument, says what
// it got (arrays by dtype and shape, never their values) and what was
// expected: a TypeError for the wrong kind of object, a ValueError for a value
// out of range, a MemoryError for a size that cannot be allocated.
#include "kernel/declaration.hpp"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <complex>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kmini::python {

namespace py = pybind11;

// What `v` is, briefly: "float 20.0", "str 'abc'", "ndarray float64 (3, 4)".
std::string describe(const py::handle& v);
// A shape as Python prints it: "(3, 4)", "(5,)".
std::string shape_of(const py::array& a);
std::string dtype_of(const py::array& a);
bool flag(const py::array& a, const char* name);

[[noreturn]] void type_error(const std::string& name, const py::handle& got, const std::string& expected);
[[noreturn]] void value_error(const std::string& name, const std::string& got, const std::string& expected);
// A MemoryError naming what could not be allocated.
[[noreturn]] void memory_error(const std::string& message);

bool is_bool(const py::handle& v);  // Python's and numpy's booleans
bool is_integer(const py::handle& v);

// A whole number in [lo, hi]: int or a numpy integer (not a bool, not a float).
std::int64_t integer_arg(const py::handle& v, const std::string& name, std::int64_t lo, std::int64_t hi);
// A finite real number in [lo, hi] (lo excluded when lo_exclusive): int, float
// or a numpy integer or floating scalar; booleans and complex numbers (even
// with a zero imaginary part) are a TypeError.
double real_arg(const py::handle& v, const std::string& name, double lo, double hi, bool lo_exclusive = false);
// A finite complex number: any of the above, or a complex (Python or numpy).
std::complex<double> complex_arg(const py::handle& v, const std::string& name);
// True or False (Python's or numpy's bool).
bool bool_arg(const py::handle& v, const std::string& name);
// One of `options` (a str).
std::string choice_arg(const py::handle& v, const std::string& name, const std::vector<std::string>& options);
// A byte count as the deck reads it: a number of bytes, or a string with a
// binary unit ("512M", "1.5GiB"), from 1 to `max` bytes.
double byte_size_arg(const py::handle& v, const std::string& name, double max);
// At most `max` reals >= 0 from any iterable (not a str), read no further
// than one past `max`, so an endless iterator is refused, not consumed.
std::vector<double> real_list_arg(const py::handle& v, const std::string& name, std::size_t max);

// An input array: a numpy array or what numpy converts; a masked array, a
// device array on a host build, and objects numpy only wraps as dtype object
// are a TypeError.
py::array array_arg(const py::handle& obj, const std::string& name);

// `a` as a C-contiguous array of T: itself when it already is one (no copy),
// else one exact copy; a TypeError when its values do not convert exactly.
template <class T>
py::array_t<T> as_input(const py::handle& obj, const std::string& name);
// A new C-contiguous complex<T> array holding `obj`'s values (exactly).
template <class T>
py::array_t<std::complex<T>> complex_copy(const py::handle& obj, const std::string& name);

// `out=`: None, or an ndarray (not a subclass such as a masked array, not a
// list) of dtype T and `shape`, C-contiguous, aligned, writeable, sharing no
// memory with `inputs`. Returns it, or a new array when None.
template <class T>
py::array_t<T> out_arg(const py::object& out, const std::vector<py::ssize_t>& shape, const std::string& shape_name,
                       const std::vector<const py::array*>& inputs);

// The first line of a library's message, at most 200 characters (for one-line errors).
std::string first_line(const std::string& text);

// A keyword argument that is a deck key of the kernel (`key` below its section).
struct Argument {
  const char* name;
  const char* key;
};
// For the package (defaults, docstrings) and its tests: each argument's name
// and its key as `kmini describe --json` writes it.
py::list declared_arguments(const KernelDeclaration& d, const std::vector<Argument>& arguments);
// The declared options of a choice key, read as choice_arg reads a word.
std::string declared_choice_arg(const py::handle& v, const std::string& name, const DeckKey& key);
// A real number within the declared key's limits.
double declared_real_arg(const py::handle& v, const std::string& name, const DeckKey& key);

// A kernel's keyword arguments as the package passes them: one dict keyed by
// their names (the declared arguments' and the kernel's own), read once. Its
// names must be exactly `names`: another set is a TypeError naming the option.
class Options {
 public:
  Options(const py::handle& options, const std::string& function, const std::vector<std::string>& names);
  // The value of `name` (one of the names).
  const py::object& operator[](const std::string& name) const;

 private:
  std::vector<std::pair<std::string, py::object>> values_;
};
// The option names of a kernel: its declared arguments' and `own` (not deck keys).
std::vector<std::string> option_names(const std::vector<Argument>& declared, const std::vector<std::string>& own);

// n * size bytes, or a MemoryError naming `what` when it overflows.
std::int64_t checked_bytes(std::int64_t n, std::int64_t size, const std::string& what);

}  // namespace kmini::python
