#include "cuda_array.hpp"

#include <numeric>
#include <stdexcept>

namespace kmini::python {

std::int64_t CudaArrayView::size() const {
  return std::accumulate(shape.begin(), shape.end(), std::int64_t(1), std::multiplies<std::int64_t>());
}

std::string shape_text(const std::vector<py::ssize_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

std::string CudaArrayView::shape_string() const { return shape_text(shape); }

namespace {

// A shape as a Python tuple of ints (element by element: a std::vector needs
// pybind11/stl.h's casters to convert, which these units do not include).
py::tuple shape_tuple(const std::vector<py::ssize_t>& shape) {
  py::tuple t(shape.size());
  for (std::size_t i = 0; i < shape.size(); ++i) t[i] = py::int_(shape[i]);
  return t;
}

}  // namespace

bool has_cuda_array_interface(const py::handle& obj) {
  return !obj.is_none() && py::hasattr(obj, "__cuda_array_interface__");
}

CudaArrayView cuda_array_view(const py::handle& obj, const char* name) {
  const std::string n(name);
  if constexpr (kKernelsOnHost)
    throw py::type_error(n +
                         ": a CUDA device array (__cuda_array_interface__), but this kmini build runs its "
                         "kernels on the host; pass a numpy array (e.g. cupy.asnumpy(x))");
  if (!has_cuda_array_interface(obj))
    throw py::type_error(n +
                         ": not a device array, but other arguments are; expected every array on the device "
                         "(__cuda_array_interface__) or none");
  py::dict d;
  try {
    d = obj.attr("__cuda_array_interface__").cast<py::dict>();
  } catch (const py::error_already_set&) {
    throw py::type_error(n + ": __cuda_array_interface__ is not a dict");
  } catch (const py::cast_error&) {
    throw py::type_error(n + ": __cuda_array_interface__ is not a dict");
  }
  CudaArrayView v;
  v.owner = py::reinterpret_borrow<py::object>(obj);
  try {
    const int version = d.contains("version") ? d["version"].cast<int>() : 0;
    if (version < 2 || version > 3)
      throw py::type_error(n + ": __cuda_array_interface__ version " + std::to_string(version) + ", expected 2 or 3");
    for (const py::handle e : d["shape"].cast<py::tuple>()) v.shape.push_back(e.cast<py::ssize_t>());
    v.typestr = d["typestr"].cast<std::string>();
    const py::tuple data = d["data"].cast<py::tuple>();
    v.data = data[0].cast<std::uintptr_t>();
    v.readonly = data[1].cast<bool>();
    v.itemsize = py::dtype(v.typestr).itemsize();
    if (d.contains("mask") && !d["mask"].is_none())
      throw py::type_error(n + ": a masked device array, expected one without a mask");
    if (d.contains("strides") && !d["strides"].is_none()) {
      // C-contiguous strides are allowed (PyTorch gives them explicitly).
      const py::tuple strides = d["strides"].cast<py::tuple>();
      py::ssize_t expect = v.itemsize;
      for (std::size_t i = v.shape.size(); i-- > 0;) {
        if (v.shape[i] > 1 && strides[i].cast<py::ssize_t>() != expect)
          throw py::value_error(n + ": a strided device array, expected a C-contiguous one");
        expect *= v.shape[i];
      }
    }
  } catch (const py::cast_error&) {
    throw py::type_error(n + ": malformed __cuda_array_interface__ (shape, typestr or data)");
  }
  if (v.data == 0 && v.size() > 0) throw py::value_error(n + ": a device array with a null data pointer");
  return v;
}

void refuse_device_arrays_on_host(std::initializer_list<std::pair<const char*, py::handle>> args) {
  if constexpr (kKernelsOnHost)
    for (const auto& [name, obj] : args)
      if (has_cuda_array_interface(obj)) cuda_array_view(obj, name);
}

void synchronize_producers() { Kokkos::fence(); }

DeviceArray::DeviceArray(std::vector<py::ssize_t> shape, const std::string& typestr)
    : shape_(std::move(shape)), typestr_(typestr) {
  std::int64_t n = py::dtype(typestr).itemsize();
  for (auto e : shape_) n *= e;
  bytes_ = Kokkos::View<char*, DeviceMemory>(
      Kokkos::view_alloc(std::string("kmini::python::result"), Kokkos::WithoutInitializing), n);
}

py::dict DeviceArray::interface() const {
  py::dict d;
  d["shape"] = shape_tuple(shape_);
  d["typestr"] = typestr_;
  d["data"] = py::make_tuple(reinterpret_cast<std::uintptr_t>(bytes_.data()), false);
  d["strides"] = py::none();
  d["version"] = 3;
  d["stream"] = py::none();  // written and fenced before the result is returned
  return d;
}

py::array DeviceArray::get() const {
  py::array out(py::dtype(typestr_), shape_);
  Kokkos::deep_copy(Kokkos::View<char*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
                        static_cast<char*>(out.mutable_data()), bytes_.extent(0)),
                    bytes_);
  return out;
}

void register_device_array(py::module_& m) {
  if constexpr (kKernelsOnHost) return;
  py::class_<DeviceArray>(m, "DeviceArray",
                          "A result in the GPU's memory: cupy.asarray(x) or numba.cuda.as_cuda_array(x) use it in "
                          "place (__cuda_array_interface__); x.get() copies it into a numpy array.")
      .def_property_readonly("shape", [](const DeviceArray& a) { return shape_tuple(a.shape()); })
      .def_property_readonly("dtype", [](const DeviceArray& a) { return py::dtype(a.typestr()); })
      .def_property_readonly("__cuda_array_interface__", &DeviceArray::interface)
      .def("get", &DeviceArray::get, "A numpy copy of the array.");
}

}  // namespace kmini::python
