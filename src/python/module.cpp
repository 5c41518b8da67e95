// kmini._kmini, the compiled half of the Python package kmini (src/python/kmini/:
// the typed signatures, defaults and docstrings). The runtime (runtime.cpp),
// the argument conversion (convert.cpp) and one binding file per kernel
// (bind_<kernel>.cpp); the kernels themselves are the library's.
#include "bindings.hpp"
#include "convert.hpp"
#include "core/kokkos_compat.hpp"
#include "cuda_array.hpp"
#include "discount/discount_api.hpp"
#include "runtime.hpp"
#include "version.hpp"

#include <pybind11/pybind11.h>

#include <cstdlib>
#include <string>

namespace py = pybind11;

namespace {

py::dict info() {
  kmini::python::ensure_kokkos();
  py::dict d;
  d["kmini_version"] = kmini::kVersion;
  d["kokkos_version"] = kmini::compat::version_string();
  d["execution_space"] = kmini::compat::execution_space_name();
  d["memory_space"] = kmini::compat::memory_space_name();
  d["host_accessible"] =
      static_cast<bool>(Kokkos::SpaceAccessibility<Kokkos::HostSpace, kmini::discount::ApiMemory>::accessible);
  d["concurrency"] = kmini::discount::ApiExec().concurrency();
  d["device_arrays"] = !kmini::python::kKernelsOnHost;  // __cuda_array_interface__ in and out
  d["mpi_launcher"] = kmini::python::launched_by_mpi();
  d["threads"] = "serialised: one kernel call at a time per process (the GIL is released while waiting)";
  return d;
}

// For the tests: the data pointer the kernels would see for `obj` as float64
// or float32, to compare with the array's own (zero-copy or one copy).
std::uintptr_t input_pointer(const py::handle& obj, const std::string& dtype) {
  if (dtype == "float64") return reinterpret_cast<std::uintptr_t>(kmini::python::as_input<double>(obj, "array").data());
  if (dtype == "float32") return reinterpret_cast<std::uintptr_t>(kmini::python::as_input<float>(obj, "array").data());
  throw py::value_error("dtype: expected float64 or float32");
}

// pybind11 before 2.12 reads numpy's dtype records in numpy 1's layout; under numpy 2
// it reads every item size wrong (and crashes). Refused at import, with the versions.
void require_numpy_abi() {
#if (PYBIND11_VERSION_MAJOR * 100 + PYBIND11_VERSION_MINOR) < 212
  const std::string numpy = py::str(py::module_::import("numpy").attr("__version__"));
  if (std::atoi(numpy.c_str()) >= 2) {
    throw py::import_error(
        "kmini: this module was built with pybind11 " PYBIND11_TOSTRING(PYBIND11_VERSION_MAJOR) "." PYBIND11_TOSTRING(
            PYBIND11_VERSION_MINOR) ", which supports numpy 1.x only, and numpy " +
        numpy + " is loaded: rebuild kmini with pybind11 >= 2.12 (numpy 2 support)");
  }
#endif
}

}  // namespace

PYBIND11_MODULE(_kmini, m) {
  m.doc() = "The compiled half of kmini: use the package kmini, which documents every argument.";
  require_numpy_abi();
  m.attr("__version__") = kmini::kVersion;
  kmini::python::start_runtime();
  kmini::python::register_device_array(m);
  m.def("info", &info);
  kmini::python::bind_discount(m);
  kmini::python::bind_rk4(m);
  kmini::python::bind_gram(m);
  kmini::python::bind_fps(m);
  m.def("_input_pointer", &input_pointer, py::arg("array"), py::arg("dtype"));
  m.def(
      "_check_comm",
      [](const py::object& comm, const std::string& function) {
        bool given = false;
        kmini::python::comm_of(comm, function.c_str(), &given);
      },
      "Raises what a kernel call with comm= would before the package uses MPI itself (a forked child, MPI "
      "finalised, mpi4py on another MPI library).");
  m.def("_finalize", &kmini::python::finalize, "Ends Kokkos (registered with atexit); later calls are a RuntimeError.");
  m.def("_finalize_at_exit", &kmini::python::finalize_at_exit,
        "The atexit handler: _finalize at the interpreter's exit.");
  py::module_::import("atexit").attr("register")(m.attr("_finalize_at_exit"));
}
