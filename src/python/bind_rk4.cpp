// kmini._kmini.rk4: the coupled complex fields F and G integrated with RK4,
// delta = g * sum(F) over every element (of every rank of `comm`).
#include "bindings.hpp"
#include "convert.hpp"
#include "core/device_memory.hpp"
#include "core/format.hpp"
#include "cuda_array.hpp"
#include "rk4/rk4.hpp"
#include "rk4/rk4_api.hpp"
#include "runtime.hpp"

#include <Kokkos_Core.hpp>

#include <exception>
#include <limits>
#include <new>

namespace kmini::python {

namespace {

// The keyword arguments that are rk4's deck keys: their defaults, limits,
// options and help are the declaration's (rk4_declaration.cpp).
const std::vector<Argument> kArguments = {{"steps", "steps"},
                                          {"dt", "dt"},
                                          {"g", "g"},
                                          {"kerr", "kerr"},
                                          {"coupling", "coupling"},
                                          {"method", "method"},
                                          {"precision", "precision"},
                                          {"delta0", "delta0"}};

const DeckKey& key(const char* k) { return kmini::rk4::declaration().key(k); }

// delta[0..steps] of an integration, or the ValueError of a blow-up.
py::array delta_history(const kmini::rk4::IntegrateResult& r) {
  if (r.first_nonfinite_step >= 0)
    throw py::value_error("rk4: delta or the fields became non-finite at step " +
                          std::to_string(r.first_nonfinite_step) + " (dt too large for this coupling?)");
  py::array_t<std::complex<double>> delta(static_cast<py::ssize_t>(r.delta.size()));
  std::copy(r.delta.begin(), r.delta.end(), delta.mutable_data());
  return std::move(delta);
}

// A NaN or infinity in the initial fields is the caller's, not a blow-up of
// the integration: a ValueError naming the first such element.
void require_finite(const py::array& a, const char* name) {
  const py::module_ np = py::module_::import("numpy");
  if (np.attr("isfinite")(a).attr("all")().cast<bool>()) return;
  const py::tuple at = np.attr("unravel_index")(np.attr("argmin")(np.attr("isfinite")(a)), a.attr("shape"));
  std::string index;
  for (const py::handle i : at) index += (index.empty() ? "" : ", ") + std::to_string(i.cast<std::int64_t>());
  if (at.size() == 1) index += ",";
  throw py::value_error(std::string(name) + ": element (" + index + ") is " +
                        py::str(a.attr("__getitem__")(at)).cast<std::string>() + ", expected finite values");
}

// The memory a call needs, checked before anything is allocated: the delta
// history three times (on the device, its host copy, the returned array) and
// the fields (two complex<T> and G's two real parts).
void plan_memory(std::int64_t steps, std::int64_t count, std::size_t real_bytes) {
  const std::int64_t history =
      checked_bytes(steps + 1, 16, "rk4: steps=" + std::to_string(steps) + ": the delta history (steps + 1 values)");
  const std::int64_t fields = checked_bytes(count, static_cast<std::int64_t>(4 * real_bytes), "rk4: the fields");
  const double need = 3.0 * double(history) + double(fields);
  const double available = double(kmini::query_device_memory().available);
  if (need > available)
    memory_error(
        "rk4: steps=" + std::to_string(steps) + " keeps a delta history of " + kmini::format_bytes(double(history)) +
        " (16 bytes per step, held 3 times: " + kmini::format_bytes(need) + " with the fields), more than the " +
        kmini::format_bytes(available) + " available; nothing was allocated");
}

// An allocation that failed inside the kernels, as a MemoryError.
template <class F>
auto allocating(const char* what, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    memory_error(std::string("rk4: could not allocate ") + what);
  } catch (const std::runtime_error& e) {
    const std::string m = e.what();
    if (m.find("alloc") != std::string::npos)
      memory_error(std::string("rk4: could not allocate ") + what + ": " + first_line(m));
    throw;
  }
}

struct Args {
  kmini::rk4::IntegrateParams q;
  bool g_auto = false;
  bool single = false;
  bool on_device = false;
};

template <class T>
py::tuple rk4_typed(const py::handle& f0, const py::handle& g0, Args a, MPI_Comm comm, bool given) {
  py::array_t<std::complex<T>> F, G;
  std::exception_ptr failed;
  try {
    F = complex_copy<T>(f0, "F0");
    G = complex_copy<T>(g0, "G0");
    require_finite(F, "F0");
    require_finite(G, "G0");
    if (F.ndim() != G.ndim() || !std::equal(F.shape(), F.shape() + F.ndim(), G.shape()))
      throw py::value_error("G0: shape " + shape_of(G) + ", expected " + shape_of(F) + " (the shape of F0)");
    plan_memory(a.q.steps, F.size(), sizeof(T));
    ensure_kokkos();
  } catch (...) {
    failed = std::current_exception();
  }
  agree(comm, given, failed, "rk4");
  kmini::rk4::IntegrateParams q = a.q;
  Stop stop;
  q.interrupted = stop.check();  // between steps, every 0.1 s
  q.agree_on_setup_errors = given;
  const std::int64_t count = F.size();
  auto* fp = reinterpret_cast<Kokkos::complex<T>*>(F.mutable_data());
  auto* gp = reinterpret_cast<Kokkos::complex<T>*>(G.mutable_data());
  kmini::rk4::IntegrateResult r;
  {
    KernelCall call("rk4", comm, given);
    using namespace kmini::rk4;
    if (a.g_auto) {
      std::int64_t total = count;
      if (given) MPI_Allreduce(&count, &total, 1, MPI_INT64_T, MPI_SUM, comm);
      q.g = total > 0 ? 1.0 / double(total) : 0.0;
    }
    const ApiExec exec;
    // numpy aligns complex arrays to their component; Kokkos::complex<T> wants 2 * sizeof(T).
    const bool aligned = reinterpret_cast<std::uintptr_t>(fp) % alignof(Kokkos::complex<T>) == 0 &&
                         reinterpret_cast<std::uintptr_t>(gp) % alignof(Kokkos::complex<T>) == 0;
    r = allocating("the integrator's buffers", [&] {
      if (Kokkos::SpaceAccessibility<Kokkos::HostSpace, ApiMemory>::accessible && aligned)
        return integrate(exec, comm, ApiField<T>(fp, count), ApiField<T>(gp, count), q);
      Kokkos::View<Kokkos::complex<T>*, ApiMemory> df("kmini::python::F", count), dg("kmini::python::G", count);
      auto hf = Kokkos::create_mirror_view(df), hg = Kokkos::create_mirror_view(dg);
      for (std::int64_t i = 0; i < count; ++i) hf(i) = fp[i], hg(i) = gp[i];
      Kokkos::deep_copy(exec, df, hf);
      Kokkos::deep_copy(exec, dg, hg);
      auto res = integrate(exec, comm, df, dg, q);
      Kokkos::deep_copy(exec, hf, df);
      Kokkos::deep_copy(exec, hg, dg);
      exec.fence();
      for (std::int64_t i = 0; i < count; ++i) fp[i] = hf(i), gp[i] = hg(i);
      return res;
    });
    exec.fence();
  }
  stop.raise_if_stopped("rk4");
  if (r.interrupted)
    throw std::runtime_error("rk4: stopped at step " + std::to_string(r.steps_done) +
                             " because another rank was interrupted (Ctrl-C or its exit)");
  const py::array delta = delta_history(r);
  return py::make_tuple(F, G, delta);
}

// The device path: F0 and G0 as CUDA arrays of complex<T> (not converted),
// copied on the device into the results, which stay there (kmini.DeviceArray).
template <class T>
py::tuple rk4_on_device_arrays(const py::handle& f0, const py::handle& g0, Args a, MPI_Comm comm, bool given) {
  const std::string complex_type = typestr_of<std::complex<T>>();
  CudaArrayView F0, G0;
  std::exception_ptr failed;
  try {
    F0 = cuda_array_view(f0, "F0");
    G0 = cuda_array_view(g0, "G0");
    for (const CudaArrayView* v : {&F0, &G0})
      if (v->typestr != complex_type)
        throw py::type_error(std::string(v == &F0 ? "F0" : "G0") + ": device dtype " + v->typestr + ", expected " +
                             complex_type + " (device arrays are not converted)");
    if (G0.shape != F0.shape)
      throw py::value_error("G0: shape " + G0.shape_string() + ", expected " + F0.shape_string() +
                            " (the shape of F0)");
    plan_memory(a.q.steps, F0.size(), sizeof(T));
    ensure_kokkos();
  } catch (...) {
    failed = std::current_exception();
  }
  agree(comm, given, failed, "rk4");
  DeviceArray F(F0.shape, complex_type), G(G0.shape, complex_type);
  kmini::rk4::IntegrateParams q = a.q;
  Stop stop;
  q.interrupted = stop.check();
  q.agree_on_setup_errors = given;
  const std::int64_t count = F0.size();
  kmini::rk4::IntegrateResult r;
  {
    KernelCall call("rk4", comm, given);
    using namespace kmini::rk4;
    if (a.g_auto) {
      std::int64_t total = count;
      if (given) MPI_Allreduce(&count, &total, 1, MPI_INT64_T, MPI_SUM, comm);
      q.g = total > 0 ? 1.0 / double(total) : 0.0;
    }
    using Source = Kokkos::View<const Kokkos::complex<T>*, ApiMemory, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    synchronize_producers();
    const ApiExec exec;
    const ApiField<T> f(static_cast<Kokkos::complex<T>*>(F.data()), count);
    const ApiField<T> g(static_cast<Kokkos::complex<T>*>(G.data()), count);
    Kokkos::deep_copy(exec, f, Source(reinterpret_cast<const Kokkos::complex<T>*>(F0.data), count));
    Kokkos::deep_copy(exec, g, Source(reinterpret_cast<const Kokkos::complex<T>*>(G0.data), count));
    r = allocating("the integrator's buffers", [&] { return integrate(exec, comm, f, g, q); });
    exec.fence();
  }
  stop.raise_if_stopped("rk4");
  if (r.interrupted)
    throw std::runtime_error("rk4: stopped at step " + std::to_string(r.steps_done) +
                             " because another rank was interrupted (Ctrl-C or its exit)");
  const py::array delta = delta_history(r);
  return py::make_tuple(py::cast(std::move(F)), py::cast(std::move(G)), delta);
}

py::tuple rk4(const py::object& f0, const py::object& g0, const py::object& options, const py::object& comm_obj) {
  check_running("rk4");
  const Options o(options, "rk4", option_names(kArguments, {}));
  const py::object &g = o["g"], &precision = o["precision"];
  bool given = false;
  const MPI_Comm comm = comm_of(comm_obj, "rk4", &given);
  Args a;
  std::string p = "double";
  // With comm=, a rank that refuses its arguments here still meets the others
  // in agree(), so they raise instead of waiting for it.
  try {
    kmini::rk4::IntegrateParams& q = a.q;
    // Python's int: steps + 1 (the history's length) must fit as well.
    q.steps = integer_arg(o["steps"], "steps", static_cast<std::int64_t>(key("steps").rule.min),
                          std::numeric_limits<std::int64_t>::max() - 1);
    q.dt = declared_real_arg(o["dt"], "dt", key("dt"));
    if (py::isinstance<py::str>(g) && key("g").auto_word) {
      choice_arg(g, "g", {"auto"});
      a.g_auto = true;
    } else {
      q.g = declared_real_arg(g, "g", key("g"));
    }
    q.kerr = declared_real_arg(o["kerr"], "kerr", key("kerr"));
    q.per_stage = declared_choice_arg(o["coupling"], "coupling", key("coupling")) == "per_stage";
    const std::string m = declared_choice_arg(o["method"], "method", key("method"));
    using M = kmini::rk4::IntegrateParams::Method;
    q.method = m == "affine" ? M::Affine : m == "stages" ? M::Stages : M::Auto;
    if (q.method == M::Affine && q.kerr != 0)
      throw py::value_error(
          "method: got 'affine', expected 'auto' or 'stages' (kerr != 0 makes the model nonlinear; "
          "affine needs kerr = 0)");
    q.delta0 = complex_arg(o["delta0"], "delta0");
    if (!given) ensure_mpi("rk4");  // the integrator sums over MPI_COMM_SELF
    a.on_device = has_cuda_array_interface(f0) || has_cuda_array_interface(g0);
    if (a.on_device) refuse_device_arrays_on_host({{"F0", f0}, {"G0", g0}});
    if (precision.is_none() && a.on_device) {
      if (has_cuda_array_interface(f0) && cuda_array_view(f0, "F0").typestr == typestr_of<std::complex<float>>())
        p = "single";
    } else if (precision.is_none()) {
      const py::array arr = array_arg(f0, "F0");
      if (arr.dtype().kind() == 'c' && arr.itemsize() == 8) p = "single";
    } else {
      p = declared_choice_arg(precision, "precision", key("precision"));
    }
  } catch (...) {
    if (given) agree(comm, true, std::current_exception(), "rk4");
    throw;
  }
  if (given) {
    agree(comm, true, nullptr, "rk4");
    const kmini::rk4::IntegrateParams& q = a.q;
    agree_same(comm, {{"steps", q.steps},
                      {"dt", bits_of(q.dt)},
                      {"g", a.g_auto ? -1 : bits_of(q.g)},
                      {"kerr", bits_of(q.kerr)},
                      {"coupling", q.per_stage},
                      {"method", static_cast<std::int64_t>(q.method)},
                      {"delta0", bits_of(q.delta0.real())},
                      {"delta0", bits_of(q.delta0.imag())},
                      {"precision (F0's dtype when not given)", p == "single"},
                      {"F0 (a device array on some ranks only)", a.on_device}});
  }
  if (a.on_device)
    return p == "single" ? rk4_on_device_arrays<float>(f0, g0, a, comm, given)
                         : rk4_on_device_arrays<double>(f0, g0, a, comm, given);
  return p == "single" ? rk4_typed<float>(f0, g0, a, comm, given) : rk4_typed<double>(f0, g0, a, comm, given);
}

}  // namespace

void bind_rk4(py::module_& m) {
  m.def("_rk4_arguments", [] { return declared_arguments(kmini::rk4::declaration(), kArguments); });
  m.def("rk4", &rk4, py::arg("F0"), py::arg("G0"), py::arg("options"), py::arg("comm"));
}

}  // namespace kmini::python
