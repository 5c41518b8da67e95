#pragma once
// Checkpoints of the RK4 integrator: one .npy file (complex128, shape
// (rows, 2)), written collectively with MPI-IO and atomically (it appears
// whole or not at all), readable with numpy. Doubles hold every value
// exactly, so a restart continues bitwise.
//   row 0: (magic, version)   row 1: (n, step k)   row 2: (field bytes, per_stage)
//   row 3: (dt, g)            row 4: (sum Re F, sum Im F)   row 5: (sum Re G, sum Im G)
//   rows 6 .. 6+k: delta[0..k] in column 0
//   then one row per element in global row-major order: (F, G)
#include "rk4/rk4_kernels.hpp"

#include <mpi.h>

#include <complex>
#include <cstdint>
#include <string>
#include <vector>

namespace kmini::rk4 {

struct CheckpointHeader {
  std::int64_t n = 0, step = 0;
  int field_bytes = 0;  // sizeof(Kokkos::complex<T>): 8 single, 16 double
  bool per_stage = false;
  double dt = 0, g = 0;
  Sums sums;
  double sum_im_g = 0;
  std::int64_t header_rows() const { return 6 + step + 1; }
};

// Reads and validates the header (and nothing else); UsageError naming the
// file and the problem.
CheckpointHeader read_checkpoint_header(const std::string& path);

// Collective. `history`: delta[0..step] (used on rank 0); `rows`: this rank's
// elements as interleaved (F, G) pairs, 2 * count values, starting at global
// element `first`.
void write_checkpoint(MPI_Comm comm, const std::string& path, const CheckpointHeader& h,
                      const std::vector<std::complex<double>>& history, std::uint64_t first,
                      const std::vector<std::complex<double>>& rows);

// Reads delta[0..step] and this rank's (F, G) pairs.
void read_checkpoint_data(const std::string& path, const CheckpointHeader& h, std::uint64_t first,
                          std::uint64_t count, std::vector<std::complex<double>>& history,
                          std::vector<std::complex<double>>& rows);

}  // namespace kmini::rk4
