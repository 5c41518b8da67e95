#include "rk4/rk4_checkpoint.hpp"

#include "core/environment.hpp"
#include "core/errors.hpp"
#include "core/format.hpp"
#include "io/npy.hpp"
#include "version.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace kmini::rk4 {

namespace {

using C16 = std::complex<double>;

constexpr double kMagic = 5393204;  // 0x524B34, "RK4"
constexpr std::int64_t kFixedRows = 6;
constexpr std::uint64_t kReadChunk = std::uint64_t(1) << 20;  // complex elements per read (16 MiB)

bool is_count(double v, double max) { return std::isfinite(v) && v >= 0 && v == std::floor(v) && v <= max; }

std::string number(double v) { return format_g(v, 17); }

std::string hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::uint64_t splitmix64(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// What every rank reads of the header on its own: enough to know the layout.
struct RawHeader {
  npy::Info info;
  std::int64_t n = 0, step = 0;
  C16 fixed[2 * kFixedRows];  // rows 0..5, both columns
  std::int64_t header_rows() const { return kFixedRows + step + 1; }
};

RawHeader read_raw_header(const std::string& path) {
  RawHeader r;
  r.info = npy::read_info(path);
  npy::require_dtype(r.info, {npy::DType::C16});
  const auto not_checkpoint = [&](const std::string& what) {
    return UsageError(path + ": not an rk4 checkpoint (" + what + ")");
  };
  const auto corrupt = [&](const std::string& what) { return UsageError(path + ": checkpoint is corrupt: " + what); };
  const npy::Shape& shape = r.info.shape;
  if (shape.size() != 2 || shape[1] != 2 || shape[0] < kFixedRows)
    throw not_checkpoint("shape " + npy::shape_string(shape) + ", expected (rows, 2)");
  npy::read_elements(r.info, 0, 2 * kFixedRows, r.fixed);
  const auto at = [&](int row) { return r.fixed[2 * row]; };
  if (at(0).real() != kMagic) throw not_checkpoint("wrong magic number");
  const double version = at(0).imag();
  if (version == 1)
    throw UsageError(path + ": checkpoint format version 1 has no integrity check (written by kmini < " +
                     std::string(kVersion) + "); restart from the start or from a checkpoint written by this kmini");
  if (version != kCheckpointVersion)
    throw UsageError(path + ": checkpoint format version " + number(version) +
                     " is not supported (this kmini reads version " + std::to_string(kCheckpointVersion) + ")");
  if (!is_count(at(1).real(), static_cast<double>(kMaxN)) || at(1).real() < 1 || !is_count(at(1).imag(), 0x1p53))
    throw corrupt("n = " + number(at(1).real()) + " and step = " + number(at(1).imag()) +
                  " in its header are not valid counts");
  r.n = static_cast<std::int64_t>(at(1).real());
  r.step = static_cast<std::int64_t>(at(1).imag());
  const std::int64_t expected_rows = r.header_rows() + r.n * r.n;
  if (shape[0] != expected_rows)
    throw corrupt("shape " + npy::shape_string(shape) + " does not match n = " + std::to_string(r.n) + " and step = " +
                  std::to_string(r.step) + " in its header (expected (" + std::to_string(expected_rows) + ", 2))");
  return r;
}

// This rank's contiguous share of the file's complex elements, digested in chunks.
checkpoint::Digest digest_rank_share(const RawHeader& r, int rank, int ranks) {
  const std::uint64_t total = r.info.element_count();
  const std::uint64_t begin = total / ranks * rank + std::min<std::uint64_t>(rank, total % ranks);
  const std::uint64_t end = begin + total / ranks + (static_cast<std::uint64_t>(rank) < total % ranks ? 1 : 0);
  checkpoint::Digest d;
  std::vector<C16> buf(static_cast<std::size_t>(std::min(kReadChunk, end - begin)));
  for (std::uint64_t first = begin; first < end; first += kReadChunk) {
    const std::uint64_t count = std::min(kReadChunk, end - first);
    npy::read_elements(r.info, first, count, buf.data());
    checkpoint::combine(d, checkpoint::digest_share(r.header_rows(), first, buf.data(), count));
  }
  return d;
}

// The checks on the combined digest: the same on every rank.
CheckpointHeader check_whole(const std::string& path, const RawHeader& r, const checkpoint::Digest& d) {
  const auto corrupt = [&](const std::string& what) { return UsageError(path + ": checkpoint is corrupt: " + what); };
  const auto at = [&](int row) { return r.fixed[2 * row]; };
  std::uint64_t stored = 0;
  const C16 slot = r.fixed[1];
  if (!checkpoint::decode_checksum(slot.real(), slot.imag(), stored))
    throw corrupt("checksum mismatch (stored (" + number(slot.real()) + ", " + number(slot.imag()) +
                  ") is not a checksum, computed " + hex(d.checksum) + ")");
  if (stored != d.checksum)
    throw corrupt("checksum mismatch (stored " + hex(stored) + ", computed " + hex(d.checksum) + ")");

  // The checksum holds: what follows are files written wrongly, not damaged.
  CheckpointHeader h;
  h.n = r.n;
  h.step = r.step;
  const double bytes = at(2).real(), flag = at(2).imag();
  if (bytes != 8 && bytes != 16) throw corrupt("precision field is " + number(bytes) + ", expected 8 or 16");
  if (flag != 0 && flag != 1) throw corrupt("coupling flag is " + number(flag) + ", expected 0 or 1");
  h.field_bytes = static_cast<int>(bytes);
  h.per_stage = flag == 1;
  // Row 2, column 1: (method, kappa); zeros (affine, kappa 0) in files written
  // before these fields existed, which is what those runs did.
  const double method = r.fixed[5].real();
  if (method != 0 && method != 1) throw corrupt("method flag is " + number(method) + ", expected 0 or 1");
  h.stages = method == 1;
  h.kerr = r.fixed[5].imag();
  if (!std::isfinite(h.kerr)) throw corrupt("stored kerr is not finite (" + number(h.kerr) + ")");
  h.dt = at(3).real();
  h.g = at(3).imag();
  h.sums.fx = at(4).real();
  h.sums.fy = at(4).imag();
  h.sums.ga = at(5).real();
  h.sum_im_g = at(5).imag();
  const double values[6] = {h.dt, h.g, h.sums.fx, h.sums.fy, h.sums.ga, h.sum_im_g};
  const char* names[6] = {"dt", "g", "sum Re F", "sum Im F", "sum Re G", "sum Im G"};
  for (int i = 0; i < 6; ++i)
    if (!std::isfinite(values[i]))
      throw corrupt(std::string("stored ") + names[i] + " is not finite (" + number(values[i]) + ")");
  if (std::isfinite(d.first_bad_delta)) throw corrupt("stored delta[" + number(d.first_bad_delta) + "] is not finite");

  // The device summed the same N stored values (single-precision fields are
  // widened to double exactly) in its own order (chunk lanes, the Kokkos
  // reduction tree, MPI_Allreduce over its ranks); here they are summed in
  // file order per rank, then over this run's ranks. Any order of summing N
  // doubles errs by at most gamma(N-1) * sum|x|, gamma(m) = m u / (1 - m u),
  // u = 2^-53 (Higham, Accuracy and Stability of Numerical Algorithms, 4.2), so
  // two orders differ by at most 2 gamma(N-1) sum|x|. With N = n^2 <= 2^42,
  // N u <= 2^-11 and 3 N u sum|x| covers that bound, the rounding of sum|x|
  // itself and of this comparison. A single flipped low bit can hide under
  // it: the checksum catches those; this catches sums written inconsistently.
  const double N = static_cast<double>(r.n) * static_cast<double>(r.n);
  const double u = 0x1p-53;
  for (int i = 0; i < 4; ++i) {
    const double tolerance = 3 * N * u * d.abs_sums[i];
    const double diff = std::fabs(values[2 + i] - d.sums[i]);
    if (!(std::isfinite(d.sums[i]) && diff <= tolerance))
      throw corrupt(std::string("stored ") + names[2 + i] + " = " + number(values[2 + i]) +
                    " does not match the fields (their sum is " + number(d.sums[i]) + ", rounding allows " +
                    number(tolerance) + ")");
  }
  return h;
}

// Runs `fn` on every rank and turns any exception on any rank into the same
// error on every rank (the message of the lowest failing rank).
template <class Fn>
void agreed(MPI_Comm comm, Fn&& fn) {
  int status = kExitSuccess;
  std::string message;
  try {
    fn();
  } catch (const UsageError& e) {
    status = kExitUsage;
    message = e.what();
  } catch (const std::exception& e) {
    status = kExitFailure;
    message = e.what();
  }
  status = agree_on_status(comm, status, message);
  if (status == kExitUsage) throw UsageError(message);
  if (status != kExitSuccess) throw RuntimeFailure(message);
}

}  // namespace

namespace checkpoint {

std::uint64_t checksum_share(std::uint64_t first, const double* values, std::uint64_t count) {
  std::uint64_t sum = 0;
  for (std::uint64_t j = 0; j < count; ++j) {
    const std::uint64_t i = first + j;
    if (i == kChecksumSlot || i == kChecksumSlot + 1) continue;
    std::uint64_t bits = 0;
    std::memcpy(&bits, values + j, sizeof bits);
    sum += splitmix64(bits ^ splitmix64(i));  // wraps mod 2^64
  }
  return sum;
}

void encode_checksum(std::uint64_t checksum, double& high, double& low) {
  high = static_cast<double>(checksum >> 32);
  low = static_cast<double>(checksum & 0xffffffffu);
}

bool decode_checksum(double high, double low, std::uint64_t& checksum) {
  if (!is_count(high, 0xffffffffu) || !is_count(low, 0xffffffffu)) return false;
  checksum = (static_cast<std::uint64_t>(high) << 32) | static_cast<std::uint64_t>(low);
  return true;
}

Digest digest_share(std::int64_t header_rows, std::uint64_t first, const std::complex<double>* values,
                    std::uint64_t count) {
  Digest d;
  d.checksum = checksum_share(2 * first, reinterpret_cast<const double*>(values), 2 * count);
  const std::uint64_t fields = 2 * static_cast<std::uint64_t>(header_rows);  // first element of (F, G) rows
  const std::uint64_t history = 2 * kFixedRows;                              // delta[k] at 2 * (6 + k)
  for (std::uint64_t j = 0; j < count; ++j) {
    const std::uint64_t e = first + j;
    const C16 v = values[j];
    if (e >= fields) {
      const int which = ((e - fields) % 2 == 0) ? 0 : 2;  // F: sums 0, 1; G: sums 2, 3
      d.sums[which] += v.real();
      d.sums[which + 1] += v.imag();
      d.abs_sums[which] += std::fabs(v.real());
      d.abs_sums[which + 1] += std::fabs(v.imag());
    } else if (e >= history && (e - history) % 2 == 0) {
      const double k = static_cast<double>((e - history) / 2);
      if (!(std::isfinite(v.real()) && std::isfinite(v.imag()))) d.first_bad_delta = std::min(d.first_bad_delta, k);
    }
  }
  return d;
}

void combine(Digest& whole, const Digest& share) {
  whole.checksum += share.checksum;
  for (int i = 0; i < 4; ++i) {
    whole.sums[i] += share.sums[i];
    whole.abs_sums[i] += share.abs_sums[i];
  }
  whole.first_bad_delta = std::min(whole.first_bad_delta, share.first_bad_delta);
}

void reseal(std::vector<double>& all) {
  encode_checksum(checksum_share(0, all.data(), all.size()), all.at(kChecksumSlot), all.at(kChecksumSlot + 1));
}

}  // namespace checkpoint

CheckpointHeader open_checkpoint(MPI_Comm comm, const std::string& path) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  RawHeader raw;
  checkpoint::Digest d;
  agreed(comm, [&] {
    raw = read_raw_header(path);
    d = digest_rank_share(raw, rank, ranks);
  });
  MPI_Allreduce(MPI_IN_PLACE, &d.checksum, 1, MPI_UINT64_T, MPI_SUM, comm);
  MPI_Allreduce(MPI_IN_PLACE, d.sums, 4, MPI_DOUBLE, MPI_SUM, comm);
  MPI_Allreduce(MPI_IN_PLACE, d.abs_sums, 4, MPI_DOUBLE, MPI_SUM, comm);
  MPI_Allreduce(MPI_IN_PLACE, &d.first_bad_delta, 1, MPI_DOUBLE, MPI_MIN, comm);
  // Every rank holds the same digest now; agreeing once more makes the
  // outcome identical even if a rank read a different header.
  CheckpointHeader h;
  agreed(comm, [&] { h = check_whole(path, raw, d); });
  return h;
}

void write_checkpoint(MPI_Comm comm, const std::string& path, const CheckpointHeader& h,
                      const std::vector<std::complex<double>>& history, std::uint64_t first,
                      const std::vector<std::complex<double>>& rows) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const std::uint64_t header_values = 2 * static_cast<std::uint64_t>(h.header_rows());
  const npy::Shape shape{h.header_rows() + h.n * h.n, 2};
  const std::uint64_t rows_first = header_values + 2 * first;  // complex element index of this rank's rows
  std::uint64_t checksum =
      checkpoint::checksum_share(2 * rows_first, reinterpret_cast<const double*>(rows.data()), 2 * rows.size());
  std::vector<C16> data;
  if (rank == 0) {
    data.assign(header_values, C16(0, 0));
    data[0] = C16(kMagic, kCheckpointVersion);
    data[2] = C16(static_cast<double>(h.n), static_cast<double>(h.step));
    data[4] = C16(h.field_bytes, h.per_stage ? 1 : 0);
    data[5] = C16(h.stages ? 1 : 0, h.kerr);
    data[6] = C16(h.dt, h.g);
    data[8] = C16(h.sums.fx, h.sums.fy);
    data[10] = C16(h.sums.ga, h.sum_im_g);
    for (std::int64_t k = 0; k <= h.step; ++k) data[2 * (kFixedRows + k)] = history.at(static_cast<std::size_t>(k));
    checksum += checkpoint::checksum_share(0, reinterpret_cast<const double*>(data.data()), 2 * data.size());
  }
  // Sums mod 2^64 are exact and order-free: the same file for any rank count.
  MPI_Allreduce(MPI_IN_PLACE, &checksum, 1, MPI_UINT64_T, MPI_SUM, comm);
  if (rank != 0) {
    npy::write_distributed(comm, path, npy::DType::C16, shape, rows_first, rows.size(), rows.data());
    return;
  }
  double high = 0, low = 0;
  checkpoint::encode_checksum(checksum, high, low);
  data[1] = C16(high, low);
  data.insert(data.end(), rows.begin(), rows.end());
  npy::write_distributed(comm, path, npy::DType::C16, shape, 0, data.size(), data.data());
}

void read_checkpoint_data(const std::string& path, const CheckpointHeader& h, std::uint64_t first, std::uint64_t count,
                          std::vector<std::complex<double>>& history, std::vector<std::complex<double>>& rows) {
  const npy::Info info = npy::read_info(path);
  std::vector<std::complex<double>> hist_rows(2 * static_cast<std::size_t>(h.step + 1));
  npy::read_elements(info, 2 * kFixedRows, hist_rows.size(), hist_rows.data());
  history.resize(static_cast<std::size_t>(h.step + 1));
  for (std::size_t k = 0; k < history.size(); ++k) history[k] = hist_rows[2 * k];
  rows.resize(2 * count);
  npy::read_elements(info, 2 * static_cast<std::uint64_t>(h.header_rows()) + 2 * first, rows.size(), rows.data());
}

}  // namespace kmini::rk4
