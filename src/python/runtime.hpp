#pragma once
// The module's runtime: when Kokkos and MPI start and end, which calls may run
// at once, Ctrl-C, forks and the interpreter's exit.
//
// Threads: the kernels of one process run one call at a time. Kokkos' host
// execution spaces keep one set of reduction and scratch buffers per instance,
// and the kernels use the default instance, so two calls at once would share
// them; every call therefore converts its arguments (GIL held), then releases
// the GIL and waits for the kernel lock (KernelCall), and runs alone. Threads
// that wait hold no GIL, so Python code keeps running meanwhile.
//
// Lifetimes: Kokkos starts at the first call and ends in the atexit handler
// _finalize (which first stops a call still running in another thread at its
// next step or slice, then waits for it); afterwards every call is a
// RuntimeError. MPI starts at import when the process was started by an MPI
// launcher (as mpi4py's import does), else at the first call that needs it;
// MPI is finalised after the interpreter (Py_AtExit, as mpi4py does), only by
// the process that started it (never in a forked child, where it would hang).
// Forks: a child of a process whose kernels run threads (OpenMP) or a device
// refuses every call, and does not end that Kokkos (see check_running).
#include "core/collective.hpp"

#include <mpi.h>
#include <pybind11/pybind11.h>

#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace kmini::python {

namespace py = pybind11;

// At import: MPI when a launcher started this process; the fork handlers.
void start_runtime();
// Kokkos, started once (GIL held); a ValueError for malformed KOKKOS_* variables.
void ensure_kokkos();
// MPI for a call that needs it (GIL held): started when nobody has; a
// RuntimeError where it cannot be used (finalised, or a forked child of the
// process that started it).
void ensure_mpi(const char* function);
// A RuntimeError when kmini has shut down, or in a forked child whose
// kernels cannot run (OpenMP or device builds, Kokkos started in the parent).
void check_running(const char* function);
// kmini._finalize (GIL held): ends Kokkos; later calls are a RuntimeError.
void finalize();
// The atexit handler: finalize(), knowing that the interpreter is exiting.
void finalize_at_exit();
// Whether this process was started by an MPI launcher (mpirun, srun, ...).
bool launched_by_mpi();

// `comm` (an mpi4py communicator, or None) as an MPI_Comm; None: MPI_COMM_SELF
// with `*given` false. A TypeError naming the argument for anything else.
MPI_Comm comm_of(const py::object& comm, const char* function, bool* given);

// Every rank of `comm` agrees whether a call goes ahead (given: comm= was
// passed, else `failed` is rethrown alone): a rank whose arguments were
// refused raises its own error, the others a RuntimeError naming it, so no
// rank waits in a collective the others never reach.
void agree(MPI_Comm comm, bool given, const std::exception_ptr& failed, const char* function);

// Collective, after agree: core's agree_same with the GIL released; a
// ValueError on every rank naming the first argument that differs.
void agree_same(MPI_Comm comm, const std::vector<std::pair<std::string, std::int64_t>>& fields);
using kmini::bits_of;

// A kernel call: releases the GIL, then waits for the kernel lock (see above).
// Construct it after the arguments are converted; Python objects must not be
// touched while it lives.
//
// A collective call (comm= over two ranks or more) takes the lock on every
// rank of `comm` together: a rank that held it while its collectives waited
// for a rank whose lock another thread's call over another communicator
// holds would wait for ever (two threads per rank, one communicator each,
// taking the locks in different orders). Each attempt is a try_lock and a MIN
// over the ranks; where any rank failed, every rank lets go and tries again
// after a random pause, so no rank ever holds the lock while it waits for one.
class KernelCall {
 public:
  explicit KernelCall(const char* function, MPI_Comm comm = MPI_COMM_SELF, bool collective = false);
  // At the interpreter's exit a daemon thread must not take the GIL back (the
  // interpreter would end the thread inside this destructor): it waits there
  // for the process to end.
  ~KernelCall();
  KernelCall(const KernelCall&) = delete;
  KernelCall& operator=(const KernelCall&) = delete;

 private:
  void lock_together(const char* function, MPI_Comm comm);
  py::gil_scoped_release release_;  // declared first: the lock is released before the GIL is taken back
  std::unique_lock<std::mutex> lock_;
};

// Ctrl-C and shutdown while a kernel runs without the GIL: the kernel calls
// check() between steps or slices; it stops there when the interpreter is
// exiting (no GIL is taken then) or when PyErr_CheckSignals reports a signal
// (KeyboardInterrupt). raise_if_stopped() raises what stopped it.
class Stop {
 public:
  std::function<bool()> check();
  void raise_if_stopped(const char* function) const;

 private:
  std::shared_ptr<int> why_ = std::make_shared<int>(0);  // 0 running, 1 signal, 2 shutdown
};

}  // namespace kmini::python
