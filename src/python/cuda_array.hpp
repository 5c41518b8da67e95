#pragma once
// __cuda_array_interface__ (Numba's protocol, version 3; CuPy, numba and
// PyTorch CUDA tensors expose it) for the Python front end: device arrays in,
// used in place by the kernels; device arrays out, so that
// cupy.asarray(result) copies nothing and data stays on the GPU between calls.
// On builds whose kernels run on the host such arrays are refused (a
// TypeError that says to pass numpy arrays).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <Kokkos_Core.hpp>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace kmini::python {

namespace py = pybind11;

using DeviceMemory = Kokkos::DefaultExecutionSpace::memory_space;
// Whether the kernels' memory is the host's (then device arrays are refused).
constexpr bool kKernelsOnHost = Kokkos::SpaceAccessibility<Kokkos::HostSpace, DeviceMemory>::accessible;

// numpy's array-interface type string of T on this (little-endian) machine.
template <class T>
std::string typestr_of() {
  return py::str(py::dtype::of<T>().attr("str")).cast<std::string>();
}

// A shape as Python prints it: "(3, 4)", "(5,)".
std::string shape_text(const std::vector<py::ssize_t>& shape);

// An array another library holds on the device, as its interface describes it.
struct CudaArrayView {
  std::uintptr_t data = 0;
  bool readonly = false;
  std::vector<py::ssize_t> shape;
  std::string typestr;  // e.g. "<f8"
  py::ssize_t itemsize = 0;
  py::object owner;  // the object: keeps its memory alive while it is used
  std::int64_t size() const;
  std::int64_t bytes() const { return size() * itemsize; }
  std::string shape_string() const;
};

bool has_cuda_array_interface(const py::handle& obj);

// The interface of `obj` (which has one), checked: version 2 or 3, C-contiguous
// (strides None or the C strides), no mask; a TypeError/ValueError naming
// `name` otherwise, and a TypeError on builds whose kernels run on the host.
CudaArrayView cuda_array_view(const py::handle& obj, const char* name);

// On builds whose kernels run on the host: the TypeError of cuda_array_view
// for the first of `args` that is a device array (none: nothing).
void refuse_device_arrays_on_host(std::initializer_list<std::pair<const char*, py::handle>> args);

// Waits for the work of every stream on the device: the interface's `stream`
// may name any, and the producer's writes must land before the kernels read.
void synchronize_producers();

// A result kmini allocated in the kernels' memory space, exposed through
// __cuda_array_interface__ (stream None: kmini has finished writing it) and
// .get() (a numpy copy, as CuPy's).
class DeviceArray {
 public:
  DeviceArray(std::vector<py::ssize_t> shape, const std::string& typestr);
  void* data() const { return bytes_.data(); }
  const std::vector<py::ssize_t>& shape() const { return shape_; }
  const std::string& typestr() const { return typestr_; }
  py::dict interface() const;
  py::array get() const;

 private:
  std::vector<py::ssize_t> shape_;
  std::string typestr_;
  Kokkos::View<char*, DeviceMemory> bytes_;
};

// Registers kmini.DeviceArray (on builds with device memory only).
void register_device_array(py::module_& m);

}  // namespace kmini::python
