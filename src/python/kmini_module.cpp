// The Python front end: `import kmini`, numpy arrays in and out.
// It calls the kernels' library functions (discount/discount_api.hpp, ...)
// and compiles no kernel code of its own.
//
// Zero-copy: a C-contiguous, aligned, native-order array of the kernel's dtype
// is wrapped as an unmanaged View on host backends (its data pointer is the
// View's); other arrays whose values convert exactly (bool, integers up to
// 2^53, float32 to float64) are copied once; anything else is a TypeError.
// On device backends numpy arrays are copied to the device and back, and
// objects exposing __cuda_array_interface__ (CuPy, numba, PyTorch) are used in
// place, with results returned as kmini.DeviceArray (cuda_array.hpp).
#include "core/device_memory.hpp"
#include "core/errors.hpp"
#include "core/format.hpp"
#include "core/kokkos_compat.hpp"
#include "cuda_array.hpp"
#include "discount/discount_api.hpp"
#include "gram/gram_api.hpp"
#include "rk4/rk4_api.hpp"
#include "version.hpp"

#include <mpi.h>
#include <pybind11/complex.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace py = pybind11;

namespace {

bool g_we_initialized = false;
bool g_we_initialized_mpi = false;

// Kokkos on first use, with the usual KOKKOS_* variables, checked first as
// the CLI checks them (a malformed one is a ValueError, not an abort).
void ensure_kokkos() {
  if (Kokkos::is_initialized()) return;
  const kmini::compat::Getenv getenv = [](const char* name) -> const char* { return std::getenv(name); };
  try {
    kmini::compat::check_before_initialize({}, getenv);
  } catch (const kmini::UsageError& e) {
    throw py::value_error(e.what());
  }
  Kokkos::initialize();
  g_we_initialized = true;
}

// MPI for the kernels that sum over a communicator (rk4): each Python process
// computes on its own (MPI_COMM_SELF), started here unless mpi4py or another
// library did.
void ensure_mpi() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) return;
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  g_we_initialized_mpi = true;
}

void finalize_kokkos() {
  if (g_we_initialized && Kokkos::is_initialized()) Kokkos::finalize();
  g_we_initialized = false;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (g_we_initialized_mpi && !finalized) MPI_Finalize();
  g_we_initialized_mpi = false;
}

std::string shape_of(const py::array& a) {
  return kmini::python::shape_text(std::vector<py::ssize_t>(a.shape(), a.shape() + a.ndim()));
}

// numpy's flags by name ("c_contiguous", "aligned"), as Python reads them.
bool flag(const py::array& a, const char* name) { return a.attr("flags").attr(name).cast<bool>(); }

std::string dtype_of(const py::array& a) { return py::str(a.dtype()).cast<std::string>(); }

// Whether numpy converts `a` to T (or, to_complex, to complex<T>) exactly:
// bool; floats (and complex, to complex) not narrowed; integers of at most 4
// (float64) or 2 (float32) bytes; wider integers when every value is within
// 2^53 (2^24), checked.
template <class T>
bool converts_exactly(const py::array& a, bool to_complex = false) {
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
  using namespace kmini::python;
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
    py::gil_scoped_release release;
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
py::object discount(const py::handle& mult_by, const py::handle& discount, const py::object& out,
                    const std::string& stores) {
  kmini::discount::ApplyParams params;
  using S = kmini::discount::ApplyParams::Stores;
  if (stores == "auto") params.stores = S::Auto;
  else if (stores == "regular") params.stores = S::Regular;
  else if (stores == "streaming") params.stores = S::Streaming;
  else throw py::value_error("stores: got '" + stores + "', expected 'auto', 'regular' or 'streaming'");
  if (params.stores == S::Streaming && !kmini::discount::streaming_stores_available())
    throw py::value_error("stores: 'streaming' is not in this build (a host build for a CPU with AVX)");
  using kmini::python::has_cuda_array_interface;
  if (has_cuda_array_interface(mult_by) || has_cuda_array_interface(discount) || has_cuda_array_interface(out)) {
    kmini::python::refuse_device_arrays_on_host({{"mult_by", mult_by}, {"discount", discount}, {"out", out}});
    const bool single =
        has_cuda_array_interface(mult_by) &&
        kmini::python::cuda_array_view(mult_by, "mult_by").typestr == kmini::python::typestr_of<float>();
    return single ? discount_on_device_arrays<float>(mult_by, discount, out, params)
                  : discount_on_device_arrays<double>(mult_by, discount, out, params);
  }
  const py::array m = py::array::ensure(mult_by), x = py::array::ensure(discount);
  const bool single = m && x && py::isinstance<py::array_t<float>>(m) && py::isinstance<py::array_t<float>>(x);
  return single ? discount_typed<float>(mult_by, discount, out, params)
                : discount_typed<double>(mult_by, discount, out, params);
}

// Ctrl-C while a kernel runs without the GIL: the kernel calls check()
// between steps or slices, which takes the GIL to look; afterwards
// raise_if_interrupted() raises the KeyboardInterrupt PyErr_CheckSignals set.
struct CtrlC {
  bool interrupted = false;
  std::function<bool()> check() {
    return [this] {
      py::gil_scoped_acquire gil;
      interrupted = PyErr_CheckSignals() != 0;
      return interrupted;
    };
  }
  void raise_if_interrupted() const {
    if (interrupted) throw py::error_already_set();
  }
};

// ------------------------------------------------------------------ rk4 ----

// delta[0..steps] of an integration, or the ValueError of a blow-up.
py::array delta_history(const kmini::rk4::IntegrateResult& r) {
  if (r.first_nonfinite_step >= 0)
    throw py::value_error("rk4: delta or the fields became non-finite at step " +
                          std::to_string(r.first_nonfinite_step) + " (dt too large for this coupling?)");
  py::array_t<std::complex<double>> delta(static_cast<py::ssize_t>(r.delta.size()));
  std::copy(r.delta.begin(), r.delta.end(), delta.mutable_data());
  return std::move(delta);
}

template <class T>
using HostField =
    Kokkos::View<Kokkos::complex<T>*, Kokkos::LayoutRight, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

// A new C-contiguous complex array holding `obj`'s values (the result: the
// caller's array is never changed); a TypeError when they do not convert exactly.
template <class T>
py::array_t<std::complex<T>> complex_copy(const py::handle& obj, const char* name) {
  py::array a = py::array::ensure(obj);
  if (!a) throw py::type_error(std::string(name) + ": expected a numpy array (or something numpy converts)");
  if (!converts_exactly<T>(a, true))
    throw py::type_error(std::string(name) + ": dtype " + dtype_of(a) + " does not convert exactly to " +
                         py::str(py::dtype::of<std::complex<T>>()).cast<std::string>());
  py::array_t<std::complex<T>> out(std::vector<py::ssize_t>(a.shape(), a.shape() + a.ndim()));
  py::module_::import("numpy").attr("copyto")(out, a);
  return out;
}

template <class T>
py::tuple rk4_typed(const py::handle& f0, const py::handle& g0, const kmini::rk4::IntegrateParams& base) {
  auto F = complex_copy<T>(f0, "F0");
  auto G = complex_copy<T>(g0, "G0");
  if (F.ndim() != G.ndim() || !std::equal(F.shape(), F.shape() + F.ndim(), G.shape()))
    throw py::value_error("G0: shape " + shape_of(G) + ", expected " + shape_of(F) + " (the shape of F0)");
  ensure_mpi();
  ensure_kokkos();
  kmini::rk4::IntegrateParams q = base;
  CtrlC ctrl_c;
  q.interrupted = ctrl_c.check();  // between steps, every 0.1 s
  const std::int64_t count = F.size();
  auto* fp = reinterpret_cast<Kokkos::complex<T>*>(F.mutable_data());
  auto* gp = reinterpret_cast<Kokkos::complex<T>*>(G.mutable_data());
  kmini::rk4::IntegrateResult r;
  {
    py::gil_scoped_release release;
    using namespace kmini::rk4;
    const ApiExec exec;
    // numpy aligns complex arrays to their component; Kokkos::complex<T> wants 2 * sizeof(T).
    const bool aligned = reinterpret_cast<std::uintptr_t>(fp) % alignof(Kokkos::complex<T>) == 0 &&
                         reinterpret_cast<std::uintptr_t>(gp) % alignof(Kokkos::complex<T>) == 0;
    if (Kokkos::SpaceAccessibility<Kokkos::HostSpace, ApiMemory>::accessible && aligned) {
      r = integrate(exec, MPI_COMM_SELF, ApiField<T>(fp, count), ApiField<T>(gp, count), q);
    } else {
      Kokkos::View<Kokkos::complex<T>*, ApiMemory> df("kmini::python::F", count), dg("kmini::python::G", count);
      auto hf = Kokkos::create_mirror_view(df), hg = Kokkos::create_mirror_view(dg);
      for (std::int64_t i = 0; i < count; ++i) hf(i) = fp[i], hg(i) = gp[i];
      Kokkos::deep_copy(exec, df, hf);
      Kokkos::deep_copy(exec, dg, hg);
      r = integrate(exec, MPI_COMM_SELF, df, dg, q);
      Kokkos::deep_copy(exec, hf, df);
      Kokkos::deep_copy(exec, hg, dg);
      exec.fence();
      for (std::int64_t i = 0; i < count; ++i) fp[i] = hf(i), gp[i] = hg(i);
    }
    exec.fence();
  }
  ctrl_c.raise_if_interrupted();
  const py::array delta = delta_history(r);
  return py::make_tuple(F, G, delta);
}

// The device path: F0 and G0 as CUDA arrays of complex<T> (not converted),
// copied on the device into the results, which stay there (kmini.DeviceArray):
// the users' rk4 loop without a host round trip between calls.
template <class T>
py::tuple rk4_on_device_arrays(const py::handle& f0, const py::handle& g0, const kmini::rk4::IntegrateParams& base) {
  using namespace kmini::python;
  const std::string complex_type = typestr_of<std::complex<T>>();
  const CudaArrayView F0 = cuda_array_view(f0, "F0"), G0 = cuda_array_view(g0, "G0");
  for (const CudaArrayView* v : {&F0, &G0})
    if (v->typestr != complex_type)
      throw py::type_error(std::string(v == &F0 ? "F0" : "G0") + ": device dtype " + v->typestr + ", expected " +
                           complex_type + " (device arrays are not converted)");
  if (G0.shape != F0.shape)
    throw py::value_error("G0: shape " + G0.shape_string() + ", expected " + F0.shape_string() + " (the shape of F0)");
  ensure_mpi();
  ensure_kokkos();
  DeviceArray F(F0.shape, complex_type), G(G0.shape, complex_type);
  kmini::rk4::IntegrateParams q = base;
  CtrlC ctrl_c;
  q.interrupted = ctrl_c.check();  // between steps, every 0.1 s
  const std::int64_t count = F0.size();
  kmini::rk4::IntegrateResult r;
  {
    py::gil_scoped_release release;
    using namespace kmini::rk4;
    using Source = Kokkos::View<const Kokkos::complex<T>*, ApiMemory, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    synchronize_producers();
    const ApiExec exec;
    const ApiField<T> f(static_cast<Kokkos::complex<T>*>(F.data()), count);
    const ApiField<T> g(static_cast<Kokkos::complex<T>*>(G.data()), count);
    Kokkos::deep_copy(exec, f, Source(reinterpret_cast<const Kokkos::complex<T>*>(F0.data), count));
    Kokkos::deep_copy(exec, g, Source(reinterpret_cast<const Kokkos::complex<T>*>(G0.data), count));
    r = integrate(exec, MPI_COMM_SELF, f, g, q);
    exec.fence();
  }
  ctrl_c.raise_if_interrupted();
  const py::array delta = delta_history(r);
  return py::make_tuple(py::cast(std::move(F)), py::cast(std::move(G)), delta);
}

double finite_number(const py::handle& v, const char* name, bool positive) {
  double x = 0;
  try {
    x = py::cast<double>(v);
  } catch (const py::cast_error&) {
    throw py::type_error(std::string(name) + ": expected a number");
  }
  if (!std::isfinite(x) || (positive && !(x > 0)))
    throw py::value_error(std::string(name) + ": got " + py::repr(v).cast<std::string>() +
                          ", expected a finite number" + (positive ? " > 0" : ""));
  return x;
}

py::tuple rk4(const py::handle& f0, const py::handle& g0, std::int64_t steps, const py::handle& dt, const py::handle& g,
              const py::handle& kerr, const std::string& coupling, const std::string& method,
              const py::object& precision, const std::complex<double> delta0) {
  kmini::rk4::IntegrateParams q;
  if (!std::isfinite(delta0.real()) || !std::isfinite(delta0.imag()))
    throw py::value_error("delta0: expected a finite complex number");
  q.delta0 = delta0;
  if (steps < 0) throw py::value_error("steps: got " + std::to_string(steps) + ", expected an integer >= 0");
  q.steps = steps;
  q.dt = finite_number(dt, "dt", true);
  q.g = finite_number(g, "g", false);
  q.kerr = finite_number(kerr, "kerr", false);
  if (coupling != "per_step" && coupling != "per_stage")
    throw py::value_error("coupling: got '" + coupling + "', expected 'per_step' or 'per_stage'");
  q.per_stage = coupling == "per_stage";
  using M = kmini::rk4::IntegrateParams::Method;
  if (method == "auto") q.method = M::Auto;
  else if (method == "affine") q.method = M::Affine;
  else if (method == "stages") q.method = M::Stages;
  else throw py::value_error("method: got '" + method + "', expected 'auto', 'affine' or 'stages'");
  if (q.method == M::Affine && q.kerr != 0)
    throw py::value_error("method: 'affine' needs a linear model (kerr = 0); use 'stages' or 'auto'");
  std::string p = "double";
  const bool on_device = kmini::python::has_cuda_array_interface(f0) || kmini::python::has_cuda_array_interface(g0);
  if (on_device) kmini::python::refuse_device_arrays_on_host({{"F0", f0}, {"G0", g0}});
  if (precision.is_none() && on_device) {
    if (kmini::python::has_cuda_array_interface(f0) &&
        kmini::python::cuda_array_view(f0, "F0").typestr == kmini::python::typestr_of<std::complex<float>>())
      p = "single";
  } else if (precision.is_none()) {
    const py::array a = py::array::ensure(f0);
    if (a && a.dtype().kind() == 'c' && a.itemsize() == 8) p = "single";
  } else {
    p = py::str(precision).cast<std::string>();
    if (p != "single" && p != "double")
      throw py::value_error("precision: got '" + p + "', expected 'single' or 'double'");
  }
  if (on_device)
    return p == "single" ? rk4_on_device_arrays<float>(f0, g0, q) : rk4_on_device_arrays<double>(f0, g0, q);
  return p == "single" ? rk4_typed<float>(f0, g0, q) : rk4_typed<double>(f0, g0, q);
}

// ----------------------------------------------------------------- gram ----

// One 0/1 matrix argument: bool/uint8 elements, np.packbits bytes (uint8 with
// cols=) or uint64 words (with cols=), held C-contiguous in `keep`; or the
// same as a device array (__cuda_array_interface__), read in place.
struct GramInput {
  py::object keep;
  kmini::gram::ApiMatrix m;
};

// The format `cols` and the dtype's kind and size give, and the row length it
// implies; a TypeError naming `name` for other dtypes.
kmini::gram::ApiMatrix gram_format(const char* name, const std::string& dtype, char kind, py::ssize_t itemsize,
                                   py::ssize_t rows, py::ssize_t width, const py::object& cols_obj) {
  using Format = kmini::gram::ApiMatrix::Format;
  kmini::gram::ApiMatrix m;
  m.rows = rows;
  if (cols_obj.is_none()) {
    m.format = Format::Unpacked;
    m.cols = width;
    return m;
  }
  const std::int64_t cols = py::cast<std::int64_t>(cols_obj);
  if (cols < 0) throw py::value_error("cols: got " + std::to_string(cols) + ", expected an integer >= 0");
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

// The library's check of the values (where they are), as the CLI words it.
void check_gram_values(const char* name, const kmini::gram::ApiMatrix& m) {
  const kmini::gram::BadValue bad = kmini::gram::first_bad_value(kmini::gram::ApiExec(), m);
  if (bad.row < 0) return;
  if (m.format == kmini::gram::ApiMatrix::Format::Unpacked)
    throw py::value_error(std::string(name) + ": element (" + std::to_string(bad.row) + ", " + std::to_string(bad.col) +
                          ") is " + std::to_string(bad.value) + ", expected 0 or 1");
  const bool words = m.format == kmini::gram::ApiMatrix::Format::Words;
  throw py::value_error(std::string(name) + ": bits set past cols=" + std::to_string(m.cols) + " in the last " +
                        (words ? "word" : "byte") + " of row " + std::to_string(bad.row) + ", expected zeros");
}

GramInput gram_device_input(const py::handle& obj, const char* name, const py::object& cols_obj) {
  const kmini::python::CudaArrayView v = kmini::python::cuda_array_view(obj, name);
  if (v.shape.size() != 2)
    throw py::value_error(std::string(name) + ": shape " + v.shape_string() + ", expected (rows, cols)");
  const py::dtype dt(v.typestr);
  const char kind = dt.kind();
  if (cols_obj.is_none() && !(kind == 'b' || (kind == 'u' && dt.itemsize() == 1)))
    throw py::type_error(std::string(name) + ": device dtype " + v.typestr +
                         ", expected 0/1 values as bool or uint8 (or np.packbits bytes / uint64 words with cols=)");
  GramInput in;
  in.m = gram_format(name, v.typestr, kind, dt.itemsize(), v.shape[0], v.shape[1], cols_obj);
  in.m.data = reinterpret_cast<const void*>(v.data);
  in.m.on_device = true;
  in.keep = v.owner;
  kmini::python::synchronize_producers();
  check_gram_values(name, in.m);
  return in;
}

GramInput gram_input(const py::handle& obj, const char* name, const py::object& cols_obj) {
  if (kmini::python::has_cuda_array_interface(obj)) return gram_device_input(obj, name, cols_obj);
  const py::module_ np = py::module_::import("numpy");
  py::array a = py::array::ensure(obj);
  if (!a) throw py::type_error(std::string(name) + ": expected a numpy array (or something numpy converts)");
  if (a.ndim() != 2) throw py::value_error(std::string(name) + ": shape " + shape_of(a) + ", expected (rows, cols)");
  const char kind = a.dtype().kind();
  GramInput in;
  in.m = gram_format(name, dtype_of(a), kind, a.itemsize(), a.shape(0), a.shape(1), cols_obj);
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
                              ") is " + py::repr(a.attr("__getitem__")(py::make_tuple(i, j))).cast<std::string>() +
                              ", expected 0 or 1");
      }
    }
    in.keep = np.attr("ascontiguousarray")(a, "uint8");
  } else {
    in.keep = np.attr("ascontiguousarray")(a);
  }
  in.m.data = in.keep.cast<py::array>().data();
  check_gram_values(name, in.m);  // bytes: any value but 0 and 1; packed: bits past cols
  return in;
}

// A whole number >= lo (and <= hi) for `name`; a TypeError/ValueError naming it.
std::int64_t whole_number(const py::handle& v, const char* name, std::int64_t lo, std::int64_t hi) {
  if (py::isinstance<py::bool_>(v)) throw py::type_error(std::string(name) + ": expected an integer");
  std::int64_t x = 0;
  try {
    x = py::cast<std::int64_t>(py::module_::import("operator").attr("index")(v));  // ints and numpy integers
  } catch (const py::error_already_set&) {
    throw py::type_error(std::string(name) + ": expected an integer");
  } catch (const py::cast_error&) {  // beyond int64
    throw py::type_error(std::string(name) + ": expected an integer");
  }
  if (x < lo || x > hi)
    throw py::value_error(std::string(name) + ": got " + std::to_string(x) + ", expected an integer in [" +
                          std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return x;
}

// The structured dtype of the CLI's .npy records (gram_sparse.cpp), little-endian.
py::dtype record_dtype(bool pairs, kmini::gram::Similarity s) {
  const char* value = s == kmini::gram::Similarity::Counts ? "<i4" : "<f4";
  py::list fields;
  if (pairs) fields.append(py::make_tuple("i", "<i8"));
  fields.append(py::make_tuple("j", "<i8"));
  fields.append(py::make_tuple("value", value));
  return py::dtype::from_args(fields);
}

// `bytes` (whole records) as a new numpy array of `dtype` and `shape`.
py::array records_array(const std::vector<char>& bytes, const py::dtype& dtype, std::vector<py::ssize_t> shape) {
  py::array out(dtype, shape);
  if (!bytes.empty()) std::memcpy(out.mutable_data(), bytes.data(), bytes.size());
  return out;
}

py::object gram(const py::handle& a_obj, const py::object& b_obj, const py::object& cols, const std::string& similarity,
                const py::object& top_k, const py::object& pairs_min, const py::object& count_at_least, bool dense,
                const std::string& triangle, const py::object& budget_obj, const py::object& slice_rows) {
  using kmini::gram::Similarity;
  kmini::gram::ComputeParams p;
  bool known = false;
  for (Similarity k : {Similarity::Counts, Similarity::Jaccard, Similarity::Dice, Similarity::Cosine})
    if (similarity == kmini::gram::similarity_name(k)) p.similarity = k, known = true;
  if (!known)
    throw py::value_error("similarity: got '" + similarity + "', expected 'counts', 'jaccard', 'dice' or 'cosine'");
  if (triangle != "full" && triangle != "upper")
    throw py::value_error("triangle: got '" + triangle + "', expected 'full' or 'upper'");
  p.dense = dense;
  p.upper = triangle == "upper";
  const GramInput a = gram_input(a_obj, "A", cols);
  std::optional<GramInput> b;
  if (!b_obj.is_none()) {
    b = gram_input(b_obj, "B", cols);
    if (b->m.cols != a.m.cols)
      throw py::value_error("B: " + std::to_string(b->m.cols) + " columns, expected " + std::to_string(a.m.cols) +
                            " (the columns of A)");
    if (p.upper) throw py::value_error("triangle: 'upper' needs one input (A B^T has no symmetry), expected 'full'");
  }
  const std::int64_t rows_b = b ? b->m.rows : a.m.rows;
  if (!top_k.is_none()) p.top_k = whole_number(top_k, "top_k", 1, std::max<std::int64_t>(1, rows_b - (b ? 0 : 1)));
  if (!pairs_min.is_none()) {
    p.pairs = true;
    p.pairs_min = finite_number(pairs_min, "pairs_min", false);
    if (p.pairs_min < 0)
      throw py::value_error("pairs_min: got " + py::repr(pairs_min).cast<std::string>() + ", expected a number >= 0");
  }
  if (!count_at_least.is_none()) {
    if (py::isinstance<py::str>(count_at_least) || !py::hasattr(count_at_least, "__iter__"))
      throw py::type_error("count_at_least: expected a sequence of numbers >= 0");
    for (const py::handle x : count_at_least) {
      const double v = finite_number(x, "count_at_least", false);
      if (v < 0) throw py::value_error("count_at_least: got " + py::repr(x).cast<std::string>() + ", expected >= 0");
      p.count_at_least.push_back(v);
    }
    if (p.count_at_least.size() > static_cast<std::size_t>(kmini::gram::kMaxCountThresholds))
      throw py::value_error("count_at_least: " + std::to_string(p.count_at_least.size()) +
                            " thresholds, expected at most " + std::to_string(kmini::gram::kMaxCountThresholds));
  }
  if (!slice_rows.is_none()) p.slice_rows = whole_number(slice_rows, "slice_rows", 1, INT64_MAX);
  ensure_mpi();
  ensure_kokkos();
  double budget = 0;
  if (budget_obj.is_none()) {
    budget = 0.5 * double(kmini::device_memory_per_rank(MPI_COMM_SELF).per_rank);  // the CLI's auto
  } else {
    budget = finite_number(budget_obj, "memory_budget", true);
  }
  // Memory as in the CLI: dense C only when asked for and within the budget;
  // else slices of as many rows as the budget allows (bisection: the bytes
  // grow with the slice height), so a top-k of 10^5 rows never builds C.
  const kmini::gram::ApiMatrix* bm = b ? &b->m : nullptr;
  const double dense_bytes = 4.0 * double(kmini::gram::dense_elements(a.m, bm, p));
  const auto need = [&](std::int64_t h) {
    kmini::gram::ComputeParams q = p;
    q.slice_rows = h;
    return dense_bytes + double(kmini::gram::compute_device_bytes(a.m, bm, q));
  };
  if (p.slice_rows == 0 && a.m.rows > 0 && need(a.m.rows) > budget) {
    std::int64_t lo = 1, hi = a.m.rows;  // need(hi) > budget
    if (need(lo) > budget) {
      const std::string what = p.dense ? "dense C of " + std::to_string(a.m.rows) + " x " + std::to_string(rows_b) +
                                             (p.similarity == Similarity::Counts ? " int32 (" : " float32 (") +
                                             kmini::format_bytes(dense_bytes) + ") and the packed inputs need "
                                       : "the packed inputs and a slice of one row need ";
      PyErr_SetString(PyExc_MemoryError,
                      ("gram: " + what + kmini::format_bytes(need(lo)) + ", more than memory_budget " +
                       kmini::format_bytes(budget) + "; nothing was allocated" +
                       (p.dense ? " (dense=False computes in slices)" : ""))
                          .c_str());
      throw py::error_already_set();
    }
    while (hi - lo > 1) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      (need(mid) <= budget ? lo : hi) = mid;
    }
    p.slice_rows = lo;
  }
  const std::int64_t elements = kmini::gram::dense_elements(a.m, bm, p);
  py::object C = py::none();
  void* dense_out = nullptr;
  if (p.dense) {
    const std::vector<py::ssize_t> shape =
        p.upper ? std::vector<py::ssize_t>{elements} : std::vector<py::ssize_t>{a.m.rows, rows_b};
    const bool counts = p.similarity == Similarity::Counts;
    if (a.m.on_device || (b && b->m.on_device)) {
      // Device inputs: C stays on the device too (kmini.DeviceArray, which
      // cupy.asarray takes without a copy), written there slice by slice.
      using namespace kmini::python;
      DeviceArray d(shape, counts ? typestr_of<std::int32_t>() : typestr_of<float>());
      dense_out = d.data();
      p.dense_on_device = true;
      C = py::cast(std::move(d));
    } else {
      py::array h = counts ? py::array(py::array_t<std::int32_t>(shape)) : py::array(py::array_t<float>(shape));
      dense_out = h.mutable_data();
      C = h;
    }
  }
  CtrlC ctrl_c;
  p.interrupted = ctrl_c.check();  // between slices
  kmini::gram::ComputeResult r;
  {
    py::gil_scoped_release release;
    r = kmini::gram::compute(kmini::gram::ApiExec(), a.m, bm, p, dense_out);
  }
  ctrl_c.raise_if_interrupted();
  py::object ns = py::module_::import("types").attr("SimpleNamespace")();
  ns.attr("C") = C;
  ns.attr("top_k") = p.top_k > 0 ? py::object(records_array(r.top_k, record_dtype(false, p.similarity),
                                                            {a.m.rows, static_cast<py::ssize_t>(p.top_k)}))
                                 : py::object(py::none());
  ns.attr("pairs") = p.pairs ? py::object(records_array(r.pairs, record_dtype(true, p.similarity), {r.pair_count}))
                             : py::object(py::none());
  ns.attr("counts") =
      p.count_at_least.empty()
          ? py::object(py::none())
          : py::object(py::array_t<std::int64_t>(static_cast<py::ssize_t>(r.counts.size()), r.counts.data()));
  ns.attr("row_counts") = py::array_t<std::int32_t>(static_cast<py::ssize_t>(r.row_counts.size()), r.row_counts.data());
  ns.attr("slices") = r.slices;
  return ns;
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
  d["device_arrays"] = !kmini::python::kKernelsOnHost;  // __cuda_array_interface__ in and out
  return d;
}

}  // namespace

PYBIND11_MODULE(kmini, m) {
  m.doc() = "kmini's kernels from Python: numpy arrays in and out (see docs/python.md)";
  kmini::python::register_device_array(m);
  m.def("info", &info, "Kokkos version, execution and memory space of this build (initialises Kokkos).");
  m.def("discount", &discount, py::arg("mult_by"), py::arg("discount"), py::kw_only(), py::arg("out") = py::none(),
        py::arg("stores") = "auto",
        "cv[d, i, n] = mult_by[i, n] * discount[d, i, n]; fills `out` in place when given.\n"
        "stores: as the deck's discount.stores (auto: streaming stores when cv is larger than the last-level cache).");
  m.def("rk4", &rk4, py::arg("F0"), py::arg("G0"), py::kw_only(), py::arg("steps"), py::arg("dt"), py::arg("g"),
        py::arg("kerr") = 0.0, py::arg("coupling") = "per_step", py::arg("method") = "auto",
        py::arg("precision") = py::none(), py::arg("delta0") = std::complex<double>(0, 0),
        "Integrates dF/dt = -2iF - i delta (2G - 1) - i kerr |F|^2 F, dG/dt = -i (conj(delta) F - delta conj(F)),\n"
        "delta = g sum(F), with RK4 for `steps` steps of `dt`; returns (F, G, delta[0..steps]).\n"
        "coupling: per_step (delta frozen over a step, delta[0] = delta0) or per_stage; precision: single or\n"
        "double (default: from F0's dtype). F0 and G0 are not changed.");
  m.def("gram", &gram, py::arg("A"), py::arg("B") = py::none(), py::kw_only(), py::arg("cols") = py::none(),
        py::arg("similarity") = "counts", py::arg("top_k") = py::none(), py::arg("pairs_min") = py::none(),
        py::arg("count_at_least") = py::none(), py::arg("dense") = true, py::arg("triangle") = "full",
        py::arg("memory_budget") = py::none(), py::arg("slice_rows") = py::none(),
        "C = A A^T (or A B^T) of a 0/1 matrix: C[i, j] = the columns where rows i and j are both 1, or their\n"
        "similarity (jaccard, dice, cosine; float32). A: bool/uint8 0/1 elements, or np.packbits(A, axis=1)\n"
        "bytes / uint64 words with cols=. Returns an object with C (dense=True; triangle='upper': the packed\n"
        "upper triangle), top_k (rows x k records j, value: the k best partners of each row of A), pairs\n"
        "(records i, j, value >= pairs_min; i < j with one input), counts (pairs >= each count_at_least\n"
        "threshold) and row_counts (ones per row of A), as the CLI writes them. Computed in slices of\n"
        "slice_rows rows (default: as many as memory_budget allows; bytes, default half the memory this\n"
        "process may use); a dense C beyond the budget is a MemoryError before anything is allocated.");
  m.def("_input_pointer", &input_pointer, py::arg("array"), py::arg("dtype"),
        "For tests: the data pointer a kernel would read for `array` as `dtype` (float64, float32).");
  m.def("_finalize", &finalize_kokkos, "Finalises Kokkos (registered with atexit).");
  py::module_::import("atexit").attr("register")(m.attr("_finalize"));
}
