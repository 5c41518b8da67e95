// The float/double GEMM on the unpacked matrix: the independent check and the
// "what a user would do instead" baseline. The only file that includes Kokkos
// Kernels (its headers are heavy).
#include "core/timer.hpp"
#include "gram/gram.hpp"

#include <KokkosBlas3_gemm.hpp>

namespace kmini::gram {

namespace {

// Device rows x cols matrix (LayoutLeft, as the BLAS wants) of the unpacked
// values of `which` rows of A.
template <class T>
Kokkos::View<T**, Kokkos::LayoutLeft, MemSpace> unpacked(const Source& a, const std::vector<std::int64_t>& which,
                                                         const char* label) {
  Kokkos::View<T**, Kokkos::LayoutLeft, MemSpace> m(std::string(label), static_cast<std::int64_t>(which.size()),
                                                    a.cols);
  auto h = Kokkos::create_mirror_view(m);
  for (std::size_t t = 0; t < which.size(); ++t) {
    const auto row = host_rows(a, which[t], 1);
    for (std::int64_t k = 0; k < a.cols; ++k) h(static_cast<std::int64_t>(t), k) = static_cast<T>(row[k]);
  }
  Kokkos::deep_copy(m, h);
  return m;
}

std::vector<std::int64_t> iota(std::int64_t n) {
  std::vector<std::int64_t> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = i;
  return v;
}

}  // namespace

double gemm_panel_float(const Source& a, std::int64_t panel, std::vector<double>* panel_out) {
  ScopedRegion region("kmini::gram::baseline_sgemm");
  auto all = unpacked<float>(a, iota(a.rows), "kmini::gram::A_f32");
  auto top = Kokkos::subview(all, std::make_pair(std::int64_t(0), panel), Kokkos::ALL());
  Kokkos::View<float**, Kokkos::LayoutLeft, MemSpace> c("kmini::gram::C_f32", panel, a.rows);
  ExecSpace exec;
  FencedTimer<ExecSpace> t(exec);
  KokkosBlas::gemm("N", "T", 1.0f, top, all, 0.0f, c);
  const double seconds = t.seconds();
  if (panel_out) {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), c);
    panel_out->assign(static_cast<std::size_t>(panel * a.rows), 0.0);
    for (std::int64_t i = 0; i < panel; ++i)
      for (std::int64_t j = 0; j < a.rows; ++j) (*panel_out)[i * a.rows + j] = h(i, j);
  }
  return seconds;
}

double gemm_panel_double(const Source& a, const Source& targets, const std::vector<std::int64_t>& panel_rows,
                         std::vector<double>& out) {
  ScopedRegion region("kmini::gram::check_dgemm");
  auto all = unpacked<double>(targets, iota(targets.rows), "kmini::gram::T_f64");
  auto some = unpacked<double>(a, panel_rows, "kmini::gram::A_rows_f64");
  const std::int64_t n = static_cast<std::int64_t>(panel_rows.size());
  Kokkos::View<double**, Kokkos::LayoutLeft, MemSpace> c("kmini::gram::C_f64", n, targets.rows);
  ExecSpace exec;
  FencedTimer<ExecSpace> t(exec);
  KokkosBlas::gemm("N", "T", 1.0, some, all, 0.0, c);
  const double seconds = t.seconds();
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), c);
  out.assign(static_cast<std::size_t>(n * targets.rows), 0.0);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < targets.rows; ++j) out[i * targets.rows + j] = h(i, j);
  return seconds;
}

}  // namespace kmini::gram
