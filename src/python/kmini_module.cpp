// The Python front end (issue 22): `import kmini`, numpy arrays in and out.
// It calls the kernels' library functions (discount/discount_api.hpp, ...)
// and compiles no kernel code of its own.
//
// Zero-copy: a C-contiguous, aligned, native-order array of the kernel's dtype
// is wrapped as an unmanaged View on host backends (its data pointer is the
// View's); other arrays whose values convert exactly (bool, integers up to
// 2^53, float32 to float64) are copied once; anything else is a TypeError.
// On device backends the arrays are copied to the device and back (the
// __cuda_array_interface__ path is not written yet).
#include "core/errors.hpp"
#include "core/kokkos_compat.hpp"
#include "discount/discount_api.hpp"
#include "version.hpp"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace py = pybind11;

namespace {

bool g_we_initialized = false;

// Kokkos on first use, with the usual KOKKOS_* variables, checked first as
// the CLI checks them (a malformed one is a ValueError, not an abort).
void ensure_kokkos() {
  if (Kokkos::is_initialized()) return;
  const kmini::compat::Getenv getenv = [](const char* name) -> const char* { return std::getenv(name); };
  try {
    kmini::compat::check_environment(getenv);
    kmini::compat::load_tools_libraries({}, getenv);
  } catch (const kmini::UsageError& e) {
    throw py::value_error(e.what());
  }
  Kokkos::initialize();
  g_we_initialized = true;
}

void finalize_kokkos() {
  if (g_we_initialized && Kokkos::is_initialized()) Kokkos::finalize();
  g_we_initialized = false;
}

std::string shape_of(const py::array& a) {
  std::string s = "(";
  for (py::ssize_t i = 0; i < a.ndim(); ++i) s += (i ? ", " : "") + std::to_string(a.shape(i));
  return s + (a.ndim() == 1 ? ",)" : ")");
}

// numpy's flags by name ("c_contiguous", "aligned"), as Python reads them.
bool flag(const py::array& a, const char* name) { return a.attr("flags").attr(name).cast<bool>(); }

std::string dtype_of(const py::array& a) { return py::str(a.dtype()).cast<std::string>(); }

// Whether numpy converts `a` to T exactly: bool; floats not narrowed;
// integers of at most 4 (float64) or 2 (float32) bytes; wider integers when
// every value is within 2^53 (2^24), checked.
template <class T>
bool converts_exactly(const py::array& a) {
  const char kind = a.dtype().kind();
  if (kind == 'b') return true;
  if (kind == 'f') return static_cast<std::size_t>(a.itemsize()) <= sizeof(T);
  if (kind != 'i' && kind != 'u') return false;
  if (a.itemsize() <= (sizeof(T) == 8 ? 4 : 2)) return true;
  if (a.size() == 0) return true;
  const py::module_ np = py::module_::import("numpy");
  const double limit = sizeof(T) == 8 ? 9007199254740992.0 : 16777216.0;
  return np.attr("all")(np.attr("abs")(a).attr("__le__")(limit)).template cast<bool>();
}

// `a` as a C-contiguous array of T: itself when it already is one (no copy),
// else one exact copy; a TypeError naming the argument otherwise.
template <class T>
py::array_t<T> as_input(const py::handle& obj, const char* name) {
  py::array a = py::array::ensure(obj);
  if (!a) throw py::type_error(std::string(name) + ": expected a numpy array (or something numpy converts)");
  if (py::isinstance<py::array_t<T>>(a) && flag(a, "c_contiguous") && flag(a, "aligned") &&
      a.dtype().byteorder() != '>')
    return py::reinterpret_borrow<py::array_t<T>>(a);
  if (!converts_exactly<T>(a))
    throw py::type_error(std::string(name) + ": dtype " + dtype_of(a) + " does not convert exactly to " +
                         py::str(py::dtype::of<T>()).cast<std::string>());
  return py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(a);
}

template <class T>
using HostRow = Kokkos::View<T*, Kokkos::LayoutRight, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
template <class T>
using HostRows = Kokkos::View<T**, Kokkos::LayoutRight, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

// cv = mult_by * discount on the default execution space: in place on host
// backends, through device copies elsewhere.
template <class T>
void discount_on_device(const T* m, const T* x, T* y, std::int64_t dates, std::int64_t row) {
  using namespace kmini::discount;
  const ApiExec exec;
  if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace, ApiMemory>::accessible) {
    apply(exec, ApiRow<const T>(m, row), ApiRows<const T>(x, dates, row), ApiRows<T>(y, dates, row));
    exec.fence();
  } else {
    Kokkos::View<T*, ApiMemory> dm("kmini::python::mult_by", row);
    Kokkos::View<T**, Kokkos::LayoutRight, ApiMemory> dx("kmini::python::discount", dates, row),
        dy("kmini::python::cv", dates, row);
    Kokkos::deep_copy(exec, dm, HostRow<const T>(m, row));
    Kokkos::deep_copy(exec, dx, HostRows<const T>(x, dates, row));
    apply(exec, dm, dx, dy);
    Kokkos::deep_copy(exec, HostRows<T>(y, dates, row), dy);
    exec.fence();
  }
}

template <class T>
py::array discount_typed(const py::handle& mult_obj, const py::handle& disc_obj, const py::object& out_obj) {
  const auto m = as_input<T>(mult_obj, "mult_by");
  const auto x = as_input<T>(disc_obj, "discount");
  if (m.ndim() != 2) throw py::value_error("mult_by: shape " + shape_of(m) + ", expected (ids, terms)");
  if (x.ndim() != 3 || x.shape(1) != m.shape(0) || x.shape(2) != m.shape(1))
    throw py::value_error("discount: shape " + shape_of(x) + ", expected (dates, " + std::to_string(m.shape(0)) + ", " +
                          std::to_string(m.shape(1)) + ") to match mult_by " + shape_of(m));
  py::array_t<T> out;
  if (out_obj.is_none()) {
    out = py::array_t<T>({x.shape(0), x.shape(1), x.shape(2)});
  } else {
    py::array o = py::array::ensure(out_obj);
    if (!o) throw py::type_error("out: expected a numpy array");
    if (!py::isinstance<py::array_t<T>>(o) || o.dtype().byteorder() == '>')
      throw py::type_error("out: dtype " + dtype_of(o) + ", expected " +
                           py::str(py::dtype::of<T>()).cast<std::string>() +
                           " (the dtype of the result; out is written in place, never converted)");
    if (!flag(o, "c_contiguous") || !flag(o, "aligned") || !o.writeable())
      throw py::value_error("out: expected a C-contiguous, aligned, writeable array (it is written in place)");
    if (o.ndim() != 3 || o.shape(0) != x.shape(0) || o.shape(1) != x.shape(1) || o.shape(2) != x.shape(2))
      throw py::value_error("out: shape " + shape_of(o) + ", expected " + shape_of(x) + " (the shape of discount)");
    out = py::reinterpret_borrow<py::array_t<T>>(o);
    // Overlap would make the result depend on the order of the writes.
    const auto* lo = static_cast<const char*>(o.data());
    const auto* hi = lo + o.nbytes();
    for (const py::array* in : {static_cast<const py::array*>(&m), static_cast<const py::array*>(&x)}) {
      const auto* a = static_cast<const char*>(in->data());
      if (a < hi && lo < a + in->nbytes()) throw py::value_error("out: shares memory with an input");
    }
  }
  const std::int64_t dates = x.shape(0), row = m.shape(0) * m.shape(1);
  const T* mp = m.data();
  const T* xp = x.data();
  T* yp = out.mutable_data();
  ensure_kokkos();
  {
    py::gil_scoped_release release;  // the arrays are held by this frame
    discount_on_device(mp, xp, yp, dates, row);
  }
  return std::move(out);
}

// float32 when both inputs are float32, else float64 (as numpy's multiply).
py::array discount(const py::handle& mult_by, const py::handle& discount, const py::object& out) {
  const py::array m = py::array::ensure(mult_by), x = py::array::ensure(discount);
  const bool single = m && x && py::isinstance<py::array_t<float>>(m) && py::isinstance<py::array_t<float>>(x);
  return single ? discount_typed<float>(mult_by, discount, out) : discount_typed<double>(mult_by, discount, out);
}

// For the tests: the data pointer the kernels would see for `obj` as float64
// or float32, to compare with the array's own (zero-copy or one copy).
std::uintptr_t input_pointer(const py::handle& obj, const std::string& dtype) {
  if (dtype == "float64") return reinterpret_cast<std::uintptr_t>(as_input<double>(obj, "array").data());
  if (dtype == "float32") return reinterpret_cast<std::uintptr_t>(as_input<float>(obj, "array").data());
  throw py::value_error("dtype: expected float64 or float32");
}

py::dict info() {
  ensure_kokkos();
  py::dict d;
  d["kmini_version"] = kmini::kVersion;
  d["kokkos_version"] = kmini::compat::version_string();
  d["execution_space"] = kmini::compat::execution_space_name();
  d["memory_space"] = kmini::compat::memory_space_name();
  d["host_accessible"] =
      static_cast<bool>(Kokkos::SpaceAccessibility<Kokkos::HostSpace, kmini::discount::ApiMemory>::accessible);
  d["concurrency"] = kmini::discount::ApiExec().concurrency();
  return d;
}

}  // namespace

PYBIND11_MODULE(kmini, m) {
  m.doc() = "kmini's kernels from Python: numpy arrays in and out (discount so far; see README, From Python)";
  m.def("info", &info, "Kokkos version, execution and memory space of this build (initialises Kokkos).");
  m.def("discount", &discount, py::arg("mult_by"), py::arg("discount"), py::kw_only(), py::arg("out") = py::none(),
        "cv[d, i, n] = mult_by[i, n] * discount[d, i, n]; fills `out` in place when given.");
  m.def("_input_pointer", &input_pointer, py::arg("array"), py::arg("dtype"),
        "For tests: the data pointer a kernel would read for `array` as `dtype` (float64, float32).");
  m.def("_finalize", &finalize_kokkos, "Finalises Kokkos (registered with atexit).");
  py::module_::import("atexit").attr("register")(m.attr("_finalize"));
}
