#pragma once
// MPI + Kokkos lifetime as one RAII object: MPI_Init, then Kokkos::initialize
// with one GPU per node-local rank; finalised in reverse order, also when an
// exception unwinds main.
#include <mpi.h>

#include <chrono>
#include <functional>
#include <string>

namespace kmini {

// Whether an MPI launcher (mpirun, mpiexec, srun) started this process, read
// through `get` (std::getenv): the variables Open MPI, PMIx, PMI (MPICH's
// Hydra, Slurm) and MVAPICH set in every rank they start. Without one the
// process is an MPI singleton.
bool started_by_launcher(const std::function<const char*(const char*)>& get);

class Environment {
 public:
  // Kokkos' own --kokkos-* flags in argv are honoured. A malformed one leaves
  // Kokkos uninitialised and is kept in usage_problem() (the same on every
  // rank), for run_app to report as a usage error.
  Environment(int& argc, char**& argv);
  // A dry run planned from one process for `ranks` ranks (--devices): rank 0
  // of `ranks` on the same communicator, owning nothing. Only planning
  // (configure, plans, memory needs) may use it: no collective sized by size().
  Environment(const Environment& real, int ranks)
      : started_(real.started_), rank_(0), size_(ranks), local_rank_(0), usage_problem_(real.usage_problem_) {}
  ~Environment();
  Environment(const Environment&) = delete;
  Environment& operator=(const Environment&) = delete;

  MPI_Comm comm() const { return MPI_COMM_WORLD; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  int node_local_rank() const { return local_rank_; }
  bool is_root() const { return rank_ == 0; }
  // Empty, or the one-line message about a bad --kokkos-* flag.
  const std::string& usage_problem() const { return usage_problem_; }
  // Seconds since this rank began constructing the environment (before MPI
  // and Kokkos started): the run's start-up is counted from there.
  double seconds_since_start() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  }

 private:
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  int rank_ = 0;
  int size_ = 1;
  int local_rank_ = 0;
  bool owns_mpi_ = false;
  bool owns_kokkos_ = false;
  std::string usage_problem_;
};

// Every rank agrees on one exit status (the largest) and on the message of
// the lowest rank that reported it, so rank 0 can print it. Collective.
int agree_on_status(MPI_Comm comm, int status, std::string& message);

// Collective reductions of one scalar, used for timings and counters.
double allreduce_max(MPI_Comm comm, double value);
double allreduce_min(MPI_Comm comm, double value);
double allreduce_sum(MPI_Comm comm, double value);

}  // namespace kmini
