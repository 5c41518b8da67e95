#include "core/environment.hpp"

#include "core/kokkos_compat.hpp"
#include "core/termination.hpp"

#include <vector>

namespace kmini {

Environment::Environment(int& argc, char**& argv) {
  // Threads MPI and Kokkos start inherit a mask with the termination signals
  // blocked, so the handler always runs on this thread (termination.hpp).
  termination::block_signals(true);
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
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

  // Append the device mapping unless the user chose a device on the command line.
  bool user_chose_device = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    user_chose_device = user_chose_device || a.rfind("--kokkos-device", 0) == 0 ||
                        a.rfind("--kokkos-map-device-id-by", 0) == 0 ||
                        a.rfind("--kokkos-num-devices", 0) == 0 || a.rfind("--kokkos-ndevices", 0) == 0;
  }
  std::vector<std::string> extra;
  if (!user_chose_device) extra = compat::device_mapping_flags(local_rank_);
  // Kokkos sees only its own flags (both 3.4 and 4.x would print their help for --help).
  std::vector<char*> args{argv[0]};
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]).rfind("--kokkos-", 0) == 0) args.push_back(argv[i]);
  for (auto& e : extra) args.push_back(e.data());
  int kargc = static_cast<int>(args.size());
  args.push_back(nullptr);
  Kokkos::initialize(kargc, args.data());
  termination::install_handlers(rank_ == 0);
  termination::block_signals(false);
}

Environment::~Environment() {
  if (Kokkos::is_initialized()) Kokkos::finalize();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (owns_mpi_ && !finalized) MPI_Finalize();
}

int agree_on_status(MPI_Comm comm, int status, std::string& message) {
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
  MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_DOUBLE, op, comm);
  return value;
}
double allreduce_max(MPI_Comm comm, double value) { return allreduce(comm, value, MPI_MAX); }
double allreduce_min(MPI_Comm comm, double value) { return allreduce(comm, value, MPI_MIN); }
double allreduce_sum(MPI_Comm comm, double value) { return allreduce(comm, value, MPI_SUM); }

}  // namespace kmini
