#include "convert.hpp"

#include "core/checked_size.hpp"
#include "core/errors.hpp"
#include "core/format.hpp"
#include "deck/deck.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace kmini::python {

namespace {

py::module_ numpy() { return py::module_::import("numpy"); }

std::string type_name(const py::handle& v) {
  return py::str(py::type::handle_of(v).attr("__name__")).cast<std::string>();
}

bool is_instance_of(const py::handle& v, const char* module_attr) {
  return py::isinstance(v, numpy().attr(module_attr));
}

// A 0-d array as its scalar (numpy's own conversion), anything else as it is.
py::object scalar_of(const py::handle& v) {
  if (py::isinstance<py::array>(v) && py::reinterpret_borrow<py::array>(v).ndim() == 0 && !is_instance_of(v, "generic"))
    return v.attr("item")();
  return py::reinterpret_borrow<py::object>(v);
}

std::string number_text(double x) { return format_g(x, 17); }

}  // namespace

std::string describe(const py::handle& v) {
  if (py::isinstance<py::array>(v)) {
    const auto a = py::reinterpret_borrow<py::array>(v);
    return type_name(v) + " of dtype " + dtype_of(a) + " and shape " + shape_of(a);
  }
  std::string r;
  try {
    r = py::repr(v).cast<std::string>();
  } catch (const py::error_already_set&) {
    r = "?";
  }
  if (r.size() > 40) r = r.substr(0, 37) + "...";
  // Python's own numbers and strings read as they are written; others with their type.
  if (v.is_none() || py::isinstance<py::str>(v) || PyLong_Check(v.ptr()) || PyFloat_Check(v.ptr()) ||
      PyComplex_Check(v.ptr()))
    return r;
  const std::string t = type_name(v);
  return r.rfind(t, 0) == 0 ? r : t + " " + r;
}

std::string shape_of(const py::array& a) {
  std::string s = "(";
  for (py::ssize_t i = 0; i < a.ndim(); ++i) s += (i ? ", " : "") + std::to_string(a.shape(i));
  return s + (a.ndim() == 1 ? ",)" : ")");
}

std::string dtype_of(const py::array& a) { return py::str(a.dtype()).cast<std::string>(); }

bool flag(const py::array& a, const char* name) { return a.attr("flags").attr(name).cast<bool>(); }

void type_error(const std::string& name, const py::handle& got, const std::string& expected) {
  throw py::type_error(name + ": got " + describe(got) + ", expected " + expected);
}

void value_error(const std::string& name, const std::string& got, const std::string& expected) {
  throw py::value_error(name + ": got " + got + ", expected " + expected);
}

void memory_error(const std::string& message) {
  PyErr_SetString(PyExc_MemoryError, message.c_str());
  throw py::error_already_set();
}

bool is_bool(const py::handle& v) { return py::isinstance<py::bool_>(v) || is_instance_of(v, "bool_"); }

bool is_integer(const py::handle& v) { return !is_bool(v) && (PyLong_Check(v.ptr()) || is_instance_of(v, "integer")); }

std::int64_t integer_arg(const py::handle& given, const std::string& name, std::int64_t lo, std::int64_t hi) {
  const py::object v = scalar_of(given);
  const std::string range = hi >= std::numeric_limits<std::int64_t>::max() / 2
                                ? "an integer >= " + std::to_string(lo)
                                : "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  if (!is_integer(v)) type_error(name, given, range);
  const py::int_ i = py::module_::import("operator").attr("index")(v);
  int overflow = 0;
  const long long x = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
  if (overflow || x < lo || x > hi) value_error(name, py::repr(i).cast<std::string>(), range);
  return x;
}

double real_arg(const py::handle& given, const std::string& name, double lo, double hi, bool lo_exclusive) {
  const py::object v = scalar_of(given);
  const double big = std::numeric_limits<double>::max();
  const std::string range = lo <= -big && hi >= big ? std::string("a finite real number")
                            : hi >= big
                                ? std::string("a finite real number ") + (lo_exclusive ? "> " : ">= ") + number_text(lo)
                                : std::string("a finite real number in ") + (lo_exclusive ? "(" : "[") +
                                      number_text(lo) + ", " + number_text(hi) + "]";
  if (is_bool(v)) type_error(name, given, range + " (not a bool)");
  if (PyComplex_Check(v.ptr()) || is_instance_of(v, "complexfloating"))
    type_error(name, given, range + " (a complex value would lose its imaginary part)");
  double x = 0;
  if (PyFloat_Check(v.ptr()) || is_instance_of(v, "floating")) {
    x = py::float_(v).cast<double>();
    // long double: only when the value is kept
    if (is_instance_of(v, "floating") && !v.equal(numpy().attr("longdouble")(x)) && std::isfinite(x))
      type_error(name, given, range + " (representable as a float64)");
  } else if (is_integer(v)) {
    x = PyLong_AsDouble(py::module_::import("operator").attr("index")(v).ptr());
    if (x == -1.0 && PyErr_Occurred()) {
      PyErr_Clear();
      value_error(name, describe(given), range);
    }
  } else {
    type_error(name, given, range);
  }
  if (!std::isfinite(x) || x < lo || x > hi || (lo_exclusive && x == lo)) value_error(name, describe(given), range);
  return x;
}

std::complex<double> complex_arg(const py::handle& given, const std::string& name) {
  const py::object v = scalar_of(given);
  if (PyComplex_Check(v.ptr()) || is_instance_of(v, "complexfloating")) {
    if (is_instance_of(v, "complexfloating") && py::array(numpy().attr("asarray")(v)).itemsize() > 16)
      type_error(name, given, "a finite complex number (representable as a complex128)");
    const auto c = py::cast<std::complex<double>>(v);
    if (!std::isfinite(c.real()) || !std::isfinite(c.imag()))
      value_error(name, describe(given), "a finite complex number");
    return c;
  }
  if (is_bool(v) || !(PyFloat_Check(v.ptr()) || is_integer(v) || is_instance_of(v, "floating")))
    type_error(name, given, "a finite complex number");
  return real_arg(v, name, -std::numeric_limits<double>::max(), std::numeric_limits<double>::max());
}

bool bool_arg(const py::handle& v, const std::string& name) {
  if (!is_bool(v)) type_error(name, v, "True or False");
  return PyObject_IsTrue(v.ptr()) == 1;
}

std::string choice_arg(const py::handle& v, const std::string& name, const std::vector<std::string>& options) {
  std::string list;
  for (std::size_t i = 0; i < options.size(); ++i)
    list += (i ? (i + 1 == options.size() ? " or " : ", ") : "") + ("'" + options[i] + "'");
  if (!py::isinstance<py::str>(v)) type_error(name, v, list);
  const std::string s = v.cast<std::string>();
  for (const auto& o : options)
    if (s == o) return s;
  value_error(name, describe(v), list);
}

double byte_size_arg(const py::handle& given, const std::string& name, double max) {
  const py::object v = scalar_of(given);
  if (py::isinstance<py::str>(v)) {
    // The deck's own reading of a size ("512M", "1.5GiB", "4 G").
    std::string text = v.cast<std::string>(), quoted;
    for (const char c : text) {
      if (c == '"' || c == '\\') quoted += '\\';
      if (static_cast<unsigned char>(c) < 0x20) value_error(name, describe(given), "a size such as 512M");
      quoted += c;
    }
    try {
      Deck deck = Deck::from_text(name + ": \"" + quoted + "\"\n", name);
      return deck.root().byte_size(name, 0, max);
    } catch (const UsageError& e) {
      const std::string m = e.what();
      const auto at = m.find("expected ");
      value_error(name, describe(given), at == std::string::npos ? "a size such as 512M" : m.substr(at + 9));
    }
  }
  const std::string range = "a size of 1 to " + format_g(max, 6) + " bytes (a number, or a string such as '512M')";
  if (is_bool(v) || !(is_integer(v) || PyFloat_Check(v.ptr()) || is_instance_of(v, "floating")))
    type_error(name, given, range);
  const double x = real_arg(v, name, 1, max);
  return std::floor(x);
}

std::vector<double> real_list_arg(const py::handle& v, const std::string& name, std::size_t max) {
  const std::string expected = "an iterable of at most " + std::to_string(max) + " real numbers >= 0";
  if (py::isinstance<py::str>(v) || py::isinstance<py::bytes>(v) || !py::hasattr(v, "__iter__"))
    type_error(name, v, expected);
  if (py::isinstance(v, numpy().attr("ma").attr("MaskedArray")))
    type_error(name, v, expected + " (masked arrays are not read)");
  if (py::hasattr(v, "ndim") && py::hasattr(v, "shape") && v.attr("ndim").cast<int>() != 1)
    type_error(name, v,
               expected + " (a 1-d array, not one of shape " + py::str(v.attr("shape")).cast<std::string>() + ")");
  const py::list items = py::list(py::module_::import("itertools").attr("islice")(v, max + 1));
  if (items.size() > max)
    throw py::value_error(name + ": more than " + std::to_string(max) + " values, expected " + expected);
  std::vector<double> out;
  for (std::size_t i = 0; i < items.size(); ++i)
    out.push_back(real_arg(items[i], name + "[" + std::to_string(i) + "]", 0, std::numeric_limits<double>::max()));
  return out;
}

py::array array_arg(const py::handle& obj, const std::string& name) {
  if (py::isinstance(obj, numpy().attr("ma").attr("MaskedArray")))
    type_error(name, obj,
               "a plain array (masked arrays are refused: kmini would ignore the mask; pass "
               "np.ma.getdata(x) or x.filled(v))");
  const py::object np = numpy();
  py::array a;
  try {
    a = np.attr("asarray")(obj);
  } catch (const py::error_already_set& e) {
    type_error(name, obj, "an array of numbers (numpy cannot convert it)");
  }
  const char kind = a.dtype().kind();
  if (kind != 'b' && kind != 'i' && kind != 'u' && kind != 'f' && kind != 'c')
    type_error(name, obj, "an array of numbers");
  return a;
}

namespace {

// Whether numpy converts `a` to T (or, to_complex, to complex<T>) exactly:
// bool; floats (and complex, to complex) not narrowed; integers of at most 4
// (float64) or 2 (float32) bytes; wider integers when every value is within
// 2^53 (2^24), checked.
template <class T>
bool converts_exactly(const py::array& a, bool to_complex) {
  const char kind = a.dtype().kind();
  if (kind == 'b') return true;
  if (kind == 'f') return static_cast<std::size_t>(a.itemsize()) <= sizeof(T);
  if (kind == 'c') return to_complex && static_cast<std::size_t>(a.itemsize()) <= 2 * sizeof(T);
  if (kind != 'i' && kind != 'u') return false;
  if (a.itemsize() <= (sizeof(T) == 8 ? 4 : 2)) return true;
  if (a.size() == 0) return true;
  const py::module_ np = py::module_::import("numpy");
  const double limit = sizeof(T) == 8 ? 9007199254740992.0 : 16777216.0;
  return np.attr("all")(np.attr("abs")(a).attr("__le__")(limit)).template cast<bool>();
}

}  // namespace

template <class T>
py::array_t<T> as_input(const py::handle& obj, const std::string& name) {
  py::array a = array_arg(obj, name);
  if (py::isinstance<py::array_t<T>>(a) && flag(a, "c_contiguous") && flag(a, "aligned") &&
      a.dtype().byteorder() != '>')
    return py::reinterpret_borrow<py::array_t<T>>(a);
  if (!converts_exactly<T>(a, false))
    throw py::type_error(name + ": dtype " + dtype_of(a) + " does not convert exactly to " +
                         py::str(py::dtype::of<T>()).cast<std::string>());
  return py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(a);
}

template <class T>
py::array_t<std::complex<T>> complex_copy(const py::handle& obj, const std::string& name) {
  py::array a = array_arg(obj, name);
  if (!converts_exactly<T>(a, true))
    throw py::type_error(name + ": dtype " + dtype_of(a) + " does not convert exactly to " +
                         py::str(py::dtype::of<std::complex<T>>()).cast<std::string>());
  py::array_t<std::complex<T>> out(std::vector<py::ssize_t>(a.shape(), a.shape() + a.ndim()));
  py::module_::import("numpy").attr("copyto")(out, a);
  return out;
}

template <class T>
py::array_t<T> out_arg(const py::object& out, const std::vector<py::ssize_t>& shape, const std::string& shape_name,
                       const std::vector<const py::array*>& inputs) {
  if (out.is_none()) return py::array_t<T>(shape);
  const std::string want = py::str(py::dtype::of<T>()).cast<std::string>();
  if (!py::isinstance<py::array>(out) || py::isinstance(out, numpy().attr("ma").attr("MaskedArray")))
    type_error("out", out, "a numpy ndarray of " + want + " (it is written in place)");
  const auto o = py::reinterpret_borrow<py::array>(out);
  if (!py::isinstance<py::array_t<T>>(o) || o.dtype().byteorder() == '>')
    throw py::type_error("out: dtype " + dtype_of(o) + ", expected " + want +
                         " (the dtype of the result; out is written in place, never converted)");
  if (!flag(o, "c_contiguous") || !flag(o, "aligned") || !o.writeable())
    throw py::value_error("out: expected a C-contiguous, aligned, writeable array (it is written in place)");
  if (o.ndim() != static_cast<py::ssize_t>(shape.size()) || !std::equal(shape.begin(), shape.end(), o.shape())) {
    std::string s = "(";
    for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    throw py::value_error("out: shape " + shape_of(o) + ", expected " + s + (shape.size() == 1 ? ",)" : ")") + " (" +
                          shape_name + ")");
  }
  // Overlap would make the result depend on the order of the writes.
  const auto* lo = static_cast<const char*>(o.data());
  const auto* hi = lo + o.nbytes();
  for (const py::array* in : inputs) {
    const auto* a = static_cast<const char*>(in->data());
    if (a < hi && lo < a + in->nbytes()) throw py::value_error("out: shares memory with an input");
  }
  return py::reinterpret_borrow<py::array_t<T>>(o);
}

py::list declared_arguments(const KernelDeclaration& d, const std::vector<Argument>& arguments) {
  py::list out;
  const py::object loads = py::module_::import("json").attr("loads");
  for (const Argument& a : arguments) {
    py::dict entry = loads(d.key(a.key).to_json(d.name).dump(0));
    entry["name"] = a.name;
    out.append(entry);
  }
  return out;
}

std::string declared_choice_arg(const py::handle& v, const std::string& name, const DeckKey& key) {
  return choice_arg(v, name, key.rule.options);
}

double declared_real_arg(const py::handle& v, const std::string& name, const DeckKey& key) {
  return real_arg(v, name, key.rule.min, key.rule.max, key.rule.min_exclusive);
}

Options::Options(const py::handle& options, const std::string& function, const std::vector<std::string>& names) {
  if (!py::isinstance<py::dict>(options)) type_error(function + ": options", options, "a dict of keyword arguments");
  for (const auto& item : py::reinterpret_borrow<py::dict>(options)) {
    const std::string name = py::str(item.first).cast<std::string>();
    if (std::find(names.begin(), names.end(), name) == names.end())
      throw py::type_error(function + ": got an unknown option '" + name + "'");
    values_.emplace_back(name, py::reinterpret_borrow<py::object>(item.second));
  }
  for (const std::string& name : names)
    if (std::none_of(values_.begin(), values_.end(), [&](const auto& v) { return v.first == name; }))
      throw py::type_error(function + ": the option '" + name + "' is missing");
}

const py::object& Options::operator[](const std::string& name) const {
  for (const auto& v : values_)
    if (v.first == name) return v.second;
  throw std::logic_error("Options: no option " + name);
}

std::vector<std::string> option_names(const std::vector<Argument>& declared, const std::vector<std::string>& own) {
  std::vector<std::string> names(own);
  for (const Argument& a : declared) names.emplace_back(a.name);
  return names;
}

std::string first_line(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  return line.size() > 200 ? line.substr(0, 197) + "..." : line;
}

std::int64_t checked_bytes(std::int64_t n, std::int64_t size, const std::string& what) {
  const auto b = checked_mul(static_cast<std::uint64_t>(n), static_cast<std::uint64_t>(size));
  if (n < 0 || !b)
    memory_error(what + ": " + std::to_string(n) + " x " + std::to_string(size) + " bytes is beyond 2^63 bytes");
  return static_cast<std::int64_t>(*b);
}

template py::array_t<float> as_input<float>(const py::handle&, const std::string&);
template py::array_t<double> as_input<double>(const py::handle&, const std::string&);
template py::array_t<std::complex<float>> complex_copy<float>(const py::handle&, const std::string&);
template py::array_t<std::complex<double>> complex_copy<double>(const py::handle&, const std::string&);
template py::array_t<float> out_arg<float>(const py::object&, const std::vector<py::ssize_t>&, const std::string&,
                                           const std::vector<const py::array*>&);
template py::array_t<double> out_arg<double>(const py::object&, const std::vector<py::ssize_t>&, const std::string&,
                                             const std::vector<const py::array*>&);

}  // namespace kmini::python
