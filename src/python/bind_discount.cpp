// kmini._kmini.discount: cv[d, i, n] = mult_by[i, n] * discount[d, i, n].
//
// Zero-copy: a C-contiguous, aligned, native-order array of the kernel's dtype
// is wrapped as an unmanaged View on host backends (its data pointer is the
// View's); other arrays whose values convert exactly (bool, integers up to
// 2^53, float32 to float64) are copied once; anything else is a TypeError.
// On device backends numpy arrays are copied to the device and back, and
// objects exposing __cuda_array_interface__ are used in place.
#include "bindings.hpp"
#include "convert.hpp"
#include "cuda_array.hpp"
#include "discount/discount.hpp"
#include "discount/discount_api.hpp"
#include "runtime.hpp"

#include <Kokkos_Core.hpp>

namespace kmini::python {

namespace {

// The keyword arguments that are discount's deck keys (discount_declaration.cpp).
const std::vector<Argument> kArguments = {{"stores", "stores"}};

template <class T>
using HostRow = Kokkos::View<T*, Kokkos::LayoutRight, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
template <class T>
using HostRows = Kokkos::View<T**, Kokkos::LayoutRight, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

// cv = mult_by * discount on the default execution space: in place on host
// backends, through device copies elsewhere.
template <class T>
void discount_on_device(const T* m, const T* x, T* y, std::int64_t dates, std::int64_t row,
                        const kmini::discount::ApplyParams& params) {
  using namespace kmini::discount;
  const ApiExec exec;
  if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace, ApiMemory>::accessible) {
    apply(exec, ApiRow<const T>(m, row), ApiRows<const T>(x, dates, row), ApiRows<T>(y, dates, row), params);
    exec.fence();
  } else {
    Kokkos::View<T*, ApiMemory> dm("kmini::python::mult_by", row);
    Kokkos::View<T**, Kokkos::LayoutRight, ApiMemory> dx("kmini::python::discount", dates, row),
        dy("kmini::python::cv", dates, row);
    Kokkos::deep_copy(exec, dm, HostRow<const T>(m, row));
    Kokkos::deep_copy(exec, dx, HostRows<const T>(x, dates, row));
    apply(exec, dm, dx, dy, params);
    Kokkos::deep_copy(exec, HostRows<T>(y, dates, row), dy);
    exec.fence();
  }
}

template <class T>
py::array discount_typed(const py::handle& mult_obj, const py::handle& disc_obj, const py::object& out_obj,
                         const kmini::discount::ApplyParams& params) {
  const auto m = as_input<T>(mult_obj, "mult_by");
  const auto x = as_input<T>(disc_obj, "discount");
  if (m.ndim() != 2) throw py::value_error("mult_by: shape " + shape_of(m) + ", expected (ids, terms)");
  if (x.ndim() != 3 || x.shape(1) != m.shape(0) || x.shape(2) != m.shape(1))
    throw py::value_error("discount: shape " + shape_of(x) + ", expected (dates, " + std::to_string(m.shape(0)) + ", " +
                          std::to_string(m.shape(1)) + ") to match mult_by " + shape_of(m));
  py::array_t<T> out = out_arg<T>(out_obj, {x.shape(0), x.shape(1), x.shape(2)}, "the shape of discount", {&m, &x});
  const std::int64_t dates = x.shape(0), row = m.shape(0) * m.shape(1);
  const T* mp = m.data();
  const T* xp = x.data();
  T* yp = out.mutable_data();
  ensure_kokkos();
  {
    KernelCall call("discount");  // the arrays are held by this frame
    discount_on_device(mp, xp, yp, dates, row, params);
  }
  return std::move(out);
}

// The device path: CUDA arrays (__cuda_array_interface__) used in place; the
// result is `out` (a device array, written in place) or a new kmini.DeviceArray.
// No conversion on the device: both inputs (and out) of the dtype T.
template <class T>
py::object discount_on_device_arrays(const py::handle& mult_obj, const py::handle& disc_obj, const py::object& out_obj,
                                     const kmini::discount::ApplyParams& params) {
  const CudaArrayView m = cuda_array_view(mult_obj, "mult_by");
  const CudaArrayView x = cuda_array_view(disc_obj, "discount");
  for (const CudaArrayView* v : {&m, &x})
    if (v->typestr != typestr_of<T>())
      throw py::type_error(std::string(v == &m ? "mult_by" : "discount") + ": device dtype " + v->typestr +
                           ", expected " + typestr_of<T>() + " for both inputs (device arrays are not converted)");
  if (m.shape.size() != 2) throw py::value_error("mult_by: shape " + m.shape_string() + ", expected (ids, terms)");
  if (x.shape.size() != 3 || x.shape[1] != m.shape[0] || x.shape[2] != m.shape[1])
    throw py::value_error("discount: shape " + x.shape_string() + ", expected (dates, " + std::to_string(m.shape[0]) +
                          ", " + std::to_string(m.shape[1]) + ") to match mult_by " + m.shape_string());
  ensure_kokkos();
  py::object result;
  T* y = nullptr;
  if (out_obj.is_none()) {
    DeviceArray out(x.shape, typestr_of<T>());
    y = static_cast<T*>(out.data());
    result = py::cast(std::move(out));
  } else {
    if (!has_cuda_array_interface(out_obj))
      throw py::type_error("out: a numpy array with device inputs, expected a device array (or out=None)");
    const CudaArrayView o = cuda_array_view(out_obj, "out");
    if (o.typestr != typestr_of<T>())
      throw py::type_error("out: device dtype " + o.typestr + ", expected " + typestr_of<T>() +
                           " (out is written in place)");
    if (o.shape != x.shape)
      throw py::value_error("out: shape " + o.shape_string() + ", expected " + x.shape_string() +
                            " (the shape of discount)");
    if (o.readonly) throw py::value_error("out: a read-only device array (it is written in place)");
    for (const CudaArrayView* in : {&m, &x})
      if (in->data < o.data + o.bytes() && o.data < in->data + in->bytes())
        throw py::value_error("out: shares memory with an input");
    y = reinterpret_cast<T*>(o.data);
    result = out_obj;
  }
  const std::int64_t dates = x.shape[0], row = m.shape[0] * m.shape[1];
  {
    KernelCall call("discount");
    using namespace kmini::discount;
    synchronize_producers();
    const ApiExec exec;
    apply(exec, ApiRow<const T>(reinterpret_cast<const T*>(m.data), row),
          ApiRows<const T>(reinterpret_cast<const T*>(x.data), dates, row), ApiRows<T>(y, dates, row), params);
    exec.fence();
  }
  return result;
}

// float32 when both inputs are float32, else float64 (as numpy's multiply).
py::object discount(const py::object& mult_by, const py::object& discount, const py::object& out,
                    const py::object& options) {
  check_running("discount");
  const Options o(options, "discount", option_names(kArguments, {}));
  kmini::discount::ApplyParams params;
  using S = kmini::discount::ApplyParams::Stores;
  const std::string stores = declared_choice_arg(o["stores"], "stores", kmini::discount::declaration().key("stores"));
  params.stores = stores == "auto" ? S::Auto : stores == "regular" ? S::Regular : S::Streaming;
  if (params.stores == S::Streaming && !kmini::discount::streaming_stores_available())
    throw py::value_error("stores: 'streaming' is not in this build (a host build for a CPU with AVX)");
  if (has_cuda_array_interface(mult_by) || has_cuda_array_interface(discount) || has_cuda_array_interface(out)) {
    refuse_device_arrays_on_host({{"mult_by", mult_by}, {"discount", discount}, {"out", out}});
    const bool single =
        has_cuda_array_interface(mult_by) && cuda_array_view(mult_by, "mult_by").typestr == typestr_of<float>();
    return single ? discount_on_device_arrays<float>(mult_by, discount, out, params)
                  : discount_on_device_arrays<double>(mult_by, discount, out, params);
  }
  const py::array m = array_arg(mult_by, "mult_by"), x = array_arg(discount, "discount");
  // float32 in either byte order ('>f4' is swapped once by as_input).
  const auto float32 = [](const py::array& a) { return a.dtype().kind() == 'f' && a.itemsize() == 4; };
  const bool single = float32(m) && float32(x);
  return single ? discount_typed<float>(mult_by, discount, out, params)
                : discount_typed<double>(mult_by, discount, out, params);
}

}  // namespace

void bind_discount(py::module_& m) {
  m.def("_discount_arguments", [] { return declared_arguments(kmini::discount::declaration(), kArguments); });
  m.def("discount", &discount, py::arg("mult_by"), py::arg("discount"), py::arg("out"), py::arg("options"));
}

}  // namespace kmini::python
