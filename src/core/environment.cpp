#include "core/environment.hpp"

#include "core/solo.hpp"

#include "core/errors.hpp"
#include "core/kokkos_compat.hpp"
#include "core/termination.hpp"
#include "core/text.hpp"

#include <cstdlib>
#include <exception>
#include <vector>

namespace kmini {

bool started_by_launcher(const std::function<const char*(const char*)>& get) {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "PMI_FD", "MV2_COMM_WORLD_SIZE"})
    if (get(v)) return true;
  return false;
}

Environment::Environment(int& argc, char**& argv) {
  // Threads MPI and Kokkos start inherit a mask with the termination signals
  // blocked, so the handler always runs on this thread (termination.hpp).
  termination::block_signals(true);
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    // Started without a launcher, the process is an MPI singleton, and Open
    // MPI 4's MPI_Init then starts a daemon (orted) so that the process could
    // spawn others later; kmini never spawns, so the daemon's start-up is
    // left out unless the user set the parameter (docs/performance.md has
    // what it costs). Launched processes and other MPIs ignore it. Python's
    // module does not set it: a Python program may spawn.
    setenv("OMPI_MCA_ess_singleton_isolated", "1", 0);
    // A singleton has no peer, so its messages go only to itself: Open MPI's
    // ob1 (shared memory and self) carries them, where its default choice
    // first starts UCX, which probes every network device (most of a
    // singleton's MPI_Init). Only without a launcher: a launched rank keeps
    // the library's choice, which its peers share.
    if (!started_by_launcher([](const char* v) -> const char* { return std::getenv(v); }))
      setenv("OMPI_MCA_pml", "ob1", 0);
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    owns_mpi_ = true;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &local_rank_);
  MPI_Comm_free(&node);

  // Kokkos sees only its own flags (both 3.4 and 4.x would print their help for
  // --help), checked first: Kokkos::initialize aborts or throws on a bad one.
  std::vector<std::string> flags;
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]).rfind("--kokkos-", 0) == 0) flags.push_back(argv[i]);
  const compat::Getenv getenv = [](const char* name) -> const char* { return std::getenv(name); };
  try {
    const std::vector<std::string> as_given = flags;  // messages name the user's spelling
    flags = compat::kokkos_flags(flags);
    compat::check_before_initialize(as_given, getenv);
    for (auto& f : compat::tools_flags_from_environment(flags, std::getenv("KOKKOS_TOOLS_LIBS"),
                                                        std::getenv("KOKKOS_PROFILE_LIBRARY")))
      flags.push_back(f);
  } catch (const UsageError& e) {
    usage_problem_ = e.what();  // Kokkos stays uninitialised; run_app reports it
  }
  // A second Environment in one process (tests) shares the first one's Kokkos.
  if (usage_problem_.empty() && !Kokkos::is_initialized()) {
    // Append the device mapping unless the user chose a device on the command line.
    bool user_chose_device = false;
    for (const auto& f : flags)
      user_chose_device = user_chose_device || f.rfind("--kokkos-device-id", 0) == 0 ||
                          f.rfind("--kokkos-map-device-id-by", 0) == 0 || f.rfind("--kokkos-num-devices", 0) == 0;
    if (!user_chose_device)
      for (auto& e : compat::device_mapping_flags(local_rank_)) flags.push_back(e);
    std::vector<char*> args{argv[0]};
    for (auto& f : flags) args.push_back(f.data());
    int kargc = static_cast<int>(args.size());
    args.push_back(nullptr);
    // What the checks above cannot foresee (a thread count the backend
    // refuses, a device that fails to start) is an exit 2 too, not an
    // uncaught exception (SIGABRT).
    try {
      Kokkos::initialize(kargc, args.data());
      owns_kokkos_ = true;
    } catch (const std::exception& e) {
      std::string what = e.what();
      what = what.substr(0, what.find('\n'));
      usage_problem_ = "Kokkos could not start (" + escape_cut(what) +
                       "): check the --kokkos-* flags and KOKKOS_* environment variables";
    }
  }
  termination::install_handlers(rank_ == 0);
  termination::block_signals(false);
}

Environment::~Environment() {
  if (owns_kokkos_ && Kokkos::is_initialized()) Kokkos::finalize();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (owns_mpi_ && !finalized) MPI_Finalize();
}

int agree_on_status(MPI_Comm comm, int status, std::string& message) {
  if (mpi::solo(comm)) return status;
  int worst = status;
  MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_INT, MPI_MAX, comm);
  if (worst == 0) return 0;
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int reporter = (status == worst) ? rank : size;
  MPI_Allreduce(MPI_IN_PLACE, &reporter, 1, MPI_INT, MPI_MIN, comm);
  int length = static_cast<int>(message.size());
  MPI_Bcast(&length, 1, MPI_INT, reporter, comm);
  message.resize(static_cast<std::size_t>(length));
  MPI_Bcast(message.data(), length, MPI_CHAR, reporter, comm);
  return worst;
}

static double allreduce(MPI_Comm comm, double value, MPI_Op op) {
  mpi::allreduce(comm, &value, 1, MPI_DOUBLE, op);
  return value;
}
double allreduce_max(MPI_Comm comm, double value) { return allreduce(comm, value, MPI_MAX); }
double allreduce_min(MPI_Comm comm, double value) { return allreduce(comm, value, MPI_MIN); }
double allreduce_sum(MPI_Comm comm, double value) { return allreduce(comm, value, MPI_SUM); }

}  // namespace kmini
