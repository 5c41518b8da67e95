#include "rk4/rk4_checkpoint.hpp"

#include "core/errors.hpp"
#include "io/npy.hpp"

#include <cmath>

namespace kmini::rk4 {

namespace {

constexpr double kMagic = 5393204;  // 0x524B34, "RK4"
constexpr double kVersion = 1;
constexpr std::int64_t kFixedRows = 6;

bool is_count(double v) { return std::isfinite(v) && v >= 0 && v == std::floor(v) && v < 9.0e15; }

}  // namespace

CheckpointHeader read_checkpoint_header(const std::string& path) {
  const npy::Info info = npy::read_info(path);
  npy::require_dtype(info, {npy::DType::C16});
  const auto bad = [&](const std::string& what) {
    return UsageError(path + ": not an rk4 checkpoint (" + what + ")");
  };
  if (info.shape.size() != 2 || info.shape[1] != 2 || info.shape[0] < kFixedRows)
    throw bad("shape " + npy::shape_string(info.shape) + ", expected (rows, 2)");
  std::vector<std::complex<double>> fixed(2 * kFixedRows);
  npy::read_elements(info, 0, fixed.size(), fixed.data());
  const auto at = [&](int row) { return fixed[2 * row]; };
  if (at(0).real() != kMagic) throw bad("wrong magic number");
  if (at(0).imag() != kVersion) throw bad("unsupported version");
  CheckpointHeader h;
  if (!is_count(at(1).real()) || !is_count(at(1).imag()) || at(1).real() < 1) throw bad("bad n or step");
  h.n = static_cast<std::int64_t>(at(1).real());
  h.step = static_cast<std::int64_t>(at(1).imag());
  if (at(2).real() != 8 && at(2).real() != 16) throw bad("bad precision");
  h.field_bytes = static_cast<int>(at(2).real());
  h.per_stage = at(2).imag() != 0;
  h.dt = at(3).real();
  h.g = at(3).imag();
  h.sums.fx = at(4).real();
  h.sums.fy = at(4).imag();
  h.sums.ga = at(5).real();
  h.sum_im_g = at(5).imag();
  const std::int64_t expected_rows = h.header_rows() + h.n * h.n;
  if (info.shape[0] != expected_rows)
    throw bad("shape " + npy::shape_string(info.shape) + ", expected (" + std::to_string(expected_rows) +
              ", 2) for n = " + std::to_string(h.n) + " at step " + std::to_string(h.step));
  return h;
}

void write_checkpoint(MPI_Comm comm, const std::string& path, const CheckpointHeader& h,
                      const std::vector<std::complex<double>>& history, std::uint64_t first,
                      const std::vector<std::complex<double>>& rows) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const std::uint64_t header_values = 2 * static_cast<std::uint64_t>(h.header_rows());
  const npy::Shape shape{h.header_rows() + h.n * h.n, 2};
  if (rank != 0) {
    npy::write_distributed(comm, path, npy::DType::C16, shape, header_values + 2 * first, rows.size(), rows.data());
    return;
  }
  using C = std::complex<double>;
  std::vector<C> data(header_values, C(0, 0));
  data[0] = C(kMagic, kVersion);
  data[2] = C(static_cast<double>(h.n), static_cast<double>(h.step));
  data[4] = C(h.field_bytes, h.per_stage ? 1 : 0);
  data[6] = C(h.dt, h.g);
  data[8] = C(h.sums.fx, h.sums.fy);
  data[10] = C(h.sums.ga, h.sum_im_g);
  for (std::int64_t k = 0; k <= h.step; ++k) data[2 * (kFixedRows + k)] = history.at(static_cast<std::size_t>(k));
  data.insert(data.end(), rows.begin(), rows.end());
  npy::write_distributed(comm, path, npy::DType::C16, shape, 0, data.size(), data.data());
}

void read_checkpoint_data(const std::string& path, const CheckpointHeader& h, std::uint64_t first,
                          std::uint64_t count, std::vector<std::complex<double>>& history,
                          std::vector<std::complex<double>>& rows) {
  const npy::Info info = npy::read_info(path);
  std::vector<std::complex<double>> hist_rows(2 * static_cast<std::size_t>(h.step + 1));
  npy::read_elements(info, 2 * kFixedRows, hist_rows.size(), hist_rows.data());
  history.resize(static_cast<std::size_t>(h.step + 1));
  for (std::size_t k = 0; k < history.size(); ++k) history[k] = hist_rows[2 * k];
  rows.resize(2 * count);
  npy::read_elements(info, 2 * static_cast<std::uint64_t>(h.header_rows()) + 2 * first, rows.size(), rows.data());
}

}  // namespace kmini::rk4
