#include "runtime.hpp"

#include "core/errors.hpp"
#include "core/kokkos_compat.hpp"

#include <pthread.h>
#include <unistd.h>
#include <Kokkos_Core.hpp>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <type_traits>

namespace kmini::python {

namespace {

std::mutex* g_kernel_lock = new std::mutex;  // replaced in a forked child (see after_fork_in_child)
std::atomic<bool> g_stopping{false};         // _finalize is stopping the calls
std::atomic<bool> g_exiting{false};          // ... because the interpreter is exiting
bool g_shut_down = false;                    // Kokkos finalised: no more calls (kernel lock held to change)
bool g_started_kokkos = false;
pid_t g_mpi_started_by = 0;  // the process that called MPI_Init (0: not kmini)
// A forked child of a process whose Kokkos runs threads or a device: those
// did not come along (GNU OpenMP's pool waits for the parent's threads, for
// ever; a CUDA context does not survive a fork). Serial kernels run anywhere.
bool g_child_of_kokkos = false;
// A forked child of a process in which MPI was running, whoever started it
// (kmini, or mpi4py's import): MPI does not survive a fork, and a collective
// from the child would meet the other ranks' parents.
bool g_child_of_mpi = false;
#ifdef KOKKOS_ENABLE_SERIAL
constexpr bool kKernelsSurviveFork = std::is_same_v<Kokkos::DefaultExecutionSpace, Kokkos::Serial>;
#else
constexpr bool kKernelsSurviveFork = false;  // a build without Serial runs threads or a device
#endif

// A child forked while another thread held the kernel lock would wait for it
// forever: the child has a fresh lock (the old one is left as it is).
void after_fork_in_child() {
  g_kernel_lock = new std::mutex;
  g_child_of_kokkos = Kokkos::is_initialized() && !kKernelsSurviveFork;
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  g_child_of_mpi = g_child_of_mpi || (initialized && !finalized);
}

void refuse_in_child_of_mpi(const std::string& function) {
  if (g_child_of_mpi)
    throw std::runtime_error(function +
                             ": MPI was started in the parent of this forked process and cannot be used here; "
                             "use multiprocessing's 'spawn' or 'forkserver' start method");
}

void finalize_mpi_at_exit() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized && g_mpi_started_by == getpid()) MPI_Finalize();
}

void start_mpi() {
  int provided = 0;
  // As mpi4py asks: any thread may call (the kernel lock serialises kmini's own calls).
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
  g_mpi_started_by = getpid();
  Py_AtExit(finalize_mpi_at_exit);
}

// A daemon thread at the interpreter's exit: it must not take the GIL again
// (Python would end the thread from inside a destructor, which aborts), and
// the process is about to end.
[[noreturn]] void wait_for_the_end() {
  for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
}

}  // namespace

bool launched_by_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "MPI_LOCALNRANKS"})
    if (std::getenv(v)) return true;
  return false;
}

void start_runtime() {
  static bool once = false;
  if (once) return;
  once = true;
  pthread_atfork(nullptr, nullptr, after_fork_in_child);
  int initialized = 0;
  MPI_Initialized(&initialized);
  // Under a launcher every rank starts MPI at import, so no rank's first call
  // waits for another's, and a rank that never computes still takes part.
  if (!initialized && launched_by_mpi()) start_mpi();
}

void check_running(const char* function) {
  if (g_child_of_kokkos)
    throw std::runtime_error(std::string(function) + ": the " + Kokkos::DefaultExecutionSpace::name() +
                             " execution space was started by the parent of this forked process and cannot run "
                             "here; use multiprocessing's 'spawn' or 'forkserver' start method");
  if (g_shut_down || g_stopping)
    throw std::runtime_error(std::string(function) +
                             ": kmini has shut down (its atexit handler kmini._finalize ran); no kernel can run "
                             "in this process any more");
}

void ensure_kokkos() {
  if (Kokkos::is_initialized()) return;
  check_running("kmini");
  const compat::Getenv getenv = [](const char* name) -> const char* { return std::getenv(name); };
  try {
    compat::check_before_initialize({}, getenv);
  } catch (const UsageError& e) {
    throw py::value_error(e.what());
  }
  Kokkos::initialize();
  g_started_kokkos = true;
}

void ensure_mpi(const char* function) {
  check_running(function);
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (finalized)
    throw std::runtime_error(std::string(function) + ": MPI has been finalised in this process; kmini cannot use it");
  refuse_in_child_of_mpi(function);
  if (!initialized) start_mpi();
}

void finalize() {
  if (g_shut_down) return;
  g_stopping = true;  // a call running in another thread stops at its next step or slice
  {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(*g_kernel_lock);
    // Not in a forked child whose Kokkos cannot run: ending it would wait for the parent's threads.
    if (g_started_kokkos && Kokkos::is_initialized() && !g_child_of_kokkos) Kokkos::finalize();
    g_shut_down = true;
  }
}

MPI_Comm comm_of(const py::object& comm, const char* function, bool* given) {
  *given = false;
  if (comm.is_none()) return MPI_COMM_SELF;
  const std::string f(function);
  py::object mpi;
  try {
    mpi = py::module_::import("mpi4py.MPI");
  } catch (const py::error_already_set&) {
    throw py::type_error(f + ": comm: expected an mpi4py communicator (mpi4py is not importable here)");
  }
  if (!py::isinstance(comm, mpi.attr("Intracomm")))
    throw py::type_error(f + ": comm: got " + py::str(py::type::handle_of(comm).attr("__name__")).cast<std::string>() +
                         ", expected an mpi4py intracommunicator (e.g. MPI.COMM_WORLD)");
  if (comm.equal(mpi.attr("COMM_NULL")))
    throw py::value_error(f + ": comm: got MPI.COMM_NULL, expected a communicator");
  check_running(function);
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) throw std::runtime_error(f + ": MPI has been finalised in this process");
  refuse_in_child_of_mpi(f);
  // A communicator handle means something only to the MPI library that made it:
  // mpi4py built against another MPI than kmini (two libraries in one process)
  // is refused before its handle is used.
  char ours[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(ours, &length);
  const std::string mine(ours, static_cast<std::size_t>(length));
  const std::string theirs = mpi.attr("Get_library_version")().cast<std::string>();
  const auto first_line = [](const std::string& v) { return v.substr(0, v.find_first_of("\r\n,")); };
  if (first_line(theirs) != first_line(mine))
    throw std::runtime_error(f + ": comm: mpi4py runs on '" + first_line(theirs) + "' and kmini on '" +
                             first_line(mine) + "': build mpi4py against kmini's MPI (or kmini against mpi4py's)");
  *given = true;
  return MPI_Comm_f2c(comm.attr("py2f")().cast<MPI_Fint>());
}

void agree(MPI_Comm comm, bool given, const std::exception_ptr& failed, const char* function) {
  if (!given) {
    if (failed) std::rethrow_exception(failed);
    return;
  }
  int rank = 0, first = std::numeric_limits<int>::max();
  MPI_Comm_rank(comm, &rank);
  if (failed) first = rank;
  int lowest = 0;
  {
    py::gil_scoped_release release;
    MPI_Allreduce(&first, &lowest, 1, MPI_INT, MPI_MIN, comm);
  }
  if (failed) std::rethrow_exception(failed);
  if (lowest != std::numeric_limits<int>::max())
    throw std::runtime_error(std::string(function) + ": rank " + std::to_string(lowest) +
                             " refused its arguments (see its error)");
}

void agree_same(MPI_Comm comm, const std::vector<std::pair<std::string, std::int64_t>>& fields) {
  py::gil_scoped_release release;
  kmini::agree_same(comm, fields);
}

KernelCall::KernelCall(const char* function, MPI_Comm comm, bool collective) : lock_(*g_kernel_lock, std::defer_lock) {
  int ranks = 1;
  if (collective) MPI_Comm_size(comm, &ranks);
  if (ranks > 1) lock_together(function, comm);
  else lock_.lock();
  if (g_exiting) {
    lock_.unlock();
    wait_for_the_end();
  }
  if (g_shut_down || g_stopping)
    throw std::runtime_error(std::string(function) +
                             ": kmini has shut down (its atexit handler kmini._finalize ran); no kernel can run "
                             "in this process any more");
}

void KernelCall::lock_together(const char* function, MPI_Comm comm) {
  std::minstd_rand pause(static_cast<unsigned>(getpid()) * 2654435761u ^
                         static_cast<unsigned>(std::hash<std::thread::id>()(std::this_thread::get_id())));
  for (int attempt = 0;; ++attempt) {
    // -1: this rank is shutting down, and will not take part again.
    const int mine = g_stopping ? -1 : lock_.try_lock() ? 1 : 0;
    int all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm);
    if (all == 1) return;
    if (mine == 1) lock_.unlock();
    if (all < 0) {
      if (g_exiting) wait_for_the_end();
      throw std::runtime_error(std::string(function) + ": stopped because another rank is shutting down kmini");
    }
    const int most_us = 100 << std::min(attempt, 7);  // up to 12.8 ms
    std::this_thread::sleep_for(std::chrono::microseconds(std::uniform_int_distribution<int>(0, most_us)(pause)));
  }
}

KernelCall::~KernelCall() {
  if (!g_exiting) return;
  lock_.unlock();
  wait_for_the_end();
}

void finalize_at_exit() {
  g_exiting = true;
  finalize();
}

std::function<bool()> Stop::check() {
  std::shared_ptr<int> why = why_;
  return [why] {
    if (g_stopping) {  // the interpreter is exiting: stop without the GIL, which the exit holds
      *why = 2;
      return true;
    }
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) *why = 1;
    return *why != 0;
  };
}

void Stop::raise_if_stopped(const char* function) const {
  if (*why_ == 1) throw py::error_already_set();  // the KeyboardInterrupt (or the handler's exception)
  if (*why_ == 2) throw std::runtime_error(std::string(function) + ": stopped because the interpreter is exiting");
}

}  // namespace kmini::python
