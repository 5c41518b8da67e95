#pragma once
// Checkpoints of the RK4 integrator: one .npy file (complex128, shape
// (rows, 2)), written collectively with MPI-IO and atomically (it appears
// whole or not at all), readable with numpy. Doubles hold every value
// exactly, so a restart continues bitwise. Format version 2:
//   row 0: (magic, version), (checksum high 32 bits, checksum low 32 bits)
//   row 1: (n, step k)        row 2: (field bytes, per_stage), (method 0 affine / 1 stages, kappa)
//   row 3: (dt, g)            row 4: (sum Re F, sum Im F)   row 5: (sum Re G, sum Im G)
//   rows 6 .. 6+k: delta[0..k] in column 0
//   then one row per element in global row-major order: (F, G)
// Unused header and history columns hold zeros. The checksum covers every
// stored double but its own two (see checksum_share); restart also re-derives
// the four sums from the fields. Version 1 (no checksum) is refused.
#include "rk4/rk4_problem.hpp"

#include <mpi.h>

#include <complex>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace kmini::rk4 {

inline constexpr int kCheckpointVersion = 2;

// The largest n the deck accepts, and so the largest a checkpoint header may hold.
inline constexpr std::int64_t kMaxN = std::int64_t(1) << 21;

struct CheckpointHeader {
  std::int64_t n = 0, step = 0;
  int field_bytes = 0;  // sizeof(Kokkos::complex<T>): 8 single, 16 double
  bool per_stage = false;
  bool stages = false;  // method: false affine, true stages
  double kerr = 0;      // the Kerr coefficient kappa
  double dt = 0, g = 0;
  Sums sums;
  double sum_im_g = 0;
  std::int64_t header_rows() const { return 6 + step + 1; }
};

// Collective over `comm`: reads the header, checks the checksum over the
// whole file, the header values (precision 8 or 16, coupling flag 0 or 1,
// finite dt, g, sums and delta history) and the stored sums against sums of
// the stored fields. Every rank reads a share of the file. Any problem is the
// same UsageError on every rank, naming the file and what does not match.
CheckpointHeader open_checkpoint(MPI_Comm comm, const std::string& path);

// Collective. `history`: delta[0..step] (used on rank 0); `rows`: this rank's
// elements as interleaved (F, G) pairs, 2 * count values, starting at global
// element `first`. The file is byte-identical whatever the rank count.
void write_checkpoint(MPI_Comm comm, const std::string& path, const CheckpointHeader& h,
                      const std::vector<std::complex<double>>& history, std::uint64_t first,
                      const std::vector<std::complex<double>>& rows);

// Reads delta[0..step] and this rank's (F, G) pairs (of a checkpoint that
// open_checkpoint accepted).
void read_checkpoint_data(const std::string& path, const CheckpointHeader& h, std::uint64_t first, std::uint64_t count,
                          std::vector<std::complex<double>>& history, std::vector<std::complex<double>>& rows);

// The integrity check's pieces, exposed for tests and tools.
namespace checkpoint {

// Index of the first of the two doubles (row 0, column 1) holding the checksum.
inline constexpr std::uint64_t kChecksumSlot = 2;

// Checksum contribution of `count` stored doubles at global double indices
// first, first + 1, ... (the checksum's own two slots contribute nothing):
// the sum modulo 2^64 of mix(i, bits of value i), mix a SplitMix64-style
// bijection of the value's bits for each index i. Contributions of any split
// of the file add up (mod 2^64, so in any order) to the same checksum, and
// changing any single stored value always changes it.
std::uint64_t checksum_share(std::uint64_t first, const double* values, std::uint64_t count);

// The checksum as stored: two doubles holding its 32-bit halves (exact), and back.
void encode_checksum(std::uint64_t checksum, double& high, double& low);
bool decode_checksum(double high, double low, std::uint64_t& checksum);  // false: not two 32-bit halves

// What a rank derives from its share of the file (complex elements
// [first, first + count) of the flattened array).
struct Digest {
  std::uint64_t checksum = 0;
  double sums[4] = {0, 0, 0, 0};      // Re F, Im F, Re G, Im G over the stored elements
  double abs_sums[4] = {0, 0, 0, 0};  // the same over |value|: bounds the summation's rounding
  double first_bad_delta = std::numeric_limits<double>::infinity();  // smallest k with delta[k] not finite
};
Digest digest_share(std::int64_t header_rows, std::uint64_t first, const std::complex<double>* values,
                    std::uint64_t count);
void combine(Digest& whole, const Digest& share);

// Recomputes and stores the checksum of a whole checkpoint held in memory as
// its flattened doubles (test tools that edit a checkpoint consistently).
void reseal(std::vector<double>& all);

}  // namespace checkpoint

}  // namespace kmini::rk4
